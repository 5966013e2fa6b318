/**
 * Offline verification of an evidence bundle: recomputes hashes and the statistics.
 */
import { MIN_ARM_OBSERVATIONS, type CampaignSpec } from '@shadowplane/contracts';
import { sdOfDifferences } from '@shadowplane/stats';
import { fastCanonicalJson as canonicalJson, fastContentHash as contentHash } from './canonical-fast.js';
import {
  BUNDLE_PARTS,
  type BundleParts,
  type CostEvidenceRow,
  type JudgeAgreementRow,
  type StatsPart,
} from './bundle.js';
import { goodBad, judgeSummary, preference } from './judge-fold.js';
import { clusterBySimhash } from './clusters.js';
import { comparisonPowerPlan, computeComparison, type PairRow } from './compare.js';
import { sequentialSummary } from './sequential.js';

/** One mismatch found by {@link verifyBundle}: the JSON path (dotted, `[i]` for indexes) of the recorded value. */
export interface BundleProblem {
  path: string;
  expected: unknown;
  actual: unknown;
  message: string;
}

/** Result of {@link verifyBundle}; `problems[0]` is the first mismatching path. */
export interface VerifyResult {
  ok: boolean;
  problems: BundleProblem[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function sameNumber(a: unknown, b: unknown): boolean {
  if (typeof a !== 'number' || typeof b !== 'number') return a === b;
  if (a === b) return true;
  return Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(a), Math.abs(b));
}

/**
 * Verifies an evidence bundle offline, without trusting any recorded number:
 * 1. the report id is the sha256 of the report's canonical JSON without `report_id`; the run
 *    record id is the sha256 of the run record without `run_record_id`, the run record's
 *    `report_id` is the report's, and the bundle's `run_record_id` is the run record's;
 * 2. for every comparison, near-duplicate clusters are recomputed from the rows' SimHashes, the
 *    fold sums (items, clusters, Σweight), the paired cluster bootstrap (libs/stats, the recorded
 *    seed, B and level), the level from α/K/run, the non-inferiority decision and the four-state
 *    outcome are recomputed from the paired rows and compared with `parts.stats` and the report;
 *    the MIN_ARM_OBSERVATIONS floor is checked; for `stopping: sequential` the confidence
 *    sequences are recomputed look by look from the rows in their recorded arrival order, and the
 *    report's `sequential` record (looks, decision, items used and saved) is checked against them;
 * 3. the A-A sd and every comparison's power plan (MDE, clusters needed) are recomputed;
 *    each arm's per-request cost mean is recomputed from `parts.cost_evidence`;
 * 4. dataset cards and the pinned spec agree between the report and the parts; every paired row
 *    and cost-evidence row names an observation listed in the lineage;
 * 5. judge evidence (`parts.judge`): each kappa agreement row matches the verdict it names, and
 *    the report's judge summaries (counts, spend, kappa and its interval, position flips) are
 *    recomputed from the verdicts and rows;
 * 6. every part's hash, and the bundle hash, are recomputed.
 * Value checks come before hash checks, so `problems[0].path` names the recorded number that
 * disagrees (e.g. `parts.stats[0].result.quality_delta.lower`) when one was altered.
 * Shape: any JSON value → { ok, problems }. Never throws for bad input: a malformed bundle is a problem at its path.
 */
export function verifyBundle(bundle: unknown): VerifyResult {
  const problems: BundleProblem[] = [];
  const add = (path: string, expected: unknown, actual: unknown, message: string) =>
    problems.push({ path, expected, actual, message });
  if (
    !isObj(bundle) ||
    bundle.schema !== 'shadow.evidence_bundle/v1' ||
    !isObj(bundle.parts) ||
    !isObj(bundle.hashes)
  ) {
    add(
      '$',
      'shadow.evidence_bundle/v1 with parts and hashes',
      isObj(bundle) ? bundle.schema : typeof bundle,
      'not an evidence bundle',
    );
    return { ok: false, problems };
  }
  const parts = bundle.parts as unknown as BundleParts;
  try {
    checkValues(bundle as Obj, parts, add);
  } catch (e) {
    add('parts', 'a well-formed bundle', (e as Error).message, `could not recompute: ${(e as Error).message}`);
  }
  const hashes = bundle.hashes as Obj;
  for (const k of BUNDLE_PARTS) {
    // bundles written before judge evidence was bundled have no judge part and no hash for it
    if (k === 'judge' && !('judge' in hashes) && (parts as unknown as Obj)['judge'] === undefined) continue;
    let actual: string | null = null;
    try {
      actual = contentHash((parts as unknown as Obj)[k] ?? null);
    } catch {
      actual = null;
    }
    if (hashes[k] !== actual) add(`hashes.${k}`, actual, hashes[k], `part ${k} does not hash to its recorded hash`);
  }
  const bh = contentHash({ report_id: bundle.report_id ?? null, hashes: bundle.hashes });
  if (bundle.bundle_hash !== bh)
    add('bundle_hash', bh, bundle.bundle_hash, 'bundle hash does not match report_id + part hashes');
  return { ok: problems.length === 0, problems };
}

/**
 * Judge evidence: every agreement row's judge value is the score of the verdict it names; the
 * judge summaries of the report (whole report and per call type: verdict and null counts, calls,
 * spend, kappa with its interval, position flips) are recomputed from the verdicts and the rows
 * with the fold's own function (judge-fold.ts judgeSummary) and must be equal.
 */
function checkJudge(
  parts: BundleParts,
  add: (path: string, expected: unknown, actual: unknown, message: string) => void,
): void {
  const jp = parts.judge;
  if (jp === undefined) return; // written before judge evidence was bundled
  const report = parts.report as unknown as Obj;
  const spec = (parts.run_spec as unknown as Obj | undefined)?.['spec'] as CampaignSpec | undefined;
  if (!spec || !Array.isArray(spec.scorers)) return;
  const verdicts = jp?.verdicts ?? [];
  const rows = jp?.agreement ?? [];
  const byKey = new Map(verdicts.map((v) => [`${v.call_type}|${v.item_hash}|${v.arm_id}|${v.role}|${v.mode}`, v]));
  rows.forEach((r, i) => {
    const v = byKey.get(r.verdict_key);
    if (v && !sameNumber(v.score, r.judge))
      add(`parts.judge.agreement[${i}].judge`, v.score, r.judge, 'agreement row disagrees with the verdict it names');
  });
  const label = (r: JudgeAgreementRow): [string, string] =>
    r.mode === 'pointwise'
      ? [goodBad(r.judge), goodBad(r.programmatic)]
      : [preference(r.judge), preference(r.programmatic)];
  const same = (path: string, want: unknown, got: unknown) => {
    if (canonicalJson(want ?? null) !== canonicalJson(got ?? null))
      add(path, want ?? null, got ?? null, 'judge summary does not follow from the judge verdicts and agreement rows');
  };
  same('parts.report.judge', judgeSummary(spec, verdicts, rows.map(label)), report['judge']);
  ((report['call_types'] ?? []) as Obj[]).forEach((ct, c) => {
    const name = ct['call_type'];
    const want = judgeSummary(
      spec,
      verdicts.filter((v) => v.call_type === name),
      rows.filter((r) => r.call_type === name).map(label),
    );
    same(`parts.report.call_types[${c}].judge`, want, ct['judge']);
  });
}

function checkValues(
  bundle: Obj,
  parts: BundleParts,
  add: (path: string, expected: unknown, actual: unknown, message: string) => void,
): void {
  checkJudge(parts, add);
  const report = parts.report as unknown as Obj;
  // 1. report id
  const { report_id: rid, ...body } = report;
  const recomputedId = contentHash(body);
  if (rid !== recomputedId)
    add('parts.report.report_id', recomputedId, rid, 'report_id is not the hash of the report body');
  if (bundle.report_id !== rid) add('report_id', rid, bundle.report_id, 'bundle report_id differs from the report');
  // 1b. run record: its own id, and it points at this report
  const run = parts.run_record as unknown;
  if (!isObj(run))
    add('parts.run_record', 'a shadow.run_record/v1 object', run ?? null, 'the bundle has no run record');
  else {
    const { run_record_id: runId, ...runBody } = run;
    const recomputedRunId = contentHash(runBody);
    if (runId !== recomputedRunId)
      add(
        'parts.run_record.run_record_id',
        recomputedRunId,
        runId,
        'run_record_id is not the hash of the run record body',
      );
    if (run.report_id !== rid)
      add('parts.run_record.report_id', rid, run.report_id, 'the run record points at another report');
    if (bundle.run_record_id !== runId)
      add('run_record_id', runId, bundle.run_record_id, 'bundle run_record_id differs from the run record');
  }
  const spec = parts.run_spec?.spec as Obj | undefined;
  if (canonicalJson(parts.run_spec?.spec ?? null) !== canonicalJson(report.spec ?? null))
    add('parts.run_spec.spec', report.spec, parts.run_spec?.spec, 'pinned spec differs from the report spec');

  const callTypes = (report.call_types ?? []) as Obj[];
  const findCmp = (ct: string, cand: string): { c: number; m: number; cmp: Obj } | null => {
    for (let c = 0; c < callTypes.length; c++) {
      if (callTypes[c]!.call_type !== ct) continue;
      const cmps = (callTypes[c]!.comparisons ?? []) as Obj[];
      const m = cmps.findIndex((x) => x.candidate_arm_id === cand);
      if (m >= 0) return { c, m, cmp: cmps[m]! };
    }
    return null;
  };

  // 2. comparisons
  const stats = parts.stats ?? [];
  (parts.paired ?? []).forEach((pr, i) => {
    const rows = pr.rows as PairRow[];
    const clusters = clusterBySimhash(rows.map((r) => [r.item_hash, r.simhash] as const));
    rows.forEach((r, j) => {
      const c = clusters.get(r.item_hash);
      if (c !== r.cluster)
        add(`parts.paired[${i}].rows[${j}].cluster`, c, r.cluster, 'cluster id differs from the SimHash clustering');
    });
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
    if (spec && (spec.stopping === 'sequential') !== (s.settings.sequential !== undefined))
      add(
        `${sp}.settings.sequential`,
        spec.stopping === 'sequential' ? 'the batch and arrival order' : undefined,
        s.settings.sequential ?? null,
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

  // 2b. noise floor from the A-A part; power plans from each comparison's paired rows
  const noiseFloorOf = new Map<string, { pairs: number; sd: number | null }>();
  (parts.aa ?? []).forEach((aa, i) => {
    const sd = aa.diffs.length >= 2 ? sdOfDifferences(aa.diffs) : null;
    if (!sameNumber(aa.sd, sd)) add(`parts.aa[${i}].sd`, sd, aa.sd, 'A-A sd differs from the recorded differences');
    noiseFloorOf.set(aa.call_type, { pairs: aa.diffs.length, sd });
  });
  callTypes.forEach((ct, c) => {
    ((ct.comparisons ?? []) as Obj[]).forEach((cmp, m) => {
      const pp = cmp.power_plan as Obj | null;
      if (!pp || typeof pp.clusters !== 'number' || pp.sd_source === 'aa_pairs') return;
      const pr = (parts.paired ?? []).find(
        (x) => x.call_type === ct.call_type && x.candidate_arm_id === cmp.candidate_arm_id,
      );
      const plan = comparisonPowerPlan((pr?.rows ?? []) as PairRow[], {
        clusters: pp.clusters,
        alpha_one_sided: pp.alpha_one_sided as number,
        margin_pp: pp.margin_pp as number,
        noise_floor: noiseFloorOf.get(ct.call_type as string) ?? { pairs: 0, sd: null },
      });
      const base = `parts.report.call_types[${c}].comparisons[${m}].power_plan`;
      for (const f of [
        'sd_diff',
        'sd_source',
        'mde_pp',
        'clusters_needed_for_margin',
        'powered',
        'noise_floor_sd',
      ] as const) {
        if (!sameNumber(pp[f] ?? null, plan[f] ?? null))
          add(`${base}.${f}`, plan[f], pp[f], `power plan ${f} differs from the one recomputed from the paired rows`);
      }
    });
  });

  // 2c. lineage: every row names observations the bundle lists
  const lineage = new Set<string>(parts.lineage?.observation_ids ?? []);
  (parts.paired ?? []).forEach((pr, i) =>
    (pr.rows as PairRow[]).forEach((r, j) => {
      for (const f of ['obs_inc', 'obs_cand'] as const)
        if (!lineage.has(r[f]))
          add(
            `parts.paired[${i}].rows[${j}].${f}`,
            'an id in parts.lineage.observation_ids',
            r[f],
            'paired row names an observation missing from the lineage',
          );
    }),
  );
  (parts.cost_evidence ?? []).forEach((e, i) => {
    if (!lineage.has(e.obs_id))
      add(
        `parts.cost_evidence[${i}].obs_id`,
        'an id in parts.lineage.observation_ids',
        e.obs_id,
        'cost evidence names an observation missing from the lineage',
      );
  });

  // 3. cost views from cost evidence
  const ev = (parts.cost_evidence ?? []) as CostEvidenceRow[];
  callTypes.forEach((ct, c) => {
    ((ct.arms ?? []) as Obj[]).forEach((arm, a) => {
      const rows = ev.filter((e) => e.call_type === ct.call_type && e.arm_id === arm.arm_id && e.on_basis);
      const cost = arm.cost as Obj;
      const total = rows.reduce((x, e) => x + (e.usd ?? 0), 0);
      const mean = rows.length ? total / rows.length : null;
      const p = `parts.report.call_types[${c}].arms[${a}].cost`;
      if (!sameNumber(cost.n_priced, rows.length))
        add(`${p}.n_priced`, rows.length, cost.n_priced, 'priced count differs from the cost evidence');
      if (!sameNumber(cost.per_request_mean_usd, mean))
        add(
          `${p}.per_request_mean_usd`,
          mean,
          cost.per_request_mean_usd,
          'per-request mean differs from the cost evidence',
        );
      if (rows.some((e) => e.basis !== cost.basis))
        add(
          `${p}.basis`,
          cost.basis,
          rows.find((e) => e.basis !== cost.basis)?.basis,
          'cost evidence on another basis was counted (bases never blend)',
        );
    });
    const card = (parts.dataset_cards ?? [])[c];
    if (canonicalJson(card ?? null) !== canonicalJson(ct.dataset_card ?? null))
      add(`parts.dataset_cards[${c}]`, ct.dataset_card, card, 'dataset card differs from the report');
  });
}
