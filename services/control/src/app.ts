import { Readable } from 'node:stream';
import { registerHttpTelemetry, requestId, requestTraceContext } from './http-telemetry.js';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Keyring } from '@shadowplane/artifacts';
import { openKv, type Bus } from '@shadowplane/bus';
import {
  contentHash,
  isShadowplaneError,
  Outcome,
  OutcomeRecord,
  OUTCOMES_NO_CAMPAIGN,
  ShadowplaneError,
  type ProviderEntry,
} from '@shadowplane/contracts';
import { ApiKeyStore, type ApiKeyEntry, type Principal, type Scope } from './auth.js';
import { BaselineService, baselineHandlers } from './baselines.js';
import { CampaignService, type LaunchOptions } from './campaigns.js';
import { DEFAULT_BODY_LIMIT_BYTES } from './config.js';
import { invalidRequest, parseOr400 } from './errors.js';
import { readPaidDispatch, writePaidDispatch } from './flags.js';
import { ControlMetrics } from './metrics.js';
import { buildOpenApi } from './openapi.js';
import type { ReportsPort } from './reports-port.js';
import { fastifyPath, LaunchOptionsBody, pathRegex, QueryBool, ROUTES } from './routes.js';
import { SuiteService } from './suites.js';
import { CampaignSummary, FlagUpdate } from './views.js';

/** Everything the control API needs, built once by `main` (or a test). */
export interface ControlAppDeps {
  bus: Bus;
  /** the operator allowlist; arms may only name these ids */
  providers: readonly ProviderEntry[];
  apiKeys: ApiKeyEntry[];
  reports: ReportsPort;
  logger: Logger;
  registry: Registry;
  /** service version for /openapi.json (default 0.1.0) */
  version?: string;
  /** largest request body, bytes (default 1 MiB) */
  bodyLimitBytes?: number;
  /** envelopes per call type a dry run samples (default 200) */
  captureSample?: number;
  /** artifact keyring for ?outputs=1 exports; absent → such exports are refused */
  keyring?: Keyring;
  /** readiness beyond the NATS connection (default always true) */
  ready?: () => boolean;
  /** timeout of a provisional report request to the verdict service, ms (default 15,000) */
  reportRequestTimeoutMs?: number;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    scope?: Scope | null;
    routePath?: string;
  }
  interface FastifyRequest {
    principal: Principal | null;
    startedAt: bigint;
  }
}

const TRUE = new Set(['true', '1']);

function queryFlag(req: FastifyRequest, name: string): boolean {
  const v = (req.query as Record<string, unknown>)[name];
  if (v === undefined) return false;
  const r = QueryBool.safeParse(v);
  if (!r.success) throw invalidRequest([{ path: name, message: 'must be true, false, 1 or 0' }]);
  return TRUE.has(r.data);
}

/** The path parameter a URL would fill (`id`, `hash`), for naming it in a router-level error. */
function paramOf(url: string): string {
  const path = url.split('?')[0] ?? '';
  for (const r of ROUTES) {
    const m = /\{(\w+)\}/.exec(r.path);
    if (m && pathRegex(r.path).test(path)) return m[1]!;
  }
  return '(url)';
}

/** Maps a fastify router error (raised before routing, so before auth) to a 4xx ShadowplaneError. */
export function frameworkError(err: { code?: string }, url: string): ShadowplaneError {
  const field = paramOf(url);
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return invalidRequest([{ path: field, message: 'too long' }]);
  return invalidRequest([{ path: field, message: 'not a valid URL component (bad percent-encoding)' }]);
}

function isDependencyError(e: unknown): boolean {
  const name = (e as { name?: string })?.name ?? '';
  const msg = String((e as Error)?.message ?? '');
  return (
    /Timeout|ClosedConnection|NoResponders|RequestError|Connection/i.test(name) ||
    /TIMEOUT|CONNECTION_CLOSED|connection closed|no responders|timeout/i.test(msg)
  );
}

/**
 * Builds the control API (fastify) over the bus. Call `.ready()` (or `.listen()`) before use;
 * tests use `.inject()`. Routes, scopes and the OpenAPI document come from one table (ROUTES).
 * Errors: every non-2xx answer is `{error:{code,message,details?}}` with a code from ERROR_CODES.
 */
export async function buildControlApp(deps: ControlAppDeps): Promise<FastifyInstance> {
  const bodyLimit = deps.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const metrics = new ControlMetrics(deps.registry);
  const keys = new ApiKeyStore(deps.apiKeys);
  const names = deps.bus.names;
  const [campaignsKv, budgetKv, flagsKv]: [KV, KV, KV] = await Promise.all([
    openKv(deps.bus, names.buckets.campaigns),
    openKv(deps.bus, names.buckets.budget),
    openKv(deps.bus, names.buckets.flags),
  ]);
  const svc = new CampaignService({
    bus: deps.bus,
    campaignsKv,
    budgetKv,
    flagsKv,
    providers: deps.providers,
    captureSample: deps.captureSample ?? 200,
    readProgress: async (id) => (await deps.reports.readProgress(deps.bus, id)) ?? null,
    readDatasetCard: (hash) => deps.reports.readDatasetCard(deps.bus, hash),
  });
  const baselines = new BaselineService({
    bus: deps.bus,
    reportsKv: await openKv(deps.bus, names.buckets.reports),
    campaigns: svc,
    reports: deps.reports,
  });
  const suites = await SuiteService.open(deps.bus, { campaigns: svc, reports: deps.reports });
  const openapi = buildOpenApi(deps.version ?? '0.1.0');
  // NATS connectivity for /readyz: the client reconnects forever, so "not closed" is not "connected".
  let natsConnected = !deps.bus.nc.isClosed();
  void (async () => {
    for await (const st of deps.bus.nc.status()) {
      if (st.type === 'disconnect' || st.type === 'reconnecting' || st.type === 'close') natsConnected = false;
      else if (st.type === 'reconnect') natsConnected = true;
    }
  })().catch(() => {
    natsConnected = false;
  });

  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    bodyLimit,
    return503OnClosing: true,
    exposeHeadRoutes: false,
    genReqId: requestId,
    // Errors the router raises before any route runs (a path parameter over maxParamLength, a
    // malformed percent-encoding) get our error shape too, never fastify's bare one.
    frameworkErrors: (err, req, reply) => {
      const e = frameworkError(err, req.url);
      void (reply as FastifyReply).status(e.httpStatus).type('application/json').send(e.toBody());
    },
  });
  registerHttpTelemetry(app);
  app.decorateRequest('principal', null);
  app.decorateRequest('startedAt', 0n);

  // Bodies are JSON: application/json (any parameters, e.g. charset) and the +json suffix types are
  // parsed, a malformed one is 400 invalid_json; a body of any other media type (a form post, text)
  // is 415 unsupported_media_type naming what was sent. An empty body is no body, whatever its type.
  app.removeAllContentTypeParsers();
  const parseJson = (text: string, done: (err: Error | null, body?: unknown) => void): void => {
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (e) {
      done(
        new ShadowplaneError('invalid_json', `the request body is not valid JSON: ${(e as Error).message}`, {
          details: { issues: [{ path: '(body)', message: 'not valid JSON' }] },
        }),
        undefined,
      );
    }
  };
  for (const type of ['application/json', /^application\/[a-z0-9.+-]*\+json$/i]) {
    app.addContentTypeParser(type, { parseAs: 'string', bodyLimit }, (_req, body, done) =>
      parseJson(typeof body === 'string' ? body : body.toString('utf8'), done),
    );
  }
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    const sent = req.headers['content-type'];
    done(
      new ShadowplaneError(
        'unsupported_media_type',
        sent
          ? `the request body is ${sent}; send it as JSON with Content-Type: application/json`
          : 'the request body has no Content-Type; send it as JSON with Content-Type: application/json',
        {
          details: {
            content_type: sent ?? null,
            accepted: ['application/json'],
            issues: [{ path: '(body)', message: 'not application/json' }],
          },
        },
      ),
      undefined,
    );
  });

  app.addHook('onRequest', async (req, reply) => {
    req.startedAt = process.hrtime.bigint();
    const scope = req.routeOptions.config.scope;
    if (!scope) return;
    const principal = keys.authenticate(req.headers.authorization);
    if (!principal) {
      metrics.authFailures.inc({ reason: 'unauthenticated' });
      const presented = req.headers.authorization !== undefined;
      reply.header(
        'www-authenticate',
        presented ? 'Bearer realm="shadowplane", error="invalid_token"' : 'Bearer realm="shadowplane"',
      );
      throw new ShadowplaneError(
        'unauthenticated',
        presented ? 'the bearer key is not recognised' : 'an Authorization: Bearer <key> header is required',
      );
    }
    if (!principal.scopes.has(scope)) {
      metrics.authFailures.inc({ reason: 'forbidden' });
      throw new ShadowplaneError('forbidden', `this route needs the ${scope} scope`, {
        details: { required_scope: scope, key_id: principal.id },
      });
    }
    req.principal = principal;
  });

  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.config.routePath ?? 'unmatched';
    const seconds = Number(process.hrtime.bigint() - req.startedAt) / 1e9;
    metrics.requests.inc({ method: req.method, route, status: `${Math.floor(reply.statusCode / 100)}xx` });
    metrics.duration.observe({ method: req.method, route }, seconds);
    req.log.info(
      {
        method: req.method,
        route,
        statusCode: reply.statusCode,
        durationMs: Math.round(seconds * 1e4) / 10,
        keyId: req.principal?.id ?? null,
      },
      'request',
    );
  });

  app.setErrorHandler(async (err: unknown, req, reply) => {
    let e: ShadowplaneError;
    const fe = err as { code?: string; statusCode?: number; message?: string };
    if (isShadowplaneError(err)) e = err as ShadowplaneError;
    else if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      e = new ShadowplaneError('payload_too_large', `the request body is larger than ${bodyLimit} bytes`, {
        details: { limit_bytes: bodyLimit, issues: [{ path: '(body)', message: `larger than ${bodyLimit} bytes` }] },
      });
    else if (fe.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH' || fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY')
      e = new ShadowplaneError('invalid_request', fe.message ?? 'bad request body');
    else if (isDependencyError(err))
      e = new ShadowplaneError('dependency_unavailable', 'NATS is not reachable; try again', { cause: err });
    else if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500)
      e = new ShadowplaneError('invalid_request', fe.message ?? 'bad request');
    else e = new ShadowplaneError('internal', 'an unexpected error; see the logs', { cause: err });
    if (e.code === 'internal') req.log.error({ err, code: e.code }, 'request failed');
    else if (e.httpStatus >= 500) req.log.warn({ code: e.code, message: e.message }, 'request refused');
    return reply.status(e.httpStatus).type('application/json').send(e.toBody());
  });

  app.setNotFoundHandler(async (req, reply) => {
    const path = req.url.split('?')[0] ?? '';
    const allowed = ROUTES.filter((r) => pathRegex(r.path).test(path)).map((r) => r.method);
    if (allowed.length) {
      reply.header('allow', [...new Set(allowed)].join(', '));
      return reply.status(405).send(
        new ShadowplaneError('method_not_allowed', `${req.method} is not allowed on ${path}`, {
          details: { allow: allowed },
        }).toBody(),
      );
    }
    return reply.status(404).send(new ShadowplaneError('not_found', `no route ${req.method} ${path}`).toBody());
  });

  const handlers: Record<string, (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>> = {
    healthz: async () => ({ status: 'ok' }),
    readyz: async (_req, reply) => {
      const ok = natsConnected && !deps.bus.nc.isClosed() && (deps.ready?.() ?? true);
      return reply.status(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not_ready' });
    },
    metrics: async (_req, reply) => reply.type(deps.registry.contentType).send(await deps.registry.metrics()),
    openapi: async () => openapi,

    createCampaign: async (req, reply) => {
      const body = req.body;
      let specInput: unknown = body;
      const opts: LaunchOptions = { dryRun: queryFlag(req, 'dry_run'), requirePower: queryFlag(req, 'require_power') };
      if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
        const { dry_run, require_power, ...rest } = body as Record<string, unknown>;
        const o = parseOr400(LaunchOptionsBody, { dry_run, require_power });
        opts.dryRun ||= o.dry_run === true;
        opts.requirePower ||= o.require_power === true;
        specInput = rest;
      }
      // compare mode: resolve and pin the baseline run before the spec is validated
      specInput = await baselines.prepare(specInput);
      let spec;
      try {
        spec = svc.validateSpec(specInput);
      } catch (e) {
        metrics.launches.inc({
          outcome: isShadowplaneError(e) && e.code === 'unknown_provider' ? 'unknown_provider' : 'invalid',
        });
        throw e;
      }
      try {
        await suites.checkSource(spec);
      } catch (e) {
        metrics.launches.inc({ outcome: 'invalid' });
        throw e;
      }
      if (opts.dryRun) {
        const plan = await svc.plan(spec, opts);
        metrics.launches.inc({ outcome: 'dry_run' });
        return reply.status(200).send(plan);
      }
      try {
        const c = await svc.launch(spec, opts);
        metrics.launches.inc({ outcome: 'launched' });
        req.log.info({ campaignId: c.id, runIndex: c.run_index, keyId: req.principal?.id }, 'campaign launched');
        return reply
          .status(201)
          .header('location', `/v1/campaigns/${c.id}`)
          .send(await svc.status(c.id));
      } catch (e) {
        const code = isShadowplaneError(e) ? e.code : 'error';
        metrics.launches.inc({
          outcome: code === 'underpowered' || code === 'paid_dispatch_disabled' ? code : 'error',
        });
        throw e;
      }
    },
    listCampaigns: async (req) => {
      const q = req.query as Record<string, unknown>;
      const state =
        q['state'] === undefined ? undefined : parseOr400(CampaignSummary.shape.state, q['state'], ['state']);
      const all = (await svc.list()).filter((c) => state === undefined || c.state === state);
      const campaigns = await Promise.all(
        all.map(async (c) => ({
          id: c.id,
          name: c.spec.name,
          suite: c.spec.suite,
          call_types: c.spec.call_types,
          state: c.state,
          state_reason: c.state_reason,
          run_index: c.run_index,
          created_at: c.created_at,
          updated_at: c.updated_at,
          spend: await svc.spend(c.id),
        })),
      );
      return { campaigns };
    },
    getCampaign: async (req) => svc.status((req.params as { id: string }).id),
    pauseCampaign: async (req) => transition(req, 'pause'),
    resumeCampaign: async (req) => transition(req, 'resume'),
    stopCampaign: async (req) => transition(req, 'stop'),

    getReport: async (req, reply) => {
      const id = (req.params as { id: string }).id;
      await svc.get(id);
      const q = req.query as Record<string, unknown>;
      const format = q['format'] === undefined ? 'json' : q['format'];
      if (format !== 'json' && format !== 'html' && format !== 'bundle')
        throw invalidRequest([{ path: 'format', message: 'must be json, html or bundle' }]);
      if (queryFlag(req, 'provisional'))
        await deps.reports.requestReport(deps.bus, id, {
          timeoutMs: deps.reportRequestTimeoutMs ?? 15_000,
          traceContext: requestTraceContext(req),
        });
      const latest = await deps.reports.readLatestReport(deps.bus, id);
      if (!latest)
        throw new ShadowplaneError('report_not_ready', `no report for ${id} yet`, { details: { campaign_id: id } });
      reply
        .header('x-shadow-report-id', latest.reportId)
        .header('x-shadow-report-provisional', String(latest.provisional));
      if (latest.runRecordId) reply.header('x-shadow-run-record-id', latest.runRecordId);
      if (format === 'html') {
        if (!latest.html)
          throw new ShadowplaneError('report_not_ready', `report ${latest.reportId} has no HTML rendering`);
        return reply.type('text/html; charset=utf-8').send(latest.html);
      }
      if (format === 'bundle') return reply.type('application/json').send(JSON.stringify(latest.bundle));
      return {
        report_id: latest.reportId,
        provisional: latest.provisional,
        report: latest.report,
        run_record_id: latest.runRecordId,
        run_record: latest.runRecord ?? null,
      };
    },
    exportObservations: async (req, reply) => {
      const id = (req.params as { id: string }).id;
      await svc.get(id);
      const outputs = queryFlag(req, 'outputs');
      if (outputs && !req.principal?.scopes.has('admin'))
        throw new ShadowplaneError('forbidden', 'exporting outputs needs the admin scope too', {
          details: { required_scope: 'admin' },
        });
      if (outputs && deps.keyring === undefined)
        throw invalidRequest([
          { path: 'outputs', message: 'no artifact keyring is configured on this control instance' },
        ]);
      const iter = deps.reports.exportObservations(
        deps.bus,
        id,
        outputs && deps.keyring ? { keyring: deps.keyring } : {},
      );
      async function* lines() {
        for await (const m of iter) yield `${JSON.stringify(m)}\n`;
      }
      return reply.type('application/x-ndjson').send(Readable.from(lines()));
    },
    addOutcome: async (req, reply) => {
      const o = parseOr400(Outcome, req.body);
      if (o.campaign_id !== undefined)
        await svc.get(o.campaign_id).catch((e: unknown) => {
          throw isShadowplaneError(e) && e.code === 'not_found'
            ? new ShadowplaneError('not_found', `no campaign ${o.campaign_id}`, {
                details: { issues: [{ path: 'campaign_id', message: 'no such campaign' }] },
              })
            : e;
        });
      const outcome_id = contentHash(o);
      const record = OutcomeRecord.parse({
        schema: 'shadow.outcome/v1',
        outcome_id,
        campaign_id: o.campaign_id ?? null,
        envelope_id: o.envelope_id ?? null,
        item_hash: o.item_hash ?? null,
        arm_id: o.arm_id ?? null,
        result: o.result,
        score: o.score ?? (o.result === 'pass' ? 1 : o.result === 'fail' ? 0 : null),
        source: o.source,
        closes_task: o.closes_task,
        received_at: o.at ?? new Date().toISOString(),
      });
      const subject = names.obsSubject(o.campaign_id ?? OUTCOMES_NO_CAMPAIGN);
      const ack = await deps.bus.js.publish(subject, JSON.stringify(record), { msgID: outcome_id });
      return reply.status(ack.duplicate ? 200 : 202).send({ outcome_id, subject, duplicate: ack.duplicate });
    },
    getDatasetCard: async (req) => {
      const hash = (req.params as { hash: string }).hash;
      if (!/^[0-9a-f]{64}$/.test(hash))
        throw invalidRequest([{ path: 'hash', message: 'must be 64 lowercase hex characters' }]);
      const card = (await deps.reports.readDatasetCard(deps.bus, hash)) ?? (await suites.readCard(hash));
      if (!card) throw new ShadowplaneError('not_found', `no dataset card ${hash}`, { details: { field: 'hash' } });
      return card;
    },
    getSuiteStatus: async (req) =>
      suites.status((req.params as { suite: string }).suite, req.query as Record<string, unknown>),
    freezeSuite: async (req, reply) => {
      const r = await suites.freeze((req.params as { suite: string }).suite, req.body);
      req.log.info(
        { suite: r.suite, datasets: r.datasets.map((d) => [d.call_type, d.dataset_hash, d.created]) },
        'suite frozen',
      );
      return reply.status(r.datasets.some((d) => d.created) ? 201 : 200).send(r);
    },
    getPaidDispatch: async () => readPaidDispatch(flagsKv),
    setPaidDispatch: async (req) => {
      const u = parseOr400(FlagUpdate, req.body);
      const v = await writePaidDispatch(flagsKv, u.enabled, req.principal?.id ?? 'unknown', u.reason);
      req.log.warn({ flag: 'paid_dispatch', enabled: u.enabled, keyId: req.principal?.id }, 'paid_dispatch changed');
      return v;
    },
  };

  Object.assign(handlers, baselineHandlers(baselines));

  async function transition(req: FastifyRequest, action: 'pause' | 'resume' | 'stop') {
    const id = (req.params as { id: string }).id;
    let c;
    try {
      const before = (await svc.get(id)).state;
      c = await svc.transition(id, action, req.principal?.id ?? 'unknown');
      metrics.transitions.inc({ action, outcome: c.state === before ? 'unchanged' : 'changed' });
    } catch (e) {
      metrics.transitions.inc({
        action,
        outcome: isShadowplaneError(e) ? (e.code === 'conflict' ? 'conflict' : 'refused') : 'error',
      });
      throw e;
    }
    // the state this change produced (or found), not a later concurrent change's
    return svc.status(id, c);
  }

  for (const r of ROUTES) {
    const handler = handlers[r.operationId];
    if (!handler) throw new Error(`no handler for ${r.operationId}`);
    app.route({
      method: r.method,
      url: fastifyPath(r.path),
      config: { scope: r.scope, routePath: r.path },
      handler: handler as (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
    });
  }
  return app;
}
