import type { CampaignSpec } from '@shadowplane/contracts';
import type { BundleParts, JudgeAgreementRow } from './bundle.js';
import { fastCanonicalJson as canonicalJson } from './canonical-fast.js';
import { goodBad, judgeSummary, preference } from './judge-fold.js';
import { sameNumber, type AddProblem, type Obj } from './verify-util.js';

/**
 * Judge evidence: every agreement row's judge value is the score of the verdict it names; the
 * judge summaries of the report (whole report and per call type: verdict and null counts, calls,
 * spend, kappa with its interval, position flips) are recomputed from the verdicts and the rows
 * with the fold's own function (judge-fold.ts judgeSummary) and must be equal.
 */
export function checkJudge(parts: BundleParts, add: AddProblem): void {
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
