/**
 * Error control of the group-sequential stopping rule by simulation, reduced (the full table:
 * `make bench-sequential`, written to docs/statistics.md). Seeded and deterministic.
 *
 * Generator: tier-sim.ts (difficulty-correlated tiers, near-duplicate clusters, weights). A
 * candidate exactly at the margin (true δ = −5 pp) is looked at at the planned looks, every 10
 * paired items up to the campaign's items (its max_items, 150 clusters), with
 * groupSequentialComparison (α = 0.05 one-sided, K candidates, run r: the fixed-n rule's α/K and
 * α-spending). Type-I = campaigns that pass at any planned look; bound α_adj + 2 binomial MC sd.
 * The futility rule is ignored here (it is non-binding: obeying it only removes passes), so this
 * is the efficacy boundaries' own error; the guarantee is for the planned looks only, which is
 * all this test exercises.
 */
import { describe, expect, it } from 'vitest';
import { intervalLevel } from '@shadowplane/stats';
import { REGIMES, mcSd, populationTruth, thetaForDelta, type TierRegime } from './tier-sim.js';
import { runSequentialCell } from './sequential-sim.js';

const MARGIN_PP = 5;
const ALPHA = 0.05;
const regime = (name: string): TierRegime => REGIMES.find((r) => r.name === name)!;

describe('group-sequential stopping (reduced): type-I at the margin under the planned looks', () => {
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
        seed: 3000 + k,
        alpha: ALPHA,
        marginPp: MARGIN_PP,
        candidatesK: k,
        runIndex: run,
        fixed: false,
        sequential: false,
        groupSequential: true,
        ignoreFutility: true,
      });
      console.log(
        `[group_sequential] ${name} K=${k}: pass ${c.gs.pass}/${n}, fail ${c.gs.fail}, futile ${c.gs.futile}, mean looks ${(c.gs.looks / n).toFixed(1)} (α_adj ${(100 * alphaAdjusted).toFixed(2)}%)`,
      );
      expect(c.gs.pass / n).toBeLessThanOrEqual(alphaAdjusted + 2 * mcSd(alphaAdjusted, n));
      // at the margin a fail is a wrong call too (the lower side spends the same α)
      expect(c.gs.fail / n).toBeLessThanOrEqual(alphaAdjusted + 2 * mcSd(alphaAdjusted, n));
      expect(c.gs.futile).toBe(0);
      expect(c.gs.looks / n).toBeGreaterThan(10);
    },
    180_000,
  );
});
