import { pino } from 'pino';
import { connectBus, type Bus } from '@shadowplane/bus';
import { natsNames } from '@shadowplane/contracts';
import {
  createLogger,
  createMetricsRegistry,
  serveOps,
  type Logger,
  type OpsServer,
  type Registry,
} from '@shadowplane/telemetry';
import type { SidecarConfig } from './config.js';
import { SidecarMetrics } from './metrics.js';
import { CapturePublisher } from './publisher.js';
import { SidecarProxy } from './proxy.js';
import { CaptureProcessor } from './processor.js';

/** The sidecar's package version, bound on every log line. */
export const SIDECAR_VERSION = '0.1.0';

/** Options for {@link startSidecar} beyond the config (mostly for tests and benchmarks). */
export interface StartSidecarOptions {
  /** logger (default: pino JSON lines on stderr at the configured level) */
  logger?: Logger;
  /** metrics registry (default: a fresh one with Node process metrics) */
  registry?: Registry;
  /** random source for sampling draws */
  random?: () => number;
  /** ms between NATS connection attempts while it is down (default 1000, backing off to 10,000) */
  natsRetryMs?: number;
  /** ms allowed for one connection attempt (default 2000) */
  natsConnectTimeoutMs?: number;
}

/** A running sidecar. */
export interface SidecarHandle {
  /** proxy base URL, e.g. `http://127.0.0.1:8080` */
  readonly url: string;
  /** ops base URL (`/healthz`, `/readyz`, `/metrics`) */
  readonly opsUrl: string;
  readonly registry: Registry;
  readonly metrics: SidecarMetrics;
  readonly publisher: CapturePublisher;
  readonly proxy: SidecarProxy;
  /** the NATS bus once connected (null while NATS has never been reached) */
  bus(): Bus | null;
  /**
   * Graceful stop: not ready, stop accepting, wait for in-flight requests (drainTimeoutMs),
   * publish what is queued (flushTimeoutMs), close NATS, close the ops server.
   */
  stop(): Promise<void>;
}

/**
 * Starts the sidecar: the proxy on `config.listen`, the ops server on `config.opsListen`, and a
 * background NATS connection retried until it succeeds (the proxy serves and `/readyz` is 200 with
 * NATS down: production must flow). Returns once both servers listen.
 * @throws Error when a listen address is in use or invalid
 */
export async function startSidecar(config: SidecarConfig, opts: StartSidecarOptions = {}): Promise<SidecarHandle> {
  const log =
    opts.logger ??
    createLogger({
      service: 'sidecar',
      version: SIDECAR_VERSION,
      level: config.logLevel,
      destination: pino.destination({ fd: 2, sync: false }),
    });
  // event-loop delay sampled once a second, not 100 times: each sample is a wake-up on the hot path
  const registry = opts.registry ?? createMetricsRegistry({ role: 'sidecar', eventLoopMonitoringPrecisionMs: 1000 });
  const metrics = new SidecarMetrics(registry);
  const names = natsNames(config.natsPrefix);
  const publisher = new CapturePublisher(
    {
      queueMax: config.capture.queueMax,
      maxBytes: config.capture.queueMaxBytes,
      timeoutMs: config.capture.publishTimeoutMs,
      concurrency: config.capture.publishConcurrency,
      provision: config.capture.provision,
    },
    metrics,
    log,
  );
  const processor = new CaptureProcessor(
    config.capture.offloadBytes,
    log,
    metrics,
    config.capture.batchMs,
    {
      memoryMb: config.capture.workerMemoryMb,
      // the build stops itself at its CPU budget (checked between strings); this wall-clock backstop
      // covers what runs in one piece, e.g. JSON.parse of a huge body
      hardTimeoutMs: 2 * config.capture.cpuBudgetMs + 1000,
    },
    config.capture.retainServed?.keyring ?? null,
  );
  const proxy = new SidecarProxy({
    config,
    metrics,
    log,
    publisher,
    processor,
    names,
    ...(opts.random ? { random: opts.random } : {}),
  });
  const url = await proxy.listen(config.listen.host, config.listen.port);
  let ops: OpsServer;
  try {
    ops = await serveOps(registry, {
      ready: () => proxy.accepting,
      host: config.opsListen.host,
      port: config.opsListen.port,
    });
  } catch (e) {
    await proxy.drain(0);
    throw e;
  }

  // NATS: connect in the background, retrying forever; the proxy never waits for it
  let bus: Bus | null = null;
  let stopped = false;
  let retryTimer: NodeJS.Timeout | null = null;
  let wake: (() => void) | null = null;
  const retryBase = opts.natsRetryMs ?? 1000;
  const connectLoop = async (): Promise<void> => {
    for (let attempt = 0; !stopped; attempt++) {
      try {
        const b = await connectBus({
          url: config.natsUrl,
          name: `shadowplane-sidecar-${config.sidecarId}`,
          prefix: config.natsPrefix,
          connectTimeoutMs: opts.natsConnectTimeoutMs ?? 2000,
          asyncTraces: false,
        });
        if (stopped) {
          await b.close();
          return;
        }
        bus = b;
        publisher.attach(b);
        return;
      } catch (err) {
        if (attempt === 0 || attempt % 30 === 0)
          log.warn({ err: { message: (err as Error).message }, attempt }, 'nats unreachable; captures wait or drop');
        await new Promise<void>((r) => {
          wake = r;
          retryTimer = setTimeout(r, Math.min(10_000, retryBase * 2 ** Math.min(attempt, 4)));
        });
      }
    }
  };
  const connecting = connectLoop();

  log.info(
    {
      url,
      opsUrl: ops.url,
      routes: config.routes.map((r) => ({ path_prefix: r.path_prefix, host: r.host ?? null, upstream: r.upstream })),
    },
    'sidecar listening',
  );

  return {
    url,
    opsUrl: ops.url,
    registry,
    metrics,
    publisher,
    proxy,
    bus: () => bus,
    async stop() {
      log.info({ inflight: proxy.inflightCount }, 'draining');
      await proxy.drain(config.drainTimeoutMs, config.drainIdleGraceMs);
      // the last responses' captures: build the waiting batch now, wait for the worker's builds
      // (both within the flush budget), let the resulting enqueues land, then publish
      const flushStart = performance.now();
      await processor.flush(config.flushTimeoutMs);
      await new Promise((r) => setTimeout(r, 20));
      await publisher.flush(Math.max(0, config.flushTimeoutMs - (performance.now() - flushStart)));
      await processor.close();
      stopped = true;
      if (retryTimer) clearTimeout(retryTimer);
      (wake as (() => void) | null)?.();
      await connecting;
      await (bus as Bus | null)?.close(Math.max(1000, config.flushTimeoutMs));
      await ops.close();
      log.info({}, 'stopped');
    },
  };
}
