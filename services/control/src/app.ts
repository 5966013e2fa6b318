import { registerHttpTelemetry, requestId } from './http-telemetry.js';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Keyring } from '@shadowplane/artifacts';
import { openKv, type Bus } from '@shadowplane/bus';
import type { ProviderEntry } from '@shadowplane/contracts';
import { registerErrorHandlers, sendFrameworkError } from './app-errors.js';
import { registerAuth, registerJsonBodies, registerRequestLog } from './app-hooks.js';
import { ApiKeyStore, type ApiKeyEntry } from './auth.js';
import { BaselineService, baselineHandlers } from './baselines.js';
import { campaignHandlers } from './campaign-handlers.js';
import { CampaignService } from './campaigns.js';
import { DEFAULT_BODY_LIMIT_BYTES } from './config.js';
import { parseOr400 } from './errors.js';
import { readPaidDispatch, writePaidDispatch } from './flags.js';
import type { Handlers } from './handler-kit.js';
import { ControlMetrics } from './metrics.js';
import { buildOpenApi } from './openapi.js';
import { reportHandlers } from './report-handlers.js';
import type { ReportsPort } from './reports-port.js';
import { fastifyPath, ROUTES } from './routes.js';
import { suiteHandlers } from './suite-handlers.js';
import { SuiteService } from './suites.js';
import { FlagUpdate } from '@shadowplane/contracts';

export { frameworkError } from './app-errors.js';

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
    frameworkErrors: (err, req, reply) => sendFrameworkError(err, req, reply as FastifyReply),
  });
  registerHttpTelemetry(app);
  app.decorateRequest('principal', null);
  app.decorateRequest('startedAt', 0n);
  registerJsonBodies(app, bodyLimit);
  registerAuth(app, keys, metrics);
  registerRequestLog(app, metrics);
  registerErrorHandlers(app, bodyLimit);

  const handlers: Handlers = {
    healthz: async () => ({ status: 'ok' }),
    readyz: async (_req, reply) => {
      const ok = natsConnected && !deps.bus.nc.isClosed() && (deps.ready?.() ?? true);
      return reply.status(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not_ready' });
    },
    metrics: async (_req, reply) => reply.type(deps.registry.contentType).send(await deps.registry.metrics()),
    openapi: async () => openapi,
    ...campaignHandlers({ svc, baselines, suites, metrics }),
    ...reportHandlers({
      bus: deps.bus,
      svc,
      reports: deps.reports,
      ...(deps.keyring !== undefined ? { keyring: deps.keyring } : {}),
      reportRequestTimeoutMs: deps.reportRequestTimeoutMs ?? 15_000,
    }),
    ...suiteHandlers(deps.bus, deps.reports, suites),
    getPaidDispatch: async () => readPaidDispatch(flagsKv),
    setPaidDispatch: async (req) => {
      const u = parseOr400(FlagUpdate, req.body);
      const v = await writePaidDispatch(flagsKv, u.enabled, req.principal?.id ?? 'unknown', u.reason);
      req.log.warn({ flag: 'paid_dispatch', enabled: u.enabled, keyId: req.principal?.id }, 'paid_dispatch changed');
      return v;
    },
  };

  Object.assign(handlers, baselineHandlers(baselines));

  for (const r of ROUTES) {
    const handler = handlers[r.operationId];
    if (!handler) throw new Error(`no handler for ${r.operationId}`);
    app.route({
      method: r.method,
      url: fastifyPath(r.path),
      config: { scope: r.scope, routePath: r.path },
      handler,
    });
  }
  return app;
}
