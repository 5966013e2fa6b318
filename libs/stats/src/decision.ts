/**
 * The non-inferiority decision rule for one candidate.
 */

/** Outcome of {@link nonInferiorityDecision}. */
export type Decision = 'pass' | 'fail' | 'inconclusive';

/**
 * Stable reason tokens; each reason string starts with one of these followed by ": " and numbers.
 * Callers map tokens (not the text) to remediations.
 */
export const DECISION_REASONS = [
  'quality_noninferior',
  'quality_lower_bound_not_above_margin',
  'quality_upper_bound_below_margin',
  'savings_cleared',
  'savings_lower_bound_below_min',
  'savings_unmeasurable',
  'hard_gate_broken',
  'cost_ceiling_breached',
  'savings_interval_degenerate',
  // set by the sequential stopping rule (libs/evidence computeComparison)
  'sequential_not_passed',
  'sequential_fail',
  'sequential_futile',
] as const;
/** One of {@link DECISION_REASONS}. */
export type DecisionReason = (typeof DECISION_REASONS)[number];

const pp = (x: number): string => `${(x * 100).toFixed(2)}pp`;
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

/**
 * Applies the non-inferiority rule to bootstrap intervals.
 *
 * Shape: { qualityDelta {lower, upper} (D, 0–1 scale), costSavings {lower} (S, fraction) or null
 * when savings are unmeasurable, marginPp (pp, ≥ 0), minSavings (fraction), hardGateBroken?,
 * costCeilingBreached? } → { decision, reasons }.
 * Rule (docs/architecture.md "Statistics of a verdict"):
 * - fail when upper(D) < −margin, or a hard assertion gate is broken, or a per-request cost ceiling
 *   is breached;
 * - else pass when lower(D) > −margin and lower(S) ≥ minSavings, and the savings interval is not
 *   degenerate (`costSavings.degenerate`: zero spread — a collapsed interval never licenses a pass);
 * - else inconclusive.
 * Reasons: every bound that decided or did not clear is named, as `<token>: <numbers>` with a
 * token from {@link DECISION_REASONS}; a pass lists the two cleared bounds.
 * Units: margin in percentage points (2 = 0.02 on the quality scale); savings as fractions.
 * Errors: RangeError when marginPp is negative or a bound is NaN.
 * Defaults: hardGateBroken false, costCeilingBreached false.
 */
export function nonInferiorityDecision(o: {
  qualityDelta: { lower: number; upper: number };
  costSavings: { lower: number; degenerate?: boolean } | null;
  marginPp: number;
  minSavings: number;
  hardGateBroken?: boolean;
  costCeilingBreached?: boolean;
}): { decision: Decision; reasons: string[] } {
  if (!(o.marginPp >= 0)) throw new RangeError(`nonInferiorityDecision: marginPp must be >= 0, got ${o.marginPp}`);
  if (Number.isNaN(o.qualityDelta.lower) || Number.isNaN(o.qualityDelta.upper))
    throw new RangeError('nonInferiorityDecision: quality delta bounds must be numbers, got NaN');
  if (o.costSavings !== null && Number.isNaN(o.costSavings.lower))
    throw new RangeError(
      'nonInferiorityDecision: cost savings lower bound is NaN; pass null when savings are unmeasurable',
    );
  if (Number.isNaN(o.minSavings)) throw new RangeError('nonInferiorityDecision: minSavings is NaN');
  const margin = o.marginPp / 100;
  const { lower, upper } = o.qualityDelta;
  const failReasons: string[] = [];
  if (upper < -margin) failReasons.push(`quality_upper_bound_below_margin: upper(D) ${pp(upper)} < -${pp(margin)}`);
  if (o.hardGateBroken === true) failReasons.push('hard_gate_broken: a hard assertion failed on the candidate');
  if (o.costCeilingBreached === true)
    failReasons.push('cost_ceiling_breached: a candidate request cost more than the per-request ceiling');
  if (failReasons.length > 0) return { decision: 'fail', reasons: failReasons };

  const reasons: string[] = [];
  const qualityOk = lower > -margin;
  reasons.push(
    qualityOk
      ? `quality_noninferior: lower(D) ${pp(lower)} > -${pp(margin)}`
      : `quality_lower_bound_not_above_margin: lower(D) ${pp(lower)} <= -${pp(margin)} (upper ${pp(upper)})`,
  );
  let savingsOk = false;
  if (o.costSavings === null)
    reasons.push('savings_unmeasurable: cost savings have no interval (unknown or zero incumbent cost)');
  else if (o.costSavings.degenerate === true)
    reasons.push(
      `savings_interval_degenerate: every cluster has the same cost ratio (lower(S) ${pct(o.costSavings.lower)} with zero width); a collapsed interval is not evidence of a bound`,
    );
  else {
    savingsOk = o.costSavings.lower >= o.minSavings;
    reasons.push(
      savingsOk
        ? `savings_cleared: lower(S) ${pct(o.costSavings.lower)} >= ${pct(o.minSavings)}`
        : `savings_lower_bound_below_min: lower(S) ${pct(o.costSavings.lower)} < ${pct(o.minSavings)}`,
    );
  }
  if (qualityOk && savingsOk) return { decision: 'pass', reasons };
  return {
    decision: 'inconclusive',
    reasons: reasons.filter((r) => !r.startsWith('quality_noninferior') && !r.startsWith('savings_cleared')),
  };
}
