import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { freePort } from './ports.js';

/** A nats-server process started for tests or the demo. */
export interface NatsServerHandle {
  /** e.g. `nats://127.0.0.1:43123` */
  readonly url: string;
  readonly port: number;
  readonly storeDir: string;
  readonly process: ChildProcess;
  /** SIGTERM (then SIGKILL after `graceMs`), and delete the store dir unless `keepStore`. */
  stop(opts?: { keepStore?: boolean; graceMs?: number }): Promise<void>;
  /** SIGKILL immediately (crash), keeping the store so a restart can recover it. */
  kill(): Promise<void>;
}

/** Locates nats-server on PATH or in /usr/sbin; throws with an install hint when absent. */
export function natsServerBinary(): string {
  const candidates = [process.env.NATS_SERVER_BIN, 'nats-server', '/usr/sbin/nats-server', '/usr/local/bin/nats-server'].filter(Boolean) as string[];
  for (const c of candidates) {
    try {
      execFileSync(c, ['--version'], { stdio: 'ignore' });
      return c;
    } catch {
      /* try the next */
    }
  }
  throw new Error('nats-server not found: install it (Debian: apt-get install -y nats-server) or set NATS_SERVER_BIN');
}

/**
 * Starts a private nats-server with JetStream on a free loopback port and a temp store dir, and
 * waits until it accepts TCP connections.
 * @param opts.port fixed port (default: a free one); opts.storeDir reuse a store (restart tests)
 * @throws Error when the binary is missing or the server does not listen within 10 s
 */
export async function startNatsServer(opts: { port?: number; storeDir?: string } = {}): Promise<NatsServerHandle> {
  const bin = natsServerBinary();
  const port = opts.port ?? (await freePort());
  const storeDir = opts.storeDir ?? mkdtempSync(join(tmpdir(), 'shadowplane-nats-'));
  const child = spawn(bin, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    if (stderr.length < 8192) stderr += d.toString();
  });
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}: ${stderr}`);
    if (await canConnect(port)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nats-server did not listen on ${port} within 10 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    process: child,
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
