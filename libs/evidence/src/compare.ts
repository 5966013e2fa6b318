/**
 * The statistical core of one candidate-vs-incumbent comparison, shared by the fold and by
 * verifyBundle so that a bundle's recorded numbers can be recomputed from its rows.
 */
import { intervalLevel, nonInferiorityDecision, pairedClusterBootstrap } from '@shadowplane/stats';
import type { IntervalValue } from '@shadowplane/contracts';

/** One paired item as written in the evidence bundle (`parts.paired[].rows`). Costs in USD on the comparison's one basis. */
export interface PairRow {
  item_hash: string;
  /** near-duplicate cluster id (smallest item_hash of the cluster) */
  cluster: string;
  /** prompt SimHash (16 hex), so clusters can be recomputed offline */
  simhash: string;
  /** exact-duplicate weight: 1 + duplicate events */
  weight: number;
  q_inc: number;
  q_cand: number;
  cost_inc_usd: number;
  cost_cand_usd: number;
  /** observation ids (lineage) of the two calls */
  obs_inc: string;
  obs_cand: string;
}

/** The settings a comparison was computed with (all from the pinned spec + run index). */
export interface ComparisonSettings {
  resamples: number;
  seed: number;
  /** family-wise one-sided α from the spec */
  alpha: number;
  /** number of candidate arms K (Bonferroni) */
  candidates_k: number;
  /** run r of the same comparison (α-spending) */
  run_index: number;
  margin_pp: number;
  min_savings: number;
  hard_gate_failures: number;
  cost_ceiling_breaches: number;
}

/** The recomputable result of {@link computeComparison}. */
export interface ComparisonResult {
  level: number;
  alpha_one_sided_adjusted: number;
  items: number;
  clusters: number;
  total_weight: number;
  quality_delta: IntervalValue;
  cost_savings: IntervalValue | null;
  cost_savings_null_reason: string | null;
  decision: 'pass' | 'fail' | 'inconclusive';
  decision_reasons: string[];
  state: 'BEAT' | 'NOT_BEAT';
}

/**
 * Interval level for a comparison: one-sided α_eff = alphaSpent(α, r)/K (Bonferroni over K
 * candidates, α-spending α·6/(π²r²) over repeated runs), two-sided level = 1 − 2·α_eff.
 * Source: DESIGN.md "Verdict statistics"; libs/stats `intervalLevel`.
 */
export function comparisonLevel(s: Pick<ComparisonSettings, 'alpha' | 'candidates_k' | 'run_index'>): { level: number; alphaAdjusted: number } {
  return intervalLevel({ alphaOneSided: s.alpha, candidates: s.candidates_k, runIndex: s.run_index });
}

/**
 * Computes the paired cluster bootstrap, the non-inferiority decision and the four-state outcome
 * for one comparison from its rows (sorted by item_hash; the order fixes the bootstrap draw).
 * BEAT = decision pass and better beyond the interval on cost (lower(S) > 0) or quality
 * (lower(D) > 0); otherwise NOT_BEAT (measured, did not clear).
 * Errors: RangeError from libs/stats on empty rows or invalid values.
 */
export function computeComparison(rows: readonly PairRow[], s: ComparisonSettings): ComparisonResult {
  const { level, alphaAdjusted } = comparisonLevel(s);
  const boot = pairedClusterBootstrap(
    rows.map((r) => ({ cluster: r.cluster, weight: r.weight, qIncumbent: r.q_inc, qCandidate: r.q_cand, costIncumbentUsd: r.cost_inc_usd, costCandidateUsd: r.cost_cand_usd })),
    { resamples: s.resamples, seed: s.seed, level },
  );
  const d = nonInferiorityDecision({
    qualityDelta: boot.qualityDelta,
    costSavings: boot.costSavings,
    marginPp: s.margin_pp,
    minSavings: s.min_savings,
    hardGateBroken: s.hard_gate_failures > 0,
    costCeilingBreached: s.cost_ceiling_breaches > 0,
  });
  const better = (boot.costSavings !== null && boot.costSavings.lower > 0) || boot.qualityDelta.lower > 0;
  return {
    level,
    alpha_one_sided_adjusted: alphaAdjusted,
    items: boot.items,
    clusters: boot.clusters,
    total_weight: rows.reduce((a, r) => a + r.weight, 0),
    quality_delta: { ...boot.qualityDelta },
    cost_savings: boot.costSavings === null ? null : { ...boot.costSavings },
    cost_savings_null_reason: boot.costSavingsNullReason ?? null,
    decision: d.decision,
    decision_reasons: d.reasons,
    state: d.decision === 'pass' && better ? 'BEAT' : 'NOT_BEAT',
  };
}
