// The sidecar benchmark's output: the text table on stdout and the same figures as JSON.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { median, quantile, WARM_REQUESTS } from '../lib/harness.js';
import { BENCH_NICE, pkgVersion, REPO } from '../lib/procs.js';
import type { Arm } from './arms.js';
import { key, MODES, type CpuAcc, type RateAcc, type RssRow, type SatRow } from './phases.js';

/** Everything one run measured, and the settings it ran with. */
export interface Results {
  arms: Arm[];
  ncpu: number;
  genCpu: string;
  proxyCpu: string;
  nginxVersion: string | null;
  settings: {
    rate: number;
    rateHigh: number;
    seconds: number;
    reps: number;
    seed: number;
    satSeconds: number;
    satConnections: number;
    streams: number;
  };
  acc: Map<string, RateAcc>;
  accHigh: Map<string, CpuAcc>;
  addedDuring: Map<string, Map<string, number>>;
  warm: Map<string, number>;
  rss: Map<string, RssRow>;
  rssAfterSat: Map<string, number>;
  sat: Map<string, SatRow>;
  published: Record<string, string>;
}

const fmt = (n: number, d = 3) => (Number.isFinite(n) ? n.toFixed(d) : '—');

/**
 * The report as lines: per shape, each arm's CPU per 1k requests with its ratio to nginx+mirror
 * (pooled and per rep), latency and what each proxy adds over direct, saturation; then CPU at the
 * higher rate, sampled − unsampled, the sidecars' own added-latency histogram, warm-up CPU, RSS
 * with open streams and the captures each sidecar published.
 */
export function reportLines(r: Results): string[] {
  const { arms, acc, accHigh, sat, settings: s } = r;
  const direct = (mode: string) => acc.get(key('direct', mode))!;
  const ref = arms.some((a) => a.name === 'nginx+mirror') ? 'nginx+mirror' : null;
  /** CPU s per 1k requests, its ratio to the reference arm (pooled), and the per-rep ratios (median, min…max). */
  const cpuCells = (m: Map<string, CpuAcc>, name: string, mode: string): [string, string, string] => {
    const a = m.get(key(name, mode));
    const b = ref ? m.get(key(ref, mode)) : undefined;
    if (!a) return ['—', '—', '—'];
    const c = (a.cpu / a.sent) * 1000;
    if (!b) return [fmt(c, 4), '—', '—'];
    // the same rep's slices ran minutes apart at most: their ratio cancels slow drifts of the machine
    const reps = a.repCpuPer1k.map((x, i) => x / b.repCpuPer1k[i]!);
    return [
      fmt(c, 4),
      fmt(c / ((b.cpu / b.sent) * 1000), 2),
      `${fmt(median(reps), 2)} (${fmt(Math.min(...reps), 2)}…${fmt(Math.max(...reps), 2)})`,
    ];
  };
  const lines: string[] = [];
  lines.push(`Shadowplane sidecar overhead — ${new Date().toISOString()}`);
  lines.push(
    `machine: ${cpus()[0]?.model ?? '?'} × ${r.ncpu}; node ${process.version}; undici ${pkgVersion('undici')}; ${r.nginxVersion ?? 'nginx absent'}`,
  );
  lines.push(
    `generator+upstream+NATS on CPU ${r.genCpu}, proxies on CPU ${r.proxyCpu}, nice ${BENCH_NICE}; fixed rate ${s.rate} req/s × ${s.seconds} s × ${s.reps} reps per arm and mode (interleaved, seed ${s.seed}); saturation ${s.satConnections} connections × ${s.satSeconds} s`,
  );
  lines.push(
    'added = arm − direct at the same quantile (pooled over reps); rep-spread = min…max of per-rep p50 differences',
  );
  for (const mode of MODES) {
    const d = direct(mode);
    lines.push('');
    lines.push(
      mode === 'json' ? 'non-streaming, 1 KB JSON request → ~1 KB JSON response' : 'streaming (SSE, 18 events)',
    );
    const hdr = [
      'arm',
      'CPU s/1k req',
      `× ${ref ?? 'ref'}`,
      'per-rep × (median, min…max)',
      'p50 ms',
      'p99 ms',
      'added p50',
      'added p99',
      'rep-spread p50',
      mode === 'stream' ? 'added TTFT p50' : 'TTFB p50',
      'sat req/s',
      'errors',
    ];
    lines.push(hdr.join(' | '));
    for (const arm of arms) {
      const a = acc.get(key(arm.name, mode))!;
      const cells = arm.proc ? cpuCells(acc, arm.name, mode) : (['—', '—', '—'] as const);
      const repDiff = a.repP50.map((x, i) => x - (d.repP50[i] ?? NaN));
      const st = sat.get(key(arm.name, mode));
      lines.push(
        [
          arm.name,
          ...cells,
          fmt(median(a.total)),
          fmt(quantile(a.total, 0.99)),
          arm.proc ? fmt(median(a.total) - median(d.total)) : '—',
          arm.proc ? fmt(quantile(a.total, 0.99) - quantile(d.total, 0.99)) : '—',
          arm.proc ? `${fmt(Math.min(...repDiff))}…${fmt(Math.max(...repDiff))}` : '—',
          mode === 'stream' && arm.proc ? fmt(median(a.first) - median(d.first)) : fmt(median(a.first)),
          st ? st.rps.toFixed(0) : '—',
          String(a.errors + (st?.errors ?? 0)),
        ].join(' | '),
      );
    }
  }
  if (accHigh.size > 0) {
    lines.push('');
    lines.push(
      `CPU at ${s.rateHigh} req/s (${s.reps} reps × ${s.seconds} s per arm and mode, interleaved; no latency taken)`,
    );
    lines.push(
      [
        'arm',
        'JSON CPU s/1k req',
        `× ${ref ?? 'ref'}`,
        'per-rep ×',
        'SSE CPU s/1k req',
        `× ${ref ?? 'ref'}`,
        'per-rep ×',
        'errors',
      ].join(' | '),
    );
    for (const arm of arms) {
      if (arm.proc === null) continue;
      const errors =
        (accHigh.get(key(arm.name, 'json'))?.errors ?? 0) + (accHigh.get(key(arm.name, 'stream'))?.errors ?? 0);
      lines.push(
        [
          arm.name,
          ...cpuCells(accHigh, arm.name, 'json'),
          ...cpuCells(accHigh, arm.name, 'stream'),
          String(errors),
        ].join(' | '),
      );
    }
  }
  // target: sampled requests no slower than unsampled ones (same run, same reps)
  for (const mode of MODES) {
    const s0 = acc.get(key('sidecar 0%', mode));
    const s1 = acc.get(key('sidecar 100%', mode));
    if (!s0 || !s1) continue;
    const diffs = s1.repP50.map((x, i) => x - (s0.repP50[i] ?? NaN));
    lines.push(
      `sampled (100%) − unsampled (0%), ${mode}: p50 ${fmt(median(s1.total) - median(s0.total))} ms, p99 ${fmt(quantile(s1.total, 0.99) - quantile(s0.total, 0.99))} ms, per-rep p50 ${diffs.map((x) => fmt(x)).join(' ')}`,
    );
  }
  lines.push('');
  lines.push(
    `time each sidecar spent on a request itself (its shadowplane_sidecar_added_latency_seconds histogram over the ${s.rate} req/s runs, both shapes):`,
  );
  lines.push('arm | requests | ≤ 0.1 ms | ≤ 0.3 ms | ≤ 1 ms | ≤ 2 ms | p50 ≤ | p99 ≤');
  for (const [name, b] of r.addedDuring) {
    const total = b.get('+Inf') ?? 0;
    const share = (le: string) => (total > 0 ? `${(((b.get(le) ?? 0) / total) * 100).toFixed(2)}%` : '—');
    const q = (x: number) => {
      const le = [...b].find(([l, n]) => l !== '+Inf' && n >= x * total)?.[0];
      return le === undefined ? '> 50' : String(Number(le) * 1000);
    };
    lines.push(
      `${name} | ${total} | ${share('0.0001')} | ${share('0.0003')} | ${share('0.001')} | ${share('0.002')} | ${q(0.5)} ms | ${q(0.99)} ms`,
    );
  }
  lines.push('');
  lines.push(
    `warm-up before measuring: ${WARM_REQUESTS} requests per arm (JSON and SSE alternating), CPU s spent on it:`,
  );
  lines.push(`  ${[...r.warm].map(([name, x]) => `${name} ${fmt(x, 2)}`).join(' · ')}`);
  if (s.streams > 0) {
    lines.push('');
    lines.push(`RSS with ${s.streams} concurrent open streams`);
    lines.push('arm | idle MiB | open MiB | streams open | streams failed | after the saturation runs MiB');
    const mib = (b: number | undefined) => (b === undefined ? '—' : (b / 2 ** 20).toFixed(1));
    for (const [name, v] of r.rss)
      lines.push(
        `${name} | ${mib(v.idle)} | ${mib(v.open)} | ${v.opened} | ${v.failed} | ${mib(r.rssAfterSat.get(name))}`,
      );
  }
  lines.push('');
  lines.push('captures by outcome (sidecar /metrics at the end):');
  for (const [k, v] of Object.entries(r.published)) lines.push(`  ${k}: ${v}`);
  return lines;
}

/** Writes the run's figures as JSON to `loadtests/out/sidecar-bench-<ms>.json`; returns the path. */
export function writeResultsJson(r: Results): string {
  const outDir = join(REPO, 'loadtests', 'out');
  mkdirSync(outDir, { recursive: true });
  const outFile = join(outDir, `sidecar-bench-${Date.now()}.json`);
  const s = r.settings;
  writeFileSync(
    outFile,
    JSON.stringify(
      {
        at: new Date().toISOString(),
        rate: s.rate,
        rateHigh: s.rateHigh,
        seconds: s.seconds,
        reps: s.reps,
        arms: r.arms.map((a) => a.name),
        fixedRate: Object.fromEntries(
          [...r.acc].map(([k, a]) => [
            k,
            {
              p50: median(a.total),
              p99: quantile(a.total, 0.99),
              firstP50: median(a.first),
              cpuPer1k: (a.cpu / a.sent) * 1000,
              repCpuPer1k: a.repCpuPer1k,
              sent: a.sent,
              errors: a.errors,
              repP50: a.repP50,
            },
          ]),
        ),
        cpuAtRateHigh: Object.fromEntries(
          [...r.accHigh].map(([k, a]) => [
            k,
            { cpuPer1k: (a.cpu / a.sent) * 1000, repCpuPer1k: a.repCpuPer1k, sent: a.sent, errors: a.errors },
          ]),
        ),
        saturation: Object.fromEntries(r.sat),
        rss: Object.fromEntries(r.rss),
        rssAfterSaturation: Object.fromEntries(r.rssAfterSat),
        addedLatencyBuckets: Object.fromEntries([...r.addedDuring].map(([k, v]) => [k, Object.fromEntries(v)])),
        warmUp: { requests: WARM_REQUESTS, cpuSeconds: Object.fromEntries(r.warm) },
        published: r.published,
      },
      null,
      2,
    ),
  );
  return outFile;
}
