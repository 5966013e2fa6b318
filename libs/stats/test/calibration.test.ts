/**
 * Calibration of the verdict rule by simulation (docs/architecture.md "Statistics of a verdict"; issue 7 "Must
 * show"). Seeded and deterministic.
 *
 * What is simulated: see calibration-sim.ts — 200 near-duplicate clusters per campaign (1–4 items
 * each, weights 1–3), binary quality per item, strongly correlated pairs (70% of items concordant),
 * a ±10 pp cluster-level shift of the delta plus 50% copy-the-first-item near duplicates (so
 * differences are correlated within clusters and the cluster bootstrap matters), candidate ~70%
 * cheaper so savings never decide. Margin 5 pp, min savings 20%.
 *
 * The test: one-sided α = 0.05, so the bootstrap interval is two-sided at level 1 − 2α = 0.90 and
 * "lower(D) > −margin" is a one-sided α-level test of H0: δ ≤ −margin.
 * 1. Null: true δ = −margin (candidate exactly margin worse). Over 400 campaigns the pass rate
 *    must be ≤ 5% + 3·√(0.05·0.95/400) = 8.27% (binomial 3-sigma Monte Carlo slack). At δ = −margin
 *    the fail test (upper < −margin) is at its boundary too, so the fail rate has the same bound.
 * 2. Power: the MDE is computed with mdePpPaired from the design's own effective sd (the sd of the
 *    linearised per-cluster contribution, estimated from 400,000 simulated clusters at the
 *    alternative; see effectiveSdDiff) and the same 200 clusters, α = 0.05, power 0.8. True
 *    δ = −margin + MDE (non-inferior by the MDE distance). Pass rate over 400 campaigns must be
 *    ≥ 75% (nominal 80%; 75% is 2.5 binomial sd below).
 * B = 2000 resamples per campaign, as the service uses.
 */
import { describe, expect, it } from 'vitest';
import { mdePpPaired } from '@shadowplane/stats';
import { DEFAULT_DESIGN, effectiveSdDiff, runScenario } from './calibration-sim.js';

const CAMPAIGNS = 400;
const ALPHA = 0.05;
const SLACK = 3 * Math.sqrt((0.05 * 0.95) / CAMPAIGNS); // 0.0327
const SEED = 20261130;

describe('calibration by simulation (400 campaigns per scenario, B = 2000)', () => {
  const design = DEFAULT_DESIGN;
  const margin = design.marginPp / 100;

  it('null: a candidate exactly margin worse passes in at most 5% + MC slack of campaigns (and fails at most as often)', () => {
    const r = runScenario({
      design,
      delta: -margin,
      campaigns: CAMPAIGNS,
      seed: SEED,
      resamples: 2000,
      alphaOneSided: ALPHA,
    });
    console.log(
      `[calibration] null δ=-${design.marginPp}pp: pass ${r.pass}/${CAMPAIGNS} (${((100 * r.pass) / CAMPAIGNS).toFixed(1)}%), fail ${r.fail}, inconclusive ${r.inconclusive}, mean D ${r.meanPoint.toFixed(4)}`,
    );
    expect(Math.abs(r.meanPoint + margin)).toBeLessThan(0.005); // the simulation hits its target δ
    expect(r.pass / CAMPAIGNS).toBeLessThanOrEqual(0.05 + SLACK);
    expect(r.fail / CAMPAIGNS).toBeLessThanOrEqual(0.05 + SLACK);
  });

  it('power: a candidate non-inferior by the MDE passes in at least 75% of campaigns', () => {
    // MDE at the alternative's own sd: two fixed-point passes (the sd depends weakly on δ).
    let sd = effectiveSdDiff(design, -margin);
    let mdePp = mdePpPaired({ sdDiff: sd, clusters: design.clusters, alphaOneSided: ALPHA, power: 0.8 });
    sd = effectiveSdDiff(design, -margin + mdePp / 100);
    mdePp = mdePpPaired({ sdDiff: sd, clusters: design.clusters, alphaOneSided: ALPHA, power: 0.8 });
    const delta = -margin + mdePp / 100;
    const r = runScenario({
      design,
      delta,
      campaigns: CAMPAIGNS,
      seed: SEED + 1,
      resamples: 2000,
      alphaOneSided: ALPHA,
    });
    console.log(
      `[calibration] sd_eff ${sd.toFixed(4)}, MDE ${mdePp.toFixed(2)}pp, δ=${(100 * delta).toFixed(2)}pp: pass ${r.pass}/${CAMPAIGNS} (${((100 * r.pass) / CAMPAIGNS).toFixed(1)}%), fail ${r.fail}, inconclusive ${r.inconclusive}, mean D ${r.meanPoint.toFixed(4)}`,
    );
    expect(mdePp).toBeGreaterThan(1); // a meaningful distance, not a degenerate design
    expect(Math.abs(r.meanPoint - delta)).toBeLessThan(0.005);
    expect(r.pass / CAMPAIGNS).toBeGreaterThanOrEqual(0.75);
  });
});
