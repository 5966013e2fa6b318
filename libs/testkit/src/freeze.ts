import { readdirSync, readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';

/**
 * Freezes a child process with SIGSTOP and resolves once every one of its threads is stopped.
 *
 * `kill(SIGSTOP)` returns before the process stops: the kernel starts the group stop only when one
 * of its threads takes the signal, and until then the others run on. On a loaded machine a
 * "frozen" nats-server still answered a new connection 1–3 ms after the signal (18 of 100 tries
 * with both CPUs busy). Tests that freeze a server to make it unresponsive wait here.
 * Linux only (reads `/proc/<pid>/task/<tid>/stat`, state `T`).
 * @throws Error when the process has exited or is not stopped within `timeoutMs` (default 5,000)
 */
export async function freezeProcess(child: ChildProcess, timeoutMs = 5000): Promise<void> {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null)
    throw new Error('freezeProcess: the process is not running');
  child.kill('SIGSTOP');
  const deadline = Date.now() + timeoutMs;
  while (!allThreadsStopped(pid)) {
    if (Date.now() > deadline) throw new Error(`freezeProcess: pid ${pid} not stopped within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Resumes a process frozen by {@link freezeProcess} (SIGCONT; harmless when it is not stopped or gone). */
export function thawProcess(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGCONT');
}

/** True when every thread of `pid` is in state T (stopped); false while any runs or sleeps. */
function allThreadsStopped(pid: number): boolean {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    throw new Error(`freezeProcess: pid ${pid} has exited`);
  }
  for (const tid of tids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1');
    } catch {
      continue; // the thread exited
    }
    // "<tid> (<comm>) <state> …": comm may hold spaces and parentheses, so read after the last ')'
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' || state === 'X') throw new Error(`freezeProcess: pid ${pid} has exited`);
    if (state !== 'T') return false;
  }
  return true;
}
