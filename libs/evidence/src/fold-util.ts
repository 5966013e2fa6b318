/** Small pure helpers of the fold stages (sorting, shares, percentiles, counters). */
import type { CostBasis, ShareValue } from '@shadowplane/contracts';
import { quantileType7, wilsonInterval } from '@shadowplane/stats';

const BASIS_ORDER: CostBasis[] = ['provider_reported', 'rate_card', 'estimate'];

/** Sorts by a string key (code-unit order), computing each key once. */
export function byKey<T>(xs: readonly T[], key: (x: T) => string): T[] {
  const decorated = xs.map((x) => [key(x), x] as const);
  decorated.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return decorated.map((d) => d[1]);
}

/**
 * Compares `a.join('|')` with `b.join('|')` in code-unit order (as `<` on the joined strings)
 * without building them: −1, 0 or 1.
 */
export function cmpJoined(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    const m = Math.min(x.length, y.length);
    for (let k = 0; k < m; k++) {
      const d = x.charCodeAt(k) - y.charCodeAt(k);
      if (d !== 0) return d < 0 ? -1 : 1;
    }
    // one field is a prefix of the other: what follows it in the joined string decides; when
    // that is a '|' on both sides the rare case is settled on the joined strings themselves
    const xn = x.length > m ? x.charCodeAt(m) : i + 1 < a.length ? 124 : -1;
    const yn = y.length > m ? y.charCodeAt(m) : i + 1 < b.length ? 124 : -1;
    if (xn !== yn) return xn < yn ? -1 : 1;
    const ja = a.join('|');
    const jb = b.join('|');
    return ja < jb ? -1 : ja > jb ? 1 : 0;
  }
  if (a.length === b.length) return 0;
  return a.length < b.length ? -1 : 1;
}

/** A share with its 95% Wilson interval (null share when `of` is 0). */
export function share(n: number, of: number): ShareValue {
  if (of === 0) return { n, of, share: null, lower: null, upper: null };
  const [lo, hi] = wilsonInterval(n, of, 0.95);
  return { n, of, share: n / of, lower: lo, upper: hi };
}

/** p50/p90 (type-7 quantiles) of a sample, nulls when empty. */
export function pct(xs: ArrayLike<number>): { p50: number | null; p90: number | null; n: number } {
  if (xs.length === 0) return { p50: null, p90: null, n: 0 };
  const s = Float64Array.from(xs).sort();
  return { p50: quantileType7(s, 0.5), p90: quantileType7(s, 0.9), n: xs.length };
}

/** Mean of the reported (non-null) values and how many were reported / null. */
export function reportedMean(values: (number | null)[]): { mean: number | null; n_reported: number; n_null: number } {
  const rep = values.filter((v): v is number => v !== null);
  return {
    mean: rep.length ? rep.reduce((a, b) => a + b, 0) / rep.length : null,
    n_reported: rep.length,
    n_null: values.length - rep.length,
  };
}

/** The most frequent cost basis (ties: provider_reported, rate_card, estimate), null when none. */
export function majorityBasis(bases: CostBasis[]): CostBasis | null {
  if (bases.length === 0) return null;
  const counts = new Map<CostBasis, number>();
  for (const b of bases) counts.set(b, (counts.get(b) ?? 0) + 1);
  let best: CostBasis | null = null;
  for (const b of BASIS_ORDER) if ((counts.get(b) ?? 0) > (best === null ? 0 : counts.get(best)!)) best = b;
  return best;
}

/** Adds `by` to the counter `m[k]`. */
export function inc(m: Record<string, number>, k: string, by = 1): void {
  m[k] = (m[k] ?? 0) + by;
}

/**
 * Folds a campaign's OBS messages into a report and evidence bundle (see the module doc and
 * docs/architecture.md "Statistics of a verdict" / "Honesty rules"). Rules applied:

/** The record with its keys in code-unit order. */
export function sortRecord(r: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.keys(r)
      .sort()
      .map((k) => [k, r[k]!]),
  );
}

/**
 * Appends `xs` to `out` one by one: `out.push(...xs)` passes every element as an argument and
 * throws RangeError past ~100k (one call type of a 100k-item campaign has 300k cost rows).
 */
export function appendAll<T>(out: T[], xs: readonly T[]): void {
  for (const x of xs) out.push(x);
}

/** A growable typed column: `a[0, n)` holds the values pushed. */
export class Col<A extends Int32Array | Float64Array | Uint8Array> {
  n = 0;
  constructor(
    public a: A,
    private readonly make: (n: number) => A,
  ) {}
  push(v: number): void {
    if (this.n === this.a.length) this.grow();
    this.a[this.n++] = v;
  }
  /** 1.5× the capacity (new cells as `make` gives them). */
  grow(): void {
    const b = this.make(Math.ceil(this.a.length * 1.5));
    b.set(this.a);
    this.a = b;
  }
}
// Give the capacity when a bound is known: growing by copies leaves ~2x the final size as
// garbage buffers until V8 collects their owners.
/** An empty growable Int32 column with room for `cap` values. */
export const ints = (cap = 1024): Col<Int32Array> =>
  new Col(new Int32Array(Math.max(1, cap)), (n) => new Int32Array(n));
/** An empty growable float64 column with room for `cap` values. */
export const floats = (cap = 1024): Col<Float64Array> =>
  new Col(new Float64Array(Math.max(1, cap)), (n) => new Float64Array(n));
/** An empty growable byte column with room for `cap` values. */
export const bytes = (cap = 1024): Col<Uint8Array> =>
  new Col(new Uint8Array(Math.max(1, cap)), (n) => new Uint8Array(n));
