/**
 * Near-duplicate clustering of prompts by 64-bit SimHash.
 */

/** Hamming distance (bits of 64) at or below which two prompt SimHashes are near duplicates. */
export const NEAR_DUPLICATE_HAMMING_BITS = 3;

/** How clusters are formed, as written on the dataset card. */
export const NEAR_DUPLICATE_METHOD =
  'simhash64: Hamming distance <= 3 bits joins two items; clusters are the connected components (union-find); id = smallest item_hash of the cluster';

function popcount32(x: number): number {
  x = x - ((x >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/** Hamming distance between two 16-hex-char (64-bit) SimHashes. */
export function hammingDistance64(a: string, b: string): number {
  const ah = parseInt(a.slice(0, 8), 16);
  const al = parseInt(a.slice(8, 16), 16);
  const bh = parseInt(b.slice(0, 8), 16);
  const bl = parseInt(b.slice(8, 16), 16);
  return popcount32((ah ^ bh) >>> 0) + popcount32((al ^ bl) >>> 0);
}

/**
 * Clusters items whose prompt SimHashes are within {@link NEAR_DUPLICATE_HAMMING_BITS} bits,
 * transitively (union-find). Returns item_hash → cluster id, the id being the smallest item_hash
 * in the cluster (so it does not depend on input order).
 * Shape: `[item_hash, simhash]` pairs (simhash = 16 lowercase hex chars).
 * Cost: items with identical SimHashes are merged first; distinct SimHashes are compared only
 * within buckets of equal 16-bit bands (4 bands: with ≤ 3 differing bits at least one band is
 * equal — pigeonhole), so typical cost is near-linear.
 * Source: Charikar (2002) SimHash; Manku, Jain & Das Sarma (2007), "Detecting near-duplicates for
 * web crawling" (Hamming ≤ 3 of 64 bits, band tables).
 */
export function clusterBySimhash(items: readonly (readonly [string, string])[]): Map<string, string> {
  // distinct simhashes
  const bySim = new Map<string, number>();
  const sims: string[] = [];
  for (const [, s] of items) {
    if (!bySim.has(s)) {
      bySim.set(s, sims.length);
      sims.push(s);
    }
  }
  const parent = sims.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!;
      i = parent[i]!;
    }
    return i;
  };
  const union = (a: number, b: number) => {
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
  };
  for (let band = 0; band < 4; band++) {
    const buckets = new Map<string, number[]>();
    sims.forEach((s, i) => {
      const key = s.slice(band * 4, band * 4 + 4);
      const b = buckets.get(key);
      if (b) b.push(i);
      else buckets.set(key, [i]);
    });
    for (const b of buckets.values()) {
      for (let x = 0; x < b.length; x++) {
        for (let y = x + 1; y < b.length; y++) {
          if (hammingDistance64(sims[b[x]!]!, sims[b[y]!]!) <= NEAR_DUPLICATE_HAMMING_BITS) union(b[x]!, b[y]!);
        }
      }
    }
  }
  // representative = smallest item_hash per root
  const rep = new Map<number, string>();
  for (const [h, s] of items) {
    const r = find(bySim.get(s)!);
    const cur = rep.get(r);
    if (cur === undefined || h < cur) rep.set(r, h);
  }
  const out = new Map<string, string>();
  for (const [h, s] of items) out.set(h, rep.get(find(bySim.get(s)!))!);
  return out;
}
