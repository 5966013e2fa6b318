// Start-time benchmark: `npm run bench:start`.
//
// Time from spawn() of `node services/shadowplane/bin/shadowplane.mjs sidecar ...` to the
// sidecar's `{"event":"listening"}` line on stdout (it prints it once both ports accept
// connections), with the sources run through tsx (SHADOWPLANE_RUN_FROM=src) and with the compiled
// build (SHADOWPLANE_RUN_FROM=dist) side by side: the two arms alternate run by run, in a seeded
// shuffled order within each pair, against one local nats-server. Also the time to exit of
// `shadowplane --help` (no role loaded). It runs `scripts/build.mjs` first, so dist/ is this tree.
//
// Reported per arm: median, p90, min and max in ms, and the ratio src / dist of the medians; for
// the sidecar also the CPU time the process had used when it printed the line (the sum of
// /proc/<pid>/task/*/schedstat, so threads too), which a loaded machine inflates far less than
// wall time.
// tsx keeps a transform cache in the OS temp dir: the first src run of a fresh machine is slower
// (cold), the others hit the cache, as a restarted container with a kept /tmp does.
//
// Knobs (env): BENCH_RUNS (runs per arm, default 15), BENCH_SEED (default 1).
// Output: a table on stdout and JSON in loadtests/out/.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startNatsServer } from '@shadowplane/testkit';
import { median, quantile, shuffled } from './lib/harness.js';
import { REPO } from './lib/procs.js';
import { runMain } from './lib/run.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const SEED = Number(process.env.BENCH_SEED ?? 1);
const BIN = join(REPO, 'services/shadowplane/bin/shadowplane.mjs');
/** generous: a loaded 2-core machine can take several seconds for the tsx arm */
const READY_TIMEOUT_MS = 60_000;

type Arm = 'src' | 'dist';

/** ms of CPU the live threads of `pid` have used (Linux schedstat; NaN elsewhere). */
function cpuMs(pid: number): number {
  try {
    let ns = 0;
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
    }
    return ns / 1e6;
  } catch {
    return NaN;
  }
}

/**
 * Spawns the binary; resolves with ms from spawn to its listening line (`ready`) or to its exit,
 * and, for `ready`, the CPU ms it had used by then.
 */
function timeStart(arm: Arm, args: string[], natsUrl: string, ready: boolean): Promise<{ ms: number; cpu: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: REPO,
      env: {
        ...process.env,
        SHADOWPLANE_RUN_FROM: arm,
        SHADOWPLANE_LOG_LEVEL: 'warn',
        SHADOWPLANE_NATS_URL: natsUrl,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${arm} ${args[0]}: not ready within ${READY_TIMEOUT_MS} ms\n${stderr}`));
    }, READY_TIMEOUT_MS);
    let elapsed: number | null = null;
    let cpu = NaN;
    if (ready) {
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (elapsed !== null || !line.includes('"listening"')) return;
        elapsed = performance.now() - t0;
        cpu = cpuMs(child.pid!);
        child.kill('SIGTERM');
      });
    } else {
      child.stdout.resume();
    }
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (!ready) elapsed = performance.now() - t0;
      if (elapsed === null || (!ready && code !== 0)) {
        reject(new Error(`${arm} ${args[0]}: exited ${code} before it was ready\n${stderr}`));
      } else resolve({ ms: elapsed, cpu });
    });
  });
}

function summary(xs: number[]): { median: number; p90: number; min: number; max: number } {
  return { median: median(xs), p90: quantile(xs, 0.9), min: Math.min(...xs), max: Math.max(...xs) };
}

async function main(): Promise<number> {
  const b = spawnSync(process.execPath, [join(REPO, 'scripts/build.mjs')], { cwd: REPO, stdio: 'inherit' });
  if (b.status !== 0) throw new Error('scripts/build.mjs failed');
  const nats = await startNatsServer();
  const sidecar = [
    'sidecar',
    '--listen',
    '127.0.0.1:0',
    '--ops-listen',
    '127.0.0.1:0',
    '--upstream',
    'http://127.0.0.1:1',
    '--nats',
    nats.url,
  ];
  const cases = [
    { name: 'sidecar: spawn → listening', args: sidecar, ready: true },
    { name: 'shadowplane --help: spawn → exit', args: ['--help'], ready: false },
  ];
  const results: Record<string, Record<Arm, number[]>> = {};
  const cpuResults: Record<Arm, number[]> = { src: [], dist: [] };
  try {
    for (const c of cases) {
      const times: Record<Arm, number[]> = { src: [], dist: [] };
      // One untimed start per arm first: fills the tsx cache and the OS page cache alike.
      for (const arm of ['src', 'dist'] as const) await timeStart(arm, c.args, nats.url, c.ready);
      for (let i = 0; i < RUNS; i++) {
        for (const arm of shuffled<Arm>(['src', 'dist'], SEED + i)) {
          const r = await timeStart(arm, c.args, nats.url, c.ready);
          times[arm].push(r.ms);
          if (c.ready) cpuResults[arm].push(r.cpu);
        }
      }
      results[c.name] = times;
    }
  } finally {
    await nats.stop();
  }

  const f = (n: number) => n.toFixed(0).padStart(6);
  const out: Record<string, unknown> = {};
  console.log(
    `\nstart time, ${RUNS} runs per arm, ${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(1)}, Node ${process.version} (ms)`,
  );
  console.log(`${'case'.padEnd(36)} ${'arm'.padEnd(5)} median    p90    min    max`);
  for (const [name, t] of Object.entries(results)) {
    const s = { src: summary(t.src), dist: summary(t.dist) };
    for (const arm of ['src', 'dist'] as const) {
      console.log(
        `${name.padEnd(36)} ${arm.padEnd(5)} ${f(s[arm].median)} ${f(s[arm].p90)} ${f(s[arm].min)} ${f(s[arm].max)}`,
      );
    }
    const ratio = s.src.median / s.dist.median;
    console.log(`${''.padEnd(36)} src/dist median ratio ${ratio.toFixed(2)}×`);
    out[name] = { ...s, ratio_src_over_dist: ratio, runs: t };
  }
  const cs = { src: summary(cpuResults.src), dist: summary(cpuResults.dist) };
  const name = 'sidecar: CPU used by listening';
  for (const arm of ['src', 'dist'] as const) {
    console.log(
      `${name.padEnd(36)} ${arm.padEnd(5)} ${f(cs[arm].median)} ${f(cs[arm].p90)} ${f(cs[arm].min)} ${f(cs[arm].max)}`,
    );
  }
  console.log(`${''.padEnd(36)} src/dist median ratio ${(cs.src.median / cs.dist.median).toFixed(2)}×`);
  out[name] = { ...cs, ratio_src_over_dist: cs.src.median / cs.dist.median, runs: cpuResults };
  mkdirSync(join(REPO, 'loadtests/out'), { recursive: true });
  const file = join(REPO, 'loadtests/out', `start-time-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ runs: RUNS, seed: SEED, node: process.version, cases: out }, null, 2));
  console.log(`\n${file}`);
  return 0;
}

runMain('start-time', main);
