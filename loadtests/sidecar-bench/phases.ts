// The measuring phases of the sidecar benchmark, in the order main runs them. Each takes the arms
// and returns plain numbers; nothing here formats.
import { Pool } from 'undici';
import { createRequire } from 'node:module';
import { fixedRate, median, once, shuffled, WARM_REQUESTS, warmUp, type Shape } from '../lib/harness.js';
import { cpuSeconds, rssBytes, type Proc } from '../lib/procs.js';
import { SHAPES } from '../lib/shapes.js';
import type { Arm } from './arms.js';

/** The two request shapes every phase runs. */
export const MODES = ['json', 'stream'] as const;
export type Mode = (typeof MODES)[number];

/** Key of one arm × mode in the result maps. */
export const key = (arm: string, mode: string): string => `${arm}|${mode}`;

type Autocannon = (
  o: Record<string, unknown>,
) => Promise<{ requests: { average: number }; errors: number; non2xx: number; latency: { p50: number } }>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** Fixed-rate slices of one arm × mode, pooled over reps: latencies (ms) and CPU seconds of its process. */
export interface RateAcc {
  total: number[];
  first: number[];
  cpu: number;
  sent: number;
  errors: number;
  repP50: number[];
  repFirstP50: number[];
  repCpuPer1k: number[];
}

/** CPU-only slices at the higher rate, pooled over reps. */
export interface CpuAcc {
  cpu: number;
  sent: number;
  errors: number;
  repCpuPer1k: number[];
}

/** RSS (bytes) of a proxy idle and with N streams held open. */
export interface RssRow {
  idle: number;
  open: number;
  opened: number;
  failed: number;
}

/** Closed-loop saturation of one arm × mode. */
export interface SatRow {
  rps: number;
  errors: number;
  cpuPer1k: number;
}

/**
 * Sanity-checks every arm on every shape, then warms it up (JIT, keep-alive pools). Returns the CPU
 * seconds each proxy spent on the warm-up. Throws when an arm does not answer or fails a warm-up request.
 */
export async function warmArms(arms: Arm[]): Promise<Map<string, number>> {
  const warm = new Map<string, number>();
  for (const arm of arms) {
    for (const s of Object.values(SHAPES)) {
      const r = await once(arm.url, s);
      if (r === null) throw new Error(`${arm.name} does not answer ${s.path}`);
    }
    const t0 = performance.now();
    const c0 = arm.proc === null ? 0 : cpuSeconds(arm.proc.pid);
    const failed = await warmUp(arm.url, [SHAPES.json, SHAPES.stream]);
    if (failed > 0) throw new Error(`${arm.name} failed ${failed} warm-up requests`);
    if (arm.proc !== null) warm.set(arm.name, cpuSeconds(arm.proc.pid) - c0);
    process.stderr.write(
      `warm-up ${arm.name.padEnd(13)} ${WARM_REQUESTS} requests in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
    );
  }
  return warm;
}

/** Options of the repeated phases: reps, rate (req/s), slice length (s), shuffle seed base. */
interface RateOptions {
  reps: number;
  rate: number;
  seconds: number;
  /** seed of the arm order; the caller advances `order` so every shuffle differs */
  seed: number;
  order: { n: number };
}

/**
 * Phase 1: latency and CPU per 1k requests at a fixed rate, arms interleaved in a shuffled order
 * and repeated. Direct's CPU is the upstream's (`upstream`), so every arm has a CPU column.
 */
export async function fixedRateRuns(arms: Arm[], upstream: Proc, o: RateOptions): Promise<Map<string, RateAcc>> {
  const acc = new Map<string, RateAcc>();
  for (let rep = 0; rep < o.reps; rep++) {
    for (const mode of MODES) {
      for (const arm of shuffled(arms, o.seed * 1000 + o.order.n++)) {
        const pid = arm.proc?.pid ?? upstream.pid;
        const c0 = cpuSeconds(pid);
        const run = await fixedRate(arm.url, SHAPES[mode], o.rate, o.seconds * 1000);
        const c1 = cpuSeconds(pid);
        const a = acc.get(key(arm.name, mode)) ?? {
          total: [],
          first: [],
          cpu: 0,
          sent: 0,
          errors: 0,
          repP50: [],
          repFirstP50: [],
          repCpuPer1k: [],
        };
        a.total.push(...run.total);
        a.first.push(...run.first);
        a.cpu += c1 - c0;
        a.repCpuPer1k.push(((c1 - c0) / run.sent) * 1000);
        a.sent += run.sent;
        a.errors += run.errors;
        a.repP50.push(median(run.total));
        a.repFirstP50.push(median(run.first));
        acc.set(key(arm.name, mode), a);
        process.stderr.write(
          `rep ${rep + 1}/${o.reps} ${mode.padEnd(6)} ${arm.name.padEnd(13)} p50 ${median(run.total).toFixed(3)} ms  cpu ${(c1 - c0).toFixed(2)} s  errors ${run.errors}\n`,
        );
      }
    }
  }
  return acc;
}

/**
 * Phase 1b: CPU only, at a higher fixed rate (proxies only). Between requests at 200 req/s each
 * proxy idles ~5 ms and what waking costs it dominates; at 1,000 req/s less so.
 */
export async function highRateRuns(arms: Arm[], o: RateOptions): Promise<Map<string, CpuAcc>> {
  const acc = new Map<string, CpuAcc>();
  for (let rep = 0; rep < (o.rate > 0 ? o.reps : 0); rep++) {
    for (const mode of MODES) {
      for (const arm of shuffled(arms, o.seed * 3000 + o.order.n++)) {
        if (arm.proc === null) continue;
        const c0 = cpuSeconds(arm.proc.pid);
        const run = await fixedRate(arm.url, SHAPES[mode], o.rate, o.seconds * 1000);
        const c = cpuSeconds(arm.proc.pid) - c0;
        const a = acc.get(key(arm.name, mode)) ?? { cpu: 0, sent: 0, errors: 0, repCpuPer1k: [] };
        a.cpu += c;
        a.sent += run.sent;
        a.errors += run.errors;
        a.repCpuPer1k.push((c / run.sent) * 1000);
        acc.set(key(arm.name, mode), a);
        process.stderr.write(
          `rep ${rep + 1}/${o.reps} ${mode.padEnd(6)} ${arm.name.padEnd(13)} @${o.rate}/s cpu ${c.toFixed(2)} s  errors ${run.errors}\n`,
        );
      }
    }
  }
  return acc;
}

/**
 * Phase 2: RSS of each proxy idle and with `streams` concurrent open streams (held by the upstream
 * until `/release`). Runs before saturation: at 100% sampling that fills the capture queue, whose
 * high-water mark the heap keeps for a while. A stream that fails is counted, never ends the run.
 */
export async function openStreamsRss(arms: Arm[], upstreamUrl: string, streams: number): Promise<Map<string, RssRow>> {
  const rss = new Map<string, RssRow>();
  const holdShape: Shape = { ...SHAPES.stream, path: '/v1/chat/completions?hold=1' };
  for (const arm of streams > 0 ? arms : []) {
    if (arm.proc === null) continue;
    const idle = rssBytes(arm.proc.pid);
    const pool = new Pool(arm.url, {
      connections: streams,
      pipelining: 1,
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
    });
    let firstSeen = 0;
    let failedBeforeOpen = 0;
    const failures = new Map<string, number>();
    const opened = Array.from({ length: streams }, async () => {
      let counted = false;
      try {
        const res = await pool.request({
          path: holdShape.path,
          method: 'POST',
          headers: holdShape.headers,
          body: holdShape.body,
        });
        for await (const _c of res.body) {
          if (!counted) {
            counted = true;
            firstSeen++;
          }
        }
      } catch (err) {
        const k = `${counted ? 'after its first event, ' : ''}${(err as { code?: string }).code ?? (err as Error).name}: ${(err as Error).message}`;
        failures.set(k, (failures.get(k) ?? 0) + 1);
        if (!counted) failedBeforeOpen++;
      }
    });
    const t0 = Date.now();
    while (firstSeen + failedBeforeOpen < streams && Date.now() - t0 < 60_000)
      await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500));
    const open = rssBytes(arm.proc.pid);
    await once(upstreamUrl, { ...SHAPES.json, path: '/release' });
    await Promise.allSettled(opened);
    await pool.close();
    const failed = [...failures.values()].reduce((a, b) => a + b, 0);
    rss.set(arm.name, { idle, open, opened: firstSeen, failed });
    process.stderr.write(
      `rss ${arm.name.padEnd(13)} idle ${(idle / 2 ** 20).toFixed(1)} MiB, ${firstSeen} open streams ${(open / 2 ** 20).toFixed(1)} MiB${failed > 0 ? `, ${failed} failed: ${[...failures].map(([k, n]) => `${n}× ${k}`).join('; ')}` : ''}\n`,
    );
  }
  return rss;
}

/** Phase 3: closed-loop saturation throughput (autocannon) per arm and mode, with the CPU per 1k requests. */
export async function saturationRuns(
  arms: Arm[],
  upstream: Proc,
  o: { seconds: number; connections: number; seed: number },
): Promise<Map<string, SatRow>> {
  const sat = new Map<string, SatRow>();
  for (const mode of o.seconds > 0 ? MODES : []) {
    for (const arm of shuffled(arms, o.seed * 7 + (mode === 'json' ? 1 : 2))) {
      const pid = arm.proc?.pid ?? upstream.pid;
      const c0 = cpuSeconds(pid);
      const r = await autocannon({
        url: arm.url + SHAPES[mode].path,
        method: 'POST',
        headers: SHAPES[mode].headers,
        body: SHAPES[mode].body,
        connections: o.connections,
        duration: o.seconds,
      });
      const c1 = cpuSeconds(pid);
      const n = r.requests.average * o.seconds;
      sat.set(key(arm.name, mode), {
        rps: r.requests.average,
        errors: r.errors + r.non2xx,
        cpuPer1k: ((c1 - c0) / n) * 1000,
      });
      process.stderr.write(
        `saturation ${mode.padEnd(6)} ${arm.name.padEnd(13)} ${r.requests.average.toFixed(0)} req/s\n`,
      );
    }
  }
  return sat;
}

/** Cumulative bucket counts (`le` → count, in the histogram's order) of a sidecar's added-latency histogram; other labels (e.g. `role`) may sit beside `le`. */
export async function addedBuckets(opsUrl: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  const out = new Map<string, number>();
  for (const m of text.matchAll(
    /^shadowplane_sidecar_added_latency_seconds_bucket\{(?:[^}]*,)?le="([^"]+)"[^}]*\} (\d+)$/gm,
  ))
    out.set(m[1]!, Number(m[2]));
  return out;
}

/** Capture sanity: each sidecar's `shadowplane_sidecar_captures_total` lines (sampled outcomes) at the end. */
export async function publishedCaptures(arms: Arm[]): Promise<Record<string, string>> {
  const published: Record<string, string> = {};
  for (const arm of arms) {
    if (!arm.opsUrl) continue;
    const text = await (await fetch(`${arm.opsUrl}/metrics`)).text();
    const lines = text
      .split('\n')
      .filter((l) => l.startsWith('shadowplane_sidecar_captures_total') && !l.includes('not_sampled'));
    published[arm.name] = lines.map((l) => l.replace('shadowplane_sidecar_captures_total', '')).join(' ') || '(none)';
  }
  return published;
}
