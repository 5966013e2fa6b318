// The byte relay of one proxied request/response (see ExchangeRelay); its lifecycle is Exchange.
import { performance } from 'node:perf_hooks';
import { ChunkedDecoder, type HttpSyntaxError } from '../http1.js';
import { ResponseBody } from './response-body.js';
import type { SidecarProxy } from '../proxy.js';
import type { CaptureTee } from './capture-tee.js';
import type { ClientConn } from './client-conn.js';
import { idleFromHint, type UpstreamConn, type UpstreamPool } from './upstream-pool.js';
import { CRLFCRLF, EMPTY, Framing, IDEMPOTENT, MAX_RESPONSE_HEAD, writeJoined } from './wire.js';

/** A configured route, compiled: where its requests go and how their target is rewritten. */
export interface CompiledRoute {
  pathPrefix: string;
  host: string | null;
  basePath: string;
  stripPrefix: boolean;
  preserveHost: boolean;
  placement: 'ingress' | 'egress';
  pool: UpstreamPool;
}

/** A request that fits here is kept until its response starts, to replay it once on a fresh connection when a reused one turns out stale (bytes). */
const REPLAY_MAX_BYTES = 64 * 1024;
/** Request bytes buffered while waiting for an upstream connection before the client is paused. */
const PENDING_MAX_BYTES = 1024 * 1024;

/**
 * The relay half of `Exchange` (exchange.ts), as its base class so that an exchange stays one
 * object: request body bytes to the upstream (queued until a connection is attached, kept for a replay),
 * the response head read and prepared for the client, the response body relayed, and the
 * back-pressure between the two sockets. How the exchange is dispatched, retried and ended
 * (cleanly or not) is `Exchange`'s; the relay calls those ends through the abstract methods.
 */
export abstract class ExchangeRelay {
  route: CompiledRoute | null = null;
  /** performance.now() ms until which it may wait in the pool's queue for a connection */
  waitDeadline = Infinity;
  upstreamPath = '';
  upstreamHead: Buffer = EMPTY;
  capture: CaptureTee | null = null;
  echo = 'not_sampled';
  requestDone = false;
  private reqRemaining: number;
  private reqDecoder: ChunkedDecoder | null = null;
  protected pending: Buffer[] | null = [];
  protected pendingBytes = 0;
  protected replay: Buffer[] | null;
  protected replayBytes = 0;
  protected retried = false;
  protected conn: UpstreamConn | null = null;
  protected clientPausedForUpstream = false;
  protected clientPausedForPending = false;
  protected dispatchedAt = 0;
  // response side
  protected resState: 0 | 1 | 2 = 0; // head, body, done
  protected resBuf: Buffer | null = null;
  protected readonly body = new ResponseBody();
  protected closeAfter = false;
  protected upstreamKeepAlive = true;
  protected finished = false;
  private readonly onReqData: ((b: Buffer) => void) | null = null;

  constructor(
    protected readonly proxy: SidecarProxy,
    protected readonly client: ClientConn,
    readonly method: string,
    private readonly minor: 0 | 1,
    protected readonly keepAlive: boolean,
    protected readonly reqFraming: Framing,
    contentLength: number,
    private readonly t0: number,
  ) {
    this.reqRemaining = contentLength > 0 ? contentLength : 0;
    this.replay = IDEMPOTENT.has(method) ? [] : null;
    if (reqFraming === Framing.Chunked) {
      this.reqDecoder = new ChunkedDecoder();
      this.onReqData = (b) => this.capture?.pushRequest(b);
    }
    if (reqFraming === Framing.None) this.requestDone = true;
  }

  /** The response ended cleanly. */
  protected abstract complete(): void;
  /** The request body's chunked framing broke. */
  protected abstract requestMalformed(err: HttpSyntaxError): void;
  /** The upstream's response is not valid HTTP/1.1. */
  protected abstract upstreamInvalid(message: string): void;

  /**
   * Relays request body bytes `b[off…]` upstream (queued until a connection is attached).
   * Returns the index past the request's end, or -1 when more is to come.
   */
  feed(b: Buffer, off: number): number {
    if (this.finished) return -1;
    let stop: number;
    let end: number;
    if (this.reqFraming === Framing.Length) {
      const take = Math.min(this.reqRemaining, b.length - off);
      stop = off + take;
      this.reqRemaining -= take;
      if (take > 0 && this.capture !== null) this.capture.pushRequest(take === b.length ? b : b.subarray(off, stop));
      end = this.reqRemaining === 0 ? stop : -1;
    } else if (this.reqFraming === Framing.Chunked) {
      try {
        end = this.reqDecoder!.push(b, off, this.capture !== null ? this.onReqData : null);
      } catch (err) {
        this.requestMalformed(err as HttpSyntaxError);
        return -1;
      }
      stop = end === -1 ? b.length : end;
    } else {
      return off;
    }
    if (end !== -1) {
      this.requestDone = true;
      if (this.capture !== null) this.capture.requestComplete = true;
    }
    if (stop > off) this.sendUp(off === 0 && stop === b.length ? b : b.subarray(off, stop));
    return end;
  }

  private sendUp(part: Buffer): void {
    if (this.replay !== null) {
      this.replayBytes += part.length;
      if (this.replayBytes <= REPLAY_MAX_BYTES) this.replay.push(part);
      else this.replay = null;
    }
    const c = this.conn;
    if (c === null) {
      this.pending!.push(part);
      this.pendingBytes += part.length;
      if (this.pendingBytes > PENDING_MAX_BYTES && !this.clientPausedForPending) {
        this.clientPausedForPending = true;
        this.client.sock.pause();
      }
      return;
    }
    // an upload in progress keeps the headers timeout from running out
    if (this.resState === 0) c.deadline = performance.now() + c.pool.opts.headersTimeoutMs;
    if (!c.sock.write(part) && !this.clientPausedForUpstream) {
      this.clientPausedForUpstream = true;
      this.client.sock.pause();
    }
  }
  onUpstreamDrain(): void {
    if (this.clientPausedForUpstream) {
      this.clientPausedForUpstream = false;
      this.client.sock.resume();
    }
  }

  onClientDrain(): void {
    const c = this.conn;
    if (c === null || !c.sock.isPaused()) return;
    // behind relayed 1xx responses the final head is still due by the headers deadline
    if (this.resState !== 0) c.deadline = performance.now() + c.pool.opts.bodyTimeoutMs;
    c.sock.resume();
  }

  /**
   * The client cannot take more: stop reading the upstream. The body deadline keeps running, so a
   * client that stops reading altogether is cut after the body timeout instead of pinning an
   * upstream connection forever; each drain (the client read) moves the deadline on.
   */
  private pauseUpstream(): void {
    this.conn?.sock.pause();
  }

  onUpstreamData(d: Buffer): void {
    if (this.resState === 2) {
      // bytes after the response end: the connection cannot be trusted again
      this.upstreamKeepAlive = false;
      return;
    }
    let off = 0;
    let b = d;
    if (this.resState === 0) {
      if (this.resBuf !== null) {
        b = Buffer.concat([this.resBuf, d]);
        this.resBuf = null;
      }
      for (;;) {
        const i = b.indexOf(CRLFCRLF, off);
        if (i === -1 ? b.length - off > MAX_RESPONSE_HEAD : i - off > MAX_RESPONSE_HEAD)
          return this.upstreamInvalid('the upstream response head is larger than 64 KiB');
        // not HTTP at all: no need to wait for a blank line that may never come
        if (
          b.length - off >= 5 &&
          (b[off] !== 0x48 || b[off + 1] !== 0x54 || b[off + 2] !== 0x54 || b[off + 3] !== 0x50 || b[off + 4] !== 0x2f)
        )
          return this.upstreamInvalid('the upstream did not answer with HTTP');
        if (i === -1) {
          this.resBuf = off === 0 ? b : b.subarray(off);
          return;
        }
        const tHead = performance.now();
        let more: boolean;
        try {
          more = this.responseHead(b, off, i + 2);
        } catch (err) {
          return this.upstreamInvalid((err as Error).message);
        }
        off = i + 4;
        if (more) continue; // an interim 1xx response; the final one follows
        this.replay = null;
        this.resState = 1;
        let body: Buffer[] | null;
        try {
          body = this.takeBody(b, off);
        } catch (err) {
          // broken chunked framing before anything reached the client: still a clean 502
          this.resState = 0;
          return this.upstreamInvalid((err as Error).message);
        }
        const ok = writeJoined(this.client.sock, this.clientHead, body);
        this.clientHead = null;
        this.proxy.observeAdded((this.dispatchedAt - this.t0 + (performance.now() - tHead)) / 1000);
        if (this.responseEnded) this.complete();
        else if (!ok) this.pauseUpstream();
        return;
      }
    }
    let body: Buffer[] | null;
    try {
      body = this.takeBody(b, off);
    } catch (err) {
      return this.upstreamInvalid((err as Error).message);
    }
    if (body !== null) {
      let ok = true;
      for (const p of body) ok = this.client.sock.write(p);
      if (!ok && !this.responseEnded) this.pauseUpstream();
      else if (this.conn !== null) this.conn.deadline = performance.now() + this.conn.pool.opts.bodyTimeoutMs;
    }
    if (this.responseEnded) this.complete();
  }

  private clientHead: Buffer | null = null;

  /** True once the response body's framing says it ended (takeBody moves resState there). */
  private get responseEnded(): boolean {
    return this.resState === 2;
  }

  /**
   * Reads a response head in `b[off…end)` (status line and field lines, each ending with CRLF)
   * and prepares the head for the client; returns true for an interim (1xx) response to skip.
   */
  private responseHead(b: Buffer, off: number, end: number): boolean {
    const reader = this.proxy.responseHeads;
    const status = reader.scan(b, off, end);
    if (status < 200) {
      // relayed without its hop-by-hop fields, as a proxy must (RFC 9110 §15.2) — except `100
      // Continue`, which the sidecar answers itself when a client expects it (the expectation is
      // not forwarded, so an upstream 100 was not asked for by the client), and any 1xx to an
      // HTTP/1.0 client, which knows none (RFC 9110 §15.2)
      if (status === 100 || this.minor === 0) return true;
      const interim = reader.interimHead();
      if (!interim.reusable) this.upstreamKeepAlive = false;
      // a client that does not read holds the upstream back, as for a body
      if (!this.client.sock.write(interim.head)) this.pauseUpstream();
      return true;
    }
    const h = reader.readFinal(this.method);
    if (h.keepAliveHint !== null && this.conn !== null) this.conn.idleMs = idleFromHint(h.keepAliveHint);
    if (!h.reusable) this.upstreamKeepAlive = false;
    const framing = h.framing;

    const cap = this.capture;
    let echo = this.echo;
    if (cap !== null && !cap.active) echo = `skipped:${cap.abandonedFor ?? 'too_large'}`;
    let onData: ((b: Buffer) => void) | null = null;
    if (cap !== null && cap.active) {
      cap.startResponse(status, reader.relayedPairs(h));
      onData = (x) => cap.pushResponse(x);
    }
    // a request body still arriving when the answer starts is not read to its end: say close
    this.closeAfter = !this.keepAlive || framing === Framing.Close || this.proxy.isDraining || !this.requestDone;
    const dechunk = framing === Framing.Chunked && this.minor === 0;
    if (dechunk) this.closeAfter = true;
    this.body.start(framing, h.contentLength, dechunk, onData);
    this.clientHead = reader.clientHead(h, echo, this.closeAfter, dechunk, this.proxy.keepAliveLine);
    if (this.conn !== null)
      this.conn.deadline = framing === Framing.None ? Infinity : performance.now() + this.conn.pool.opts.bodyTimeoutMs;
    return false;
  }

  /** Takes the response body bytes in `b[off…]` per the framing; sets resState 2 at the end. */
  private takeBody(b: Buffer, off: number): Buffer[] | null {
    const body = this.body;
    const parts = body.take(b, off);
    if (body.ended) {
      this.resState = 2;
      if (body.overrun) this.upstreamKeepAlive = false;
    }
    return parts;
  }
}
