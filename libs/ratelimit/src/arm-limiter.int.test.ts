import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '@shadowplane/testkit';
import { closeRedisConnections, createArmLimiter, limiterSettings } from './index.js';

/**
 * A start is recorded when its function runs, a little after the limiter admitted it (the
 * admission's promise resolves first; on a loaded machine the clock can tick in between), so the
 * windows are checked this much shorter than the limiter's: a limiter that admitted too much
 * early would still show, an admission recorded 1 ms late would not read as a breach.
 */
const RECORD_SKEW_MS = 50;

/** Largest number of events (or weight) inside any half-open window (t − w, t] ending at an event. */
function maxInWindow(events: { at: number; w: number }[], windowMs: number): number {
  const s = [...events].sort((a, b) => a.at - b.at);
  let best = 0;
  for (let i = 0; i < s.length; i++) {
    let sum = 0;
    for (let j = i; j >= 0 && s[j]!.at > s[i]!.at - windowMs; j--) sum += s[j]!.w;
    best = Math.max(best, sum);
  }
  return best;
}

describe('limiterSettings', () => {
  it('spaces starts so that 1,200 RPM allows one start per 55 ms (50 ms + 10% margin)', () => {
    expect(limiterSettings({ rpm: 1200 }).minTimeMs).toBe(55);
  });
  it('keeps TPM as a sliding token window of the configured length', () => {
    expect(limiterSettings({ tpm: 60_000 }).tokenWindow).toEqual({ tpm: 60_000, windowMs: 60_000 });
    expect(limiterSettings({ rpm: 10 }).tokenWindow).toBeNull();
  });
});

describe('createArmLimiter (this process)', () => {
  it('never lets more than rpm starts into any sliding window', async () => {
    const l = createArmLimiter({ id: 'rpm-local', rpm: 10, windowMs: 300 });
    const starts: { at: number; w: number }[] = [];
    await Promise.all(
      Array.from({ length: 25 }, () => l.schedule(1, async () => void starts.push({ at: Date.now(), w: 1 }))),
    );
    expect(starts).toHaveLength(25);
    expect(maxInWindow(starts, 300 - RECORD_SKEW_MS)).toBeLessThanOrEqual(10);
    await l.close();
  });

  it('never lets more than tpm tokens into any sliding window', async () => {
    const l = createArmLimiter({ id: 'tpm-local', tpm: 600, windowMs: 600 });
    const starts: { at: number; w: number }[] = [];
    await Promise.all(
      Array.from({ length: 30 }, () => l.schedule(40, async () => void starts.push({ at: Date.now(), w: 40 }))),
    );
    expect(starts).toHaveLength(30); // 1,200 tokens: needs more than one window
    expect(maxInWindow(starts, 600 - RECORD_SKEW_MS)).toBeLessThanOrEqual(600);
    const span = Math.max(...starts.map((s) => s.at)) - Math.min(...starts.map((s) => s.at));
    expect(span).toBeGreaterThanOrEqual(600); // the first start leaves the half-open window exactly 600 ms later
    await l.close();
  });

  it('admits calls on their bound: five 400-token calls under TPM 1000 never put more than 1000 in a window', async () => {
    // the case: each call's full bound counts (no cap at a bucket size), actual usage unreported
    const l = createArmLimiter({ id: 'tpm-bound', tpm: 1000, windowMs: 1500 });
    const starts: { at: number; w: number }[] = [];
    await Promise.all(
      Array.from({ length: 5 }, () => l.schedule(400, async () => void starts.push({ at: Date.now(), w: 400 }))),
    );
    expect(starts).toHaveLength(5);
    expect(maxInWindow(starts, 1500 - RECORD_SKEW_MS)).toBeLessThanOrEqual(1000); // two per window
    const at = starts.map((s) => s.at).sort((a, b) => a - b);
    expect(at[4]! - at[0]!).toBeGreaterThanOrEqual(2 * 1500 - 50); // five need three windows
    await l.close();
  });

  it('corrects the window to actual usage after each call, releasing the unused bound', async () => {
    // bound 400, actual 100: after correction four calls fit where the bound alone allowed two
    const l = createArmLimiter({ id: 'tpm-actual', tpm: 1000, windowMs: 60_000 });
    const t0 = Date.now();
    for (let i = 0; i < 7; i++)
      await l.schedule(
        400,
        async () => ({ used: 100 }),
        (r) => r.used,
      );
    // 7 sequential calls: 6·100 + 400 ≤ 1000 each time, so none waits for the 60 s window
    expect(Date.now() - t0).toBeLessThan(30_000);
    // a call whose actual usage is unknown keeps its bound counted: 700 + 400 > 1000 → must wait
    let started = false;
    const p = l.schedule(400, async () => void (started = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(started).toBe(false);
    await l.close();
    await p.catch(() => undefined);
  });

  it('caps concurrency', async () => {
    const l = createArmLimiter({ id: 'conc', concurrency: 3 });
    let now = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 12 }, () =>
        l.schedule(1, async () => {
          now++;
          peak = Math.max(peak, now);
          await new Promise((r) => setTimeout(r, 15));
          now--;
        }),
      ),
    );
    expect(peak).toBe(3);
    await l.close();
  });

  it('pauseFor delays jobs of that limiter only', async () => {
    const a = createArmLimiter({ id: 'pa' });
    const b = createArmLimiter({ id: 'pb' });
    const t0 = Date.now();
    a.pauseFor(250);
    const [ta, tb] = await Promise.all([
      a.schedule(1, async () => Date.now() - t0),
      b.schedule(1, async () => Date.now() - t0),
    ]);
    expect(ta).toBeGreaterThanOrEqual(245);
    expect(tb).toBeLessThan(100);
    expect(a.pausedForMs()).toBe(0);
    await a.close();
    await b.close();
  });
});

describe('createArmLimiter (cluster-wide through Redis)', () => {
  let redis: RedisServerHandle;
  let url: string;
  beforeAll(async () => {
    redis = await startRedisServer();
    url = redis.url;
  });
  afterAll(async () => {
    await closeRedisConnections();
    await redis?.stop();
  });

  it('two limiters with the same id share one RPM limit', async () => {
    const id = `shared-${Date.now()}`;
    const l1 = createArmLimiter({ id, rpm: 10, windowMs: 2000, redisUrl: url });
    const l2 = createArmLimiter({ id, rpm: 10, windowMs: 2000, redisUrl: url });
    const starts: { at: number; w: number }[] = [];
    const job = async () => void starts.push({ at: Date.now(), w: 1 });
    await Promise.all([
      ...Array.from({ length: 6 }, () => l1.schedule(1, job)),
      ...Array.from({ length: 6 }, () => l2.schedule(1, job)),
    ]);
    expect(starts).toHaveLength(12);
    // Starts are observed in the job callbacks, which a loaded machine can delay and bunch by a few
    // hundred ms, so the window checked is 400 ms shorter than the limiter's. Shared, the 12 starts
    // are ≥ 220 ms apart (at most 8 fit in 1.6 s); two unshared limiters would start all 12 within ~1.1 s.
    expect(maxInWindow(starts, 1600)).toBeLessThanOrEqual(10);
    await l1.close();
    await l2.close();
  });

  it('two limiters with the same id share one TPM window, corrected to actual usage', async () => {
    const id = `shared-tpm-${Date.now()}`;
    const l1 = createArmLimiter({ id, tpm: 1000, windowMs: 2000, redisUrl: url });
    const l2 = createArmLimiter({ id, tpm: 1000, windowMs: 2000, redisUrl: url });
    const starts: { at: number; w: number }[] = [];
    const job = async () => void starts.push({ at: Date.now(), w: 400 });
    await Promise.all([
      ...Array.from({ length: 3 }, () => l1.schedule(400, job)),
      ...Array.from({ length: 2 }, () => l2.schedule(400, job)),
    ]);
    expect(starts).toHaveLength(5);
    // windows checked 400 ms shorter than the limiter's (callbacks can bunch on a loaded machine)
    expect(maxInWindow(starts, 1600)).toBeLessThanOrEqual(1000);
    const at = starts.map((s) => s.at).sort((a, b) => a - b);
    expect(at[4]! - at[0]!).toBeGreaterThanOrEqual(2 * 2000 - 100);
    // corrected to 50 actual tokens each, many calls fit one window across both processes
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, 2100)); // let the 400-token entries leave the window
    const c0 = Date.now();
    for (let i = 0; i < 6; i++)
      await (i % 2 ? l1 : l2).schedule(
        400,
        async () => 50,
        (n) => n,
      );
    expect(Date.now() - c0).toBeLessThan(1900); // 5·50 + 400 ≤ 1000: no wait for a window
    expect(c0 - t0).toBeGreaterThan(0);
    await l1.close();
    await l2.close();
  });
});
