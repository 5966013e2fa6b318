/**
 * The statistical core of one candidate-vs-incumbent comparison, shared by the fold and by
 * verifyBundle so that a bundle's recorded numbers can be recomputed from its rows.
 */
import {
  intervalLevel,
  nonInferiorityDecision,
  pairedClusterBootstrap,
  pairedDifferenceSpread,
  pairedScoreIntervals,
  powerPlanFromPairs,
  type PairedInput,
} from '@shadowplane/stats';
import { MIN_ARM_OBSERVATIONS, type Instrument, type IntervalValue, type PowerPlanValue } from '@shadowplane/contracts';
import { rowsInOrder, sequentialComparison, type SequentialResult } from './sequential.js';
import { groupSequentialComparison } from './group-sequential.js';

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

/**
 * The rows as libs/stats input: columns (typed arrays; cluster ids numbered by first appearance in
 * `rows`, so the clusters, their order and every sum are those of the object form) when every value
 * is a number — no object per row; else the rows as PairedItem objects, so rows read from a bundle
 * with a non-number value are checked exactly as before. `costs: false` gives zero costs (the
 * power plan reads no cost).
 */
function pairInput(rows: readonly PairRow[], costs: boolean): PairedInput {
  const n = rows.length;
  const cols = {
    cluster: new Int32Array(n),
    weight: new Float64Array(n),
    qIncumbent: new Float64Array(n),
    qCandidate: new Float64Array(n),
    costIncumbentUsd: new Float64Array(n),
    costCandidateUsd: new Float64Array(n),
  };
  const ids = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    const xi = costs ? r.cost_inc_usd : 0;
    const xc = costs ? r.cost_cand_usd : 0;
    if (
      typeof r.cluster !== 'string' ||
      typeof r.weight !== 'number' ||
      typeof r.q_inc !== 'number' ||
      typeof r.q_cand !== 'number' ||
      typeof xi !== 'number' ||
      typeof xc !== 'number'
    )
      return rows.map((x) => ({
        cluster: x.cluster,
        weight: x.weight,
        qIncumbent: x.q_inc,
        qCandidate: x.q_cand,
        costIncumbentUsd: costs ? x.cost_inc_usd : 0,
        costCandidateUsd: costs ? x.cost_cand_usd : 0,
      }));
    let c = ids.get(r.cluster);
    if (c === undefined) {
      c = ids.size;
      ids.set(r.cluster, c);
    }
    cols.cluster[i] = c;
    cols.weight[i] = r.weight;
    cols.qIncumbent[i] = r.q_inc;
    cols.qCandidate[i] = r.q_cand;
    cols.costIncumbentUsd[i] = xi;
    cols.costCandidateUsd[i] = xc;
  }
  return cols;
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
  /**
   * The weakest instrument among the rows' observations (replay < judged_dataset_run <
   * shadow_dual_run); it caps the state. Absent in bundles written before instruments were
   * recorded: those are shadow_dual_run (the only instrument the contract then accepted).
   */
  instrument?: Instrument;
  /**
   * Present for `stopping: sequential` and `group_sequential` campaigns: the batch between looks
   * and the paired rows' arrival order (item hashes; the fold orders by the later of the two calls'
   * end, then hash). `method: 'group_sequential'` with the planned horizon `max_items` selects the
   * group-sequential rule; absent, the confidence sequence (`sequential`). `final: true` (a final
   * report's rows: the campaign has ended) lets the group-sequential rule take its closing look at
   * the last row when that is short of the next planned look (see groupSequentialComparison).
   */
  sequential?: {
    batch_items: number;
    order: string[];
    method?: 'group_sequential';
    max_items?: number;
    final?: boolean;
  };
  /**
   * Total weight of items made ineligible because the baseline half of their pair is unknown (a
   * compare run whose baseline artifact is missing or expired). Each such pair could differ by
   * anything in [−1, 1], so the quality interval is widened to that worst case — the decision can
   * only move toward inconclusive. Absent or 0: no widening.
   */
  ineligible_weight?: number;
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
  /** null when the instrument licenses no quality decision (replay) */
  decision: 'pass' | 'fail' | 'inconclusive' | null;
  decision_reasons: string[];
  /** BEAT / NOT_BEAT from the rule, then capped by the instrument (see {@link capByInstrument}) */
  state: 'BEAT' | 'NOT_BEAT' | 'ON_FRONTIER' | 'CANNOT_MEASURE';
  /** the sequential decision (settings.sequential present), see {@link computeComparison} */
  sequential?: SequentialResult;
}

const INSTRUMENT_RANK: Record<Instrument, number> = { replay: 0, judged_dataset_run: 1, shadow_dual_run: 2 };

/**
 * The weakest of the given instruments (replay < judged_dataset_run < shadow_dual_run): a
 * comparison is only as counterfactual as its least counterfactual observation.
 * Shape: ≥ 0 instruments → the weakest, or shadow_dual_run for none.
 */
export function weakestInstrument(xs: Iterable<Instrument>): Instrument {
  let w: Instrument = 'shadow_dual_run';
  for (const x of xs) if (INSTRUMENT_RANK[x] < INSTRUMENT_RANK[w]) w = x;
  return w;
}

/**
 * The instrument ceiling (docs/architecture.md "Statistics of a verdict"): shadow_dual_run → any state;
 * judged_dataset_run → at most ON_FRONTIER (a BEAT becomes ON_FRONTIER: non-inferior and cheaper
 * on a dataset, not shown counterfactually on production traffic); replay → the cost half only
 * (state CANNOT_MEASURE, decision null: a historical served output is provenance, never the
 * control, so no quality verdict). Each cap adds a reason starting `instrument_ceiling:` or
 * `instrument_cost_only:`.
 * Shape: rule outcome {decision, reasons, state ∈ BEAT | NOT_BEAT} + instrument → capped outcome.
 */
export function capByInstrument(
  o: { decision: 'pass' | 'fail' | 'inconclusive'; reasons: string[]; state: 'BEAT' | 'NOT_BEAT' },
  instrument: Instrument,
): { decision: ComparisonResult['decision']; reasons: string[]; state: ComparisonResult['state'] } {
  if (instrument === 'replay')
    return {
      decision: null,
      reasons: [
        'instrument_cost_only: replay observations license the cost comparison only, never a quality verdict',
        "replay_assumed_tokens: the candidate was not called; its token counts are assumed equal to the incumbent's captured usage",
      ],
      state: 'CANNOT_MEASURE',
    };
  if (instrument === 'judged_dataset_run' && o.state === 'BEAT') {
    return {
      decision: o.decision,
      reasons: [
        ...o.reasons,
        'instrument_ceiling: judged_dataset_run caps the state at ON_FRONTIER (only shadow_dual_run licenses BEAT)',
      ],
      state: 'ON_FRONTIER',
    };
  }
  return o;
}

/**
 * Interval level for a comparison: one-sided α_eff = alphaSpent(α, r)/K (Bonferroni over K
 * candidates, α-spending α·6/(π²r²) over repeated runs), two-sided level = 1 − 2·α_eff.
 * Source: docs/architecture.md "Statistics of a verdict"; libs/stats `intervalLevel`.
 */
export function comparisonLevel(s: Pick<ComparisonSettings, 'alpha' | 'candidates_k' | 'run_index'>): {
  level: number;
  alphaAdjusted: number;
} {
  return intervalLevel({ alphaOneSided: s.alpha, candidates: s.candidates_k, runIndex: s.run_index });
}

/**
 * How the decision intervals are built (recorded in the report's stats as `interval_method`).
 * See libs/stats `pairedScoreIntervals` and docs/statistics.md.
 */
export const DECISION_INTERVAL_METHOD =
  'hull(percentile cluster bootstrap, score-EL cluster interval with t(k-1)); savings: hull(percentile, log-ratio t(k-1))';

/**
 * Computes the paired cluster bootstrap and the small-sample score intervals, takes their hull
 * as the decision interval for D and for S, applies the non-inferiority decision and the four-state outcome
 * for one comparison from its rows (sorted by item_hash; the order fixes the bootstrap draw).
 * BEAT = decision pass and better beyond the interval on cost (lower(S) > 0) or quality
 * (lower(D) > 0); otherwise NOT_BEAT (measured, did not clear); then capped by the settings'
 * instrument ({@link capByInstrument}), here so that no caller of the fold or of verifyBundle
 * can bypass the ceiling.
 * A degenerate savings interval (every cluster the same cost ratio) never clears min_savings and
 * never makes a BEAT.
 * Errors: RangeError from libs/stats on empty rows or invalid values.
 */
export function computeComparison(rows: readonly PairRow[], s: ComparisonSettings): ComparisonResult {
  const { level, alphaAdjusted } = comparisonLevel(s);
  const items = pairInput(rows, true);
  const boot = pairedClusterBootstrap(items, { resamples: s.resamples, seed: s.seed, level });
  const score = pairedScoreIntervals(items, { level });
  // The decision interval is the hull of the two: the score interval carries the small-sample
  // guarantee, the bootstrap can only widen it (see DECISION_INTERVAL_METHOD).
  const quality = {
    point: boot.qualityDelta.point,
    lower: Math.min(boot.qualityDelta.lower, score.qualityDelta.lower),
    upper: Math.max(boot.qualityDelta.upper, score.qualityDelta.upper),
  };
  const savings =
    boot.costSavings === null || score.costSavings === null
      ? null
      : {
          point: boot.costSavings.point,
          lower: Math.min(boot.costSavings.lower, score.costSavings.lower),
          upper: Math.max(boot.costSavings.upper, score.costSavings.upper),
          degenerate: score.costSavings.degenerate,
        };
  // Worst-case bound for the pairs whose baseline half is missing (Manski): over all W + m weight,
  // D lies in [(lower·W − m)/(W + m), (upper·W + m)/(W + m)].
  const missing = s.ineligible_weight ?? 0;
  if (missing > 0) {
    const w = rows.reduce((a, r) => a + r.weight, 0);
    quality.lower = (quality.lower * w - missing) / (w + missing);
    quality.upper = (quality.upper * w + missing) / (w + missing);
  }
  const d = nonInferiorityDecision({
    qualityDelta: quality,
    costSavings: savings,
    marginPp: s.margin_pp,
    minSavings: s.min_savings,
    hardGateBroken: s.hard_gate_failures > 0,
    costCeilingBreached: s.cost_ceiling_breaches > 0,
  });
  let seq: SequentialResult | undefined;
  if (s.sequential) {
    // Under sequential stopping the fixed-n interval alone no longer carries a pass (the campaign
    // could have stopped at any look): a pass needs the sequential rule (confidence sequence or
    // group-sequential boundary) to pass too, and a rule that settled on fail decides fail.
    const ordered = rowsInOrder(rows, s.sequential.order);
    if (s.sequential.method === 'group_sequential') {
      if (s.sequential.max_items === undefined)
        throw new RangeError('computeComparison: group_sequential settings need max_items (the planned horizon)');
      seq = groupSequentialComparison(ordered, {
        ...s,
        batch_items: s.sequential.batch_items,
        max_items: s.sequential.max_items,
        final: s.sequential.final === true,
      });
    } else seq = sequentialComparison(ordered, { ...s, batch_items: s.sequential.batch_items });
    if (d.decision === 'pass' && seq.decision !== 'pass') {
      d.decision = 'inconclusive';
      d.reasons = [`sequential_not_passed: ${seq.reason}`];
    } else if (d.decision !== 'fail' && seq.decision === 'fail') {
      d.decision = 'fail';
      d.reasons = [`sequential_fail: ${seq.reason}`];
    } else if (d.decision === 'inconclusive' && seq.decision === 'futile')
      d.reasons.push(`sequential_futile: ${seq.reason}`);
  }
  const better = (savings !== null && !savings.degenerate && savings.lower > 0) || quality.lower > 0;
  const reasons =
    missing > 0
      ? [
          ...d.reasons,
          `baseline_ineligible_bound: ${missing} item weight has no baseline half; the quality interval is widened to its worst case`,
        ]
      : d.reasons;
  const capped = capByInstrument(
    { decision: d.decision, reasons, state: d.decision === 'pass' && better ? 'BEAT' : 'NOT_BEAT' },
    s.instrument ?? 'shadow_dual_run',
  );
  // replay measured no quality: the rows' quality placeholders (0) are never read, and the
  // interval is the whole range [-1, 1] — nothing about quality is known
  if (s.instrument === 'replay') {
    quality.point = 0;
    quality.lower = -1;
    quality.upper = 1;
  }
  return {
    level,
    alpha_one_sided_adjusted: alphaAdjusted,
    items: boot.items,
    clusters: boot.clusters,
    total_weight: rows.reduce((a, r) => a + r.weight, 0),
    quality_delta: quality,
    cost_savings: savings === null ? null : { point: savings.point, lower: savings.lower, upper: savings.upper },
    cost_savings_null_reason: boot.costSavingsNullReason ?? null,
    decision: capped.decision,
    decision_reasons: capped.reasons,
    state: capped.state,
    ...(seq ? { sequential: seq } : {}),
  };
}

/** Power 0.8 and a 90% upper confidence bound on the paired sd: the plan's fixed settings. */
const PLAN_POWER = 0.8;
const PLAN_SD_CONFIDENCE = 0.9;

/**
 * The power plan written into a comparison (and recomputed by verifyBundle): from the comparison's
 * own paired rows once they span ≥ MIN_ARM_OBSERVATIONS clusters (upper confidence bound on the
 * paired spread), before that the prior √0.5·√deff (deff from `priorWeights`, the cluster weights
 * the prior applies to, or the rows'; else `priorDesignEffect`, e.g. a frozen dataset card's, for a
 * plan made before any evidence exists, as the dry run makes it). A-A pairs only report the noise
 * floor (`noise_floor_sd`).
 * Shape: rows (any, sorted by item_hash), { clusters (where the MDE is stated), alpha_one_sided,
 * margin_pp, noise_floor: { pairs, sd } , priorWeights?, priorDesignEffect? (≥ 1; default 1) } →
 * PowerPlanValue.
 * Source: libs/stats powerPlanFromPairs.
 */
export function comparisonPowerPlan(
  rows: readonly PairRow[],
  o: {
    clusters: number;
    alpha_one_sided: number;
    margin_pp: number;
    noise_floor: { pairs: number; sd: number | null };
    priorWeights?: readonly number[];
    priorDesignEffect?: number;
  },
): PowerPlanValue {
  const spread = rows.length > 0 ? pairedDifferenceSpread(pairInput(rows, false)) : null;
  let deff = spread?.designEffect ?? o.priorDesignEffect ?? 1;
  if (o.priorWeights && o.priorWeights.length > 0) {
    const sw = o.priorWeights.reduce((a, w) => a + w, 0);
    const sw2 = o.priorWeights.reduce((a, w) => a + w * w, 0);
    deff = (o.priorWeights.length * sw2) / (sw * sw);
  }
  const p = powerPlanFromPairs({
    clusters: o.clusters,
    observed:
      spread && spread.sd !== null
        ? { sd: spread.sd, clusters: spread.clusters, meanSquare: Math.min(1, spread.meanSquare) }
        : null,
    minClusters: MIN_ARM_OBSERVATIONS,
    designEffect: Math.max(1, deff),
    alphaOneSided: o.alpha_one_sided,
    power: PLAN_POWER,
    marginPp: o.margin_pp,
    confidence: PLAN_SD_CONFIDENCE,
  });
  return {
    clusters: o.clusters,
    alpha_one_sided: o.alpha_one_sided,
    power: PLAN_POWER,
    margin_pp: o.margin_pp,
    sd_diff: p.sdDiff,
    sd_source: p.sdSource,
    aa_pairs: o.noise_floor.pairs,
    mde_pp: p.mdePp,
    clusters_needed_for_margin: p.clustersNeededForMargin,
    powered: p.powered,
    sd_observed: p.sdObserved,
    sd_upper_bound: p.sdUpperBound,
    sd_confidence: PLAN_SD_CONFIDENCE,
    design_effect: Math.max(1, deff),
    noise_floor_sd: o.noise_floor.sd,
  };
}
