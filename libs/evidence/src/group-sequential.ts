/**
 * The group-sequential decision of one candidate-vs-incumbent comparison (`stopping:
 * group_sequential`): paired rows in arrival order, looked at only at the planned looks n_k =
 * k·batch_items (and max_items, the known horizon), each against an exact O'Brien–Fleming-type
 * α-spending boundary (libs/stats `spendingBoundaries`). Shared by the fold, the verdict service
 * (which stops a campaign once every candidate is settled) and verifyBundle (which recomputes it).
 */
import {
  GROUP_SEQUENTIAL_FUTILITY_POWER,
  GROUP_SEQUENTIAL_MAX_LOOKS,
  GROUP_SEQUENTIAL_METHOD,
  conditionalPower,
  intervalLevel,
  normCdf,
  pairedDifferenceSpread,
  pairedScoreIntervals,
  spendingBoundaries,
  type PairedItem,
  type PairedScoreIntervals,
} from '@shadowplane/stats';
import { createHash } from 'node:crypto';
import { MIN_ARM_OBSERVATIONS } from '@shadowplane/contracts';
import type { PairRow } from './compare.js';
import type { SequentialLookRecord, SequentialResult, SequentialSettings } from './sequential.js';

/** Settings of {@link groupSequentialComparison}: the sequential settings plus the horizon. */
export type GroupSequentialSettings = SequentialSettings & {
  /** the planned horizon: the spec's max_items (paired items at information fraction 1) */
  max_items: number;
  /**
   * The rows are final (the campaign ended): when they stop short of the next planned look and of
   * max_items, a closing look at the last row spends all of α that is left.
   */
  final?: boolean;
  /**
   * Simulation only (never from a spec): run on past the futility rule, to measure the type-I
   * error of the efficacy boundaries alone — what "non-binding" promises.
   */
  ignore_futility?: boolean;
};

/**
 * The planned looks: n_k = k·batch for n_k < max_items, then max_items.
 * Shape: max_items ≥ 1, batch ≥ 1 → strictly increasing item counts ending at max_items.
 * Errors: RangeError on non-integer or < 1 inputs, or more than GROUP_SEQUENTIAL_MAX_LOOKS looks.
 */
export function plannedLooks(maxItems: number, batch: number): number[] {
  if (!Number.isInteger(maxItems) || maxItems < 1 || !Number.isInteger(batch) || batch < 1)
    throw new RangeError(`plannedLooks: max_items and batch must be integers >= 1, got ${maxItems}, ${batch}`);
  const looks = Math.ceil(maxItems / batch);
  if (looks > GROUP_SEQUENTIAL_MAX_LOOKS)
    throw new RangeError(
      `plannedLooks: ${looks} looks (max_items ${maxItems} / batch ${batch}) exceed ${GROUP_SEQUENTIAL_MAX_LOOKS}`,
    );
  const out: number[] = [];
  for (let n = batch; n < maxItems; n += batch) out.push(n);
  out.push(maxItems);
  return out;
}

const itemOf = (r: PairRow): PairedItem => ({
  cluster: r.cluster,
  weight: r.weight,
  qIncumbent: r.q_inc,
  qCandidate: r.q_cand,
  costIncumbentUsd: r.cost_inc_usd,
  costCandidateUsd: r.cost_cand_usd,
});

const clamp1 = (x: number): number => Math.max(-1, Math.min(1, x));

/**
 * Look statistics already computed, by (sha256 of the prefix's rows, boundary): the verdict
 * service folds a running campaign again after every batch, and without this each fold would
 * recompute every earlier look (measured: 200 looks over 5000 rows, 2.8 s per comparison). The
 * values are the same numbers a fresh computation gives; entries are never mutated.
 */
const lookCache = new Map<string, { score: PairedScoreIntervals; sd: number | null }>();
const LOOK_CACHE_MAX = 4096;

function lookStats(
  rows: readonly PairRow[],
  n: number,
  prefixHash: string,
  c: number,
): { score: PairedScoreIntervals; sd: number | null } {
  const key = `${prefixHash}|${c}`;
  const hit = lookCache.get(key);
  if (hit) return hit;
  const items = rows.slice(0, n).map(itemOf);
  const v = {
    score: pairedScoreIntervals(items, { oneSidedTail: normCdf(-c) }),
    sd: pairedDifferenceSpread(items).sd,
  };
  if (lookCache.size >= LOOK_CACHE_MAX) lookCache.delete(lookCache.keys().next().value!);
  lookCache.set(key, v);
  return v;
}

/** sha256 of the first n rows' statistical fields, for every n in `at` (one pass over the rows). */
function prefixHashes(rows: readonly PairRow[], at: readonly number[]): string[] {
  const h = createHash('sha256');
  const out: string[] = [];
  let i = 0;
  for (const n of at) {
    for (; i < n; i++) {
      const r = rows[i]!;
      h.update(`${r.cluster}\t${r.weight}\t${r.q_inc}\t${r.q_cand}\t${r.cost_inc_usd}\t${r.cost_cand_usd}\n`);
    }
    out.push(h.copy().digest('hex'));
  }
  return out;
}

/**
 * Looks at the planned looks that the rows have reached and returns the group-sequential decision.
 * At look k (information fraction t_k = n_k / max_items, boundary c_k, one-sided tail p_k = 1 − Φ(c_k)):
 * the fixed-n score-EL interval for D and the log-ratio interval for S, both with t(k − 1) at the
 * one-sided tail p_k, on the first n_k rows; fail when upper(D) < −margin (or a hard gate / cost
 * ceiling broke); pass when lower(D) > −margin and lower(S) ≥ min_savings (S not degenerate); futile
 * when upper(S) < min_savings, or — before the last look — when the conditional power of the final
 * look to pass under D = 0 and to fail under the current trend (Wald z of the cluster-robust
 * difference, information projected to max_items) are both below GROUP_SEQUENTIAL_FUTILITY_POWER (10%). Fewer than MIN_ARM_OBSERVATIONS clusters never settle. Rows beyond the last planned
 * look reached are not looked at (a look between planned ones would spend α the plan has not),
 * except in a final report (`final`): a campaign that ended short of max_items and of its next
 * planned look takes one closing look at its last row, spending all of α that is left (boundary
 * from the actual fractions with the last one spending α(1); no futility test there).
 * Shape: rows in arrival order, settings → SequentialResult (method GROUP_SEQUENTIAL_METHOD; each
 * look adds `boundary` and `conditional_power`; `plan` lists every planned look and boundary).
 * Errors: RangeError on invalid batch/max_items (see {@link plannedLooks}) or rows (libs/stats).
 * Source: libs/stats group-sequential.ts (Lan & DeMets 1983; Jennison & Turnbull 2000 ch. 19).
 */
export function groupSequentialComparison(rows: readonly PairRow[], s: GroupSequentialSettings): SequentialResult {
  const planned = plannedLooks(s.max_items, s.batch_items);
  const { alphaAdjusted } = intervalLevel({
    alphaOneSided: s.alpha,
    candidates: s.candidates_k,
    runIndex: s.run_index,
  });
  const b = spendingBoundaries(
    planned.map((n) => n / s.max_items),
    alphaAdjusted,
  );
  // the looks the rows reach; a final report short of the next planned look closes at its last row
  const lookItems = planned.filter((n) => n <= rows.length);
  let critical = b.critical.slice(0, lookItems.length);
  const closing = s.final === true && rows.length > (lookItems.at(-1) ?? 0) && rows.length < s.max_items;
  if (closing) {
    lookItems.push(rows.length);
    critical = spendingBoundaries(
      lookItems.map((n) => n / s.max_items),
      alphaAdjusted,
      { lastSpendsAll: true },
    ).critical;
  }
  const margin = s.margin_pp / 100;
  const hardFail = s.hard_gate_failures > 0 || s.cost_ceiling_breaches > 0;
  const cK = b.critical.at(-1)!;
  const looks: SequentialLookRecord[] = [];
  let settled: number | null = null;
  const hashes = prefixHashes(rows, lookItems);
  for (let j = 0; j < lookItems.length && settled === null; j++) {
    const n = lookItems[j]!;
    const c = critical[j]!;
    const isClosing = closing && j === lookItems.length - 1;
    const { score, sd: sdLook } = lookStats(rows, n, hashes[j]!, c);
    const k = score.clusters;
    const delta = { lower: clamp1(score.qualityDelta.lower), upper: clamp1(score.qualityDelta.upper) };
    const sv = score.costSavings;
    const savings = sv ? { lower: clamp1(sv.lower), upper: clamp1(sv.upper) } : null;
    // futility: conditional power of the final look to pass under D = 0 (the drift an equal
    // candidate has), and to fail under the current trend (so a clearly worse candidate runs on to
    // its fail boundary rather than stopping inconclusive)
    let cp: number | null = null;
    let cpFail: number | null = null;
    const t = n / s.max_items;
    if (k >= 2 && t < 1 && !isClosing) {
      const sd = sdLook ?? 0;
      const se = sd / Math.sqrt(k);
      const d = score.qualityDelta.point + margin;
      const z = se > 0 ? d / se : d > 0 ? Infinity : d < 0 ? -Infinity : 0;
      const drift = se > 0 ? (margin / se) * Math.sqrt(1 / t) : Infinity;
      cp = conditionalPower({ z, t, drift, finalCritical: cK });
      cpFail = conditionalPower({ z: -z, t, drift: -z / Math.sqrt(t), finalCritical: cK });
    }
    let decision: SequentialLookRecord['decision'] = 'continue';
    let reason = isClosing
      ? `continue: closing look at ${n} items (the campaign ended before max_items), neither boundary crossed (boundary z ${c.toFixed(3)})`
      : `continue: look ${j + 1} of ${planned.length} (boundary z ${c.toFixed(3)})`;
    const pp = (x: number) => (x * 100).toFixed(2);
    if (k < MIN_ARM_OBSERVATIONS) reason = `continue: ${k} clusters < ${MIN_ARM_OBSERVATIONS}`;
    else if (hardFail) {
      decision = 'fail';
      reason = `hard_fail: ${s.hard_gate_failures} hard gate failure(s), ${s.cost_ceiling_breaches} cost ceiling breach(es)`;
    } else if (delta.upper < -margin) {
      decision = 'fail';
      reason = `quality_upper_bound_below_margin: upper(D) ${pp(delta.upper)}pp < -${s.margin_pp.toFixed(2)}pp at boundary z ${c.toFixed(3)}`;
    } else if (delta.lower > -margin && sv !== null && !sv.degenerate && savings!.lower >= s.min_savings) {
      decision = 'pass';
      reason = `pass: lower(D) ${pp(delta.lower)}pp > -${s.margin_pp.toFixed(2)}pp and lower(S) ${(savings!.lower * 100).toFixed(1)}% >= ${(s.min_savings * 100).toFixed(1)}% at boundary z ${c.toFixed(3)}`;
    } else if (savings !== null && savings.upper < s.min_savings) {
      decision = 'futile';
      reason = `savings_upper_bound_below_min: upper(S) ${(savings.upper * 100).toFixed(1)}% < ${(s.min_savings * 100).toFixed(1)}% at boundary z ${c.toFixed(3)}`;
    } else if (
      !s.ignore_futility &&
      cp !== null &&
      cp < GROUP_SEQUENTIAL_FUTILITY_POWER &&
      cpFail !== null &&
      cpFail < GROUP_SEQUENTIAL_FUTILITY_POWER
    ) {
      decision = 'futile';
      reason = `conditional_power_below_futility: pass ${(cp * 100).toFixed(1)}% under D = 0 and fail ${(cpFail * 100).toFixed(1)}% under the current trend, both < ${GROUP_SEQUENTIAL_FUTILITY_POWER * 100}%, at look ${j + 1} of ${planned.length}`;
    } else if (t === 1) reason = `continue: last planned look, neither boundary crossed (boundary z ${c.toFixed(3)})`;
    looks.push({ items: n, clusters: k, delta, savings, decision, reason, boundary: c, conditional_power: cp });
    if (decision !== 'continue') settled = looks.length;
  }
  const last = settled !== null ? looks[settled - 1]! : looks.at(-1);
  return {
    method: GROUP_SEQUENTIAL_METHOD,
    alpha_one_sided_adjusted: alphaAdjusted,
    looks,
    decision: settled !== null ? last!.decision : 'continue',
    reason: last?.reason ?? `continue: no planned look reached yet (first at ${planned[0]} paired items)`,
    settled_look: settled,
    items_used: settled !== null ? last!.items : rows.length,
    clipped: { quality: 0, savings: 0 },
    plan: { items: planned, boundaries: b.critical },
  };
}
