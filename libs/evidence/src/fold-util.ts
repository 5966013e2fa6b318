/** Small pure helpers of the fold stages (sorting, shares, percentiles, counters). */
import type { CostBasis, ShareValue } from '@shadowplane/contracts';
import type { Composite, ScoreResult } from '@shadowplane/scoring';
import { quantileType7, wilsonInterval } from '@shadowplane/stats';
import type { Observation } from '@shadowplane/contracts';

/** One de-duplicated observation of an admitted item, with its composites. */
export interface ScoredObs {
  obs: Observation;
  id: string;
  composite: Composite | null;
  /** the composite without judge scores (differs only when a judge score exists) */
  compositeNoJudge: Composite | null;
  /** the programmatic and first-party scores (no judge), for pairwise judge composites */
  scores: ScoreResult[];
}

const BASIS_ORDER: CostBasis[] = ['provider_reported', 'rate_card', 'estimate'];

/** Sorts by a string key (code-unit order), computing each key once. */
export function byKey<T>(xs: readonly T[], key: (x: T) => string): T[] {
  const decorated = xs.map((x) => [key(x), x] as const);
  decorated.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return decorated.map((d) => d[1]);
}

/** A share with its 95% Wilson interval (null share when `of` is 0). */
export function share(n: number, of: number): ShareValue {
  if (of === 0) return { n, of, share: null, lower: null, upper: null };
  const [lo, hi] = wilsonInterval(n, of, 0.95);
  return { n, of, share: n / of, lower: lo, upper: hi };
}

/** p50/p90 (type-7 quantiles) of a sample, nulls when empty. */
export function pct(xs: number[]): { p50: number | null; p90: number | null; n: number } {
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
