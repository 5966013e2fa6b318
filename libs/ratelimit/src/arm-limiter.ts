import Bottleneck from 'bottleneck';
import { Redis } from 'ioredis';
import pLimit from 'p-limit';
import { closeTokenWindowClients, localTokenWindow, redisTokenWindow, type TokenWindow } from './token-window.js';

/** Options for {@link createArmLimiter}. */
export interface ArmLimiterOptions {
  /** shared identity of the limit, e.g. `<campaign>.<arm>`; workers with the same id share one limit through Redis */
  id: string;
  /** requests per window (default window one minute); unset = no request-rate limit */
  rpm?: number | undefined;
  /** tokens per window: each call admitted on its bound (the job weight), then counted at its actual usage; unset = no token limit */
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
   * workers sharing the id), when `weightTokens` fit in the sliding TPM window, within the
   * concurrency cap, and not before a {@link pauseFor} deadline. Resolves/rejects with `fn`'s result.
   * @param weightTokens the call's token bound, e.g. prompt estimate + max output (≥ 0; a bound
   *   above `tpm` is admitted alone in an empty window so a huge request cannot wait forever)
   * @param actualTokens reads the tokens the call actually used from its result (null = unknown:
   *   the bound stays counted); the window is corrected to it as soon as `fn` resolves
   */
  schedule<T>(weightTokens: number, fn: () => Promise<T>, actualTokens?: (result: T) => number | null): Promise<T>;
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
 * Effective settings that make the limits hold over **every sliding window** of length
 * `windowMs`, not only over fixed windows (a fixed-window reservoir lets up to twice the limit
 * through around a window edge):
 * - RPM: a minimum spacing `minTimeMs = ceil(windowMs·1.1/rpm)` between starts, so any window
 *   holds at most `rpm` starts; the 10% margin absorbs scheduling and network jitter between the
 *   start and the provider's arrival clock.
 * - TPM: an exact sliding-window log (token-window.ts): a call starts only when the tokens
 *   started in the last `windowMs` plus its bound stay ≤ `tpm`, and its entry is corrected to
 *   actual usage after the call, so unused bound is released and nothing is capped away.
 */
export function limiterSettings(o: {
  rpm?: number | undefined;
  tpm?: number | undefined;
  windowMs?: number | undefined;
}): {
  minTimeMs: number;
  tokenWindow: { tpm: number; windowMs: number } | null;
} {
  const windowMs = o.windowMs ?? 60_000;
  const minTimeMs = o.rpm ? Math.ceil((windowMs * 1.1) / o.rpm) : 0;
  return { minTimeMs, tokenWindow: o.tpm ? { tpm: o.tpm, windowMs } : null };
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
  await closeTokenWindowClients();
}

/**
 * Builds an {@link ArmLimiter} on bottleneck (RPM), a sliding token window (TPM, token-window.ts)
 * and p-limit (concurrency, per process). Without `redisUrl` RPM/TPM hold per process; with it
 * they hold across every process using the same `id` (bottleneck clustering with
 * `datastore: 'ioredis'`, `clearDatastore: false`, state expiring after 10 idle minutes; the
 * token window in one Redis hash expiring two windows after its last admission).
 * Settings: see {@link limiterSettings}.
 * Source: bottleneck README "Clustering", "reservoirIncreaseInterval".
 */
export function createArmLimiter(opts: ArmLimiterOptions): ArmLimiter {
  const { minTimeMs, tokenWindow } = limiterSettings(opts);
  const settings: Bottleneck.ConstructorOptions = {
    id: `shadowplane-arm-${opts.id}`,
    minTime: minTimeMs,
  };
  // Concurrency is capped per process with p-limit: bottleneck's clustered maxConcurrent was
  // seen to stall (jobs never released) with a shared Redis, and in-flight calls are a
  // per-process resource anyway (sockets, memory).
  const inFlight = pLimit(opts.concurrency ?? Number.POSITIVE_INFINITY);
  const tokens: TokenWindow | null = !tokenWindow
    ? null
    : opts.redisUrl
      ? redisTokenWindow(opts.redisUrl, opts.id, tokenWindow.tpm, tokenWindow.windowMs)
      : localTokenWindow(tokenWindow.tpm, tokenWindow.windowMs);
  if (opts.redisUrl) {
    Object.assign(settings, {
      datastore: 'ioredis',
      clearDatastore: false,
      connection: redisConnection(opts.redisUrl),
      timeout: 600_000,
    });
  }
  // no rate to keep: skip bottleneck altogether (its queue costs event-loop hops, i.e. start skew)
  const limiter = minTimeMs > 0 ? new Bottleneck(settings) : null;
  limiter?.on('error', () => undefined);
  let pausedUntil = 0;
  let closed = false;
  let lastStartMs = 0;
  let inProcess = 0;
  const sleeping = new Set<() => void>();
  // sleeps that close() cuts short, so a job waiting for its window does not outlive the limiter
  const sleep = (ms: number) =>
    new Promise<void>((r) => {
      const done = () => {
        clearTimeout(t);
        sleeping.delete(done);
        r();
      };
      const t = setTimeout(done, ms);
      sleeping.add(done);
    });
  return {
    async schedule<T>(weightTokens: number, fn: () => Promise<T>, actualTokens?: (r: T) => number | null): Promise<T> {
      const queuedAt = Date.now();
      inProcess++;
      try {
        while (Date.now() < pausedUntil) await sleep(pausedUntil - Date.now());
        const job = async () => {
          let entry: string | null = null;
          for (;;) {
            // a pause that began while this job was queued still applies to it
            while (Date.now() < pausedUntil) await sleep(pausedUntil - Date.now());
            // bottleneck assigns start slots when it schedules; after an event-loop stall several
            // slots fire at once, so the spacing is enforced again at the actual start (this process)
            if (minTimeMs > 0) {
              for (let w = lastStartMs + minTimeMs - Date.now(); w > 0; w = lastStartMs + minTimeMs - Date.now())
                await sleep(w);
              lastStartMs = Date.now(); // taken before the token check: a refused check only spaces starts wider
            }
            if (!tokens) break;
            if (closed) throw new Error(`limiter ${opts.id} was closed`);
            // tokens last, so the entry's time is the call's start and it leaves the window on time
            const t = await tokens.tryAcquire(Math.max(0, Math.ceil(weightTokens)));
            if ('id' in t) {
              entry = t.id;
              break;
            }
            await sleep(t.waitMs);
            if (closed) throw new Error(`limiter ${opts.id} was closed`);
          }
          opts.onWait?.(Date.now() - queuedAt);
          const result = await fn();
          const used = entry !== null && actualTokens ? actualTokens(result) : null;
          if (entry !== null && used !== null && Number.isFinite(used))
            await tokens!.correct(entry, used).catch(() => undefined);
          return result;
        };
        return await inFlight(() => (limiter ? limiter.schedule(job) : job()));
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
      closed = true;
      for (const wake of [...sleeping]) wake();
      if (!limiter) return;
      await limiter.stop({ dropWaitingJobs: true }).catch(() => undefined);
      if (opts.redisUrl) await Promise.resolve(limiter.disconnect(false)).catch(() => undefined);
    },
  };
}
