// Open-loop load generation with microsecond timing (process.hrtime via performance.now) on undici,
// and small statistics helpers. The generator runs in the bench process (pin it with pinSelf).
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

/** One request shape the harness sends. */
export interface Shape {
  path: string;
  body: string;
  headers: Record<string, string>;
  stream: boolean;
}

/** Latency samples of one fixed-rate run, in ms (float, µs resolution). */
export interface RateRun {
  /** time to the last body byte */
  total: number[];
  /** time to the first body byte (TTFT for streams) */
  first: number[];
  errors: number;
  sent: number;
  wallMs: number;
}

/** Keep-alive pools per base URL, reused across runs so connection setup is not measured. */
const pools = new Map<string, Pool>();
export function poolFor(base: string, connections = 64): Pool {
  let p = pools.get(base);
  if (!p) {
    p = new Pool(base, {
      connections,
      pipelining: 1,
      keepAliveTimeout: 60_000,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    pools.set(base, p);
  }
  return p;
}

/** Closes every pool the harness opened. */
export async function closePools(): Promise<void> {
  await Promise.all([...pools.values()].map((p) => p.close().catch(() => undefined)));
  pools.clear();
}

/** Sends one request and returns [ms to first body byte, ms to end] or null on error. */
export async function once(base: string, s: Shape): Promise<[number, number] | null> {
  const pool = poolFor(base);
  const t0 = performance.now();
  try {
    const res = await pool.request({ path: s.path, method: 'POST', headers: s.headers, body: s.body });
    let first = -1;
    for await (const _chunk of res.body) {
      if (first < 0) first = performance.now() - t0;
    }
    const end = performance.now() - t0;
    if (res.statusCode !== 200) return null;
    return [first < 0 ? end : first, end];
  } catch {
    return null;
  }
}

/**
 * Requests per arm sent before anything is measured (env BENCH_WARM, default 30,000). A Node
 * proxy reaches steady state only once V8 has optimised its hot functions, and code that runs
 * for 1 request in 10 (the capture path at 10% sampling) gets there 10× later: after 2,000
 * warm-up requests the sidecar at 10% still spent 18% of its CPU compiling on V8's helper threads
 * while measured (perf, cpu-clock); after 60,000, 4%. nginx has no such phase.
 */
export const WARM_REQUESTS = Number(process.env.BENCH_WARM ?? 30_000);

/**
 * Sends `n` requests to `base` over `connections` keep-alive connections, cycling through
 * `shapes`, as fast as the proxy answers.
 * @returns the number of failed requests
 */
export async function warmUp(base: string, shapes: Shape[], n = WARM_REQUESTS, connections = 8): Promise<number> {
  let errors = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < n) {
        const s = shapes[next++ % shapes.length]!;
        if ((await once(base, s)) === null) errors++;
      }
    }),
  );
  return errors;
}

/**
 * Sends `rate` requests per second for `durationMs`, open loop (each request starts at its
 * scheduled time whether or not earlier ones finished), and records per-request latencies.
 */
export async function fixedRate(base: string, s: Shape, rate: number, durationMs: number): Promise<RateRun> {
  const total: number[] = [];
  const first: number[] = [];
  let errors = 0;
  let sent = 0;
  const interval = 1000 / rate;
  const start = performance.now();
  const inflight: Promise<void>[] = [];
  for (let i = 0; ; i++) {
    const due = start + i * interval;
    if (due - start >= durationMs) break;
    const wait = due - performance.now();
    // yield every time: above ~1,000 req/s the wait is under 1 ms, and a loop that only spins
    // would never read a response, so requests would leave in bursts, not at the rate
    if (wait > 1) await new Promise((r) => setTimeout(r, wait - 0.5));
    else await new Promise((r) => setImmediate(r));
    while (performance.now() < due) {
      /* spin the last < 1 ms for an exact start */
    }
    sent++;
    inflight.push(
      once(base, s).then((r) => {
        if (r === null) errors++;
        else {
          first.push(r[0]);
          total.push(r[1]);
        }
      }),
    );
  }
  await Promise.all(inflight);
  return { total, first, errors, sent, wallMs: performance.now() - start };
}

/** Type-7 quantile (linear interpolation; R's default) of a sample, q in [0, 1]. */
export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const h = (s.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  return s[lo]! + (h - lo) * (s[hi]! - s[lo]!);
}

/** Median of a sample. */
export const median = (xs: number[]): number => quantile(xs, 0.5);

/** Fisher–Yates shuffle with a seeded LCG, so the arm order is reproducible. */
export function shuffled<T>(xs: T[], seed: number): T[] {
  const a = [...xs];
  let st = seed >>> 0 || 1;
  for (let i = a.length - 1; i > 0; i--) {
    st = (Math.imul(st, 1664525) + 1013904223) >>> 0;
    const j = st % (i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}
