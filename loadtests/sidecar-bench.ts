// Sidecar hot-path overhead benchmark: `npm run bench:sidecar`.
//
// Side by side, in one run, against the same fast upstream: direct; the sidecar at sampling 0%,
// 10% and 100% (publishing to a local JetStream); a bare node:http + undici proxy; bytes piped
// through node:net with no HTTP parsing (the floor of any Node proxy); nginx `proxy_pass`; nginx
// `proxy_pass` + `mirror` to a capture endpoint. The generator (this process) and the upstream/NATS are pinned to CPU 0,
// every proxy to CPU 1. Arms are interleaved in a seeded shuffled order and repeated.
//
// Measured: CPU seconds per 1,000 requests of the proxy process (/proc/<pid>/stat) at a fixed
// rate, and again at a higher one (the cost of waking from idle between requests falls with the
// rate, more for a Node process than for nginx); latency at that rate (µs resolution) and what each proxy adds over direct (p50/p99; TTFT
// for streams); throughput at saturation (autocannon); RSS with N concurrent open streams.
//
// Knobs (env): BENCH_RATE (req/s, default 200), BENCH_RATE_HIGH (req/s of a second, CPU-only set of slices, default 1000; 0 skips), BENCH_SECONDS (per slice, default 4),
// BENCH_WARM (warm-up requests per arm, default 30000: see lib/harness.ts), BENCH_REPS (default 3), BENCH_SAT_SECONDS (default 4; 0 skips saturation), BENCH_SAT_CONNECTIONS (default 32),
// BENCH_STREAMS (default 1000; 0 skips the RSS test), BENCH_SEED (default 1), BENCH_NICE (default 0; e.g. -5 as root),
// BENCH_ARMS (comma-separated arm names to keep, e.g. "sidecar 10%,nginx+mirror"; direct is always kept), BENCH_BASE_DIR (a checkout of
// another commit with its dependencies: adds "base sidecar 0%/10%/100%" arms run from it, before and after in one run). Output: a table on stdout and JSON in
// loadtests/out/.
import { runMain, tearDown } from './lib/run.js';
import { cpuCount, pinSelf, rssBytes, type Proc } from './lib/procs.js';
import { startArms } from './sidecar-bench/arms.js';
import {
  addedBuckets,
  fixedRateRuns,
  highRateRuns,
  openStreamsRss,
  publishedCaptures,
  saturationRuns,
  warmArms,
} from './sidecar-bench/phases.js';
import { reportLines, writeResultsJson } from './sidecar-bench/report.js';

const env = (k: string, d: number) => (process.env[k] ? Number(process.env[k]) : d);
const RATE = env('BENCH_RATE', 200);
const RATE_HIGH = env('BENCH_RATE_HIGH', 1000);
const SECONDS = env('BENCH_SECONDS', 4);
const REPS = env('BENCH_REPS', 3);
const SAT_SECONDS = env('BENCH_SAT_SECONDS', 4);
const SAT_CONN = env('BENCH_SAT_CONNECTIONS', 32);
const STREAMS = env('BENCH_STREAMS', 1000);
const SEED = env('BENCH_SEED', 1);
const ARMS = process.env.BENCH_ARMS ? process.env.BENCH_ARMS.split(',').map((a) => a.trim()) : null;
/** a checkout of another commit (its dependencies installed): adds `base sidecar 0% / 10% / 100%` arms run from it, for a before/after in one run */
const BASE_DIR = process.env.BENCH_BASE_DIR ?? null;

async function main(): Promise<number> {
  const ncpu = cpuCount();
  const genCpu = '0';
  const proxyCpu = ncpu > 1 ? '1' : '0';
  pinSelf(genCpu);
  const procs: Proc[] = [];
  const dirs: string[] = [];
  try {
    const s = await startArms({ genCpu, proxyCpu, only: ARMS, baseDir: BASE_DIR }, procs, dirs);
    const { arms, upstream } = s;
    // sanity + warm-up (JIT, keep-alive pools); the CPU each proxy spent on it is reported
    const warm = await warmArms(arms);

    // the sidecars' own account of the time they add (their added-latency histogram), read
    // around the fixed-rate runs: in-process, so free of the generator's and the kernel's noise
    const addedBefore = new Map<string, Map<string, number>>();
    for (const arm of arms) if (arm.opsUrl) addedBefore.set(arm.name, await addedBuckets(arm.opsUrl));

    // 1. fixed rate: latency + CPU per 1k requests, interleaved and repeated
    const order = { n: 0 };
    const acc = await fixedRateRuns(arms, upstream, { reps: REPS, rate: RATE, seconds: SECONDS, seed: SEED, order });

    // (read before 1b: the histogram covers the BENCH_RATE slices only)
    const addedDuring = new Map<string, Map<string, number>>();
    for (const arm of arms) {
      if (!arm.opsUrl) continue;
      const after = await addedBuckets(arm.opsUrl);
      const before = addedBefore.get(arm.name)!;
      addedDuring.set(arm.name, new Map([...after].map(([le, n]) => [le, n - (before.get(le) ?? 0)])));
    }

    // 1b. CPU only, at a higher fixed rate
    const accHigh = await highRateRuns(arms, { reps: REPS, rate: RATE_HIGH, seconds: SECONDS, seed: SEED, order });

    // 2. RSS with N concurrent open streams, before the saturation runs
    const rss = await openStreamsRss(arms, s.upstreamUrl, STREAMS);

    // 3. saturation throughput (autocannon, closed loop), then each proxy's RSS after it
    const sat = await saturationRuns(arms, upstream, { seconds: SAT_SECONDS, connections: SAT_CONN, seed: SEED });
    const rssAfterSat = new Map<string, number>();
    if (SAT_SECONDS > 0)
      for (const arm of arms) if (arm.proc !== null) rssAfterSat.set(arm.name, rssBytes(arm.proc.pid));

    const results = {
      arms,
      ncpu,
      genCpu,
      proxyCpu,
      nginxVersion: s.nginxVersion,
      settings: {
        rate: RATE,
        rateHigh: RATE_HIGH,
        seconds: SECONDS,
        reps: REPS,
        seed: SEED,
        satSeconds: SAT_SECONDS,
        satConnections: SAT_CONN,
        streams: STREAMS,
      },
      acc,
      accHigh,
      addedDuring,
      warm,
      rss,
      rssAfterSat,
      sat,
      // capture sanity: what each sidecar published
      published: await publishedCaptures(arms),
    };
    process.stdout.write(`${reportLines(results).join('\n')}\n`);
    process.stdout.write(`(JSON: ${writeResultsJson(results)})\n`);
    return 0;
  } finally {
    await tearDown(procs, dirs);
  }
}

runMain('sidecar-bench', main);
