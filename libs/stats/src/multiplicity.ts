/**
 * Multiple-comparison control: Holm–Bonferroni adjusted p-values, Bonferroni per-comparison α, and
 * α-spending across repeated runs of the same comparison.
 */

/**
 * Holm–Bonferroni step-down adjusted p-values, in the input order.
 *
 * Shape: p-values in [0, 1] → adjusted p-values in [0, 1], same length and order; monotone in the
 * sorted order and capped at 1. Empty in → empty out.
 * Errors: RangeError when a p-value is not a number in [0, 1].
 * Source: Holm, S. (1979), "A simple sequentially rejective multiple test procedure", Scand. J.
 * Statist. 6(2), 65–70: with p₍₁₎ ≤ … ≤ p₍ₘ₎, adj₍ᵢ₎ = min(1, maxⱼ≤ᵢ (m − j + 1)·p₍ⱼ₎)
 * (as statsmodels `multipletests(method="holm")`). Ties keep their input order (stable sort).
 */
export function holm(pValues: number[]): number[] {
  const m = pValues.length;
  pValues.forEach((p, i) => {
    if (!(p >= 0 && p <= 1)) throw new RangeError(`holm: p-value at index ${i} must be in [0, 1], got ${p}`);
  });
  const order = pValues.map((_, i) => i).sort((a, b) => pValues[a]! - pValues[b]!);
  const out = new Array<number>(m);
  let running = 0;
  order.forEach((idx, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * pValues[idx]!));
    out[idx] = running;
  });
  return out;
}

/**
 * Bonferroni per-comparison α: α / comparisons.
 *
 * Shape: family-wise α ∈ (0, 1), comparisons ≥ 1 (integer, e.g. the number of candidate arms) → α.
 * Errors: RangeError when α ∉ (0, 1) or comparisons is not an integer ≥ 1.
 * Source: Bonferroni inequality; docs/architecture.md "Statistics of a verdict" (K candidates → α/K).
 */
export function bonferroniAlpha(alpha: number, comparisons: number): number {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`bonferroniAlpha: alpha must be in (0, 1), got ${alpha}`);
  if (!Number.isInteger(comparisons) || comparisons < 1)
    throw new RangeError(`bonferroniAlpha: comparisons must be an integer >= 1, got ${comparisons}`);
  return alpha / comparisons;
}

/**
 * α spent by run r of the same comparison: α·6/(π²r²).
 *
 * Shape: α ∈ (0, 1), runIndex r ≥ 1 (integer; the first run is 1) → α_r. Σ_{r≥1} α_r = α
 * (Basel problem, Σ1/r² = π²/6), so re-running a comparison until it passes cannot push the
 * family-wise false-pass rate above α.
 * Errors: RangeError when α ∉ (0, 1) or runIndex is not an integer ≥ 1.
 * Source: docs/architecture.md "Statistics of a verdict" (α-spending across repeated runs).
 */
export function alphaSpent(alpha: number, runIndex: number): number {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alphaSpent: alpha must be in (0, 1), got ${alpha}`);
  if (!Number.isInteger(runIndex) || runIndex < 1)
    throw new RangeError(`alphaSpent: runIndex must be an integer >= 1, got ${runIndex}`);
  return (alpha * 6) / (Math.PI * Math.PI * runIndex * runIndex);
}

/**
 * The two-sided bootstrap interval level to use for one candidate so that its lower bound is a
 * one-sided test at the adjusted α: level = 1 − 2·α_adj with α_adj = alphaSpent(α / K, run).
 *
 * Shape: { alphaOneSided ∈ (0, 0.5), candidates K ≥ 1, runIndex r ≥ 1 (default 1) } →
 * { level, alphaAdjusted }. Example: α = 0.05, K = 1, r = 1 → α_adj = 0.05·6/π² ≈ 0.0304, level ≈ 0.939.
 * Note: with runIndex 1 the spending function already spends only 6/π² ≈ 61% of α; pass
 * `runIndex: null` to skip α-spending (a single, pre-registered run), which gives level 1 − 2α/K.
 * Errors: RangeError from bonferroniAlpha / alphaSpent on bad inputs.
 * Source: docs/architecture.md "Statistics of a verdict"; a (1 − 2α) two-sided percentile interval's lower bound
 * is a one-sided level-α test.
 */
export function intervalLevel(o: { alphaOneSided: number; candidates: number; runIndex?: number | null }): {
  level: number;
  alphaAdjusted: number;
} {
  if (!(o.alphaOneSided > 0 && o.alphaOneSided < 0.5))
    throw new RangeError(`intervalLevel: alphaOneSided must be in (0, 0.5), got ${o.alphaOneSided}`);
  const perCandidate = bonferroniAlpha(o.alphaOneSided, o.candidates);
  const runIndex = o.runIndex === undefined ? 1 : o.runIndex;
  const alphaAdjusted = runIndex === null ? perCandidate : alphaSpent(perCandidate, runIndex);
  return { level: 1 - 2 * alphaAdjusted, alphaAdjusted };
}
