import { describe, expect, it } from 'vitest';
import { pairedClusterBootstrap, type PairedItem } from './bootstrap.js';
import { Xoshiro128ss } from './rng.js';

const item = (cluster: string | number, weight: number, qi: number, qc: number, xi = 1, xc = 0.5): PairedItem => ({
  cluster,
  weight,
  qIncumbent: qi,
  qCandidate: qc,
  costIncumbentUsd: xi,
  costCandidateUsd: xc,
});
const opts = { resamples: 2000, seed: 1, level: 0.9 };

describe('pairedClusterBootstrap: point estimates', () => {
  it('computes weighted D and S by hand', () => {
    // D = (2·(0−1) + 1·(1−0) + 1·(1−1)) / 4 = −0.25; S = 1 − (2·0.5 + 0.5 + 1)/(2·1 + 2 + 1) = 0.5
    const r = pairedClusterBootstrap(
      [item('a', 2, 1, 0, 1, 0.5), item('b', 1, 0, 1, 2, 0.5), item('b', 1, 1, 1, 1, 1)],
      opts,
    );
    expect(r.qualityDelta.point).toBeCloseTo(-0.25, 15);
    expect(r.costSavings!.point).toBeCloseTo(0.5, 15);
    expect(r).toMatchObject({ clusters: 2, items: 3, resamples: 2000, seed: 1, level: 0.9 });
    expect(r.costSavingsNullReason).toBeUndefined();
  });
});

describe('pairedClusterBootstrap: resampling', () => {
  it('with two clusters, the percentiles are the exact extreme draws (aa = −1, bb = 0.5, each with mass 1/4)', () => {
    // a: Σw = 2, Σw·d = −2; b: Σw = 2, Σw·d = 1. Draw aa → −1, ab → −0.25, bb → 0.5.
    const items = [item('a', 2, 1, 0), item('b', 1, 0, 1), item('b', 1, 1, 1)];
    const r = pairedClusterBootstrap(items, { resamples: 20_000, seed: 3, level: 0.9 });
    expect(r.qualityDelta.lower).toBe(-1);
    expect(r.qualityDelta.upper).toBe(0.5);
    const mid = pairedClusterBootstrap(items, { resamples: 20_000, seed: 3, level: 0.2 });
    expect(mid.qualityDelta.lower).toBe(-0.25);
    expect(mid.qualityDelta.upper).toBe(-0.25);
  });

  it('treats weight w exactly like w identical copies in the same cluster', () => {
    const weighted = [item(1, 3, 1, 0, 0.3, 0.1), item(2, 1, 0, 1), item(3, 2, 1, 1, 0.2, 0.2), item(4, 1, 0, 0)];
    const copies = [
      item(1, 1, 1, 0, 0.3, 0.1),
      item(1, 1, 1, 0, 0.3, 0.1),
      item(1, 1, 1, 0, 0.3, 0.1),
      item(2, 1, 0, 1),
      item(3, 1, 1, 1, 0.2, 0.2),
      item(3, 1, 1, 1, 0.2, 0.2),
      item(4, 1, 0, 0),
    ];
    const a = pairedClusterBootstrap(weighted, opts);
    const b = pairedClusterBootstrap(copies, opts);
    for (const k of ['point', 'lower', 'upper'] as const) {
      expect(a.qualityDelta[k]).toBeCloseTo(b.qualityDelta[k], 12);
      expect(a.costSavings![k]).toBeCloseTo(b.costSavings![k], 12);
    }
  });

  it('resamples whole clusters: 50 clusters of 10 identical items behave as 50 items, about √10 wider than 500 independent ones', () => {
    const diffs = Array.from(
      { length: 50 },
      (_, c) => (c % 5 === 0 ? [0, 1] : c % 5 === 1 ? [1, 0] : c % 5 === 2 ? [0, 1] : [1, 1]) as [number, number],
    );
    const clustered = diffs.flatMap(([qi, qc], c) => Array.from({ length: 10 }, () => item(`c${c}`, 1, qi, qc)));
    const collapsed = diffs.map(([qi, qc], c) => item(`c${c}`, 10, qi, qc));
    const independent = clustered.map((it, i) => ({ ...it, cluster: i }));
    const a = pairedClusterBootstrap(clustered, opts);
    const b = pairedClusterBootstrap(collapsed, opts);
    const c = pairedClusterBootstrap(independent, opts);
    expect(a.qualityDelta.lower).toBeCloseTo(b.qualityDelta.lower, 12);
    expect(a.qualityDelta.upper).toBeCloseTo(b.qualityDelta.upper, 12);
    const ratio = (a.qualityDelta.upper - a.qualityDelta.lower) / (c.qualityDelta.upper - c.qualityDelta.lower);
    expect(ratio).toBeGreaterThan(2.6);
    expect(ratio).toBeLessThan(3.8);
  });

  it('matches the normal-theory interval for a large independent sample (d ∈ {−1, 0, 1} with known counts)', () => {
    // 300 items d = +1, 450 d = −1, 2250 d = 0: mean −0.05, plug-in var 0.25 − 0.0025 = 0.2475,
    // SE = √(0.2475/3000) = 0.0090830, 90% half-width 1.6448536·SE = 0.0149402.
    const items: PairedItem[] = [];
    for (let i = 0; i < 3000; i++)
      items.push(
        i % 10 === 0
          ? item(i, 1, 0, 1)
          : i % 20 === 1 || i % 20 === 3 || i % 20 === 5
            ? item(i, 1, 1, 0)
            : item(i, 1, 1, 1),
      );
    const counts = items.reduce((a, it) => (a[it.qCandidate - it.qIncumbent + 1]!++, a), [0, 0, 0]);
    expect(counts).toEqual([450, 2250, 300]);
    const r = pairedClusterBootstrap(items, { resamples: 4000, seed: 11, level: 0.9 });
    expect(r.qualityDelta.point).toBeCloseTo(-0.05, 14);
    expect(Math.abs(r.qualityDelta.lower - (-0.05 - 0.0149402))).toBeLessThan(0.001);
    expect(Math.abs(r.qualityDelta.upper - (-0.05 + 0.0149402))).toBeLessThan(0.001);
  });

  it('draws clusters with the same generator as Xoshiro128ss.nextInt (checked against the C reference)', () => {
    // Candidate costs 1, 1000, 10⁶ encode the draw counts in S = 1 − (n_a + 1000·n_b + 10⁶·n_c)/3.
    const items = [item('a', 1, 1, 1, 1, 1), item('b', 1, 1, 1, 1, 1000), item('c', 1, 1, 1, 1, 1e6)];
    for (const seed of [0, 1, 42, 2 ** 40 + 3]) {
      const g = new Xoshiro128ss(seed);
      const n = [0, 0, 0];
      for (let j = 0; j < 3; j++) n[g.nextInt(3)]!++;
      const want = 1 - (n[0]! + 1000 * n[1]! + 1e6 * n[2]!) / 3;
      const r = pairedClusterBootstrap(items, { resamples: 1, seed, level: 0.5 });
      expect(r.costSavings!.lower).toBe(want);
      expect(r.costSavings!.upper).toBe(want);
    }
  });

  it('is bit-identical for the same seed and differs for another seed', () => {
    const items = Array.from({ length: 200 }, (_, i) =>
      item(i % 70, 1 + (i % 3), i % 2, (i * 7) % 3 === 0 ? 1 : 0, 0.001 * (1 + (i % 5)), 0.0004 * (1 + (i % 4))),
    );
    const a = pairedClusterBootstrap(items, opts);
    expect(pairedClusterBootstrap(items, opts)).toEqual(a);
    expect(pairedClusterBootstrap(items, { ...opts, seed: 2 }).qualityDelta.lower).not.toBe(a.qualityDelta.lower);
  });

  it('gives a zero-width interval for a single cluster (every resample is the sample)', () => {
    const r = pairedClusterBootstrap([item('only', 1, 1, 0), item('only', 2, 0, 1), item('only', 1, 1, 1, 2, 1)], opts);
    expect(r.clusters).toBe(1);
    expect(r.qualityDelta.lower).toBe(r.qualityDelta.point);
    expect(r.qualityDelta.upper).toBe(r.qualityDelta.point);
    expect(r.costSavings!.lower).toBe(r.costSavings!.point);
  });
});

describe('pairedClusterBootstrap: costs that cannot give savings', () => {
  it('returns costSavings null (zero_incumbent_cost) when the incumbent cost is 0, quality still measured', () => {
    const r = pairedClusterBootstrap([item(1, 1, 1, 0, 0, 0), item(2, 1, 0, 1, 0, 0.1)], opts);
    expect(r.costSavings).toBeNull();
    expect(r.costSavingsNullReason).toBe('zero_incumbent_cost');
    expect(r.qualityDelta.point).toBe(0);
  });
  it('returns costSavings null (cost_unknown) when any cost is NaN or null, never treating it as 0', () => {
    const r = pairedClusterBootstrap([item(1, 1, 1, 1, 0.2, Number.NaN), item(2, 1, 0, 1)], opts);
    expect(r.costSavings).toBeNull();
    expect(r.costSavingsNullReason).toBe('cost_unknown');
    const fromJson = JSON.parse(
      '{"cluster":3,"weight":1,"qIncumbent":1,"qCandidate":1,"costIncumbentUsd":null,"costCandidateUsd":0.1}',
    ) as PairedItem;
    expect(pairedClusterBootstrap([fromJson, item(4, 1, 0, 0)], opts).costSavingsNullReason).toBe('cost_unknown');
  });
  it('returns costSavings null (zero_incumbent_cost_in_resample) when a resample has no incumbent cost', () => {
    // P(a resample draws the zero-cost cluster twice) = 1/4 per resample.
    const r = pairedClusterBootstrap([item('free', 1, 1, 1, 0, 0), item('paid', 1, 1, 1, 1, 0.5)], {
      resamples: 100,
      seed: 1,
      level: 0.9,
    });
    expect(r.costSavings).toBeNull();
    expect(r.costSavingsNullReason).toBe('zero_incumbent_cost_in_resample');
  });
});

describe('pairedClusterBootstrap: invalid input', () => {
  it('throws a RangeError naming the empty input', () => {
    expect(() => pairedClusterBootstrap([], opts)).toThrow(RangeError);
    expect(() => pairedClusterBootstrap([], opts)).toThrow(/empty input/);
  });
  it.each([
    ['weight 0', item(1, 0, 1, 1), /weight/],
    ['negative weight', item(1, -1, 1, 1), /weight/],
    ['NaN weight', item(1, Number.NaN, 1, 1), /weight/],
    ['quality above 1', item(1, 1, 1.5, 1), /qIncumbent/],
    ['NaN candidate quality', item(1, 1, 1, Number.NaN), /qCandidate/],
    ['negative cost', item(1, 1, 1, 1, -0.1, 0), /costIncumbentUsd/],
    ['infinite cost', item(1, 1, 1, 1, 1, Number.POSITIVE_INFINITY), /costCandidateUsd/],
  ])('throws RangeError on %s, naming the item and field', (_n, bad, msg) => {
    expect(() => pairedClusterBootstrap([item(0, 1, 1, 1), bad], opts)).toThrow(RangeError);
    expect(() => pairedClusterBootstrap([item(0, 1, 1, 1), bad], opts)).toThrow(/item 1/);
    expect(() => pairedClusterBootstrap([item(0, 1, 1, 1), bad], opts)).toThrow(msg);
  });
  it.each([
    [{ resamples: 0, seed: 1, level: 0.9 }, /resamples/],
    [{ resamples: 2.5, seed: 1, level: 0.9 }, /resamples/],
    [{ resamples: 100, seed: 1, level: 1 }, /level/],
    [{ resamples: 100, seed: 1, level: 0 }, /level/],
    [{ resamples: 100, seed: 0.5, level: 0.9 }, /seed/],
  ])('throws RangeError on options %o', (o, msg) => {
    expect(() => pairedClusterBootstrap([item(0, 1, 1, 1)], o)).toThrow(msg);
  });
});
