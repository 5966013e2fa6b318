// Paired CPU comparison of sidecar settings: `npm run bench:paired`.
//
// bench:sidecar runs its arms one after another; on this shared VM a process's CPU per request
// swings up to 2× between slices, so two settings that differ by 10% cannot be told apart that
// way. Here every arm runs at the same time — each under its own 200 req/s fixed-rate load, the
// loads staggered so requests interleave — and CPU per request is read for all arms over the same
// slice, so a slow stretch of the machine hits them alike. Reported per slice and pooled, as ratios
// to nginx+mirror measured in the same slices.
//
// Arms: nginx+mirror (the reference, when nginx is installed) and the sidecar variants in
// BENCH_PAIRED: `;`-separated `name|sample|VAR=value,VAR=value`, the variables being sidecar
// settings without their SHADOWPLANE_SIDECAR_ prefix; a sample of `bare` or `pipe` starts
// bench:sidecar's bare undici or node:net pipe proxy instead. Default: sidecar at 0%, and at 10% with a
// 100 ms and a 1 s capture batch window. Knobs: BENCH_WARM (30000 warm-up requests per arm), BENCH_RATE (200 per arm), BENCH_SECONDS (5 per
// slice), BENCH_REPS (8), BENCH_MODE (json | stream). All proxies share CPU 1, the generator,
// upstream and NATS CPU 0. Output: a table on stdout and JSON in loadtests/out/.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixedRate, median, warmUp } from './lib/harness.js';
import { cpuSeconds, nginxBinary, pinSelf, REPO, startNginx, startProc, type Proc } from './lib/procs.js';
import { sidecarArgs, startBenchNats, startFastUpstream } from './lib/stack.js';
import { freePorts } from './lib/ports.js';
import { runMain, tearDown } from './lib/run.js';
import { SHAPES } from './lib/shapes.js';

const RATE = Number(process.env.BENCH_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const REPS = Number(process.env.BENCH_REPS ?? 8);
const MODE = (process.env.BENCH_MODE ?? 'json') as 'json' | 'stream';
const VARIANTS = (
  process.env.BENCH_PAIRED ??
  'sidecar 0%|0|;sidecar 10% 100ms|0.1|CAPTURE_BATCH_MS=100;sidecar 10% 1s|0.1|CAPTURE_BATCH_MS=1000'
)
  .split(';')
  .map((v) => {
    const [name, sample, vars] = v.split('|');
    const env: Record<string, string> = {};
    for (const kv of (vars ?? '').split(',').filter(Boolean)) {
      const [k, val] = kv.split('=');
      env[`SHADOWPLANE_SIDECAR_${k!.trim()}`] = (val ?? '').trim();
    }
    return { name: name!.trim(), sample: (sample ?? '0').trim(), env };
  });

async function main(): Promise<number> {
  pinSelf('0');
  const started: Proc[] = [];
  const [natsPort, upPort, capPort, ngPort] = await freePorts(4);
  const store = mkdtempSync(join(tmpdir(), 'shadowplane-paired-nats-'));
  try {
    started.push(await startBenchNats(natsPort!, store, '0'));
    const up = await startFastUpstream(upPort!, capPort!, '0');
    started.push(up);
    const arms: { name: string; url: string; proc: Proc }[] = [];
    for (const [i, v] of VARIANTS.entries()) {
      // the reference proxies of bench:sidecar, by their sample field
      const ref =
        v.sample === 'bare' ? 'loadtests/bare-proxy.ts' : v.sample === 'pipe' ? 'loadtests/pipe-proxy.ts' : null;
      if (ref !== null) {
        const p = await startProc(v.name, process.execPath, ['--import', 'tsx', ref, '0', up.info['url']!], {
          cpu: '1',
        });
        started.push(p);
        arms.push({ name: v.name, url: p.info['url']!, proc: p });
        continue;
      }
      const p = await startProc(
        v.name,
        process.execPath,
        sidecarArgs({
          upstream: up.info['url']!,
          natsUrl: `nats://127.0.0.1:${natsPort}`,
          prefix: `paired${i}`,
          sample: v.sample,
          suite: 'bench',
        }),
        { cpu: '1', env: { SHADOWPLANE_LOG_LEVEL: 'warn', ...v.env } },
      );
      started.push(p);
      arms.push({ name: v.name, url: p.info['url']!, proc: p });
    }
    const ngx = nginxBinary();
    if (ngx) {
      const p = await startNginx('nginx+mirror', ngx, ngPort!, up.info['url']!, up.info['capture_url']!, '1');
      started.push(p);
      arms.push({ name: 'nginx+mirror', url: `http://127.0.0.1:${ngPort}`, proc: p });
    } else process.stderr.write('nginx not found (Debian: apt-get install -y nginx): ratios are to the first arm\n');
    const ref = ngx ? arms.length - 1 : 0;
    for (const a of arms)
      if ((await warmUp(a.url, [SHAPES[MODE]])) > 0) throw new Error(`${a.name} failed warm-up requests`);

    const perReq: number[][] = arms.map(() => []);
    for (let rep = 0; rep < REPS; rep++) {
      const c0 = arms.map((a) => cpuSeconds(a.proc.pid));
      const runs = await Promise.all(
        arms.map(async (a, i) => {
          await new Promise((r) => setTimeout(r, (i * 1000) / RATE / arms.length));
          return fixedRate(a.url, SHAPES[MODE], RATE, SECONDS * 1000);
        }),
      );
      const c1 = arms.map((a) => cpuSeconds(a.proc.pid));
      const us = arms.map((_, i) => ((c1[i]! - c0[i]!) / runs[i]!.sent) * 1e6);
      us.forEach((u, i) => perReq[i]!.push(u));
      process.stderr.write(
        `slice ${rep + 1}/${REPS}: ${arms.map((a, i) => `${a.name} ${us[i]!.toFixed(0)} µs (${(us[i]! / us[ref]!).toFixed(2)}×)`).join('  ')}\n`,
      );
    }
    const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / xs.length;
    const lines = [
      `Shadowplane paired CPU comparison (${MODE}) — ${new Date().toISOString()}`,
      `every arm under ${RATE} req/s at once, ${REPS} slices × ${SECONDS} s; proxies on CPU 1`,
      'arm | CPU µs/req (mean) | × ref pooled | per-slice × (median, min…max)',
    ];
    for (const [i, a] of arms.entries()) {
      const ratios = perReq[i]!.map((u, k) => u / perReq[ref]![k]!);
      lines.push(
        `${a.name} | ${mean(perReq[i]!).toFixed(0)} | ${(mean(perReq[i]!) / mean(perReq[ref]!)).toFixed(2)} | ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}…${Math.max(...ratios).toFixed(2)})`,
      );
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    const outDir = join(REPO, 'loadtests', 'out');
    mkdirSync(outDir, { recursive: true });
    writeFileSync(
      join(outDir, `paired-${Date.now()}.json`),
      JSON.stringify(
        {
          at: new Date().toISOString(),
          mode: MODE,
          rate: RATE,
          seconds: SECONDS,
          arms: arms.map((a, i) => ({ name: a.name, cpuUsPerReq: perReq[i] })),
        },
        null,
        2,
      ),
    );
    return 0;
  } finally {
    await tearDown(started, [store]);
  }
}

runMain('paired bench', main);
