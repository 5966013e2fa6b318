import Bottleneck from 'bottleneck';
import { Redis } from 'ioredis';
import pLimit from 'p-limit';

/** Options for {@link createArmLimiter}. */
export interface ArmLimiterOptions {
  /** shared identity of the limit, e.g. `<campaign>.<arm>`; workers with the same id share one limit through Redis */
  id: string;
  /** requests per window (default window one minute); unset = no request-rate limit */
  rpm?: number | undefined;
  /** tokens (input + output estimate, the job weight) per window; unset = no token limit */
  tpm?: number | undefined;
  /** most calls in flight at once in this process (p-limit); unset = unlimited */
  concurrency?: number | undefined;
  /** the window RPM and TPM refer to, ms (default 60,000); tests scale it down */
  windowMs?: number | undefined;
  /** Redis URL: the limit becomes cluster-wide (bottleneck clustering); unset = this process only */
  redisUrl?: string | undefined;
  /** called with the ms each job waited between `schedule` and its start (metrics) */
  onWait?: ((waitMs: number) => void) | undefined;
}

/** A per-arm limiter: RPM, TPM and concurrency, plus a retry-after pause. */
export interface ArmLimiter {
  /**
   * Runs `fn` when the limits allow: at least `windowMs / rpm` ms after the previous start (all
   * workers sharing the id), with `weightTokens` taken from the token bucket, within the
   * concurrency cap, and not before a {@link pauseFor} deadline. Resolves/rejects with `fn`'s result.
   * @param weightTokens estimated tokens of the call (≥ 0; capped at the bucket size so a huge
   *   request cannot wait forever)
   */
  schedule<T>(weightTokens: number, fn: () => Promise<T>): Promise<T>;
  /** Delays every job of this limiter not yet started by `ms` from now (retry-after); this process only. */
  pauseFor(ms: number): void;
  /** ms left of the current pause (0 when none). */
  pausedForMs(): number;
  /** Jobs queued or running in this process. */
  pending(): number;
  /** Stops the limiter (queued jobs are dropped with an error). */
  close(): Promise<void>;
}

/**
 * Effective bottleneck settings that make the limits hold over **every sliding window** of
 * length `windowMs`, not only over fixed windows (a fixed-window reservoir lets up to twice the
 * limit through around a window edge):
 * - RPM: a minimum spacing `minTimeMs = ceil(windowMs·1.1/rpm)` between starts, so any
 *   window holds at most `rpm` starts; the 10% margin absorbs scheduling and network jitter between the start and
 *   the provider's arrival clock.
 * - TPM: a token bucket of size `B = floor(tpm/6)` refilled by `a = floor((tpm − B)/n)` tokens
 *   every `I = max(50, windowMs/60)` ms, with `n = floor(windowMs/I) + 1` the most refills a
 *   half-open window can hold; a window sees at most `B + n·a ≤ tpm` tokens. Steady throughput
 *   ≈ 83% of the TPM limit, the price of the guarantee. (bottleneck applies one refill per
 *   heartbeat, so the heartbeat is set to `I`.)
 * Source: sliding-window bound of a token bucket, B + r·W (RFC 2697's committed burst and rate).
 */
export function limiterSettings(o: {
  rpm?: number | undefined;
  tpm?: number | undefined;
  windowMs?: number | undefined;
}): {
  minTimeMs: number;
  bucket: { size: number; refillAmount: number; refillIntervalMs: number } | null;
} {
  const windowMs = o.windowMs ?? 60_000;
  const minTimeMs = o.rpm ? Math.ceil((windowMs * 1.1) / o.rpm) : 0;
  let bucket = null;
  if (o.tpm) {
    const size = Math.max(1, Math.floor(o.tpm / 6));
    const refillIntervalMs = Math.max(50, Math.floor(windowMs / 60));
    const refillsPerWindow = Math.floor(windowMs / refillIntervalMs) + 1;
    const refillAmount = Math.max(1, Math.floor((o.tpm - size) / refillsPerWindow));
    bucket = { size, refillAmount, refillIntervalMs };
  }
  return { minTimeMs, bucket };
}

const connections = new Map<string, InstanceType<typeof Bottleneck.IORedisConnection>>();

function redisConnection(url: string): InstanceType<typeof Bottleneck.IORedisConnection> {
  let c = connections.get(url);
  if (!c) {
    const client = new Redis(url, { maxRetriesPerRequest: 3, lazyConnect: false });
    normaliseScriptErrors(client);
    c = new Bottleneck.IORedisConnection({ client, Redis } as unknown as Bottleneck.IORedisConnectionOptions);
    c.on('error', () => undefined); // limiter errors surface on schedule(); never crash the process
    connections.set(url, c);
  }
  return c;
}

/**
 * Redis 7 prefixes errors raised by Lua `redis.error_reply('X')` with `ERR ` ("ERR X"), while
 * bottleneck 2.19 recovers from its script errors by exact message (`UNKNOWN_CLIENT` → re-register
 * the client, `SETTINGS_KEY_NOT_FOUND` → re-init). Without this, a client whose registration
 * lapsed (e.g. a heartbeat delayed past `clientTimeout` on a loaded host) fails every job.
 * Wraps each script command bottleneck defines so the callback sees the bare message.
 */
function normaliseScriptErrors(client: Redis): void {
  const define = client.defineCommand.bind(client);
  client.defineCommand = ((name: string, def: { lua: string; numberOfKeys?: number }) => {
    define(name, def);
    const rec = client as unknown as Record<string, (...a: unknown[]) => unknown>;
    const orig = rec[name]!.bind(client);
    rec[name] = (...args: unknown[]) => {
      const cb = args[args.length - 1];
      if (typeof cb !== 'function') return orig(...args);
      return orig(...args.slice(0, -1), (err: Error | null, res: unknown) => {
        if (err && /^ERR (UNKNOWN_CLIENT|SETTINGS_KEY_NOT_FOUND)\b/.test(err.message))
          err.message = err.message.slice(4);
        (cb as (e: Error | null, r: unknown) => void)(err, res);
      });
    };
  }) as typeof client.defineCommand;
}

/** Disconnects the shared Redis connections the limiters of this process use (at shutdown). */
export async function closeRedisConnections(): Promise<void> {
  const all = [...connections.values()];
  connections.clear();
  await Promise.all(all.map((c) => c.disconnect(true).catch(() => undefined)));
}

/**
 * Builds an {@link ArmLimiter} on bottleneck (RPM, TPM) and p-limit (concurrency, per process).
 * Without `redisUrl` RPM/TPM hold per process; with it they hold across every process using the
 * same `id` (bottleneck clustering with
 * `datastore: 'ioredis'`, `clearDatastore: false`, state expiring after 10 idle minutes).
 * Settings: see {@link limiterSettings}.
 * Source: bottleneck README "Clustering", "reservoirIncreaseInterval".
 */
export function createArmLimiter(opts: ArmLimiterOptions): ArmLimiter {
  const { minTimeMs, bucket } = limiterSettings(opts);
  const settings: Bottleneck.ConstructorOptions = {
    id: `shadowplane-arm-${opts.id}`,
    minTime: minTimeMs,
  };
  // Concurrency is capped per process with p-limit: bottleneck's clustered maxConcurrent was
  // seen to stall (jobs never released) with a shared Redis, and in-flight calls are a
  // per-process resource anyway (sockets, memory).
  const inFlight = pLimit(opts.concurrency ?? Number.POSITIVE_INFINITY);
  if (bucket) {
    Object.assign(settings, {
      reservoir: bucket.size,
      reservoirIncreaseAmount: bucket.refillAmount,
      reservoirIncreaseInterval: bucket.refillIntervalMs,
      reservoirIncreaseMaximum: bucket.size,
      heartbeatInterval: bucket.refillIntervalMs,
    });
  }
  if (opts.redisUrl) {
    Object.assign(settings, {
      datastore: 'ioredis',
      clearDatastore: false,
      connection: redisConnection(opts.redisUrl),
      timeout: 600_000,
    });
  }
  // no rate to keep: skip bottleneck altogether (its queue costs event-loop hops, i.e. start skew)
  const limiter = minTimeMs > 0 || bucket ? new Bottleneck(settings) : null;
  limiter?.on('error', () => undefined);
  let pausedUntil = 0;
  let lastStartMs = 0;
  let inProcess = 0;
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  return {
    async schedule<T>(weightTokens: number, fn: () => Promise<T>): Promise<T> {
      const queuedAt = Date.now();
      inProcess++;
      try {
        while (Date.now() < pausedUntil) await sleep(pausedUntil - Date.now());
        const weight = bucket ? Math.min(bucket.size, Math.max(0, Math.ceil(weightTokens))) : 1;
        const job = async () => {
          // a pause that began while this job was queued still applies to it
          while (Date.now() < pausedUntil) await sleep(pausedUntil - Date.now());
          // bottleneck assigns start slots when it schedules; after an event-loop stall several
          // slots fire at once, so the spacing is enforced again at the actual start (this process)
          if (minTimeMs > 0) {
            for (let wait = lastStartMs + minTimeMs - Date.now(); wait > 0; wait = lastStartMs + minTimeMs - Date.now())
              await sleep(wait);
            lastStartMs = Date.now();
          }
          opts.onWait?.(Date.now() - queuedAt);
          return fn();
        };
        return await inFlight(() => (limiter ? limiter.schedule({ weight }, job) : job()));
      } finally {
        inProcess--;
      }
    },
    pauseFor(ms: number) {
      pausedUntil = Math.max(pausedUntil, Date.now() + Math.max(0, ms));
    },
    pausedForMs: () => Math.max(0, pausedUntil - Date.now()),
    pending: () => inProcess,
    async close() {
      if (!limiter) return;
      await limiter.stop({ dropWaitingJobs: true }).catch(() => undefined);
      if (opts.redisUrl) await Promise.resolve(limiter.disconnect(false)).catch(() => undefined);
    },
  };
}
