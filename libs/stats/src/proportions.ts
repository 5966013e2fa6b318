/**
 * Binomial proportion intervals and tests: Wilson score interval, pooled two-proportion z test.
 */
import { normCdf, normPpf } from './normal.js';

function assertCount(name: string, v: number): void {
  if (!Number.isInteger(v) || v < 0) throw new RangeError(`${name} must be a non-negative integer, got ${v}`);
}

/**
 * Wilson score interval for a binomial proportion (e.g. an arm's error share).
 *
 * Shape: `successes` of `n` trials → [lower, upper] ⊆ [0, 1], two-sided at `confidence`.
 * Units: proportions (0–1).
 * Errors: RangeError when n < 1, successes is not an integer in [0, n], or confidence ∉ (0, 1).
 * Source: Wilson, E. B. (1927), "Probable inference, the law of succession, and statistical
 * inference", JASA 22(158), 209–212; same formula as statsmodels `proportion_confint(method="wilson")`:
 * centre (x + z²/2)/(n + z²), half-width z/(n + z²)·√(x(n − x)/n + z²/4), z = Φ⁻¹(1 − (1 − conf)/2).
 * Defaults: confidence 0.95.
 */
export function wilsonInterval(successes: number, n: number, confidence = 0.95): [number, number] {
  assertCount('wilsonInterval: n', n);
  assertCount('wilsonInterval: successes', successes);
  if (n < 1) throw new RangeError('wilsonInterval: n must be at least 1 (no trials, no interval)');
  if (successes > n) throw new RangeError(`wilsonInterval: successes (${successes}) exceeds n (${n})`);
  if (!(confidence > 0 && confidence < 1))
    throw new RangeError(`wilsonInterval: confidence must be in (0, 1), got ${confidence}`);
  const z = normPpf(1 - (1 - confidence) / 2);
  const z2 = z * z;
  const denom = n + z2;
  const centre = (successes + z2 / 2) / denom;
  const half = (z / denom) * Math.sqrt((successes * (n - successes)) / n + z2 / 4);
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/**
 * Pooled two-proportion z test of H0: p1 = p2.
 *
 * Shape: x1 of n1 vs x2 of n2 → { z, pTwoSided }; z > 0 when x1/n1 > x2/n2.
 * Errors: RangeError when a count is not a non-negative integer, n1 or n2 < 1, or x > n.
 * Degenerate case: when the pooled proportion is 0 or 1 (both samples all-failure or all-success)
 * the difference is exactly 0 and has no variance; returns { z: 0, pTwoSided: 1 }.
 * Source: standard pooled test, z = (p̂1 − p̂2)/√(p̂(1 − p̂)(1/n1 + 1/n2)), p̂ = (x1 + x2)/(n1 + n2);
 * p = 2·Φ(−|z|) (as statsmodels `proportions_ztest`, scipy `norm.sf`).
 */
export function twoProportionZ(x1: number, n1: number, x2: number, n2: number): { z: number; pTwoSided: number } {
  for (const [k, v] of [
    ['x1', x1],
    ['n1', n1],
    ['x2', x2],
    ['n2', n2],
  ] as const)
    assertCount(`twoProportionZ: ${k}`, v);
  if (n1 < 1 || n2 < 1) throw new RangeError('twoProportionZ: n1 and n2 must be at least 1');
  if (x1 > n1 || x2 > n2) throw new RangeError('twoProportionZ: successes exceed trials');
  const pooled = (x1 + x2) / (n1 + n2);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
  if (se === 0) return { z: 0, pTwoSided: 1 };
  const z = (x1 / n1 - x2 / n2) / se;
  return { z, pTwoSided: Math.min(1, 2 * normCdf(-Math.abs(z))) };
}
