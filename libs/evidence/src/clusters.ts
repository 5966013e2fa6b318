/**
 * Near-duplicate clustering of prompts by 64-bit SimHash.
 */

/** Hamming distance (bits of 64) at or below which two prompt SimHashes are near duplicates. */
export const NEAR_DUPLICATE_HAMMING_BITS = 3;

/** How clusters are formed, as written on the dataset card. */
export const NEAR_DUPLICATE_METHOD =
  'simhash64: Hamming distance <= 3 bits joins two items; clusters are the connected components (union-find); id = smallest item_hash of the cluster';

const HEX16 = /^[0-9a-f]{16}$/;

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
  const ids = clusterIdsBySimhash(
    items.length,
    (i) => items[i]![0],
    (i) => items[i]![1],
  );
  const out = new Map<string, string>();
  items.forEach(([h], i) => out.set(h, ids[i]!));
  return out;
}

/**
 * {@link clusterBySimhash} over `n` items read by index (item i: `itemHash(i)`, `simhash(i)`):
 * the cluster id of each item, by index. The same clusters and ids; SimHashes are compared as
 * two 32-bit halves and bucketed by counting sort, so 100k items make no per-item objects. A
 * SimHash that is not 16 lowercase hex digits (observations never carry one; a hand-edited bundle
 * might) joins only the items with the very same text.
 */
export function clusterIdsBySimhash(
  n: number,
  itemHash: (i: number) => string,
  simhash: (i: number) => string,
): string[] {
  // distinct simhashes, numbered in first-seen order; each item's number
  const bySim = new Map<string, number>();
  const simOf = new Int32Array(n);
  const his: number[] = [];
  const los: number[] = [];
  const bad: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = simhash(i);
    let k = bySim.get(s);
    if (k === undefined) {
      k = his.length;
      bySim.set(s, k);
      const ok = HEX16.test(s);
      if (!ok) bad.push(k);
      his.push(ok ? parseInt(s.slice(0, 8), 16) >>> 0 : 0);
      los.push(ok ? parseInt(s.slice(8, 16), 16) >>> 0 : 0);
    }
    simOf[i] = k;
  }
  bySim.clear();
  const m = his.length;
  const hi = Uint32Array.from(his);
  const lo = Uint32Array.from(los);
  his.length = 0;
  los.length = 0;
  const invalid = new Uint8Array(m);
  for (const k of bad) invalid[k] = 1;
  const parent = new Int32Array(m);
  for (let i = 0; i < m; i++) parent[i] = i;
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
  // band b is hex digits 4b … 4b + 3: the top or bottom 16 bits of one half
  const band = (b: number, i: number): number => {
    const w = b < 2 ? hi[i]! : lo[i]!;
    return b % 2 === 0 ? w >>> 16 : w & 0xffff;
  };
  const start = new Int32Array(65537);
  const order = new Int32Array(m);
  for (let b = 0; b < 4; b++) {
    start.fill(0);
    for (let i = 0; i < m; i++) start[band(b, i) + 1]!++;
    for (let k = 0; k < 65536; k++) start[k + 1]! += start[k]!;
    const fill = start.slice(0, 65536);
    for (let i = 0; i < m; i++) order[fill[band(b, i)]!++] = i;
    // each bucket holds its simhashes in first-seen order, as a list built by pushing would
    for (let k = 0; k < 65536; k++) {
      for (let x = start[k]!; x < start[k + 1]!; x++) {
        const p = order[x]!;
        if (invalid[p]) continue;
        for (let y = x + 1; y < start[k + 1]!; y++) {
          const q = order[y]!;
          if (invalid[q]) continue;
          const d = popcount32((hi[p]! ^ hi[q]!) >>> 0) + popcount32((lo[p]! ^ lo[q]!) >>> 0);
          if (d <= NEAR_DUPLICATE_HAMMING_BITS) union(p, q);
        }
      }
    }
  }
  // representative = smallest item_hash per root
  const rep = new Array<string | undefined>(m);
  for (let i = 0; i < n; i++) {
    const r = find(simOf[i]!);
    const h = itemHash(i);
    const cur = rep[r];
    if (cur === undefined || h < cur) rep[r] = h;
  }
  const out = new Array<string>(n);
  for (let i = 0; i < n; i++) out[i] = rep[find(simOf[i]!)]!;
  return out;
}
