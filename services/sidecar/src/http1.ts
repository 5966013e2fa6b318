// HTTP/1.1 message syntax for the proxy's hot path (RFC 9112): head parsing and chunked framing.
// Strict on purpose: whatever two parsers could read differently (request smuggling, response
// splitting) is refused rather than guessed.

declare global {
  interface Buffer {
    /** `toString('latin1', start, end)` without the encoding lookup (Buffer.prototype, every Node version) */
    latin1Slice(start: number, end: number): string;
    /** `write(s, offset, 'latin1')` without the encoding lookup; returns the bytes written */
    latin1Write(s: string, offset: number): number;
  }
}

/** A message the proxy refuses; `status` and `code` are what the client is answered with. */
export class HttpSyntaxError extends Error {
  constructor(
    /** HTTP status for the answer: 400, 417, 431, 501 or 505 */
    readonly status: number,
    /** stable error code from the contracts catalogue */
    readonly code: 'malformed_http' | 'headers_too_large' | 'not_implemented' | 'expectation_failed',
    message: string,
  ) {
    super(message);
  }
}

/** `tchar` from RFC 9110 §5.6.2, as a byte lookup. */
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~") TCHAR[c.charCodeAt(0)] = 1;
for (let c = 0x30; c <= 0x39; c++) TCHAR[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) TCHAR[c] = 1;
for (let c = 0x61; c <= 0x7a; c++) TCHAR[c] = 1;

/** True when `s` is a non-empty token (RFC 9110 §5.6.2). */
export function isToken(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) if (TCHAR[s.charCodeAt(i)] !== 1) return false;
  return true;
}

/** True when `s` is a valid field value: VCHAR, obs-text, SP and HTAB only (RFC 9110 §5.5). */
export function isFieldValue(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f || c > 0xff) return false;
  }
  return true;
}

/** Bytes allowed in a field value: VCHAR, obs-text, SP and HTAB (RFC 9110 §5.5). */
const FVCHAR = new Uint8Array(256);
FVCHAR[0x09] = 1;
for (let c = 0x20; c <= 0xff; c++) if (c !== 0x7f) FVCHAR[c] = 1;

/**
 * Ids of the field names the proxy acts on ({@link FieldScan.id}); any other name is
 * `FIELD_OTHER`. `FIELD_SHADOW` is any `x-shadow-*` name except `x-shadow-capture`, which has
 * its own id.
 */
export const FIELD_OTHER = 0;
export const FIELD_HOST = 1;
export const FIELD_CONTENT_LENGTH = 2;
export const FIELD_TRANSFER_ENCODING = 3;
export const FIELD_CONNECTION = 4;
export const FIELD_KEEP_ALIVE = 5;
export const FIELD_PROXY_CONNECTION = 6;
export const FIELD_TE = 7;
export const FIELD_UPGRADE = 8;
export const FIELD_TRAILER = 9;
export const FIELD_EXPECT = 10;
export const FIELD_CONTENT_TYPE = 11;
export const FIELD_CONTENT_ENCODING = 12;
export const FIELD_SHADOW = 13;
export const FIELD_SHADOW_CAPTURE = 14;
/** `Proxy-Authorization` or `Proxy-Authenticate`: credentials for this hop, never forwarded (RFC 9110 §11.7) */
export const FIELD_PROXY_AUTH = 15;

const lit = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const N_HOST = lit('host');
const N_TE = lit('te');
const N_EXPECT = lit('expect');
const N_TRAILER = lit('trailer');
const N_UPGRADE = lit('upgrade');
const N_CONNECTION = lit('connection');
const N_KEEP_ALIVE = lit('keep-alive');
const N_CONTENT_TYPE = lit('content-type');
const N_CONTENT_LENGTH = lit('content-length');
const N_CONTENT_ENCODING = lit('content-encoding');
const N_PROXY_CONNECTION = lit('proxy-connection');
const N_TRANSFER_ENCODING = lit('transfer-encoding');
const N_X_SHADOW = lit('x-shadow-');
const N_PROXY_AUTHENTICATE = lit('proxy-authenticate');
const N_PROXY_AUTHORIZATION = lit('proxy-authorization');
const N_X_SHADOW_CAPTURE = lit('x-shadow-capture');

/**
 * True when `b[at…]` starts with `name` (lowercase letters and `-`) in any letter case. OR-ing
 * 0x20 folds only A–Z onto a–z among token bytes, so no other byte can match.
 */
function hasName(b: Uint8Array, at: number, name: Uint8Array): boolean {
  for (let k = 0; k < name.length; k++) if ((b[at + k]! | 0x20) !== name[k]) return false;
  return true;
}

/** The id of the field name `b[s…e)` (a validated token). */
function fieldId(b: Uint8Array, s: number, e: number): number {
  switch (e - s) {
    case 2:
      if (hasName(b, s, N_TE)) return FIELD_TE;
      break;
    case 4:
      if (hasName(b, s, N_HOST)) return FIELD_HOST;
      break;
    case 6:
      if (hasName(b, s, N_EXPECT)) return FIELD_EXPECT;
      break;
    case 7:
      if (hasName(b, s, N_TRAILER)) return FIELD_TRAILER;
      if (hasName(b, s, N_UPGRADE)) return FIELD_UPGRADE;
      break;
    case 10:
      if (hasName(b, s, N_CONNECTION)) return FIELD_CONNECTION;
      if (hasName(b, s, N_KEEP_ALIVE)) return FIELD_KEEP_ALIVE;
      break;
    case 12:
      if (hasName(b, s, N_CONTENT_TYPE)) return FIELD_CONTENT_TYPE;
      break;
    case 14:
      if (hasName(b, s, N_CONTENT_LENGTH)) return FIELD_CONTENT_LENGTH;
      break;
    case 16:
      if (hasName(b, s, N_CONTENT_ENCODING)) return FIELD_CONTENT_ENCODING;
      if (hasName(b, s, N_PROXY_CONNECTION)) return FIELD_PROXY_CONNECTION;
      if (hasName(b, s, N_X_SHADOW_CAPTURE)) return FIELD_SHADOW_CAPTURE;
      break;
    case 17:
      if (hasName(b, s, N_TRANSFER_ENCODING)) return FIELD_TRANSFER_ENCODING;
      break;
    case 18:
      if (hasName(b, s, N_PROXY_AUTHENTICATE)) return FIELD_PROXY_AUTH;
      break;
    case 19:
      if (hasName(b, s, N_PROXY_AUTHORIZATION)) return FIELD_PROXY_AUTH;
      break;
  }
  // x-shadow-* of any other length (9 … 17 included: the cases above fall through to here)
  return e - s >= 9 && hasName(b, s, N_X_SHADOW) ? FIELD_SHADOW : FIELD_OTHER;
}

const SLOTS = 6;

/**
 * The field lines of one message head, scanned in place over its bytes (RFC 9112 §5): offsets and
 * a name id per field, no strings. Strings are made only for the fields a caller reads
 * ({@link name}, {@link value}), and forwarded lines are copied as the bytes that arrived
 * ({@link lineStart}, {@link lineEnd}). Reused from message to message (one per direction).
 */
export class FieldScan {
  /** per field: nameStart, nameEnd, valueStart, valueEnd (OWS trimmed), lineEnd (past CRLF), id */
  private f = new Int32Array(64 * SLOTS);
  /** fields scanned */
  n = 0;
  /** the bytes of the last scan */
  b: Buffer = Buffer.alloc(0);

  /**
   * Scans the field lines in `b[from…end)`, where every line (the last one too) ends with CRLF
   * and the empty line that ends the head is not included. Order and duplicates are kept.
   * @throws HttpSyntaxError 400 `malformed_http` on obs-fold, whitespace before the colon, an
   *   invalid name, a line without a colon, or a value with control characters (CR, LF, NUL …)
   */
  scan(b: Buffer, from: number, end: number): void {
    this.b = b;
    let n = 0;
    let pos = from;
    while (pos < end) {
      const c0 = b[pos]!;
      if (c0 === 0x20 || c0 === 0x09)
        throw new HttpSyntaxError(400, 'malformed_http', 'obsolete line folding in a header field');
      let i = pos;
      while (TCHAR[b[i]!] === 1) i++;
      const nameEnd = i;
      if (i === pos || b[i] !== 0x3a) throw nameError(b, pos, end);
      i++;
      while (b[i] === 0x20 || b[i] === 0x09) i++;
      const vs = i;
      while (i < end && FVCHAR[b[i]!] === 1) i++;
      if (i >= end - 1 || b[i] !== 0x0d || b[i + 1] !== 0x0a) {
        throw new HttpSyntaxError(
          400,
          'malformed_http',
          `control characters in the value of ${latin1(b, pos, nameEnd)}`,
        );
      }
      let ve = i;
      while (ve > vs && (b[ve - 1] === 0x20 || b[ve - 1] === 0x09)) ve--;
      if ((n + 1) * SLOTS > this.f.length) {
        const g = new Int32Array(this.f.length * 2);
        g.set(this.f);
        this.f = g;
      }
      const o = n * SLOTS;
      const f = this.f;
      f[o] = pos;
      f[o + 1] = nameEnd;
      f[o + 2] = vs;
      f[o + 3] = ve;
      f[o + 4] = i + 2;
      f[o + 5] = fieldId(b, pos, nameEnd);
      n++;
      pos = i + 2;
    }
    this.n = n;
  }

  /** The name id of field `k` (`FIELD_*`). */
  id(k: number): number {
    return this.f[k * SLOTS + 5]!;
  }

  /** Field `k`'s name as sent (latin1). */
  name(k: number): string {
    return latin1(this.b, this.f[k * SLOTS]!, this.f[k * SLOTS + 1]!);
  }

  /** Field `k`'s value, OWS trimmed (latin1). */
  value(k: number): string {
    return latin1(this.b, this.f[k * SLOTS + 2]!, this.f[k * SLOTS + 3]!);
  }

  /** Index where field `k`'s line starts. */
  lineStart(k: number): number {
    return this.f[k * SLOTS]!;
  }

  /** Index just past field `k`'s CRLF. */
  lineEnd(k: number): number {
    return this.f[k * SLOTS + 4]!;
  }

  /** True when field `k`'s value is `v` (lowercase ASCII) in any letter case. */
  valueIs(k: number, v: Uint8Array): boolean {
    const s = this.f[k * SLOTS + 2]!;
    return this.f[k * SLOTS + 3]! - s === v.length && hasName(this.b, s, v);
  }

  /**
   * Field `k`'s value read as a Content-Length (digits only, at most 15), or -1 when it is
   * anything else (a list such as `5, 5` included: the caller then reads it with
   * {@link parseContentLength}).
   */
  digits(k: number): number {
    const s = this.f[k * SLOTS + 2]!;
    const e = this.f[k * SLOTS + 3]!;
    if (e === s || e - s > 15) return -1;
    let n = 0;
    for (let i = s; i < e; i++) {
      const d = this.b[i]! - 0x30;
      if (d < 0 || d > 9) return -1;
      n = n * 10 + d;
    }
    return n;
  }
}

function latin1(b: Buffer, s: number, e: number): string {
  return b.latin1Slice(s, e);
}

/** The error for a field line whose name is not followed by a colon. */
function nameError(b: Buffer, pos: number, end: number): HttpSyntaxError {
  let i = pos;
  while (i < end && b[i] !== 0x0d && b[i] !== 0x3a) i++;
  return new HttpSyntaxError(
    400,
    'malformed_http',
    b[i] === 0x3a ? 'an invalid header field name' : 'a header line without a colon',
  );
}

/** A parsed request line. */
export interface RequestLine {
  method: string;
  target: string;
  /** HTTP minor version: 1 for HTTP/1.1, 0 for HTTP/1.0 */
  minor: 0 | 1;
  /** index in the head text where the field lines start */
  fieldsAt: number;
}

/**
 * Parses `method SP request-target SP HTTP-version` (RFC 9112 §3).
 * @throws HttpSyntaxError 400 `malformed_http` for a malformed line, 505-class versions as 400
 *   `malformed_http` too (only HTTP/1.0 and HTTP/1.1 are spoken here)
 */
export function parseRequestLine(head: string): RequestLine {
  let eol = head.indexOf('\r\n');
  if (eol === -1) eol = head.length;
  const sp1 = head.indexOf(' ');
  const sp2 = sp1 === -1 ? -1 : head.indexOf(' ', sp1 + 1);
  if (sp1 <= 0 || sp2 === -1 || sp2 > eol || eol - sp2 !== 9)
    throw new HttpSyntaxError(400, 'malformed_http', 'a malformed request line');
  const method = head.slice(0, sp1);
  const target = head.slice(sp1 + 1, sp2);
  const version = head.slice(sp2 + 1, eol);
  if (!isToken(method)) throw new HttpSyntaxError(400, 'malformed_http', 'an invalid method');
  if (target.length === 0) throw new HttpSyntaxError(400, 'malformed_http', 'an empty request target');
  for (let i = 0; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f)
      throw new HttpSyntaxError(400, 'malformed_http', 'control characters or spaces in the request target');
  }
  let minor: 0 | 1;
  if (version === 'HTTP/1.1') minor = 1;
  else if (version === 'HTTP/1.0') minor = 0;
  else
    throw new HttpSyntaxError(
      400,
      'malformed_http',
      `unsupported protocol version ${JSON.stringify(version.slice(0, 16))}`,
    );
  return { method, target, minor, fieldsAt: eol + 2 };
}

/** A parsed status line. */
export interface StatusLine {
  status: number;
  reason: string;
  minor: 0 | 1;
  fieldsAt: number;
}

/**
 * Parses `HTTP-version SP status-code SP [reason-phrase]` (RFC 9112 §4; a missing final space
 * is tolerated, as most clients do).
 * @throws HttpSyntaxError (status 502 is chosen by the caller) for anything else
 */
export function parseStatusLine(head: string): StatusLine {
  let eol = head.indexOf('\r\n');
  if (eol === -1) eol = head.length;
  if (eol < 12 || !head.startsWith('HTTP/1.') || head.charCodeAt(8) !== 0x20)
    throw new HttpSyntaxError(400, 'malformed_http', 'a malformed status line');
  const mc = head.charCodeAt(7);
  if (mc !== 0x30 && mc !== 0x31) throw new HttpSyntaxError(400, 'malformed_http', 'an unsupported response version');
  const d0 = head.charCodeAt(9) - 0x30;
  const d1 = head.charCodeAt(10) - 0x30;
  const d2 = head.charCodeAt(11) - 0x30;
  if (d0 < 1 || d0 > 9 || d1 < 0 || d1 > 9 || d2 < 0 || d2 > 9)
    throw new HttpSyntaxError(400, 'malformed_http', 'a malformed status code');
  if (eol > 12 && head.charCodeAt(12) !== 0x20)
    throw new HttpSyntaxError(400, 'malformed_http', 'a malformed status line');
  const reason = eol > 13 ? head.slice(13, eol) : '';
  if (!isFieldValue(reason))
    throw new HttpSyntaxError(400, 'malformed_http', 'control characters in the reason phrase');
  return { status: d0 * 100 + d1 * 10 + d2, reason, minor: mc === 0x31 ? 1 : 0, fieldsAt: eol + 2 };
}

/**
 * Reads a Content-Length field value (RFC 9110 §8.6): digits only; a list of identical values
 * (`5, 5`) is one value. Returns -1 when invalid.
 */
export function parseContentLength(v: string): number {
  let s = v;
  if (s.includes(',')) {
    const parts = s.split(',').map((p) => p.trim());
    if (parts.some((p) => p !== parts[0])) return -1;
    s = parts[0]!;
  }
  if (s.length === 0 || s.length > 15) return -1;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return -1;
  }
  return Number(s);
}

/**
 * Checks a request's Transfer-Encoding list: passes when it is exactly `chunked` (the proxy
 * neither applies nor removes other codings, RFC 9112 §6.1).
 * @throws HttpSyntaxError 400 `malformed_http` when chunked is not the final coding, or appears
 *   twice — the body length cannot be determined (RFC 9112 §6.3); 501 `not_implemented` when
 *   chunked is final but another coding precedes it (RFC 9112 §6.1)
 */
export function assertChunkedOnly(te: string): void {
  const codings = te
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter((t) => t !== '');
  if (codings.length === 1 && codings[0] === 'chunked') return;
  if (
    codings.length === 0 ||
    codings[codings.length - 1] !== 'chunked' ||
    codings.filter((c) => c === 'chunked').length > 1
  ) {
    throw new HttpSyntaxError(400, 'malformed_http', 'chunked must be the final transfer coding, once');
  }
  throw new HttpSyntaxError(
    501,
    'not_implemented',
    `transfer coding ${JSON.stringify(codings.join(', ').slice(0, 64))} is not supported`,
  );
}

const enum CS {
  Size,
  SizeWs,
  Ext,
  SizeLf,
  Data,
  DataCr,
  DataLf,
  TrailerStart,
  TrailerLine,
  TrailerLf,
  EndLf,
  Done,
}

/** Longest chunk-size line (hex digits plus extensions) accepted, bytes. */
const MAX_CHUNK_LINE = 4096;
/** Largest trailer section accepted, bytes. */
const MAX_TRAILERS = 16 * 1024;

/**
 * Follows the chunked transfer coding (RFC 9112 §7.1) over raw bytes, to find where a message
 * ends and, when asked, to hand out the decoded data. It never copies: the caller forwards the
 * raw bytes it was given, and `onData` receives sub-views of them.
 *
 * Strict: CRLF line ends, 1–15 hex digits, extensions and trailers bounded.
 */
export class ChunkedDecoder {
  private state = CS.Size;
  private remaining = 0;
  private digits = 0;
  private lineBytes = 0;
  private trailerBytes = 0;
  /** within a trailer line: 0 = in the name, 1 = after the colon */
  private trailerPart = 0;

  /** True once the last chunk and the trailer section have been read. */
  get done(): boolean {
    return this.state === CS.Done;
  }

  /**
   * Consumes `buf[start…]`. Returns the index just past the end of the message when it ends in
   * this buffer, else -1 (all consumed).
   * @param onData receives each run of decoded data (a view of `buf`), or null to skip it
   * @throws HttpSyntaxError 400 `malformed_http` on any framing error
   */
  push(buf: Buffer, start: number, onData: ((data: Buffer) => void) | null): number {
    let i = start;
    const n = buf.length;
    while (i < n) {
      switch (this.state) {
        case CS.Data: {
          const take = Math.min(this.remaining, n - i);
          if (onData !== null) onData(buf.subarray(i, i + take));
          i += take;
          this.remaining -= take;
          if (this.remaining === 0) this.state = CS.DataCr;
          continue;
        }
        case CS.Size: {
          const c = buf[i]!;
          const v = hexValue(c);
          if (v >= 0) {
            if (++this.digits > 15) throw bad('a chunk size too large');
            this.remaining = this.remaining * 16 + v;
          } else if (this.digits === 0) {
            throw bad('a chunk without a size');
          } else if (c === 0x0d) {
            this.state = CS.SizeLf;
          } else if (c === 0x3b) {
            this.state = CS.Ext;
          } else if (c === 0x20 || c === 0x09) {
            this.state = CS.SizeWs;
          } else {
            throw bad('an invalid chunk size');
          }
          if (++this.lineBytes > MAX_CHUNK_LINE) throw bad('a chunk-size line too long');
          i++;
          continue;
        }
        case CS.SizeWs: {
          // BWS before a chunk extension (RFC 9112 §7.1.1): only ";" or the line end may follow
          const c = buf[i]!;
          if (c === 0x3b) this.state = CS.Ext;
          else if (c === 0x0d) this.state = CS.SizeLf;
          else if (c !== 0x20 && c !== 0x09) throw bad('junk after a chunk size');
          if (++this.lineBytes > MAX_CHUNK_LINE) throw bad('a chunk-size line too long');
          i++;
          continue;
        }
        case CS.Ext: {
          const c = buf[i]!;
          if (c === 0x0d) this.state = CS.SizeLf;
          else if (c === 0x0a || c === 0) throw bad('a bare LF or NUL in a chunk extension');
          if (++this.lineBytes > MAX_CHUNK_LINE) throw bad('a chunk-size line too long');
          i++;
          continue;
        }
        case CS.SizeLf: {
          if (buf[i] !== 0x0a) throw bad('a chunk-size line without CRLF');
          i++;
          this.digits = 0;
          this.lineBytes = 0;
          this.state = this.remaining === 0 ? CS.TrailerStart : CS.Data;
          continue;
        }
        case CS.DataCr: {
          if (buf[i] !== 0x0d) throw bad('chunk data longer than its size');
          i++;
          this.state = CS.DataLf;
          continue;
        }
        case CS.DataLf: {
          if (buf[i] !== 0x0a) throw bad('chunk data without CRLF');
          i++;
          this.state = CS.Size;
          continue;
        }
        case CS.TrailerStart: {
          const c = buf[i]!;
          i++;
          if (c === 0x0d) this.state = CS.EndLf;
          else if (TCHAR[c] === 1) {
            this.state = CS.TrailerLine;
            this.trailerPart = 0;
          } else throw bad('a trailer line that is not a header field');
          if (++this.trailerBytes > MAX_TRAILERS) throw bad('a trailer section too large');
          continue;
        }
        case CS.TrailerLine: {
          // a field line (RFC 9112 §7.1.2 → §5): token name, colon, value without controls
          const c = buf[i]!;
          i++;
          if (this.trailerPart === 0) {
            if (c === 0x3a) this.trailerPart = 1;
            else if (TCHAR[c] !== 1) throw bad('an invalid trailer field name');
          } else if (c === 0x0d) this.state = CS.TrailerLf;
          else if ((c < 0x20 && c !== 0x09) || c === 0x7f) throw bad('control characters in a trailer field');
          if (++this.trailerBytes > MAX_TRAILERS) throw bad('a trailer section too large');
          continue;
        }
        case CS.TrailerLf: {
          if (buf[i] !== 0x0a) throw bad('a trailer line without CRLF');
          i++;
          this.state = CS.TrailerStart;
          continue;
        }
        case CS.EndLf: {
          if (buf[i] !== 0x0a) throw bad('a chunked message not ended by CRLF');
          i++;
          this.state = CS.Done;
          return i;
        }
        case CS.Done:
          return i;
      }
    }
    return this.state === CS.Done ? i : -1;
  }
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

function bad(message: string): HttpSyntaxError {
  return new HttpSyntaxError(400, 'malformed_http', message);
}
