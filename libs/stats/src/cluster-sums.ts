/**
 * Paired items as columns, and the per-cluster sums the paired bootstrap and score intervals share.
 */
import type { PairedItem } from './bootstrap.js';

/**
 * Paired items as columns (one entry per item, all of one length n), so a caller holding many
 * pairs passes them without one object per item. Same meaning and units as {@link PairedItem}:
 * - `cluster`: integer cluster ids in [0, n); items sharing an id are resampled together.
 * - `weight` (> 0), `qIncumbent`, `qCandidate` (0–1), `costIncumbentUsd`, `costCandidateUsd`
 *   (USD ≥ 0; NaN = unknown).
 */
export interface PairedColumns {
  cluster: Int32Array;
  weight: Float64Array;
  qIncumbent: Float64Array;
  qCandidate: Float64Array;
  costIncumbentUsd: Float64Array;
  costCandidateUsd: Float64Array;
}

/** What the paired statistics accept: item objects, or the same items as {@link PairedColumns}. */
export type PairedInput = readonly PairedItem[] | PairedColumns;

/** Per-cluster sums in order of first appearance; arrays sized n, first k entries used. */
export interface ClusterSums {
  k: number;
  W: Float64Array;
  A: Float64Array;
  X: Float64Array;
  Y: Float64Array;
  costKnown: boolean;
}

const isColumns = (x: PairedInput): x is PairedColumns => !Array.isArray(x);

/** Number of items in either form. */
export function pairedLength(x: PairedInput): number {
  return isColumns(x) ? x.weight.length : x.length;
}

/**
 * Per-cluster sums Σw, Σw·d, Σw·x_inc, Σw·x_cand in order of first appearance, validating each
 * item (`who` prefixes the messages). Objects and columns give bit-identical sums for the same
 * items and the same partition into clusters.
 * Errors: RangeError on empty input, a weight not finite > 0, a quality ∉ [0, 1], a negative or
 * infinite cost; for columns also unequal lengths or a cluster id outside [0, n).
 */
export function clusterSums(items: PairedInput, who: string): ClusterSums {
  const n = pairedLength(items);
  if (n === 0) throw new RangeError(`${who}: no items (empty input)`);
  const W = new Float64Array(n);
  const A = new Float64Array(n);
  const X = new Float64Array(n);
  const Y = new Float64Array(n);
  const acc = { k: 0, costKnown: true };
  if (isColumns(items)) sumColumns(items, who, acc, W, A, X, Y);
  else {
    const index = new Map<string | number, number>();
    for (let i = 0; i < n; i++) {
      const it = items[i]!;
      let c = index.get(it.cluster);
      if (c === undefined) {
        c = acc.k++;
        index.set(it.cluster, c);
      }
      add(
        who,
        i,
        c,
        it.weight,
        it.qIncumbent,
        it.qCandidate,
        it.costIncumbentUsd,
        it.costCandidateUsd,
        acc,
        W,
        A,
        X,
        Y,
      );
    }
  }
  return { k: acc.k, W, A, X, Y, costKnown: acc.costKnown };
}

function sumColumns(
  cols: PairedColumns,
  who: string,
  acc: { k: number; costKnown: boolean },
  W: Float64Array,
  A: Float64Array,
  X: Float64Array,
  Y: Float64Array,
): void {
  const n = cols.weight.length;
  for (const name of ['cluster', 'qIncumbent', 'qCandidate', 'costIncumbentUsd', 'costCandidateUsd'] as const)
    if (cols[name].length !== n)
      throw new RangeError(`${who}: column ${name} has ${cols[name].length} entries, weight ${n}`);
  // cluster id -> index by first appearance (ids are < n, so one Int32Array, no map)
  const index = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    const id = cols.cluster[i]!;
    if (!(id >= 0 && id < n)) throw new RangeError(`${who}: item ${i} cluster id must be in [0, ${n}), got ${id}`);
    let c = index[id]!;
    if (c < 0) {
      c = acc.k++;
      index[id] = c;
    }
    add(
      who,
      i,
      c,
      cols.weight[i]!,
      cols.qIncumbent[i]!,
      cols.qCandidate[i]!,
      cols.costIncumbentUsd[i]!,
      cols.costCandidateUsd[i]!,
      acc,
      W,
      A,
      X,
      Y,
    );
  }
}

/** Validates item i and adds it to cluster c (the same arithmetic for both input forms). */
function add(
  who: string,
  i: number,
  c: number,
  weight: number,
  qi: number,
  qc: number,
  xi: number,
  xc: number,
  acc: { costKnown: boolean },
  W: Float64Array,
  A: Float64Array,
  X: Float64Array,
  Y: Float64Array,
): void {
  if (!(Number.isFinite(weight) && weight > 0))
    throw new RangeError(`${who}: item ${i} weight must be a finite number > 0, got ${weight}`);
  if (!(qi >= 0 && qi <= 1)) throw new RangeError(`${who}: item ${i} qIncumbent must be in [0, 1], got ${qi}`);
  if (!(qc >= 0 && qc <= 1)) throw new RangeError(`${who}: item ${i} qCandidate must be in [0, 1], got ${qc}`);
  checkCost(who, i, 'costIncumbentUsd', xi, acc);
  checkCost(who, i, 'costCandidateUsd', xc, acc);
  W[c]! += weight;
  A[c]! += weight * (qc - qi);
  if (acc.costKnown) {
    X[c]! += weight * xi;
    Y[c]! += weight * xc;
  }
}

function checkCost(who: string, i: number, name: string, x: number, acc: { costKnown: boolean }): void {
  if (typeof x !== 'number' || Number.isNaN(x)) acc.costKnown = false;
  else if (x < 0 || x === Number.POSITIVE_INFINITY)
    throw new RangeError(`${who}: item ${i} ${name} must be a finite number >= 0 (NaN = unknown), got ${x}`);
}
