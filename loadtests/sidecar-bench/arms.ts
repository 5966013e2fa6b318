// The processes the sidecar benchmark measures: NATS and the fast upstream on the generator's CPU,
// then every proxy arm on the proxy CPU.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nginxBinary, nginxVersion, startNginx, startProc, type Proc } from '../lib/procs.js';
import { freePorts } from '../lib/ports.js';
import { BENCH_SIDECAR_ENV, sidecarArgs, startBenchNats, startFastUpstream } from '../lib/stack.js';

/** One measured arm: where to send requests and the process whose CPU and RSS are read. */
export interface Arm {
  name: string;
  url: string;
  /** the proxy process (null for direct) */
  proc: Proc | null;
  /** the sidecar's ops listener (metrics), sidecar arms only */
  opsUrl?: string;
}

/** What {@link startArms} started: the arms in report order, and what the teardown must stop or remove. */
export interface Started {
  arms: Arm[];
  /** the fast upstream (its CPU stands in for "direct", and `/release` frees held streams) */
  upstream: Proc;
  upstreamUrl: string;
  /** nginx's version line, or null when nginx is absent (its arms are then left out) */
  nginxVersion: string | null;
  /** every process started, in start order */
  procs: Proc[];
  /** the nats-server's store directory */
  dirs: string[];
}

/** Options of {@link startArms}. */
export interface ArmOptions {
  genCpu: string;
  proxyCpu: string;
  /** arm names to keep (direct is always kept), or null for all */
  only: string[] | null;
  /** a checkout of another commit: adds `base sidecar 0% / 10% / 100%` arms run from it */
  baseDir: string | null;
}

/**
 * Starts a private JetStream nats-server and the fast upstream on `genCpu`, then the sidecar at
 * sampling 0 / 10 / 100 % (and the base checkout's, with `baseDir`), a bare undici proxy, a node:net
 * pipe and, when nginx is installed, nginx and nginx + mirror on `proxyCpu`. Each process is
 * pushed on `started` (and the store directory on `dirs`) as soon as it runs, so a failure part way
 * leaves the caller everything to tear down.
 */
export async function startArms(o: ArmOptions, started: Started['procs'], dirs: string[]): Promise<Started> {
  const [natsPort, upPort, capPort, ngPort, ngmPort] = await freePorts(5);
  const store = mkdtempSync(join(tmpdir(), 'shadowplane-bench-nats-'));
  dirs.push(store);
  const nats = await startBenchNats(natsPort!, store, o.genCpu);
  started.push(nats);
  const up = await startFastUpstream(upPort!, capPort!, o.genCpu);
  started.push(up);
  const upstreamUrl = up.info['url']!;
  const captureUrl = up.info['capture_url']!;

  const arms: Arm[] = [{ name: 'direct', url: upstreamUrl, proc: null }];
  const sidecarArms: [string, string, string | undefined][] = [
    ['sidecar 0%', '0', undefined],
    ['sidecar 10%', '0.1', undefined],
    ['sidecar 100%', '1', undefined],
  ];
  if (o.baseDir !== null)
    sidecarArms.push(
      ['base sidecar 0%', '0', o.baseDir],
      ['base sidecar 10%', '0.1', o.baseDir],
      ['base sidecar 100%', '1', o.baseDir],
    );
  for (const [name, rate, cwd] of sidecarArms) {
    if (o.only !== null && !o.only.includes(name)) continue;
    const p = await startProc(
      name,
      process.execPath,
      sidecarArgs({ upstream: upstreamUrl, natsUrl: `nats://127.0.0.1:${natsPort}`, prefix: 'bench', sample: rate }),
      { cpu: o.proxyCpu, env: { ...BENCH_SIDECAR_ENV }, ...(cwd !== undefined ? { cwd } : {}) },
    );
    started.push(p);
    arms.push({ name, url: p.info['url']!, proc: p, opsUrl: p.info['ops_url']! });
  }
  const bare = await startProc(
    'bare undici',
    process.execPath,
    ['--import', 'tsx', 'loadtests/bare-proxy.ts', '0', upstreamUrl],
    { cpu: o.proxyCpu },
  );
  started.push(bare);
  arms.push({ name: 'bare undici', url: bare.info['url']!, proc: bare });
  const pipe = await startProc(
    'node:net pipe',
    process.execPath,
    ['--import', 'tsx', 'loadtests/pipe-proxy.ts', '0', upstreamUrl],
    { cpu: o.proxyCpu },
  );
  started.push(pipe);
  arms.push({ name: 'node:net pipe', url: pipe.info['url']!, proc: pipe });
  const ngx = nginxBinary();
  let ngxVer: string | null = null;
  if (ngx) {
    ngxVer = nginxVersion(ngx);
    const plain = await startNginx('nginx', ngx, ngPort!, upstreamUrl, null, o.proxyCpu);
    const mirror = await startNginx('nginx+mirror', ngx, ngmPort!, upstreamUrl, captureUrl, o.proxyCpu);
    started.push(plain, mirror);
    arms.push(
      { name: 'nginx', url: `http://127.0.0.1:${ngPort}`, proc: plain },
      { name: 'nginx+mirror', url: `http://127.0.0.1:${ngmPort}`, proc: mirror },
    );
  } else {
    process.stderr.write('nginx not found (Debian: apt-get install -y nginx): the nginx arms are left out\n');
  }

  // BENCH_ARMS (comma-separated names) keeps a subset, for a quick look at a few arms
  const kept = o.only === null ? arms : arms.filter((a) => a.name === 'direct' || o.only!.includes(a.name));
  return { arms: kept, upstream: up, upstreamUrl, nginxVersion: ngxVer, procs: started, dirs };
}
