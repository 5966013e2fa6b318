/**
 * Calibration of the fold's verdict statistics by simulation, reduced (the full table: `npm run
 * bench:calibration`, written to docs/statistics.md). Seeded and deterministic.
 *
 * Generator: tier-sim.ts (shared item difficulty, tier-specific item effects, per-call
 * temperature, binary or graded quality, weighted near-duplicate clusters). Each campaign goes
 * through the fold's own computeComparison (hull of the percentile cluster bootstrap and the
 * score interval, run 1 of K = 1: α = 0.05·6/π² ≈ 3.04% one-sided) and comparisonPowerPlan.
 * B = 200 resamples here to keep the suite fast (the bootstrap can only widen the hull; the bench
 * uses the service's B = 2000). Bounds: binomial Monte-Carlo sd over the campaigns.
 */
import { describe, expect, it } from 'vitest';
import { intervalLevel } from '@shadowplane/stats';
import { REGIMES, mcSd, populationTruth, runCell, thetaForDelta, type TierRegime } from './tier-sim.js';

const MARGIN_PP = 5;
const ALPHA = 0.05;
const { alphaAdjusted, level } = intervalLevel({ alphaOneSided: ALPHA, candidates: 1, runIndex: 1 });
const regime = (name: string): TierRegime => REGIMES.find((r) => r.name === name)!;

describe('calibration (reduced): type-I at the margin from n = 8 up', () => {
  const cases: [string, number][] = [
    ['binary, near-deterministic, singletons', 8],
    ['binary, near-deterministic, singletons', 12],
    ['binary, near-deterministic, singletons', 20],
    ['binary, noisy, weighted clusters', 12],
    ['graded, moderate noise, weighted clusters', 40],
  ];
  it.each(cases)(
    '%s, %i clusters: a candidate truly 5 pp worse passes in at most α + 2 MC sd, and the interval covers δ',
    (name, k) => {
      const r = regime(name);
      const theta = thetaForDelta(r, -MARGIN_PP / 100, 20_000);
      const truth = populationTruth(r, theta, 100_000);
      const n = 400;
      const c = runCell({
        regime: r,
        thetaCandidate: theta,
        trueDelta: truth.delta,
        trueSdU: truth.sdU,
        clusters: k,
        campaigns: n,
        seed: 1000 + k,
        resamples: 200,
        alpha: ALPHA,
        marginPp: MARGIN_PP,
      });
      console.log(
        `[calibration] ${name} k=${k}: δ ${(100 * truth.delta).toFixed(2)}pp, pass ${c.pass}/${n}, BEAT ${c.beat}, coverage ${((100 * c.covered) / n).toFixed(1)}% (nominal ${(100 * level).toFixed(1)}%)`,
      );
      expect(Math.abs(truth.delta + MARGIN_PP / 100)).toBeLessThan(0.003);
      expect(c.pass / n).toBeLessThanOrEqual(alphaAdjusted + 2 * mcSd(alphaAdjusted, n));
      expect(c.beat).toBeLessThanOrEqual(c.pass);
      expect(c.covered / n).toBeGreaterThanOrEqual(level - 2 * mcSd(level, n));
    },
  );
});

describe('calibration (reduced): power plans that do not overclaim', () => {
  it('near-deterministic weighted clusters, 400 clusters, truly equal candidate: MDE understated by > 10% in ≤ 10% of reports, and "powered" reports pass ≥ 75%', () => {
    const r = regime('binary, near-deterministic, weighted clusters');
    const theta = thetaForDelta(r, 0, 20_000);
    const truth = populationTruth(r, theta, 100_000);
    const n = 150;
    const c = runCell({
      regime: r,
      thetaCandidate: theta,
      trueDelta: truth.delta,
      trueSdU: truth.sdU,
      clusters: 400,
      campaigns: n,
      seed: 77,
      resamples: 200,
      alpha: ALPHA,
      marginPp: MARGIN_PP,
    });
    console.log(
      `[calibration] equal candidate, 400 clusters: stated MDE ${c.meanStatedMdePp.toFixed(2)}pp vs true ${c.trueMdePp.toFixed(2)}pp, understated >10% in ${c.mdeUnder10}/${n}; powered ${c.powered}, of which passed ${c.poweredPass}; pass ${c.pass}/${n}`,
    );
    expect(c.mdeUnder10 / n).toBeLessThanOrEqual(0.1);
    expect(c.powered).toBeGreaterThan(10);
    expect(c.poweredPass / c.powered).toBeGreaterThanOrEqual(0.75);
  });
  it('near-deterministic singletons, 12 clusters: the MDE of a handful of pairs is not understated by > 10% in more than 10% of reports', () => {
    const r = regime('binary, near-deterministic, singletons');
    const theta = thetaForDelta(r, 0, 20_000);
    const truth = populationTruth(r, theta, 100_000);
    const n = 400;
    const c = runCell({
      regime: r,
      thetaCandidate: theta,
      trueDelta: truth.delta,
      trueSdU: truth.sdU,
      clusters: 12,
      campaigns: n,
      seed: 78,
      resamples: 200,
      alpha: ALPHA,
      marginPp: MARGIN_PP,
    });
    expect(c.mdeUnder10 / n).toBeLessThanOrEqual(0.1);
  });
});
