import { createServer, type AddressInfo, type Server } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { NatsNames } from '@shadowplane/contracts';
import type { Logger } from '@shadowplane/telemetry';
import type { SidecarConfig } from './config.js';
import type { RouteSpec } from './config-schema.js';
import { HttpSyntaxError } from './http1.js';
import type { CaptureProcessor } from './processor.js';
import type { CapturePublisher } from './publisher.js';
import { skipMarker } from './skip-marker.js';
import { Sampler, type SampleDecision } from './sampling.js';
import type { RequestOutcome, SidecarMetrics } from './metrics.js';
import { handOffCapture } from './proxy/capture-handoff.js';
import { CaptureTee } from './proxy/capture-tee.js';
import { ClientConn } from './proxy/client-conn.js';
import { Exchange, type CompiledRoute } from './proxy/exchange.js';
import { RequestHeadReader } from './proxy/request-head.js';
import { ResponseHeadReader } from './proxy/response-head.js';
import { UPSTREAM_IDLE_MS, UpstreamPool } from './proxy/upstream-pool.js';
import { Framing, copyHead } from './proxy/wire.js';

// The server of the proxy. The rest lives in proxy/: request-head.ts and response-head.ts read
// message heads, hop-by-hop.ts holds the fields never forwarded (one table per direction),
// client-conn.ts runs a client connection, upstream-pool.ts the upstream connections,
// exchange.ts one request/response, capture-tee.ts the tee of a sampled one, capture-handoff.ts
// its way to the capture processor and the publisher.

export { CAPTURE_HEADER } from './proxy/wire.js';

const CONTINUE = Buffer.from('HTTP/1.1 100 Continue\r\n\r\n', 'latin1');
const NOT_SAMPLED: SampleDecision = Object.freeze({ kind: 'not_sampled' });
/** sampling input for a request that carries no header the sampler reads */
const NO_HEADERS: ReadonlyMap<string, string> = new Map();

function ensureSlash(p: string): string {
  return p.startsWith('/') ? p : `/${p}`;
}

/** Dependencies of {@link SidecarProxy}, built by the composition root (main.ts) or a test. */
export interface ProxyDeps {
  config: SidecarConfig;
  metrics: SidecarMetrics;
  log: Logger;
  publisher: CapturePublisher;
  processor: CaptureProcessor;
  names: NatsNames;
  /** random source for sampling (tests) */
  random?: () => number;
}

/**
 * The transparent streaming reverse proxy: HTTP/1.1 on `node:net`, with its own strict message
 * framing (http1.ts) and keep-alive upstream pools. Every request goes to the upstream of the
 * first route whose Host and path prefix match (never anywhere else); method, target, headers
 * (minus hop-by-hop and `x-shadow-*`) and body are forwarded streaming with backpressure, the
 * response streamed back as it arrives (SSE included, never buffered). Bodies are relayed as the
 * bytes that arrived — a chunked body keeps its chunking — so the proxy's work per request is one
 * head parse and one head write each way.
 *
 * Why not undici or node:http: on this hot path their per-request work cost 4–8× the CPU of nginx
 * with `mirror` (loadtests/sidecar-bench.ts); piping bytes through `node:net` costs ~1.2–1.5×.
 * Parsing the heads ourselves is what keeps the sidecar near that floor.
 *
 * Capture never touches the hot path: sampling is decided from the head; a sampled request's body
 * and the decoded response body are kept by reference (bounded: per-request ceilings and a global
 * byte budget), and parsing, redaction, envelope building and publishing happen after the response
 * ended (CaptureProcessor, then the publisher's bounded queue).
 *
 * Answers of its own (body `{error:{code,message}}`, header `x-shadow-capture`): malformed HTTP →
 * 400 `malformed_http`, 431 `headers_too_large`, 501 `not_implemented`, 417 `expectation_failed`
 * (connection closed after); no route → 404 `not_found`; upstream unreachable or reset before its
 * response head → 502 `upstream_unavailable`; an unparseable upstream head → 502
 * `upstream_invalid_response`; connect or headers timeout → 504 `upstream_timeout`. A failure after
 * the response head was sent destroys the client connection so the client sees the same cut; a
 * client abort destroys the upstream connection.
 */
export class SidecarProxy {
  readonly server: Server;
  private readonly routes: CompiledRoute[];
  private readonly pools: UpstreamPool[] = [];
  private readonly clients = new Set<ClientConn>();
  private readonly sampler: Sampler;
  private inflight = 0;
  private draining = false;
  private readonly sweeper: NodeJS.Timeout;
  /** reads request heads (one at a time: prepare is synchronous) */
  private readonly requestHeads: RequestHeadReader;
  /** reads response heads (one at a time: an exchange reads its head synchronously) */
  readonly responseHeads = new ResponseHeadReader();

  constructor(readonly d: ProxyDeps) {
    const c = d.config;
    const pools = new Map<string, UpstreamPool>();
    this.routes = c.routes.map((r: RouteSpec) => {
      const u = new URL(r.upstream);
      let pool = pools.get(u.origin);
      if (!pool) {
        pool = new UpstreamPool(u, c.upstream, d.log);
        pools.set(u.origin, pool);
        this.pools.push(pool);
      }
      return {
        pathPrefix: r.path_prefix,
        host: r.host ? r.host.toLowerCase() : null,
        basePath: u.pathname.replace(/\/+$/, ''),
        stripPrefix: r.strip_prefix,
        preserveHost: r.preserve_host,
        placement: r.placement,
        pool,
      };
    });
    this.keepAliveLine = `keep-alive: timeout=${Math.max(1, Math.floor(c.keepAliveTimeoutMs / 1000))}\r\n\r\n`;
    this.sampler = new Sampler({ ...c.sampling, ...(d.random ? { random: d.random } : {}) });
    this.requestHeads = new RequestHeadReader(
      this.sampler.headerNames,
      [...this.sampler.headerNames].some((h) => !h.startsWith('x-shadow-')),
    );
    // one periodic sweep enforces every timeout (a deadline number per connection) instead of a
    // timer per socket re-armed several times per request; a timeout fires up to one period late
    const shortest = Math.min(
      c.upstream.connectTimeoutMs,
      c.upstream.headersTimeoutMs,
      c.upstream.bodyTimeoutMs,
      c.keepAliveTimeoutMs,
      c.client.headerTimeoutMs,
      c.client.bodyTimeoutMs,
      c.client.requestTimeoutMs,
      UPSTREAM_IDLE_MS,
    );
    this.sweeper = setInterval(() => this.sweep(), Math.max(10, Math.min(1000, Math.floor(shortest / 4))));
    this.sweeper.unref();
    this.server = createServer({ noDelay: true, allowHalfOpen: true }, (sock) => {
      if (this.draining) {
        sock.destroy();
        return;
      }
      const conn = new ClientConn(this, sock);
      this.clients.add(conn);
      sock.once('close', () => this.clients.delete(conn));
    });
  }

  /**
   * Listens on `host:port` (port 0 = ephemeral) with the configured accept backlog and resolves
   * with the base URL.
   */
  async listen(host: string, port: number): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ port, host, backlog: this.d.config.listenBacklog }, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const a = this.server.address() as AddressInfo;
    return `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
  }

  /** True until {@link drain} starts. */
  get accepting(): boolean {
    return !this.draining;
  }

  /** True while draining: every response closes its connection. */
  get isDraining(): boolean {
    return this.draining;
  }

  /** Requests in flight. */
  get inflightCount(): number {
    return this.inflight;
  }

  /**
   * Graceful stop: refuses new connections; waits up to `timeoutMs` for the requests in flight
   * (their responses say `connection: close` and end their connections) and gives each idle
   * keep-alive connection `idleGraceMs` (at most `timeoutMs`) for a request its client may already
   * have sent — closing it at once would reset such a request, which a client cannot tell from a
   * failure; a request arriving in that time is served and its connection closed after it. Then
   * closes every connection left and the upstream pools.
   */
  async drain(timeoutMs: number, idleGraceMs = 0): Promise<void> {
    this.draining = true;
    const closed = new Promise<void>((r) => this.server.close(() => r()));
    const graceEnd = performance.now() + Math.min(idleGraceMs, timeoutMs);
    for (const c of this.clients) c.closeWhenIdle(graceEnd);
    const until = performance.now() + timeoutMs;
    // drains are rare: a short poll is simpler than a wake-up for every way a connection ends
    while ((this.inflight > 0 || this.clients.size > 0) && performance.now() < until) {
      await new Promise((r) => setTimeout(r, Math.max(1, Math.min(20, until - performance.now()))));
      // the periodic sweep may be up to 1 s apart: run it now so the grace ends on time
      if (performance.now() >= graceEnd) this.sweep();
    }
    for (const c of this.clients) c.sock.destroy();
    await closed;
    clearInterval(this.sweeper);
    for (const p of this.pools) p.close();
  }

  /** Fires the timeouts whose deadline passed. */
  private sweep(): void {
    const now = performance.now();
    for (const c of this.clients) if (c.deadline < now) c.onTimeout();
    for (const p of this.pools) p.sweep(now);
  }

  /** Counts a request's outcome. */
  done(outcome: RequestOutcome): void {
    this.d.metrics.request(outcome);
    this.inflight--;
  }

  private route(path: string, host: string): CompiledRoute | undefined {
    for (const r of this.routes) {
      if (r.host !== null && r.host !== host) continue;
      if (!path.startsWith(r.pathPrefix)) continue;
      return r;
    }
    return undefined;
  }

  /**
   * Starts one exchange from a complete request head: `b[off…end)` holds the request line and
   * field lines, each ending with CRLF (the head's empty line follows at `end`). Returns the
   * exchange, or null when the proxy answered itself (the connection is then closing, unless the
   * request had no body and may be followed by another).
   */
  begin(conn: ClientConn, b: Buffer, off: number, end: number, t0: number): Exchange | null {
    this.inflight++;
    try {
      return this.prepare(conn, b, off, end, t0);
    } catch (err) {
      if (!(err instanceof HttpSyntaxError)) throw err;
      conn.answer(err.status, err.code, err.message, 'not_sampled', true);
      this.done('bad_request');
      return null;
    }
  }

  private prepare(conn: ClientConn, b: Buffer, off: number, end: number, t0: number): Exchange | null {
    const reader = this.requestHeads;
    const h = reader.read(b, off, end);
    const { path, host, framing, contentLength } = h;
    const route = this.route(path, host);
    const ex = new Exchange(this, conn, h.method, h.minor, h.keepAlive && !this.draining, framing, contentLength, t0);
    if (route === undefined) {
      ex.noRoute();
      return null;
    }
    ex.route = route;

    // sampling, from the head only
    let decision: SampleDecision;
    if (this.sampler.idle && h.sampleHeaders === null) decision = NOT_SAMPLED;
    else decision = this.sampler.decide({ method: h.method, path, host, headers: h.sampleHeaders ?? NO_HEADERS });
    const upstreamPath = route.basePath + (route.stripPrefix ? ensureSlash(path.slice(route.pathPrefix.length)) : path);
    ex.upstreamPath = upstreamPath;

    if (decision.kind === 'sampled') {
      const cap = this.d.config.capture;
      if (contentLength > cap.captureMaxBytes) {
        ex.echo = 'skipped:too_large';
        this.d.metrics.capture('skipped', 'too_large');
        this.d.publisher.enqueueMarker(skipMarker(this.d.names, decision, 'too_large', contentLength));
      } else {
        const c = new CaptureTee(
          decision,
          this.d.publisher,
          this.d.metrics,
          cap.captureMaxBytes,
          cap.responseCaptureMaxBytes,
          t0,
          this.d.names,
        );
        c.contentType = reader.contentType(h);
        c.contentEncoding = reader.contentEncoding(h);
        if (framing === Framing.None) c.requestComplete = true;
        ex.capture = c;
        ex.echo = 'queued';
        this.d.metrics.capture('queued');
      }
    } else if (decision.kind === 'skipped') {
      ex.echo = `skipped:${decision.reason}`;
      this.d.metrics.capture('skipped', decision.reason);
    } else {
      this.d.metrics.capture('not_sampled');
    }

    // the forwarded head: a new request line and Host, then the kept field lines as they arrived
    const start = `${h.method} ${upstreamPath}${h.query} HTTP/1.1\r\nhost: ${route.preserveHost && h.hostValue !== '' ? h.hostValue : route.pool.hostHeader}\r\n`;
    let tail = framing === Framing.Chunked ? 'transfer-encoding: chunked\r\n\r\n' : '\r\n';
    ex.upstreamHead = copyHead(start, reader.fields, reader.kept, -1, tail);
    if (h.sendContinue) conn.write(CONTINUE);
    return ex;
  }

  /** Called by an exchange when it ends, to account and hand the capture off. */
  finish(ex: Exchange, outcome: RequestOutcome): void {
    this.done(outcome);
    const cap = ex.capture;
    if (cap === null) return;
    if (outcome !== 'ok' && outcome !== 'upstream_cut') {
      cap.abandon(
        outcome === 'client_aborted'
          ? 'client_aborted'
          : outcome === 'bad_request' || outcome === 'client_timeout'
            ? 'request_incomplete'
            : 'upstream_failed',
      );
      return;
    }
    if (!cap.requestComplete && !ex.requestDone) {
      cap.abandon('request_incomplete');
      return;
    }
    if (!cap.active) return;
    handOffCapture(this.d, ex, cap, performance.now());
  }

  /** Records the proxy's own time for one request (seconds). */
  observeAdded(seconds: number): void {
    this.d.metrics.added(seconds);
  }

  /** The client keep-alive timeout, ms. */
  get keepAliveTimeoutMs(): number {
    return this.d.config.keepAliveTimeoutMs;
  }

  /**
   * The last line of a head that keeps its connection open: `keep-alive: timeout=N` (RFC 9112
   * §9.3 / the Keep-Alive hint) with N the idle timeout in whole seconds, rounded down — the sweep
   * closes an idle connection no earlier than that — then the empty line. A client pool that keeps
   * idle sockets longer than the server would otherwise reuse one the sidecar has closed.
   */
  readonly keepAliveLine: string;
}
