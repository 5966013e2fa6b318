// Reading a client's request head: the request line, the fields to forward, the sampling inputs
// and the body framing (see RequestHeadReader).
import {
  FIELD_CONNECTION,
  FIELD_CONTENT_ENCODING,
  FIELD_CONTENT_LENGTH,
  FIELD_CONTENT_TYPE,
  FIELD_EXPECT,
  FIELD_HOST,
  FIELD_SHADOW,
  FIELD_SHADOW_CAPTURE,
  FIELD_TRANSFER_ENCODING,
  FieldScan,
  HttpSyntaxError,
  assertChunkedOnly,
  parseRequestLine,
} from '../http1.js';
import { REQUEST_DROPPED, V_CLOSE, V_KEEP_ALIVE, applyConnection } from './hop-by-hop.js';
import { Framing, contentLengthField, joinedValues } from './wire.js';

/** What one request head says, as {@link RequestHeadReader.read} found it. */
export interface RequestHead {
  method: string;
  minor: 0 | 1;
  /** the target's path (origin-form, `/…`), without the query */
  path: string;
  /** the target's query with its `?`, or '' */
  query: string;
  /** the Host value as sent (or the absolute-form authority), '' when none */
  hostValue: string;
  /** {@link hostValue} lowercased, without its port */
  host: string;
  framing: Framing;
  /** the Content-Length value, -1 when none */
  contentLength: number;
  /** true when the client may send another request on the connection after this one */
  keepAlive: boolean;
  /** true when the proxy answers `100 Continue` itself */
  sendContinue: boolean;
  /** the fields a sampling rule or sticky key reads (lowercase names, first value), null when none */
  sampleHeaders: Map<string, string> | null;
  /** the index of the Content-Type field, -1 when none */
  contentTypeField: number;
  /** the index of the Content-Encoding field, -2 when repeated, null when none */
  contentEncodingField: number | null;
}

/**
 * Reads request heads, one at a time (the scan and the keep-mask are reused from request to
 * request; {@link fields} and {@link kept} describe the last head read until the next read).
 */
export class RequestHeadReader {
  /** the fields of the last head read */
  readonly fields = new FieldScan();
  /** per field of {@link fields}: 1 when forwarded */
  kept = new Uint8Array(64);

  /**
   * @param wanted the header names (lowercase) a sampling rule or sticky key reads
   * @param readsOtherHeaders true when {@link wanted} holds a name other than `x-shadow-*`
   */
  constructor(
    private readonly wanted: ReadonlySet<string>,
    private readonly readsOtherHeaders: boolean,
  ) {}

  /**
   * Reads the head in `b[off…end)`: the request line and field lines, each ending with CRLF (the
   * head's empty line follows at `end`).
   * @throws HttpSyntaxError 400 `malformed_http` (bad syntax, a missing or repeated Host, both or
   *   conflicting framings, a Connection header naming the framing), 501 `not_implemented`
   *   (CONNECT, a transfer coding other than chunked), 417 `expectation_failed`
   */
  read(b: Buffer, off: number, end: number): RequestHead {
    let eol = off;
    while (b[eol] !== 0x0d) eol++;
    if (b[eol + 1] !== 0x0a) throw new HttpSyntaxError(400, 'malformed_http', 'a malformed request line');
    const line = parseRequestLine(b.latin1Slice(off, eol));
    if (line.method === 'CONNECT') throw new HttpSyntaxError(501, 'not_implemented', 'CONNECT is not proxied');
    const fs = this.fields;
    fs.scan(b, eol + 2, end);
    let target = line.target;
    let absoluteHost: string | null = null;
    if (target.charCodeAt(0) !== 0x2f) {
      // absolute-form (RFC 9112 §3.2.2): its authority replaces Host
      const m = /^https?:\/\/([^/?#]+)(.*)$/i.exec(target);
      if (m === null)
        throw new HttpSyntaxError(400, 'malformed_http', 'request target must be origin-form or absolute-form');
      absoluteHost = m[1]!;
      target = m[2] === '' ? '/' : m[2]!.charCodeAt(0) === 0x2f ? m[2]! : `/${m[2]!}`;
    }
    const q = target.indexOf('?');
    const path = q === -1 ? target : target.slice(0, q);
    const query = q === -1 ? '' : target.slice(q);

    // one pass over the fields: what is forwarded, the sampling inputs, the framing facts
    let hostField = -1;
    let hosts = 0;
    let contentLength = -1;
    let te: string | null = null;
    let contentTypeField = -1;
    /** the field index, or -2 when repeated (then the capture reads the joined list) */
    let contentEncoding: number | null = null;
    let connectionTokens: string | null = null;
    let connectionClose = false;
    let expect: string | null = null;
    let sampleHeaders: Map<string, string> | null = null;
    const wanted = this.wanted;
    const n = fs.n;
    if (this.kept.length < n) this.kept = new Uint8Array(n * 2);
    const kept = this.kept;
    for (let k = 0; k < n; k++) {
      const id = fs.id(k);
      switch (id) {
        case FIELD_HOST:
          hostField = k;
          hosts++;
          break;
        case FIELD_SHADOW:
        case FIELD_SHADOW_CAPTURE: {
          sampleHeaders ??= new Map();
          const lower = fs.name(k).toLowerCase();
          if (!sampleHeaders.has(lower)) sampleHeaders.set(lower, fs.value(k));
          break;
        }
        case FIELD_TRANSFER_ENCODING:
          te = te === null ? fs.value(k) : `${te},${fs.value(k)}`;
          break;
        case FIELD_CONNECTION:
          if (fs.valueIs(k, V_KEEP_ALIVE)) break;
          if (fs.valueIs(k, V_CLOSE)) connectionClose = true;
          else connectionTokens = connectionTokens === null ? fs.value(k) : `${connectionTokens},${fs.value(k)}`;
          break;
        case FIELD_EXPECT:
          expect = expect === null ? fs.value(k) : `${expect},${fs.value(k)}`;
          break;
        case FIELD_CONTENT_LENGTH:
          // a request's length must be one plain number: RFC 9110 §8.6 allows rejecting a list or
          // repeated lines, and llhttp (Node) and nginx both do, so a next hop of either kind could
          // not read what was forwarded as the sidecar did
          if (contentLength >= 0 || fs.digits(k) < 0)
            throw new HttpSyntaxError(400, 'malformed_http', 'a repeated or list-valued content-length');
          contentLength = contentLengthField(fs, k, contentLength);
          break;
        case FIELD_CONTENT_TYPE:
          contentTypeField = k;
          break;
        case FIELD_CONTENT_ENCODING:
          // repeated lines are one list (RFC 9110 §5.3); the capture decodes only single codings
          contentEncoding = contentEncoding === null ? k : -2;
          break;
      }
      if (REQUEST_DROPPED[id] === 1) {
        kept[k] = 0;
        continue;
      }
      // a field a sampling rule or sticky key reads (x-shadow-* ones were taken above)
      if (this.readsOtherHeaders) {
        const lower = fs.name(k).toLowerCase();
        if (wanted.has(lower)) {
          sampleHeaders ??= new Map();
          if (!sampleHeaders.has(lower)) sampleHeaders.set(lower, fs.value(k));
        }
      }
      kept[k] = 1;
    }
    // RFC 9112 §3.2: exactly one Host in HTTP/1.1, with an absolute-form target too (it then
    // stands in for the Host value, §3.2.2, but the field is still required)
    if (hosts > 1 || (hosts === 0 && line.minor === 1))
      throw new HttpSyntaxError(400, 'malformed_http', 'a request needs exactly one host header');
    const hostValue = absoluteHost ?? (hostField >= 0 ? fs.value(hostField) : '');
    const hl = hostValue.toLowerCase();
    const colon = hl.startsWith('[') ? hl.indexOf(']') + 1 : hl.indexOf(':');
    const host = colon > 0 ? hl.slice(0, colon) : hl;

    // request body framing (RFC 9112 §6.3); both headers at once is how smuggling starts
    let framing = Framing.None;
    if (te !== null) {
      if (contentLength >= 0)
        throw new HttpSyntaxError(400, 'malformed_http', 'both transfer-encoding and content-length');
      if (line.minor === 0)
        throw new HttpSyntaxError(400, 'malformed_http', 'transfer-encoding in an HTTP/1.0 request');
      assertChunkedOnly(te);
      framing = Framing.Chunked;
    } else if (contentLength > 0) framing = Framing.Length;
    let sendContinue = false;
    if (expect !== null) {
      // every listed expectation, across repeated lines, must be 100-continue (RFC 9110 §10.1.1)
      if (!expect.split(',').every((e) => e.trim().toLowerCase() === '100-continue'))
        throw new HttpSyntaxError(417, 'expectation_failed', 'only 100-continue is supported');
      sendContinue = line.minor === 1 && framing !== Framing.None;
    }
    let keepAlive = line.minor === 1 && !connectionClose;
    if (connectionTokens !== null && applyConnection(fs, kept, connectionTokens)) keepAlive = false;
    return {
      method: line.method,
      minor: line.minor,
      path,
      query,
      hostValue,
      host,
      framing,
      contentLength,
      keepAlive,
      sendContinue,
      sampleHeaders,
      contentTypeField,
      contentEncodingField: contentEncoding,
    };
  }

  /** The last head's Content-Type value, null when none. */
  contentType(h: RequestHead): string | null {
    return h.contentTypeField >= 0 ? this.fields.value(h.contentTypeField) : null;
  }

  /** The last head's Content-Encoding value (repeated lines joined as one list), null when none. */
  contentEncoding(h: RequestHead): string | null {
    const ce = h.contentEncodingField;
    return ce === null ? null : ce >= 0 ? this.fields.value(ce) : joinedValues(this.fields, FIELD_CONTENT_ENCODING);
  }
}
