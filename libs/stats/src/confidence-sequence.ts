/**
 * Anytime-valid confidence sequences for a paired comparison that is looked at after every batch
 * (the `sequential` stopping rule): the quality delta D = ΣA/ΣW and the cost savings
 * S = 1 − ΣY/ΣX over near-duplicate clusters, each by testing-by-betting.
 *
 * Method (Waudby-Smith & Ramdas 2023, "Estimating means of bounded random variables by betting",
 * JRSS-B 86(1):1–27, §4 hedged capital / §5 predictable bets; Ville's inequality): for each null
 * value θ a wealth process K_t(θ) = Π_{i≤t}(1 + λ_i·x_i(θ)) with bounded increments of conditional
 * mean ≤ 0 under the null is a non-negative supermartingale, so P(∃t: K_t(θ) ≥ 1/α) ≤ α. The set
 * of θ not yet rejected at any look is a one-sided (1 − α) confidence sequence, valid however
 * often it is looked at and whenever the looking stops.
 *
 * Units and structure: the unit is the near-duplicate cluster (items of a cluster are not
 * independent), in arrival order. A cluster has weight W_c (Σ exact-duplicate weights), mean
 * quality difference d_c = A_c/W_c ∈ [−1, 1] and costs X_c (incumbent), Y_c (candidate) in USD.
 * D ≤ θ ⟺ E[W(d − θ)] ≤ 0 and S ≥ s ⟺ E[m((1 − s) − (2 − s)ρ)] ≥ 0 with m = X + Y and
 * ρ = Y/m ∈ [0, 1]: both are weighted means of bounded values, so the weights must be bounded for
 * the increments to be. They are scaled by a predictable bound, the largest weight among the
 * earlier clusters (the first cluster only sets the scale and is not bet on); a weight above the
 * bound is clipped to it and counted (`clipped`): for those clusters the estimand is the clipped
 * weight's, which the report says.
 *
 * Bets: one predictable sequence per side and quantity, independent of θ (so K_t(θ) is monotone
 * in θ and each bound is one bisection), tuned at the registered threshold (−margin for D,
 * min_savings for S) by the approximate growth-rate-optimal plug-in λ = μ̂/(σ̂² + μ̂²)
 * (aGRAPA, Waudby-Smith & Ramdas 2023 §B.3), shrunk towards 0 and truncated so that every wealth
 * factor stays ≥ 0.1 on the range where the bound is searched (within 25 pp of the threshold on
 * the far side; a bound beyond it is reported at the edge, which only loosens it).
 */

/** One near-duplicate cluster of paired items, in arrival order. */
export interface SequentialCluster {
  /** Σ of the items' exact-duplicate weights, > 0 */
  weight: number;
  /** weighted mean quality difference candidate − incumbent, in [−1, 1] */
  delta: number;
  /** incumbent cost of the cluster, USD, ≥ 0 (Σ weight·cost) */
  costIncumbentUsd: number;
  /** candidate cost of the cluster, USD, ≥ 0 */
  costCandidateUsd: number;
}

/** Outcome of a look: settled (pass, fail, futile) or not yet (continue). */
export type SequentialDecision = 'pass' | 'fail' | 'futile' | 'continue';

/** The confidence sequence at one look. */
export interface SequentialLook {
  /** clusters used at this look (a prefix of the arrival order) */
  clusters: number;
  /** running one-sided bounds on D (0–1 scale): lower at α, upper at α (intersection over looks) */
  delta: { lower: number; upper: number };
  /** running bounds on S (fraction); null when no cluster has a cost yet */
  savings: { lower: number; upper: number } | null;
  decision: SequentialDecision;
  /** why, as `<token>: <numbers>` */
  reason: string;
}

/** Settings of {@link sequentialLooks}. */
export interface SequentialSettings {
  /** one-sided α of each side for this candidate (already split over candidates and runs) */
  alpha: number;
  /** non-inferiority margin, percentage points ≥ 0 */
  marginPp: number;
  /** minimum savings, fraction */
  minSavings: number;
  /** no look settles before this many clusters (architecture.md honesty rule 10); default 8 */
  minClusters?: number;
  /** a broken hard gate or a breached cost ceiling fails the candidate at the first settling look */
  hardFail?: boolean;
}

/** Method name recorded in reports and bundles. */
export const SEQUENTIAL_METHOD =
  'betting confidence sequence over clusters (Waudby-Smith & Ramdas 2023; aGRAPA bets, predictable weight bound)';

/** every wealth factor stays ≥ 1 − BET_SHARE over the evaluated range */
const BET_SHARE = 0.9;
/** bounds are evaluated up to GAMMA beyond the registered threshold, on the side away from it */
const GAMMA = 0.25;
const PRIOR_VAR = 0.0625;

/** Scaled weights: w̃_i = min(W_i, B_i)/B_i with B_i = max_{j<i} W_j; w̃_1 = 0 (not bet on). */
function scaledWeights(ws: readonly number[]): { scaled: Float64Array; clipped: number } {
  const out = new Float64Array(ws.length);
  let max = 0;
  let clipped = 0;
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i]!;
    if (i > 0 && max > 0) {
      const b = max;
      if (w > b) clipped++;
      out[i] = Math.min(w, b) / b;
    }
    max = Math.max(max, w);
  }
  return { scaled: out, clipped };
}

/** aGRAPA bets on the increments xs, truncated to [0, cap] (predictable: bet i uses xs[0..i−1] only). */
function grapaBets(xs: Float64Array, active: Float64Array, cap: number): Float64Array {
  const bets = new Float64Array(xs.length);
  let n = 0;
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < xs.length; i++) {
    if (active[i]! > 0) {
      const mu = s1 / (n + 1);
      const mean = n > 0 ? s1 / n : 0;
      const v = (PRIOR_VAR + Math.max(0, s2 - n * mean * mean)) / (n + 1);
      bets[i] = Math.min(cap, Math.max(0, mu / (v + mu * mu)));
      n++;
      s1 += xs[i]!;
      s2 += xs[i]! * xs[i]!;
    }
  }
  return bets;
}

/** log wealth at θ of Π(1 + λ_i·f_i(θ)) over the first n increments (each factor ≥ 1 − BET_SHARE by the caps). */
function logWealth(n: number, bets: Float64Array, inc: (i: number) => number): number {
  let lw = 0;
  for (let i = 0; i < n; i++) {
    const l = bets[i]!;
    if (l !== 0) lw += Math.log1p(l * inc(i));
  }
  return lw;
}

/** RangeError unless `looks` are increasing integers in 1..n (`fn` names the caller). */
function checkLooks(fn: string, looks: readonly number[], n: number): void {
  let prev = 0;
  for (const k of looks) {
    if (!Number.isInteger(k) || k <= prev || k > n)
      throw new RangeError(`${fn}: looks must be increasing integers in 1..${n}, got ${k}`);
    prev = k;
  }
}

/**
 * The θ where a monotone log wealth crosses the threshold, by bisection on [lo, hi].
 * `rejected(θ)` must be monotone: true on one side of the crossing.
 */
function crossing(lo: number, hi: number, rejectedAtLo: boolean, rejected: (t: number) => boolean): number {
  for (let k = 0; k < 50; k++) {
    const mid = 0.5 * (lo + hi);
    if (rejected(mid) === rejectedAtLo) lo = mid;
    else hi = mid;
  }
  return rejectedAtLo ? hi : lo;
}

/**
 * Confidence sequences for D and S and the sequential decision at each look.
 *
 * Shape: clusters in arrival order (see {@link SequentialCluster}); looks = increasing cluster
 * counts ≤ clusters.length; settings {alpha ∈ (0, 0.5), marginPp ≥ 0, minSavings, minClusters?
 * (default 8), hardFail?} → { looks: one {@link SequentialLook} per look, settledAt: index of the
 * first settled look or null, clipped: clusters whose weight was clipped (quality, savings) }.
 * Bounds are running intersections over the looks, each side at one-sided α (so the two-sided
 * coverage is 1 − 2α, as the fixed-n decision interval's level 1 − 2α_adj).
 * Decision at a look (from minClusters on): fail when upper(D) < −margin (or hardFail); pass when
 * lower(D) > −margin and lower(S) ≥ minSavings; futile when upper(S) < minSavings (a pass is
 * excluded at level α); else continue. Once settled a look stays settled (later looks repeat it).
 * Errors: RangeError on α ∉ (0, 0.5), a negative margin, a weight ≤ 0, a delta outside [−1, 1],
 * a negative cost, or looks that are not increasing within 1..clusters.length.
 * Source: Waudby-Smith & Ramdas (2023), see the module comment; docs/statistics.md "Sequential".
 */
export function sequentialLooks(
  clusters: readonly SequentialCluster[],
  looks: readonly number[],
  s: SequentialSettings,
): { looks: SequentialLook[]; settledAt: number | null; clipped: { quality: number; savings: number } } {
  if (!(s.alpha > 0 && s.alpha < 0.5))
    throw new RangeError(`sequentialLooks: alpha must be in (0, 0.5), got ${s.alpha}`);
  if (!(s.marginPp >= 0)) throw new RangeError(`sequentialLooks: marginPp must be >= 0, got ${s.marginPp}`);
  if (!Number.isFinite(s.minSavings)) throw new RangeError('sequentialLooks: minSavings must be finite');
  clusters.forEach((c, i) => {
    if (!(c.weight > 0)) throw new RangeError(`sequentialLooks: cluster ${i} weight must be > 0, got ${c.weight}`);
    if (!(c.delta >= -1 && c.delta <= 1))
      throw new RangeError(`sequentialLooks: cluster ${i} delta must be in [-1, 1], got ${c.delta}`);
    if (!(c.costIncumbentUsd >= 0 && c.costCandidateUsd >= 0))
      throw new RangeError(`sequentialLooks: cluster ${i} costs must be >= 0`);
  });
  checkLooks('sequentialLooks', looks, clusters.length);
  const minClusters = s.minClusters ?? 8;
  const margin = s.marginPp / 100;
  const thr = Math.log(1 / s.alpha);
  const n = clusters.length;

  // quality: x(θ) = w̃(d − θ) ≥ −(1 + θ); the lower bound is searched on θ ≤ θ₀ + γ, the upper on
  // θ ≥ θ₀ − γ (θ₀ = −margin), and the caps keep every factor ≥ 1 − BET_SHARE there. A bound
  // beyond that range is reported at its edge (a looser bound, never a tighter one).
  const qw = scaledWeights(clusters.map((c) => c.weight));
  const d = Float64Array.from(clusters, (c) => c.delta);
  const up = new Float64Array(n);
  const down = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    up[i] = qw.scaled[i]! * (d[i]! + margin);
    down[i] = -up[i]!;
  }
  const qLoMax = Math.min(1, -margin + GAMMA);
  const qHiMin = Math.max(-1, -margin - GAMMA);
  const betUp = grapaBets(up, qw.scaled, BET_SHARE / (1 + qLoMax));
  const betDown = grapaBets(down, qw.scaled, BET_SHARE / (1 - qHiMin));

  // savings: v(s) = m̃((1 − s) − (2 − s)ρ) ∈ [−1, 1 − s]; the upper bound is searched on s ≥ s₀ − γ;
  // clusters with m = 0 carry nothing
  const m = clusters.map((c) => c.costIncumbentUsd + c.costCandidateUsd);
  const priced = m.map((x) => x > 0);
  const mw = scaledWeights(m.filter((_, i) => priced[i]));
  const mScaled = new Float64Array(n);
  const rho = new Float64Array(n);
  {
    let j = 0;
    for (let i = 0; i < n; i++)
      if (priced[i]) {
        mScaled[i] = mw.scaled[j++]!;
        rho[i] = clusters[i]!.costCandidateUsd / m[i]!;
      }
  }
  const v = (i: number, sv: number): number => mScaled[i]! * (1 - sv - (2 - sv) * rho[i]!);
  const s0 = Math.min(1, Math.max(-1, s.minSavings));
  const sUp = Float64Array.from({ length: n }, (_, i) => v(i, s0));
  const sDown = sUp.map((x) => -x);
  const sHiMin = Math.max(-1, s0 - GAMMA);
  const betSUp = grapaBets(sUp, mScaled, BET_SHARE);
  const betSDown = grapaBets(sDown, mScaled, BET_SHARE / (1 - sHiMin));

  const out: SequentialLook[] = [];
  let settledAt: number | null = null;
  let lo = -1;
  let hi = 1;
  let sLo = -1;
  let sHi = 1;
  for (const [li, k] of looks.entries()) {
    // lower bound of D: K⁺(θ) decreasing in θ; rejected (D ≤ θ excluded) below the crossing
    const rejLow = (t: number) => logWealth(k, betUp, (i) => qw.scaled[i]! * (d[i]! - t)) >= thr;
    const rejHigh = (t: number) => logWealth(k, betDown, (i) => qw.scaled[i]! * (t - d[i]!)) >= thr;
    const L = rejLow(-1) ? crossing(-1, qLoMax, true, rejLow) : -1;
    const U = rejHigh(1) ? crossing(qHiMin, 1, false, rejHigh) : 1;
    lo = Math.max(lo, L);
    hi = Math.min(hi, U);
    let savings: SequentialLook['savings'] = null;
    if (priced.slice(0, k).some(Boolean)) {
      const rejSLow = (t: number) => logWealth(k, betSUp, (i) => v(i, t)) >= thr;
      const rejSHigh = (t: number) => logWealth(k, betSDown, (i) => -v(i, t)) >= thr;
      const SL = rejSLow(-1) ? crossing(-1, 1, true, rejSLow) : -1;
      const SU = rejSHigh(1) ? crossing(sHiMin, 1, false, rejSHigh) : 1;
      sLo = Math.max(sLo, SL);
      sHi = Math.min(sHi, SU);
      savings = { lower: sLo, upper: sHi };
    }
    let decision: SequentialDecision = 'continue';
    let reason = `continue: lower(D) ${pp(lo)}, upper(D) ${pp(hi)} vs -${pp(margin)}`;
    if (settledAt !== null) {
      decision = out[settledAt]!.decision;
      reason = out[settledAt]!.reason;
    } else if (k >= minClusters) {
      if (s.hardFail === true) {
        decision = 'fail';
        reason = 'hard_fail: a hard assertion broke or a per-request cost ceiling was exceeded';
      } else if (hi < -margin) {
        decision = 'fail';
        reason = `quality_upper_bound_below_margin: upper(D) ${pp(hi)} < -${pp(margin)}`;
      } else if (lo > -margin && savings !== null && savings.lower >= s.minSavings) {
        decision = 'pass';
        reason = `pass: lower(D) ${pp(lo)} > -${pp(margin)} and lower(S) ${pct(savings.lower)} >= ${pct(s.minSavings)}`;
      } else if (savings !== null && savings.upper < s.minSavings) {
        decision = 'futile';
        reason = `savings_upper_bound_below_min: upper(S) ${pct(savings.upper)} < ${pct(s.minSavings)}`;
      }
      if (decision !== 'continue') settledAt = li;
    } else reason = `continue: ${k} clusters, below the minimum ${minClusters}`;
    out.push({ clusters: k, delta: { lower: lo, upper: hi }, savings, decision, reason });
  }
  return { looks: out, settledAt, clipped: { quality: qw.clipped, savings: mw.clipped } };
}

/**
 * The look at which {@link sequentialLooks} settles and its decision, without the bounds: the same
 * bets and thresholds, evaluated only at the registered thresholds (−margin for D, minSavings for
 * S). Since each bound is a running intersection of monotone tests, "upper(D) < −margin" holds at a
 * look exactly when the wealth against D ≥ −margin has reached 1/α at that look or an earlier one
 * (likewise for the other three conditions), so one pass over the clusters suffices: O(n) instead
 * of O(n · looks · bisection steps). For simulations (the dry run's spend plan); agrees with
 * sequentialLooks up to the bisection tolerance (2⁻⁵⁰ of the range), checked in tests.
 * Shape and errors as {@link sequentialLooks}; hardFail is not supported (RangeError).
 */
export function sequentialSettling(
  clusters: readonly SequentialCluster[],
  looks: readonly number[],
  s: SequentialSettings,
): { settledAt: number | null; decision: SequentialDecision } {
  if (s.hardFail === true) throw new RangeError('sequentialSettling: hardFail is not supported');
  if (!(s.alpha > 0 && s.alpha < 0.5))
    throw new RangeError(`sequentialSettling: alpha must be in (0, 0.5), got ${s.alpha}`);
  checkLooks('sequentialSettling', looks, clusters.length);
  const minClusters = s.minClusters ?? 8;
  const margin = s.marginPp / 100;
  const thr = Math.log(1 / s.alpha);
  const n = clusters.length;
  const qw = scaledWeights(clusters.map((c) => c.weight));
  const up = new Float64Array(n);
  const down = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const d = clusters[i]!.delta;
    if (!(d >= -1 && d <= 1)) throw new RangeError(`sequentialSettling: cluster ${i} delta must be in [-1, 1]`);
    up[i] = qw.scaled[i]! * (d + margin);
    down[i] = -up[i]!;
  }
  const qLoMax = Math.min(1, -margin + GAMMA);
  const qHiMin = Math.max(-1, -margin - GAMMA);
  const betUp = grapaBets(up, qw.scaled, BET_SHARE / (1 + qLoMax));
  const betDown = grapaBets(down, qw.scaled, BET_SHARE / (1 - qHiMin));
  const m = clusters.map((c) => c.costIncumbentUsd + c.costCandidateUsd);
  const priced = m.map((x) => x > 0);
  const mw = scaledWeights(m.filter((_, i) => priced[i]));
  const sv = new Float64Array(n);
  const active = new Float64Array(n);
  const s0 = Math.min(1, Math.max(-1, s.minSavings));
  for (let i = 0, j = 0; i < n; i++)
    if (priced[i]) {
      active[i] = mw.scaled[j++]!;
      sv[i] = active[i]! * (1 - s0 - (2 - s0) * (clusters[i]!.costCandidateUsd / m[i]!));
    }
  const sDown = sv.map((x) => -x);
  const betSUp = grapaBets(sv, active, BET_SHARE);
  const betSDown = grapaBets(sDown, active, BET_SHARE / (1 - Math.max(-1, s0 - GAMMA)));
  let wUp = 0;
  let wDown = 0;
  let wSUp = 0;
  let wSDown = 0;
  let qualityAbove = false; // lower(D) > −margin
  let qualityBelow = false; // upper(D) < −margin
  let savingsMet = false; // lower(S) ≥ minSavings
  let savingsShort = false; // upper(S) < minSavings
  let anyPriced = false;
  let i = 0;
  for (const [li, k] of looks.entries()) {
    for (; i < k; i++) {
      if (betUp[i]! !== 0) wUp += Math.log1p(betUp[i]! * up[i]!);
      if (betDown[i]! !== 0) wDown += Math.log1p(betDown[i]! * down[i]!);
      if (betSUp[i]! !== 0) wSUp += Math.log1p(betSUp[i]! * sv[i]!);
      if (betSDown[i]! !== 0) wSDown += Math.log1p(betSDown[i]! * sDown[i]!);
      anyPriced ||= priced[i]!;
    }
    qualityAbove ||= wUp >= thr;
    qualityBelow ||= wDown >= thr;
    if (anyPriced) {
      savingsMet ||= wSUp >= thr;
      savingsShort ||= wSDown >= thr;
    }
    if (k < minClusters) continue;
    if (qualityBelow) return { settledAt: li, decision: 'fail' };
    if (qualityAbove && savingsMet) return { settledAt: li, decision: 'pass' };
    if (savingsShort) return { settledAt: li, decision: 'futile' };
  }
  return { settledAt: null, decision: 'continue' };
}

const pp = (x: number): string => `${(x * 100).toFixed(2)}pp`;
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
