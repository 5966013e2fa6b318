// Sidecar hot-path overhead benchmark: `npm run bench:sidecar`.
//
// Side by side, in one run, against the same fast upstream: direct; the sidecar at sampling 0%,
// 10% and 100% (publishing to a local JetStream); a bare node:http + undici proxy; bytes piped
// through node:net with no HTTP parsing (the floor of any Node proxy); nginx `proxy_pass`; nginx
// `proxy_pass` + `mirror` to a capture endpoint. The generator (this process) and the upstream/NATS are pinned to CPU 0,
// every proxy to CPU 1. Arms are interleaved in a seeded shuffled order and repeated.
//
// Measured: CPU seconds per 1,000 requests of the proxy process (/proc/<pid>/stat) at a fixed
// rate, and again at a higher one (the cost of waking from idle between requests falls with the
// rate, more for a Node process than for nginx); latency at that rate (µs resolution) and what each proxy adds over direct (p50/p99; TTFT
// for streams); throughput at saturation (autocannon); RSS with N concurrent open streams.
//
// Knobs (env): BENCH_RATE (req/s, default 200), BENCH_RATE_HIGH (req/s of a second, CPU-only set of slices, default 1000; 0 skips), BENCH_SECONDS (per slice, default 4),
// BENCH_WARM (warm-up requests per arm, default 30000: see lib/harness.ts), BENCH_REPS (default 3), BENCH_SAT_SECONDS (default 4; 0 skips saturation), BENCH_SAT_CONNECTIONS (default 32),
// BENCH_STREAMS (default 1000; 0 skips the RSS test), BENCH_SEED (default 1), BENCH_NICE (default 0; e.g. -5 as root),
// BENCH_ARMS (comma-separated arm names to keep, e.g. "sidecar 10%,nginx+mirror"; direct is always kept), BENCH_BASE_DIR (a checkout of
// another commit with its dependencies: adds "base sidecar 0%/10%/100%" arms run from it, before and after in one run). Output: a table on stdout and JSON in
// loadtests/out/.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { fixedRate, median, once, quantile, shuffled, WARM_REQUESTS, warmUp, type Shape } from './lib/harness.js';
import {
  BENCH_NICE,
  cpuCount,
  cpuSeconds,
  nginxBinary,
  nginxVersion,
  pinSelf,
  pkgVersion,
  REPO,
  rssBytes,
  startNginx,
  startProc,
  type Proc,
} from './lib/procs.js';
import { freePorts } from './lib/ports.js';
import { runMain, tearDown } from './lib/run.js';
import { SHAPES } from './lib/shapes.js';

const env = (k: string, d: number) => (process.env[k] ? Number(process.env[k]) : d);
const RATE = env('BENCH_RATE', 200);
const RATE_HIGH = env('BENCH_RATE_HIGH', 1000);
const SECONDS = env('BENCH_SECONDS', 4);
const REPS = env('BENCH_REPS', 3);
const SAT_SECONDS = env('BENCH_SAT_SECONDS', 4);
const SAT_CONN = env('BENCH_SAT_CONNECTIONS', 32);
const STREAMS = env('BENCH_STREAMS', 1000);
const SEED = env('BENCH_SEED', 1);
const ARMS = process.env.BENCH_ARMS ? process.env.BENCH_ARMS.split(',').map((a) => a.trim()) : null;
/** a checkout of another commit (its dependencies installed): adds `base sidecar 0% / 10% / 100%` arms run from it, for a before/after in one run */
const BASE_DIR = process.env.BENCH_BASE_DIR ?? null;

type Autocannon = (
  o: Record<string, unknown>,
) => Promise<{ requests: { average: number }; errors: number; non2xx: number; latency: { p50: number } }>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

interface Arm {
  name: string;
  url: string;
  /** the proxy process (null for direct) */
  proc: Proc | null;
  opsUrl?: string;
}

async function main(): Promise<number> {
  const ncpu = cpuCount();
  const genCpu = '0';
  const proxyCpu = ncpu > 1 ? '1' : '0';
  pinSelf(genCpu);
  const started: Proc[] = [];
  const [natsPort, upPort, capPort, ngPort, ngmPort] = await freePorts(5);
  const store = mkdtempSync(join(tmpdir(), 'shadowplane-bench-nats-'));
  try {
    const nats = await startProc(
      'nats-server',
      'nats-server',
      ['-a', '127.0.0.1', '-p', String(natsPort), '-js', '-sd', store],
      { cpu: genCpu, waitPort: natsPort! },
    );
    started.push(nats);
    const up = await startProc(
      'upstream',
      process.execPath,
      ['--import', 'tsx', 'loadtests/fast-upstream.ts', String(upPort), String(capPort)],
      { cpu: genCpu },
    );
    started.push(up);
    const upstreamUrl = up.info['url']!;
    const captureUrl = up.info['capture_url']!;

    const arms: Arm[] = [{ name: 'direct', url: upstreamUrl, proc: null }];
    const sidecarArms: [string, string, string | undefined][] = [
      ['sidecar 0%', '0', undefined],
      ['sidecar 10%', '0.1', undefined],
      ['sidecar 100%', '1', undefined],
    ];
    if (BASE_DIR !== null)
      sidecarArms.push(
        ['base sidecar 0%', '0', BASE_DIR],
        ['base sidecar 10%', '0.1', BASE_DIR],
        ['base sidecar 100%', '1', BASE_DIR],
      );
    for (const [name, rate, cwd] of sidecarArms) {
      if (ARMS !== null && !ARMS.includes(name)) continue;
      const p = await startProc(
        name,
        process.execPath,
        [
          'services/shadowplane/bin/shadowplane.mjs',
          'sidecar',
          '--listen',
          '127.0.0.1:0',
          '--ops-listen',
          '127.0.0.1:0',
          '--upstream',
          upstreamUrl,
          '--nats',
          `nats://127.0.0.1:${natsPort}`,
          '--prefix',
          'bench',
          '--sample',
          rate,
          '--suite',
          'bench',
        ],
        {
          cpu: proxyCpu,
          env: { SHADOWPLANE_LOG_LEVEL: 'warn', SHADOWPLANE_SIDECAR_CAPTURE_QUEUE_MAX: '10000' },
          ...(cwd !== undefined ? { cwd } : {}),
        },
      );
      started.push(p);
      arms.push({ name, url: p.info['url']!, proc: p, opsUrl: p.info['ops_url']! });
    }
    const bare = await startProc(
      'bare undici',
      process.execPath,
      ['--import', 'tsx', 'loadtests/bare-proxy.ts', '0', upstreamUrl],
      { cpu: proxyCpu },
    );
    started.push(bare);
    arms.push({ name: 'bare undici', url: bare.info['url']!, proc: bare });
    const pipe = await startProc(
      'node:net pipe',
      process.execPath,
      ['--import', 'tsx', 'loadtests/pipe-proxy.ts', '0', upstreamUrl],
      { cpu: proxyCpu },
    );
    started.push(pipe);
    arms.push({ name: 'node:net pipe', url: pipe.info['url']!, proc: pipe });
    const ngx = nginxBinary();
    let ngxVer: string | null = null;
    if (ngx) {
      ngxVer = nginxVersion(ngx);
      const plain = await startNginx('nginx', ngx, ngPort!, upstreamUrl, null, proxyCpu);
      const mirror = await startNginx('nginx+mirror', ngx, ngmPort!, upstreamUrl, captureUrl, proxyCpu);
      started.push(plain, mirror);
      arms.push(
        { name: 'nginx', url: `http://127.0.0.1:${ngPort}`, proc: plain },
        { name: 'nginx+mirror', url: `http://127.0.0.1:${ngmPort}`, proc: mirror },
      );
    } else {
      process.stderr.write('nginx not found (Debian: apt-get install -y nginx): the nginx arms are left out\n');
    }

    // BENCH_ARMS (comma-separated names) keeps a subset, for a quick look at a few arms
    if (ARMS !== null) {
      const keep = arms.filter((a) => a.name === 'direct' || ARMS.includes(a.name));
      arms.splice(0, arms.length, ...keep);
    }

    // sanity + warm-up (JIT, keep-alive pools); the CPU each proxy spent on it is reported
    const warm = new Map<string, number>();
    for (const arm of arms) {
      for (const s of Object.values(SHAPES)) {
        const r = await once(arm.url, s);
        if (r === null) throw new Error(`${arm.name} does not answer ${s.path}`);
      }
      const t0 = performance.now();
      const c0 = arm.proc === null ? 0 : cpuSeconds(arm.proc.pid);
      const failed = await warmUp(arm.url, [SHAPES.json, SHAPES.stream]);
      if (failed > 0) throw new Error(`${arm.name} failed ${failed} warm-up requests`);
      if (arm.proc !== null) warm.set(arm.name, cpuSeconds(arm.proc.pid) - c0);
      process.stderr.write(
        `warm-up ${arm.name.padEnd(13)} ${WARM_REQUESTS} requests in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
      );
    }

    // the sidecars' own account of the time they add (their added-latency histogram), read
    // around the fixed-rate runs: in-process, so free of the generator's and the kernel's noise
    const addedBefore = new Map<string, Map<string, number>>();
    for (const arm of arms) if (arm.opsUrl) addedBefore.set(arm.name, await addedBuckets(arm.opsUrl));

    // 1. fixed rate: latency + CPU per 1k requests, interleaved and repeated
    type Acc = {
      total: number[];
      first: number[];
      cpu: number;
      sent: number;
      errors: number;
      repP50: number[];
      repFirstP50: number[];
      repCpuPer1k: number[];
    };
    const acc = new Map<string, Acc>();
    const key = (arm: string, mode: string) => `${arm}|${mode}`;
    let order = 0;
    for (let rep = 0; rep < REPS; rep++) {
      for (const mode of ['json', 'stream'] as const) {
        for (const arm of shuffled(arms, SEED * 1000 + order++)) {
          const pid = arm.proc?.pid ?? up.pid;
          const c0 = cpuSeconds(pid);
          const run = await fixedRate(arm.url, SHAPES[mode], RATE, SECONDS * 1000);
          const c1 = cpuSeconds(pid);
          const a = acc.get(key(arm.name, mode)) ?? {
            total: [],
            first: [],
            cpu: 0,
            sent: 0,
            errors: 0,
            repP50: [],
            repFirstP50: [],
            repCpuPer1k: [],
          };
          a.total.push(...run.total);
          a.first.push(...run.first);
          a.cpu += c1 - c0;
          a.repCpuPer1k.push(((c1 - c0) / run.sent) * 1000);
          a.sent += run.sent;
          a.errors += run.errors;
          a.repP50.push(median(run.total));
          a.repFirstP50.push(median(run.first));
          acc.set(key(arm.name, mode), a);
          process.stderr.write(
            `rep ${rep + 1}/${REPS} ${mode.padEnd(6)} ${arm.name.padEnd(13)} p50 ${median(run.total).toFixed(3)} ms  cpu ${(c1 - c0).toFixed(2)} s  errors ${run.errors}\n`,
          );
        }
      }
    }

    // (read before 1b: the histogram covers the BENCH_RATE slices only)
    const addedDuring = new Map<string, Map<string, number>>();
    for (const arm of arms) {
      if (!arm.opsUrl) continue;
      const after = await addedBuckets(arm.opsUrl);
      const before = addedBefore.get(arm.name)!;
      addedDuring.set(arm.name, new Map([...after].map(([le, n]) => [le, n - (before.get(le) ?? 0)])));
    }

    // 1b. CPU only, at a higher fixed rate: between requests at 200 req/s each proxy idles ~5 ms,
    // and what waking costs it dominates; at 1,000 req/s less so
    type CpuAcc = { cpu: number; sent: number; errors: number; repCpuPer1k: number[] };
    const accHigh = new Map<string, CpuAcc>();
    for (let rep = 0; rep < (RATE_HIGH > 0 ? REPS : 0); rep++) {
      for (const mode of ['json', 'stream'] as const) {
        for (const arm of shuffled(arms, SEED * 3000 + order++)) {
          if (arm.proc === null) continue;
          const c0 = cpuSeconds(arm.proc.pid);
          const run = await fixedRate(arm.url, SHAPES[mode], RATE_HIGH, SECONDS * 1000);
          const c = cpuSeconds(arm.proc.pid) - c0;
          const a = accHigh.get(key(arm.name, mode)) ?? { cpu: 0, sent: 0, errors: 0, repCpuPer1k: [] };
          a.cpu += c;
          a.sent += run.sent;
          a.errors += run.errors;
          a.repCpuPer1k.push((c / run.sent) * 1000);
          accHigh.set(key(arm.name, mode), a);
          process.stderr.write(
            `rep ${rep + 1}/${REPS} ${mode.padEnd(6)} ${arm.name.padEnd(13)} @${RATE_HIGH}/s cpu ${c.toFixed(2)} s  errors ${run.errors}\n`,
          );
        }
      }
    }

    // 2. RSS with N concurrent open streams (held by the upstream until released), before the
    // saturation runs: at 100% sampling those fill the capture queue, whose high-water mark the
    // heap keeps for a while (reported apart, below)
    const rss = new Map<string, { idle: number; open: number; opened: number; failed: number }>();
    const holdShape: Shape = { ...SHAPES.stream, path: '/v1/chat/completions?hold=1' };
    for (const arm of STREAMS > 0 ? arms : []) {
      if (arm.proc === null) continue;
      const idle = rssBytes(arm.proc.pid);
      const pool = new Pool(arm.url, {
        connections: STREAMS,
        pipelining: 1,
        headersTimeout: 60_000,
        bodyTimeout: 60_000,
      });
      let firstSeen = 0;
      const failures = new Map<string, number>();
      // each stream handles its own failure: one reset must not end the run, and it is reported
      let failedBeforeOpen = 0;
      const opened = Array.from({ length: STREAMS }, async () => {
        let counted = false;
        try {
          const res = await pool.request({
            path: holdShape.path,
            method: 'POST',
            headers: holdShape.headers,
            body: holdShape.body,
          });
          for await (const _c of res.body) {
            if (!counted) {
              counted = true;
              firstSeen++;
            }
          }
        } catch (err) {
          const k = `${counted ? 'after its first event, ' : ''}${(err as { code?: string }).code ?? (err as Error).name}: ${(err as Error).message}`;
          failures.set(k, (failures.get(k) ?? 0) + 1);
          if (!counted) failedBeforeOpen++;
        }
      });
      const t0 = Date.now();
      while (firstSeen + failedBeforeOpen < STREAMS && Date.now() - t0 < 60_000)
        await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 500));
      const open = rssBytes(arm.proc.pid);
      await once(upstreamUrl, { ...SHAPES.json, path: '/release' });
      await Promise.allSettled(opened);
      await pool.close();
      const failed = [...failures.values()].reduce((a, b) => a + b, 0);
      rss.set(arm.name, { idle, open, opened: firstSeen, failed });
      process.stderr.write(
        `rss ${arm.name.padEnd(13)} idle ${(idle / 2 ** 20).toFixed(1)} MiB, ${firstSeen} open streams ${(open / 2 ** 20).toFixed(1)} MiB${failed > 0 ? `, ${failed} failed: ${[...failures].map(([k, n]) => `${n}× ${k}`).join('; ')}` : ''}\n`,
      );
    }

    // 3. saturation throughput (autocannon, closed loop), then each proxy's RSS after it
    const sat = new Map<string, { rps: number; errors: number; cpuPer1k: number }>();
    for (const mode of SAT_SECONDS > 0 ? (['json', 'stream'] as const) : []) {
      for (const arm of shuffled(arms, SEED * 7 + (mode === 'json' ? 1 : 2))) {
        const pid = arm.proc?.pid ?? up.pid;
        const c0 = cpuSeconds(pid);
        const r = await autocannon({
          url: arm.url + SHAPES[mode].path,
          method: 'POST',
          headers: SHAPES[mode].headers,
          body: SHAPES[mode].body,
          connections: SAT_CONN,
          duration: SAT_SECONDS,
        });
        const c1 = cpuSeconds(pid);
        const n = r.requests.average * SAT_SECONDS;
        sat.set(key(arm.name, mode), {
          rps: r.requests.average,
          errors: r.errors + r.non2xx,
          cpuPer1k: ((c1 - c0) / n) * 1000,
        });
        process.stderr.write(
          `saturation ${mode.padEnd(6)} ${arm.name.padEnd(13)} ${r.requests.average.toFixed(0)} req/s\n`,
        );
      }
    }
    const rssAfterSat = new Map<string, number>();
    if (SAT_SECONDS > 0)
      for (const arm of arms) if (arm.proc !== null) rssAfterSat.set(arm.name, rssBytes(arm.proc.pid));

    // capture sanity: what each sidecar published
    const published: Record<string, string> = {};
    for (const arm of arms) {
      if (!arm.opsUrl) continue;
      const text = await (await fetch(`${arm.opsUrl}/metrics`)).text();
      const lines = text
        .split('\n')
        .filter((l) => l.startsWith('shadowplane_sidecar_captures_total') && !l.includes('not_sampled'));
      published[arm.name] = lines.map((l) => l.replace('shadowplane_sidecar_captures_total', '')).join(' ') || '(none)';
    }

    // report
    const direct = (mode: string) => acc.get(key('direct', mode))!;
    const ref = ngx && arms.some((a) => a.name === 'nginx+mirror') ? 'nginx+mirror' : null;
    const fmt = (n: number, d = 3) => (Number.isFinite(n) ? n.toFixed(d) : '—');
    /** CPU s per 1k requests, its ratio to the reference arm (pooled), and the per-rep ratios (median, min…max). */
    const cpuCells = (m: Map<string, CpuAcc>, name: string, mode: string): [string, string, string] => {
      const a = m.get(key(name, mode));
      const b = ref ? m.get(key(ref, mode)) : undefined;
      if (!a) return ['—', '—', '—'];
      const c = (a.cpu / a.sent) * 1000;
      if (!b) return [fmt(c, 4), '—', '—'];
      // the same rep's slices ran minutes apart at most: their ratio cancels slow drifts of the machine
      const reps = a.repCpuPer1k.map((x, i) => x / b.repCpuPer1k[i]!);
      return [
        fmt(c, 4),
        fmt(c / ((b.cpu / b.sent) * 1000), 2),
        `${fmt(median(reps), 2)} (${fmt(Math.min(...reps), 2)}…${fmt(Math.max(...reps), 2)})`,
      ];
    };
    const lines: string[] = [];
    lines.push(`Shadowplane sidecar overhead — ${new Date().toISOString()}`);
    lines.push(
      `machine: ${cpus()[0]?.model ?? '?'} × ${ncpu}; node ${process.version}; undici ${pkgVersion('undici')}; ${ngxVer ?? 'nginx absent'}`,
    );
    lines.push(
      `generator+upstream+NATS on CPU ${genCpu}, proxies on CPU ${proxyCpu}, nice ${BENCH_NICE}; fixed rate ${RATE} req/s × ${SECONDS} s × ${REPS} reps per arm and mode (interleaved, seed ${SEED}); saturation ${SAT_CONN} connections × ${SAT_SECONDS} s`,
    );
    lines.push(
      'added = arm − direct at the same quantile (pooled over reps); rep-spread = min…max of per-rep p50 differences',
    );
    for (const mode of ['json', 'stream'] as const) {
      const d = direct(mode);
      lines.push('');
      lines.push(
        mode === 'json' ? 'non-streaming, 1 KB JSON request → ~1 KB JSON response' : 'streaming (SSE, 18 events)',
      );
      const hdr = [
        'arm',
        'CPU s/1k req',
        `× ${ref ?? 'ref'}`,
        'per-rep × (median, min…max)',
        'p50 ms',
        'p99 ms',
        'added p50',
        'added p99',
        'rep-spread p50',
        mode === 'stream' ? 'added TTFT p50' : 'TTFB p50',
        'sat req/s',
        'errors',
      ];
      lines.push(hdr.join(' | '));
      for (const arm of arms) {
        const a = acc.get(key(arm.name, mode))!;
        const cells = arm.proc ? cpuCells(acc, arm.name, mode) : (['—', '—', '—'] as const);
        const repDiff = a.repP50.map((x, i) => x - (d.repP50[i] ?? NaN));
        const s = sat.get(key(arm.name, mode));
        lines.push(
          [
            arm.name,
            ...cells,
            fmt(median(a.total)),
            fmt(quantile(a.total, 0.99)),
            arm.proc ? fmt(median(a.total) - median(d.total)) : '—',
            arm.proc ? fmt(quantile(a.total, 0.99) - quantile(d.total, 0.99)) : '—',
            arm.proc ? `${fmt(Math.min(...repDiff))}…${fmt(Math.max(...repDiff))}` : '—',
            mode === 'stream'
              ? arm.proc
                ? fmt(median(a.first) - median(d.first))
                : fmt(median(a.first))
              : fmt(median(a.first)),
            s ? s.rps.toFixed(0) : '—',
            String(a.errors + (s?.errors ?? 0)),
          ].join(' | '),
        );
      }
    }
    if (accHigh.size > 0) {
      lines.push('');
      lines.push(
        `CPU at ${RATE_HIGH} req/s (${REPS} reps × ${SECONDS} s per arm and mode, interleaved; no latency taken)`,
      );
      lines.push(
        [
          'arm',
          'JSON CPU s/1k req',
          `× ${ref ?? 'ref'}`,
          'per-rep ×',
          'SSE CPU s/1k req',
          `× ${ref ?? 'ref'}`,
          'per-rep ×',
          'errors',
        ].join(' | '),
      );
      for (const arm of arms) {
        if (arm.proc === null) continue;
        const errors =
          (accHigh.get(key(arm.name, 'json'))?.errors ?? 0) + (accHigh.get(key(arm.name, 'stream'))?.errors ?? 0);
        lines.push(
          [
            arm.name,
            ...cpuCells(accHigh, arm.name, 'json'),
            ...cpuCells(accHigh, arm.name, 'stream'),
            String(errors),
          ].join(' | '),
        );
      }
    }
    // target: sampled requests no slower than unsampled ones (same run, same reps)
    for (const mode of ['json', 'stream'] as const) {
      const s0 = acc.get(key('sidecar 0%', mode));
      const s1 = acc.get(key('sidecar 100%', mode));
      if (!s0 || !s1) continue;
      const diffs = s1.repP50.map((x, i) => x - (s0.repP50[i] ?? NaN));
      lines.push(
        `sampled (100%) − unsampled (0%), ${mode}: p50 ${fmt(median(s1.total) - median(s0.total))} ms, p99 ${fmt(quantile(s1.total, 0.99) - quantile(s0.total, 0.99))} ms, per-rep p50 ${diffs.map((d) => fmt(d)).join(' ')}`,
      );
    }
    lines.push('');
    lines.push(
      `time each sidecar spent on a request itself (its shadowplane_sidecar_added_latency_seconds histogram over the ${RATE} req/s runs, both shapes):`,
    );
    lines.push('arm | requests | ≤ 0.1 ms | ≤ 0.3 ms | ≤ 1 ms | ≤ 2 ms | p50 ≤ | p99 ≤');
    for (const [name, b] of addedDuring) {
      const total = b.get('+Inf') ?? 0;
      const share = (le: string) => (total > 0 ? `${(((b.get(le) ?? 0) / total) * 100).toFixed(2)}%` : '—');
      const q = (x: number) => {
        const le = [...b].find(([l, n]) => l !== '+Inf' && n >= x * total)?.[0];
        return le === undefined ? '> 50' : String(Number(le) * 1000);
      };
      lines.push(
        `${name} | ${total} | ${share('0.0001')} | ${share('0.0003')} | ${share('0.001')} | ${share('0.002')} | ${q(0.5)} ms | ${q(0.99)} ms`,
      );
    }
    lines.push('');
    lines.push(
      `warm-up before measuring: ${WARM_REQUESTS} requests per arm (JSON and SSE alternating), CPU s spent on it:`,
    );
    lines.push(`  ${[...warm].map(([name, s]) => `${name} ${fmt(s, 2)}`).join(' · ')}`);
    if (STREAMS > 0) {
      lines.push('');
      lines.push(`RSS with ${STREAMS} concurrent open streams`);
      lines.push('arm | idle MiB | open MiB | streams open | streams failed | after the saturation runs MiB');
      const mib = (b: number | undefined) => (b === undefined ? '—' : (b / 2 ** 20).toFixed(1));
      for (const [name, v] of rss)
        lines.push(
          `${name} | ${mib(v.idle)} | ${mib(v.open)} | ${v.opened} | ${v.failed} | ${mib(rssAfterSat.get(name))}`,
        );
    }
    lines.push('');
    lines.push('captures by outcome (sidecar /metrics at the end):');
    for (const [k, v] of Object.entries(published)) lines.push(`  ${k}: ${v}`);
    process.stdout.write(`${lines.join('\n')}\n`);

    const outDir = join(REPO, 'loadtests', 'out');
    mkdirSync(outDir, { recursive: true });
    const outFile = join(outDir, `sidecar-bench-${Date.now()}.json`);
    writeFileSync(
      outFile,
      JSON.stringify(
        {
          at: new Date().toISOString(),
          rate: RATE,
          rateHigh: RATE_HIGH,
          seconds: SECONDS,
          reps: REPS,
          arms: arms.map((a) => a.name),
          fixedRate: Object.fromEntries(
            [...acc].map(([k, a]) => [
              k,
              {
                p50: median(a.total),
                p99: quantile(a.total, 0.99),
                firstP50: median(a.first),
                cpuPer1k: (a.cpu / a.sent) * 1000,
                repCpuPer1k: a.repCpuPer1k,
                sent: a.sent,
                errors: a.errors,
                repP50: a.repP50,
              },
            ]),
          ),
          cpuAtRateHigh: Object.fromEntries(
            [...accHigh].map(([k, a]) => [
              k,
              { cpuPer1k: (a.cpu / a.sent) * 1000, repCpuPer1k: a.repCpuPer1k, sent: a.sent, errors: a.errors },
            ]),
          ),
          saturation: Object.fromEntries(sat),
          rss: Object.fromEntries(rss),
          rssAfterSaturation: Object.fromEntries(rssAfterSat),
          addedLatencyBuckets: Object.fromEntries([...addedDuring].map(([k, v]) => [k, Object.fromEntries(v)])),
          warmUp: { requests: WARM_REQUESTS, cpuSeconds: Object.fromEntries(warm) },
          published,
        },
        null,
        2,
      ),
    );
    process.stdout.write(`(JSON: ${outFile})\n`);
    return 0;
  } finally {
    await tearDown(started, [store]);
  }
}

/** Cumulative bucket counts (`le` → count, in the histogram's order) of a sidecar's added-latency histogram; other labels (e.g. `role`) may sit beside `le`. */
async function addedBuckets(opsUrl: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  const out = new Map<string, number>();
  for (const m of text.matchAll(
    /^shadowplane_sidecar_added_latency_seconds_bucket\{(?:[^}]*,)?le="([^"]+)"[^}]*\} (\d+)$/gm,
  ))
    out.set(m[1]!, Number(m[2]));
  return out;
}

runMain('sidecar-bench', main);
