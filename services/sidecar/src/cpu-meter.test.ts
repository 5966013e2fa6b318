import { describe, expect, it } from 'vitest';
import { cpuBudget, threadCpuMs } from './cpu-meter.js';

const spin = (ms: number) => {
  const until = performance.now() + ms;
  let x = 0;
  while (performance.now() < until) x++;
  return x;
};

describe('cpuBudget', () => {
  it('reads this thread’s CPU time, which grows with work', () => {
    const a = threadCpuMs();
    expect(a).not.toBeNull();
    spin(60);
    expect(threadCpuMs()! - a!).toBeGreaterThan(0);
  });

  it('is over once the thread spent the budget in CPU', () => {
    const b = cpuBudget(30);
    expect(b.measures).toBe('cpu');
    expect(b.over()).toBe(false);
    const until = performance.now() + 20_000;
    while (!b.over() && performance.now() < until) spin(1);
    expect(b.over()).toBe(true);
  });

  it('does not charge time the thread spent waiting (wall time past the budget, no CPU)', async () => {
    const b = cpuBudget(100);
    await new Promise((r) => setTimeout(r, 400)); // 400 ms of wall, ~0 of CPU on this thread
    expect(b.over()).toBe(false);
  });
});
