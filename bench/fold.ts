/**
 * Benchmark: the verdict fold (weighted sums per arm) + a 2,000-resample paired cluster bootstrap
 * for each of two candidates, over 100,000 items × 3 arms (incumbent + 2 candidates) — libs/stats
 * in Node vs the same algorithm in numpy (bench/fold_numpy.py), on the same data file.
 *
 * Run: `make bench-fold` (installs Debian's python3-numpy if missing), or
 *      `npx tsx bench/fold.ts` with /usr/bin/python3 having numpy.
 * Env knobs: BENCH_ITEMS (100000), BENCH_CLUSTERS (40000), BENCH_RESAMPLES (2000),
 *            BENCH_ROUNDS (5), BENCH_PYTHON (/usr/bin/python3).
 * Wall times on a shared machine stretch with its load; the CPU-time column (user + system of the
 * worker process) is the steadier comparison. Each round runs every arm once as a fresh process (so peak RSS is per run), alternating the order
 * of arms between rounds; the table shows medians and min–max, and ratios vs the Node baseline
 * measured in the same run. Not part of `vitest run`.
 *
 * Worker mode (internal): `npx tsx bench/fold.ts --worker FILE RESAMPLES SEED` prints one JSON line.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRng, pairedClusterBootstrap, type PairedItem } from '@shadowplane/stats';

/** Column order of the data file: N float64 values each, little-endian. */
const COLUMNS = ['cluster', 'weight', 'q0', 'q1', 'q2', 'x0', 'x1', 'x2'] as const;

interface WorkerResult {
  impl: string;
  readMs: number;
  foldMs: number;
  bootstrapMs: number;
  totalMs: number;
  /** user + system CPU time of the whole worker process, ms (less sensitive to a loaded machine) */
  cpuMs: number;
  baselineRssMb: number;
  peakRssMb: number;
  fold: { sumW: number; meanQ: number[]; costUsd: number[] };
  candidates: { d: [number, number, number]; s: [number, number, number] }[];
}

/** Deterministic synthetic data: clustered items, 3 correlated binary-quality arms, costs in USD. */
function generate(file: string, items: number, clusters: number, seed: number): void {
  const rng = createRng(seed);
  const cols = COLUMNS.map(() => new Float64Array(items));
  const [cl, w, q0, q1, q2, x0, x1, x2] = cols as [
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
  ];
  const clusterSkill = Float64Array.from({ length: clusters }, () => 0.3 + 0.6 * rng());
  for (let i = 0; i < items; i++) {
    const c = Math.floor(rng() * clusters);
    cl[i] = c;
    w[i] = 1 + Math.floor(rng() * 3);
    const p = clusterSkill[c]!;
    const inc = rng() < p ? 1 : 0;
    q0[i] = inc;
    q1[i] = rng() < 0.85 ? inc : 1 - inc; // candidate A: mostly agrees
    q2[i] = rng() < p - 0.05 ? 1 : 0; // candidate B: a bit worse, independent draw
    const tokensIn = 200 + Math.floor(rng() * 1800);
    const tokensOut = 50 + Math.floor(rng() * 450);
    x0[i] = (tokensIn * 2.5 + tokensOut * 10) / 1e6;
    x1[i] = (tokensIn * 0.15 + tokensOut * 0.6) / 1e6;
    x2[i] = (tokensIn * 0.4 + tokensOut * 1.6) / 1e6;
  }
  const buf = Buffer.alloc(items * 8 * COLUMNS.length);
  cols.forEach((col, j) => Buffer.from(col.buffer).copy(buf, j * items * 8));
  writeFileSync(file, buf);
}

/** Worker: read, fold, pair, bootstrap both candidates; report timings and RSS. */
function worker(file: string, resamples: number, seed: number): WorkerResult {
  const baselineRssMb = process.resourceUsage().maxRSS / 1024;
  const t0 = performance.now();
  const raw = readFileSync(file);
  const items = raw.byteLength / 8 / COLUMNS.length;
  const all = new Float64Array(raw.buffer, raw.byteOffset, raw.byteLength / 8);
  const col = (j: number): Float64Array => all.subarray(j * items, (j + 1) * items);
  const [cl, w, q0, q1, q2, x0, x1, x2] = COLUMNS.map((_, j) => col(j)) as Float64Array[] as [
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
    Float64Array,
  ];
  const t1 = performance.now();

  // The fold: weighted sums per arm (quality and cost views), then paired items per candidate.
  const qs = [q0, q1, q2];
  const xs = [x0, x1, x2];
  let sumW = 0;
  const sumWQ = [0, 0, 0];
  const sumWX = [0, 0, 0];
  for (let i = 0; i < items; i++) {
    const wi = w[i]!;
    sumW += wi;
    for (let a = 0; a < 3; a++) {
      sumWQ[a]! += wi * qs[a]![i]!;
      sumWX[a]! += wi * xs[a]![i]!;
    }
  }
  const pairs: PairedItem[][] = [1, 2].map((a) => {
    const out = new Array<PairedItem>(items);
    for (let i = 0; i < items; i++)
      out[i] = {
        cluster: cl[i]!,
        weight: w[i]!,
        qIncumbent: q0[i]!,
        qCandidate: qs[a]![i]!,
        costIncumbentUsd: x0[i]!,
        costCandidateUsd: xs[a]![i]!,
      };
    return out;
  });
  const t2 = performance.now();

  const candidates = pairs.map((p, j) => {
    const r = pairedClusterBootstrap(p, { resamples, seed: seed + j, level: 0.9 });
    const s = r.costSavings!;
    return {
      d: [r.qualityDelta.point, r.qualityDelta.lower, r.qualityDelta.upper] as [number, number, number],
      s: [s.point, s.lower, s.upper] as [number, number, number],
    };
  });
  const t3 = performance.now();
  const cpu = process.cpuUsage();
  return {
    impl: 'node',
    readMs: t1 - t0,
    foldMs: t2 - t1,
    bootstrapMs: t3 - t2,
    totalMs: t3 - t0,
    cpuMs: (cpu.user + cpu.system) / 1000,
    baselineRssMb,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    fold: { sumW, meanQ: sumWQ.map((v) => v / sumW), costUsd: sumWX },
    candidates,
  };
}

function runWorker(cmd: string, args: string[]): WorkerResult {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const line = r.stdout.trim().split('\n').pop()!;
  return JSON.parse(line) as WorkerResult;
}

const median = (v: number[]): number => {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

function main(): void {
  const argv = process.argv.slice(2);
  if (argv[0] === '--worker') {
    const [file, resamples, seed] = [argv[1]!, Number(argv[2]), Number(argv[3])];
    process.stdout.write(`${JSON.stringify(worker(file, resamples, seed))}\n`);
    return;
  }
  const items = Number(process.env.BENCH_ITEMS ?? 100_000);
  const clusters = Number(process.env.BENCH_CLUSTERS ?? 40_000);
  const resamples = Number(process.env.BENCH_RESAMPLES ?? 2000);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
  const python = process.env.BENCH_PYTHON ?? '/usr/bin/python3';
  const here = fileURLToPath(new URL('.', import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), 'shadowplane-bench-fold-'));
  const file = join(dir, 'items.f64');
  try {
    generate(file, items, clusters, 7);
    const numpyVersion = execFileSync(python, ['-c', 'import numpy; print(numpy.__version__)'], {
      encoding: 'utf8',
    }).trim();
    const arms: { name: string; cmd: string; args: string[] }[] = [
      {
        name: 'node (libs/stats)',
        cmd: process.execPath,
        args: ['--import', 'tsx', join(here, 'fold.ts'), '--worker', file, String(resamples), '1'],
      },
      {
        name: 'numpy gather-sum',
        cmd: python,
        args: [join(here, 'fold_numpy.py'), file, String(resamples), '1', 'gather'],
      },
      {
        name: 'numpy multinomial@sums',
        cmd: python,
        args: [join(here, 'fold_numpy.py'), file, String(resamples), '1', 'multinomial'],
      },
    ];
    console.log(
      `fold + paired cluster bootstrap: ${items} items x 3 arms, ${clusters} cluster ids, B = ${resamples} per candidate x 2 candidates, ${rounds} rounds`,
    );
    console.log(
      `node ${process.version}, numpy ${numpyVersion} (${python}), ${cpus().length} x ${cpus()[0]?.model ?? '?'}, loadavg before ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    const results = new Map<string, WorkerResult[]>(arms.map((a) => [a.name, []]));
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? arms : [...arms].reverse();
      for (const a of order) results.get(a.name)!.push(runWorker(a.cmd, a.args));
    }
    console.log(
      `loadavg after ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );

    const base = results.get(arms[0]!.name)!;
    const baseTotal = median(base.map((x) => x.totalMs));
    const baseBoot = median(base.map((x) => x.bootstrapMs));
    const baseRss = median(base.map((x) => x.peakRssMb));
    const baseCpu = median(base.map((x) => x.cpuMs));
    const rows = arms.map((a) => {
      const rs = results.get(a.name)!;
      const tot = rs.map((x) => x.totalMs);
      return {
        impl: a.name,
        'read ms': median(rs.map((x) => x.readMs)).toFixed(0),
        'fold+pair ms': median(rs.map((x) => x.foldMs)).toFixed(0),
        'bootstrap ms': median(rs.map((x) => x.bootstrapMs)).toFixed(0),
        'total ms (median)': median(tot).toFixed(0),
        'total min-max': `${Math.min(...tot).toFixed(0)}-${Math.max(...tot).toFixed(0)}`,
        'cpu ms (median)': median(rs.map((x) => x.cpuMs)).toFixed(0),
        'peak RSS MB': median(rs.map((x) => x.peakRssMb)).toFixed(0),
        'RSS at start MB': median(rs.map((x) => x.baselineRssMb)).toFixed(0),
        'total / node': (median(tot) / baseTotal).toFixed(2),
        'cpu / node': (median(rs.map((x) => x.cpuMs)) / baseCpu).toFixed(2),
        'bootstrap / node': (median(rs.map((x) => x.bootstrapMs)) / baseBoot).toFixed(2),
        'RSS / node': (median(rs.map((x) => x.peakRssMb)) / baseRss).toFixed(2),
      };
    });
    console.table(rows);

    // Same answers: fold sums and point estimates identical; intervals agree within Monte Carlo error
    // (different RNG streams).
    const ref = base[0]!;
    for (const a of arms.slice(1)) {
      const o = results.get(a.name)![0]!;
      const pointDiff = Math.max(
        Math.abs(o.fold.sumW - ref.fold.sumW),
        ...o.fold.meanQ.map((v, i) => Math.abs(v - ref.fold.meanQ[i]!)),
        ...o.candidates.flatMap((c, j) => [
          Math.abs(c.d[0] - ref.candidates[j]!.d[0]),
          Math.abs(c.s[0] - ref.candidates[j]!.s[0]),
        ]),
      );
      const boundDiff = Math.max(
        ...o.candidates.flatMap((c, j) =>
          [1, 2].flatMap((k) => [
            Math.abs(c.d[k]! - ref.candidates[j]!.d[k]!),
            Math.abs(c.s[k]! - ref.candidates[j]!.s[k]!),
          ]),
        ),
      );
      console.log(
        `${a.name} vs node: max |point diff| ${pointDiff.toExponential(2)}, max |interval bound diff| ${boundDiff.toExponential(2)}`,
      );
    }
    ref.candidates.forEach((c, j) =>
      console.log(
        `candidate ${j + 1}: D ${c.d.map((v) => (100 * v).toFixed(2)).join(' / ')} pp (point / 5% / 95%), S ${c.s.map((v) => (100 * v).toFixed(1)).join(' / ')} %`,
      ),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
