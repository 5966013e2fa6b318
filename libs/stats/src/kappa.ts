import { normPpf } from './normal.js';

/** Cohen's kappa with its large-sample standard error and a two-sided interval; see {@link cohensKappa}. */
export interface KappaResult {
  /** number of rated items */
  n: number;
  /** observed agreement p_o */
  observed: number;
  /** chance agreement p_e from the two raters' marginals */
  expected: number;
  /** kappa, or null when p_e = 1 (both raters used one and the same category: undefined) */
  kappa: number | null;
  /** standard error (Fleiss, Cohen & Everitt 1969), or null with kappa */
  se: number | null;
  /** kappa ± z·se, clipped to [−1, 1]; null with kappa */
  lower: number | null;
  upper: number | null;
  /** two-sided level of the interval, e.g. 0.95 */
  level: number;
}

/**
 * Cohen's kappa for two raters over the same items: κ = (p_o − p_e) / (1 − p_e), with p_o the
 * share of items on which they agree and p_e = Σ_k p_k· p_·k the agreement expected by chance
 * from their marginals (Cohen 1960, "A coefficient of agreement for nominal scales").
 * Standard error, non-null case (Fleiss, Cohen & Everitt 1969, "Large sample standard errors of
 * kappa and weighted kappa", eq. 13), with p_ij the joint shares:
 *   var(κ) = [ Σ_i p_ii (1 − (p_i· + p_·i)(1 − κ))² + (1 − κ)² Σ_{i≠j} p_ij (p_·i + p_j·)²
 *              − (κ − p_e (1 − κ))² ] / (n (1 − p_e)²)
 * Interval: κ ± z_{1−(1−level)/2} · se, clipped to [−1, 1].
 * Input: pairs of category labels (any strings), `level` in (0, 1), default 0.95.
 * Errors: RangeError for no pairs or a level outside (0, 1).
 */
export function cohensKappa(pairs: readonly (readonly [string, string])[], level = 0.95): KappaResult {
  if (pairs.length === 0) throw new RangeError('cohensKappa needs at least one pair');
  if (!(level > 0 && level < 1)) throw new RangeError('level must be in (0, 1)');
  const n = pairs.length;
  const cats = [...new Set(pairs.flatMap(([a, b]) => [a, b]))].sort();
  const idx = new Map(cats.map((c, i) => [c, i]));
  const k = cats.length;
  const p: number[][] = Array.from({ length: k }, () => new Array<number>(k).fill(0));
  for (const [a, b] of pairs) p[idx.get(a)!]![idx.get(b)!]! += 1 / n;
  const row = p.map((r) => r.reduce((s, x) => s + x, 0));
  const col = cats.map((_, j) => p.reduce((s, r) => s + r[j]!, 0));
  let po = 0;
  let pe = 0;
  for (let i = 0; i < k; i++) {
    po += p[i]![i]!;
    pe += row[i]! * col[i]!;
  }
  if (1 - pe <= 1e-12) return { n, observed: po, expected: pe, kappa: null, se: null, lower: null, upper: null, level };
  const kappa = (po - pe) / (1 - pe);
  let a = 0;
  let b = 0;
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      if (i === j) a += p[i]![i]! * (1 - (row[i]! + col[i]!) * (1 - kappa)) ** 2;
      else b += p[i]![j]! * (col[i]! + row[j]!) ** 2;
    }
  }
  const variance = (a + (1 - kappa) ** 2 * b - (kappa - pe * (1 - kappa)) ** 2) / (n * (1 - pe) ** 2);
  const se = Math.sqrt(Math.max(0, variance));
  const z = normPpf(1 - (1 - level) / 2);
  return {
    n,
    observed: po,
    expected: pe,
    kappa,
    se,
    lower: Math.max(-1, kappa - z * se),
    upper: Math.min(1, kappa + z * se),
    level,
  };
}
