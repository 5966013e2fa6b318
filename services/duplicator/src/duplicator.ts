import { Agent } from 'undici';
import type { Logger } from 'pino';
import {
  assertCasSafeServer,
  watchCasSafeServer,
  connectBus,
  openKv,
  openObjectStore,
  provision,
  JsonKv,
  type Bus,
} from '@shadowplane/bus';
import { Campaign, type ProviderEntry, type ShadowplaneError } from '@shadowplane/contracts';
import { ConfigError, loadProviderAllowlist, providerApiKey } from '@shadowplane/config';
import { baseUrlProblem } from '@shadowplane/providers';
import { loadKeyring, type Keyring } from '@shadowplane/artifacts';
import { BudgetLedgerClient } from '@shadowplane/budget';
import { closeRedisConnections } from '@shadowplane/ratelimit';
import { createLogger, createMetricsRegistry, serveOps, type Registry } from '@shadowplane/telemetry';
import { CampaignRunner, type RunnerContext } from './campaign-runner.js';
import type { DuplicatorConfig } from './config.js';
import { PaidDispatchGate, WorkerLeases } from './liveness.js';
import { DuplicatorMetrics } from './metrics.js';
import { CampaignBudgetGauges } from './observe.js';

/** Package version recorded in logs. */
export const DUPLICATOR_VERSION = '0.1.0';

/** Optional pieces a caller (test, demo) may inject instead of having them built from config/env. */
export interface DuplicatorDeps {
  logger?: Logger;
  registry?: Registry;
  keyring?: Keyring;
  /** the allowlist; default: read from `config.providersFile` */
  providers?: ProviderEntry[];
  /** environment for provider API keys and the artifact keyring (default process.env) */
  env?: NodeJS.ProcessEnv;
  /**
   * called when the connection reconnects to a nats-server with the replicated-bucket CAS race
   * (error `nats_server_unsupported`; already logged): the worker must stop, its ledger writes are
   * no longer safe. The binary exits 78 without draining (arms in flight are recovered at their
   * bounds by the next worker).
   */
  onUnsafeServer?: (err: ShadowplaneError) => void;
}

/** A running duplicator worker. */
export interface DuplicatorHandle {
  readonly workerId: string;
  /** ops server base URL (/healthz, /readyz, /metrics) */
  readonly opsUrl: string;
  readonly registry: Registry;
  /** ids of the campaigns being consumed */
  campaigns(): string[];
  /** Drains: stops pulling, lets in-flight items finish and settle, removes the lease, closes. */
  close(): Promise<void>;
}

/**
 * Starts one duplicator worker: connects to NATS, provisions (when configured), starts the
 * lease heartbeat and the paid_dispatch gate, watches `shadow_campaigns` and runs a
 * {@link CampaignRunner} for every campaign in state `running` (stopping it when the campaign
 * pauses, stops, completes or exhausts its budget), and serves the ops port.
 * @throws ConfigError when the allowlist or a provider key / artifact key is missing or invalid;
 *   Error when NATS cannot be reached within 10 s
 */
export async function startDuplicator(config: DuplicatorConfig, deps: DuplicatorDeps = {}): Promise<DuplicatorHandle> {
  const env = deps.env ?? process.env;
  const log =
    deps.logger ?? createLogger({ service: 'duplicator', version: DUPLICATOR_VERSION, level: config.logLevel });
  const registry = deps.registry ?? createMetricsRegistry({ role: 'duplicator' });
  const metrics = new DuplicatorMetrics(registry);
  const entries = deps.providers ?? loadProviderAllowlist(config.providersFile);
  for (const e of entries) {
    const problem = baseUrlProblem(e.api, e.base_url);
    if (problem) throw new ConfigError([{ key: `providers[${e.id}].base_url`, message: problem }]);
  }
  const providers = new Map(entries.map((e) => [e.id, { entry: e, apiKey: providerApiKey(e, env) }]));
  const keyring = deps.keyring ?? loadKeyring(env);

  const bus: Bus = await connectBus({
    url: config.natsUrl,
    name: `shadowplane-duplicator-${config.workerId}`,
    prefix: config.natsPrefix,
    // every KV read/write and publish of an item is a nats.js request; building a trace Error
    // up front for each was ~5 % of a worker's CPU (bench/duplicator.ts profile)
    asyncTraces: false,
    ...(config.natsReplicas === undefined ? {} : { replicas: config.natsReplicas }),
  });
  try {
    assertCasSafeServer(bus.serverVersion); // the ledger's cap rests on compare-and-set
  } catch (e) {
    await bus.close();
    throw e;
  }
  // and after every reconnect (another server of the list, or a downgraded one)
  watchCasSafeServer(bus.nc, (err) => {
    log.error({ code: err.code, details: err.details }, err.message);
    deps.onUnsafeServer?.(err);
  });
  if (config.provision) await provision(bus, { storage: config.storage });
  const n = bus.names;
  const dispatchKv = await openKv(bus, n.buckets.dispatch);
  const campaignsKv = await openKv(bus, n.buckets.campaigns);
  const leases = new WorkerLeases(dispatchKv, config.workerId, config.leaseTtlMs);
  await leases.start();
  const gate = new PaidDispatchGate(await openKv(bus, n.buckets.flags), config.flagPollMs, (on) => {
    metrics.paidDispatch.set(on ? 1 : 0);
    log.info({ enabled: on }, 'paid_dispatch changed');
  });
  await gate.start();
  const ledger = new BudgetLedgerClient(await openKv(bus, n.buckets.budget), {
    onOvercharge: (campaignId, excess) => {
      metrics.overcharges.inc();
      log.error({ campaignId, excessMicroUsd: excess }, 'settlement above its reservation (clamped)');
    },
  });
  const budgetGauges = new CampaignBudgetGauges(registry, (id) => ledger.snapshot(id));
  // keep-alive: one request at a time per socket (pipelining 1; undici's 0 would close every
  // socket after its response, a TCP connect — and TLS handshake — per provider call)
  const http = new Agent({ connections: 256, keepAliveTimeout: 10_000, pipelining: 1 });
  const ctx: RunnerContext = {
    bus,
    log,
    metrics,
    workerId: config.workerId,
    itemConcurrency: config.itemConcurrency,
    ackWaitMs: config.ackWaitMs,
    rateWindowMs: config.rateWindowMs,
    retryBaseMs: config.retryBaseMs,
    redisUrl: config.redisUrl,
    dispatchKv,
    campaigns: new JsonKv(campaignsKv, Campaign),
    ledger,
    artifacts: await openObjectStore(bus, n.buckets.artifacts),
    captureBodies: await openObjectStore(bus, n.captureBodies),
    keyring,
    providers,
    gate,
    leases,
    http,
  };

  const runners = new Map<string, CampaignRunner>();
  let chain: Promise<void> = Promise.resolve();
  const startRunner = async (c: Campaign): Promise<void> => {
    const nr = new CampaignRunner(ctx, c);
    runners.set(c.id, nr);
    try {
      await nr.start();
      budgetGauges.track(c.id);
    } catch (e) {
      runners.delete(c.id);
      log.error({ err: e, campaignId: c.id }, 'could not start consuming campaign');
    }
  };
  const stopRunner = async (id: string, r: CampaignRunner, state: string): Promise<void> => {
    runners.delete(id);
    budgetGauges.untrack(id);
    await r.stop();
    log.info({ campaignId: id, state }, 'stopped consuming campaign');
  };
  // A campaign that is not running is still consumed while its ledger holds reservations: its
  // redelivered items are recovered (lost arms charged, done arms settled), whatever the state.
  const onCampaign = (c: Campaign | null, id: string) => {
    chain = chain.then(async () => {
      const r = runners.get(id);
      if (c === null) {
        if (r) await stopRunner(id, r, 'deleted');
      } else if (r) {
        r.update(c);
      } else if (c.state === 'running') {
        await startRunner(c);
      } else if (((await ledger.snapshot(id).catch(() => null))?.reserved_micro_usd ?? 0) > 0) {
        log.info({ campaignId: id, state: c.state }, 'campaign holds reservations: consuming it to recover them');
        await startRunner(c);
      }
      metrics.campaigns.set(runners.size);
    });
  };
  const sweep = () => {
    chain = chain.then(async () => {
      for (const [id, r] of [...runners]) {
        if (r.state === 'running') continue;
        if (await r.holdsReservations().catch(() => true)) continue;
        await stopRunner(id, r, r.state);
      }
      metrics.campaigns.set(runners.size);
    });
  };
  const sweepTimer = setInterval(sweep, 1000);
  sweepTimer.unref();
  const watch = await campaignsKv.watch({ key: '>' });
  let ready = false;
  void (async () => {
    for await (const e of watch) {
      let c: Campaign | null = null;
      if (e.operation === 'PUT') {
        const p = Campaign.safeParse(safeJson(() => e.json()));
        if (!p.success) {
          log.warn({ key: e.key }, 'campaign value does not parse; ignored');
          continue;
        }
        c = p.data;
      }
      onCampaign(c, e.key);
    }
  })();
  ready = true;
  const lagTimer = setInterval(
    () => metrics.consumerLag.set([...runners.values()].reduce((a, r) => a + r.lag, 0)),
    2000,
  );
  lagTimer.unref();
  const ops = await serveOps(registry, {
    port: config.opsPort,
    host: config.opsHost,
    ready: () => ready && !bus.nc.isClosed(),
  });
  log.info({ workerId: config.workerId, ops: ops.url }, 'duplicator started');

  let closing: Promise<void> | null = null;
  return {
    workerId: config.workerId,
    opsUrl: ops.url,
    registry,
    campaigns: () => [...runners.keys()],
    close() {
      closing ??= (async () => {
        ready = false;
        clearInterval(lagTimer);
        clearInterval(sweepTimer);
        budgetGauges.close();
        watch.stop();
        await chain.catch(() => undefined);
        await Promise.all([...runners.values()].map((r) => r.stop()));
        runners.clear();
        gate.close();
        await leases.close();
        await ops.close();
        await http.close().catch(() => undefined);
        await Promise.race([closeRedisConnections(), new Promise((r) => setTimeout(r, 3000))]);
        await bus.close();
        log.info({}, 'duplicator stopped');
      })();
      return closing;
    },
  };
}

function safeJson(read: () => unknown): unknown {
  try {
    return read();
  } catch {
    return undefined;
  }
}
