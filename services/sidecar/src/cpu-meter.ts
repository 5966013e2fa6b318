import { readFileSync } from 'node:fs';

/**
 * CPU time of the calling thread, ms, or null where it cannot be read. Node ≥ 23.9 has
 * `process.threadCpuUsage()` (µs); on Linux otherwise `/proc/thread-self/stat` fields 14–15
 * (utime, stime, in USER_HZ = 100 ticks/s: 10 ms resolution). Source: proc(5).
 */
export function threadCpuMs(): number | null {
  const p = process as unknown as { threadCpuUsage?: () => { user: number; system: number } };
  if (typeof p.threadCpuUsage === 'function') {
    const u = p.threadCpuUsage();
    return (u.user + u.system) / 1000;
  }
  try {
    const f = readFileSync('/proc/thread-self/stat', 'latin1');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) * 10;
  } catch {
    return null;
  }
}

/**
 * A CPU budget for work on the current thread: `over()` is true once the thread has spent more
 * than `budgetMs` of CPU since the meter was made. A thread cannot use more CPU than wall time, so
 * the thread's CPU is read only after `budgetMs` of wall time has passed (and then at most every
 * `recheckMs`): cheap while under budget, and a preempted thread on a busy machine is not
 * charged for the time it waited. Where thread CPU is unreadable the meter counts wall time
 * (`measures` says which).
 */
export function cpuBudget(budgetMs: number, recheckMs = 5): { over(): boolean; measures: 'cpu' | 'wall' } {
  const wall0 = performance.now();
  const cpu0 = threadCpuMs();
  let nextRead = wall0 + budgetMs;
  return {
    measures: cpu0 === null ? 'wall' : 'cpu',
    over() {
      const now = performance.now();
      if (now < nextRead) return false;
      if (cpu0 === null) return true;
      const used = (threadCpuMs() ?? Infinity) - cpu0;
      if (used > budgetMs) return true;
      // not over yet: the earliest it can be is (budget − used) of wall from now
      nextRead = now + Math.max(recheckMs, budgetMs - used);
      return false;
    },
  };
}
