/**
 * Fold stage 2 (per call type): the items, their exclusions (item events, traffic classes not
 * admitted by the spec), exact-duplicate weights (1 + duplicate events), near-duplicate clusters
 * (prompt SimHash) and strata.
 */
import { BASELINE_ARTIFACT_MISSING, type CampaignSpec, type ItemEvent } from '@shadowplane/contracts';
import type { ObsTable } from './obs-table.js';
import { clusterIdsBySimhash } from './clusters.js';
import { inc } from './fold-util.js';

/** The admitted items of one call type and what the later stages need about them. */
export interface CallTypeItems {
  /** excluded items' reasons; an item of the call type is admitted exactly when it has none */
  excludedReason: Map<string, string>;
  /** admitted item hashes, sorted */
  admitted: string[];
  // per admitted item, at its index in `admitted` (arrays, not item_hash-keyed maps: a smaller live heap)
  /** table row of the item's first observation (prompt SimHash, expectations, traffic class) */
  firstRow: Int32Array;
  /** exact-duplicate weight: 1 + duplicate events */
  weights: Float64Array;
  /** near-duplicate cluster id (smallest item_hash of the cluster) */
  clusters: string[];
  strata: Record<string, number>;
  trafficCounts: Record<string, number>;
  exclusions: { item_hash: string; reason: string }[];
  exclusionCounts: Record<string, number>;
  /** weight of items whose baseline half is unknown (compare mode) */
  ineligibleWeight: number;
}

/** Stage 2 (pure): admits the items of one call type; `ctObs` are its table rows (stage 1 order). */
export function admitItems(
  spec: CampaignSpec,
  table: ObsTable,
  ctObs: Int32Array,
  ctEvents: readonly ItemEvent[],
): CallTypeItems {
  // an item excluded more than once keeps its smallest reason (code-unit order), never the one
  // whose envelope id happens to sort first (envelope ids are random per run)
  const excludedReason = new Map<string, string>();
  for (const e of ctEvents) {
    if (e.kind !== 'excluded') continue;
    const r = e.reason ?? 'excluded';
    const had = excludedReason.get(e.item_hash);
    if (had === undefined || r < had) excludedReason.set(e.item_hash, r);
  }
  const trafficCounts: Record<string, number> = {};
  // each item's first row, by the pool id of its item_hash (one id per distinct string), in the
  // order first seen: typed arrays, not a 100k-entry map
  const firstOf = new Int32Array(table.pool.length).fill(-1);
  const seen: number[] = [];
  const hashCol = table.s.item_hash;
  for (const r of ctObs) {
    const pid = hashCol[r]!;
    if (firstOf[pid]! < 0) {
      firstOf[pid] = r;
      seen.push(pid);
    }
  }
  const hashOf = (pid: number) => table.pool[pid] as string;
  for (const pid of seen) {
    const o = table.row(firstOf[pid]!);
    inc(trafficCounts, o.traffic_class);
    const h = hashOf(pid);
    if (!spec.traffic_classes.includes(o.traffic_class) && !excludedReason.has(h))
      excludedReason.set(h, `traffic_class:${o.traffic_class}`);
  }
  const admittedIds = seen.filter((pid) => !excludedReason.has(hashOf(pid)));
  seen.length = 0;
  admittedIds.sort((a, b) => {
    const x = hashOf(a);
    const y = hashOf(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
  const n = admittedIds.length;
  const admitted = new Array<string>(n);
  const firstRow = new Int32Array(n);
  const indexOf = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    admitted[i] = hashOf(admittedIds[i]!);
    firstRow[i] = firstOf[admittedIds[i]!]!;
    indexOf.set(admitted[i]!, i);
  }
  const weights = new Float64Array(n).fill(1);
  for (const e of ctEvents) {
    const i = e.kind === 'duplicate' ? indexOf.get(e.item_hash) : undefined;
    if (i !== undefined) weights[i]!++;
  }
  indexOf.clear();
  const clusters = clusterIdsBySimhash(
    n,
    (i) => admitted[i]!,
    (i) => table.row(firstRow[i]!).prompt_simhash,
  );
  const strata: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const kinds = [...new Set(table.row(firstRow[i]!).expectations.map((e) => e.kind))].sort();
    inc(strata, kinds.length ? kinds.join('+') : 'none');
  }
  const exclusions = [...excludedReason.entries()]
    .sort((a, b) => (a[0] < b[0] ? -1 : 1))
    .map(([item_hash, reason]) => ({ item_hash, reason }));
  const exclusionCounts: Record<string, number> = {};
  for (const x of exclusions) inc(exclusionCounts, x.reason);
  // compare mode: items whose baseline half is unknown widen every comparison's interval (compare.ts)
  let ineligibleWeight = 0;
  for (const x of exclusions) if (x.reason === BASELINE_ARTIFACT_MISSING) ineligibleWeight++;
  for (const e of ctEvents)
    if (e.kind === 'duplicate' && excludedReason.get(e.item_hash) === BASELINE_ARTIFACT_MISSING) ineligibleWeight++;
  return {
    excludedReason,
    admitted,
    firstRow,
    weights,
    clusters,
    strata,
    trafficCounts,
    exclusions,
    exclusionCounts,
    ineligibleWeight,
  };
}
