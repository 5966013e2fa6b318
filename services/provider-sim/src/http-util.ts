import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WireResponse } from './provider-errors.js';

/** Raised by {@link readBody} when the body exceeds its byte limit. */
export class TooLarge extends Error {}

/**
 * Reads the whole request body; rejects with {@link TooLarge} once more than `max` bytes
 * arrived (the rest is drained and dropped so the connection can still answer).
 */
export function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let n = 0;
    req.on('data', (c: Buffer) => {
      n += c.length;
      if (n > max) {
        reject(new TooLarge());
        req.removeAllListeners('data');
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Sends `body` as a complete JSON response with `status`. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Writes and resolves once the data is handed to the OS (so a following destroy cannot drop it). */
export function flushWrite(res: ServerResponse, chunk: string | Uint8Array): Promise<void> {
  return new Promise((resolve) => res.write(chunk, () => resolve()));
}

/** `w` with headers `h` added (h wins). */
export function withHeaders(w: WireResponse, h: Record<string, string>): WireResponse {
  return { ...w, headers: { ...w.headers, ...h } };
}
