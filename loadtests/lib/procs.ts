// Process helpers for the overhead benchmarks: start pinned local processes, read their CPU time
// and RSS from /proc, generate an nginx proxy_pass (+ mirror) config. Loopback only.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canConnect } from '@shadowplane/testkit';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** Clock ticks per second for /proc/<pid>/stat times (getconf CLK_TCK; 100 on Linux x86-64). */
export const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** A started child process. */
export interface Proc {
  name: string;
  pid: number;
  child: ChildProcess;
  /** the JSON "listening" line, when the process prints one */
  info: Record<string, string>;
  stop(): Promise<void>;
}

/** Pins the current process to `cpus` (e.g. "0"). */
export function pinSelf(cpus: string): void {
  try {
    execFileSync('taskset', ['-apc', cpus, String(process.pid)], { stdio: 'ignore' });
  } catch {
    /* taskset missing: run unpinned */
  }
  if (BENCH_NICE !== 0) {
    try {
      execFileSync('renice', ['-n', String(BENCH_NICE), '-p', String(process.pid)], { stdio: 'ignore' });
    } catch {
      /* not permitted: keep the default priority */
    }
  }
}

/** Number of online CPUs from /proc/cpuinfo. */
export function cpuCount(): number {
  return readFileSync('/proc/cpuinfo', 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('processor')).length;
}

/**
 * Scheduling priority for every benchmark process (env BENCH_NICE, default 0). On a shared machine a
 * negative value (root only) keeps other people's work from starving the arms; it applies equally
 * to every arm, nginx included.
 */
export const BENCH_NICE = Number(process.env.BENCH_NICE ?? 0);

function tasksetPrefix(cpu: string | undefined, cmd: string, args: string[]): [string, string[]] {
  const pinned: [string, string[]] = cpu === undefined ? [cmd, args] : ['taskset', ['-c', cpu, cmd, ...args]];
  if (BENCH_NICE === 0) return pinned;
  return ['nice', ['-n', String(BENCH_NICE), pinned[0], ...pinned[1]]];
}

const children = new Set<ChildProcess>();
let cleanupInstalled = false;

/**
 * Remembers a started process so that it is killed when this runner exits, however it exits:
 * an interrupted or failed run must not leave sidecars, upstreams or nats-servers behind.
 */
function trackChild(child: ChildProcess): void {
  children.add(child);
  child.once('exit', () => children.delete(child));
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.on('exit', () => {
    for (const c of children) c.kill('SIGKILL');
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      process.stderr.write(`${sig}: stopping the benchmark's processes\n`);
      process.exit(130);
    });
  }
}

/**
 * Spawns `cmd args` pinned to `cpu` and waits for a `{"event":"listening"}` JSON line on stdout
 * (or, with `waitPort`, for the TCP port to accept).
 */
export async function startProc(
  name: string,
  cmd: string,
  args: string[],
  o: { cpu?: string; env?: Record<string, string>; waitPort?: number; timeoutMs?: number; cwd?: string } = {},
): Promise<Proc> {
  const [c, a] = tasksetPrefix(o.cpu, cmd, args);
  const child = spawn(c, a, {
    // sources, not a dist/ build: arms from other trees (base commits, the no-tracing copy) have
    // no build, so every arm runs the same way (set SHADOWPLANE_RUN_FROM to override)
    env: { SHADOWPLANE_RUN_FROM: 'src', ...process.env, ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: o.cwd ?? REPO,
  });
  trackChild(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => {
    if (err.length < 20_000) err += d.toString();
  });
  const deadline = Date.now() + (o.timeoutMs ?? 60_000);
  let info: Record<string, string> = {};
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}: ${err}`);
    if (o.waitPort !== undefined) {
      if (await canConnect(o.waitPort)) break;
    } else {
      const line = out.split('\n').find((l) => l.includes('"listening"'));
      if (line) {
        info = JSON.parse(line) as Record<string, string>;
        break;
      }
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not become ready: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    name,
    pid: child.pid!,
    child,
    info,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(t);
      }
    },
  };
}

/**
 * CPU seconds (user + system) a process has used so far, in nanosecond resolution: the sum of
 * `/proc/<pid>/task/<tid>/schedstat` (field 1, ns on CPU) over its threads. `/proc/<pid>/stat`
 * counts in clock ticks (10 ms), too coarse for a proxy that uses ~0.2 ms per request; it is the
 * fallback where schedstat is missing. Threads that exited are not counted by schedstat (Node's
 * and nginx's threads live as long as the process).
 */
export function cpuSeconds(pid: number): number {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // the thread exited between the listing and the read
      }
    }
    if (ns > 0) return ns / 1e9;
  } catch {
    // no schedstat (kernel without CONFIG_SCHEDSTATS): ticks below
  }
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // fields after the parenthesised comm; utime and stime are fields 14 and 15 (1-based)
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) / CLK_TCK;
}

/** Resident set size in bytes, from /proc/<pid>/status (VmRSS). */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/** Locates nginx (Debian package `nginx`), or null. */
export function nginxBinary(): string | null {
  for (const p of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx'])
    if (existsSync(p)) return p;
  return null;
}

/** nginx version string (nginx prints it on stderr), or null. */
export function nginxVersion(bin: string): string | null {
  const r = spawnSync(bin, ['-v'], { encoding: 'utf8' });
  return `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() || null;
}

/**
 * Starts nginx as one non-daemon process (master_process off, one worker loop) with a generated
 * config: `proxy_pass` to `upstream` with keep-alive, streaming (proxy_buffering off) and, when
 * `mirrorTo` is given, the `mirror` directive posting every request (with its body) there.
 * `wrapper` runs it under another command (e.g. valgrind and its flags).
 */
export async function startNginx(
  name: string,
  bin: string,
  port: number,
  upstream: string,
  mirrorTo: string | null,
  cpu?: string,
  wrapper: string[] = [],
): Promise<Proc> {
  const dir = mkdtempSync(join(tmpdir(), 'shadowplane-nginx-'));
  const up = new URL(upstream);
  const mirror = mirrorTo ? new URL(mirrorTo) : null;
  const conf = `
daemon off;
master_process off;
worker_processes 1;
user root;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 8192; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  client_max_body_size 64m;
  keepalive_requests 1000000;
  keepalive_timeout 65s;
  upstream app { server ${up.host}; keepalive 256; }
  ${mirror ? `upstream capture { server ${mirror.host}; keepalive 256; }` : ''}
  server {
    listen 127.0.0.1:${port};
    location / {
      ${mirror ? 'mirror /__mirror; mirror_request_body on;' : ''}
      proxy_pass http://app;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
    ${mirror ? `location = /__mirror { internal; proxy_pass http://capture$request_uri; proxy_http_version 1.1; proxy_set_header Connection ""; }` : ''}
  }
}
`;
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const args = ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')];
  const [cmd, argv] = wrapper.length > 0 ? [wrapper[0]!, [...wrapper.slice(1), bin, ...args]] : [bin, args];
  return startProc(name, cmd, argv, {
    waitPort: port,
    timeoutMs: wrapper.length > 0 ? 120_000 : 60_000,
    ...(cpu ? { cpu } : {}),
  });
}

/** Installed version of an npm package, from its package.json. */
export function pkgVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
      .version;
  } catch {
    return '?';
  }
}
