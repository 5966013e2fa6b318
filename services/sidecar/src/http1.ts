// HTTP/1.1 message syntax for the proxy's hot path (RFC 9112): head parsing and chunked framing.
// Strict on purpose: whatever two parsers could read differently (request smuggling, response
// splitting) is refused rather than guessed.
// Here: the start lines and the framing fields; field lines are in http1-fields.ts, the chunked
// coding in http1-chunked.ts. Importers use this module, which re-exports both.
import { HttpSyntaxError } from './http1-error.js';
import { isFieldValue, isToken } from './http1-fields.js';

declare global {
  interface Buffer {
    /** `toString('latin1', start, end)` without the encoding lookup (Buffer.prototype, every Node version) */
    latin1Slice(start: number, end: number): string;
    /** `write(s, offset, 'latin1')` without the encoding lookup; returns the bytes written */
    latin1Write(s: string, offset: number): number;
  }
}

export { HttpSyntaxError } from './http1-error.js';
export {
  FieldScan,
  isFieldValue,
  isToken,
  FIELD_OTHER,
  FIELD_HOST,
  FIELD_CONTENT_LENGTH,
  FIELD_TRANSFER_ENCODING,
  FIELD_CONNECTION,
  FIELD_KEEP_ALIVE,
  FIELD_PROXY_CONNECTION,
  FIELD_TE,
  FIELD_UPGRADE,
  FIELD_TRAILER,
  FIELD_EXPECT,
  FIELD_CONTENT_TYPE,
  FIELD_CONTENT_ENCODING,
  FIELD_SHADOW,
  FIELD_SHADOW_CAPTURE,
  FIELD_PROXY_AUTH,
} from './http1-fields.js';
export { ChunkedDecoder } from './http1-chunked.js';

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
