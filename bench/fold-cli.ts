/**
 * Benchmark: the whole `shadowplane fold OBS.jsonl --bundle OUT` (read and validate every line,
 * fold, two 2,000-resample paired cluster bootstraps, write the evidence bundle) on N items × 3
 * arms (incumbent + 2 candidates) plus one duplicate event per 3 items — next to the same
 * pipeline written with numpy (bench/fold_cli_numpy.py), on the same file, in the same run.
 *
 * Run: `make bench-fold-cli` (installs Debian's python3-numpy if missing), or
 *      `npx tsx bench/fold-cli.ts` with /usr/bin/python3 having numpy.
 * Env knobs: BENCH_ITEMS (100000), BENCH_ROUNDS (3), BENCH_PYTHON (/usr/bin/python3), BENCH_NODE24
 * (a Node 24 binary: the image's Node; `make bench-fold-cli` installs one and passes it).
 * Shadowplane runs as users run it: the compiled build (dist/, `make build`), on this Node and on
 * BENCH_NODE24 when given.
 * Each arm runs as a fresh process under /usr/bin/time (wall, user + system CPU, peak RSS of the
 * process); rounds alternate the order. On a shared, loaded machine the wall time stretches with
 * the load; CPU time is the steadier comparison, so both ratios are printed. Not part of `vitest run`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { synthCampaign, synthEvent } from '@shadowplane/testkit';

interface Measured {
  wallS: number;
  cpuS: number;
  peakRssMb: number;
}

/** Runs `cmd args` (with `env` added) under /usr/bin/time; errors when it exits non-zero. */
function timed(cmd: string, args: string[], env: Record<string, string> = {}): Measured {
  const r = spawnSync('/usr/bin/time', ['-f', 'BENCH %e %U %S %M', cmd, ...args], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { ...process.env, ...env },
  });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  const m = /BENCH ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(r.stderr);
  if (!m) throw new Error(`no /usr/bin/time line in: ${r.stderr.slice(-500)}`);
  return { wallS: Number(m[1]), cpuS: Number(m[2]) + Number(m[3]), peakRssMb: Number(m[4]) / 1024 };
}

const median = (v: number[]): number => {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

function main(): void {
  const items = Number(process.env.BENCH_ITEMS ?? 100_000);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const python = process.env.BENCH_PYTHON ?? '/usr/bin/python3';
  const here = fileURLToPath(new URL('.', import.meta.url));
  const root = join(here, '..');
  const dir = mkdtempSync(join(tmpdir(), 'shadowplane-bench-fold-cli-'));
  const file = join(dir, 'obs.jsonl');
  try {
    const cid = 'cmp_benchbenchbench01';
    const msgs = [
      ...synthCampaign(cid, items, 0.9, { a: 'same', b: 0.8 }),
      ...Array.from({ length: Math.ceil(items / 3) }, (_, k) => synthEvent(cid, 3 * k, 'duplicate', null)),
    ];
    writeFileSync(file, `${msgs.map((m) => JSON.stringify(m)).join('\n')}\n`);
    const lines = msgs.length;
    msgs.length = 0;
    const numpyVersion = execFileSync(python, ['-c', 'import numpy; print(numpy.__version__)'], {
      encoding: 'utf8',
    }).trim();
    const bin = join(root, 'services/shadowplane/bin/shadowplane.mjs');
    const foldArgs = (tag: string) => [
      bin,
      'fold',
      file,
      '--bundle',
      join(dir, `${tag}.bundle.json`),
      '--json',
      join(dir, `${tag}.report.json`),
    ];
    const node24 = process.env.BENCH_NODE24;
    const dist = { SHADOWPLANE_RUN_FROM: 'dist' };
    const arms: { name: string; cmd: string; args: string[]; env?: Record<string, string> }[] = [
      {
        name: `shadowplane fold --bundle (Node ${process.versions.node})`,
        cmd: process.execPath,
        args: foldArgs('node'),
        env: dist,
      },
      ...(node24
        ? [
            {
              name: `shadowplane fold --bundle (Node ${execFileSync(node24, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim()})`,
              cmd: node24,
              args: foldArgs('node24'),
              env: dist,
            },
          ]
        : []),
      {
        name: 'numpy pipeline',
        cmd: python,
        args: [join(here, 'fold_cli_numpy.py'), file, '2000', '1', join(dir, 'numpy.bundle.json')],
      },
    ];
    console.log(
      `shadowplane fold: ${items} items x 3 arms, ${lines} OBS lines, B = 2000 x 2 candidates, ${rounds} round(s)`,
    );
    console.log(
      `node ${process.version}, numpy ${numpyVersion}, ${cpus().length} x ${cpus()[0]?.model ?? '?'}, loadavg before ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    const res = new Map<string, Measured[]>(arms.map((a) => [a.name, []]));
    for (let r = 0; r < rounds; r++)
      for (const a of r % 2 === 0 ? arms : [...arms].reverse()) res.get(a.name)!.push(timed(a.cmd, a.args, a.env));
    console.log(
      `loadavg after ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    const base = res.get('numpy pipeline')!;
    const bw = median(base.map((x) => x.wallS));
    const bc = median(base.map((x) => x.cpuS));
    // medians over the rounds; peak RSS also as its range (V8's collection timing moves it by tens of MB)
    console.log('| impl | wall s | cpu s | peak RSS MB | peak RSS range MB | wall / numpy | cpu / numpy |');
    console.log('|---|---|---|---|---|---|---|');
    for (const a of arms) {
      const m = res.get(a.name)!;
      const w = median(m.map((x) => x.wallS));
      const c = median(m.map((x) => x.cpuS));
      const rss = m.map((x) => x.peakRssMb);
      console.log(
        `| ${a.name} | ${w.toFixed(1)} | ${c.toFixed(1)} | ${median(rss).toFixed(0)} | ${Math.min(...rss).toFixed(0)}–${Math.max(...rss).toFixed(0)} | ${(w / bw).toFixed(2)} | ${(c / bc).toFixed(2)} |`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
