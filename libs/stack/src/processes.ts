// The processes of a local Shadowplane (used by `shadowplane up` and `make demo`).
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/** Repository (or image) root: three levels above libs/stack/src. */
export const STACK_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
/** The `shadowplane` entry binary every role is started through. */
export const SHADOWPLANE_ENTRY = join(STACK_ROOT, 'services', 'shadowplane', 'bin', 'shadowplane.mjs');

/** A started role: its process, the JSON line it printed when ready, and a way to stop it. */
export interface RoleProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** the `{"event":"listening",...}` line the role printed when ready */
  readonly ready: Record<string, unknown>;
  /** SIGTERM, then SIGKILL after `graceMs` (default 10 s); resolves when the process has exited */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL now */
  kill(): Promise<void>;
}

/**
 * Starts and tracks the processes of a local Shadowplane; `stopAll` ends every one of them
 * (newest first), so nothing outlives the run — also on Ctrl-C when `installSignalHandlers` is
 * used.
 */
export class ProcessGroup {
  private readonly procs: RoleProcess[] = [];
  private readonly logs: WriteStream[] = [];
  private readonly cleanups: (() => Promise<void>)[] = [];

  constructor(private readonly logDir: string | null) {}

  /**
   * Spawns `shadowplane <role> ...args` with `env` added to this process's environment and waits
   * for its `{"event":"listening"}` line on stdout.
   * @throws Error when the process exits or stays silent for `readyTimeoutMs` (default 60 s);
   *   the message carries the tail of its stderr
   */
  async startRole(
    name: string,
    role: string,
    args: string[],
    env: Record<string, string>,
    readyTimeoutMs = 60_000,
  ): Promise<RoleProcess> {
    const child = spawn(process.execPath, [SHADOWPLANE_ENTRY, role, ...args], {
      cwd: STACK_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log = this.logDir ? createWriteStream(join(this.logDir, `${name}.log`)) : null;
    if (log) this.logs.push(log);
    let stderrTail = '';
    child.stderr!.on('data', (d: Buffer) => {
      log?.write(d);
      stderrTail = (stderrTail + d.toString()).slice(-4000);
    });
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${name} did not report ready within ${readyTimeoutMs} ms:\n${stderrTail}`)),
        readyTimeoutMs,
      );
      const rl = createInterface({ input: child.stdout! });
      rl.on('line', (line) => {
        log?.write(`${line}\n`);
        try {
          const msg = JSON.parse(line) as Record<string, unknown>;
          if (msg.event === 'listening' || msg.event === 'ready') {
            clearTimeout(timer);
            resolve(msg);
          }
        } catch {
          /* not a JSON line */
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${name} exited (${code ?? signal}) before it was ready:\n${stderrTail}`));
      });
    });
    const proc: RoleProcess = {
      name,
      child,
      ready,
      async stop(graceMs = 10_000) {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(t);
      },
      async kill() {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGKILL');
        await exited;
      },
    };
    this.procs.push(proc);
    return proc;
  }

  /** Registers extra cleanup (e.g. stopping nats-server, removing temp dirs); run after the roles stop. */
  onStop(fn: () => Promise<void>): void {
    this.cleanups.push(fn);
  }

  /** Stops every role (newest first, each with SIGTERM then SIGKILL) and runs the cleanups. */
  async stopAll(): Promise<void> {
    for (const p of this.procs.splice(0).reverse()) await p.stop().catch(() => p.kill());
    for (const fn of this.cleanups.splice(0).reverse()) await fn().catch(() => undefined);
    for (const l of this.logs.splice(0)) l.end();
  }

  /** PIDs of every role still running. */
  pids(): number[] {
    return this.procs.filter((p) => p.child.exitCode === null && p.child.signalCode === null).map((p) => p.child.pid!);
  }
}
