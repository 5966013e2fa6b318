import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Pool, type Dispatcher } from 'undici';
import type { NatsNames } from '@shadowplane/contracts';
import type { Logger } from '@shadowplane/telemetry';
import type { RouteSpec, SidecarConfig } from './config.js';
import type { CaptureInput, TeedResponse } from './capture.js';
import type { CaptureProcessor } from './processor.js';
import type { CapturePublisher } from './publisher.js';
import { Sampler, type RequestHead, type SampleDecision } from './sampling.js';
import type { RequestOutcome, SidecarMetrics } from './metrics.js';

/** Response header that echoes the capture decision made at response start. */
export const CAPTURE_HEADER = 'x-shadow-capture';

/**
 * Hop-by-hop request/response fields never forwarded (RFC 9110 §7.6.1: Connection and the fields
 * it lists, Proxy-Connection, Keep-Alive, TE, Transfer-Encoding, Upgrade; plus Trailer, which
 * describes a chunked framing we do not forward, and Expect, which Node answers itself).
 */
const HOP_BY_HOP = new Set(['connection', 'proxy-connection', 'keep-alive', 'te', 'transfer-encoding', 'upgrade', 'trailer', 'expect']);

interface CompiledRoute {
  pathPrefix: string;
  host: string | null;
  origin: string;
  basePath: string;
  stripPrefix: boolean;
  preserveHost: boolean;
  placement: 'ingress' | 'egress';
  pool: Pool;
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
 * The transparent streaming reverse proxy. Every request goes to the upstream of the first route
 * whose Host and path prefix match (never anywhere else), method/path/query/headers (minus
 * hop-by-hop and `x-shadow-*`) and body streamed with backpressure through an undici Pool per
 * upstream origin; the response is streamed back chunk by chunk (SSE included, never buffered).
 *
 * Capture never touches the hot path: sampling is decided from the head; a sampled request's body
 * chunks and the response chunks are kept by reference (bounded: per-request ceiling and a global
 * byte budget), and parsing, redaction, envelope building and publishing happen after the response
 * ended (CaptureProcessor: a later event-loop turn for small bodies, a worker thread for large
 * ones; then the publisher's bounded queue).
 *
 * Errors: no route → 404 `not_found`; upstream unreachable/reset before headers → 502
 * `upstream_unavailable`; connect or headers timeout → 504 `upstream_timeout` (bodies
 * `{error:{code,message}}`); a failure after the response head was sent destroys the client
 * connection so the client sees the same cut; a client abort aborts the upstream call.
 */
export class SidecarProxy {
  readonly server: Server;
  private readonly routes: CompiledRoute[];
  private readonly pools: Pool[] = [];
  private readonly sampler: Sampler;
  private readonly reqOutcome: Record<RequestOutcome, { inc(): void }>;
  private inflight = 0;
  private draining = false;
  private drainWaiters: (() => void)[] = [];

  constructor(private readonly d: ProxyDeps) {
    const c = d.config;
    const pools = new Map<string, Pool>();
    this.routes = c.routes.map((r: RouteSpec) => {
      const u = new URL(r.upstream);
      let pool = pools.get(u.origin);
      if (!pool) {
        pool = new Pool(u.origin, {
          connections: c.upstream.connections,
          pipelining: 1,
          headersTimeout: c.upstream.headersTimeoutMs,
          bodyTimeout: c.upstream.bodyTimeoutMs,
          connect: { timeout: c.upstream.connectTimeoutMs },
        });
        pools.set(u.origin, pool);
        this.pools.push(pool);
      }
      return {
        pathPrefix: r.path_prefix,
        host: r.host ? r.host.toLowerCase() : null,
        origin: u.origin,
        basePath: u.pathname.replace(/\/+$/, ''),
        stripPrefix: r.strip_prefix,
        preserveHost: r.preserve_host,
        placement: r.placement,
        pool,
      };
    });
    this.sampler = new Sampler({ ...c.sampling, ...(d.random ? { random: d.random } : {}) });
    const m = d.metrics.requests;
    const outcomes: RequestOutcome[] = ['ok', 'upstream_error', 'upstream_timeout', 'upstream_cut', 'client_aborted', 'no_route', 'shutting_down'];
    this.reqOutcome = Object.fromEntries(outcomes.map((o) => [o, m.labels({ outcome: o })])) as Record<RequestOutcome, { inc(): void }>;
    this.server = createServer({ keepAliveTimeout: c.keepAliveTimeoutMs, requestTimeout: 0 }, (req, res) => this.handle(req, res));
    this.server.headersTimeout = 60_000;
  }

  /** Listens on `host:port` (port 0 = ephemeral) and resolves with the base URL. */
  async listen(host: string, port: number): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
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

  /** Requests in flight. */
  get inflightCount(): number {
    return this.inflight;
  }

  /**
   * Graceful stop: refuses new connections, closes idle keep-alive connections, waits up to
   * `timeoutMs` for in-flight requests, then closes every connection and the upstream pools.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.draining = true;
    const closed = new Promise<void>((r) => this.server.close(() => r()));
    this.server.closeIdleConnections();
    if (this.inflight > 0) {
      await Promise.race([
        new Promise<void>((r) => this.drainWaiters.push(r)),
        new Promise<void>((r) => setTimeout(r, timeoutMs).unref()),
      ]);
    }
    this.server.closeAllConnections();
    await closed;
    await Promise.all(this.pools.map((p) => p.close().catch(() => undefined)));
  }

  private done(outcome: RequestOutcome): void {
    this.reqOutcome[outcome].inc();
    this.inflight--;
    if (this.inflight === 0 && this.drainWaiters.length > 0) {
      const w = this.drainWaiters;
      this.drainWaiters = [];
      for (const f of w) f();
    }
  }

  private route(path: string, host: string): CompiledRoute | undefined {
    for (const r of this.routes) {
      if (r.host !== null && r.host !== host) continue;
      if (!path.startsWith(r.pathPrefix)) continue;
      return r;
    }
    return undefined;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const t0 = performance.now();
    this.inflight++;
    res.sendDate = false;
    if (this.draining) res.shouldKeepAlive = false;

    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const query = q === -1 ? '' : url.slice(q);

    // one pass over the raw headers: forwarded set, sampling inputs, framing facts
    const raw = req.rawHeaders;
    const fwd: string[] = [];
    let host = '';
    let hostRaw: string | null = null;
    let contentLength: string | null = null;
    let chunked = false;
    let contentType: string | null = null;
    let contentEncoding: string | null = null;
    let connectionTokens: string | null = null;
    let shadowHeaders = false;
    const wanted = this.sampler.headerNames;
    const head: RequestHead = { method: req.method ?? 'GET', path, host: '', headers: new Map() };
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!;
      const value = raw[i + 1]!;
      const lower = name.toLowerCase();
      if (lower === 'host') {
        hostRaw = value;
        const h = value.toLowerCase();
        const colon = h.startsWith('[') ? h.indexOf(']') + 1 : h.indexOf(':');
        host = colon > 0 ? h.slice(0, colon) : h;
        continue;
      }
      if (lower.startsWith('x-shadow-')) {
        shadowHeaders = true;
        if (!head.headers.has(lower)) head.headers.set(lower, value);
        continue;
      }
      if (HOP_BY_HOP.has(lower)) {
        if (lower === 'transfer-encoding') chunked = true;
        else if (lower === 'connection') connectionTokens = connectionTokens === null ? value : `${connectionTokens},${value}`;
        continue;
      }
      if (lower === 'content-length') contentLength = value;
      else if (lower === 'content-type') contentType = value;
      else if (lower === 'content-encoding') contentEncoding = value;
      if (wanted.has(lower) && !head.headers.has(lower)) head.headers.set(lower, value);
      fwd.push(name, value);
    }
    head.host = host;
    if (connectionTokens !== null) stripConnectionListed(fwd, connectionTokens);

    const route = this.route(path, host);
    if (route === undefined) {
      sendError(res, 404, 'not_found', 'no upstream route matches this request', 'not_sampled');
      res.on('close', () => this.done('no_route'));
      return;
    }
    if (route.preserveHost && hostRaw !== null) fwd.push('host', hostRaw);

    // sampling, from the head only
    let decision: SampleDecision;
    if (this.sampler.idle && !shadowHeaders) decision = NOT_SAMPLED;
    else decision = this.sampler.decide(head);
    const upstreamPath = route.basePath + (route.stripPrefix ? ensureSlash(path.slice(route.pathPrefix.length)) : path);

    let capture: Capture | null = null;
    let echo: string;
    if (decision.kind === 'sampled') {
      const cap = this.d.config.capture;
      if (contentLength !== null && Number(contentLength) > cap.captureMaxBytes) {
        echo = 'skipped:too_large';
        this.d.metrics.capture('skipped', 'too_large');
      } else {
        capture = new Capture(decision, this.d.publisher, this.d.metrics, cap.captureMaxBytes, cap.responseCaptureMaxBytes, t0);
        capture.contentType = contentType;
        capture.contentEncoding = contentEncoding;
        echo = 'queued';
        this.d.metrics.capture('queued');
      }
    } else if (decision.kind === 'skipped') {
      echo = `skipped:${decision.reason}`;
      this.d.metrics.capture('skipped', decision.reason);
    } else {
      echo = 'not_sampled';
      this.d.metrics.capture('not_sampled');
    }

    const hasBody = chunked || (contentLength !== null && contentLength !== '0');
    if (capture !== null) {
      if (hasBody) {
        const cap = capture;
        req.on('data', (chunk: Buffer) => cap.pushRequest(chunk));
        // keep the stream paused: undici resumes it when it starts writing the body upstream
        req.pause();
      } else {
        capture.requestComplete = true;
      }
    }

    const ex = new Exchange(this, req, res, capture, echo, t0);
    const opts: Dispatcher.DispatchOptions = {
      path: upstreamPath + query,
      method: head.method as Dispatcher.HttpMethod,
      headers: fwd,
      body: hasBody ? req : null,
    };
    try {
      route.pool.dispatch(opts, ex);
    } catch (err) {
      ex.onError(err as Error);
      return;
    }
    ex.dispatchedAt = performance.now();
    ex.route = route;
    ex.upstreamPath = upstreamPath;

    res.on('close', () => ex.onClientClose());
  }

  /** Called by an exchange when it ends, to account and hand the capture off. */
  finish(ex: Exchange, outcome: RequestOutcome): void {
    this.done(outcome);
    const cap = ex.capture;
    if (cap === null) return;
    if (outcome !== 'ok' && outcome !== 'upstream_cut') {
      cap.abandon(outcome === 'client_aborted' ? 'client_aborted' : 'upstream_failed');
      return;
    }
    if (!cap.requestComplete && !ex.req.complete) {
      cap.abandon('request_incomplete');
      return;
    }
    if (!cap.active) return;
    const endMs = performance.now();
    const route = ex.route!;
    const cfg = this.d.config;
    const input: CaptureInput = {
      decision: cap.decision,
      method: ex.req.method ?? 'POST',
      path: ex.upstreamPath,
      contentType: cap.contentType,
      contentEncoding: cap.contentEncoding,
      requestChunks: cap.chunks,
      requestBytes: cap.bytes,
      response: cap.response,
      startMs: cap.startMs,
      endMs,
      placement: route.placement,
      sidecarId: cfg.sidecarId,
      inlineMaxBytes: cfg.capture.inlineMaxBytes,
      maxBodyBytes: cfg.capture.captureMaxBytes,
      bodyStore: this.d.names.captureBodies,
    };
    const teed = cap.heldBytes;
    cap.chunks = [];
    cap.response = null;
    void this.d.processor.process(input).then((built) => {
      // the teed chunks are no longer needed; the envelope (and body) replace them in the budget
      this.d.publisher.release(teed);
      if (built.kind === 'excluded') {
        this.d.metrics.capture('excluded', built.reason);
        if (built.reason === 'envelope_invalid' || built.reason === 'worker_error') this.d.log.warn({ reason: built.reason, detail: built.detail }, 'capture not built');
        return;
      }
      const envBytes = built.data.byteLength + (built.body?.bytes.byteLength ?? 0);
      if (!this.d.publisher.tryHold(envBytes)) {
        this.d.metrics.capture('dropped', 'queue_full');
        return;
      }
      this.d.publisher.enqueue({
        subject: this.d.names.captureSubject(built.suite, built.callType),
        data: built.data,
        msgId: built.envelopeId,
        body: built.body === null ? null : { store: this.d.names.captureBodies, name: built.body.name, bytes: built.body.bytes },
        heldBytes: envBytes,
      });
    });
  }

  /** Records the proxy's own time for one request (seconds). */
  observeAdded(seconds: number): void {
    this.d.metrics.addedLatency.observe(seconds);
  }
}

const NOT_SAMPLED: SampleDecision = Object.freeze({ kind: 'not_sampled' });

function ensureSlash(p: string): string {
  return p.startsWith('/') ? p : `/${p}`;
}

function stripConnectionListed(fwd: string[], tokens: string): void {
  const listed = new Set(
    tokens
      .split(',')
      .map((t) => t.trim().toLowerCase())
      .filter((t) => t !== '' && t !== 'keep-alive' && t !== 'close'),
  );
  if (listed.size === 0) return;
  for (let i = fwd.length - 2; i >= 0; i -= 2) {
    if (listed.has(fwd[i]!.toLowerCase())) fwd.splice(i, 2);
  }
}

function sendError(res: ServerResponse, status: number, code: string, message: string, echo: string): void {
  const body = JSON.stringify({ error: { code, message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), [CAPTURE_HEADER]: echo });
  res.end(body);
}

/**
 * The tee of one sampled exchange: references to request and response chunks, bounded by the
 * per-capture ceilings and the publisher's global byte budget. `abandon` releases everything and
 * counts why.
 */
class Capture {
  chunks: Buffer[] = [];
  bytes = 0;
  heldBytes = 0;
  active = true;
  requestComplete = false;
  contentType: string | null = null;
  contentEncoding: string | null = null;
  response: TeedResponse | null = null;
  private responseBytes = 0;

  constructor(
    readonly decision: Extract<SampleDecision, { kind: 'sampled' }>,
    private readonly publisher: CapturePublisher,
    private readonly metrics: SidecarMetrics,
    private readonly maxRequestBytes: number,
    private readonly maxResponseBytes: number,
    readonly startMs: number,
  ) {}

  pushRequest(chunk: Buffer): void {
    if (!this.active) return;
    this.bytes += chunk.byteLength;
    if (this.bytes > this.maxRequestBytes) return this.abandon('too_large');
    if (!this.publisher.tryHold(chunk.byteLength)) return this.abandon('queue_full');
    this.heldBytes += chunk.byteLength;
    this.chunks.push(chunk);
  }

  startResponse(status: number, headers: [string, string][]): void {
    if (!this.active) return;
    this.response = { status, headers, chunks: [], times: [], truncated: false };
  }

  pushResponse(chunk: Buffer): void {
    const r = this.response;
    if (!this.active || r === null || r.truncated) return;
    this.responseBytes += chunk.byteLength;
    if (this.responseBytes > this.maxResponseBytes || !this.publisher.tryHold(chunk.byteLength)) {
      // the served summary becomes unknown (served: null); the request is still captured
      r.truncated = true;
      let freed = 0;
      for (const c of r.chunks) freed += c.byteLength;
      this.publisher.release(freed);
      this.heldBytes -= freed;
      r.chunks = [];
      r.times = [];
      return;
    }
    this.heldBytes += chunk.byteLength;
    r.chunks.push(chunk);
    r.times.push(performance.now());
  }

  /** Gives up the capture: frees the tee and counts the reason (excluded, or dropped for the budget). */
  abandon(reason: 'too_large' | 'queue_full' | 'client_aborted' | 'request_incomplete' | 'upstream_failed'): void {
    if (!this.active) return;
    this.active = false;
    this.publisher.release(this.heldBytes);
    this.heldBytes = 0;
    this.chunks = [];
    this.response = null;
    this.metrics.capture(reason === 'queue_full' ? 'dropped' : 'excluded', reason);
  }
}

/**
 * One proxied exchange, as an undici dispatch handler. It uses undici 7's callback interface
 * (onConnect/onHeaders/onData/onComplete/onError — the core's native one in 7.x, marked deprecated
 * in its types in favour of the controller interface): it hands over the raw header buffers, so
 * names, order and duplicates pass through unchanged and no header object is parsed per response.
 */
class Exchange implements Dispatcher.DispatchHandler {
  dispatchedAt = 0;
  route: CompiledRoute | null = null;
  upstreamPath = '';
  private abortUpstream: ((err: Error) => void) | null = null;
  private resumeUpstream: (() => void) | null = null;
  private finished = false;
  private clientGone = false;
  private cut = false;

  constructor(
    private readonly proxy: SidecarProxy,
    readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    readonly capture: Capture | null,
    private readonly echo: string,
    private readonly t0: number,
  ) {}

  onConnect(abort: (err?: Error) => void): void {
    this.abortUpstream = abort;
    if (this.clientGone) abort(new Error('client aborted'));
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    if (statusCode < 200) return true; // informational responses are not relayed
    const tHeaders = performance.now();
    this.resumeUpstream = resume;
    const out: string[] = [];
    const pairs: [string, string][] | null = this.capture?.active ? [] : null;
    let connectionTokens: string | null = null;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!.toString('latin1');
      const value = rawHeaders[i + 1]!.toString('latin1');
      const lower = name.toLowerCase();
      if (HOP_BY_HOP.has(lower)) {
        if (lower === 'connection') connectionTokens = value;
        continue;
      }
      if (lower === CAPTURE_HEADER) continue;
      out.push(name, value);
      pairs?.push([name, value]);
    }
    if (connectionTokens !== null) stripConnectionListed(out, connectionTokens);
    let echo = this.echo;
    if (this.capture !== null && !this.capture.active) echo = 'skipped:too_large';
    out.push(CAPTURE_HEADER, echo);
    try {
      this.res.writeHead(statusCode, statusText, out);
    } catch (err) {
      // a header Node refuses to write: answer as an unusable upstream response
      this.abortUpstream?.(err as Error);
      return false;
    }
    if (pairs !== null) this.capture!.startResponse(statusCode, pairs);
    this.proxy.observeAdded((this.dispatchedAt - this.t0 + (performance.now() - tHeaders)) / 1000);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.capture !== null) this.capture.pushResponse(chunk);
    if (this.res.write(chunk)) return true;
    const resume = this.resumeUpstream;
    if (resume) this.res.once('drain', resume);
    return false;
  }

  onComplete(): void {
    if (this.finished) return;
    this.finished = true;
    this.res.end();
    this.proxy.finish(this, 'ok');
  }

  onError(err: Error): void {
    if (this.finished) return;
    this.finished = true;
    const code = (err as { code?: string }).code;
    if (this.clientGone) {
      this.proxy.finish(this, 'client_aborted');
      return;
    }
    if (this.res.headersSent) {
      // mid-response failure: the client must see the same cut, never a clean end
      this.cut = true;
      this.res.destroy(err);
      this.proxy.finish(this, 'upstream_cut');
      return;
    }
    // undici destroys the request body stream on failure (detaching it from the socket first),
    // so only the client socket itself says whether the client is gone
    const sock = this.res.socket;
    if (sock === null || sock.destroyed) {
      this.proxy.finish(this, 'client_aborted');
      return;
    }
    const timeout = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
    sendError(
      this.res,
      timeout ? 504 : 502,
      timeout ? 'upstream_timeout' : 'upstream_unavailable',
      timeout ? 'The upstream did not answer in time.' : 'The upstream could not be reached or failed before responding.',
      this.echo,
    );
    this.proxy.finish(this, timeout ? 'upstream_timeout' : 'upstream_error');
  }

  onClientClose(): void {
    if (this.res.writableFinished || this.cut) return;
    this.clientGone = true;
    this.abortUpstream?.(new Error('client aborted'));
  }
}
