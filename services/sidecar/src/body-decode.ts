// Bounded decoding of a captured body's content coding: a compression bomb costs at most the
// limit, never the heap (used by the build and by the processor when it sizes a capture).
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

/** What {@link decodeBounded} found: the decoded bytes, over a limit, or not decodable. */
export type Decoded = { kind: 'ok'; bytes: Buffer } | { kind: 'too_large' } | { kind: 'bad' };

/**
 * Decodes a body in one content coding (identity, gzip/x-gzip, deflate, br) without ever producing
 * more than `min(max, buf.length × ratio)` bytes: zlib stops at that output length, so a bomb
 * costs at most the limit in memory and the time to inflate it. Unknown codings are `bad`.
 */
export function decodeBounded(buf: Buffer, encoding: string | null, max: number, ratio: number): Decoded {
  const enc = (encoding ?? 'identity').trim().toLowerCase();
  if (enc === 'identity' || enc === '')
    return buf.byteLength > max ? { kind: 'too_large' } : { kind: 'ok', bytes: buf };
  const limit = Math.max(1, Math.min(max, Math.floor(buf.byteLength * ratio)));
  try {
    if (enc === 'gzip' || enc === 'x-gzip') return { kind: 'ok', bytes: gunzipSync(buf, { maxOutputLength: limit }) };
    if (enc === 'deflate') return { kind: 'ok', bytes: inflateSync(buf, { maxOutputLength: limit }) };
    if (enc === 'br') return { kind: 'ok', bytes: brotliDecompressSync(buf, { maxOutputLength: limit }) };
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' ? { kind: 'too_large' } : { kind: 'bad' };
  }
  return { kind: 'bad' };
}
