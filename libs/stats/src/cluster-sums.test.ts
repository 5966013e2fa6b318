import { describe, expect, it } from 'vitest';
import {
  pairedClusterBootstrap,
  pairedDifferenceSpread,
  pairedScoreIntervals,
  type PairedColumns,
  type PairedItem,
} from './index.js';

/** n items in clusters of 1–3 (ids as strings, first appearance not in id order), uneven weights. */
function items(n: number, unknownCostAt = -1): PairedItem[] {
  return Array.from({ length: n }, (_, i) => ({
    cluster: `c${(i * 7) % Math.ceil(n / 2)}`,
    weight: 1 + (i % 3),
    qIncumbent: (i % 5) / 4,
    qCandidate: ((i * 3) % 5) / 4,
    costIncumbentUsd: 0.001 + 1e-5 * (i % 7),
    costCandidateUsd: i === unknownCostAt ? Number.NaN : 0.0004 + 1e-5 * Math.sin(i),
  }));
}

/** The same items as columns, cluster ids numbered by first appearance. */
function columns(xs: PairedItem[]): PairedColumns {
  const ids = new Map<string | number, number>();
  const id = (c: string | number) => ids.get(c) ?? (ids.set(c, ids.size), ids.size - 1);
  return {
    cluster: Int32Array.from(xs, (x) => id(x.cluster)),
    weight: Float64Array.from(xs, (x) => x.weight),
    qIncumbent: Float64Array.from(xs, (x) => x.qIncumbent),
    qCandidate: Float64Array.from(xs, (x) => x.qCandidate),
    costIncumbentUsd: Float64Array.from(xs, (x) => x.costIncumbentUsd),
    costCandidateUsd: Float64Array.from(xs, (x) => x.costCandidateUsd),
  };
}

describe('PairedColumns', () => {
  it('give bit-identical bootstrap, score intervals and spread to the same items as objects', () => {
    for (const xs of [items(40), items(301), items(50, 17)]) {
      const o = { resamples: 500, seed: 7, level: 0.9 };
      expect(pairedClusterBootstrap(columns(xs), o)).toStrictEqual(pairedClusterBootstrap(xs, o));
      expect(pairedScoreIntervals(columns(xs), { level: 0.9 })).toStrictEqual(pairedScoreIntervals(xs, { level: 0.9 }));
      expect(pairedDifferenceSpread(columns(xs))).toStrictEqual(pairedDifferenceSpread(xs));
    }
  });
  it('reject a cluster id outside [0, n), unequal lengths, and invalid values with the item index', () => {
    const c = columns(items(10));
    expect(() =>
      pairedScoreIntervals({ ...c, cluster: c.cluster.map((x, i) => (i === 3 ? 10 : x)) }, { level: 0.9 }),
    ).toThrow(/item 3 cluster id must be in \[0, 10\)/);
    expect(() => pairedDifferenceSpread({ ...c, qCandidate: c.qCandidate.subarray(1) })).toThrow(/column qCandidate/);
    expect(() => pairedDifferenceSpread({ ...c, weight: c.weight.map((w, i) => (i === 4 ? 0 : w)) })).toThrow(
      /item 4 weight must be a finite number > 0/,
    );
  });
});
