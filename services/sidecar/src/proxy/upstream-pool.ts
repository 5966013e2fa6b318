// Keep-alive connections to the upstream origins (see UpstreamPool).
import { connect as netConnect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { connect as tlsConnect } from 'node:tls';
import type { Logger } from '@shadowplane/telemetry';
import type { Exchange } from './exchange.js';

/** ms an idle upstream connection is kept for reuse (undici's default; an upstream Keep-Alive hint lowers it). */
export const UPSTREAM_IDLE_MS = 4_000;

/**
 * Keep-alive HTTP/1.1 connections to one upstream origin (TCP, or TLS for https), at most
 * `connections` at once; exchanges wait in FIFO order beyond that. Idle connections are reused
 * newest first and closed after {@link UPSTREAM_IDLE_MS} (or the upstream's Keep-Alive hint).
 */
export class UpstreamPool {
  readonly hostHeader: string;
  readonly hostname: string;
  readonly port: number;
  readonly tls: boolean;
  private readonly idle: UpstreamConn[] = [];
  private readonly all = new Set<UpstreamConn>();
  private readonly waiters: Exchange[] = [];
  private total = 0;
  private closed = false;

  constructor(
    url: URL,
    readonly opts: { connections: number; connectTimeoutMs: number; headersTimeoutMs: number; bodyTimeoutMs: number },
    readonly log: Logger,
  ) {
    this.hostHeader = url.host;
    this.hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    this.tls = url.protocol === 'https:';
    this.port = url.port === '' ? (this.tls ? 443 : 80) : Number(url.port);
  }

  /** Gives `ex` a connection now or when one frees up; `fresh` skips idle ones (a replay). */
  acquire(ex: Exchange, fresh = false): void {
    if (!fresh) {
      // newest first; one past its idle deadline may already be closed by the upstream
      const now = performance.now();
      for (let c = this.idle.pop(); c !== undefined; c = this.idle.pop()) {
        if (c.deadline > now) {
          ex.attach(c);
          return;
        }
        c.sock.destroy();
      }
    }
    if (this.total < this.opts.connections && !this.closed) {
      this.total++;
      const c = new UpstreamConn(this);
      this.all.add(c);
      ex.attach(c);
      return;
    }
    ex.waitDeadline = performance.now() + this.opts.connectTimeoutMs;
    this.waiters.push(ex);
  }

  /** Forgets a waiting exchange (its client left). */
  cancel(ex: Exchange): void {
    const i = this.waiters.indexOf(ex);
    if (i !== -1) this.waiters.splice(i, 1);
  }

  /** Returns a connection whose exchange completed cleanly. */
  release(c: UpstreamConn): void {
    const w = this.waiters.shift();
    if (w !== undefined) {
      c.reused = true;
      w.attach(c);
      return;
    }
    if (this.closed) {
      c.sock.destroy();
      return;
    }
    c.reused = true;
    c.deadline = performance.now() + c.idleMs;
    this.idle.push(c);
  }

  /** A connection closed: forget it, and open a new one for a waiter if any. */
  discard(c: UpstreamConn): void {
    this.total--;
    this.all.delete(c);
    const i = this.idle.indexOf(c);
    if (i !== -1) this.idle.splice(i, 1);
    const w = this.waiters.shift();
    if (w !== undefined) this.acquire(w, true);
  }

  /** Stops reuse: idle connections close now, busy ones when their exchange ends. */
  close(): void {
    this.closed = true;
    for (const c of this.idle.splice(0)) c.sock.destroy();
  }

  /** Times out the connections whose deadline passed. */
  sweep(now: number): void {
    for (const c of this.all) {
      if (c.deadline >= now) continue;
      c.deadline = Infinity;
      if (c.ex !== null) c.ex.onUpstreamTimeout();
      else c.sock.destroy();
    }
    // an exchange waiting for a free connection gets the connect timeout, then a 504
    while (this.waiters.length > 0 && this.waiters[0]!.waitDeadline < now) this.waiters.shift()!.onUpstreamTimeout();
  }
}

/** One upstream connection; routes its socket events to the exchange it serves. */
export class UpstreamConn {
  readonly sock: Socket;
  ex: Exchange | null = null;
  reused = false;
  connected = false;
  idleMs = UPSTREAM_IDLE_MS;
  /** performance.now() ms after which the sweep times this connection out (Infinity: never) */
  deadline: number;
  error: Error | null = null;

  constructor(readonly pool: UpstreamPool) {
    const o = pool.opts;
    if (pool.tls) {
      this.sock = tlsConnect({
        host: pool.hostname,
        port: pool.port,
        servername: isIp(pool.hostname) ? '' : pool.hostname,
        ALPNProtocols: ['http/1.1'],
      });
      this.sock.once('secureConnect', () => this.onConnect());
    } else {
      this.sock = netConnect({ host: pool.hostname, port: pool.port, noDelay: true });
      this.sock.once('connect', () => this.onConnect());
    }
    this.deadline = performance.now() + o.connectTimeoutMs;
    this.sock.on('data', (d: Buffer) => {
      if (this.ex === null) {
        this.sock.destroy(); // bytes nobody asked for: the connection is unusable
        return;
      }
      try {
        this.ex.onUpstreamData(d);
      } catch (err) {
        // a defect here must cost one exchange (502 or a cut, via close), never the process
        pool.log.error({ err }, 'proxy error on an upstream connection; dropped it');
        this.sock.destroy();
      }
    });
    this.sock.on('end', () => this.ex?.onUpstreamEnd());
    this.sock.on('error', (e: Error) => (this.error = e));
    this.sock.on('drain', () => this.ex?.onUpstreamDrain());
    this.sock.once('close', () => {
      const ex = this.ex;
      this.ex = null;
      this.pool.discard(this);
      ex?.onUpstreamClose(this);
    });
  }

  private onConnect(): void {
    this.connected = true;
    if (this.pool.tls) this.sock.setNoDelay(true);
    if (this.ex !== null) this.deadline = performance.now() + this.pool.opts.headersTimeoutMs;
  }
}

let lastHint = '';
let lastHintIdleMs = UPSTREAM_IDLE_MS;

/**
 * ms an idle upstream connection may be kept, from the upstream's `Keep-Alive: timeout=N`
 * (N − 1 s, at most {@link UPSTREAM_IDLE_MS}). Upstreams repeat the same value on every response,
 * so the last one is remembered.
 */
export function idleFromHint(hint: string): number {
  if (hint === lastHint) return lastHintIdleMs;
  const m = /timeout\s*=\s*(\d+)/i.exec(hint);
  lastHint = hint;
  lastHintIdleMs = m ? Math.max(0, Math.min(UPSTREAM_IDLE_MS, Number(m[1]) * 1000 - 1000)) : UPSTREAM_IDLE_MS;
  return lastHintIdleMs;
}

function isIp(h: string): boolean {
  return /^[\d.]+$/.test(h) || h.includes(':');
}
