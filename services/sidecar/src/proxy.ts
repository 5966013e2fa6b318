import { createServer, connect as netConnect, type AddressInfo, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { connect as tlsConnect } from 'node:tls';
import type { NatsNames } from '@shadowplane/contracts';
import type { Logger } from '@shadowplane/telemetry';
import type { RouteSpec, SidecarConfig } from './config.js';
import type { CaptureInput, TeedResponse } from './capture.js';
import {
  ChunkedDecoder,
  FIELD_CONNECTION,
  FIELD_CONTENT_ENCODING,
  FIELD_CONTENT_LENGTH,
  FIELD_CONTENT_TYPE,
  FIELD_EXPECT,
  FIELD_HOST,
  FIELD_KEEP_ALIVE,
  FIELD_PROXY_AUTH,
  FIELD_PROXY_CONNECTION,
  FIELD_SHADOW,
  FIELD_SHADOW_CAPTURE,
  FIELD_TE,
  FIELD_TRAILER,
  FIELD_TRANSFER_ENCODING,
  FIELD_UPGRADE,
  FieldScan,
  HttpSyntaxError,
  assertChunkedOnly,
  parseContentLength,
  parseRequestLine,
  parseStatusLine,
} from './http1.js';
import type { CaptureProcessor } from './processor.js';
import type { CapturePublisher } from './publisher.js';
import { skipMarker } from './skip-marker.js';
import { Sampler, type RequestHead, type SampleDecision } from './sampling.js';
import type { RequestOutcome, SidecarMetrics } from './metrics.js';

/** Response header that echoes the capture decision made at response start. */
export const CAPTURE_HEADER = 'x-shadow-capture';

// Hop-by-hop fields are never forwarded (RFC 9110 §7.6.1): Connection and the fields it lists,
// Proxy-Connection, Keep-Alive, TE, Transfer-Encoding, Upgrade; plus Trailer, which describes a
// framing the proxy re-applies itself, and Expect, which the proxy answers itself. prepare() and
// responseHead() drop them by field id (http1.ts FIELD_*).

const CRLFCRLF = Buffer.from('\r\n\r\n');
const EMPTY = Buffer.alloc(0);
/** Methods a proxy may retry on its own (RFC 9110 §9.2.2). */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);
const CONTINUE = Buffer.from('HTTP/1.1 100 Continue\r\n\r\n', 'latin1');
/** Largest request head accepted (Node's default `maxHeaderSize`), bytes; larger → 431. */
const MAX_REQUEST_HEAD = 16 * 1024;
/** Largest upstream response head accepted, bytes; larger → 502. */
const MAX_RESPONSE_HEAD = 64 * 1024;
/** ms an idle upstream connection is kept for reuse (undici's default; an upstream Keep-Alive hint lowers it). */
const UPSTREAM_IDLE_MS = 4_000;
/** A request whose bytes fit here is kept until its response starts, to replay it once on a fresh connection when a reused one turns out stale. */
const REPLAY_MAX_BYTES = 64 * 1024;
/** Request bytes buffered while waiting for an upstream connection before the client is paused. */
const PENDING_MAX_BYTES = 1024 * 1024;
/** Small writes are joined into one buffer (one syscall) below this size. */
const JOIN_MAX_BYTES = 16 * 1024;

const enum Framing {
  None,
  Length,
  Chunked,
  Close,
}

interface CompiledRoute {
  pathPrefix: string;
  host: string | null;
  basePath: string;
  stripPrefix: boolean;
  preserveHost: boolean;
  placement: 'ingress' | 'egress';
  pool: UpstreamPool;
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
  /** the request head being prepared (one at a time: prepare is synchronous) */
  private readonly reqFields = new FieldScan();
  /** per field of {@link reqFields}: 1 when forwarded */
  private reqKeep = new Uint8Array(64);
  /** the response head being prepared (one at a time: responseHead is synchronous) */
  readonly resFields = new FieldScan();
  private resKeep = new Uint8Array(64);
  /** true when a sampling rule or sticky key reads a header other than `x-shadow-*` */
  private readonly readsOtherHeaders: boolean;

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
    this.readsOtherHeaders = [...this.sampler.headerNames].some((h) => !h.startsWith('x-shadow-'));
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

  /** A scratch keep-mask for at least `n` response fields. */
  resKept(n: number): Uint8Array {
    if (this.resKeep.length < n) this.resKeep = new Uint8Array(n * 2);
    return this.resKeep;
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
    let eol = off;
    while (b[eol] !== 0x0d) eol++;
    if (b[eol + 1] !== 0x0a) throw new HttpSyntaxError(400, 'malformed_http', 'a malformed request line');
    const line = parseRequestLine(b.latin1Slice(off, eol));
    if (line.method === 'CONNECT') throw new HttpSyntaxError(501, 'not_implemented', 'CONNECT is not proxied');
    const fs = this.reqFields;
    fs.scan(b, eol + 2, end);
    let target = line.target;
    let absoluteHost: string | null = null;
    if (target.charCodeAt(0) !== 0x2f) {
      // absolute-form (RFC 9112 §3.2.2): its authority replaces Host
      const m = /^https?:\/\/([^/?#]+)(.*)$/i.exec(target);
      if (m === null)
        throw new HttpSyntaxError(400, 'malformed_http', 'request target must be origin-form or absolute-form');
      absoluteHost = m[1]!;
      target = m[2] === '' ? '/' : m[2]!.charCodeAt(0) === 0x2f ? m[2]! : `/${m[2]!}`;
    }
    const q = target.indexOf('?');
    const path = q === -1 ? target : target.slice(0, q);
    const query = q === -1 ? '' : target.slice(q);

    // one pass over the fields: what is forwarded, the sampling inputs, the framing facts
    let hostField = -1;
    let hosts = 0;
    let contentLength = -1;
    let te: string | null = null;
    let contentTypeField = -1;
    /** the field index, or -2 when repeated (then the capture reads the joined list) */
    let contentEncoding: number | null = null;
    let connectionTokens: string | null = null;
    let connectionClose = false;
    let expect: string | null = null;
    let sampleHeaders: Map<string, string> | null = null;
    const wanted = this.sampler.headerNames;
    const n = fs.n;
    if (this.reqKeep.length < n) this.reqKeep = new Uint8Array(n * 2);
    const kept = this.reqKeep;
    for (let k = 0; k < n; k++) {
      kept[k] = 0;
      switch (fs.id(k)) {
        case FIELD_HOST:
          hostField = k;
          hosts++;
          continue;
        case FIELD_SHADOW:
        case FIELD_SHADOW_CAPTURE: {
          sampleHeaders ??= new Map();
          const lower = fs.name(k).toLowerCase();
          if (!sampleHeaders.has(lower)) sampleHeaders.set(lower, fs.value(k));
          continue;
        }
        case FIELD_TRANSFER_ENCODING:
          te = te === null ? fs.value(k) : `${te},${fs.value(k)}`;
          continue;
        case FIELD_CONNECTION:
          if (fs.valueIs(k, V_KEEP_ALIVE)) continue;
          if (fs.valueIs(k, V_CLOSE)) connectionClose = true;
          else connectionTokens = connectionTokens === null ? fs.value(k) : `${connectionTokens},${fs.value(k)}`;
          continue;
        case FIELD_EXPECT:
          expect = expect === null ? fs.value(k) : `${expect},${fs.value(k)}`;
          continue;
        case FIELD_KEEP_ALIVE:
        case FIELD_PROXY_CONNECTION:
        case FIELD_PROXY_AUTH:
        case FIELD_TE:
        case FIELD_UPGRADE:
        case FIELD_TRAILER:
          continue;
        case FIELD_CONTENT_LENGTH:
          // a request's length must be one plain number: RFC 9110 §8.6 allows rejecting a list or
          // repeated lines, and llhttp (Node) and nginx both do, so a next hop of either kind could
          // not read what was forwarded as the sidecar did
          if (contentLength >= 0 || fs.digits(k) < 0)
            throw new HttpSyntaxError(400, 'malformed_http', 'a repeated or list-valued content-length');
          contentLength = contentLengthField(fs, k, contentLength);
          break;
        case FIELD_CONTENT_TYPE:
          contentTypeField = k;
          break;
        case FIELD_CONTENT_ENCODING:
          // repeated lines are one list (RFC 9110 §5.3); the capture decodes only single codings
          contentEncoding = contentEncoding === null ? k : -2;
          break;
      }
      // a field a sampling rule or sticky key reads (x-shadow-* ones were taken above)
      if (this.readsOtherHeaders) {
        const lower = fs.name(k).toLowerCase();
        if (wanted.has(lower)) {
          sampleHeaders ??= new Map();
          if (!sampleHeaders.has(lower)) sampleHeaders.set(lower, fs.value(k));
        }
      }
      kept[k] = 1;
    }
    // RFC 9112 §3.2: exactly one Host in HTTP/1.1, with an absolute-form target too (it then
    // stands in for the Host value, §3.2.2, but the field is still required)
    if (hosts > 1 || (hosts === 0 && line.minor === 1))
      throw new HttpSyntaxError(400, 'malformed_http', 'a request needs exactly one host header');
    const hostValue = absoluteHost ?? (hostField >= 0 ? fs.value(hostField) : '');
    const hl = hostValue.toLowerCase();
    const colon = hl.startsWith('[') ? hl.indexOf(']') + 1 : hl.indexOf(':');
    const host = colon > 0 ? hl.slice(0, colon) : hl;

    // request body framing (RFC 9112 §6.3); both headers at once is how smuggling starts
    let framing = Framing.None;
    if (te !== null) {
      if (contentLength >= 0)
        throw new HttpSyntaxError(400, 'malformed_http', 'both transfer-encoding and content-length');
      if (line.minor === 0)
        throw new HttpSyntaxError(400, 'malformed_http', 'transfer-encoding in an HTTP/1.0 request');
      assertChunkedOnly(te);
      framing = Framing.Chunked;
    } else if (contentLength > 0) framing = Framing.Length;
    let sendContinue = false;
    if (expect !== null) {
      // every listed expectation, across repeated lines, must be 100-continue (RFC 9110 §10.1.1)
      if (!expect.split(',').every((e) => e.trim().toLowerCase() === '100-continue'))
        throw new HttpSyntaxError(417, 'expectation_failed', 'only 100-continue is supported');
      sendContinue = line.minor === 1 && framing !== Framing.None;
    }
    let keepAlive = line.minor === 1 && !connectionClose;
    if (connectionTokens !== null && applyConnection(fs, kept, connectionTokens)) keepAlive = false;

    const route = this.route(path, host);
    const ex = new Exchange(
      this,
      conn,
      line.method,
      line.minor,
      keepAlive && !this.draining,
      framing,
      contentLength,
      t0,
    );
    if (route === undefined) {
      ex.noRoute();
      return null;
    }
    ex.route = route;

    // sampling, from the head only
    let decision: SampleDecision;
    if (this.sampler.idle && sampleHeaders === null) decision = NOT_SAMPLED;
    else decision = this.sampler.decide({ method: line.method, path, host, headers: sampleHeaders ?? NO_HEADERS });
    const upstreamPath = route.basePath + (route.stripPrefix ? ensureSlash(path.slice(route.pathPrefix.length)) : path);
    ex.upstreamPath = upstreamPath;

    if (decision.kind === 'sampled') {
      const cap = this.d.config.capture;
      if (contentLength > cap.captureMaxBytes) {
        ex.echo = 'skipped:too_large';
        this.d.metrics.capture('skipped', 'too_large');
        this.d.publisher.enqueueMarker(skipMarker(this.d.names, decision, 'too_large', contentLength));
      } else {
        const c = new Capture(
          decision,
          this.d.publisher,
          this.d.metrics,
          cap.captureMaxBytes,
          cap.responseCaptureMaxBytes,
          t0,
          this.d.names,
        );
        c.contentType = contentTypeField >= 0 ? fs.value(contentTypeField) : null;
        c.contentEncoding =
          contentEncoding === null
            ? null
            : contentEncoding >= 0
              ? fs.value(contentEncoding)
              : joinedValues(fs, FIELD_CONTENT_ENCODING);
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
    const start = `${line.method} ${upstreamPath}${query} HTTP/1.1\r\nhost: ${route.preserveHost && hostValue !== '' ? hostValue : route.pool.hostHeader}\r\n`;
    let tail = framing === Framing.Chunked ? 'transfer-encoding: chunked\r\n\r\n' : '\r\n';
    ex.upstreamHead = copyHead(start, fs, kept, -1, tail);
    if (sendContinue) conn.write(CONTINUE);
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
    const endMs = performance.now();
    const route = ex.route!;
    const cfg = this.d.config;
    const input: CaptureInput = {
      decision: cap.decision,
      method: ex.method,
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
      maxDecodeRatio: cfg.capture.maxDecodeRatio,
      cpuBudgetMs: cfg.capture.cpuBudgetMs,
      secretFieldNames: cfg.capture.secretFieldNames,
      bodyStore: this.d.names.captureBodies,
      // now, not when the (batched) build runs
      capturedAt: new Date().toISOString(),
    };
    const teed = cap.heldBytes;
    cap.chunks = [];
    cap.response = null;
    void this.d.processor.process(input).then((built) => {
      // the teed chunks are no longer needed; the envelope (and body) replace them in the budget
      this.d.publisher.release(teed);
      if (built.kind === 'excluded') {
        // over a budget: the capture was dropped for what it cost, not for what it held
        this.d.metrics.capture(
          built.reason === 'cpu_budget' || built.reason === 'memory_budget' ? 'dropped' : 'excluded',
          built.reason,
        );
        if (built.reason === 'too_large' || built.reason === 'pii_uncertain')
          this.d.publisher.enqueueMarker(skipMarker(this.d.names, input.decision, built.reason, input.requestBytes));
        if (built.reason === 'envelope_invalid' || built.reason === 'worker_error')
          this.d.log.warn({ reason: built.reason, detail: built.detail }, 'capture not built');
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
        body:
          built.body === null
            ? null
            : { store: this.d.names.captureBodies, name: built.body.name, bytes: built.body.bytes },
        heldBytes: envBytes,
      });
    });
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

const NOT_SAMPLED: SampleDecision = Object.freeze({ kind: 'not_sampled' });
/** sampling input for a request that carries no header the sampler reads */
const NO_HEADERS: ReadonlyMap<string, string> = new Map();
const V_KEEP_ALIVE = Uint8Array.from('keep-alive', (c) => c.charCodeAt(0));
const V_CLOSE = Uint8Array.from('close', (c) => c.charCodeAt(0));

function ensureSlash(p: string): string {
  return p.startsWith('/') ? p : `/${p}`;
}

/** Fields a Connection header may not name: the message framing and the target host. */
const FRAMING_FIELDS = new Set(['content-length', 'transfer-encoding', 'host']);

/**
 * Applies a Connection field value (RFC 9110 §7.6.1): clears `kept[k]` for the fields of `fs` it
 * lists and returns true when it says `close`.
 * @throws HttpSyntaxError 400 `malformed_http` when it lists Content-Length, Transfer-Encoding or
 *   Host (a response's caller turns this into a 502)
 */
function applyConnection(fs: FieldScan, kept: Uint8Array, value: string): boolean {
  let close = false;
  const listed = new Set<string>();
  for (const raw of value.toLowerCase().split(',')) {
    const t = raw.trim();
    if (t === 'close') close = true;
    else if (FRAMING_FIELDS.has(t)) {
      // removing these would strip the message's framing (or its Host) while its body is still
      // relayed: the next hop would read the body as another message — request smuggling
      throw new HttpSyntaxError(400, 'malformed_http', `the connection header lists ${t}, which frames the message`);
    } else if (t !== '' && t !== 'keep-alive') listed.add(t);
  }
  if (listed.size > 0)
    for (let k = 0; k < fs.n; k++) if (kept[k] === 1 && listed.has(fs.name(k).toLowerCase())) kept[k] = 0;
  return close;
}

/**
 * Field `k` of `fs` read as a Content-Length (digits, or a list of equal values: RFC 9110 §8.6)
 * that must agree with the value read before (`prev`; -1 when none).
 * @throws HttpSyntaxError 400 `malformed_http` when invalid or conflicting (a response's caller
 *   turns it into a 502)
 */
function contentLengthField(fs: FieldScan, k: number, prev: number): number {
  let cl = fs.digits(k);
  if (cl < 0) cl = parseContentLength(fs.value(k));
  if (cl < 0 || (prev >= 0 && cl !== prev))
    throw new HttpSyntaxError(400, 'malformed_http', 'an invalid or conflicting content-length');
  return cl;
}

/** The values of every field of `fs` with id `id`, joined as one list (`a, b`). */
function joinedValues(fs: FieldScan, id: number): string {
  const vs: string[] = [];
  for (let k = 0; k < fs.n; k++) if (fs.id(k) === id) vs.push(fs.value(k));
  return vs.join(', ');
}

/**
 * A message head as one buffer: `start` (latin1), the field lines of `fs` with `kept[k]` set —
 * copied as the bytes that arrived, runs of adjacent lines at once — except those with id
 * `dropId`, then `tail` (latin1, ending with the empty line).
 */
function copyHead(start: string, fs: FieldScan, kept: Uint8Array, dropId: number, tail: string): Buffer {
  const n = fs.n;
  let size = start.length + tail.length;
  for (let k = 0; k < n; k++) if (kept[k] === 1 && fs.id(k) !== dropId) size += fs.lineEnd(k) - fs.lineStart(k);
  const out = Buffer.allocUnsafe(size);
  let at = out.latin1Write(start, 0);
  const src = fs.b;
  for (let k = 0; k < n; k++) {
    if (kept[k] !== 1 || fs.id(k) === dropId) continue;
    const s = fs.lineStart(k);
    let e = fs.lineEnd(k);
    while (k + 1 < n && kept[k + 1] === 1 && fs.id(k + 1) !== dropId) e = fs.lineEnd(++k);
    at += src.copy(out, at, s, e);
  }
  out.latin1Write(tail, at);
  return out;
}

/** Writes `head` and `parts` to `sock` in one write when small, else corked. Returns write()'s verdict. */
function writeJoined(sock: Socket, head: Buffer | null, parts: Buffer[] | null): boolean {
  if (parts === null) return head === null || sock.write(head);
  if (head === null && parts.length === 1) return sock.write(parts[0]!);
  let total = head === null ? 0 : head.length;
  for (const p of parts) total += p.length;
  if (total <= JOIN_MAX_BYTES) {
    const buf = Buffer.allocUnsafe(total);
    let at = head === null ? 0 : head.copy(buf, 0);
    for (const p of parts) at += p.copy(buf, at);
    return sock.write(buf);
  }
  sock.cork();
  let ok = true;
  if (head !== null) ok = sock.write(head);
  for (const p of parts) ok = sock.write(p);
  sock.uncork();
  return ok;
}

/**
 * One client connection: parses request heads, runs one exchange at a time (pipelined requests
 * wait their turn, bytes kept), applies the keep-alive and head timeouts.
 */
class ClientConn {
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

/**
 * Keep-alive HTTP/1.1 connections to one upstream origin (TCP, or TLS for https), at most
 * `connections` at once; exchanges wait in FIFO order beyond that. Idle connections are reused
 * newest first and closed after {@link UPSTREAM_IDLE_MS} (or the upstream's Keep-Alive hint).
 */
class UpstreamPool {
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
class UpstreamConn {
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
function idleFromHint(hint: string): number {
  if (hint === lastHint) return lastHintIdleMs;
  const m = /timeout\s*=\s*(\d+)/i.exec(hint);
  lastHint = hint;
  lastHintIdleMs = m ? Math.max(0, Math.min(UPSTREAM_IDLE_MS, Number(m[1]) * 1000 - 1000)) : UPSTREAM_IDLE_MS;
  return lastHintIdleMs;
}

function isIp(h: string): boolean {
  return /^[\d.]+$/.test(h) || h.includes(':');
}

/**
 * One proxied request/response. Request side: head written upstream with the body as it
 * arrives (Content-Length or chunked, relayed as received). Response side: head parsed,
 * filtered and written to the client with the body as it arrives.
 */
class Exchange {
  route: CompiledRoute | null = null;
  /** performance.now() ms until which it may wait in the pool's queue for a connection */
  waitDeadline = Infinity;
  upstreamPath = '';
  upstreamHead: Buffer = EMPTY;
  capture: Capture | null = null;
  echo = 'not_sampled';
  requestDone = false;
  private reqRemaining: number;
  private reqDecoder: ChunkedDecoder | null = null;
  private pending: Buffer[] | null = [];
  private pendingBytes = 0;
  private replay: Buffer[] | null;
  private replayBytes = 0;
  private retried = false;
  private conn: UpstreamConn | null = null;
  private clientPausedForUpstream = false;
  private clientPausedForPending = false;
  private dispatchedAt = 0;
  // response side
  private resState: 0 | 1 | 2 = 0; // head, body, done
  private resBuf: Buffer | null = null;
  private resFraming = Framing.None;
  private resRemaining = 0;
  private resDecoder: ChunkedDecoder | null = null;
  private dechunk = false;
  private closeAfter = false;
  private upstreamKeepAlive = true;
  private finished = false;
  private readonly onReqData: ((b: Buffer) => void) | null = null;
  private onResData: ((b: Buffer) => void) | null = null;

  constructor(
    private readonly proxy: SidecarProxy,
    private readonly client: ClientConn,
    readonly method: string,
    private readonly minor: 0 | 1,
    private readonly keepAlive: boolean,
    private readonly reqFraming: Framing,
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
   * Parses a response head in `b[off…end)` (status line and field lines, each ending with CRLF)
   * and prepares the head for the client; returns true for an interim (1xx) response to skip.
   */
  private responseHead(b: Buffer, off: number, end: number): boolean {
    let eol = off;
    while (b[eol] !== 0x0d) eol++;
    if (b[eol + 1] !== 0x0a) throw new Error('the upstream sent a malformed status line');
    const sl = parseStatusLine(b.latin1Slice(off, eol));
    if (sl.status === 101) throw new Error('the upstream switched protocols, which was not asked for');
    const fs = this.proxy.resFields;
    fs.scan(b, eol + 2, end);
    if (sl.status < 200) {
      this.interim(b, off, eol, sl.status, sl.reason, sl.minor);
      return true;
    }
    const n = fs.n;
    const kept = this.proxy.resKept(n);
    let contentLength = -1;
    let te: string | null = null;
    let connectionTokens: string | null = null;
    let clRepeated = false;
    for (let k = 0; k < n; k++) {
      kept[k] = 0;
      switch (fs.id(k)) {
        case FIELD_TRANSFER_ENCODING:
          te = te === null ? fs.value(k) : `${te},${fs.value(k)}`;
          continue;
        case FIELD_CONNECTION:
          if (fs.valueIs(k, V_KEEP_ALIVE)) continue;
          if (fs.valueIs(k, V_CLOSE)) this.upstreamKeepAlive = false;
          else connectionTokens = connectionTokens === null ? fs.value(k) : `${connectionTokens},${fs.value(k)}`;
          continue;
        case FIELD_KEEP_ALIVE:
          if (this.conn !== null) this.conn.idleMs = idleFromHint(fs.value(k));
          continue;
        case FIELD_PROXY_CONNECTION:
        case FIELD_PROXY_AUTH:
        case FIELD_TE:
        case FIELD_UPGRADE:
        case FIELD_TRAILER:
        case FIELD_EXPECT:
        case FIELD_SHADOW_CAPTURE:
          continue;
        case FIELD_CONTENT_LENGTH:
          // a list of equal values, or the field repeated, is forwarded as one field (RFC 9110 §8.6)
          if (contentLength >= 0 || fs.digits(k) < 0) clRepeated = true;
          contentLength = contentLengthField(fs, k, contentLength);
          break;
      }
      kept[k] = 1;
    }
    if (connectionTokens !== null && applyConnection(fs, kept, connectionTokens)) this.upstreamKeepAlive = false;
    if (sl.minor === 0) this.upstreamKeepAlive = false;

    // response framing (RFC 9112 §6.3)
    const status = sl.status;
    let framing: Framing;
    let dropId = -1;
    if (this.method === 'HEAD' || status === 204 || status === 304) framing = Framing.None;
    else if (te !== null) {
      // only chunked alone is relayed; other codings would need decoding to find the end
      if (te.trim().toLowerCase() !== 'chunked') assertChunkedOnly(te);
      framing = Framing.Chunked;
      // transfer-encoding overrides content-length, which must not reach the client
      if (contentLength >= 0) dropId = FIELD_CONTENT_LENGTH;
    } else if (contentLength >= 0) {
      framing = contentLength === 0 ? Framing.None : Framing.Length;
      if (clRepeated) dropId = FIELD_CONTENT_LENGTH;
    } else framing = Framing.Close;
    this.resFraming = framing;
    this.resRemaining = contentLength;
    if (framing === Framing.Chunked) this.resDecoder = new ChunkedDecoder();
    if (framing === Framing.Close) this.upstreamKeepAlive = false;

    const cap = this.capture;
    let echo = this.echo;
    if (cap !== null && !cap.active) echo = `skipped:${cap.abandonedFor ?? 'too_large'}`;
    if (cap !== null && cap.active) {
      const pairs: [string, string][] = [];
      for (let k = 0; k < n; k++) if (kept[k] === 1 && fs.id(k) !== dropId) pairs.push([fs.name(k), fs.value(k)]);
      if (dropId !== -1 && framing !== Framing.Chunked) pairs.push(['content-length', String(contentLength)]);
      cap.startResponse(status, pairs);
      this.onResData = (x) => cap.pushResponse(x);
    }
    // a request body still arriving when the answer starts is not read to its end: say close
    this.closeAfter = !this.keepAlive || framing === Framing.Close || this.proxy.isDraining || !this.requestDone;
    if (framing === Framing.Chunked && this.minor === 0) {
      this.dechunk = true;
      this.closeAfter = true;
    }

    // the status line as sent when it is HTTP/1.1 already; the kept field lines as they arrived
    // (without a reason phrase the space after the code is still required: RFC 9112 §4)
    const start =
      sl.minor === 1 && eol > off + 12 ? b.latin1Slice(off, eol + 2) : `HTTP/1.1 ${status} ${sl.reason}\r\n`;
    let tail = `${CAPTURE_HEADER}: ${echo}\r\n${this.closeAfter ? 'connection: close\r\n\r\n' : this.proxy.keepAliveLine}`;
    if (framing === Framing.Chunked && !this.dechunk) tail = `transfer-encoding: chunked\r\n${tail}`;
    else if (dropId !== -1 && framing !== Framing.Chunked) tail = `content-length: ${contentLength}\r\n${tail}`;
    this.clientHead = copyHead(start, fs, kept, dropId, tail);
    if (this.conn !== null)
      this.conn.deadline = framing === Framing.None ? Infinity : performance.now() + this.conn.pool.opts.bodyTimeoutMs;
    return false;
  }

  /**
   * An interim (1xx) response, its fields already scanned (so known to be well formed): relayed
   * to the client without its hop-by-hop fields, as a proxy must (RFC 9110 §15.2) — except
   * `100 Continue`, which the sidecar answers itself when a client expects it (the expectation is
   * not forwarded, so an upstream 100 was not asked for by the client), and any 1xx to an
   * HTTP/1.0 client, which knows none (RFC 9110 §15.2).
   */
  private interim(b: Buffer, off: number, eol: number, status: number, reason: string, minor: number): void {
    if (status === 100 || this.minor === 0) return;
    const fs = this.proxy.resFields;
    const n = fs.n;
    const kept = this.proxy.resKept(n);
    let connectionTokens: string | null = null;
    for (let k = 0; k < n; k++) {
      const id = fs.id(k);
      // hop-by-hop (RFC 9110 §7.6.1), body framing (a 1xx has no body) and the sidecar's own echo
      kept[k] =
        id === FIELD_CONNECTION ||
        id === FIELD_KEEP_ALIVE ||
        id === FIELD_PROXY_CONNECTION ||
        id === FIELD_PROXY_AUTH ||
        id === FIELD_TE ||
        id === FIELD_UPGRADE ||
        id === FIELD_TRAILER ||
        id === FIELD_TRANSFER_ENCODING ||
        id === FIELD_CONTENT_LENGTH ||
        id === FIELD_SHADOW_CAPTURE
          ? 0
          : 1;
      if (id !== FIELD_CONNECTION || fs.valueIs(k, V_KEEP_ALIVE)) continue;
      if (fs.valueIs(k, V_CLOSE)) this.upstreamKeepAlive = false;
      else connectionTokens = connectionTokens === null ? fs.value(k) : `${connectionTokens},${fs.value(k)}`;
    }
    if (connectionTokens !== null && applyConnection(fs, kept, connectionTokens)) this.upstreamKeepAlive = false;
    const start = minor === 1 && eol > off + 12 ? b.latin1Slice(off, eol + 2) : `HTTP/1.1 ${status} ${reason}\r\n`;
    // a client that does not read holds the upstream back, as for a body
    if (!this.client.sock.write(copyHead(start, fs, kept, -1, '\r\n'))) this.pauseUpstream();
  }

  /** Takes the response body bytes in `b[off…]` per the framing; sets resState 2 at the end. */
  private takeBody(b: Buffer, off: number): Buffer[] | null {
    const f = this.resFraming;
    if (f === Framing.None) {
      this.resState = 2;
      if (off < b.length) this.upstreamKeepAlive = false;
      return null;
    }
    if (off >= b.length) return null;
    if (f === Framing.Length) {
      const take = Math.min(this.resRemaining, b.length - off);
      this.resRemaining -= take;
      const part = off === 0 && take === b.length ? b : b.subarray(off, off + take);
      this.onResData?.(part);
      if (this.resRemaining === 0) {
        this.resState = 2;
        if (off + take < b.length) this.upstreamKeepAlive = false;
      }
      return [part];
    }
    if (f === Framing.Chunked) {
      let end: number;
      if (this.dechunk) {
        const parts: Buffer[] = [];
        end = this.resDecoder!.push(b, off, (x) => {
          parts.push(x);
          this.onResData?.(x);
        });
        if (end !== -1) {
          this.resState = 2;
          if (end < b.length) this.upstreamKeepAlive = false;
        }
        return parts;
      }
      end = this.resDecoder!.push(b, off, this.onResData);
      const stop = end === -1 ? b.length : end;
      if (end !== -1) {
        this.resState = 2;
        if (end < b.length) this.upstreamKeepAlive = false;
      }
      return [off === 0 && stop === b.length ? b : b.subarray(off, stop)];
    }
    // close-delimited: everything until the upstream closes
    const part = off === 0 ? b : b.subarray(off);
    this.onResData?.(part);
    return [part];
  }

  /** The response ended cleanly. */
  private complete(): void {
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
  private requestMalformed(err: HttpSyntaxError): void {
    this.dropUpstream();
    if (this.resState === 0) {
      this.finished = true;
      this.client.answer(400, err.code, err.message, this.echo, true);
      this.client.exchangeDone(true);
      this.proxy.finish(this, 'bad_request');
    } else this.cutClient('bad_request');
  }

  onUpstreamEnd(): void {
    if (this.resState === 1 && this.resFraming === Framing.Close) {
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
    if (this.resState === 1 && this.resFraming === Framing.Close) {
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

  private upstreamInvalid(message: string): void {
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
  /** why the tee was given up, for the echo header */
  abandonedFor: string | null = null;
  private responseBytes = 0;

  constructor(
    readonly decision: Extract<SampleDecision, { kind: 'sampled' }>,
    private readonly publisher: CapturePublisher,
    private readonly metrics: SidecarMetrics,
    private readonly maxRequestBytes: number,
    private readonly maxResponseBytes: number,
    readonly startMs: number,
    /** names for the skip marker of a body that outgrew the capture (skip-marker.ts) */
    private readonly names?: NatsNames,
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
    this.abandonedFor = reason;
    this.publisher.release(this.heldBytes);
    this.heldBytes = 0;
    this.chunks = [];
    this.response = null;
    if (reason === 'too_large' && this.names)
      this.publisher.enqueueMarker(skipMarker(this.names, this.decision, 'too_large', this.bytes));
    this.metrics.capture(reason === 'queue_full' ? 'dropped' : 'excluded', reason);
  }
}
