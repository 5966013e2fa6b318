// Benchmark: provider-sim non-streaming throughput on one core with zero configured latency.
//
//   npx tsx bench/provider-sim.ts
//
// The servers (sim and a bare node:http baseline) run in child processes pinned to core 1 with
// `taskset -c 1`; this process (the autocannon load generator) pins itself to core 0. Arms are
// interleaved over rounds (order rotated each round) so background load hits all arms alike; the
// table gives median/min/max req/s per arm and the ratio to the baseline measured in the same run.
// It also reads the server process's CPU time (/proc/<pid>/stat utime+stime) around each arm:
// server CPU µs per request is far less sensitive to other load on the machine than req/s, and
// 1e6 / (CPU µs per request) is the req/s one core could serve if the generator kept up.
// Knobs: SIM_BENCH_DURATION_S (8), SIM_BENCH_ROUNDS (3), SIM_BENCH_CONNECTIONS (32),
// SIM_BENCH_WARMUP_S (2). Target (issue 3): ≥ 3,000 req/s for the sim arms.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const DURATION_S = Number(process.env.SIM_BENCH_DURATION_S ?? 8);
const ROUNDS = Number(process.env.SIM_BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.SIM_BENCH_CONNECTIONS ?? 32);
const WARMUP_S = Number(process.env.SIM_BENCH_WARMUP_S ?? 2);
const SERVER = fileURLToPath(new URL('./provider-sim-server.ts', import.meta.url));
const GSM8K = fileURLToPath(new URL('../examples/data/gsm8k-test.jsonl', import.meta.url));

function pinSelf(core: number): void {
  try {
    execFileSync('taskset', ['-pc', String(core), String(process.pid)], { stdio: 'ignore' });
  } catch {
    process.stderr.write('warning: taskset failed; the generator is not pinned\n');
  }
}

async function startServer(arm: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn('taskset', ['-c', '1', process.execPath, '--import', 'tsx', SERVER, arm], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (c) => reject(new Error(`${arm} server exited ${c}`)));
  });
  return { url: (JSON.parse(line) as { url: string }).url, child };
}

interface Arm {
  name: string;
  server: 'sim' | 'baseline';
  requests: { method: string; path: string; headers: Record<string, string>; body: string }[];
}

const json = { 'content-type': 'application/json' };
const questions = readFileSync(GSM8K, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .slice(0, 200)
  .map((l) => (JSON.parse(l) as { question: string }).question);
const chat = (model: string, content: string) => ({
  method: 'POST',
  path: '/v1/chat/completions',
  headers: json,
  body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
});

const ARMS: Arm[] = [
  {
    name: 'baseline: bare node:http, fixed body',
    server: 'baseline',
    requests: [chat('sim-medium', 'Hello there, how are you?')],
  },
  {
    name: 'sim openai.chat, one repeated filler prompt',
    server: 'sim',
    requests: [chat('sim-medium', 'Hello there, how are you?')],
  },
  {
    name: 'sim openai.chat, 200 GSM8K questions x 3 models',
    server: 'sim',
    requests: questions.flatMap((q) => ['sim-large', 'sim-medium', 'sim-small'].map((m) => chat(m, q))),
  },
  {
    name: 'sim anthropic.messages, 200 GSM8K questions',
    server: 'sim',
    requests: questions.map((q) => ({
      method: 'POST',
      path: '/v1/messages',
      headers: { ...json, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'sim-large', max_tokens: 1024, messages: [{ role: 'user', content: q }] }),
    })),
  },
];

/** CPU seconds (user + system) used so far by process `pid`, from /proc (clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[11] = utime, fields[12] = stime (stat fields 14 and 15)
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function main(): Promise<void> {
  pinSelf(0);
  const load0 = loadavg();
  const servers = { sim: await startServer('sim'), baseline: await startServer('baseline') };
  const results = new Map<string, { rps: number[]; p99: number[]; cpuUs: number[]; bad: number }>(
    ARMS.map((a) => [a.name, { rps: [], p99: [], cpuUs: [], bad: 0 }]),
  );
  try {
    // warm up every arm once (JIT, tokenizer caches)
    for (const arm of ARMS)
      await autocannon({
        url: servers[arm.server].url,
        connections: CONNECTIONS,
        duration: WARMUP_S,
        requests: arm.requests,
      });
    for (let r = 0; r < ROUNDS; r++) {
      const order = ARMS.map((_, i) => ARMS[(i + r) % ARMS.length]!);
      for (const arm of order) {
        const pid = servers[arm.server].child.pid!;
        const cpu0 = cpuSeconds(pid);
        const res = await autocannon({
          url: servers[arm.server].url,
          connections: CONNECTIONS,
          pipelining: 1,
          duration: DURATION_S,
          requests: arm.requests,
        });
        const cpu = cpuSeconds(pid) - cpu0;
        const slot = results.get(arm.name)!;
        slot.cpuUs.push((cpu * 1e6) / Math.max(1, res.requests.total));
        slot.rps.push(res.requests.average);
        slot.p99.push(res.latency.p99);
        slot.bad += res.non2xx + res.errors + res.timeouts;
        process.stderr.write(
          `round ${r + 1} ${arm.name}: ${res.requests.average.toFixed(0)} req/s (server CPU ${((cpu * 1e6) / Math.max(1, res.requests.total)).toFixed(0)} µs/req, non2xx ${res.non2xx}, errors ${res.errors})\n`,
        );
      }
    }
  } finally {
    for (const s of Object.values(servers)) s.child.kill('SIGTERM');
  }
  const load1 = loadavg();
  const base = median(results.get(ARMS[0]!.name)!.rps);
  const baseCpu = median(results.get(ARMS[0]!.name)!.cpuUs);
  const rows = ARMS.map((a) => {
    const s = results.get(a.name)!;
    const m = median(s.rps);
    return {
      arm: a.name,
      'median req/s': Math.round(m),
      'min req/s': Math.round(Math.min(...s.rps)),
      'max req/s': Math.round(Math.max(...s.rps)),
      'vs baseline': `${(m / base).toFixed(2)}x`,
      'p99 ms (median)': median(s.p99),
      'server CPU µs/req': Math.round(median(s.cpuUs)),
      'CPU vs baseline': `${(median(s.cpuUs) / baseCpu).toFixed(2)}x`,
      'req/s per core (1e6/CPU µs)': Math.round(1e6 / median(s.cpuUs)),
      'non-2xx/errors': s.bad,
    };
  });
  process.stdout.write(
    `\nprovider-sim benchmark — ${cpus()[0]?.model ?? 'cpu'} x${cpus().length}, node ${process.version}; server pinned to core 1, generator to core 0\n` +
      `${ROUNDS} rounds x ${DURATION_S}s per arm, ${CONNECTIONS} connections, zero latency; loadavg before ${load0.map((x) => x.toFixed(1)).join('/')} after ${load1.map((x) => x.toFixed(1)).join('/')}\n`,
  );
  console.table(rows);
  const simMin = Math.min(...rows.slice(1).map((r) => r['median req/s']));
  const simCore = Math.min(...rows.slice(1).map((r) => r['req/s per core (1e6/CPU µs)']));
  process.stdout.write(
    `target ≥ 3000 req/s for every sim arm — measured wall-clock: ${simMin >= 3000 ? 'MET' : 'NOT MET'} (lowest sim median ${simMin}); ` +
      `per core from server CPU time: ${simCore >= 3000 ? 'MET' : 'NOT MET'} (lowest ${simCore})\n`,
  );
}

await main();
