// A raw HTTP/1.1 test client over node:net and an independent response parser, so the tests see
// every byte the sidecar sends and every framing decision it makes.
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

const CRLFCRLF = Buffer.from('\r\n\r\n');

/** A client socket that keeps every byte received and whether the server ended the connection. */
export class RawClient {
  private chunks: Buffer[] = [];
  private joined: Buffer | null = null;
  private wakers = new Set<() => void>();
  /** when the server sent FIN (performance.now() ms; 0 while it has not) */
  endedAt = 0;
  /** when the socket closed (performance.now() ms; 0 while open) */
  closedAt = 0;

  private constructor(readonly sock: Socket) {
    sock.on('data', (d: Buffer) => {
      this.chunks.push(d);
      this.joined = null;
      this.wake();
    });
    sock.on('end', () => {
      this.endedAt = performance.now();
      this.wake();
    });
    sock.on('close', () => {
      this.closedAt = performance.now();
      this.wake();
    });
    sock.on('error', () => undefined);
  }

  /** `allowHalfOpen`: the client does not end its side when the server ends its own. */
  static open(baseUrl: string, allowHalfOpen = false): Promise<RawClient> {
    const u = new URL(baseUrl);
    return new Promise((resolve, reject) => {
      const s = connect({ host: u.hostname, port: Number(u.port), noDelay: true, allowHalfOpen });
      s.once('connect', () => resolve(new RawClient(s)));
      s.once('error', reject);
    });
  }

  /** the server sent FIN */
  get ended(): boolean {
    return this.endedAt !== 0;
  }

  get closed(): boolean {
    return this.closedAt !== 0;
  }

  get data(): Buffer {
    if (this.joined === null) {
      this.joined = Buffer.concat(this.chunks);
      this.chunks = [this.joined];
    }
    return this.joined;
  }

  get text(): string {
    return this.data.toString('latin1');
  }

  write(b: string | Buffer): void {
    this.sock.write(typeof b === 'string' ? Buffer.from(b, 'latin1') : b);
  }

  private wake(): void {
    for (const w of this.wakers) w();
  }

  /** Resolves once `pred` holds; rejects after `ms` showing what arrived. */
  until(pred: () => boolean, ms = 3000, what = 'condition'): Promise<void> {
    if (pred()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!pred()) return;
        clearTimeout(t);
        this.wakers.delete(check);
        resolve();
      };
      const t = setTimeout(() => {
        this.wakers.delete(check);
        reject(
          new Error(
            `timed out waiting for ${what}; received ${JSON.stringify(this.text.slice(0, 600))} ended=${this.ended}`,
          ),
        );
      }, ms);
      this.wakers.add(check);
    });
  }

  /** Waits for `n` complete responses (`methods` name the requests, for HEAD). */
  async responses(n: number, methods: string[] = [], ms = 3000): Promise<Resp[]> {
    await this.until(() => parseResponses(this.data, { methods, eof: this.ended }).length >= n, ms, `${n} responses`);
    return parseResponses(this.data, { methods, eof: this.ended });
  }

  /** Waits for the server to end the connection. */
  closedByServer(ms = 3000): Promise<void> {
    return this.until(() => this.ended, ms, 'the server to close');
  }

  destroy(): void {
    this.sock.destroy();
  }
}

export interface Resp {
  status: number;
  reason: string;
  /** lower-cased names */
  headers: [string, string][];
  body: Buffer;
}

export const hdr = (r: Resp, name: string): string[] => r.headers.filter(([k]) => k === name).map(([, v]) => v);

/** Decodes a chunked body at `p` (independently of http1.ts); null while incomplete. */
function dechunk(buf: Buffer, p: number): { body: Buffer; end: number } | null {
  const parts: Buffer[] = [];
  for (;;) {
    const eol = buf.indexOf('\r\n', p);
    if (eol === -1) return null;
    const size = parseInt(buf.toString('latin1', p, eol).split(';')[0]!, 16);
    if (Number.isNaN(size)) throw new Error(`bad chunk size line ${JSON.stringify(buf.toString('latin1', p, eol))}`);
    p = eol + 2;
    if (size === 0) {
      for (;;) {
        const e = buf.indexOf('\r\n', p);
        if (e === -1) return null;
        const empty = e === p;
        p = e + 2;
        if (empty) return { body: Buffer.concat(parts), end: p };
      }
    }
    if (buf.length < p + size + 2) return null;
    parts.push(buf.subarray(p, p + size));
    if (buf.toString('latin1', p + size, p + size + 2) !== '\r\n') throw new Error('chunk data without CRLF');
    p += size + 2;
  }
}

/** Parses the complete responses in `buf`, interim ones included. */
export function parseResponses(buf: Buffer, o: { methods?: string[]; eof?: boolean } = {}): Resp[] {
  const out: Resp[] = [];
  let off = 0;
  let req = 0;
  while (off < buf.length) {
    const he = buf.indexOf(CRLFCRLF, off);
    if (he === -1) break;
    const lines = buf.toString('latin1', off, he).split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3}) ?(.*)$/.exec(lines[0]!);
    if (m === null) throw new Error(`not a status line: ${JSON.stringify(lines[0])}`);
    const headers = lines.slice(1).map((l): [string, string] => {
      const i = l.indexOf(':');
      return [l.slice(0, i).toLowerCase(), l.slice(i + 1).trim()];
    });
    const status = Number(m[1]);
    const r: Resp = { status, reason: m[2]!, headers, body: Buffer.alloc(0) };
    let p = he + 4;
    if (status >= 200) {
      const method = o.methods?.[req] ?? 'GET';
      req++;
      const te = hdr(r, 'transfer-encoding');
      const cl = hdr(r, 'content-length');
      if (method === 'HEAD' || status === 204 || status === 304) {
        // no body
      } else if (te.length > 0) {
        const d = dechunk(buf, p);
        if (d === null) break;
        r.body = d.body;
        p = d.end;
      } else if (cl.length > 0) {
        const n = Number(cl[0]);
        if (buf.length < p + n) break;
        r.body = buf.subarray(p, p + n);
        p += n;
      } else {
        if (!o.eof) break;
        r.body = buf.subarray(p);
        p = buf.length;
      }
    }
    out.push(r);
    off = p;
  }
  return out;
}

export const errorCode = (r: Resp): string =>
  (JSON.parse(r.body.toString('utf8')) as { error: { code: string } }).error.code;
