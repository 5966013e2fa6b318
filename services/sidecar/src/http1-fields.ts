// Field lines of an HTTP/1.1 head (RFC 9112 §5, RFC 9110 §5): the character classes, the ids of
// the names the proxy acts on, and the in-place scanner. The byte tables live here, beside the
// scanner's loops that read them.
import { HttpSyntaxError } from './http1-error.js';

/** `tchar` from RFC 9110 §5.6.2, as a byte lookup. */
export const TCHAR = new Uint8Array(256);
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
