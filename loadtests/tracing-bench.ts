// Tracing overhead on the sidecar hot path: `npm run bench:tracing`.
//
// Side by side, in one run, against the same fast upstream, at sampling 10% and 100%:
// - "no tracing code": this commit's sidecar with its tracing code cut out (a copy of the tree from
//   `git archive HEAD`, where main.ts never starts tracing and the sampler's tracing flag is the
//   constant false), the baseline "today" means;
// - "OTEL off": this commit's sidecar as shipped, no OTEL_* variables (the default);
// - "OTEL on": the same with OTEL_EXPORTER_OTLP_ENDPOINT set (an OTLP sink in this process), so
//   the SDK runs and sampled captures carry the requests' traceparent.
// Every request carries a `traceparent`, as a traced router's would. The sidecar starts no span per
// request (its only tracing work is reading the trace context of sampled requests), so the sink
// is expected to receive nothing; its request count is printed to show that.
// Arms are interleaved in a seeded shuffled order and repeated. The generator, upstream and NATS
// are pinned to CPU 0, every sidecar to CPU 1.
//
// Measured: CPU ms per 1,000 requests of the sidecar process (/proc/<pid>/stat) at a fixed rate;
// latency added over direct (p50/p99; TTFT for streams); each arm's ratio to "no tracing code".
// Knobs (env): BENCH_RATE (req/s, default 200), BENCH_SECONDS (per slice, default 4), BENCH_REPS
// (default 3), BENCH_WARM (warm-up requests per arm, default 30000), BENCH_SEED (default 1).
// Output: a table on stdout and JSON in loadtests/out/.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixedRate, median, once, quantile, shuffled, WARM_REQUESTS, warmUp, type Shape } from './lib/harness.js';
import { cpuCount, cpuSeconds, pinSelf, REPO, startProc, type Proc } from './lib/procs.js';
import { BENCH_SIDECAR_ENV, sidecarArgs, startBenchNats, startFastUpstream } from './lib/stack.js';
import { freePorts } from './lib/ports.js';
import { noTracingTree } from './lib/notrace.js';
import { runMain, tearDown } from './lib/run.js';
import { SHAPES } from './lib/shapes.js';

const env = (k: string, d: number) => (process.env[k] ? Number(process.env[k]) : d);
const RATE = env('BENCH_RATE', 200);
const SECONDS = env('BENCH_SECONDS', 4);
const REPS = env('BENCH_REPS', 3);
const SEED = env('BENCH_SEED', 1);

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const traced = (s: Shape): Shape => ({ ...s, headers: { ...s.headers, traceparent: TRACEPARENT } });
const MODES = { json: traced(SHAPES.json), stream: traced(SHAPES.stream) } as const;

interface Arm {
  name: string;
  url: string;
  proc: Proc | null;
}

async function main(): Promise<number> {
  const ncpu = cpuCount();
  const genCpu = '0';
  const proxyCpu = ncpu > 1 ? '1' : '0';
  pinSelf(genCpu);
  const started: Proc[] = [];
  const dirs: string[] = [];
  let sinkRequests = 0;
  const sink = createServer((req, res) => {
    sinkRequests++;
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', () => r()));
  const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  const [natsPort, upPort, capPort] = await freePorts(3);
  const store = mkdtempSync(join(tmpdir(), 'shadowplane-bench-nats-'));
  dirs.push(store);
  try {
    const base = noTracingTree();
    dirs.push(base);
    started.push(await startBenchNats(natsPort!, store, genCpu));
    const up = await startFastUpstream(upPort!, capPort!, genCpu);
    started.push(up);
    const upstreamUrl = up.info['url']!;
    const arms: Arm[] = [{ name: 'direct', url: upstreamUrl, proc: null }];
    for (const sample of ['0.1', '1']) {
      const pct = `${Number(sample) * 100}%`;
      for (const [variant, cwd, otel] of [
        ['no tracing code', base, false],
        ['OTEL off', REPO, false],
        ['OTEL on', REPO, true],
      ] as const) {
        const name = `${pct} ${variant}`;
        const p = await startProc(
          name,
          process.execPath,
          sidecarArgs({ upstream: upstreamUrl, natsUrl: `nats://127.0.0.1:${natsPort}`, prefix: 'bench', sample }),
          {
            cpu: proxyCpu,
            cwd,
            env: {
              ...BENCH_SIDECAR_ENV,
              ...(otel ? { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_SERVICE_NAME: 'bench-sidecar' } : {}),
            },
          },
        );
        started.push(p);
        arms.push({ name, url: p.info['url']!, proc: p });
      }
    }
    // the OTEL_* variables of this shell must not reach the "off" arms
    for (const k of Object.keys(process.env)) if (k.startsWith('OTEL_')) throw new Error(`unset ${k} first`);

    for (const arm of arms) {
      for (const s of Object.values(MODES))
        if ((await once(arm.url, s)) === null) throw new Error(`${arm.name} does not answer`);
      const failed = await warmUp(arm.url, [MODES.json, MODES.stream]);
      if (failed > 0) throw new Error(`${arm.name} failed ${failed} warm-up requests`);
      process.stderr.write(`warm-up ${arm.name}: ${WARM_REQUESTS} requests\n`);
    }

    type Acc = { total: number[]; first: number[]; repCpuPer1k: number[]; errors: number };
    const acc = new Map<string, Acc>();
    const key = (arm: string, mode: string) => `${arm}|${mode}`;
    let order = 0;
    for (let rep = 0; rep < REPS; rep++) {
      for (const mode of ['json', 'stream'] as const) {
        for (const arm of shuffled(arms, SEED * 1000 + order++)) {
          const pid = arm.proc?.pid ?? up.pid;
          const c0 = cpuSeconds(pid);
          const run = await fixedRate(arm.url, MODES[mode], RATE, SECONDS * 1000);
          const c = cpuSeconds(pid) - c0;
          const a = acc.get(key(arm.name, mode)) ?? { total: [], first: [], repCpuPer1k: [], errors: 0 };
          a.total.push(...run.total);
          a.first.push(...run.first);
          a.repCpuPer1k.push((c / run.sent) * 1000);
          a.errors += run.errors;
          acc.set(key(arm.name, mode), a);
          process.stderr.write(
            `rep ${rep + 1}/${REPS} ${mode.padEnd(6)} ${arm.name.padEnd(20)} p50 ${median(run.total).toFixed(3)} ms  cpu ${c.toFixed(2)} s\n`,
          );
        }
      }
    }

    const rows: Record<string, unknown>[] = [];
    const lines = [
      `Sidecar tracing overhead: ${RATE} req/s, ${SECONDS} s × ${REPS} reps per arm and shape, every request with a traceparent`,
      '',
      'arm | shape | CPU ms / 1k req (median of reps) | × no tracing code | added p50 ms | added p99 ms | errors',
      '---|---|---|---|---|---|---',
    ];
    for (const mode of ['json', 'stream'] as const) {
      const d = acc.get(key('direct', mode))!;
      const lat = (a: Acc) => (mode === 'stream' ? a.first : a.total);
      for (const arm of arms) {
        if (arm.proc === null) continue;
        const a = acc.get(key(arm.name, mode))!;
        const ref = acc.get(key(`${arm.name.split(' ')[0]} no tracing code`, mode))!;
        const cpu = median(a.repCpuPer1k) * 1000;
        const ratio = cpu / (median(ref.repCpuPer1k) * 1000);
        const p50 = quantile(lat(a), 0.5) - quantile(lat(d), 0.5);
        const p99 = quantile(lat(a), 0.99) - quantile(lat(d), 0.99);
        rows.push({ arm: arm.name, shape: mode, cpu_ms_per_1k: cpu, ratio, added_p50_ms: p50, added_p99_ms: p99 });
        lines.push(
          `${arm.name} | ${mode}${mode === 'stream' ? ' (TTFT)' : ''} | ${cpu.toFixed(0)} | ${ratio.toFixed(3)} | ${p50.toFixed(3)} | ${p99.toFixed(3)} | ${a.errors}`,
        );
      }
    }
    lines.push('', `OTLP export requests the sink received from the "OTEL on" sidecars: ${sinkRequests}`);
    console.log(lines.join('\n'));
    mkdirSync(join(REPO, 'loadtests/out'), { recursive: true });
    const out = join(REPO, 'loadtests/out', `tracing-bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(
      out,
      `${JSON.stringify({ rate: RATE, seconds: SECONDS, reps: REPS, rows, sinkRequests }, null, 2)}\n`,
    );
    process.stderr.write(`written ${out}\n`);
    return 0;
  } finally {
    await tearDown(started, dirs);
    sink.close();
  }
}

runMain('tracing-bench', main);
