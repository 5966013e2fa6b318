/**
 * Error control of the sequential stopping rule by simulation, reduced (the full table: `make
 * bench-sequential`, written to docs/statistics.md). Seeded and deterministic.
 *
 * Generator: tier-sim.ts (difficulty-correlated tiers, near-duplicate clusters, weights). A
 * candidate exactly at the margin (true δ = −5 pp) is monitored after every batch of 10 paired
 * items up to 150 clusters with sequentialComparison (α = 0.05 one-sided, K candidates,
 * run r: the fixed-n rule's α/K and α-spending). Type-I = campaigns that ever pass; bound
 * α_adj + 2 binomial MC sd.
 */
import { describe, expect, it } from 'vitest';
import { intervalLevel } from '@shadowplane/stats';
import { REGIMES, mcSd, populationTruth, thetaForDelta, type TierRegime } from './tier-sim.js';
import { runSequentialCell } from './sequential-sim.js';

const MARGIN_PP = 5;
const ALPHA = 0.05;
const regime = (name: string): TierRegime => REGIMES.find((r) => r.name === name)!;

describe('sequential stopping (reduced): type-I at the margin under monitoring after every batch', () => {
  const cases: [string, number, number][] = [
    ['binary, near-deterministic, singletons', 1, 1],
    ['binary, noisy, weighted clusters', 1, 1],
    ['graded, moderate noise, weighted clusters', 2, 1],
  ];
  it.each(cases)(
    '%s (K = %i, run %i): a candidate truly 5 pp worse passes in at most α_adj + 2 MC sd',
    (name, k, run) => {
      const r = regime(name);
      const theta = thetaForDelta(r, -MARGIN_PP / 100, 20_000);
      const truth = populationTruth(r, theta, 100_000);
      expect(Math.abs(truth.delta + MARGIN_PP / 100)).toBeLessThan(0.003);
      const { alphaAdjusted } = intervalLevel({ alphaOneSided: ALPHA, candidates: k, runIndex: run });
      const n = 250;
      const c = runSequentialCell({
        regime: r,
        thetaCandidate: theta,
        maxClusters: 150,
        batchItems: 10,
        campaigns: n,
        seed: 2000 + k,
        alpha: ALPHA,
        marginPp: MARGIN_PP,
        candidatesK: k,
        runIndex: run,
        fixed: false,
      });
      console.log(
        `[sequential] ${name} K=${k}: pass ${c.seq.pass}/${n}, fail ${c.seq.fail}, futile ${c.seq.futile}, mean looks ${(c.seq.looks / n).toFixed(1)} (α_adj ${(100 * alphaAdjusted).toFixed(2)}%)`,
      );
      expect(c.seq.pass / n).toBeLessThanOrEqual(alphaAdjusted + 2 * mcSd(alphaAdjusted, n));
      // at the margin a fail is a wrong call too (the upper side runs at the same α)
      expect(c.seq.fail / n).toBeLessThanOrEqual(alphaAdjusted + 2 * mcSd(alphaAdjusted, n));
      expect(c.seq.looks / n).toBeGreaterThan(10);
    },
    180_000,
  );
});
