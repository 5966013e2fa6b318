/**
 * The standard normal distribution: quantile (inverse CDF) and CDF, to double precision.
 * Pure functions, no I/O.
 */

// Wichura, M. J. (1988), "Algorithm AS 241: The Percentage Points of the Normal Distribution",
// Applied Statistics 37(3), 477–484 — PPND16, relative accuracy about 1e-16.
const A = [
  3.387132872796366608, 133.14166789178437745, 1971.5909503065514427, 13731.693765509461125, 45921.953931549871457,
  67265.770927008700853, 33430.575583588128105, 2509.0809287301226727,
] as const;
const B = [
  1, 42.313330701600911252, 687.1870074920579083, 5394.1960214247511077, 21213.794301586595867, 39307.89580009271061,
  28729.085735721942674, 5226.495278852854561,
] as const;
const C = [
  1.42343711074968357734, 4.6303378461565452959, 5.7694972214606914055, 3.64784832476320460504, 1.27045825245236838258,
  0.24178072517745061177, 0.0227238449892691845833, 7.7454501427834140764e-4,
] as const;
const D = [
  1, 2.05319162663775882187, 1.6763848301838038494, 0.68976733498510000455, 0.14810397642748007459,
  0.0151986665636164571966, 5.475938084995344946e-4, 1.05075007164441684324e-9,
] as const;
const E = [
  6.6579046435011037772, 5.4637849111641143699, 1.7848265399172913358, 0.29656057182850489123, 0.026532189526576123093,
  0.0012426609473880784386, 2.71155556874348757815e-5, 2.01033439929228813265e-7,
] as const;
const F = [
  1, 0.59983220655588793769, 0.13692988092273580531, 0.0148753612908506148525, 7.868691311456132591e-4,
  1.8463183175100546818e-5, 1.4215117583164458887e-7, 2.04426310338993978564e-15,
] as const;

/** Horner evaluation of c[0] + c[1]x + … + c[7]x⁷. */
function poly7(c: readonly [number, number, number, number, number, number, number, number], x: number): number {
  return ((((((c[7] * x + c[6]) * x + c[5]) * x + c[4]) * x + c[3]) * x + c[2]) * x + c[1]) * x + c[0];
}

/**
 * Inverse of the standard normal CDF: the z with Φ(z) = p.
 *
 * Shape: p ∈ (0, 1) → z ∈ ℝ. Unitless.
 * Errors: throws RangeError when p is not a number strictly between 0 and 1 (±∞ are not returned).
 * Source: Wichura (1988), Algorithm AS 241 (PPND16), Applied Statistics 37(3) 477–484; relative
 * accuracy about 1e-16 over the whole range. The same algorithm backs Python's
 * `statistics.NormalDist.inv_cdf` and R's `qnorm`.
 */
export function normPpf(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normPpf: p must be in the open interval (0, 1), got ${p}`);
  const q = p - 0.5;
  if (Math.abs(q) <= 0.425) {
    const r = 0.180625 - q * q;
    return (q * poly7(A, r)) / poly7(B, r);
  }
  let r = q < 0 ? p : 1 - p;
  r = Math.sqrt(-Math.log(r));
  let z: number;
  if (r <= 5) {
    r -= 1.6;
    z = poly7(C, r) / poly7(D, r);
  } else {
    r -= 5;
    z = poly7(E, r) / poly7(F, r);
  }
  return q < 0 ? -z : z;
}

// Cody, W. J. (1969), "Rational Chebyshev Approximations for the Error Function", Mathematics of
// Computation 23(107), 631–637; coefficients as in his CALERF (Netlib specfun), max relative
// error about 1e-16 on each interval.
const EA = [
  3.1611237438705656, 113.864154151050156, 377.485237685302021, 3209.37758913846947, 0.185777706184603153,
] as const;
const EB = [23.6012909523441209, 244.024637934444173, 1282.61652607737228, 2844.23683343917062] as const;
const EC = [
  0.564188496988670089, 8.88314979438837594, 66.1191906371416295, 298.635138197400131, 881.95222124176909,
  1712.04761263407058, 2051.07837782607147, 1230.33935479799725, 2.15311535474403846e-8,
] as const;
const ED = [
  15.7449261107098347, 117.693950891312499, 537.181101862009858, 1621.38957456669019, 3290.79923573345963,
  4362.61909014324716, 3439.36767414372164, 1230.33935480374942,
] as const;
const EP = [
  0.305326634961232344, 0.360344899949804439, 0.125781726111229246, 0.0160837851487422766, 6.58749161529837803e-4,
  0.0163153871373020978,
] as const;
const EQ = [
  2.56852019228982242, 1.87295284992346047, 0.527905102951428412, 0.0605183413124413191, 0.00233520497626869185,
] as const;
const SQRT_PI_INV = 0.56418958354775628695; // 1/√π

/** erfc(x) for x ≥ 0.46875 (Cody's intervals 2 and 3), with the exp(−x²) split for accuracy. */
function erfcTail(y: number): number {
  let r: number;
  if (y <= 4) {
    let num = EC[8] * y;
    let den = y;
    for (let i = 0; i < 7; i++) {
      num = (num + EC[i]!) * y;
      den = (den + ED[i]!) * y;
    }
    r = (num + EC[7]) / (den + ED[7]);
  } else {
    if (y >= 26.543) return 0; // underflows below the smallest double
    const z = 1 / (y * y);
    let num = EP[5] * z;
    let den = z;
    for (let i = 0; i < 4; i++) {
      num = (num + EP[i]!) * z;
      den = (den + EQ[i]!) * z;
    }
    r = (z * (num + EP[4])) / (den + EQ[4]);
    r = (SQRT_PI_INV - r) / y;
  }
  // exp(−y²) = exp(−z²)·exp(−(y−z)(y+z)) with z = y rounded down to 1/16: keeps full precision.
  const zr = Math.trunc(y * 16) / 16;
  const del = (y - zr) * (y + zr);
  return Math.exp(-zr * zr) * Math.exp(-del) * r;
}

/** erf(x) for |x| < 0.46875 (Cody's interval 1). */
function erfSmall(x: number): number {
  const z = x * x;
  let num = EA[4] * z;
  let den = z;
  for (let i = 0; i < 3; i++) {
    num = (num + EA[i]!) * z;
    den = (den + EB[i]!) * z;
  }
  return (x * (num + EA[3])) / (den + EB[3]);
}

/** Complementary error function erfc(x) = 1 − erf(x), accurate in both tails. */
function erfc(x: number): number {
  const y = Math.abs(x);
  if (y < 0.46875) return 1 - erfSmall(x);
  const t = erfcTail(y);
  return x < 0 ? 2 - t : t;
}

/**
 * Standard normal CDF Φ(z) = P(Z ≤ z).
 *
 * Shape: z ∈ ℝ (±∞ allowed) → [0, 1]; NaN → NaN. Unitless.
 * Source: Φ(z) = ½·erfc(−z/√2), with erfc from Cody (1969) rational Chebyshev approximations
 * (CALERF); relative accuracy about 1e-15 including the lower tail (Φ(−30) ≈ 4.9e-198).
 */
export function normCdf(z: number): number {
  if (Number.isNaN(z)) return Number.NaN;
  return 0.5 * erfc(-z / Math.SQRT2);
}
