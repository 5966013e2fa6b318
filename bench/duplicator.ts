// Duplicator benchmark (run on purpose: `npx tsx bench/duplicator.ts [items] [rounds]`).
// Zero-latency provider-sim in this process, a private nats-server, duplicator workers as child
// processes of the real binary. Each arm (a number of workers) first runs a warm-up campaign of
// BENCH_WARMUP items per worker (default 200: V8 compiles the hot path meanwhile, which would
// otherwise be a third of a 200-item run's CPU), then the measured campaign of [items] items.
// Reports per round, interleaving the arms:
// - dispatch overhead: worker CPU (user+sys from /proc/<pid>/stat — every thread of the process:
//   JIT and GC helpers included) per provider call, for the measured campaign ("steady") and for
//   the warm-up ("cold", start-up itself excluded)
// - throughput: items/s from publish to campaign completion (measured campaign), the purge of its
//   settlement records included
// - NATS messages the workers write per item, and the socket writes that carry them
//   (bench/worker-probe.mjs, preloaded into each worker)
// and prints the ratio of each arm to the 1-worker arm of the same run. BENCH_BASELINE=<dir>, a
// checkout of another commit with its dependencies installed, adds an arm per worker count that
// runs that checkout's binary, interleaved with this one's, and the ratios of this build to it.
// BENCH_WORKERS=1,2 picks the worker counts (default 1,2,4); BENCH_CPU_PROF=<dir> writes a V8 CPU profile
// of each worker's measured window into <dir>; BENCH_NATS_SUBJECTS=1 prints each arm's NATS
// messages per item by kind of subject.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO } from '../services/duplicator/test/harness.js';
import { startNatsServer } from '@shadowplane/testkit';
import { openKv } from '@shadowplane/bus';
import {
  campaignState,
  chatEnvelope,
  launchCampaign,
  publishEnvelopes,
  simConfig,
  sleep,
  spawnWorker,
  startRig,
  waitFor,
  type Rig,
} from '../services/duplicator/test/harness.js';

const ITEMS = Number(process.argv[2] ?? 200);
const ROUNDS = Number(process.argv[3] ?? 2);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 200);
const PROBE = fileURLToPath(new URL('./worker-probe.mjs', import.meta.url));
const WORKERS = (process.env.BENCH_WORKERS ?? '1,2,4').split(',').map(Number);
const BASELINE = process.env.BENCH_BASELINE ? resolve(process.env.BENCH_BASELINE) : null;
/** One arm: a number of workers of this build or of the baseline checkout. */
interface Arm {
  workers: number;
  base: boolean;
}
const ARMS: Arm[] = WORKERS.flatMap((workers) => [
  ...(BASELINE ? [{ workers, base: true }] : []),
  { workers, base: false },
]);
const label = (a: Arm) => `${a.workers} worker${a.workers > 1 ? 's' : ''}${a.base ? ' (baseline)' : ''}`;
const PROF_DIR = process.env.BENCH_CPU_PROF;
const SUBJECTS = process.env.BENCH_NATS_SUBJECTS === '1';
const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

/** A process's CPU so far, ms: user+sys of all its threads, and the sys part. */
function cpuMs(pid: number): { total: number; sys: number } {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  const [user, sys] = [Number(rest[11]) * TICK_MS, Number(rest[12]) * TICK_MS]; // utime, stime (fields 14, 15)
  return { total: user + sys, sys };
}

/** Per kind of subject, summed over a run's workers (BENCH_NATS_SUBJECTS=1). */
const subjectCounts = new Map<string, number>();

/**
 * Asks a worker for its NATS message and socket-write counts since the last ask
 * (worker-probe.mjs; the profile of the window, when one is taken, is written first) and waits.
 */
function natsCounts(child: ChildProcess): Promise<{ messages: number; writes: number }> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('worker did not report its NATS message count')), 60_000);
    let seen = '';
    const on = (d: Buffer) => {
      seen += d.toString();
      const m = /nats-count (\d+)/.exec(seen);
      if (!m) return;
      const subj = /nats-subjects (\{.*\})/.exec(seen);
      if (subj)
        for (const [k, n] of Object.entries(JSON.parse(subj[1]!) as Record<string, number>))
          subjectCounts.set(k, (subjectCounts.get(k) ?? 0) + n);
      const prof = /probe-profile (.*)/.exec(seen);
      if (prof) process.stderr.write(`profile: ${prof[1]}\n`);
      clearTimeout(t);
      child.stderr!.off('data', on);
      resolve({ messages: Number(m[1]), writes: Number(/nats-writes (\d+)/.exec(seen)?.[1] ?? 0) });
    };
    child.stderr!.on('data', on);
    child.kill('SIGUSR2');
  });
}

interface Window {
  itemsPerS: number;
  cpuMsPerCall: number;
  sysShare: number;
  calls: number;
  natsPerItem: number;
  writesPerItem: number;
}

/**
 * Runs one campaign of `items` items on the rig's workers and measures it. Each campaign has a
 * suite of its own: a runner of the campaign before, still stopping, would otherwise take the
 * new captures too (and count an extra read and ack per item).
 */
async function campaign(
  rig: Rig,
  workers: { child: ChildProcess }[],
  name: string,
  items: number,
  round: number,
): Promise<Window> {
  const card = (i: number, o: number) => ({ input: i, output: o });
  const suite = name;
  const { id } = await launchCampaign(rig.bus, {
    name,
    suite,
    call_types: ['qa'],
    incumbent: {
      id: 'large',
      provider: 'simopenai',
      model: 'sim-large',
      rate_card: card(2.5, 10),
      max_output_tokens: 100,
    },
    candidates: [
      {
        id: 'medium',
        provider: 'simanthropic',
        model: 'sim-medium',
        rate_card: card(0.4, 1.6),
        max_output_tokens: 100,
      },
      { id: 'small', provider: 'simrouter', model: 'sim-small', rate_card: card(0.1, 0.4), max_output_tokens: 100 },
    ],
    max_items: items,
    max_cost_usd: 100,
    aa_share: 0,
  });
  const envs = Array.from({ length: items }, (_, i) =>
    chatEnvelope(suite, 'qa', `Bench item ${i} of ${name} round ${round}: add ${i} and ${round}.`),
  );
  const pids = workers.map((w) => w.child.pid!);
  const cpu0 = pids.map(cpuMs);
  const calls0 = rig.sim.calls().length;
  const t0 = performance.now();
  await publishEnvelopes(rig.bus, envs);
  await waitFor('completed', async () => (await campaignState(rig.bus, id))?.state === 'completed', 600_000, 50);
  // a completed campaign's settlement records are purged next (3 per item): part of its work
  const budget = await openKv(rig.bus, rig.bus.names.buckets.budget);
  await waitFor(
    'settlement records compacted',
    async () => {
      for await (const _ of await budget.keys(`${id}.settled.>`)) return false;
      return true;
    },
    600_000,
    50,
  );
  const wallS = (performance.now() - t0) / 1000;
  const cpu1 = pids.map(cpuMs);
  const cpu = cpu1.reduce((a, c, i) => a + c.total - cpu0[i]!.total, 0);
  const sys = cpu1.reduce((a, c, i) => a + c.sys - cpu0[i]!.sys, 0);
  const counts = await Promise.all(workers.map((w) => natsCounts(w.child)));
  const calls = rig.sim.calls().length - calls0;
  return {
    itemsPerS: items / wallS,
    cpuMsPerCall: cpu / calls,
    sysShare: sys / cpu,
    calls,
    natsPerItem: counts.reduce((a, c) => a + c.messages, 0) / items,
    writesPerItem: counts.reduce((a, c) => a + c.writes, 0) / items,
  };
}

async function runArm(natsUrl: string, arm: Arm, round: number): Promise<Window & Arm & { coldCpuMsPerCall: number }> {
  const { workers } = arm;
  const tag = `${workers}${arm.base ? 'b' : ''}`;
  const rig = await startRig(natsUrl, { ...simConfig(), latency_scale: 0 });
  const spawned = await Promise.all(
    Array.from({ length: workers }, () =>
      spawnWorker(
        rig,
        {
          SHADOWPLANE_DUPLICATOR_ITEM_CONCURRENCY: '16',
          SHADOWPLANE_DUPLICATOR_ACK_WAIT_MS: '30000',
          SHADOWPLANE_DUPLICATOR_LEASE_TTL_MS: '15000',
          NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${PROBE}`.trim(),
          NATS_COUNT_SUBJECTS: SUBJECTS ? '1' : '0',
          // the probe's 1st report ends start-up, its 2nd the warm-up: profile the measured window
          ...(PROF_DIR ? { PROBE_CPU_PROF: PROF_DIR, PROBE_CPU_PROF_FROM: '2' } : {}),
        },
        [],
        arm.base ? BASELINE! : REPO,
      ),
    ),
  );
  try {
    await sleep(1000); // let start-up work settle
    await Promise.all(spawned.map((w) => natsCounts(w.child))); // start-up traffic is not counted
    const cold = await campaign(rig, spawned, `bench-warmup-${tag}-${round}`, WARMUP * workers, round);
    subjectCounts.clear();
    const res = await campaign(rig, spawned, `bench-${tag}-${round}`, ITEMS, round);
    if (SUBJECTS) {
      const per = [...subjectCounts].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k}: ${(n / ITEMS).toFixed(2)}`);
      process.stderr.write(`${label(arm)}: NATS messages per item by subject: ${per.join(', ')}\n`);
    }
    return { ...res, ...arm, coldCpuMsPerCall: cold.cpuMsPerCall };
  } finally {
    for (const w of spawned) w.child.kill('SIGKILL');
    await rig.close();
  }
}

const nats = await startNatsServer();
const results: Awaited<ReturnType<typeof runArm>>[] = [];
for (let r = 0; r < ROUNDS; r++) {
  for (const a of r % 2 === 0 ? ARMS : [...ARMS].reverse()) {
    const res = await runArm(nats.url, a, r);
    results.push(res);
    process.stderr.write(
      `round ${r} ${label(a)}: ${res.itemsPerS.toFixed(1)} items/s, ${res.cpuMsPerCall.toFixed(3)} CPU ms/call ` +
        `(${(100 * res.sysShare).toFixed(0)}% in the kernel; cold ${res.coldCpuMsPerCall.toFixed(3)}) over ${res.calls} calls, ` +
        `${res.natsPerItem.toFixed(1)} NATS messages/item in ${res.writesPerItem.toFixed(1)} socket writes\n`,
    );
  }
}
await nats.stop();
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const of = (workers: number, base: boolean) => results.filter((r) => r.workers === workers && r.base === base);
const tput = (rs: typeof results) => mean(rs.map((r) => r.itemsPerS));
const cpu = (rs: typeof results) => mean(rs.map((r) => r.cpuMsPerCall));
const loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const span = (xs: number[], d: number) =>
  `${mean(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})`;
console.log(
  `\nduplicator benchmark — ${ITEMS} items × 3 arms per run after ${WARMUP} warm-up items per worker, ${ROUNDS} interleaved rounds, zero-latency provider-sim`,
);
console.log(`node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load average ${loadavg}`);
if (BASELINE)
  console.log(`baseline: ${execFileSync('git', ['-C', BASELINE, 'log', '-1', '--format=%h %s']).toString().trim()}`);
console.log(
  `\n| workers | items/s (mean, min–max) | × vs 1 worker | ${BASELINE ? '× vs baseline | ' : ''}CPU ms per provider call (mean, min–max) | × vs 1 worker | ${BASELINE ? '× vs baseline | ' : ''}cold: CPU ms per call (warm-up) | NATS messages per item | socket writes per item |`,
);
console.log(`|---|---|---|${BASELINE ? '---|' : ''}---|---|${BASELINE ? '---|' : ''}---|---|---|`);
for (const a of ARMS) {
  const rs = of(a.workers, a.base);
  const one = of(1, a.base);
  const vsBase = (f: (rs: typeof results) => number) =>
    BASELINE ? (a.base ? '1.00 | ' : `${(f(rs) / f(of(a.workers, true))).toFixed(2)} | `) : '';
  console.log(
    `| ${label(a)} | ${span(
      rs.map((r) => r.itemsPerS),
      1,
    )} | ${one.length ? (tput(rs) / tput(one)).toFixed(2) : '–'} | ${vsBase(tput)}` +
      `${span(
        rs.map((r) => r.cpuMsPerCall),
        3,
      )} | ${one.length ? (cpu(rs) / cpu(one)).toFixed(2) : '–'} | ${vsBase(cpu)}` +
      `${mean(rs.map((r) => r.coldCpuMsPerCall)).toFixed(3)} | ${mean(rs.map((r) => r.natsPerItem)).toFixed(1)} | ` +
      `${mean(rs.map((r) => r.writesPerItem)).toFixed(1)} |`,
  );
}
process.exit(0);
