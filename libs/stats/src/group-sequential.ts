/**
 * Group-sequential boundaries over planned looks (the `group_sequential` stopping rule): exact
 * critical values of a one-sided test whose type-I error is spent over the planned information
 * fractions by the Lan–DeMets O'Brien–Fleming-type spending function, and the conditional power
 * used by its non-binding futility rule.
 *
 * Canonical joint distribution (Jennison & Turnbull 2000, §3.1): the look statistics Z_1..Z_K at
 * information fractions t_1 < … < t_K ≤ 1 are jointly normal with Cov(Z_j, Z_k) = √(t_j/t_k),
 * i.e. B_k = Z_k·√t_k has independent increments N(θ·Δt, Δt) (Brownian motion with drift θ).
 * The boundary c_k solves P(Z_1 < c_1, …, Z_{k−1} < c_{k−1}, Z_k ≥ c_k) = α(t_k) − α(t_{k−1})
 * under θ = 0; the sub-density of Z_k on the continuation region is propagated look by look by
 * numerical integration (Armitage, McPherson & Rowe 1969; Jennison & Turnbull 2000, ch. 19),
 * here with composite Simpson's rule on a uniform grid whose step is fine against both the
 * standard normal and the transition kernel of each step.
 */
import { normCdf, normPpf } from './normal.js';

/** Most planned looks a group-sequential plan may have (the recursion is O(K·grid²)). */
export const GROUP_SEQUENTIAL_MAX_LOOKS = 200;

/** Boundaries above this are reported as this (P(Z ≥ 15) ≈ 4e-51: no look can cross it anyway). */
const BOUNDARY_CAP = 15;
/** the grid of Z stops here below (P(Z < −9) ≈ 1e-19 of the continuing mass is dropped) */
const GRID_FLOOR = -9;
/** …and above, where a boundary is higher (the mass above 12 is ≈ 2e-33) */
const GRID_CEIL = 12;

/**
 * Lan–DeMets O'Brien–Fleming-type spending function, one-sided: the type-I error spent by
 * information fraction t, α(t) = 2 − 2Φ(z_{1−α/2}/√t), with α(1) = α and α(0) = 0 (the
 * one-sided form of Lan & DeMets 1983, as in Jennison & Turnbull 2000 §7.2 and gsDesign's sfLDOF).
 * Shape: t ∈ [0, 1], α ∈ (0, 0.5) → spent α ∈ [0, α]. Computed as 2Φ(−z/√t) (no cancellation).
 * Errors: RangeError on t ∉ [0, 1] or α ∉ (0, 0.5).
 * Source: Lan, K.K.G. & DeMets, D.L. (1983), "Discrete sequential boundaries for clinical trials",
 * Biometrika 70(3), 659–663.
 */
export function obrienFlemingSpending(t: number, alpha: number): number {
  if (!(t >= 0 && t <= 1)) throw new RangeError(`obrienFlemingSpending: t must be in [0, 1], got ${t}`);
  if (!(alpha > 0 && alpha < 0.5))
    throw new RangeError(`obrienFlemingSpending: alpha must be in (0, 0.5), got ${alpha}`);
  if (t === 0) return 0;
  const z = normPpf(1 - alpha / 2);
  return 2 * normCdf(-z / Math.sqrt(t));
}

/** Output of {@link spendingBoundaries}. */
export interface GroupSequentialBoundaries {
  /** the planned information fractions t_k (input) */
  fractions: number[];
  /** cumulative one-sided α spent by look k, α(t_k) (α at the last look with lastSpendsAll) */
  spent: number[];
  /** critical values c_k on the Z scale: reject at look k when Z_k ≥ c_k (capped at 15) */
  critical: number[];
}

/** Composite Simpson weights × step for n + 1 points (n even). */
function simpson(n: number, h: number): Float64Array {
  const w = new Float64Array(n + 1);
  for (let i = 0; i <= n; i++) w[i] = ((i === 0 || i === n ? 1 : i % 2 === 1 ? 4 : 2) * h) / 3;
  return w;
}

/** A uniform grid on [lo, hi] with an even number of steps no wider than `step`. */
function grid(lo: number, hi: number, step: number): { z: Float64Array; w: Float64Array } {
  let n = Math.max(2, Math.ceil((hi - lo) / step));
  if (n % 2 === 1) n++;
  const h = (hi - lo) / n;
  const z = new Float64Array(n + 1);
  for (let i = 0; i <= n; i++) z[i] = lo + i * h;
  return { z, w: simpson(n, h) };
}

const cache = new Map<string, GroupSequentialBoundaries>();

/**
 * Exact one-sided group-sequential critical values for the planned information fractions under
 * the O'Brien–Fleming-type spending function {@link obrienFlemingSpending}: c_k with
 * P_{θ=0}(no crossing before k, Z_k ≥ c_k) = α(t_k) − α(t_{k−1}). The efficacy boundary is
 * computed without any futility boundary, so futility stops (which only remove paths) keep the
 * type-I error ≤ α whether or not they are obeyed (non-binding). `lastSpendsAll`: the last look
 * spends all of α that is left (a closing analysis before t = 1: the correlations stay those of
 * the actual fractions, the spending is α(1) = α, as a final analysis that comes early spends
 * what is left). Memoised.
 * Accuracy: ~1e-4 on c_k (Simpson step ≤ min(0.05, kernel sd / 4)); checked against published
 * values and by simulation (group-sequential.test.ts).
 * Shape: fractions strictly increasing in (0, 1] (≤ GROUP_SEQUENTIAL_MAX_LOOKS of them),
 * α ∈ (0, 0.5), { lastSpendsAll? } → {@link GroupSequentialBoundaries}.
 * Errors: RangeError on empty, unordered, out-of-range or too many fractions, or α ∉ (0, 0.5).
 * Source: Jennison, C. & Turnbull, B.W. (2000), Group Sequential Methods with Applications to
 * Clinical Trials, ch. 19 (numerical computation of boundary crossing probabilities); Armitage,
 * P., McPherson, C.K. & Rowe, B.C. (1969), "Repeated significance tests on accumulating data",
 * JRSS A 132(2), 235–244; Lan & DeMets (1983).
 */
export function spendingBoundaries(
  fractions: readonly number[],
  alpha: number,
  o: { lastSpendsAll?: boolean } = {},
): GroupSequentialBoundaries {
  const K = fractions.length;
  if (K < 1 || K > GROUP_SEQUENTIAL_MAX_LOOKS)
    throw new RangeError(`spendingBoundaries: need 1..${GROUP_SEQUENTIAL_MAX_LOOKS} looks, got ${K}`);
  if (!(alpha > 0 && alpha < 0.5)) throw new RangeError(`spendingBoundaries: alpha must be in (0, 0.5), got ${alpha}`);
  for (let k = 0; k < K; k++) {
    const t = fractions[k]!;
    if (!(t > 0 && t <= 1) || (k > 0 && !(t > fractions[k - 1]!)))
      throw new RangeError(
        `spendingBoundaries: fractions must increase strictly within (0, 1], got ${fractions.join(', ')}`,
      );
  }
  const key = `${alpha}|${o.lastSpendsAll === true}|${fractions.join(',')}`;
  const hit = cache.get(key);
  if (hit) return structuredClone(hit);

  const spent = fractions.map((t, k) => (k === K - 1 && o.lastSpendsAll ? alpha : obrienFlemingSpending(t, alpha)));
  const critical: number[] = [];
  // look 1: Z_1 ~ N(0, 1)
  const inc1 = spent[0]!;
  let c = inc1 > 0 ? Math.min(BOUNDARY_CAP, -normPpf(inc1)) : BOUNDARY_CAP;
  critical.push(c);
  // each grid must resolve the next step's transition kernel, whose sd in Z_{k−1} is √Δt/√t_{k−1}
  const stepFor = (k: number): number =>
    k + 1 < K ? Math.min(0.05, Math.sqrt(fractions[k + 1]! - fractions[k]!) / Math.sqrt(fractions[k]!) / 4) : 0.05;
  let g = grid(GRID_FLOOR, Math.min(c, GRID_CEIL), stepFor(0));
  let f = new Float64Array(g.z.length);
  for (let i = 0; i < f.length; i++) f[i] = Math.exp(-0.5 * g.z[i]! * g.z[i]!) / Math.sqrt(2 * Math.PI);

  for (let k = 1; k < K; k++) {
    const t0 = fractions[k - 1]!;
    const t1 = fractions[k]!;
    const sd = Math.sqrt(t1 - t0);
    const r0 = Math.sqrt(t0);
    const r1 = Math.sqrt(t1);
    const target = spent[k]! - spent[k - 1]!;
    // P(cross at k) for a candidate boundary x: ∫ f(u)·P(Z_k ≥ x | Z_{k−1} = u) du
    const cross = (x: number): number => {
      let p = 0;
      for (let i = 0; i < f.length; i++) p += g.w[i]! * f[i]! * normCdf(-(x * r1 - g.z[i]! * r0) / sd);
      return p;
    };
    if (!(target > 0) || cross(BOUNDARY_CAP) >= target) c = BOUNDARY_CAP;
    else {
      let lo = -10;
      let hi = BOUNDARY_CAP;
      for (let i = 0; i < 80 && hi - lo > 1e-9; i++) {
        const mid = 0.5 * (lo + hi);
        if (cross(mid) > target) lo = mid;
        else hi = mid;
      }
      c = 0.5 * (lo + hi);
    }
    critical.push(c);
    if (k === K - 1) break;
    // sub-density of Z_k on its continuation region (−∞, c)
    const next = grid(GRID_FLOOR, Math.min(c, GRID_CEIL), stepFor(k));
    const nf = new Float64Array(next.z.length);
    const scale = r1 / sd / Math.sqrt(2 * Math.PI);
    for (let j = 0; j < nf.length; j++) {
      const zr = next.z[j]! * r1;
      let s = 0;
      for (let i = 0; i < f.length; i++) {
        const e = (zr - g.z[i]! * r0) / sd;
        if (e > -9 && e < 9) s += g.w[i]! * f[i]! * Math.exp(-0.5 * e * e);
      }
      nf[j] = s * scale;
    }
    g = next;
    f = nf;
  }
  const out = { fractions: [...fractions], spent, critical };
  cache.set(key, out);
  return structuredClone(out);
}

/**
 * Conditional power of the final look: P(Z_K ≥ c_K | Z_k = z) when the drift is θ, i.e. the
 * final statistic's mean is θ (B-value form, Lan & Wittes 1988: B(1) − B(t) ~ N(θ(1 − t), 1 − t)).
 * Interim crossings are ignored, which understates the chance of crossing at some later look, so a
 * futility rule on it stops a little more often than the exact conditional power would; futility
 * is non-binding, so this moves items and power, never the type-I error.
 * Shape: z (±∞ allowed), t ∈ (0, 1], θ (±∞ allowed), cK → probability in [0, 1]. At t = 1 it is
 * 1 when z ≥ cK, else 0.
 * Errors: RangeError on t ∉ (0, 1] or a NaN input.
 * Source: Lan, K.K.G. & Wittes, J. (1988), "The B-value: a tool for monitoring data", Biometrics
 * 44(2), 579–585; Jennison & Turnbull (2000) §10.2.
 */
export function conditionalPower(o: { z: number; t: number; drift: number; finalCritical: number }): number {
  const { z, t, drift, finalCritical } = o;
  if (!(t > 0 && t <= 1)) throw new RangeError(`conditionalPower: t must be in (0, 1], got ${t}`);
  if ([z, drift, finalCritical].some(Number.isNaN)) throw new RangeError('conditionalPower: NaN input');
  if (z === Number.POSITIVE_INFINITY || drift === Number.POSITIVE_INFINITY) return 1;
  if (z === Number.NEGATIVE_INFINITY) return 0;
  if (t === 1) return z >= finalCritical ? 1 : 0;
  const rest = 1 - t;
  return normCdf((z * Math.sqrt(t) + drift * rest - finalCritical) / Math.sqrt(rest));
}

/** Conditional power (to pass under D = 0 and to fail under the current trend) below which a look stops as futile (non-binding). */
export const GROUP_SEQUENTIAL_FUTILITY_POWER = 0.1;

/** Method name recorded in reports and bundles for `stopping: group_sequential`. */
export const GROUP_SEQUENTIAL_METHOD =
  "group sequential over planned looks (Lan-DeMets O'Brien-Fleming-type alpha-spending, exact boundaries by recursive integration); look test: score-EL cluster interval with t(k-1) at the look's boundary, savings at the same boundary; non-binding futility: conditional power to pass under D = 0 and to fail under the current trend both below 10%";
