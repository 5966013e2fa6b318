/**
 * Offline verification of an evidence bundle: recomputes hashes and the statistics.
 */
import { BUNDLE_PARTS, type BundleParts } from './bundle.js';
import { fastCanonicalJson as canonicalJson, fastContentHash as contentHash } from './canonical-fast.js';
import { checkComparisons } from './verify-comparisons.js';
import { checkJudge } from './verify-judge.js';
import { checkCostViews, checkLineage, checkPowerPlans } from './verify-rows.js';
import { isObj, type AddProblem, type Obj } from './verify-util.js';

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

/**
 * Verifies an evidence bundle offline, without trusting any recorded number:
 * 1. the report id is the sha256 of the report's canonical JSON without `report_id`; the run
 *    record id is the sha256 of the run record without `run_record_id`, the run record's
 *    `report_id` is the report's, and the bundle's `run_record_id` is the run record's;
 * 2. for every comparison, the recorded near-duplicate clusters are checked against the rows'
 *    SimHashes (near rows share a cluster, an id is the smallest hash of its cluster; links
 *    through items without a pair in the comparison cannot be seen from its rows: verify-comparisons.ts
 *    checkClusters), the fold sums (items, clusters, Σweight), the paired cluster bootstrap (libs/stats, the recorded
 *    seed, B and level), the level from α/K/run, the non-inferiority decision and the four-state
 *    outcome are recomputed from the paired rows and compared with `parts.stats` and the report;
 *    the MIN_ARM_OBSERVATIONS floor is checked; for `stopping: sequential` the confidence
 *    sequences (for `group_sequential` the planned looks, their α-spending boundaries and
 *    conditional power) are recomputed look by look from the rows in their recorded arrival order,
 *    and the report's `sequential` record (looks, decision, items used and saved) is checked against them;
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

/** The value checks, in the order of {@link verifyBundle}'s list (judge evidence first). */
function checkValues(bundle: Obj, parts: BundleParts, add: AddProblem): void {
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
  // 2. comparisons
  checkComparisons(parts, spec, callTypes, add);
  // 2b. noise floor from the A-A part; power plans from each comparison's paired rows
  checkPowerPlans(parts, callTypes, add);
  // 2c. lineage: every row names observations the bundle lists
  checkLineage(parts, add);
  // 3. cost views from cost evidence
  checkCostViews(parts, callTypes, add);
}
