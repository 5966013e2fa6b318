/**
 * Student t and chi-square quantiles for the small-sample rules of the verdict statistics
 * (t critical values with k − 1 degrees of freedom; a chi-square upper confidence bound on an sd).
 */
import { normPpf } from './normal.js';

const LANCZOS = [
  676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
  -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9; relative error ~1e-15). */
function lnGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const z = x - 1;
  let a = 0.99999999999980993;
  const t = z + 7.5;
  for (let i = 0; i < 8; i++) a += LANCZOS[i]! / (z + i + 1);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Continued fraction of the incomplete beta (modified Lentz), Numerical Recipes §6.4. */
function betaCf(a: number, b: number, x: number): number {
  const TINY = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < TINY) d = TINY;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) break;
  }
  return h;
}

/** Regularised incomplete beta I_x(a, b). */
function betaInc(a: number, b: number, x: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const lbt = lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log(1 - x);
  if (x < (a + 1) / (a + b + 2)) return (Math.exp(lbt) * betaCf(a, b, x)) / a;
  return 1 - (Math.exp(lbt) * betaCf(b, a, 1 - x)) / b;
}

/** Regularised lower incomplete gamma P(a, x): series for x < a + 1, else continued fraction (NR §6.2). */
function gammaP(a: number, x: number): number {
  if (x <= 0) return 0;
  const gln = lnGamma(a);
  if (x < a + 1) {
    let ap = a;
    let sum = 1 / a;
    let del = sum;
    for (let n = 0; n < 1000; n++) {
      ap += 1;
      del *= x / ap;
      sum += del;
      if (Math.abs(del) < Math.abs(sum) * 1e-16) break;
    }
    return sum * Math.exp(-x + a * Math.log(x) - gln);
  }
  const TINY = 1e-300;
  let b = x + 1 - a;
  let c = 1 / TINY;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 1000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < TINY) d = TINY;
    c = b + an / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-16) break;
  }
  return 1 - Math.exp(-x + a * Math.log(x) - gln) * h;
}

/**
 * Student t CDF with `df` degrees of freedom.
 * Shape: t (any finite number), df > 0 → P(T ≤ t) ∈ [0, 1].
 * Errors: RangeError when df is not a finite number > 0 or t is NaN.
 * Source: P(T ≤ t) = 1 − ½·I_{df/(df+t²)}(df/2, ½) for t ≥ 0 (Abramowitz & Stegun 26.7.1, 26.5.27);
 * incomplete beta by Lentz's continued fraction (Numerical Recipes, 3rd ed., §6.4).
 */
export function studentTCdf(t: number, df: number): number {
  if (!(Number.isFinite(df) && df > 0)) throw new RangeError(`studentTCdf: df must be a finite number > 0, got ${df}`);
  if (Number.isNaN(t)) throw new RangeError('studentTCdf: t is NaN');
  if (!Number.isFinite(t)) return t > 0 ? 1 : 0;
  const tail = 0.5 * betaInc(df / 2, 0.5, df / (df + t * t));
  return t >= 0 ? 1 - tail : tail;
}

/**
 * Student t quantile: the t with P(T ≤ t) = p for `df` degrees of freedom.
 * Shape: p ∈ (0, 1), df > 0 (non-integer allowed) → t. Accuracy ~1e-12 absolute for df ≥ 1.
 * Errors: RangeError when p ∉ (0, 1) or df is not a finite number > 0.
 * Source: inverts {@link studentTCdf} by bisection on a bracket from the normal quantile
 * (then Newton-free: 200 halvings is below double precision).
 */
export function studentTPpf(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`studentTPpf: p must be in (0, 1), got ${p}`);
  if (!(Number.isFinite(df) && df > 0)) throw new RangeError(`studentTPpf: df must be a finite number > 0, got ${df}`);
  if (p === 0.5) return 0;
  if (p < 0.5) return -studentTPpf(1 - p, df);
  let lo = normPpf(p) * 0.999; // t quantiles exceed the normal's above the median
  let hi = Math.max(lo + 1, 2);
  while (studentTCdf(hi, df) < p) hi *= 2;
  lo = Math.min(lo, hi / 2);
  for (let i = 0; i < 200 && hi - lo > 1e-13 * Math.max(1, hi); i++) {
    const mid = 0.5 * (lo + hi);
    if (studentTCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

/**
 * Student t upper-tail quantile: the t ≥ 0 with P(T ≥ t) = p, accurate for tiny p (where
 * studentTPpf(1 − p) would lose p to rounding), e.g. the critical value of an early
 * group-sequential look.
 * Shape: p ∈ (0, 0.5], df > 0 → t ≥ 0. Accuracy ~1e-10 relative.
 * Errors: RangeError when p ∉ (0, 0.5] or df is not a finite number > 0.
 * Source: P(T ≥ t) = ½·I_{df/(df+t²)}(df/2, ½) (Abramowitz & Stegun 26.7.1), inverted by bisection.
 */
export function studentTUpperPpf(p: number, df: number): number {
  if (!(p > 0 && p <= 0.5)) throw new RangeError(`studentTUpperPpf: p must be in (0, 0.5], got ${p}`);
  if (!(Number.isFinite(df) && df > 0))
    throw new RangeError(`studentTUpperPpf: df must be a finite number > 0, got ${df}`);
  if (p === 0.5) return 0;
  const tail = (t: number): number => 0.5 * betaInc(df / 2, 0.5, df / (df + t * t));
  let lo = 0;
  let hi = 2;
  while (tail(hi) > p && hi < 1e300) hi *= 2;
  for (let i = 0; i < 400 && hi - lo > 1e-12 * hi; i++) {
    const mid = 0.5 * (lo + hi);
    if (tail(mid) > p) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

/**
 * Chi-square quantile: the x with P(X ≤ x) = p for `df` degrees of freedom.
 * Shape: p ∈ (0, 1), df > 0 → x > 0. Accuracy ~1e-10 relative.
 * Errors: RangeError when p ∉ (0, 1) or df is not a finite number > 0.
 * Source: P(X ≤ x) = P(df/2, x/2), the regularised lower incomplete gamma (Numerical Recipes
 * §6.2), inverted by bisection.
 */
export function chiSquarePpf(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`chiSquarePpf: p must be in (0, 1), got ${p}`);
  if (!(Number.isFinite(df) && df > 0)) throw new RangeError(`chiSquarePpf: df must be a finite number > 0, got ${df}`);
  let lo = 0;
  let hi = Math.max(1, df);
  while (gammaP(df / 2, hi / 2) < p) hi *= 2;
  for (let i = 0; i < 300 && hi - lo > 1e-12 * hi; i++) {
    const mid = 0.5 * (lo + hi);
    if (gammaP(df / 2, mid / 2) < p) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}
