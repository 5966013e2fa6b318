// User-space instructions per proxied request, counted by callgrind: `npm run bench:instructions`.
//
// CPU time per request on a shared VM swings by up to 2× between slices (see README); an
// instruction count does not: the same binary, input and arm give the same count to within ~1%.
// It is the figure to compare two builds of the sidecar with. It leaves out the kernel (syscalls,
// loopback TCP: roughly half the CPU of every arm here) and cache misses, so its ratio to
// nginx+mirror is not the CPU-time ratio `bench:sidecar` reports — it says how much of its own work
// each proxy does.
//
// Each arm runs alone under `valgrind --tool=callgrind --separate-threads=yes`; after a warm-up
// (JIT tiers settle: BENCH_IR_WARM requests) the counters are zeroed, BENCH_IR_N requests of one
// shape are sent on 4 keep-alive connections, the counters are dumped, and the main thread's
// count (the event loop; V8's compiler and GC helper threads are reported apart) is divided by N.
// Knobs: BENCH_IR_N (2000), BENCH_IR_WARM (8000), BENCH_IR_MODES (json,stream),
// BENCH_ARMS (subset of: sidecar 0%, sidecar 10%, sidecar 100%, node:net pipe, nginx+mirror).
// BENCH_IR_TRACING=1 measures the tracing arms instead, every request carrying a `traceparent`:
// the sidecar at 0% and 100% sampling with its tracing code cut out ("no tracing code", the
// baseline: lib/notrace.ts), as shipped with no OTEL_* variables ("OTEL off"), and with an OTLP
// endpoint set ("OTEL on", a sink in this process that counts what it receives).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once, type Shape } from './lib/harness.js';
import { nginxBinary, pinSelf, REPO, startNginx, startProc, type Proc } from './lib/procs.js';
import { BENCH_SIDECAR_ENV, sidecarArgs, startBenchNats, startFastUpstream } from './lib/stack.js';
import { freePorts } from './lib/ports.js';
import { noTracingTree } from './lib/notrace.js';
import { runMain, tearDown } from './lib/run.js';
import { SHAPES } from './lib/shapes.js';

const N = Number(process.env.BENCH_IR_N ?? 2000);
const WARM = Number(process.env.BENCH_IR_WARM ?? 8000);
const MODES = (process.env.BENCH_IR_MODES ?? 'json,stream').split(',').map((m) => m.trim()) as ('json' | 'stream')[];
const ARMS = process.env.BENCH_ARMS ? process.env.BENCH_ARMS.split(',').map((a) => a.trim()) : null;
const TRACING = process.env.BENCH_IR_TRACING === '1';
if (process.env.BENCH_IR_TRACING !== undefined && !['0', '1'].includes(process.env.BENCH_IR_TRACING))
  throw new Error('BENCH_IR_TRACING must be 0 or 1');
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** Where a sidecar arm runs from and what tracing it has (tracing arms only). */
interface TracingSetup {
  /** the no-tracing-code copy of the tree */
  baseTree: string;
  /** the OTLP sink's base URL */
  sinkUrl: string;
}

/** Callgrind's count for the main thread in the dumps of `dir` (file `<out>.<n>-01`), from the dump triggered by callgrind_control. */
function mainThreadIr(dir: string): number {
  let ir = 0;
  for (const f of readdirSync(dir)) {
    if (!/\.\d+-01$/.test(f)) continue; // `cg.<pid>.<dump>-<thread>`: dumps on request, thread 1
    const m = /^summary: (\d+)/m.exec(readFileSync(join(dir, f), 'utf8'));
    if (m) ir += Number(m[1]);
  }
  return ir;
}

async function measure(
  arm: string,
  mode: 'json' | 'stream',
  upstream: { url: string; captureUrl: string },
  natsUrl: string,
  ngPort: number,
  tracing: TracingSetup | null,
): Promise<number> {
  const out = mkdtempSync(join(tmpdir(), 'shadowplane-ir-'));
  const vg = [
    'valgrind',
    '--tool=callgrind',
    '--separate-threads=yes',
    '--dump-instr=no',
    '--smc-check=all-non-file',
    `--callgrind-out-file=${out}/cg.%p`,
  ];
  let p: Proc;
  let url: string;
  if (arm === 'nginx+mirror') {
    p = await startNginx(arm, nginxBinary()!, ngPort, upstream.url, upstream.captureUrl, '1', vg);
    url = `http://127.0.0.1:${ngPort}`;
  } else if (arm === 'node:net pipe') {
    p = await startProc(
      arm,
      vg[0]!,
      [...vg.slice(1), process.execPath, '--import', 'tsx', 'loadtests/pipe-proxy.ts', '0', upstream.url],
      { cpu: '1', timeoutMs: 1_800_000 },
    );
    url = p.info['url']!;
  } else {
    const rate = arm.startsWith('sidecar 0%') ? '0' : arm.startsWith('sidecar 10%') ? '0.1' : '1';
    const cwd = tracing !== null && arm.endsWith('no tracing code') ? tracing.baseTree : REPO;
    const otel =
      tracing !== null && arm.endsWith('OTEL on')
        ? { OTEL_EXPORTER_OTLP_ENDPOINT: tracing.sinkUrl, OTEL_SERVICE_NAME: 'bench-sidecar' }
        : {};
    p = await startProc(
      arm,
      vg[0]!,
      [
        ...vg.slice(1),
        process.execPath,
        ...sidecarArgs({ upstream: upstream.url, natsUrl, prefix: 'benchir', sample: rate, suite: 'bench' }),
      ],
      {
        cpu: '1',
        timeoutMs: 1_800_000,
        cwd,
        env: { ...BENCH_SIDECAR_ENV, SHADOWPLANE_SIDECAR_CAPTURE_QUEUE_MAX: '100000', ...otel },
      },
    );
    url = p.info['url']!;
  }
  try {
    const base: Shape = SHAPES[mode];
    const shape: Shape = tracing === null ? base : { ...base, headers: { ...base.headers, traceparent: TRACEPARENT } };
    for (let i = 0; i < WARM; i++)
      if ((await once(url, shape)) === null) throw new Error(`${arm} failed a warm-up request`);
    execFileSync('callgrind_control', ['--zero', String(p.pid)], { stdio: 'ignore' });
    let errors = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let i = 0; i < N / 4; i++) if ((await once(url, shape)) === null) errors++;
      }),
    );
    if (errors > 0) throw new Error(`${arm}: ${errors} failed requests`);
    // captures are built up to 1 s after their response: let the last batch finish
    await new Promise((r) => setTimeout(r, 1500));
    execFileSync('callgrind_control', ['--dump', String(p.pid)], { stdio: 'ignore' });
    await new Promise((r) => setTimeout(r, 500));
    return mainThreadIr(out) / N;
  } finally {
    await p.stop();
    rmSync(out, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    process.stderr.write('valgrind not found (Debian: apt-get install -y valgrind)\n');
    return 2;
  }
  pinSelf('0');
  // the OTEL_* variables of this shell must not reach the arms (the "OTEL off" arm would be on)
  for (const k of Object.keys(process.env)) if (k.startsWith('OTEL_')) throw new Error(`unset ${k} first`);
  let sinkRequests = 0;
  const sink = createServer((req, res) => {
    sinkRequests++;
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', () => r()));
  const [natsPort, upPort, capPort, ngPort] = await freePorts(4);
  const started: Proc[] = [];
  const store = mkdtempSync(join(tmpdir(), 'shadowplane-ir-nats-'));
  const dirs = [store];
  try {
    let tracing: TracingSetup | null = null;
    if (TRACING) {
      const baseTree = noTracingTree();
      dirs.push(baseTree);
      tracing = { baseTree, sinkUrl: `http://127.0.0.1:${(sink.address() as AddressInfo).port}` };
    }
    started.push(await startBenchNats(natsPort!, store, '0'));
    const up = await startFastUpstream(upPort!, capPort!, '0');
    started.push(up);
    const upstream = { url: up.info['url']!, captureUrl: up.info['capture_url']! };
    const all = TRACING
      ? ['0%', '100%'].flatMap((r) => ['no tracing code', 'OTEL off', 'OTEL on'].map((v) => `sidecar ${r} ${v}`))
      : ['sidecar 0%', 'sidecar 10%', 'sidecar 100%', 'node:net pipe', ...(nginxBinary() ? ['nginx+mirror'] : [])];
    const arms = ARMS === null ? all : all.filter((a) => ARMS.includes(a));
    const result: Record<string, Record<string, number>> = {};
    for (const mode of MODES) {
      for (const arm of arms) {
        const ir = await measure(arm, mode, upstream, `nats://127.0.0.1:${natsPort}`, ngPort!, tracing);
        (result[mode] ??= {})[arm] = ir;
        process.stderr.write(
          `${mode.padEnd(6)} ${arm.padEnd(13)} ${(ir / 1000).toFixed(1)} k instructions per request\n`,
        );
      }
    }
    const lines = [
      `Shadowplane proxy instructions per request (callgrind, main thread, user space) — ${new Date().toISOString()}`,
      `N ${N} after ${WARM} warm-up requests, 4 keep-alive connections${TRACING ? ', every request with a traceparent' : ''}`,
    ];
    for (const mode of MODES) {
      lines.push(
        '',
        mode === 'json' ? 'non-streaming, 1 KB JSON' : 'streaming (SSE, 18 events)',
        `arm | k instructions/req | × ${TRACING ? 'no tracing code' : 'nginx+mirror'}`,
      );
      for (const [arm, ir] of Object.entries(result[mode]!)) {
        const ref = TRACING
          ? result[mode]![arm.replace(/ (OTEL off|OTEL on)$/, ' no tracing code')]
          : result[mode]!['nginx+mirror'];
        lines.push(`${arm} | ${(ir / 1000).toFixed(1)} | ${ref ? (ir / ref).toFixed(3) : '—'}`);
      }
    }
    if (TRACING) lines.push('', `OTLP export requests the sink received from the "OTEL on" sidecars: ${sinkRequests}`);
    process.stdout.write(`${lines.join('\n')}\n`);
    const outDir = join(REPO, 'loadtests', 'out');
    mkdirSync(outDir, { recursive: true });
    writeFileSync(
      join(outDir, `instructions-${Date.now()}.json`),
      JSON.stringify(
        { at: new Date().toISOString(), n: N, warm: WARM, tracing: TRACING, result, sinkRequests },
        null,
        2,
      ),
    );
    return 0;
  } finally {
    await tearDown(started, dirs);
    sink.close();
  }
}

runMain('instructions bench', main);
