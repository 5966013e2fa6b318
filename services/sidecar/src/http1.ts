// HTTP/1.1 message syntax for the proxy's hot path (RFC 9112): head parsing and chunked framing.
// Strict on purpose: whatever two parsers could read differently (request smuggling, response
// splitting) is refused rather than guessed.

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

/**
 * Splits the field lines of a head (the text after the start line, latin1, CRLF-separated, no
 * final empty line) into a flat `[name, value, name, value, …]` list with values trimmed of OWS
 * (RFC 9112 §5). Names keep their case; order and duplicates are kept.
 * @throws HttpSyntaxError 400 `malformed_http` on obs-fold, whitespace before the colon, an invalid
 *   name or a value with control characters (CR, LF, NUL …)
 */
export function parseFieldLines(text: string, from: number, out: string[]): void {
  let pos = from;
  const n = text.length;
  while (pos < n) {
    let eol = text.indexOf('\r\n', pos);
    if (eol === -1) eol = n;
    const c0 = text.charCodeAt(pos);
    if (c0 === 0x20 || c0 === 0x09) throw new HttpSyntaxError(400, 'malformed_http', 'obsolete line folding in a header field');
    const colon = text.indexOf(':', pos);
    if (colon === -1 || colon > eol) throw new HttpSyntaxError(400, 'malformed_http', 'a header line without a colon');
    const name = text.slice(pos, colon);
    if (!isToken(name)) throw new HttpSyntaxError(400, 'malformed_http', 'an invalid header field name');
    let vs = colon + 1;
    let ve = eol;
    while (vs < ve && (text.charCodeAt(vs) === 0x20 || text.charCodeAt(vs) === 0x09)) vs++;
    while (ve > vs && (text.charCodeAt(ve - 1) === 0x20 || text.charCodeAt(ve - 1) === 0x09)) ve--;
    const value = text.slice(vs, ve);
    if (!isFieldValue(value)) throw new HttpSyntaxError(400, 'malformed_http', `control characters in the value of ${name}`);
    out.push(name, value);
    pos = eol + 2;
  }
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
  if (sp1 <= 0 || sp2 === -1 || sp2 > eol || eol - sp2 !== 9) throw new HttpSyntaxError(400, 'malformed_http', 'a malformed request line');
  const method = head.slice(0, sp1);
  const target = head.slice(sp1 + 1, sp2);
  const version = head.slice(sp2 + 1, eol);
  if (!isToken(method)) throw new HttpSyntaxError(400, 'malformed_http', 'an invalid method');
  if (target.length === 0) throw new HttpSyntaxError(400, 'malformed_http', 'an empty request target');
  for (let i = 0; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f) throw new HttpSyntaxError(400, 'malformed_http', 'control characters or spaces in the request target');
  }
  let minor: 0 | 1;
  if (version === 'HTTP/1.1') minor = 1;
  else if (version === 'HTTP/1.0') minor = 0;
  else throw new HttpSyntaxError(400, 'malformed_http', `unsupported protocol version ${JSON.stringify(version.slice(0, 16))}`);
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
  if (eol < 12 || !head.startsWith('HTTP/1.') || head.charCodeAt(8) !== 0x20) throw new HttpSyntaxError(400, 'malformed_http', 'a malformed status line');
  const mc = head.charCodeAt(7);
  if (mc !== 0x30 && mc !== 0x31) throw new HttpSyntaxError(400, 'malformed_http', 'an unsupported response version');
  const d0 = head.charCodeAt(9) - 0x30;
  const d1 = head.charCodeAt(10) - 0x30;
  const d2 = head.charCodeAt(11) - 0x30;
  if (d0 < 1 || d0 > 9 || d1 < 0 || d1 > 9 || d2 < 0 || d2 > 9) throw new HttpSyntaxError(400, 'malformed_http', 'a malformed status code');
  if (eol > 12 && head.charCodeAt(12) !== 0x20) throw new HttpSyntaxError(400, 'malformed_http', 'a malformed status line');
  const reason = eol > 13 ? head.slice(13, eol) : '';
  if (!isFieldValue(reason)) throw new HttpSyntaxError(400, 'malformed_http', 'control characters in the reason phrase');
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
  if (codings.length === 0 || codings[codings.length - 1] !== 'chunked' || codings.filter((c) => c === 'chunked').length > 1) {
    throw new HttpSyntaxError(400, 'malformed_http', 'chunked must be the final transfer coding, once');
  }
  throw new HttpSyntaxError(501, 'not_implemented', `transfer coding ${JSON.stringify(codings.join(', ').slice(0, 64))} is not supported`);
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
