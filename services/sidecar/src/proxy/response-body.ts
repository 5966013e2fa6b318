// Reading an upstream response body per its framing (see ResponseBody).
import { ChunkedDecoder } from '../http1.js';
import { Framing } from './wire.js';

/**
 * The body side of one upstream response: finds its end per the framing (RFC 9112 §6.3) and hands
 * back the bytes to relay — as they arrived, or de-chunked for an HTTP/1.0 client — teeing the
 * decoded bytes to `onData` (the capture) on the way.
 */
export class ResponseBody {
  framing = Framing.None;
  /** true once the framing says the body ended */
  ended = false;
  /** true when bytes followed the body's end in the same read: the connection cannot be reused */
  overrun = false;
  private remaining = 0;
  private decoder: ChunkedDecoder | null = null;
  private dechunk = false;
  private onData: ((b: Buffer) => void) | null = null;

  /**
   * Sets the framing from the response head: `contentLength` for {@link Framing.Length};
   * `dechunk` relays a chunked body's data only; `onData` receives the decoded body bytes.
   */
  start(framing: Framing, contentLength: number, dechunk: boolean, onData: ((b: Buffer) => void) | null): void {
    this.framing = framing;
    this.remaining = contentLength;
    if (framing === Framing.Chunked) this.decoder = new ChunkedDecoder();
    this.dechunk = dechunk;
    this.onData = onData;
  }

  /**
   * Takes the body bytes in `b[off…]`: returns the parts to relay (null: none) and sets
   * {@link ended} at the body's end.
   * @throws HttpSyntaxError on broken chunked framing
   */
  take(b: Buffer, off: number): Buffer[] | null {
    const f = this.framing;
    if (f === Framing.None) {
      this.ended = true;
      if (off < b.length) this.overrun = true;
      return null;
    }
    if (off >= b.length) return null;
    if (f === Framing.Length) {
      const take = Math.min(this.remaining, b.length - off);
      this.remaining -= take;
      const part = off === 0 && take === b.length ? b : b.subarray(off, off + take);
      this.onData?.(part);
      if (this.remaining === 0) {
        this.ended = true;
        if (off + take < b.length) this.overrun = true;
      }
      return [part];
    }
    if (f === Framing.Chunked) {
      let end: number;
      if (this.dechunk) {
        const parts: Buffer[] = [];
        end = this.decoder!.push(b, off, (x) => {
          parts.push(x);
          this.onData?.(x);
        });
        if (end !== -1) {
          this.ended = true;
          if (end < b.length) this.overrun = true;
        }
        return parts;
      }
      end = this.decoder!.push(b, off, this.onData);
      const stop = end === -1 ? b.length : end;
      if (end !== -1) {
        this.ended = true;
        if (end < b.length) this.overrun = true;
      }
      return [off === 0 && stop === b.length ? b : b.subarray(off, stop)];
    }
    // close-delimited: everything until the upstream closes
    const part = off === 0 ? b : b.subarray(off);
    this.onData?.(part);
    return [part];
  }
}
