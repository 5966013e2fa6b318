/**
 * Power planning for the paired non-inferiority comparison: minimum detectable effect (MDE) in
 * percentage points, clusters needed, and the sample sd of A-A differences that feeds them.
 */
import { normPpf } from './normal.js';
import { chiSquarePpf, studentTPpf } from './distributions.js';

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
 * Source: docs/architecture.md "Statistics of a verdict" (power plan); the usual normal-approximation sample-size relation.
 */
export function mdePpPaired(o: { sdDiff: number; clusters: number; alphaOneSided: number; power: number }): number {
  if (!(Number.isFinite(o.sdDiff) && o.sdDiff >= 0))
    throw new RangeError(`mdePpPaired: sdDiff must be a finite number >= 0, got ${o.sdDiff}`);
  if (!(o.clusters >= 1) || !Number.isFinite(o.clusters))
    throw new RangeError(`mdePpPaired: clusters must be >= 1, got ${o.clusters}`);
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
 * Source: docs/architecture.md "Statistics of a verdict" (power plan); MDE per {@link mdePpPaired}.
 * Defaults: power 0.8.
 */
export function powerPlan(o: {
  clusters: number;
  sdDiff?: number | null;
  alphaOneSided: number;
  power?: number;
  marginPp: number;
}): PowerPlan {
  const power = o.power ?? 0.8;
  if (!(Number.isFinite(o.marginPp) && o.marginPp >= 0))
    throw new RangeError(`powerPlan: marginPp must be a finite number >= 0, got ${o.marginPp}`);
  const measured = typeof o.sdDiff === 'number' && Number.isFinite(o.sdDiff) && o.sdDiff > 0;
  const sdDiff = measured ? (o.sdDiff as number) : CONSERVATIVE_SD_DIFF;
  const mdePp = mdePpPaired({ sdDiff, clusters: o.clusters, alphaOneSided: o.alphaOneSided, power });
  const zSum = normPpf(1 - o.alphaOneSided) + normPpf(power);
  const clustersNeededForMargin =
    o.marginPp > 0 ? Math.max(1, Math.ceil(((100 * zSum * sdDiff) / o.marginPp) ** 2)) : null;
  return {
    mdePp,
    sdDiff,
    sdSource: measured ? 'aa_pairs' : 'conservative_prior',
    clustersNeededForMargin,
    powered: mdePp <= o.marginPp,
  };
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

/** Where {@link powerPlanFromPairs} took its sd from. */
export type PairedSdSource = 'paired_upper_bound' | 'conservative_prior';

/** The power plan of {@link powerPlanFromPairs}. MDE and clusters needed use t quantiles with k − 1 df. */
export interface PairedPowerPlan {
  /** MDE in pp at `clusters` (null when clusters < 2: no t quantile) */
  mdePp: number | null;
  /** the sd used: max(upper confidence bound or prior, the rare-failure floor at the margin) */
  sdDiff: number;
  sdSource: PairedSdSource;
  /** the observed sd of the paired per-cluster difference (null before enough pairs) */
  sdObserved: number | null;
  /** its one-sided upper confidence bound at `confidence` (null before enough pairs) */
  sdUpperBound: number | null;
  /** clusters needed so that MDE ≤ margin; null for a zero margin */
  clustersNeededForMargin: number | null;
  powered: boolean;
}

/**
 * Power plan from the candidate-vs-incumbent paired differences themselves (docs/architecture.md "Statistics of a verdict", power plan): the spread that decides a comparison is that of the paired difference between two
 * different tiers, not of the incumbent against itself (A-A pairs are the noise floor only).
 *
 * Shape: { clusters k (where the MDE is stated), observed: { sd (sample sd of the per-cluster
 * linearised difference u_c, see pairedDifferenceSpread), clusters m } | null, minClusters
 * (observed pairs are used from m ≥ minClusters; default 8), designEffect ≥ 1 (Kish; default 1),
 * alphaOneSided, power (default 0.8), marginPp ≥ 0, confidence (default 0.9) } → {@link PairedPowerPlan}.
 * Rules:
 * - m ≥ minClusters: sd = the larger of observed·√((m − 1)/χ²_{1−confidence, m−1}) (the
 *   normal-theory upper confidence bound on an sd) and, when `observed.meanSquare` (mean of the
 *   squared cluster-mean differences, in [0, 1]) is given, √(deff·U) with U the Wilson score upper
 *   bound on that mean at `confidence` — the chi-square bound alone is far too optimistic for
 *   near-deterministic tiers, where a handful of pairs often shows no discordance at all. So the
 *   stated MDE is too small in at most about 1 − confidence of reports;
 * - otherwise the prior √0.5·√deff (binary, p = ½ on both arms, no correlation, inflated by the
 *   design effect of unequal cluster weights);
 * - either way at least the rare-failure floor √(m_f(1 − m_f)·deff) at the margin m_f = margin/100,
 *   the spread the decision interval itself assumes when few discordant pairs have been seen
 *   (pairedScoreIntervals), so an observed sd of 0 is never a claim of infinite power: no cliff.
 * MDE = 100·(t_{1−α,k−1} + t_{power,k−1})·sd/√k; clusters needed = the least k with MDE(k) ≤ margin.
 * Errors: RangeError on clusters < 0, α, power or confidence ∉ (0, 1), marginPp < 0, a negative
 * or non-finite observed sd, designEffect < 1.
 * Source: docs/architecture.md "Statistics of a verdict" (power plan); chi-square bound on a variance (e.g. Casella & Berger 2002
 * §9.2); Kish (1965) §11.7.
 */
export function powerPlanFromPairs(o: {
  clusters: number;
  observed: { sd: number; clusters: number; meanSquare?: number } | null;
  minClusters?: number;
  designEffect?: number;
  alphaOneSided: number;
  power?: number;
  marginPp: number;
  confidence?: number;
}): PairedPowerPlan {
  const power = o.power ?? 0.8;
  const confidence = o.confidence ?? 0.9;
  const deff = o.designEffect ?? 1;
  const minClusters = o.minClusters ?? 8;
  checkProb('powerPlanFromPairs: alphaOneSided', o.alphaOneSided);
  checkProb('powerPlanFromPairs: power', power);
  checkProb('powerPlanFromPairs: confidence', confidence);
  if (!(Number.isFinite(o.marginPp) && o.marginPp >= 0))
    throw new RangeError(`powerPlanFromPairs: marginPp must be a finite number >= 0, got ${o.marginPp}`);
  if (!(Number.isFinite(o.clusters) && o.clusters >= 0))
    throw new RangeError(`powerPlanFromPairs: clusters must be >= 0, got ${o.clusters}`);
  if (!(Number.isFinite(deff) && deff >= 1 - 1e-12))
    throw new RangeError(`powerPlanFromPairs: designEffect must be >= 1, got ${deff}`);
  if (o.observed !== null && !(Number.isFinite(o.observed.sd) && o.observed.sd >= 0))
    throw new RangeError(`powerPlanFromPairs: observed sd must be a finite number >= 0, got ${o.observed.sd}`);
  const useObserved = o.observed !== null && o.observed.clusters >= Math.max(2, minClusters);
  let sdUpperBound: number | null = null;
  let base: number;
  if (useObserved) {
    const m = o.observed!.clusters;
    sdUpperBound = o.observed!.sd * Math.sqrt((m - 1) / chiSquarePpf(1 - confidence, m - 1));
    const ms = o.observed!.meanSquare;
    if (ms !== undefined) {
      if (!(ms >= 0 && ms <= 1))
        throw new RangeError(`powerPlanFromPairs: observed meanSquare must be in [0, 1], got ${ms}`);
      // Wilson-type upper bound on E[d̄_c²] (a mean of [0, 1] values, variance ≤ μ(1 − μ)):
      // few discordant pairs seen is not proof of few discordant pairs
      const z = normPpf(confidence);
      const wilsonUpper =
        (ms + (z * z) / (2 * m) + z * Math.sqrt((ms * (1 - ms)) / m + (z * z) / (4 * m * m))) / (1 + (z * z) / m);
      sdUpperBound = Math.max(sdUpperBound, Math.sqrt(Math.min(1, wilsonUpper) * deff));
    }
    base = sdUpperBound;
  } else base = CONSERVATIVE_SD_DIFF * Math.sqrt(deff);
  const mf = o.marginPp / 100;
  const floor = Math.sqrt(Math.min(0.25, mf * (1 - mf)) * deff);
  const sdDiff = Math.max(base, floor);
  const mdeAt = (k: number): number =>
    (100 * (studentTPpf(1 - o.alphaOneSided, k - 1) + studentTPpf(power, k - 1)) * sdDiff) / Math.sqrt(k);
  const mdePp = o.clusters >= 2 ? mdeAt(o.clusters) : null;
  let clustersNeededForMargin: number | null = null;
  if (o.marginPp > 0) {
    const zSum = normPpf(1 - o.alphaOneSided) + normPpf(power);
    let k = Math.max(2, Math.ceil(((100 * zSum * sdDiff) / o.marginPp) ** 2));
    // t quantiles exceed z: step up from the normal-theory answer (MDE(k) is decreasing in k)
    while (mdeAt(k) > o.marginPp) k = Math.max(k + 1, Math.ceil(k * (mdeAt(k) / o.marginPp) ** 2));
    while (k > 2 && mdeAt(k - 1) <= o.marginPp) k--;
    clustersNeededForMargin = k;
  }
  return {
    mdePp,
    sdDiff,
    sdSource: useObserved ? 'paired_upper_bound' : 'conservative_prior',
    sdObserved: useObserved ? o.observed!.sd : null,
    sdUpperBound,
    clustersNeededForMargin,
    powered: mdePp !== null && o.marginPp > 0 && mdePp <= o.marginPp,
  };
}
