/**
 * Sample quantiles.
 */

/**
 * Hyndman–Fan type 7 quantile of an ascending-sorted sample (numpy's default `linear` method, R's
 * default `type = 7`): h = (n − 1)·p, Q = x⌊h⌋ + (h − ⌊h⌋)·(x⌊h⌋₊₁ − x⌊h⌋).
 *
 * Shape: sorted ascending array (not checked; sort first) of n ≥ 1 numbers, p ∈ [0, 1] → number.
 * Errors: RangeError when the sample is empty or p ∉ [0, 1].
 * Source: Hyndman, R. J. & Fan, Y. (1996), "Sample quantiles in statistical packages", The
 * American Statistician 50(4), 361–365, definition 7.
 */
export function quantileType7(sorted: Float64Array | number[], p: number): number {
  const n = sorted.length;
  if (n === 0) throw new RangeError('quantileType7: empty sample');
  if (!(p >= 0 && p <= 1)) throw new RangeError(`quantileType7: p must be in [0, 1], got ${p}`);
  const h = (n - 1) * p;
  const lo = Math.floor(h);
  const xlo = sorted[lo]!;
  if (lo >= n - 1) return xlo;
  const frac = h - lo;
  const xhi = sorted[lo + 1]!;
  // numpy's lerp: exact at the ends, and equal neighbours give exactly that value.
  return frac === 0 || xhi === xlo ? xlo : xlo + frac * (xhi - xlo);
}
