// Shared pieces of the proxy's HTTP/1.1 wire handling: limits, body framing kinds, and the helpers
// that build and write message heads from scanned fields (http1.ts FieldScan).
import type { Socket } from 'node:net';
import { HttpSyntaxError, parseContentLength, type FieldScan } from '../http1.js';

/** Response header that echoes the capture decision made at response start. */
export const CAPTURE_HEADER = 'x-shadow-capture';

export const CRLFCRLF = Buffer.from('\r\n\r\n');
export const EMPTY = Buffer.alloc(0);
/** Methods a proxy may retry on its own (RFC 9110 §9.2.2). */
export const IDEMPOTENT: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);
/** Largest request head accepted (Node's default `maxHeaderSize`), bytes; larger → 431. */
export const MAX_REQUEST_HEAD = 16 * 1024;
/** Largest upstream response head accepted, bytes; larger → 502. */
export const MAX_RESPONSE_HEAD = 64 * 1024;
/** Small writes are joined into one buffer (one syscall) below this size. */
const JOIN_MAX_BYTES = 16 * 1024;

/** How a message body is delimited (RFC 9112 §6.3). */
export const enum Framing {
  None,
  Length,
  Chunked,
  Close,
}

/**
 * Field `k` of `fs` read as a Content-Length (digits, or a list of equal values: RFC 9110 §8.6)
 * that must agree with the value read before (`prev`; -1 when none).
 * @throws HttpSyntaxError 400 `malformed_http` when invalid or conflicting (a response's caller
 *   turns it into a 502)
 */
export function contentLengthField(fs: FieldScan, k: number, prev: number): number {
  let cl = fs.digits(k);
  if (cl < 0) cl = parseContentLength(fs.value(k));
  if (cl < 0 || (prev >= 0 && cl !== prev))
    throw new HttpSyntaxError(400, 'malformed_http', 'an invalid or conflicting content-length');
  return cl;
}

/** The values of every field of `fs` with id `id`, joined as one list (`a, b`). */
export function joinedValues(fs: FieldScan, id: number): string {
  const vs: string[] = [];
  for (let k = 0; k < fs.n; k++) if (fs.id(k) === id) vs.push(fs.value(k));
  return vs.join(', ');
}

/**
 * A message head as one buffer: `start` (latin1), the field lines of `fs` with `kept[k]` set —
 * copied as the bytes that arrived, runs of adjacent lines at once — except those with id
 * `dropId`, then `tail` (latin1, ending with the empty line).
 */
export function copyHead(start: string, fs: FieldScan, kept: Uint8Array, dropId: number, tail: string): Buffer {
  const n = fs.n;
  let size = start.length + tail.length;
  for (let k = 0; k < n; k++) if (kept[k] === 1 && fs.id(k) !== dropId) size += fs.lineEnd(k) - fs.lineStart(k);
  const out = Buffer.allocUnsafe(size);
  let at = out.latin1Write(start, 0);
  const src = fs.b;
  for (let k = 0; k < n; k++) {
    if (kept[k] !== 1 || fs.id(k) === dropId) continue;
    const s = fs.lineStart(k);
    let e = fs.lineEnd(k);
    while (k + 1 < n && kept[k + 1] === 1 && fs.id(k + 1) !== dropId) e = fs.lineEnd(++k);
    at += src.copy(out, at, s, e);
  }
  out.latin1Write(tail, at);
  return out;
}

/** Writes `head` and `parts` to `sock` in one write when small, else corked. Returns write()'s verdict. */
export function writeJoined(sock: Socket, head: Buffer | null, parts: Buffer[] | null): boolean {
  if (parts === null) return head === null || sock.write(head);
  if (head === null && parts.length === 1) return sock.write(parts[0]!);
  let total = head === null ? 0 : head.length;
  for (const p of parts) total += p.length;
  if (total <= JOIN_MAX_BYTES) {
    const buf = Buffer.allocUnsafe(total);
    let at = head === null ? 0 : head.copy(buf, 0);
    for (const p of parts) at += p.copy(buf, at);
    return sock.write(buf);
  }
  sock.cork();
  let ok = true;
  if (head !== null) ok = sock.write(head);
  for (const p of parts) ok = sock.write(p);
  sock.uncork();
  return ok;
}
