/**
 * Sequential vs fixed-n campaigns on the calibration generator (tier-sim.ts), for the reduced
 * error-control test (sequential.test.ts beside this file) and `bench/sequential.ts` (the table in
 * docs/statistics.md). Each simulated campaign draws up to `maxClusters` clusters in arrival order
 * (a cluster's near-duplicates arrive together), looks after every `batchItems` paired items with
 * the sequential rule of `sequentialComparison`, and — for the fixed-n arm of the comparison —
 * folds all `maxClusters` clusters with the fold's own computeComparison.
 */
import { createRng } from '@shadowplane/stats';
import { computeComparison, type PairRow } from '../src/compare.js';
import { sequentialComparison, type SequentialResult } from '../src/sequential.js';
import { groupSequentialComparison } from '../src/group-sequential.js';
import { simulateTierCampaign, type TierRegime } from './tier-sim.js';

/** Tallies of one stopping rule over a cell's campaigns. */
export interface RuleTally {
  pass: number;
  fail: number;
  futile: number;
  open: number;
  items: number;
  usd: number;
  looks: number;
}

/** Tallies of one sequential-vs-fixed cell (group_sequential too when asked). */
export interface SequentialCell {
  campaigns: number;
  seq: RuleTally;
  /** `stopping: group_sequential` with the horizon at each campaign's own item count */
  gs: RuleTally;
  fixed: { pass: number; fail: number; inconclusive: number; items: number; usd: number };
}

const rowsOf = (items: ReturnType<typeof simulateTierCampaign>): PairRow[] =>
  items.map((it, j) => ({
    item_hash: String(j).padStart(8, '0'),
    cluster: String(it.cluster).padStart(8, '0'),
    simhash: '0000000000000000',
    weight: it.weight,
    q_inc: it.qIncumbent,
    q_cand: it.qCandidate,
    cost_inc_usd: it.costIncumbentUsd,
    cost_cand_usd: it.costCandidateUsd,
    obs_inc: '',
    obs_cand: '',
  }));

/**
 * Runs `campaigns` campaigns at candidate ability θ_c. Paid items = paired items dispatched
 * (both arms); dollars = Σ incumbent + candidate cost of those items (weights are duplicate
 * counts, which are not paid again). `fixed: false` skips the fixed-n fold (the type-I test);
 * `sequential: false` skips the confidence sequence; `groupSequential: true` adds the
 * group-sequential rule with the planned horizon max_items = the campaign's item count (the
 * campaign's last item is the plan's last look).
 */
export function runSequentialCell(o: {
  regime: TierRegime;
  thetaCandidate: number;
  maxClusters: number;
  batchItems: number;
  campaigns: number;
  seed: number;
  alpha: number;
  marginPp: number;
  minSavings?: number;
  candidatesK?: number;
  runIndex?: number;
  fixed?: boolean;
  sequential?: boolean;
  groupSequential?: boolean;
  /** group_sequential: ignore the (non-binding) futility rule */
  ignoreFutility?: boolean;
  resamples?: number;
}): SequentialCell {
  const rng = createRng(o.seed);
  const res: SequentialCell = {
    campaigns: o.campaigns,
    seq: { pass: 0, fail: 0, futile: 0, open: 0, items: 0, usd: 0, looks: 0 },
    gs: { pass: 0, fail: 0, futile: 0, open: 0, items: 0, usd: 0, looks: 0 },
    fixed: { pass: 0, fail: 0, inconclusive: 0, items: 0, usd: 0 },
  };
  const settings = {
    alpha: o.alpha,
    candidates_k: o.candidatesK ?? 1,
    run_index: o.runIndex ?? 1,
    margin_pp: o.marginPp,
    min_savings: o.minSavings ?? 0.2,
    hard_gate_failures: 0,
    cost_ceiling_breaches: 0,
  };
  for (let i = 0; i < o.campaigns; i++) {
    const rows = rowsOf(simulateTierCampaign(o.regime, o.thetaCandidate, o.maxClusters, rng));
    const tally = (t: RuleTally, s: SequentialResult): void => {
      const used = s.items_used;
      t.items += used;
      for (const r of rows.slice(0, used)) t.usd += r.cost_inc_usd + r.cost_cand_usd;
      t.looks += s.looks.length;
      if (s.decision === 'pass') t.pass++;
      else if (s.decision === 'fail') t.fail++;
      else if (s.decision === 'futile') t.futile++;
      else t.open++;
    };
    if (o.sequential !== false) tally(res.seq, sequentialComparison(rows, { ...settings, batch_items: o.batchItems }));
    if (o.groupSequential)
      tally(
        res.gs,
        groupSequentialComparison(rows, {
          ...settings,
          batch_items: o.batchItems,
          max_items: rows.length,
          ignore_futility: o.ignoreFutility === true,
        }),
      );
    if (o.fixed !== false) {
      const f = computeComparison(rows, { ...settings, resamples: o.resamples ?? 200, seed: o.seed * 1000 + i });
      res.fixed.items += rows.length;
      for (const r of rows) res.fixed.usd += r.cost_inc_usd + r.cost_cand_usd;
      if (f.decision === 'pass') res.fixed.pass++;
      else if (f.decision === 'fail') res.fixed.fail++;
      else res.fixed.inconclusive++;
    }
  }
  return res;
}
