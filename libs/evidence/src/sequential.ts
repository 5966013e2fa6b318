/**
 * The sequential (anytime-valid) decision of one candidate-vs-incumbent comparison: paired rows
 * in arrival order, looked at after every `batch_items` paired items with the betting confidence
 * sequences of libs/stats `sequentialLooks`. Shared by the fold, the verdict service (which stops
 * a campaign once every candidate is settled) and verifyBundle (which recomputes it offline).
 */
import {
  SEQUENTIAL_METHOD,
  intervalLevel,
  sequentialLooks,
  type SequentialCluster,
  type SequentialLook,
} from '@shadowplane/stats';
import {
  MIN_ARM_OBSERVATIONS,
  SEQUENTIAL_BATCH_DEFAULT,
  type CampaignSpec,
  type SequentialSummary,
} from '@shadowplane/contracts';
import type { ComparisonSettings, PairRow } from './compare.js';

/** Settings of {@link sequentialComparison}: the fixed-n settings that apply, plus the batch. */
export type SequentialSettings = Pick<
  ComparisonSettings,
  'alpha' | 'candidates_k' | 'run_index' | 'margin_pp' | 'min_savings' | 'hard_gate_failures' | 'cost_ceiling_breaches'
> & {
  /** paired items between two looks (the spec's `stopping_batch_items`) */
  batch_items: number;
};

/**
 * One look as recorded: paired items and clusters seen, the bounds and the decision. Under
 * `group_sequential` the bounds are that look's (not intersected) and the look also records its
 * boundary and the conditional power of its futility rule.
 */
export interface SequentialLookRecord extends SequentialLook {
  items: number;
  /** group_sequential: the look's critical value on the Z scale */
  boundary?: number;
  /** group_sequential: conditional power of the final look under D = 0 (null at the last look or < 2 clusters) */
  conditional_power?: number | null;
}

/** The recomputable result of {@link sequentialComparison}. */
export interface SequentialResult {
  method: string;
  /** one-sided α of each side (α split over K candidates and spent over runs, as fixed-n) */
  alpha_one_sided_adjusted: number;
  looks: SequentialLookRecord[];
  /** the decision at the first settled look, or 'continue' when no look settled */
  decision: 'pass' | 'fail' | 'futile' | 'continue';
  reason: string;
  /** 1-based index of the settling look, or null */
  settled_look: number | null;
  /** paired items up to the settling look (all rows when unsettled) */
  items_used: number;
  /** clusters whose weight was clipped to the predictable bound (quality, savings) */
  clipped: { quality: number; savings: number };
  /** group_sequential: every planned look (paired items) and its critical value (Z scale) */
  plan?: { items: number[]; boundaries: number[] };
}

/**
 * Clusters of the first `n` rows (arrival order) in order of first appearance, each with its
 * weight, weighted mean quality difference and weighted costs.
 */
function clustersOfPrefix(rows: readonly PairRow[], n: number): SequentialCluster[] {
  const byId = new Map<string, { w: number; a: number; x: number; y: number }>();
  for (const r of rows.slice(0, n)) {
    let c = byId.get(r.cluster);
    if (!c) byId.set(r.cluster, (c = { w: 0, a: 0, x: 0, y: 0 }));
    c.w += r.weight;
    c.a += r.weight * (r.q_cand - r.q_inc);
    c.x += r.weight * r.cost_inc_usd;
    c.y += r.weight * r.cost_cand_usd;
  }
  return [...byId.values()].map((c) => ({
    weight: c.w,
    delta: Math.max(-1, Math.min(1, c.a / c.w)),
    costIncumbentUsd: c.x,
    costCandidateUsd: c.y,
  }));
}

/**
 * Looks after every `batch_items` paired rows (and at the last row) and returns the sequential
 * decision. Each look re-forms the clusters of the rows seen so far (first appearance order) and
 * evaluates the confidence sequences on them; bounds are intersected over looks, so a look never
 * widens them, and the first settled look decides. Fewer than MIN_ARM_OBSERVATIONS clusters never
 * settle (architecture.md honesty rule 10).
 * Shape: rows in arrival order (the fold sorts by the later of the two calls' end, then
 * item_hash), settings → {@link SequentialResult}. Empty rows → no look, 'continue'.
 * Errors: RangeError on batch_items < 1 or invalid rows (libs/stats sequentialLooks).
 * Source: libs/stats confidence-sequence.ts (Waudby-Smith & Ramdas 2023).
 */
export function sequentialComparison(rows: readonly PairRow[], s: SequentialSettings): SequentialResult {
  if (!Number.isInteger(s.batch_items) || s.batch_items < 1)
    throw new RangeError(`sequentialComparison: batch_items must be an integer >= 1, got ${s.batch_items}`);
  const { alphaAdjusted } = intervalLevel({
    alphaOneSided: s.alpha,
    candidates: s.candidates_k,
    runIndex: s.run_index,
  });
  const itemLooks: number[] = [];
  for (let n = s.batch_items; n < rows.length; n += s.batch_items) itemLooks.push(n);
  if (rows.length > 0) itemLooks.push(rows.length);
  const looks: SequentialLookRecord[] = [];
  let settled: number | null = null;
  const clipped = { quality: 0, savings: 0 };
  // each look is evaluated on its own prefix; bounds carried as a running intersection
  let lo = -1;
  let hi = 1;
  let sLo = -1;
  let sHi = 1;
  for (const n of itemLooks) {
    if (settled !== null) break;
    const cs = clustersOfPrefix(rows, n);
    const r = sequentialLooks(cs, [cs.length], {
      alpha: alphaAdjusted,
      marginPp: s.margin_pp,
      minSavings: s.min_savings,
      minClusters: MIN_ARM_OBSERVATIONS,
      hardFail: s.hard_gate_failures > 0 || s.cost_ceiling_breaches > 0,
    });
    const l = r.looks[0]!;
    lo = Math.max(lo, l.delta.lower);
    hi = Math.min(hi, l.delta.upper);
    let savings = l.savings;
    if (savings) {
      sLo = Math.max(sLo, savings.lower);
      sHi = Math.min(sHi, savings.upper);
      savings = { lower: sLo, upper: sHi };
    }
    const margin = s.margin_pp / 100;
    let decision = l.decision;
    let reason = l.reason;
    // the intersection can settle a look that its own prefix did not
    if (decision === 'continue' && cs.length >= MIN_ARM_OBSERVATIONS) {
      if (hi < -margin) {
        decision = 'fail';
        reason = `quality_upper_bound_below_margin: upper(D) ${(hi * 100).toFixed(2)}pp < -${s.margin_pp.toFixed(2)}pp`;
      } else if (lo > -margin && savings !== null && savings.lower >= s.min_savings) {
        decision = 'pass';
        reason = `pass: lower(D) ${(lo * 100).toFixed(2)}pp > -${s.margin_pp.toFixed(2)}pp and lower(S) ${(savings.lower * 100).toFixed(1)}% >= ${(s.min_savings * 100).toFixed(1)}%`;
      } else if (savings !== null && savings.upper < s.min_savings) {
        decision = 'futile';
        reason = `savings_upper_bound_below_min: upper(S) ${(savings.upper * 100).toFixed(1)}% < ${(s.min_savings * 100).toFixed(1)}%`;
      }
    }
    clipped.quality = r.clipped.quality;
    clipped.savings = r.clipped.savings;
    looks.push({ items: n, clusters: cs.length, delta: { lower: lo, upper: hi }, savings, decision, reason });
    if (decision !== 'continue') settled = looks.length;
  }
  const last = settled !== null ? looks[settled - 1]! : looks.at(-1);
  return {
    method: SEQUENTIAL_METHOD,
    alpha_one_sided_adjusted: alphaAdjusted,
    looks,
    decision: settled !== null ? last!.decision : 'continue',
    reason: last?.reason ?? 'continue: no paired item yet',
    settled_look: settled,
    items_used: settled !== null ? last!.items : rows.length,
    clipped,
  };
}

/**
 * Rows in the recorded arrival order. Shape: rows (any order), order = every row's item_hash once
 * → rows in that order. Errors: RangeError when order is not a permutation of the rows' hashes.
 */
export function rowsInOrder(rows: readonly PairRow[], order: readonly string[]): PairRow[] {
  const by = new Map(rows.map((r) => [r.item_hash, r]));
  const out = order.map((h) => by.get(h));
  if (order.length !== rows.length || new Set(order).size !== order.length || out.some((r) => r === undefined))
    throw new RangeError('rowsInOrder: the sequential order is not a permutation of the paired rows');
  return out as PairRow[];
}

/**
 * The report's `sequential` block for one comparison from its {@link SequentialResult}.
 * Shape: result, the pinned spec (max_items, stopping_batch_items), paired items → SequentialSummary.
 */
export function sequentialSummary(
  r: SequentialResult,
  spec: Pick<CampaignSpec, 'max_items' | 'stopping_batch_items'>,
  itemsPaired: number,
): SequentialSummary {
  const last = r.settled_look !== null ? r.looks[r.settled_look - 1] : r.looks.at(-1);
  return {
    method: r.method,
    batch_items: spec.stopping_batch_items ?? SEQUENTIAL_BATCH_DEFAULT,
    looks: r.looks.length,
    decision: r.decision,
    reason: r.reason,
    settled_look: r.settled_look,
    items_used: r.items_used,
    items_paired: itemsPaired,
    max_items: spec.max_items,
    items_saved: Math.max(0, spec.max_items - itemsPaired),
    alpha_one_sided_adjusted: r.alpha_one_sided_adjusted,
    quality_delta: last ? last.delta : { lower: -1, upper: 1 },
    cost_savings: last?.savings ?? null,
    clipped: r.clipped,
    ...(r.plan
      ? {
          planned_looks: r.plan.items,
          boundaries: r.plan.boundaries,
          conditional_power: last?.conditional_power ?? null,
        }
      : {}),
  };
}
