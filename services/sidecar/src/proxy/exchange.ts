// One proxied request/response (see Exchange); the byte relay it extends is in exchange-relay.ts.
import { performance } from 'node:perf_hooks';
import type { HttpSyntaxError } from '../http1.js';
import type { RequestOutcome } from '../metrics.js';
import { ExchangeRelay } from './exchange-relay.js';
import type { UpstreamConn } from './upstream-pool.js';
import { Framing, IDEMPOTENT, writeJoined } from './wire.js';

export type { CompiledRoute } from './exchange-relay.js';

/**
 * One proxied request/response. Request side: head written upstream with the body as it
 * arrives (Content-Length or chunked, relayed as received). Response side: head parsed,
 * filtered and written to the client with the body as it arrives.
 *
 * This class is its lifecycle: dispatch to the pool, the upstream connection attached, the one
 * replay on a stale reused connection, and every way it ends (clean, 4xx, 502/504, a cut). The
 * bytes themselves are relayed by the base class, {@link ExchangeRelay}.
 */
export class Exchange extends ExchangeRelay {
  /** No route matched: answer 404 (closing when a body would follow, as it is not read). */
  noRoute(): void {
    this.finished = true;
    const close = this.reqFraming !== Framing.None || !this.keepAlive;
    this.client.answer(404, 'not_found', 'no upstream route matches this request', 'not_sampled', close);
    this.proxy.done('no_route');
  }

  /**
   * Starts the exchange with the bytes after the head (`b[off…]`). Returns the index just past
   * the request's end within `b`, or -1 when its body continues in later reads.
   */
  start(b: Buffer, off: number): number {
    const end = this.feed(b, off);
    if (this.finished) return end; // refused while reading the first body bytes
    this.route!.pool.acquire(this);
    this.dispatchedAt = performance.now();
    return end;
  }

  /** The pool handed over a connection: write the head and what the body has so far. */
  attach(c: UpstreamConn): void {
    if (this.finished) {
      // the client left while this exchange waited: give the connection back untouched
      c.pool.release(c);
      return;
    }
    this.conn = c;
    c.ex = this;
    const parts = this.pending;
    this.pending = null;
    this.pendingBytes = 0;
    if (c.connected) c.deadline = performance.now() + c.pool.opts.headersTimeoutMs;
    const ok = writeJoined(c.sock, this.upstreamHead, parts !== null && parts.length > 0 ? parts : null);
    if (this.clientPausedForPending) {
      this.clientPausedForPending = false;
      if (ok) this.client.sock.resume();
      else this.clientPausedForUpstream = true;
    } else if (!ok && !this.requestDone && !this.clientPausedForUpstream) {
      this.clientPausedForUpstream = true;
      this.client.sock.pause();
    }
  }

  /** The response ended cleanly. */
  protected override complete(): void {
    if (this.finished) return;
    this.finished = true;
    this.resState = 2;
    const c = this.conn;
    this.conn = null;
    if (c !== null) {
      c.ex = null;
      if (this.upstreamKeepAlive && this.requestDone && c.sock.readable) {
        c.sock.resume();
        c.pool.release(c);
      } else c.sock.destroy();
    }
    this.client.exchangeDone(this.closeAfter || !this.requestDone);
    this.proxy.finish(this, 'ok');
  }

  /** The request body's chunked framing broke: 400 if nothing was answered yet, else a cut. */
  protected override requestMalformed(err: HttpSyntaxError): void {
    this.dropUpstream();
    if (this.resState === 0) {
      this.finished = true;
      this.client.answer(400, err.code, err.message, this.echo, true);
      this.client.exchangeDone(true);
      this.proxy.finish(this, 'bad_request');
    } else this.cutClient('bad_request');
  }

  onUpstreamEnd(): void {
    if (this.resState === 1 && this.body.framing === Framing.Close) {
      this.resState = 2;
      this.upstreamKeepAlive = false;
      this.complete();
    }
  }

  onUpstreamTimeout(): void {
    if (this.finished) return;
    if (this.resState === 0) this.fail('upstream_timeout');
    else this.cutClient('upstream_cut');
  }

  onUpstreamClose(c: UpstreamConn): void {
    if (this.finished || this.conn !== c) return;
    this.conn = null;
    if (this.resState === 1 && this.body.framing === Framing.Close) {
      this.resState = 2;
      this.complete();
      return;
    }
    if (this.resState !== 0) {
      this.cutClient('upstream_cut');
      return;
    }
    // a reused keep-alive connection the upstream had closed: replay once on a fresh one, for
    // idempotent methods only — a POST may have been received and acted on (billed) before the
    // close, and a proxy must not retry it (RFC 9110 §9.2.2)
    if (
      c.reused &&
      !this.retried &&
      this.replay !== null &&
      this.requestDone &&
      this.resBuf === null &&
      IDEMPOTENT.has(this.method)
    ) {
      this.retried = true;
      this.pending = this.replay;
      this.replay = null;
      this.replayBytes = 0;
      this.route!.pool.acquire(this, true);
      return;
    }
    const code = (c.error as { code?: string } | null)?.code;
    this.fail(code === 'ETIMEDOUT' ? 'upstream_timeout' : 'upstream_error');
  }

  protected override upstreamInvalid(message: string): void {
    this.dropUpstream();
    if (this.finished) return;
    if (this.resState !== 0) {
      this.cutClient('upstream_cut');
      return;
    }
    this.finished = true;
    this.proxy.d.log.warn({ path: this.upstreamPath, reason: message }, 'invalid upstream response');
    this.client.answer(
      502,
      'upstream_invalid_response',
      'The upstream sent a response that is not valid HTTP/1.1.',
      this.echo,
      !this.requestDone || !this.keepAlive,
    );
    this.client.exchangeDone(!this.requestDone || !this.keepAlive);
    this.proxy.finish(this, 'upstream_error');
  }

  /** Fails before any response byte reached the client: 502/504 with a JSON body. */
  private fail(outcome: 'upstream_error' | 'upstream_timeout'): void {
    this.dropUpstream();
    if (this.finished) return;
    this.finished = true;
    const timeout = outcome === 'upstream_timeout';
    const close = !this.requestDone || !this.keepAlive;
    this.client.answer(
      timeout ? 504 : 502,
      timeout ? 'upstream_timeout' : 'upstream_unavailable',
      timeout
        ? 'The upstream did not answer in time.'
        : 'The upstream could not be reached or failed before responding.',
      this.echo,
      close,
    );
    this.client.exchangeDone(close);
    this.proxy.finish(this, outcome);
  }

  /** Fails after the response head went out: the client must see the same cut, never a clean end. */
  private cutClient(outcome: RequestOutcome): void {
    this.dropUpstream();
    if (this.finished) return;
    this.finished = true;
    this.client.sock.destroy();
    this.proxy.finish(this, outcome);
  }

  /**
   * The client's body stopped arriving in time (body idle timeout or request deadline): the
   * upstream connection (or the place in its queue) is given up at once, so a trickling client
   * cannot hold an upstream slot; 408 if nothing was answered yet, else the client is cut.
   */
  onClientTimeout(): void {
    if (this.finished) return;
    this.dropUpstream();
    this.route?.pool.cancel(this);
    if (this.resState === 0) {
      this.finished = true;
      this.client.answer(408, 'request_timeout', 'the request body was not received in time', this.echo, true);
      this.client.exchangeDone(true);
      this.proxy.finish(this, 'client_timeout');
    } else this.cutClient('client_timeout');
  }

  /** The client connection closed. */
  onClientGone(): void {
    if (this.finished) return;
    this.finished = true;
    this.dropUpstream();
    this.route?.pool.cancel(this);
    this.proxy.finish(this, 'client_aborted');
  }

  private dropUpstream(): void {
    const c = this.conn;
    this.conn = null;
    if (c !== null) {
      c.ex = null;
      c.sock.destroy();
    }
  }
}
