import { describe, expect, it } from 'vitest';
import { createRng } from './rng.js';
import { sequentialLooks, sequentialSettling, type SequentialCluster } from './confidence-sequence.js';

const S = { alpha: 0.025, marginPp: 5, minSavings: 0.2 };
const cl = (delta: number, weight = 1, inc = 0.001, cand = 0.0003): SequentialCluster => ({
  weight,
  delta,
  costIncumbentUsd: inc * weight,
  costCandidateUsd: cand * weight,
});
const every = (n: number, step: number): number[] =>
  Array.from({ length: Math.floor(n / step) }, (_, i) => (i + 1) * step);

describe('sequentialLooks', () => {
  it('tiny n never settles below the minimum clusters, whatever the data', () => {
    const r = sequentialLooks([cl(0), cl(0), cl(0), cl(-1), cl(-1)], [1, 3, 5], S);
    expect(r.settledAt).toBeNull();
    expect(r.looks.map((l) => l.decision)).toEqual(['continue', 'continue', 'continue']);
    expect(r.looks[0]!.delta).toEqual({ lower: -1, upper: 1 });
  });

  it('zero discordance among 20 pairs does not pass a 5 pp margin (all-equal is not proof)', () => {
    const r = sequentialLooks(
      Array.from({ length: 20 }, () => cl(0)),
      every(20, 4),
      S,
    );
    expect(r.settledAt).toBeNull();
    const last = r.looks.at(-1)!;
    expect(last.delta.lower).toBeLessThan(-0.05);
    expect(last.delta.upper).toBeGreaterThan(0);
  });

  it('all-equal pairs eventually pass, and the bounds only tighten from look to look', () => {
    const r = sequentialLooks(
      Array.from({ length: 400 }, () => cl(0)),
      every(400, 20),
      S,
    );
    expect(r.settledAt).not.toBeNull();
    expect(r.looks[r.settledAt!]!.decision).toBe('pass');
    for (let i = 1; i < r.looks.length; i++) {
      expect(r.looks[i]!.delta.lower).toBeGreaterThanOrEqual(r.looks[i - 1]!.delta.lower);
      expect(r.looks[i]!.delta.upper).toBeLessThanOrEqual(r.looks[i - 1]!.delta.upper);
    }
    // once settled, later looks keep the decision
    expect(r.looks.slice(r.settledAt!).every((l) => l.decision === 'pass')).toBe(true);
  });

  it('a clearly worse candidate (−34 pp) fails within a few batches', () => {
    const rng = createRng(3);
    const xs = Array.from({ length: 500 }, () => {
      const u = rng();
      return cl(u < 0.37 ? -1 : u < 0.4 ? 1 : 0);
    });
    const r = sequentialLooks(xs, every(500, 25), S);
    expect(r.settledAt).not.toBeNull();
    expect(r.looks[r.settledAt!]!.decision).toBe('fail');
    expect(r.looks[r.settledAt!]!.clusters).toBeLessThanOrEqual(150);
    expect(r.looks[r.settledAt!]!.delta.upper).toBeLessThan(-0.05);
  });

  it('a candidate that costs more than min_savings allows is futile', () => {
    const xs = Array.from({ length: 300 }, (_, i) => cl(i % 2 ? 0.1 : -0.1, 1, 0.001, 0.00095));
    const r = sequentialLooks(xs, every(300, 10), S);
    expect(r.looks[r.settledAt!]!.decision).toBe('futile');
    expect(r.looks[r.settledAt!]!.savings!.upper).toBeLessThan(0.2);
  });

  it('weights: the estimand is the weighted delta, and an outsized weight is clipped and counted', () => {
    // light clusters are equal, heavy ones 30 pp worse: the weighted delta is −20 pp
    const xs: SequentialCluster[] = [];
    for (let i = 0; i < 300; i++) xs.push(i % 3 === 1 ? cl(0, 1) : cl(-0.3, 4));
    const r = sequentialLooks(xs, every(300, 30), S);
    expect(r.looks[r.settledAt!]!.decision).toBe('fail');
    expect(r.clipped.quality).toBe(0);
    const big = sequentialLooks([cl(0, 1), cl(0, 1), cl(0, 50), ...Array.from({ length: 10 }, () => cl(0))], [13], S);
    expect(big.clipped.quality).toBe(1);
  });

  it('clusters: the unit is the cluster, so the same items in one cluster carry less evidence than as singletons', () => {
    const singles = Array.from({ length: 200 }, (_, i) => cl(i % 10 === 0 ? -1 : 0));
    const clustered = Array.from({ length: 50 }, (_, i) => cl(i % 10 === 0 ? -1 : 0, 4));
    const a = sequentialLooks(singles, [200], S).looks[0]!;
    const b = sequentialLooks(clustered, [50], S).looks[0]!;
    expect(b.delta.upper - b.delta.lower).toBeGreaterThan(a.delta.upper - a.delta.lower);
  });

  it('a smaller α gives a wider sequence (on the side the bets are tuned for)', () => {
    const xs = Array.from({ length: 300 }, (_, i) => cl(i % 10 === 0 ? -1 : i % 10 === 5 ? 1 : 0));
    const a = sequentialLooks(xs, [300], S).looks[0]!;
    const b = sequentialLooks(xs, [300], { ...S, alpha: 0.0025 }).looks[0]!;
    expect(a.delta.lower).toBeGreaterThan(-1);
    expect(b.delta.lower).toBeLessThan(a.delta.lower);
    // the upper side bets on D < −margin; an equal candidate gives it nothing to bet on
    expect(a.delta.upper).toBe(1);
  });

  it('hard failures fail at the first look from the minimum on', () => {
    const r = sequentialLooks(
      Array.from({ length: 16 }, () => cl(0)),
      [4, 8, 16],
      { ...S, hardFail: true },
    );
    expect(r.settledAt).toBe(1);
    expect(r.looks[1]!.decision).toBe('fail');
  });

  it('refuses bad input with a RangeError', () => {
    expect(() => sequentialLooks([cl(0)], [1], { ...S, alpha: 0.7 })).toThrow(RangeError);
    expect(() => sequentialLooks([cl(2)], [1], S)).toThrow(RangeError);
    expect(() => sequentialLooks([cl(0, 0)], [1], S)).toThrow(RangeError);
    expect(() => sequentialLooks([cl(0), cl(0)], [2, 1], S)).toThrow(RangeError);
    expect(() => sequentialLooks([cl(0)], [2], S)).toThrow(RangeError);
  });
});

describe('sequentialSettling', () => {
  it('settles at the same look with the same decision as sequentialLooks on 600 random campaigns', () => {
    const rng = createRng(20261202);
    let settledCount = 0;
    const seen = new Set<string>();
    for (let c = 0; c < 600; c++) {
      const n = 10 + Math.floor(rng() * 190);
      const delta = [-0.3, -0.05, 0, 0.05][c % 4]!;
      const graded = c % 3 === 0;
      const clusters = Array.from({ length: n }, () => {
        const u = rng();
        const d = graded
          ? Math.max(-1, Math.min(1, delta + (rng() - 0.5) * 0.6))
          : u < 0.3 + delta
            ? 1
            : u < 0.6
              ? -1
              : 0;
        const w = c % 5 === 0 ? 1 + Math.floor(rng() * 4) : 1;
        const ratio = [0.3, 0.85, 0.7][c % 3]!;
        return cl(d, w, 0.001, 0.001 * ratio);
      });
      const looks = every(n, [5, 10, 25][c % 3]!);
      if (looks.length === 0) continue;
      const settings = { ...S, minSavings: [0.2, 0.2, -1][c % 3]! };
      const full = sequentialLooks(clusters, looks, settings);
      const fast = sequentialSettling(clusters, looks, settings);
      expect(fast.settledAt).toBe(full.settledAt);
      expect(fast.decision).toBe(full.settledAt === null ? 'continue' : full.looks[full.settledAt]!.decision);
      if (full.settledAt !== null) settledCount++;
      seen.add(fast.decision);
    }
    // the comparison covers every outcome, not only "continue"
    expect(settledCount).toBeGreaterThan(150);
    expect([...seen].sort()).toEqual(['continue', 'fail', 'futile', 'pass']);
  });

  it('refuses hardFail (the fast path covers data-driven decisions only)', () => {
    expect(() => sequentialSettling([cl(0)], [1], { ...S, hardFail: true })).toThrow(RangeError);
  });
});
