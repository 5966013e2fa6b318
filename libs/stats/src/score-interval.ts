/**
 * Small-sample intervals for the paired comparison: a score-type, cluster-robust interval for the
 * quality delta D whose support reaches the bounds of d, and a log-ratio interval for cost savings S.
 * Both use Student t critical values with k − 1 degrees of freedom (k = clusters).
 */
import { clusterSums, type PairedInput } from './cluster-sums.js';
import { studentTPpf, studentTUpperPpf } from './distributions.js';

/** A two-sided interval for D or S with its small-sample diagnostics. */
export interface ScoreInterval {
  point: number;
  lower: number;
  upper: number;
  /**
   * true when the data show no spread at all (every cluster gives the same value): the interval
   * then rests on the unseen bound point alone (D) or has zero width (S) and is not evidence of a bound.
   */
  degenerate: boolean;
}

/** Output of {@link pairedScoreIntervals}. */
export interface PairedScoreIntervals {
  qualityDelta: ScoreInterval;
  /** null when a cost is unknown (NaN) or the incumbent's weighted cost is 0 */
  costSavings: ScoreInterval | null;
  /** clusters k; the t quantile has k − 1 degrees of freedom */
  clusters: number;
  /** Kish design effect of unequal cluster weights, k·ΣW²/(ΣW)² ≥ 1 */
  designEffect: number;
  /** the two-sided level used */
  level: number;
}

/**
 * Two-sided intervals for the quality delta D = Σw(q_c − q_i)/Σw and the cost savings
 * S = 1 − Σw·x_c/Σw·x_i of one candidate, built to keep their coverage at every k ≥ 2 clusters
 * (the fold uses them from MIN_ARM_OBSERVATIONS = 8 pairs), for binary or continuous quality,
 * clustered or not.
 *
 * Quality delta — a score interval (the set of Δ a score test does not reject):
 *   u_c(Δ) = (A_c − Δ·W_c)/W̄ per cluster (A_c = Σ_{i∈c} w_i·d_i, W_c = Σ_{i∈c} w_i, W̄ = ΣW/k),
 *   T(Δ) = |D − Δ|·√k / √(V₀(Δ)·k/(k − 1)),   bounds where T(Δ) = t_{k−1, (1+level)/2}.
 * V₀(Δ) is the variance of u(Δ) under the distribution of largest likelihood with mean Δ
 * (empirical likelihood of the ratio's estimating equation, Qin & Lawless 1994), whose support is
 * the observed clusters plus one zero-count cluster at the bound of d on Δ's side (d = −1 below D,
 * +1 above) with the root-mean-square cluster weight. The bound point takes mass only when the
 * observed clusters cannot reach Δ more likely: it stands for the rare failures (or successes) a
 * small sample may not have seen. For unclustered binary pairs this is the constrained multinomial
 * MLE of Tango's score interval; with no discordant pair among k it gives ±t²/(k − 1 + t²), the
 * Wilson-type zero-event bound, where a percentile bootstrap collapses to [0, 0]. The k/(k − 1)
 * factor and t with k − 1 df are the usual few-clusters rules for cluster-robust inference.
 * degenerate (D) = every cluster has the same u (no spread at all: the interval rests on the bound
 * point alone).
 *
 * Cost savings — delta method on the log ratio of totals: ln R = ln(ΣY/ΣX),
 *   se² = k/(k − 1)·Σ_c (Y_c/ΣY − X_c/ΣX)²,  S ∈ [1 − R·e^{t·se}, 1 − R·e^{−t·se}].
 * degenerate (S) = se is 0 (every cluster has the same cost ratio): zero width, not evidence.
 * A candidate of zero cost gives S = 1 exactly (not degenerate: nothing is estimated).
 *
 * Shape: items (≥ 1, as PairedItem objects or PairedColumns; k ≥ 2 clusters for a finite t) and { level ∈ (0, 1) } (two-sided) or
 * { oneSidedTail ∈ (0, 0.5) } (each bound at that one-sided level, t from the upper tail directly,
 * for levels too close to 1 to write as a double) → {@link PairedScoreIntervals}.
 * With k = 1 the interval is the whole range (D ∈ [−1, 1], S unbounded below).
 * Deterministic; O(n + k·60·60) (bisection on Δ, and on the EL multiplier inside).
 * Errors: RangeError on empty input, a weight ≤ 0 or non-finite, a quality ∉ [0, 1], a negative or
 * infinite cost, or level ∉ (0, 1).
 * Source: Tango (1998) Stat Med 17:891 (score interval for paired proportions); Wilson (1927) JASA
 * 22:209; Owen (2001) Empirical Likelihood §3.14, Qin & Lawless (1994) Ann Stat 22:300
 * (estimating equations); Cameron & Miller (2015) J Hum Resour 50:317 §VI (few clusters: t with
 * G − 1 df); Kish (1965) Survey Sampling §11.7 (design effect of unequal weights); Cochran (1977)
 * Sampling Techniques §6.9 (ratio estimator).
 */
export function pairedScoreIntervals(
  items: PairedInput,
  o: { level: number } | { oneSidedTail: number },
): PairedScoreIntervals {
  const tail = 'oneSidedTail' in o ? o.oneSidedTail : null;
  if (tail !== null && !(tail > 0 && tail < 0.5))
    throw new RangeError(`pairedScoreIntervals: oneSidedTail must be in (0, 0.5), got ${tail}`);
  const level = 'level' in o ? o.level : 1 - 2 * tail!;
  if (tail === null && !(level > 0 && level < 1))
    throw new RangeError(`pairedScoreIntervals: level must be in (0, 1), got ${level}`);
  const s = clusterSums(items, 'pairedScoreIntervals');
  const { k, W, A, X, Y } = s;
  let sw = 0;
  let sa = 0;
  let sw2 = 0;
  let sx = 0;
  let sy = 0;
  for (let c = 0; c < k; c++) {
    sw += W[c]!;
    sa += A[c]!;
    sw2 += W[c]! * W[c]!;
    sx += X[c]!;
    sy += Y[c]!;
  }
  const D = sa / sw;
  const deff = (k * sw2) / (sw * sw);
  const wbar = sw / k;
  // a tail given directly keeps its precision where 1 − tail would round (early group-sequential looks)
  const t =
    k < 2
      ? Number.POSITIVE_INFINITY
      : tail !== null
        ? studentTUpperPpf(tail, k - 1)
        : studentTPpf((1 + level) / 2, k - 1);

  // Empirical cluster-robust variance of u_c (does not depend on Δ: u_c − ū = (A_c − D·W_c)/W̄).
  let vEmp = 0;
  if (k >= 2) {
    for (let c = 0; c < k; c++) {
      const e = (A[c]! - D * W[c]!) / wbar;
      vEmp += e * e;
    }
    vEmp /= k - 1;
  }
  const degenerateD = !(vEmp > 1e-24);
  const small = k >= 2 ? k / (k - 1) : Number.POSITIVE_INFINITY;
  const g = new Float64Array(k);
  // the bound cluster has the root-mean-square weight, so a failure there carries the design effect
  const rmsW = Math.sqrt(deff);
  /**
   * Variance of u(Δ) under the constrained maximum-likelihood distribution with mean Δ, over the
   * observed clusters plus one zero-count cluster of root-mean-square weight at the bound on Δ's side
   * (d = −1 below D, +1 above). This is the nonparametric (empirical) likelihood of the ratio's
   * estimating equation with its support extended to the bounds of d; for unclustered binary
   * pairs it is the constrained multinomial MLE of Tango's score test. The bound point takes mass
   * exactly when the observed clusters alone cannot reach Δ cheaply — the rare failures (or
   * successes) a small sample may not have seen.
   */
  const v0 = (delta: number): number => {
    const ge = ((delta < D ? -1 : 1) - delta) * rmsW;
    // Δ at the bound itself: only a sample entirely at the bound has that mean, and it is not this one
    if (ge === 0) return 0;
    let sumP = 0;
    let feasible = true;
    for (let c = 0; c < k; c++) {
      g[c] = (A[c]! - delta * W[c]!) / wbar;
      const den = 1 - g[c]! / ge;
      if (!(den > 0)) feasible = false;
      else sumP += 1 / (k * den);
    }
    if (feasible && sumP <= 1) {
      // bound point carries mass 1 − Σp_j; observed p_j = 1/(k(1 − g_j/g_e))
      let v = (1 - sumP) * ge * ge;
      for (let c = 0; c < k; c++) v += (g[c]! * g[c]!) / (k * (1 - g[c]! / ge));
      return v;
    }
    // ordinary empirical likelihood: p_j = 1/(k(1 + λ g_j)) with Σ p_j g_j = 0 (Owen 2001 §3.14)
    let gMin = Number.POSITIVE_INFINITY;
    let gMax = Number.NEGATIVE_INFINITY;
    for (let c = 0; c < k; c++) {
      if (g[c]! < gMin) gMin = g[c]!;
      if (g[c]! > gMax) gMax = g[c]!;
    }
    if (!(gMin < 0 && gMax > 0)) return Number.POSITIVE_INFINITY;
    let lo = (-1 + 1e-12) / gMax;
    let hi = (-1 + 1e-12) / gMin;
    const f = (lam: number): number => {
      let sgm = 0;
      for (let c = 0; c < k; c++) sgm += g[c]! / (1 + lam * g[c]!);
      return sgm; // decreasing in λ
    };
    for (let i = 0; i < 60 && hi - lo > 1e-12 * Math.max(1, Math.abs(hi)); i++) {
      const mid = 0.5 * (lo + hi);
      if (f(mid) > 0) lo = mid;
      else hi = mid;
    }
    const lam = 0.5 * (lo + hi);
    let v = 0;
    for (let c = 0; c < k; c++) v += (g[c]! * g[c]!) / (k * (1 + lam * g[c]!));
    return v;
  };
  const T = (delta: number): number => {
    if (delta === D) return 0;
    const v = v0(delta) * small;
    return v > 0 ? (Math.abs(D - delta) * Math.sqrt(k)) / Math.sqrt(v) : Number.POSITIVE_INFINITY;
  };
  const bound = (dir: -1 | 1): number => {
    const end = dir;
    if (!Number.isFinite(t) || T(end) <= t) return end;
    // T grows as Δ moves away from D (numerator linear, √V at most like √|Δ| or constant): bisect.
    let inside = D;
    let outside: number = end;
    for (let i = 0; i < 60 && Math.abs(outside - inside) > 1e-10; i++) {
      const mid = 0.5 * (inside + outside);
      if (T(mid) <= t) inside = mid;
      else outside = mid;
    }
    return inside;
  };
  const qualityDelta: ScoreInterval = {
    point: D,
    lower: Math.max(-1, bound(-1)),
    upper: Math.min(1, bound(1)),
    degenerate: degenerateD,
  };

  let costSavings: ScoreInterval | null = null;
  if (s.costKnown && sx > 0) {
    const R = sy / sx;
    if (sy === 0) costSavings = { point: 1, lower: 1, upper: 1, degenerate: true };
    else {
      let v = 0;
      for (let c = 0; c < k; c++) {
        const e = Y[c]! / sy - X[c]! / sx;
        v += e * e;
      }
      const se = k >= 2 ? Math.sqrt((k / (k - 1)) * v) : Number.POSITIVE_INFINITY;
      const degenerate = !(se > 1e-12);
      costSavings = {
        point: 1 - R,
        lower: Number.isFinite(t * se) ? 1 - R * Math.exp(t * se) : Number.NEGATIVE_INFINITY,
        upper: Number.isFinite(t * se) ? 1 - R * Math.exp(-t * se) : 1,
        degenerate,
      };
    }
  }
  return { qualityDelta, costSavings, clusters: k, designEffect: deff, level };
}

/**
 * Spread of the paired difference per cluster: the sample sd (k − 1 denominator) of the linearised
 * contribution u_c = (A_c − D·W_c)/W̄, the sd for which SE(D) ≈ sd/√k (the sd_diff of the power
 * plan), with the clusters k and Kish's design effect of the cluster weights.
 * Shape: items (≥ 1, objects or PairedColumns) → { sd (null when k < 2), clusters, designEffect, meanSquare (mean over
 * clusters of the squared cluster-mean difference d̄_c², in [0, 1]) }.
 * Errors: RangeError as {@link pairedScoreIntervals} on invalid items.
 * Source: Cochran (1977) §6.9 (ratio estimator linearisation); Kish (1965) §11.7.
 */
export function pairedDifferenceSpread(items: PairedInput): {
  sd: number | null;
  clusters: number;
  designEffect: number;
  meanSquare: number;
} {
  const { k, W, A } = clusterSums(items, 'pairedDifferenceSpread');
  let sw = 0;
  let sa = 0;
  let sw2 = 0;
  for (let c = 0; c < k; c++) {
    sw += W[c]!;
    sa += A[c]!;
    sw2 += W[c]! * W[c]!;
  }
  const D = sa / sw;
  const wbar = sw / k;
  let v = 0;
  let ms = 0;
  for (let c = 0; c < k; c++) {
    const e = (A[c]! - D * W[c]!) / wbar;
    v += e * e;
    const dc = A[c]! / W[c]!;
    ms += dc * dc;
  }
  return {
    sd: k >= 2 ? Math.sqrt(v / (k - 1)) : null,
    clusters: k,
    designEffect: (k * sw2) / (sw * sw),
    meanSquare: ms / k,
  };
}
