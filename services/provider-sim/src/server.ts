import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleepTimer } from 'node:timers/promises';
import { itemHash, type Api } from '@shadowplane/contracts';
import { WIRE_ADAPTERS } from '@shadowplane/providers';
import type { FaultKind, SimConfig } from './config.js';
import { FAULT_KINDS } from './config.js';
import type { KnownAnswers } from './dataset.js';
import { SimEngine, type Plan } from './engine.js';
import { openaiDuration, type SlidingWindowLimiter } from './limits.js';
import { SimMetrics } from './metrics.js';
import { isRequestError, parseRequest } from './prompt.js';
import { errorResponse, type ErrorKind, type WireResponse } from './provider-errors.js';
import { hashAlnum } from './rng.js';
import { Lru } from './tokens.js';
import { renderJson, renderStream } from './wire.js';

/**
 * One API call as the sim saw it, for `GET /sim/calls` and `calls()`.
 * - `seq`: 1-based arrival order (reset by `reset()`)
 * - `model`: the model name as requested ('' when the body had none)
 * - `api`: `openai.chat` | `openai.responses` | `anthropic.messages` | `openrouter.chat`
 * - `requestHash`: contracts `itemHash(api, path, body)` of the request ('' when not JSON)
 * - `startedAtMs` / `endedAtMs`: wall clock (epoch ms); `endedAtMs` null while in flight
 * - `status`: HTTP status sent; 0 when none was sent (e.g. a hang the client gave up on)
 * - `fault`: the injected or enforced fault (`rate_limit` also for an enforced RPM/TPM 429)
 * - `authPresent`: an `Authorization` or `x-api-key` header was present (values never kept)
 */
export interface SimCall {
  seq: number;
  model: string;
  api: string;
  path: string;
  requestHash: string;
  startedAtMs: number;
  endedAtMs: number | null;
  status: number;
  fault: string | null;
  stream: boolean;
  authPresent: boolean;
}

/** Minimal logger surface (pino-compatible). */
export interface SimLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

/** The public path of each wire API (libs/providers adapters); one URL form per API, as the real hosts serve. */
const API_ROUTES: Readonly<Record<string, Api>> = Object.fromEntries(
  Object.values(WIRE_ADAPTERS).map((a) => [a.publicPath, a.api]),
);

class TooLarge extends Error {}

function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let n = 0;
    req.on('data', (c: Buffer) => {
      n += c.length;
      if (n > max) {
        reject(new TooLarge());
        req.removeAllListeners('data');
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * The life of one request: ended when the client goes away or the server closes. The
 * AbortController is made only when something actually sleeps (most requests never do).
 */
class RequestLife {
  ended = false;
  constructor(readonly call: SimCall) {}
  private ac: AbortController | null = null;
  get signal(): AbortSignal {
    this.ac ??= new AbortController();
    if (this.ended) this.ac.abort();
    return this.ac.signal;
  }
  end(): void {
    this.ended = true;
    this.ac?.abort();
  }
}

/** Sleeps `ms` unless the request ends first; resolves false when it ended. */
async function sleep(ms: number, life: RequestLife): Promise<boolean> {
  if (life.ended) return false;
  if (ms <= 0) return true;
  try {
    await sleepTimer(ms, undefined, { signal: life.signal });
    return true;
  } catch {
    return false;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * The HTTP side of the sim: routing, the call log, metrics, latency and fault execution.
 * Construct, then `listen()`; `close()` ends in-flight requests (hangs included).
 */
export class SimServer {
  readonly engine: SimEngine;
  readonly metrics = new SimMetrics();
  private readonly server: Server;
  private log: SimCall[] = [];
  private seq = 0;
  private readonly inflight = new Set<RequestLife>();
  private readonly hashCache = new Lru<string, string>(10_000);

  constructor(
    readonly config: SimConfig,
    known: KnownAnswers | null,
    private readonly logger: SimLogger | null = null,
  ) {
    this.engine = new SimEngine(config, known);
    this.server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
      this.route(req, res).catch((err: unknown) => {
        this.logger?.error({ err }, 'request failed');
        if (!res.headersSent)
          sendJson(res, 500, { error: { code: 'internal', message: 'internal error in provider-sim' } });
        else res.destroy();
      });
    });
  }

  /** Starts listening; resolves with the bound port. */
  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  /** Stops accepting, aborts in-flight requests (hangs, stalls) and closes every connection. */
  close(): Promise<void> {
    for (const life of this.inflight) life.end();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /** The call log, oldest first (a copy). */
  calls(): SimCall[] {
    return this.log.map((c) => ({ ...c }));
  }

  /** Clears the call log and sequence, limiter windows, prompt caches and fault counters. */
  reset(): void {
    this.log = [];
    this.seq = 0;
    this.engine.reset();
  }

  /** itemHash of a body, cached by its raw text (load tests replay the same bodies). */
  private hashOf(api: Api, path: string, raw: Buffer, body: unknown): string {
    if (raw.length > 16_384) return itemHash(api, path, body);
    const k = `${api}\u0000${path}\u0000${raw.toString('latin1')}`;
    let h = this.hashCache.get(k);
    if (h === undefined) {
      h = itemHash(api, path, body);
      this.hashCache.set(k, h);
    }
    return h;
  }

  private pushCall(c: SimCall): void {
    this.log.push(c);
    const max = this.config.call_log_max;
    if (this.log.length > max + Math.max(16, max >> 4)) this.log.splice(0, this.log.length - max);
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawUrl = req.url ?? '/';
    const qi = rawUrl.indexOf('?');
    const path = qi < 0 ? rawUrl : rawUrl.slice(0, qi);
    const method = req.method ?? 'GET';
    const api = API_ROUTES[path];
    if (api !== undefined) {
      if (method !== 'POST')
        return sendJson(res, 405, {
          error: { code: 'method_not_allowed', message: `${method} ${path} is not allowed; use POST` },
        });
      return this.handleApi(api, path, req, res);
    }
    if (method === 'GET' && path === '/healthz')
      return sendJson(res, 200, { status: 'ok', models: this.engine.modelNames() });
    if (method === 'GET' && path === '/metrics') {
      const text = await this.metrics.registry.metrics();
      res.writeHead(200, { 'content-type': this.metrics.registry.contentType });
      res.end(text);
      return;
    }
    if (method === 'GET' && path === '/sim/calls') {
      const since = Number(new URLSearchParams(qi < 0 ? '' : rawUrl.slice(qi + 1)).get('since') ?? '0');
      if (!Number.isInteger(since) || since < 0)
        return sendJson(res, 400, {
          error: {
            code: 'invalid_request',
            message: 'since must be a non-negative integer seq',
            details: { field: 'since' },
          },
        });
      return sendJson(
        res,
        200,
        this.log.filter((c) => c.seq > since),
      );
    }
    if (method === 'POST' && path === '/sim/reset') {
      this.reset();
      return sendJson(res, 200, { reset: true });
    }
    if (method === 'GET' && (path === '/v1/models' || path === '/api/v1/models')) return this.listModels(req, res);
    return sendJson(res, 404, { error: { code: 'not_found', message: `no route ${method} ${path}` } });
  }

  private listModels(req: IncomingMessage, res: ServerResponse): void {
    const names = this.engine.modelNames().flatMap((n) => [n, ...this.engine.model(n).aliases]);
    const created = this.config.epoch_s;
    if (req.headers['anthropic-version'] !== undefined) {
      const data = names.map((id) => ({
        type: 'model',
        id,
        display_name: id,
        created_at: new Date(created * 1000).toISOString(),
      }));
      return sendJson(res, 200, { data, has_more: false, first_id: names[0] ?? null, last_id: names.at(-1) ?? null });
    }
    sendJson(res, 200, {
      object: 'list',
      data: names.map((id) => ({ id, object: 'model', created, owned_by: 'shadowplane-sim' })),
    });
  }

  private async handleApi(api: Api, path: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const startedAtMs = Date.now();
    const t0 = performance.now();
    const seq = ++this.seq;
    const authPresent = req.headers.authorization !== undefined || req.headers['x-api-key'] !== undefined;
    const call: SimCall = {
      seq,
      model: '',
      api,
      path,
      requestHash: '',
      startedAtMs,
      endedAtMs: null,
      status: 0,
      fault: null,
      stream: false,
      authPresent,
    };
    this.pushCall(call);
    // aborted when the response closes (client gone) or the server closes; ends sleeps early
    const ac = new RequestLife(call);
    this.inflight.add(ac);
    let modelLabel = 'unknown';
    res.on('close', () => {
      this.inflight.delete(ac);
      if (!res.writableFinished) ac.end();
      call.endedAtMs ??= Date.now();
      call.status = res.headersSent ? res.statusCode : 0;
      this.metrics.countRequest(
        modelLabel,
        api,
        String(call.status),
        call.fault ?? 'none',
        (performance.now() - t0) / 1000,
      );
    });
    const requestId = `req_${hashAlnum(24, this.config.seed, 'reqid', seq)}`;
    const fail = (e: ErrorKind) => this.writeWire(res, ac, errorResponse(api, e, requestId));

    let raw: Buffer;
    try {
      raw = await readBody(req, this.config.max_body_bytes);
    } catch (e) {
      if (e instanceof TooLarge) {
        res.setHeader('connection', 'close');
        return fail({ kind: 'payload_too_large' });
      }
      throw e;
    }
    if (this.config.require_auth && !authPresent) return fail({ kind: 'unauthenticated' });
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return fail({ kind: 'invalid_json' });
    }
    call.requestHash = this.hashOf(api, path, raw, body);
    const parsed = parseRequest(api, body);
    if (isRequestError(parsed)) {
      const m = (body as { model?: unknown } | null)?.model;
      if (typeof m === 'string') call.model = m;
      return fail({ kind: 'invalid_request', param: parsed.param, message: parsed.message, code: parsed.code });
    }
    call.model = parsed.model;
    call.stream = parsed.stream;
    const model = this.engine.resolve(parsed.model);
    if (model === null) return fail({ kind: 'model_not_found', model: parsed.model });
    modelLabel = model;
    const cfg = this.engine.model(model);

    // fault: header first, else a seeded draw by rate
    const fh = req.headers['x-sim-fault'];
    let fault: FaultKind | null = null;
    if (typeof fh === 'string' && fh !== '') {
      if (!(FAULT_KINDS as readonly string[]).includes(fh)) {
        return fail({
          kind: 'invalid_request',
          param: 'x-sim-fault',
          message: `x-sim-fault must be one of ${FAULT_KINDS.join(', ')}`,
          code: null,
        });
      }
      fault = fh as FaultKind;
    } else fault = this.engine.drawFault(model);
    const ah = req.headers['x-sim-fault-after-ms'];
    if (ah !== undefined && (typeof ah !== 'string' || !/^\d{1,9}$/.test(ah))) {
      return fail({
        kind: 'invalid_request',
        param: 'x-sim-fault-after-ms',
        message: 'x-sim-fault-after-ms must be a whole number of milliseconds (0–999999999)',
        code: null,
      });
    }
    const afterMs = ah === undefined ? null : Number(ah);

    // limits and request validation, in the order the providers apply them
    const input = this.engine.inputTokens(parsed);
    const limiter = this.engine.limiter(model);
    const now = Date.now();
    const lim = limiter.check(now, input);
    if (!lim.ok) {
      call.fault = 'rate_limit';
      const e: ErrorKind = {
        kind: 'rate_limit',
        model: parsed.model,
        limit: lim.limit,
        limitValue: lim.limit === 'requests' ? limiter.rpm : limiter.tpm,
        retryAfterMs: lim.retryAfterMs,
      };
      return this.writeWire(
        res,
        ac,
        withHeaders(errorResponse(api, e, requestId), this.limitHeaders(api, limiter, now)),
      );
    }
    if (input > cfg.context_window) {
      return fail({
        kind: 'invalid_request',
        param: 'messages',
        code: 'context_length_exceeded',
        message:
          api === 'anthropic.messages'
            ? `prompt is too long: ${input} tokens > ${cfg.context_window} maximum`
            : `This model's maximum context length is ${cfg.context_window} tokens. However, your messages resulted in ${input} tokens. Please reduce the length of the messages.`,
      });
    }
    if (parsed.maxTokens !== null && parsed.maxTokens > cfg.max_output_tokens) {
      return fail({
        kind: 'invalid_request',
        param: api === 'openai.responses' ? 'max_output_tokens' : 'max_tokens',
        code: 'invalid_value',
        message:
          api === 'anthropic.messages'
            ? `max_tokens: ${parsed.maxTokens} > ${cfg.max_output_tokens}, which is the maximum allowed number of output tokens for ${parsed.model}`
            : `max_tokens is too large: ${parsed.maxTokens}. This model supports at most ${cfg.max_output_tokens} completion tokens, whereas you provided ${parsed.maxTokens}.`,
      });
    }
    if (api === 'openrouter.chat' && !this.engine.pinServable(model, parsed))
      return fail({ kind: 'no_endpoints', model: parsed.model });

    call.fault = fault;
    if (fault === 'rate_limit' || fault === 'server_error' || fault === 'overloaded') {
      if (afterMs !== null && !(await sleep(afterMs, ac))) return;
      const e: ErrorKind =
        fault === 'rate_limit'
          ? { kind: 'rate_limit', model: parsed.model, limit: 'requests', limitValue: limiter.rpm, retryAfterMs: 1000 }
          : { kind: fault };
      return this.writeWire(
        res,
        ac,
        withHeaders(
          errorResponse(api, e, requestId),
          fault === 'rate_limit' ? this.limitHeaders(api, limiter, now) : {},
        ),
      );
    }

    const occ = this.engine.occurrence(call.requestHash);
    const plan = this.engine.plan(model, parsed, call.requestHash, occ, now);
    limiter.record(now, plan.tpmTokens);
    this.metrics.countTokens(model, plan.completion.usage);

    if (fault === 'hang' && !(await sleep(afterMs ?? this.config.hang_ms, ac))) return;
    const headers = this.limitHeaders(api, limiter, now);
    this.addIdHeaders(headers, api, requestId, plan);
    headers['x-sim-call-seq'] = String(seq);
    if (parsed.stream) await this.writeStream(res, plan, headers, fault, afterMs, ac);
    else await this.writeNonStream(res, plan, headers, fault, afterMs, ac);
  }

  private addIdHeaders(h: Record<string, string>, api: Api, requestId: string, plan: Plan): void {
    if (api === 'anthropic.messages') h['request-id'] = requestId;
    else if (api !== 'openrouter.chat') {
      h['x-request-id'] = requestId;
      h['openai-processing-ms'] = String(Math.round(plan.ttftMs + plan.generationMs));
      h['openai-version'] = '2020-10-01';
    }
  }

  /** Rate-limit headers in the provider's naming (none for OpenRouter, as recorded). */
  private limitHeaders(api: Api, l: SlidingWindowLimiter, nowMs: number): Record<string, string> {
    const s = l.state(nowMs);
    if (api === 'openrouter.chat') return {};
    if (api === 'anthropic.messages') {
      const at = (ms: number) => isoSeconds(Math.ceil((nowMs + ms) / 1000));
      return {
        'anthropic-ratelimit-requests-limit': String(l.rpm),
        'anthropic-ratelimit-requests-remaining': String(s.remainingRequests),
        'anthropic-ratelimit-requests-reset': at(s.resetRequestsMs),
        'anthropic-ratelimit-tokens-limit': String(l.tpm),
        'anthropic-ratelimit-tokens-remaining': String(s.remainingTokens),
        'anthropic-ratelimit-tokens-reset': at(s.resetTokensMs),
      };
    }
    return {
      'x-ratelimit-limit-requests': String(l.rpm),
      'x-ratelimit-limit-tokens': String(l.tpm),
      'x-ratelimit-remaining-requests': String(s.remainingRequests),
      'x-ratelimit-remaining-tokens': String(s.remainingTokens),
      'x-ratelimit-reset-requests': openaiDuration(s.resetRequestsMs),
      'x-ratelimit-reset-tokens': openaiDuration(s.resetTokensMs),
    };
  }

  private writeWire(res: ServerResponse, life: RequestLife, w: WireResponse): void {
    head(res, life, w.status, { ...w.headers, 'content-length': String(Buffer.byteLength(w.body)) });
    end(res, life, w.body);
  }

  private async writeNonStream(
    res: ServerResponse,
    plan: Plan,
    headers: Record<string, string>,
    fault: FaultKind | null,
    afterMs: number | null,
    signal: RequestLife,
  ): Promise<void> {
    const text = renderJson(plan.completion);
    if (!(await sleep(plan.ttftMs + plan.generationMs, signal))) return;
    const h = headers;
    h['content-type'] = 'application/json';
    if (fault === null || fault === 'hang') {
      // a string body lets node send headers and body in one write
      h['content-length'] = String(Buffer.byteLength(text));
      head(res, signal, 200, h);
      end(res, signal, text);
      return;
    }
    const body = Buffer.from(text, 'utf8');
    if (fault === 'malformed') {
      // a 2xx whose JSON is cut short: valid framing, unparseable body
      const bad = body.subarray(0, Math.max(1, Math.floor(body.length * 0.6)));
      head(res, signal, 200, { ...h, 'content-length': bad.length });
      end(res, signal, bad);
      return;
    }
    if (fault === 'stall' || fault === 'cut') {
      head(res, signal, 200, { ...h, 'content-length': body.length });
      await flushWrite(res, body.subarray(0, Math.floor(body.length / 2)));
      if (fault === 'cut') {
        if (afterMs !== null && !(await sleep(afterMs, signal))) return;
        res.destroy();
        return;
      }
      if (!(await sleep(afterMs ?? this.config.stall_ms, signal))) return;
      end(res, signal, body.subarray(Math.floor(body.length / 2)));
      return;
    }
    head(res, signal, 200, { ...h, 'content-length': body.length });
    end(res, signal, body);
  }

  private async writeStream(
    res: ServerResponse,
    plan: Plan,
    headers: Record<string, string>,
    fault: FaultKind | null,
    afterMs: number | null,
    signal: RequestLife,
  ): Promise<void> {
    const { frames, deltaStart, deltaEnd } = renderStream(plan.completion);
    const nDeltas = deltaEnd - deltaStart;
    // the fault point: the middle content delta (or the first frame after the prelude)
    const mid = deltaStart + Math.floor(nDeltas / 2);
    if (fault === 'malformed') {
      const f = frames[mid]!;
      frames[mid] = f.slice(0, Math.max(8, Math.floor(f.length / 2))) + '\n\n';
    }
    if (!(await sleep(plan.ttftMs, signal))) return;
    head(res, signal, 200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
    });
    const instant = plan.generationMs === 0 && fault !== 'stall' && fault !== 'cut';
    if (instant) {
      end(res, signal, frames.join(''));
      return;
    }
    // frame i (a content delta) is due at ttft + generation · (i − deltaStart + 1) / nDeltas
    const due = (i: number) =>
      i < deltaStart
        ? 0
        : nDeltas === 0
          ? plan.generationMs
          : (plan.generationMs * Math.min(nDeltas, i - deltaStart + 1)) / nDeltas;
    let start = performance.now();
    let i = 0;
    while (i < frames.length) {
      if ((fault === 'stall' || fault === 'cut') && i === mid) {
        if (fault === 'cut') {
          if (afterMs !== null && !(await sleep(afterMs, signal))) return;
          res.destroy();
          return;
        }
        const stallStart = performance.now();
        if (!(await sleep(afterMs ?? this.config.stall_ms, signal))) return;
        start += performance.now() - stallStart; // resume at the normal pace, not in a burst
        fault = null; // continue normally after the stall
      }
      const elapsed = performance.now() - start;
      let chunk = '';
      const stopAt =
        fault === 'stall' || fault === 'cut' ? Math.min(frames.length, i < mid ? mid : frames.length) : frames.length;
      while (i < stopAt && due(i) <= elapsed) chunk += frames[i++]!;
      // before a cut or stall, make sure what precedes it has reached the socket
      if (chunk) {
        if (i === mid && (fault === 'stall' || fault === 'cut')) await flushWrite(res, chunk);
        else res.write(chunk);
      }
      if (i >= frames.length) break;
      if (i === mid && (fault === 'stall' || fault === 'cut')) continue;
      if (!(await sleep(Math.max(1, due(i) - (performance.now() - start)), signal))) return;
    }
    end(res, signal);
  }
}

/** Writes and resolves once the data is handed to the OS (so a following destroy cannot drop it). */
function flushWrite(res: ServerResponse, chunk: string | Uint8Array): Promise<void> {
  return new Promise((resolve) => res.write(chunk, () => resolve()));
}

let isoCache = { s: -1, text: '' };
/** RFC 3339 UTC timestamp of epoch second `s` (cached: most headers in a second share it). */
function isoSeconds(s: number): string {
  if (isoCache.s !== s) isoCache = { s, text: new Date(s * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') };
  return isoCache.text;
}

/** Writes the status line and headers and records the status in the call log right away. */
function head(res: ServerResponse, life: RequestLife, status: number, headers: Record<string, string | number>): void {
  res.writeHead(status, headers);
  life.call.status = status;
}

/** Ends the response and records the end time in the call log right away. */
function end(res: ServerResponse, life: RequestLife, data?: string | Uint8Array): void {
  if (data === undefined) res.end();
  else res.end(data);
  life.call.endedAtMs = Date.now();
}

function withHeaders(w: WireResponse, h: Record<string, string>): WireResponse {
  return { ...w, headers: { ...w.headers, ...h } };
}
