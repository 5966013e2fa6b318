// The chunked transfer coding (RFC 9112 §7.1): where a chunked message ends, and its data.
import { HttpSyntaxError } from './http1-error.js';
import { TCHAR } from './http1-fields.js';

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
