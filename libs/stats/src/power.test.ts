import { describe, expect, it } from 'vitest';
import { CONSERVATIVE_SD_DIFF, mdePpPaired, powerPlan, powerPlanFromPairs, sdOfDifferences } from './power.js';

// z₀.₉₅ + z₀.₈ = 1.6448536269514722 + 0.8416212335729143 (scipy.stats.norm.ppf; stats.json norm_ppf)
const Z_SUM = 1.6448536269514722 + 0.8416212335729143;

describe('mdePpPaired', () => {
  it('is 0 when the differences have no spread', () => {
    expect(mdePpPaired({ sdDiff: 0, clusters: 10, alphaOneSided: 0.05, power: 0.8 })).toBe(0);
  });
  it('halves when the clusters quadruple', () => {
    const a = mdePpPaired({ sdDiff: 0.4, clusters: 100, alphaOneSided: 0.05, power: 0.8 });
    const b = mdePpPaired({ sdDiff: 0.4, clusters: 400, alphaOneSided: 0.05, power: 0.8 });
    expect(a / b).toBeCloseTo(2, 12);
    expect(a).toBeCloseTo((100 * Z_SUM * 0.4) / 10, 12);
  });
  it.each([
    [{ sdDiff: -1, clusters: 10, alphaOneSided: 0.05, power: 0.8 }, /sdDiff/],
    [{ sdDiff: Number.NaN, clusters: 10, alphaOneSided: 0.05, power: 0.8 }, /sdDiff/],
    [{ sdDiff: 0.5, clusters: 0, alphaOneSided: 0.05, power: 0.8 }, /clusters/],
    [{ sdDiff: 0.5, clusters: 10, alphaOneSided: 0, power: 0.8 }, /alphaOneSided/],
    [{ sdDiff: 0.5, clusters: 10, alphaOneSided: 0.05, power: 1 }, /power/],
  ])('throws RangeError on %o', (o, msg) => {
    expect(() => mdePpPaired(o)).toThrow(RangeError);
    expect(() => mdePpPaired(o)).toThrow(msg);
  });
});

describe('powerPlan', () => {
  it('uses the conservative prior √0.5 without A-A pairs (vector: 100 clusters → 17.582 pp)', () => {
    const p = powerPlan({ clusters: 100, alphaOneSided: 0.05, marginPp: 2 });
    expect(p.sdSource).toBe('conservative_prior');
    expect(p.sdDiff).toBe(CONSERVATIVE_SD_DIFF);
    expect(p.mdePp).toBeCloseTo(17.582032351266687, 10);
    expect(p.powered).toBe(false);
    // need 100·Z·√0.5/√n ≤ 2 → n ≥ (100·Z·√0.5/2)² = (17.582032351266687·10/2)² = 7728.2…
    expect(p.clustersNeededForMargin).toBe(Math.ceil(((17.582032351266687 * 10) / 2) ** 2));
    expect(p.clustersNeededForMargin).toBe(7729);
  });
  it('uses a measured A-A sd and reports it as aa_pairs', () => {
    const p = powerPlan({ clusters: 500, sdDiff: 0.3, alphaOneSided: 0.05, power: 0.8, marginPp: 5 });
    expect(p).toMatchObject({ sdSource: 'aa_pairs', sdDiff: 0.3, powered: true });
    expect(p.mdePp).toBeCloseTo(3.3359560874861014, 10); // stats.json mde_pp_paired
  });
  it('falls back to the prior for an A-A sd of 0, null or NaN (determinism is not zero variance)', () => {
    for (const sdDiff of [0, null, Number.NaN, -0.1])
      expect(powerPlan({ clusters: 50, sdDiff, alphaOneSided: 0.05, marginPp: 5 }).sdSource).toBe('conservative_prior');
  });
  it('is powered exactly when MDE ≤ margin, and clustersNeededForMargin reaches it', () => {
    const p = powerPlan({ clusters: 100, sdDiff: 0.2, alphaOneSided: 0.05, marginPp: 3 });
    const need = p.clustersNeededForMargin!;
    expect(powerPlan({ clusters: need, sdDiff: 0.2, alphaOneSided: 0.05, marginPp: 3 }).powered).toBe(true);
    expect(powerPlan({ clusters: need - 1, sdDiff: 0.2, alphaOneSided: 0.05, marginPp: 3 }).powered).toBe(false);
  });
  it('returns clustersNeededForMargin null for a zero margin (never powered)', () => {
    const p = powerPlan({ clusters: 1000, alphaOneSided: 0.05, marginPp: 0 });
    expect(p.clustersNeededForMargin).toBeNull();
    expect(p.powered).toBe(false);
  });
  it('throws RangeError on a negative margin', () => {
    expect(() => powerPlan({ clusters: 10, alphaOneSided: 0.05, marginPp: -1 })).toThrow(/marginPp/);
  });
});

describe('sdOfDifferences', () => {
  it('is the n−1 sample sd (by hand: [1, 0, 0, −1] → √(2/3))', () => {
    expect(sdOfDifferences([1, 0, 0, -1])).toBeCloseTo(Math.sqrt(2 / 3), 15);
    expect(sdOfDifferences([2, 4, 4, 4, 5, 5, 7, 9])).toBeCloseTo(Math.sqrt(32 / 7), 14);
  });
  it('stays accurate with a large offset (one-pass stability)', () => {
    expect(sdOfDifferences([1e9 + 1, 1e9 + 2, 1e9 + 3])).toBeCloseTo(1, 9);
  });
  it('throws RangeError with fewer than two values or a non-finite value', () => {
    expect(() => sdOfDifferences([])).toThrow(/at least 2/);
    expect(() => sdOfDifferences([0.5])).toThrow(RangeError);
    expect(() => sdOfDifferences([0, Number.NaN])).toThrow(/index 1/);
  });
});

describe('powerPlanFromPairs', () => {
  const base = { alphaOneSided: 0.05, marginPp: 5 };
  it('before enough pairs uses the prior √0.5, inflated by √deff for unequal cluster weights', () => {
    const p = powerPlanFromPairs({ ...base, clusters: 100, observed: { sd: 0.1, clusters: 7 }, designEffect: 1.44 });
    expect(p.sdSource).toBe('conservative_prior');
    expect(p.sdDiff).toBeCloseTo(Math.SQRT1_2 * 1.2, 12);
    expect(p.sdObserved).toBeNull();
  });
  it('from 8 clusters uses the 90% upper confidence bound sd·√((m − 1)/χ²₀.₁,ₘ₋₁) (table: χ²₀.₁,₇ = 2.833)', () => {
    const p = powerPlanFromPairs({ ...base, clusters: 8, observed: { sd: 0.4, clusters: 8 } });
    expect(p.sdSource).toBe('paired_upper_bound');
    expect(p.sdUpperBound!).toBeCloseTo(0.4 * Math.sqrt(7 / 2.833), 3);
    expect(p.sdDiff).toBe(p.sdUpperBound);
  });
  it('an observed sd of 0 is floored at the rare-failure spread √(m(1 − m)) at the margin: no cliff', () => {
    const zero = powerPlanFromPairs({ ...base, clusters: 200, observed: { sd: 0, clusters: 200 } });
    const tiny = powerPlanFromPairs({ ...base, clusters: 200, observed: { sd: 1e-6, clusters: 200 } });
    expect(zero.sdDiff).toBeCloseTo(Math.sqrt(0.05 * 0.95), 12);
    expect(tiny.sdDiff).toBe(zero.sdDiff);
    expect(zero.mdePp).toBe(tiny.mdePp);
  });
  it('states the MDE with t quantiles (k − 1 df): larger than the normal-theory MDE at few clusters', () => {
    const p = powerPlanFromPairs({ ...base, clusters: 10, observed: { sd: 0.5, clusters: 10 } });
    expect(p.mdePp!).toBeGreaterThan(mdePpPaired({ sdDiff: p.sdDiff, clusters: 10, alphaOneSided: 0.05, power: 0.8 }));
  });
  it('clustersNeededForMargin is the least k with MDE(k) ≤ margin', () => {
    const p = powerPlanFromPairs({ ...base, clusters: 30, observed: { sd: 0.3, clusters: 30 } });
    const need = p.clustersNeededForMargin!;
    const at = (k: number) => powerPlanFromPairs({ ...base, clusters: k, observed: { sd: 0.3, clusters: 30 } });
    expect(at(need).powered).toBe(true);
    expect(at(need - 1).powered).toBe(false);
  });
  it('a near-deterministic sample (no discordance among 20) is bounded by the Wilson zero-event bound, not trusted as sd 0', () => {
    const z = 1.2815515655446004; // z₀.₉
    const p = powerPlanFromPairs({ ...base, clusters: 20, observed: { sd: 0, clusters: 20, meanSquare: 0 } });
    expect(p.sdUpperBound!).toBeCloseTo(Math.sqrt((z * z) / (20 + z * z)), 10);
  });
  it('has no MDE below 2 clusters and no clusters-needed for a zero margin', () => {
    expect(powerPlanFromPairs({ ...base, clusters: 1, observed: null }).mdePp).toBeNull();
    expect(
      powerPlanFromPairs({ ...base, marginPp: 0, clusters: 50, observed: null }).clustersNeededForMargin,
    ).toBeNull();
    expect(() => powerPlanFromPairs({ ...base, clusters: 50, observed: { sd: -1, clusters: 50 } })).toThrow(RangeError);
  });
});
