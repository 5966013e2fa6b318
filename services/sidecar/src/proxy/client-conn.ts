// One client connection of the proxy (see ClientConn).
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { SidecarProxy } from '../proxy.js';
import type { Exchange } from './exchange.js';
import { CAPTURE_HEADER, CRLFCRLF, MAX_REQUEST_HEAD } from './wire.js';

/**
 * One client connection: parses request heads, runs one exchange at a time (pipelined requests
 * wait their turn, bytes kept), applies the keep-alive and head timeouts.
 */
export class ClientConn {
  /** performance.now() ms after which the sweep times this connection out (Infinity: never) */
  deadline: number;
  private buf: Buffer | null = null;
  private ex: Exchange | null = null;
  private headStartedAt = 0;
  /** performance.now() ms by which the request in progress must have arrived whole (Infinity: none in progress) */
  private requestDeadline = Infinity;
  /** true while the next pipelined request waits for the client to read what was answered */
  private awaitingRead = false;
  private ended = false;
  private closing = false;
  private stashPaused = false;

  constructor(
    private readonly proxy: SidecarProxy,
    readonly sock: Socket,
  ) {
    sock.on('data', (d: Buffer) => {
      try {
        this.onData(d);
      } catch (err) {
        // a defect here must cost one connection, never the process
        proxy.d.log.error({ err }, 'proxy error on a client connection; dropped it');
        sock.destroy();
      }
    });
    sock.on('end', () => this.onEnd());
    sock.on('error', () => undefined);
    sock.on('close', () => this.ex?.onClientGone());
    sock.on('drain', () => {
      if (this.ex !== null) this.ex.onClientDrain();
      else if (this.awaitingRead) this.readOn();
    });
    this.deadline = performance.now() + proxy.keepAliveTimeoutMs;
  }

  /** Writes to the client; false when its buffer is full (wait for drain). */
  write(b: Buffer): boolean {
    return this.sock.write(b);
  }

  /**
   * Drain: an idle connection (no request in flight or half-read) closes at `at` (performance.now
   * ms) unless a request arrives first; at or before now, it closes at once.
   */
  closeWhenIdle(at: number): void {
    if (this.ex !== null || this.buf !== null) return;
    if (at <= performance.now()) this.sock.destroy();
    else this.deadline = Math.min(this.deadline, at);
  }

  private onData(d: Buffer): void {
    const ex = this.ex;
    if (ex !== null) {
      let rest = d;
      if (!ex.requestDone) {
        const end = ex.feed(d, 0);
        this.bodyDeadline(ex);
        if (end === -1 || end === d.length) return;
        rest = d.subarray(end);
      }
      this.stash(rest);
      return;
    }
    if (this.closing) return;
    this.parse(d);
  }

  /** Keeps bytes that arrived during an exchange (a pipelined request), bounded. */
  private stash(b: Buffer): void {
    this.buf = this.buf === null ? b : Buffer.concat([this.buf, b]);
    if (this.buf.length > MAX_REQUEST_HEAD && !this.stashPaused) {
      this.stashPaused = true;
      this.sock.pause();
    }
  }

  private parse(d: Buffer | null): void {
    let b = this.buf === null ? d : d === null ? this.buf : Buffer.concat([this.buf, d]);
    this.buf = null;
    if (b === null) return;
    let off = 0;
    for (;;) {
      // RFC 9112 §2.2: empty lines before a request line are ignored
      while (off + 1 < b.length && b[off] === 0x0d && b[off + 1] === 0x0a) off += 2;
      if (off >= b.length) return;
      const i = b.indexOf(CRLFCRLF, off);
      if (i === -1) {
        if (b.length - off > MAX_REQUEST_HEAD) {
          this.answer(431, 'headers_too_large', 'the request head is larger than 16 KiB', 'not_sampled', true);
          return;
        }
        this.buf = off === 0 ? b : b.subarray(off);
        if (this.headStartedAt === 0) {
          this.headStartedAt = performance.now();
          this.deadline = this.headStartedAt + this.proxy.d.config.client.headerTimeoutMs;
        }
        return;
      }
      if (i - off > MAX_REQUEST_HEAD) {
        this.answer(431, 'headers_too_large', 'the request head is larger than 16 KiB', 'not_sampled', true);
        return;
      }
      const t0 = performance.now();
      this.requestDeadline =
        (this.headStartedAt === 0 ? t0 : this.headStartedAt) + this.proxy.d.config.client.requestTimeoutMs;
      this.headStartedAt = 0;
      const ex = this.proxy.begin(this, b, off, i + 2, t0);
      if (ex === null) {
        if (this.closing) return;
        off = i + 4;
        continue;
      }
      this.ex = ex;
      const end = ex.start(b, i + 4);
      this.bodyDeadline(ex);
      if (end === -1 || end === b.length) return;
      if (this.ex !== null) {
        this.stash(b.subarray(end));
        return;
      }
      if (this.closing) return;
      off = end;
    }
  }

  /**
   * While a request body is still arriving: the next read is due within the client body timeout,
   * and the whole request by the request deadline. Once it is complete the upstream's timeouts
   * govern the exchange (Infinity here).
   */
  private bodyDeadline(ex: Exchange): void {
    if (this.ex !== ex) return;
    this.deadline = ex.requestDone
      ? Infinity
      : Math.min(performance.now() + this.proxy.d.config.client.bodyTimeoutMs, this.requestDeadline);
  }

  /** The client read what waited: read its pipelined requests again. */
  private readOn(): void {
    this.awaitingRead = false;
    this.deadline = performance.now() + this.proxy.keepAliveTimeoutMs;
    this.stashPaused = false;
    if (this.sock.isPaused()) this.sock.resume();
    if (this.buf !== null) this.parse(null);
  }

  /** An exchange finished its response; `close` says the connection must end now. */
  exchangeDone(close: boolean): void {
    this.ex = null;
    if (close || this.ended || this.proxy.isDraining) {
      this.closing = true;
      this.buf = null;
      this.sock.end();
      // a client that never closes its side must not hold the socket open
      this.deadline = performance.now() + 5_000;
      // what it still sends (an upload the answer cut short) is read and dropped, so a client
      // whose close waits behind that upload can finish cleanly instead of being reset
      if (this.sock.isPaused()) this.sock.resume();
      return;
    }
    this.requestDeadline = Infinity;
    // a client that pipelines requests and does not read the answers: stop reading its requests
    // until it reads (nginx does the same), so unread responses cannot pile up in memory; the
    // body timeout bounds the wait (nginx send_timeout)
    if (this.sock.writableLength > this.proxy.d.config.client.pipelineMaxUnreadBytes) {
      this.awaitingRead = true;
      this.sock.pause();
      this.deadline = performance.now() + this.proxy.d.config.client.bodyTimeoutMs;
      return;
    }
    // reading may have been paused for this exchange (upstream backpressure, a long stash): the
    // next request on the connection must be read whatever ended the exchange
    this.readOn();
  }

  /** Answers a request itself with a JSON error body; `close` ends the connection after it. */
  answer(status: number, code: string, message: string, echo: string, close: boolean): void {
    // the body as UTF-8 bytes and its length in those bytes; the head is ASCII
    const body = Buffer.from(JSON.stringify({ error: { code, message } }), 'utf8');
    const head =
      `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\ncontent-type: application/json\r\ncontent-length: ${body.byteLength}\r\n` +
      `${CAPTURE_HEADER}: ${echo}\r\n${close ? 'connection: close\r\n\r\n' : this.proxy.keepAliveLine}`;
    this.sock.write(Buffer.concat([Buffer.from(head, 'latin1'), body]));
    if (close) {
      this.closing = true;
      this.buf = null;
      this.sock.end();
      // a client that keeps sending after the answer must not hold the socket open
      this.deadline = performance.now() + 5_000;
    }
  }

  private onEnd(): void {
    this.ended = true;
    // a client that half-closes during an exchange has gone (as Node's http server treats it):
    // its upstream call is aborted rather than left running for nobody
    if (this.ex !== null) this.sock.destroy();
    else this.sock.end();
  }

  /**
   * The deadline passed: an idle keep-alive connection closes, a half-sent head gets 408, a
   * request body that stopped arriving (or is past the request deadline) ends its exchange — 408,
   * or a cut once the response started — and frees its upstream connection; a client that left
   * answers unread past the body timeout is closed.
   */
  onTimeout(): void {
    this.deadline = Infinity;
    const ex = this.ex;
    if (ex !== null) {
      if (ex.requestDone) return;
      const now = performance.now();
      // reading paused by the proxy itself (the upstream is slow to take the body): not the client's idleness
      if (this.sock.isPaused() && now < this.requestDeadline) {
        this.deadline = Math.min(now + this.proxy.d.config.client.bodyTimeoutMs, this.requestDeadline);
        return;
      }
      ex.onClientTimeout();
      return;
    }
    if (this.buf !== null && this.headStartedAt !== 0) {
      this.answer(408, 'request_timeout', 'the request head was not received in time', 'not_sampled', true);
      return;
    }
    this.sock.destroy();
  }
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  408: 'Request Timeout',
  417: 'Expectation Failed',
  431: 'Request Header Fields Too Large',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  504: 'Gateway Timeout',
};
