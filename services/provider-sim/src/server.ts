import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { itemHash, type Api } from '@shadowplane/contracts';
import { WIRE_ADAPTERS } from '@shadowplane/providers';
import { RequestLife, sleep, type SimCall } from './call.js';
import type { FaultKind, SimConfig } from './config.js';
import { FAULT_KINDS } from './config.js';
import type { KnownAnswers } from './dataset.js';
import { SimEngine } from './engine.js';
import { readBody, sendJson, TooLarge, withHeaders } from './http-util.js';
import { SimMetrics } from './metrics.js';
import { isRequestError, parseRequest } from './prompt.js';
import { errorResponse, type ErrorKind } from './provider-errors.js';
import { writeNonStream, writeStream, writeWire } from './respond.js';
import { hashAlnum } from './rng.js';
import { addIdHeaders, limitHeaders } from './sim-headers.js';
import { Lru } from './tokens.js';

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
    const fail = (e: ErrorKind) => writeWire(res, ac, errorResponse(api, e, requestId));

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
      return writeWire(res, ac, withHeaders(errorResponse(api, e, requestId), limitHeaders(api, limiter, now)));
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
      return writeWire(
        res,
        ac,
        withHeaders(errorResponse(api, e, requestId), fault === 'rate_limit' ? limitHeaders(api, limiter, now) : {}),
      );
    }

    const occ = this.engine.occurrence(call.requestHash);
    const plan = this.engine.plan(model, parsed, call.requestHash, occ, now);
    limiter.record(now, plan.tpmTokens);
    this.metrics.countTokens(model, plan.completion.usage);

    if (fault === 'hang' && !(await sleep(afterMs ?? this.config.hang_ms, ac))) return;
    const headers = limitHeaders(api, limiter, now);
    addIdHeaders(headers, api, requestId, plan);
    headers['x-sim-call-seq'] = String(seq);
    if (parsed.stream) await writeStream(res, plan, headers, fault, afterMs, this.config.stall_ms, ac);
    else await writeNonStream(res, plan, headers, fault, afterMs, this.config.stall_ms, ac);
  }
}
