import { describe, expect, it } from 'vitest';
import { alphaSpent, bonferroniAlpha, holm, intervalLevel } from './multiplicity.js';

describe('holm', () => {
  it('returns [] for no p-values', () => {
    expect(holm([])).toEqual([]);
  });
  it('caps adjusted values at 1 and keeps them monotone in sorted order', () => {
    // by hand: sorted 0.3(×3=0.9), 0.4(×2=0.8→max 0.9), 0.6(×1=0.6→0.9)
    holm([0.6, 0.3, 0.4]).forEach((a) => expect(a).toBeCloseTo(0.9, 15));
    // 0.5×3 = 1.5 → 1
    expect(holm([0.5, 0.9, 0.7])).toEqual([1, 1, 1]);
  });
  it('never lowers a p-value', () => {
    const p = [0.001, 0.2, 0.03, 0.04, 0.5];
    holm(p).forEach((a, i) => expect(a).toBeGreaterThanOrEqual(p[i]!));
  });
  it('throws RangeError on a p-value outside [0, 1] and names its index', () => {
    expect(() => holm([0.1, 1.2])).toThrow(/index 1/);
    expect(() => holm([Number.NaN])).toThrow(RangeError);
  });
});

describe('bonferroniAlpha', () => {
  it('divides α by the number of comparisons', () => {
    expect(bonferroniAlpha(0.05, 2)).toBe(0.025);
    expect(bonferroniAlpha(0.05, 1)).toBe(0.05);
  });
  it('throws RangeError on 0 comparisons or α outside (0, 1)', () => {
    expect(() => bonferroniAlpha(0.05, 0)).toThrow(RangeError);
    expect(() => bonferroniAlpha(0.05, 1.5)).toThrow(RangeError);
    expect(() => bonferroniAlpha(1, 2)).toThrow(RangeError);
  });
});

describe('alphaSpent', () => {
  it('spends α·6/π² on the first run and a quarter of that on the second', () => {
    // 6/π² = 0.6079271018540267 (Basel problem)
    expect(alphaSpent(0.05, 1)).toBeCloseTo(0.05 * 0.6079271018540267, 15);
    expect(alphaSpent(0.05, 2)).toBeCloseTo((0.05 * 0.6079271018540267) / 4, 15);
  });
  it('sums to at most α over any number of runs (Σ1/r² = π²/6)', () => {
    let total = 0;
    for (let r = 1; r <= 100_000; r++) total += alphaSpent(0.05, r);
    expect(total).toBeLessThan(0.05);
    expect(total).toBeGreaterThan(0.05 * (1 - 1e-5));
  });
  it('throws RangeError for run 0 or a fractional run', () => {
    expect(() => alphaSpent(0.05, 0)).toThrow(/runIndex/);
    expect(() => alphaSpent(0.05, 1.5)).toThrow(RangeError);
  });
});

describe('intervalLevel', () => {
  it('gives 1 − 2α for one candidate without α-spending (α = 0.05 → 0.90)', () => {
    expect(intervalLevel({ alphaOneSided: 0.05, candidates: 1, runIndex: null }).level).toBeCloseTo(0.9, 15);
  });
  it('Bonferroni-adjusts for two candidates and spends α for run 1 by default', () => {
    const r = intervalLevel({ alphaOneSided: 0.05, candidates: 2 });
    expect(r.alphaAdjusted).toBeCloseTo(0.025 * 0.6079271018540267, 15);
    expect(r.level).toBeCloseTo(1 - 2 * 0.025 * 0.6079271018540267, 15);
  });
  it('throws RangeError for α ≥ 0.5 (a one-sided α that large has no two-sided interval)', () => {
    expect(() => intervalLevel({ alphaOneSided: 0.5, candidates: 1 })).toThrow(RangeError);
  });
});
