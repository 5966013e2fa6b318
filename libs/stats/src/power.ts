/**
 * Power planning for the paired non-inferiority comparison: minimum detectable effect (MDE) in
 * percentage points, clusters needed, and the sample sd of A-A differences that feeds them.
 */
import { normPpf } from './normal.js';

/**
 * The conservative prior for the sd of per-cluster quality differences: √0.5 ≈ 0.7071.
 * Source: binary quality, p = 0.5 on both arms, no correlation → Var(q_c − q_i) = 0.25 + 0.25.
 * (test/vectors/stats.json `mde_pp_paired_note`.)
 */
export const CONSERVATIVE_SD_DIFF: number = Math.SQRT1_2;

function checkProb(name: string, v: number): void {
  if (!(v > 0 && v < 1)) throw new RangeError(`${name} must be in (0, 1), got ${v}`);
}

/**
 * Minimum detectable effect of a paired comparison, in percentage points of quality.
 *
 * Shape: { sdDiff ≥ 0 (sd of the per-cluster difference, quality on the 0–1 scale), clusters ≥ 1,
 * alphaOneSided ∈ (0, 1), power ∈ (0, 1) } → MDE in pp (0–100 scale).
 * Formula: 100·(z₁₋α + z_power)·sdDiff/√clusters.
 * Errors: RangeError on a non-finite or negative sdDiff, clusters < 1, α or power ∉ (0, 1).
 * Source: DESIGN.md "Power plan"; the usual normal-approximation sample-size relation.
 */
export function mdePpPaired(o: { sdDiff: number; clusters: number; alphaOneSided: number; power: number }): number {
  if (!(Number.isFinite(o.sdDiff) && o.sdDiff >= 0)) throw new RangeError(`mdePpPaired: sdDiff must be a finite number >= 0, got ${o.sdDiff}`);
  if (!(o.clusters >= 1) || !Number.isFinite(o.clusters)) throw new RangeError(`mdePpPaired: clusters must be >= 1, got ${o.clusters}`);
  checkProb('mdePpPaired: alphaOneSided', o.alphaOneSided);
  checkProb('mdePpPaired: power', o.power);
  return (100 * (normPpf(1 - o.alphaOneSided) + normPpf(o.power)) * o.sdDiff) / Math.sqrt(o.clusters);
}

/** The power plan of one candidate comparison; see {@link powerPlan}. */
export interface PowerPlan {
  /** minimum detectable effect in pp at the given clusters, α and power */
  mdePp: number;
  /** the sd of per-cluster differences used (0–1 quality scale) */
  sdDiff: number;
  /** where sdDiff came from: measured A-A pairs, or the conservative prior √0.5 */
  sdSource: 'aa_pairs' | 'conservative_prior';
  /**
   * clusters needed so that MDE ≤ marginPp, i.e. ⌈(100·(z₁₋α + z_power)·sd/margin)²⌉;
   * null when marginPp is 0 (no finite sample powers a zero margin)
   */
  clustersNeededForMargin: number | null;
  /** true when mdePp ≤ marginPp: a candidate truly equal to the incumbent passes with ≥ `power` */
  powered: boolean;
}

/**
 * Power plan for a non-inferiority comparison at margin `marginPp`: it explains an inconclusive
 * verdict ("you need N clusters"), it is never the verdict.
 *
 * Shape: { clusters ≥ 1, sdDiff (from A-A pairs; null/undefined/non-positive/non-finite → the
 * conservative prior √0.5), alphaOneSided ∈ (0, 1), power (default 0.8), marginPp ≥ 0 (pp) } →
 * {@link PowerPlan}.
 * Why a zero A-A sd falls back to the prior: an sd of 0 says the incumbent is deterministic, not
 * that the candidate-minus-incumbent difference has no variance; using it would claim infinite power.
 * Errors: RangeError on clusters < 1, α or power ∉ (0, 1), marginPp < 0 or non-finite.
 * Source: DESIGN.md "Power plan"; MDE per {@link mdePpPaired}.
 * Defaults: power 0.8.
 */
export function powerPlan(o: { clusters: number; sdDiff?: number | null; alphaOneSided: number; power?: number; marginPp: number }): PowerPlan {
  const power = o.power ?? 0.8;
  if (!(Number.isFinite(o.marginPp) && o.marginPp >= 0)) throw new RangeError(`powerPlan: marginPp must be a finite number >= 0, got ${o.marginPp}`);
  const measured = typeof o.sdDiff === 'number' && Number.isFinite(o.sdDiff) && o.sdDiff > 0;
  const sdDiff = measured ? (o.sdDiff as number) : CONSERVATIVE_SD_DIFF;
  const mdePp = mdePpPaired({ sdDiff, clusters: o.clusters, alphaOneSided: o.alphaOneSided, power });
  const zSum = normPpf(1 - o.alphaOneSided) + normPpf(power);
  const clustersNeededForMargin = o.marginPp > 0 ? Math.max(1, Math.ceil(((100 * zSum * sdDiff) / o.marginPp) ** 2)) : null;
  return { mdePp, sdDiff, sdSource: measured ? 'aa_pairs' : 'conservative_prior', clustersNeededForMargin, powered: mdePp <= o.marginPp };
}

/**
 * Sample standard deviation (n − 1 denominator) of differences, e.g. the quality deltas of A-A pairs.
 *
 * Shape: at least two finite numbers → sd ≥ 0 (same unit as the input).
 * Errors: RangeError when fewer than 2 values or any value is not finite.
 * Source: Welford, B. P. (1962), "Note on a method for calculating corrected sums of squares and
 * products", Technometrics 4(3) — one pass, numerically stable.
 */
export function sdOfDifferences(diffs: number[]): number {
  if (diffs.length < 2) throw new RangeError(`sdOfDifferences: need at least 2 differences, got ${diffs.length}`);
  let mean = 0;
  let m2 = 0;
  for (let i = 0; i < diffs.length; i++) {
    const x = diffs[i]!;
    if (!Number.isFinite(x)) throw new RangeError(`sdOfDifferences: value at index ${i} is not finite (${x})`);
    const d = x - mean;
    mean += d / (i + 1);
    m2 += d * (x - mean);
  }
  return Math.sqrt(m2 / (diffs.length - 1));
}
