// Duplicator benchmark (run on purpose: `npx tsx bench/duplicator.ts [items] [rounds]`).
// Zero-latency provider-sim in this process, a private nats-server, duplicator workers as child
// processes of the real binary. Reports per round, interleaving 1- and 2-worker arms:
// - dispatch overhead: worker CPU (user+sys from /proc/<pid>/stat, startup excluded) per provider call
// - throughput: items/s from publish to campaign completion
// - NATS messages the workers write per item (bench/nats-count.mjs, preloaded into each worker)
// and prints the ratio of each arm to the 1-worker baseline measured in the same run.
// BENCH_WORKERS=1,2 picks the arms (default 1,2,4); BENCH_CPU_PROF=<dir> runs each worker under
// `node --cpu-prof` into <dir> and stops workers with SIGTERM so the profile gets written;
// BENCH_NATS_SUBJECTS=1 prints each arm's NATS messages per item by kind of subject.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startNatsServer } from '@shadowplane/testkit';
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
} from '../services/duplicator/test/harness.js';

const ITEMS = Number(process.argv[2] ?? 200);
const ROUNDS = Number(process.argv[3] ?? 2);
const COUNTER = fileURLToPath(new URL('./nats-count.mjs', import.meta.url));
const ARMS = (process.env.BENCH_WORKERS ?? '1,2,4').split(',').map(Number);
const PROF_DIR = process.env.BENCH_CPU_PROF;
const SUBJECTS = process.env.BENCH_NATS_SUBJECTS === '1';
const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) * TICK_MS; // utime, stime (fields 14, 15)
}

/** Per kind of subject, summed over a run's workers (BENCH_NATS_SUBJECTS=1). */
const subjectCounts = new Map<string, number>();

/** Asks a worker for its NATS message count since the last ask (nats-count.mjs) and waits for the answer. */
function natsMessages(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('worker did not report its NATS message count')), 30_000);
    let seen = '';
    const on = (d: Buffer) => {
      seen += d.toString();
      const m = /nats-count (\d+)/.exec(seen);
      if (!m) return;
      const subj = /nats-subjects (\{.*\})/.exec(seen);
      if (subj)
        for (const [k, n] of Object.entries(JSON.parse(subj[1]!) as Record<string, number>))
          subjectCounts.set(k, (subjectCounts.get(k) ?? 0) + n);
      clearTimeout(t);
      child.stderr!.off('data', on);
      resolve(Number(m[1]));
    };
    child.stderr!.on('data', on);
    child.kill('SIGUSR2');
  });
}

async function runArm(
  natsUrl: string,
  workers: number,
  round: number,
): Promise<{ workers: number; itemsPerS: number; cpuMsPerCall: number; calls: number; natsPerItem: number }> {
  const cfg = simConfig();
  const rig = await startRig(natsUrl, { ...cfg, latency_scale: 0 });
  const spawned = await Promise.all(
    Array.from({ length: workers }, () =>
      spawnWorker(
        rig,
        {
          SHADOWPLANE_DUPLICATOR_ITEM_CONCURRENCY: '16',
          SHADOWPLANE_DUPLICATOR_ACK_WAIT_MS: '30000',
          SHADOWPLANE_DUPLICATOR_LEASE_TTL_MS: '15000',
          NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${COUNTER}`.trim(),
          NATS_COUNT_SUBJECTS: SUBJECTS ? '1' : '0',
        },
        PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROF_DIR}`] : [],
      ),
    ),
  );
  try {
    await sleep(1000); // let start-up work settle before measuring
    const card = (i: number, o: number) => ({ input: i, output: o });
    const { id } = await launchCampaign(rig.bus, {
      name: `bench-${workers}-${round}`,
      suite: 'bench',
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
      max_items: ITEMS,
      max_cost_usd: 100,
      aa_share: 0,
    });
    const envs = Array.from({ length: ITEMS }, (_, i) =>
      chatEnvelope('bench', 'qa', `Bench item ${i} round ${round}: add ${i} and ${round}.`),
    );
    await Promise.all(spawned.map((w) => natsMessages(w.child))); // start-up traffic is not counted
    subjectCounts.clear();
    const cpu0 = spawned.map((w) => cpuMs(w.child.pid!));
    const t0 = performance.now();
    await publishEnvelopes(rig.bus, envs);
    await waitFor('completed', async () => (await campaignState(rig.bus, id))?.state === 'completed', 600_000, 50);
    const wallS = (performance.now() - t0) / 1000;
    const cpu = spawned.reduce((a, w, i) => a + cpuMs(w.child.pid!) - cpu0[i]!, 0);
    const msgs = (await Promise.all(spawned.map((w) => natsMessages(w.child)))).reduce((a, b) => a + b, 0);
    const calls = rig.sim.calls().length;
    if (SUBJECTS) {
      const per = [...subjectCounts].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k}: ${(n / ITEMS).toFixed(2)}`);
      process.stderr.write(`workers ${workers} NATS messages per item by subject: ${per.join(', ')}\n`);
    }
    return { workers, itemsPerS: ITEMS / wallS, cpuMsPerCall: cpu / calls, calls, natsPerItem: msgs / ITEMS };
  } finally {
    if (PROF_DIR) {
      // a profile is written at a clean exit only
      await Promise.all(
        spawned.map(
          (w) =>
            new Promise<void>((res) => {
              const t = setTimeout(() => (w.child.kill('SIGKILL'), res()), 30_000);
              w.child.once('exit', () => (clearTimeout(t), res()));
              w.child.kill('SIGTERM');
            }),
        ),
      );
    } else for (const w of spawned) w.child.kill('SIGKILL');
    await rig.close();
  }
}

const nats = await startNatsServer();
const results: Awaited<ReturnType<typeof runArm>>[] = [];
for (let r = 0; r < ROUNDS; r++) {
  for (const w of r % 2 === 0 ? ARMS : [...ARMS].reverse()) {
    const res = await runArm(nats.url, w, r);
    results.push(res);
    process.stderr.write(
      `round ${r} workers ${w}: ${res.itemsPerS.toFixed(1)} items/s, ${res.cpuMsPerCall.toFixed(3)} CPU ms/call over ${res.calls} calls, ${res.natsPerItem.toFixed(1)} NATS messages/item\n`,
    );
  }
}
await nats.stop();
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const base = results.filter((r) => r.workers === 1);
const baseTput = mean(base.map((r) => r.itemsPerS));
const baseCpu = mean(base.map((r) => r.cpuMsPerCall));
const loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(
  `\nduplicator benchmark — ${ITEMS} items × 3 arms per run, ${ROUNDS} interleaved rounds, zero-latency provider-sim`,
);
console.log(`node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load average ${loadavg}\n`);
console.log(
  '| workers | items/s (mean, min–max) | × vs 1 worker | CPU ms per provider call (mean, min–max) | × vs 1 worker | NATS messages per item |',
);
console.log('|---|---|---|---|---|---|');
for (const w of ARMS) {
  const rs = results.filter((r) => r.workers === w);
  const t = rs.map((r) => r.itemsPerS);
  const c = rs.map((r) => r.cpuMsPerCall);
  const n = mean(rs.map((r) => r.natsPerItem));
  console.log(
    `| ${w} | ${mean(t).toFixed(1)} (${Math.min(...t).toFixed(1)}–${Math.max(...t).toFixed(1)}) | ${(mean(t) / baseTput).toFixed(2)} | ${mean(c).toFixed(3)} (${Math.min(...c).toFixed(3)}–${Math.max(...c).toFixed(3)}) | ${(mean(c) / baseCpu).toFixed(2)} | ${n.toFixed(1)} |`,
  );
}
process.exit(0);
