import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareVersions, CAS_SAFE_NATS_VERSION } from '@shadowplane/bus';
import { connect } from 'node:net';

/** A nats-server process started by `shadowplane up`, the demo or tests. */
export interface NatsServerHandle {
  /** e.g. `nats://127.0.0.1:43123` */
  readonly url: string;
  readonly port: number;
  readonly storeDir: string;
  readonly process: ChildProcess;
  /** server name (`-n`), set for cluster members */
  readonly serverName?: string;
  /** SIGTERM (then SIGKILL after `graceMs`), and delete the store dir unless `keepStore`. */
  stop(opts?: { keepStore?: boolean; graceMs?: number }): Promise<void>;
  /** SIGKILL immediately (crash), keeping the store so a restart can recover it. */
  kill(): Promise<void>;
}

/** The oldest nats-server tests and the demo run against: 2.9.x has a KV CAS race on replicated buckets. */
export const MIN_NATS_SERVER_VERSION = CAS_SAFE_NATS_VERSION;

/** Repository root (this file is libs/stack/src/nats-server.ts). */
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Locates a nats-server of at least {@link MIN_NATS_SERVER_VERSION}: `NATS_SERVER_BIN`, then the
 * pinned build in `.bin/nats-server` (`make nats-server`), then one on PATH. Debian's 2.9.x is
 * refused, not used.
 * @returns the path or command name of the binary
 * @throws Error naming every candidate found and its version, with the build command, when none qualifies
 */
export function natsServerBinary(): string {
  const candidates = [process.env.NATS_SERVER_BIN, join(REPO_ROOT, '.bin', 'nats-server'), 'nats-server'].filter(
    Boolean,
  ) as string[];
  const tooOld: string[] = [];
  for (const c of candidates) {
    let out: string;
    try {
      out = execFileSync(c, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      continue; // not there: try the next
    }
    const v = /v?(\d+\.\d+\.\d+)/.exec(out)?.[1] ?? '0.0.0';
    if (compareVersions(v, MIN_NATS_SERVER_VERSION) >= 0) return c;
    tooOld.push(`${c} is ${v}`);
  }
  throw new Error(
    `no nats-server >= ${MIN_NATS_SERVER_VERSION} found${tooOld.length ? ` (${tooOld.join('; ')})` : ''}: run \`make nats-server\` to build the pinned release into .bin/, or set NATS_SERVER_BIN`,
  );
}

/** Cluster membership for {@link startNatsServer}. */
export interface NatsClusterMemberOptions {
  /** unique server name in the cluster (JetStream peers are named by it) */
  serverName: string;
  clusterName: string;
  /** this member's route (cluster) port on 127.0.0.1 */
  routePort: number;
  /** every member's route URL, this one's included (a server ignores the route to itself) */
  routes: string[];
}

/**
 * Starts a private nats-server with JetStream on a loopback port and a temp store dir, and waits
 * until that very process listens.
 *
 * The server picks its own port (`-p -1`) and reports it in a ports file (`--ports_file_dir`), so
 * no other process can take the port between choosing and binding it. Probing the port alone is
 * not proof: when a fixed port is already taken, this server exits while the probe reaches the
 * other listener, and a test would then freeze or stop a server nobody uses.
 * @param opts.port fixed port (a restart on the port a test's clients know; default: the server
 *   picks one); opts.storeDir reuse a store (restart tests); opts.cluster makes it a member of a
 *   JetStream cluster: server name, cluster name, its route port and every member's route URL
 * @throws Error when the binary is missing, the server exits (e.g. the fixed port is taken), or it
 *   does not listen within 10 s
 */
export async function startNatsServer(
  opts: { port?: number; storeDir?: string; cluster?: NatsClusterMemberOptions } = {},
): Promise<NatsServerHandle> {
  const bin = natsServerBinary();
  const storeDir = opts.storeDir ?? mkdtempSync(join(tmpdir(), 'shadowplane-nats-'));
  const portsDir = mkdtempSync(join(tmpdir(), 'shadowplane-nats-ports-'));
  const args = ['-a', '127.0.0.1', '-p', String(opts.port ?? -1), '-js', '-sd', storeDir, '--ports_file_dir', portsDir];
  const c = opts.cluster;
  if (c)
    args.push(
      '-n',
      c.serverName,
      '--cluster_name',
      c.clusterName,
      '--cluster',
      `nats://127.0.0.1:${c.routePort}`,
      '--routes',
      c.routes.join(','),
    );
  const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    if (stderr.length < 8192) stderr += d.toString();
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const deadline = Date.now() + 10_000;
  let port = 0;
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`nats-server exited with ${child.exitCode ?? child.signalCode}: ${stderr}`);
      port = listenedPort(portsDir, child.pid!);
      if (port > 0 && (await canConnect(port))) break;
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        await exited;
        throw new Error(`nats-server did not listen within 10 s: ${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  } catch (err) {
    // a store dir made here goes with the server that failed to start
    if (!opts.storeDir) rmSync(storeDir, { recursive: true, force: true });
    throw err;
  } finally {
    rmSync(portsDir, { recursive: true, force: true });
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    process: child,
    ...(c ? { serverName: c.serverName } : {}),
    async stop({ keepStore = false, graceMs = 3000 } = {}) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(t);
      }
      if (!keepStore && !opts.storeDir) rmSync(storeDir, { recursive: true, force: true });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

/**
 * The client port in the ports file nats-server `pid` writes once it listens
 * (`<executable>_<pid>.ports`: `{"nats":["nats://127.0.0.1:43123"]}`), or 0 while there is none.
 */
function listenedPort(dir: string, pid: number): number {
  const f = readdirSync(dir).find((n) => n.endsWith(`_${pid}.ports`));
  if (f === undefined) return 0;
  try {
    const urls = (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { nats?: string[] }).nats ?? [];
    return urls.length > 0 ? Number(new URL(urls[0]!).port) : 0;
  } catch {
    return 0; // written but not yet complete
  }
}

/** True when something accepts TCP connections on 127.0.0.1:`port` (one connect attempt). */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}
