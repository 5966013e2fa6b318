// Reading an upstream's response head: the fields to relay and the body framing, and the head
// written to the client (see ResponseHeadReader).
import {
  FIELD_CONNECTION,
  FIELD_CONTENT_LENGTH,
  FIELD_KEEP_ALIVE,
  FIELD_TRANSFER_ENCODING,
  FieldScan,
  assertChunkedOnly,
  parseStatusLine,
  type StatusLine,
} from '../http1.js';
import { INTERIM_DROPPED, RESPONSE_DROPPED, V_CLOSE, V_KEEP_ALIVE, applyConnection } from './hop-by-hop.js';
import { CAPTURE_HEADER, Framing, contentLengthField, copyHead } from './wire.js';

/** What a final response head says, as {@link ResponseHeadReader.readFinal} found it. */
export interface ResponseHead {
  status: number;
  framing: Framing;
  /** the Content-Length value, -1 when none */
  contentLength: number;
  /**
   * FIELD_CONTENT_LENGTH when the Content-Length lines that arrived are not relayed (overridden by
   * Transfer-Encoding, or a list or repeat written once as a single field), else -1
   */
  dropId: number;
  /** false when the upstream connection must not be reused after this response */
  reusable: boolean;
  /** the upstream's Keep-Alive value (the last one), null when none */
  keepAliveHint: string | null;
}

/**
 * Reads upstream response heads, one at a time (the scan and the keep-mask are reused; they
 * describe the last head read until the next read).
 */
export class ResponseHeadReader {
  /** the fields of the last head read */
  readonly fields = new FieldScan();
  private keep = new Uint8Array(64);
  /** the status line of the last head read */
  line: StatusLine = { minor: 1, status: 0, reason: '', fieldsAt: 0 };
  /** the index of the status line's CR in the last head's bytes */
  private eol = 0;
  private b: Buffer = Buffer.alloc(0);
  private off = 0;

  /**
   * Scans the head in `b[off…end)` (status line and field lines, each ending with CRLF) and
   * returns its status; 1xx heads are then read with {@link interimHead}, others with {@link readFinal}.
   * @throws Error on a malformed status line or fields, or a 101 (never asked for)
   */
  scan(b: Buffer, off: number, end: number): number {
    let eol = off;
    while (b[eol] !== 0x0d) eol++;
    if (b[eol + 1] !== 0x0a) throw new Error('the upstream sent a malformed status line');
    const sl = parseStatusLine(b.latin1Slice(off, eol));
    if (sl.status === 101) throw new Error('the upstream switched protocols, which was not asked for');
    this.fields.scan(b, eol + 2, end);
    this.line = sl;
    this.eol = eol;
    this.b = b;
    this.off = off;
    return sl.status;
  }

  private kept(n: number): Uint8Array {
    if (this.keep.length < n) this.keep = new Uint8Array(n * 2);
    return this.keep;
  }

  /**
   * The relay facts of the final (≥ 200) head just scanned, for a request with `method`
   * (RFC 9112 §6.3 framing).
   * @throws HttpSyntaxError on an invalid or conflicting Content-Length, a transfer coding other
   *   than chunked, or a Connection header naming the framing (the caller answers 502)
   */
  readFinal(method: string): ResponseHead {
    const fs = this.fields;
    const n = fs.n;
    const kept = this.kept(n);
    let contentLength = -1;
    let te: string | null = null;
    let connectionTokens: string | null = null;
    let clRepeated = false;
    let reusable = true;
    let keepAliveHint: string | null = null;
    for (let k = 0; k < n; k++) {
      const id = fs.id(k);
      switch (id) {
        case FIELD_TRANSFER_ENCODING:
          te = te === null ? fs.value(k) : `${te},${fs.value(k)}`;
          break;
        case FIELD_CONNECTION:
          if (fs.valueIs(k, V_KEEP_ALIVE)) break;
          if (fs.valueIs(k, V_CLOSE)) reusable = false;
          else connectionTokens = connectionTokens === null ? fs.value(k) : `${connectionTokens},${fs.value(k)}`;
          break;
        case FIELD_KEEP_ALIVE:
          keepAliveHint = fs.value(k);
          break;
        case FIELD_CONTENT_LENGTH:
          // a list of equal values, or the field repeated, is forwarded as one field (RFC 9110 §8.6)
          if (contentLength >= 0 || fs.digits(k) < 0) clRepeated = true;
          contentLength = contentLengthField(fs, k, contentLength);
          break;
      }
      kept[k] = RESPONSE_DROPPED[id] === 1 ? 0 : 1;
    }
    if (connectionTokens !== null && applyConnection(fs, kept, connectionTokens)) reusable = false;
    if (this.line.minor === 0) reusable = false;

    const status = this.line.status;
    let framing: Framing;
    let dropId = -1;
    if (method === 'HEAD' || status === 204 || status === 304) framing = Framing.None;
    else if (te !== null) {
      // only chunked alone is relayed; other codings would need decoding to find the end
      if (te.trim().toLowerCase() !== 'chunked') assertChunkedOnly(te);
      framing = Framing.Chunked;
      // transfer-encoding overrides content-length, which must not reach the client
      if (contentLength >= 0) dropId = FIELD_CONTENT_LENGTH;
    } else if (contentLength >= 0) {
      framing = contentLength === 0 ? Framing.None : Framing.Length;
      if (clRepeated) dropId = FIELD_CONTENT_LENGTH;
    } else framing = Framing.Close;
    if (framing === Framing.Close) reusable = false;
    return { status, framing, contentLength, dropId, reusable, keepAliveHint };
  }

  /** The relayed fields of the final head just read, as `[name, value]` pairs (what a capture records). */
  relayedPairs(h: ResponseHead): [string, string][] {
    const fs = this.fields;
    const kept = this.keep;
    const pairs: [string, string][] = [];
    for (let k = 0; k < fs.n; k++) if (kept[k] === 1 && fs.id(k) !== h.dropId) pairs.push([fs.name(k), fs.value(k)]);
    if (h.dropId !== -1 && h.framing !== Framing.Chunked) pairs.push(['content-length', String(h.contentLength)]);
    return pairs;
  }

  /**
   * The head the client gets for the final head just read: the status line as sent when it is
   * HTTP/1.1 already, the kept field lines as they arrived, the framing the proxy relays with
   * (`dechunk`: the body goes out de-chunked, close-delimited), the capture echo and the
   * connection's fate (`close`, else `keepAliveLine`).
   */
  clientHead(h: ResponseHead, echo: string, close: boolean, dechunk: boolean, keepAliveLine: string): Buffer {
    const { line, eol, b, off } = this;
    // without a reason phrase the space after the code is still required (RFC 9112 §4)
    const start =
      line.minor === 1 && eol > off + 12 ? b.latin1Slice(off, eol + 2) : `HTTP/1.1 ${h.status} ${line.reason}\r\n`;
    let tail = `${CAPTURE_HEADER}: ${echo}\r\n${close ? 'connection: close\r\n\r\n' : keepAliveLine}`;
    if (h.framing === Framing.Chunked && !dechunk) tail = `transfer-encoding: chunked\r\n${tail}`;
    else if (h.dropId !== -1 && h.framing !== Framing.Chunked) tail = `content-length: ${h.contentLength}\r\n${tail}`;
    return copyHead(start, this.fields, this.keep, h.dropId, tail);
  }

  /**
   * The interim (1xx) head just scanned, as relayed: without the fields of
   * {@link INTERIM_DROPPED} or those its Connection header lists. `reusable` is false when it
   * said `close`.
   * @throws HttpSyntaxError when its Connection header names the framing (the caller answers 502)
   */
  interimHead(): { head: Buffer; reusable: boolean } {
    const fs = this.fields;
    const n = fs.n;
    const kept = this.kept(n);
    let connectionTokens: string | null = null;
    let reusable = true;
    for (let k = 0; k < n; k++) {
      const id = fs.id(k);
      kept[k] = INTERIM_DROPPED[id] === 1 ? 0 : 1;
      if (id !== FIELD_CONNECTION || fs.valueIs(k, V_KEEP_ALIVE)) continue;
      if (fs.valueIs(k, V_CLOSE)) reusable = false;
      else connectionTokens = connectionTokens === null ? fs.value(k) : `${connectionTokens},${fs.value(k)}`;
    }
    if (connectionTokens !== null && applyConnection(fs, kept, connectionTokens)) reusable = false;
    const { line, eol, b, off } = this;
    const start =
      line.minor === 1 && eol > off + 12 ? b.latin1Slice(off, eol + 2) : `HTTP/1.1 ${line.status} ${line.reason}\r\n`;
    return { head: copyHead(start, fs, kept, -1, '\r\n'), reusable };
  }
}
