import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from './ports.js';

/** A private redis-server process started for tests (no persistence). */
export interface RedisServerHandle {
  /** e.g. `redis://127.0.0.1:43123` */
  readonly url: string;
  readonly port: number;
  readonly process: ChildProcess;
  /** SIGKILL; nothing is kept. */
  stop(): Promise<void>;
}

/**
 * Starts a private redis-server on a free loopback port and waits until that very process answers
 * (its `INFO server` reports our child's `process_id`).
 *
 * redis-server cannot pick its own port, and a port found free can be taken before the server binds
 * it; then the server exits while a plain connect probe reaches the other listener. So the answer
 * is checked for our pid, and a start whose port was taken is retried on another port.
 * @param opts.timeoutMs how long to wait in all, ms (default 15,000)
 * @param opts.choosePort picks the port of each attempt (default: a free one; tests inject a taken one)
 * @throws Error when redis-server is missing, or no start answers within `timeoutMs`
 */
export async function startRedisServer(
  opts: { timeoutMs?: number; choosePort?: () => Promise<number> } = {},
): Promise<RedisServerHandle> {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const choosePort = opts.choosePort ?? freePort;
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await choosePort();
    const child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      if (out.length < 8192) out += d.toString();
    });
    let spawnError: Error | null = null;
    child.once('error', (e) => (spawnError = e));
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    for (;;) {
      if (spawnError !== null)
        throw new Error(
          `redis-server could not start (${(spawnError as Error).message}): install it (Debian: apt-get install -y redis-server)`,
        );
      if (child.exitCode !== null || child.signalCode !== null) {
        last = `redis-server exited with ${child.exitCode ?? child.signalCode}: ${out.slice(-500)}`;
        break; // most likely the port was taken: try another
      }
      if ((await redisPid(port)) === child.pid) {
        return {
          url: `redis://127.0.0.1:${port}`,
          port,
          process: child,
          async stop() {
            if (child.exitCode === null && child.signalCode === null) {
              child.kill('SIGKILL');
              await exited;
            }
          },
        };
      }
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`redis-server did not answer on ${port} within ${timeoutMs} ms`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  throw new Error(`redis-server did not start in 5 attempts: ${last}`);
}

/** `process_id` from `INFO server` of the redis on 127.0.0.1:`port`, or 0 when none answers (2 s). */
function redisPid(port: number): Promise<number> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    let buf = '';
    const done = (pid: number) => {
      clearTimeout(t);
      s.destroy();
      resolve(pid);
    };
    const t = setTimeout(() => done(0), 2000);
    s.once('connect', () => s.write('INFO server\r\n'));
    s.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      const m = /process_id:(\d+)\r\n/.exec(buf);
      if (m) done(Number(m[1]));
      else if (buf.startsWith('-')) done(0); // e.g. -LOADING
    });
    s.once('error', () => done(0));
    s.once('close', () => done(0));
  });
}
