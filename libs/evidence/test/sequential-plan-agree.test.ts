/**
 * The dry run's group-sequential spend (libs/evidence `groupSequentialSettling`: a Wald z of the
 * running mean difference against the planned boundaries) against the rule a campaign really runs
 * (`groupSequentialComparison`: the score interval at each look's tail, the savings interval, the
 * same futility rule), on the same simulated singleton items. The dry run is an estimate before
 * any pair exists, so it needs only to agree on the expected spend, not call for call.
 * Seeded and deterministic.
 */
import { describe, expect, it } from 'vitest';
import { Xoshiro128ss, intervalLevel, spendingBoundaries } from '@shadowplane/stats';
import { groupSequentialSettling } from '../src/sequential-plan.js';
import { groupSequentialComparison, plannedLooks } from '../src/group-sequential.js';
import type { PairRow } from '../src/compare.js';

const ITEMS = 400;
const BATCH = 25;
const MARGIN_PP = 5;
const CAMPAIGNS = 120;

describe('dry-run group-sequential spend vs the rule a campaign runs', () => {
  const { alphaAdjusted } = intervalLevel({ alphaOneSided: 0.05, candidates: 1, runIndex: 1 });
  const looks = plannedLooks(ITEMS, BATCH);
  const critical = spendingBoundaries(
    looks.map((n) => n / ITEMS),
    alphaAdjusted,
  ).critical;
  // discordance π (the power plan's prior spread²) × true quality gap δ, as the dry run's scenarios
  const cells: [number, number][] = [
    [0.2, -0.2],
    [0.2, -0.05],
    [0.2, 0],
    [0.5, -0.2],
    [0.5, -0.05],
    [0.5, 0],
  ];
  it.each(cells)(
    'discordance %f, δ = %f: expected paid items within 6 percent, the same settling look in most campaigns',
    (pi, delta) => {
      const rng = new Xoshiro128ss(Math.round(1000 * pi) + Math.round(1000 * delta) + 11);
      let sameLook = 0;
      let planItems = 0;
      let ruleItems = 0;
      const decisions: Record<string, number> = {};
      for (let c = 0; c < CAMPAIGNS; c++) {
        const d: number[] = [];
        const rows: PairRow[] = [];
        for (let i = 0; i < ITEMS; i++) {
          const u = rng.nextFloat();
          const x = u < (pi + delta) / 2 ? 1 : u < pi ? -1 : 0;
          const qInc = x === -1 ? 1 : x === 1 ? 0 : rng.nextFloat() < 0.5 ? 1 : 0;
          d.push(x);
          // costs vary a little: with constant costs the savings interval is degenerate and never passes
          rows.push({
            item_hash: `${c}-${i}`,
            cluster: `${c}-${i}`,
            simhash: '0000000000000000',
            weight: 1,
            q_inc: qInc,
            q_cand: qInc + x,
            cost_inc_usd: 1 + 0.2 * rng.nextFloat(),
            cost_cand_usd: 0.3 * (1 + 0.2 * rng.nextFloat()),
            obs_inc: `i${c}-${i}`,
            obs_cand: `c${c}-${i}`,
          });
        }
        const plan = groupSequentialSettling(d, looks, critical, ITEMS, MARGIN_PP / 100, true) ?? ITEMS;
        const rule = groupSequentialComparison(rows, {
          alpha: 0.05,
          candidates_k: 1,
          run_index: 1,
          margin_pp: MARGIN_PP,
          min_savings: 0.2,
          hard_gate_failures: 0,
          cost_ceiling_breaches: 0,
          batch_items: BATCH,
          max_items: ITEMS,
        });
        decisions[rule.decision] = (decisions[rule.decision] ?? 0) + 1;
        if (plan === rule.items_used) sameLook++;
        planItems += plan;
        ruleItems += rule.items_used;
      }
      console.log(
        `[dry-run gs] π ${pi} δ ${delta}: same look ${sameLook}/${CAMPAIGNS}, mean items dry run ${(planItems / CAMPAIGNS).toFixed(1)}, rule ${(ruleItems / CAMPAIGNS).toFixed(1)}`,
        decisions,
      );
      expect(Math.abs(planItems / ruleItems - 1)).toBeLessThan(0.06);
      expect(sameLook / CAMPAIGNS).toBeGreaterThan(0.65);
      // the rule really decides in these cells (the comparison is not vacuous)
      expect((decisions['pass'] ?? 0) + (decisions['fail'] ?? 0) + (decisions['futile'] ?? 0)).toBeGreaterThan(
        CAMPAIGNS / 2,
      );
    },
    120_000,
  );
});
