// `make loadtest`: starts local processes (nats-server, the fast upstream, a sidecar), runs the k6
// hot-path overhead scripts against them and prints the overhead table. Exit code 0 only when
// every k6 threshold (the sidecar issue's targets) held.
//
// Env: K6_BIN (default .bin/k6), LOADTEST_SAMPLE (sidecar sampling, default 0.1), RATE
// (iterations/s, each = one direct + one proxied request; default 100), DURATION (default 30s).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_NICE, cpuCount, cpuSeconds, pinSelf, REPO, rssBytes, startProc, type Proc } from './lib/procs.js';
import { BENCH_SIDECAR_ENV, sidecarArgs, startBenchNats, startFastUpstream } from './lib/stack.js';
import { freePorts } from './lib/ports.js';
import { runMain, tearDown } from './lib/run.js';
import { closePools, warmUp } from './lib/harness.js';

const K6 = process.env.K6_BIN ?? join(REPO, '.bin', 'k6');
const SAMPLE = process.env.LOADTEST_SAMPLE ?? '0.1';
const RATE = process.env.RATE ?? '100';
const DURATION = process.env.DURATION ?? '30s';
const SCRIPTS = ['overhead-json', 'overhead-stream'] as const;

interface TrendValues {
  med?: number;
  'p(90)'?: number;
  'p(99)'?: number;
  count?: number;
}

function runK6(script: string, env: Record<string, string>, cpu: string): Promise<number> {
  const args = [
    '-c',
    cpu,
    K6,
    'run',
    '--quiet',
    '--no-color',
    ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
    join('loadtests', 'k6', `${script}.js`),
  ];
  return new Promise((resolve) => {
    const [cmd, argv] = BENCH_NICE === 0 ? ['taskset', args] : ['nice', ['-n', String(BENCH_NICE), 'taskset', ...args]];
    const child = spawn(cmd, argv, { cwd: REPO, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('exit', (code) => resolve(code ?? 1));
  });
}

async function main(): Promise<number> {
  if (!existsSync(K6)) {
    process.stderr.write(`k6 not found at ${K6}: run \`make k6\` (builds it from its Go module)\n`);
    return 2;
  }
  const genCpu = '0';
  const proxyCpu = cpuCount() > 1 ? '1' : '0';
  pinSelf(genCpu);
  const started: Proc[] = [];
  const outDir = join(REPO, 'loadtests', 'out');
  mkdirSync(outDir, { recursive: true });
  const store = mkdtempSync(join(tmpdir(), 'shadowplane-k6-nats-'));
  try {
    const [natsPort, upPort, capPort] = await freePorts(3);
    started.push(await startBenchNats(natsPort!, store, genCpu));
    const up = await startFastUpstream(upPort!, capPort!, genCpu);
    started.push(up);
    const sc = await startProc(
      'sidecar',
      process.execPath,
      sidecarArgs({ upstream: up.info['url']!, natsUrl: `nats://127.0.0.1:${natsPort}`, prefix: 'k6', sample: SAMPLE }),
      { cpu: proxyCpu, env: { ...BENCH_SIDECAR_ENV } },
    );
    started.push(sc);

    // warm-up: JIT (the capture path too: BENCH_WARM requests, see lib/harness.ts) and
    // keep-alive pools, so k6 measures the steady state
    const body = (stream: boolean) =>
      JSON.stringify({
        model: 'bench-model',
        messages: [{ role: 'user', content: 'warm-up '.repeat(100) }],
        ...(stream ? { stream: true } : {}),
      });
    const shapes = [false, true].map((stream) => ({
      path: '/v1/chat/completions',
      body: body(stream),
      headers: { 'content-type': 'application/json' },
      stream,
    }));
    for (const base of [up.info['url']!, sc.info['url']!]) {
      const failed = await warmUp(base, shapes);
      if (failed > 0) throw new Error(`${failed} warm-up requests to ${base} failed`);
    }
    await closePools();

    const codes: Record<string, number> = {};
    const cpu: Record<string, number> = {};
    for (const script of SCRIPTS) {
      const c0 = cpuSeconds(sc.pid);
      codes[script] = await runK6(
        script,
        { DIRECT_URL: up.info['url']!, SIDECAR_URL: sc.info['url']!, RATE, DURATION, K6_OUT_DIR: outDir },
        genCpu,
      );
      cpu[script] = cpuSeconds(sc.pid) - c0;
    }
    const rss = rssBytes(sc.pid);

    const rows: string[] = [];
    rows.push('');
    rows.push(
      `k6 overhead table — sidecar sampling ${SAMPLE}, ${RATE} pairs/s for ${DURATION} (k6 and upstream on CPU ${genCpu}, sidecar on CPU ${proxyCpu})`,
    );
    rows.push(
      'script | metric | direct med ms | sidecar med ms | added med ms (≤ 0.3) | added p99 ms (≤ 1) | sidecar CPU s/1k req | thresholds',
    );
    for (const script of SCRIPTS) {
      const file = join(outDir, `k6-${script}-summary.json`);
      if (!existsSync(file)) {
        rows.push(`${script} | (no summary: k6 exit ${codes[script]})`);
        continue;
      }
      const data = JSON.parse(readFileSync(file, 'utf8')) as { metrics: Record<string, { values: TrendValues }> };
      const p = script === 'overhead-json' ? 'json' : 'ttft';
      const v = (k: string) => data.metrics[`shadowplane_${p}_${k}`]?.values ?? {};
      const n = v('sidecar_ms').count ?? 0;
      const f = (x: number | undefined) => (x === undefined ? '—' : x.toFixed(3));
      rows.push(
        [
          script,
          p === 'json' ? 'duration' : 'TTFB (TTFT)',
          f(v('direct_ms').med),
          f(v('sidecar_ms').med),
          f(v('added_ms').med),
          f(v('added_ms')['p(99)']),
          n ? ((cpu[script]! / n) * 1000).toFixed(4) : '—',
          codes[script] === 0 ? 'met' : `FAILED (k6 exit ${codes[script]})`,
        ].join(' | '),
      );
    }
    rows.push(`sidecar RSS at the end: ${(rss / 2 ** 20).toFixed(1)} MiB`);
    process.stdout.write(`${rows.join('\n')}\n`);
    return Object.values(codes).every((c) => c === 0) ? 0 : 1;
  } finally {
    await tearDown(started, [store]);
  }
}

runMain('loadtest', main);
