import { MIN_ARM_OBSERVATIONS, SEQUENTIAL_BATCH_DEFAULT } from '@shadowplane/contracts';
import type { BundleParts, StatsPart } from './bundle.js';
import { fastCanonicalJson as canonicalJson } from './canonical-fast.js';
import { clusterIdsBySimhash } from './clusters.js';
import { computeComparison, type PairRow } from './compare.js';
import { sequentialSummary } from './sequential.js';
import { isObj, sameNumber, type AddProblem, type Obj } from './verify-util.js';

/**
 * Every comparison's paired rows, recomputed: SimHash clusters, item count and Σweight, the
 * MIN_ARM_OBSERVATIONS floor, the settings against the pinned `spec`, the fold result
 * (bootstrap intervals, level, decision, state), the sequential looks and summary for
 * `stopping: sequential` / `group_sequential`, and the report's copy of each (`callTypes` = report.call_types).
 */
export function checkComparisons(parts: BundleParts, spec: Obj | undefined, callTypes: Obj[], add: AddProblem): void {
  const findCmp = (ct: string, cand: string): { c: number; m: number; cmp: Obj } | null => {
    for (let c = 0; c < callTypes.length; c++) {
      if (callTypes[c]!.call_type !== ct) continue;
      const cmps = (callTypes[c]!.comparisons ?? []) as Obj[];
      const m = cmps.findIndex((x) => x.candidate_arm_id === cand);
      if (m >= 0) return { c, m, cmp: cmps[m]! };
    }
    return null;
  };

  const stats = parts.stats ?? [];
  (parts.paired ?? []).forEach((pr, i) => {
    const rows = pr.rows as PairRow[];
    checkClusters(rows, `parts.paired[${i}]`, add);
    const k = stats.findIndex((s) => s.call_type === pr.call_type && s.candidate_arm_id === pr.candidate_arm_id);
    const loc = findCmp(pr.call_type, pr.candidate_arm_id);
    const base = loc ? `parts.report.call_types[${loc.c}].comparisons[${loc.m}]` : null;
    if (loc && base) {
      const pairs = loc.cmp.pairs as Obj;
      if (!sameNumber(pairs.items, rows.length))
        add(`${base}.pairs.items`, rows.length, pairs.items, 'paired item count differs from the rows');
      const tw = rows.reduce((a, r) => a + r.weight, 0);
      if (!sameNumber(pairs.total_weight, tw))
        add(`${base}.pairs.total_weight`, tw, pairs.total_weight, 'total weight differs from the rows');
      if (rows.length < MIN_ARM_OBSERVATIONS) {
        if (loc.cmp.state !== 'CANNOT_MEASURE')
          add(
            `${base}.state`,
            'CANNOT_MEASURE',
            loc.cmp.state,
            `fewer than ${MIN_ARM_OBSERVATIONS} pairs must be CANNOT_MEASURE`,
          );
        const ins = loc.cmp.insufficient as Obj | null;
        if (ins && (!sameNumber(ins.have, rows.length) || ins.need !== MIN_ARM_OBSERVATIONS))
          add(`${base}.insufficient.have`, rows.length, ins.have, 'insufficient.have differs from the rows');
      }
    }
    if (k < 0) {
      if (loc && loc.cmp.stats !== null && loc.cmp.stats !== undefined)
        add(`${base}.stats`, null, loc.cmp.stats, 'report has statistics the bundle cannot back');
      return;
    }
    const s = stats[k] as StatsPart;
    const sp = `parts.stats[${k}]`;
    if (rows.length < MIN_ARM_OBSERVATIONS)
      add(`${sp}`, null, 'stats', `statistics recorded for fewer than ${MIN_ARM_OBSERVATIONS} pairs`);
    if (spec) {
      const bs = spec.bootstrap as Obj | undefined;
      const mg = spec.margins as Obj | undefined;
      const cands = spec.candidates as unknown[] | undefined;
      const expect: [string, unknown][] = [
        ['resamples', bs?.resamples],
        ['seed', bs?.seed],
        ['alpha', spec.alpha],
        ['candidates_k', cands?.length],
        ['run_index', parts.run_spec.run_index],
        ['margin_pp', mg?.noninferiority_pp],
        ['min_savings', mg?.min_savings],
      ];
      for (const [f, v] of expect)
        if (!sameNumber((s.settings as unknown as Obj)[f], v))
          add(`${sp}.settings.${f}`, v, (s.settings as unknown as Obj)[f], `setting ${f} differs from the pinned spec`);
    }
    const stopping = (spec?.stopping as string | undefined) ?? 'fixed';
    const seqSet = s.settings.sequential;
    if (
      spec &&
      ((stopping !== 'fixed') !== (seqSet !== undefined) ||
        (seqSet !== undefined &&
          (seqSet.batch_items !== ((spec.stopping_batch_items as number | undefined) ?? SEQUENTIAL_BATCH_DEFAULT) ||
            (stopping === 'group_sequential') !== (seqSet.method === 'group_sequential') ||
            (stopping === 'group_sequential'
              ? seqSet.max_items !== spec.max_items ||
                (seqSet.final === true) !== ((parts.report as unknown as Obj).provisional === false)
              : seqSet.max_items !== undefined || seqSet.final !== undefined))))
    )
      add(
        `${sp}.settings.sequential`,
        stopping === 'group_sequential'
          ? `the batch, arrival order, method group_sequential, max_items ${String(spec.max_items)} and final for a final report`
          : stopping === 'sequential'
            ? 'the batch and arrival order'
            : undefined,
        seqSet ?? null,
        'the sequential settings do not match the pinned stopping rule',
      );
    const r = computeComparison(rows, s.settings);
    const rec = s.result as unknown as Obj;
    const cmpVal = (path: string, want: unknown, got: unknown) => {
      if (isObj(want) || isObj(got)) {
        for (const f of ['point', 'lower', 'upper'])
          cmpVal(`${path}.${f}`, isObj(want) ? want[f] : want, isObj(got) ? got[f] : got);
        return;
      }
      if (Array.isArray(want)) {
        if (canonicalJson(want) !== canonicalJson(got ?? null)) add(path, want, got, 'recomputed value differs');
        return;
      }
      if (!sameNumber(want, got)) add(path, want, got, 'recomputed value differs');
    };
    for (const f of [
      'items',
      'clusters',
      'total_weight',
      'level',
      'alpha_one_sided_adjusted',
      'quality_delta',
      'cost_savings',
      'cost_savings_null_reason',
      'decision',
      'decision_reasons',
      'state',
    ] as const) {
      cmpVal(`${sp}.result.${f}`, r[f], rec[f]);
    }
    // the sequential decision, look by look, recomputed from the rows in their recorded order
    if (r.sequential || rec.sequential !== undefined) {
      const want = r.sequential ?? null;
      const got = (rec.sequential ?? null) as Obj | null;
      const looksWant = want?.looks ?? [];
      const looksGot = (got?.looks ?? []) as Obj[];
      looksWant.forEach((l, j) => {
        const g = looksGot[j];
        for (const f of ['items', 'clusters', 'decision'] as const)
          cmpVal(`${sp}.result.sequential.looks[${j}].${f}`, l[f], g?.[f]);
        for (const f of ['lower', 'upper'] as const) {
          cmpVal(`${sp}.result.sequential.looks[${j}].delta.${f}`, l.delta[f], (g?.delta as Obj | undefined)?.[f]);
          cmpVal(
            `${sp}.result.sequential.looks[${j}].savings.${f}`,
            l.savings?.[f] ?? null,
            (g?.savings as Obj | null | undefined)?.[f] ?? null,
          );
        }
      });
      if (canonicalJson(want) !== canonicalJson(got))
        add(`${sp}.result.sequential`, want, got, 'recomputed sequential decision differs');
      if (loc && base && want && spec) {
        const sum = sequentialSummary(
          want,
          {
            max_items: spec.max_items as number,
            stopping_batch_items: spec.stopping_batch_items as number | undefined,
          },
          rows.length,
        );
        if (canonicalJson(sum) !== canonicalJson(loc.cmp.sequential ?? null))
          add(
            `${base}.sequential`,
            sum,
            loc.cmp.sequential ?? null,
            'report sequential record differs from the recomputed one',
          );
      }
    }
    if (loc && base) {
      const st = loc.cmp.stats as Obj | null;
      if (!st) add(`${base}.stats`, 'statistics', null, 'report lacks the statistics the bundle records');
      else {
        cmpVal(`${base}.stats.quality_delta`, r.quality_delta, st.quality_delta);
        cmpVal(`${base}.stats.cost_savings`, r.cost_savings, st.cost_savings);
        cmpVal(`${base}.stats.level`, r.level, st.level);
        cmpVal(`${base}.stats.seed`, s.settings.seed, st.seed);
        cmpVal(`${base}.stats.resamples`, s.settings.resamples, st.resamples);
      }
      cmpVal(`${base}.decision`, r.decision, loc.cmp.decision);
      cmpVal(`${base}.state`, r.state, loc.cmp.state);
      cmpVal(`${base}.pairs.clusters`, r.clusters, (loc.cmp.pairs as Obj).clusters);
    }
  });
}

const HEX16 = /^[0-9a-f]{16}$/;

/**
 * What one comparison's paired rows can show about the clusters the fold recorded. The fold
 * clusters every admitted item of the call type, so two paired rows may share a cluster through an
 * item that has no pair in this comparison (a missing or failed candidate call): such links cannot
 * be recomputed from the rows, and a recorded cluster may be coarser than the rows' own SimHash
 * clusters. Checked: every SimHash is 16 lowercase hex digits; rows within
 * NEAR_DUPLICATE_HAMMING_BITS of each other (transitively, among the rows) share one recorded
 * cluster; a cluster id is never above a member's item_hash (it is the smallest of its cluster);
 * a row whose item_hash is some cluster's id is in that cluster.
 */
function checkClusters(rows: readonly PairRow[], at: string, add: AddProblem): void {
  rows.forEach((r, j) => {
    if (typeof r.simhash !== 'string' || !HEX16.test(r.simhash))
      add(`${at}.rows[${j}].simhash`, '16 lowercase hex digits', r.simhash, 'not a 64-bit SimHash');
  });
  const near = clusterIdsBySimhash(
    rows.length,
    (j) => rows[j]!.item_hash,
    (j) => rows[j]!.simhash,
  );
  const recordedOf = new Map<string, string>();
  const clusterOfItem = new Map<string, string>();
  for (const r of rows) clusterOfItem.set(r.item_hash, r.cluster);
  rows.forEach((r, j) => {
    const p = `${at}.rows[${j}].cluster`;
    const first = recordedOf.get(near[j]!);
    if (first === undefined) recordedOf.set(near[j]!, r.cluster);
    else if (first !== r.cluster)
      add(p, first, r.cluster, 'near-duplicate rows (by SimHash) are in different clusters');
    if (typeof r.cluster !== 'string' || r.cluster > r.item_hash)
      add(
        p,
        `<= ${r.item_hash}`,
        r.cluster,
        "cluster id is above its member's item_hash (it is the smallest of its cluster)",
      );
    const owner = clusterOfItem.get(r.cluster);
    if (owner !== undefined && owner !== r.cluster)
      add(p, owner, r.cluster, 'cluster id is the item_hash of a row in another cluster');
  });
}
