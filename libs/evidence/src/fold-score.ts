/**
 * Fold stage 3–4 (per call type): scoring of the ok observations of admitted items (programmatic
 * scorers, first-party outcomes, LLM-judge scores into a composite), the judge's pointwise
 * agreement with the programmatic scores, and the A-A noise floor.
 */
import type { CampaignSpec, OutcomeRecord } from '@shadowplane/contracts';
import {
  compositeQuality,
  scoreOutcome,
  scoreProgrammatic,
  type Composite,
  type ScoreResult,
} from '@shadowplane/scoring';
import { sdOfDifferences } from '@shadowplane/stats';
import type { ObsTable } from './obs-table.js';
import type { JudgeAgreementRow } from './bundle.js';
import { goodBad } from './judge-fold.js';
import { judgeKey } from './fold-ids.js';
import { ScoredIndex } from './fold-scored.js';

const NO_SCORES: ScoreResult[] = Object.freeze([]) as unknown as ScoreResult[];

/** What stage 3–4 gives the later stages of a call type. */
export interface CallTypeScores {
  scored: ScoredIndex;
  /** pointwise (judge, programmatic) labels */
  agreement: [string, string][];
  agreementRows: JudgeAgreementRow[];
  aaCalls: number;
  /** whether any observation got a quality */
  anyScored: boolean;
  aaDiffs: number[];
  aaSd: number | null;
}

/** Stage 3–4 (pure): scores one call type's observations (`ctObs`: its table rows, stage 1 order). */
export function scoreCallType(p: {
  ct: string;
  spec: CampaignSpec;
  table: ObsTable;
  ctObs: Int32Array;
  /** the call type's excluded items (every other item of `ctObs` is admitted) */
  excludedReason: ReadonlyMap<string, string>;
  outcomesFor: ReadonlyMap<string, OutcomeRecord[]>;
  judgeScores: ReadonlyMap<string, ScoreResult> | undefined;
  judgeWeight: number;
  /** keep every observation's programmatic scores (pairwise judge verdicts need them); else only where a judge score is */
  keepScores: boolean;
}): CallTypeScores {
  const { ct, spec, table, ctObs, excludedReason, outcomesFor, judgeScores, judgeWeight, keepScores } = p;
  let anyScored = false;
  const agreementRows: JudgeAgreementRow[] = [];
  const scored = new ScoredIndex(table, ctObs.length);
  for (const row of ctObs) {
    const o = table.row(row);
    if (excludedReason.has(o.item_hash)) continue;
    let composite: Composite | null = null;
    let compositeNoJudge: Composite | null = null;
    let progScores: ScoreResult[] = NO_SCORES;
    if (o.status === 'ok') {
      const scores: ScoreResult[] = scoreProgrammatic({
        output: o.output_text ?? null,
        expectations: o.expectations,
        scorers: spec.scorers,
        callType: ct,
      });
      for (const oc of outcomesFor.get(`${o.item_hash}|${o.arm_id}`) ?? []) scores.push(scoreOutcome(oc));
      const j = judgeScores?.get(judgeKey(o.item_hash, o.arm_id, o.role));
      // held only where a judge score will be compared with them: one array per observation adds up
      if (j) progScores = [...scores];
      else if (keepScores) progScores = scores;
      if (j) {
        compositeNoJudge = compositeQuality(scores, judgeWeight);
        scores.push(j);
      }
      composite = compositeQuality(scores, judgeWeight);
      if (composite.quality !== null) anyScored = true;
      if (o.instrument === 'replay') anyScored = true; // priced evidence: the report is not empty
    }
    scored.add(row, composite, compositeNoJudge, progScores);
  }
  // judge agreement with programmatic / first-party scores on the same outputs (pointwise)
  const agreement: [string, string][] = [];
  let aaCalls = 0;
  const aaDiffs: number[] = [];
  for (let i = 0; i < scored.length; i++) {
    const s = scored.at(i);
    const j = judgeScores?.get(judgeKey(s.obs.item_hash, s.obs.arm_id, s.obs.role));
    const prog = s.compositeNoJudge?.quality ?? null;
    if (j && j.score !== null && prog !== null && s.scores.some((x) => x.score !== null)) {
      agreement.push([goodBad(j.score), goodBad(prog)]);
      agreementRows.push({
        call_type: ct,
        verdict_key: `${s.obs.call_type}|${s.obs.item_hash}|${s.obs.arm_id}|${s.obs.role}|pointwise`,
        mode: 'pointwise',
        judge: j.score,
        programmatic: prog,
      });
    }
    if (s.obs.role !== 'incumbent_aa') continue;
    aaCalls++;
    // 4. A-A noise floor
    if (s.composite?.quality == null) continue;
    const first = scored.get(s.row, spec.incumbent.id, 'incumbent');
    // the judge does not grade A-A second calls: compare like with like (no judge on either side)
    const ref = s.judged ? first?.composite : first?.compositeNoJudge;
    if (ref?.quality != null) aaDiffs.push(s.composite.quality - ref.quality);
  }
  const aaSd = aaDiffs.length >= 2 ? sdOfDifferences(aaDiffs) : null;
  return { scored, agreement, agreementRows, aaCalls, anyScored, aaDiffs, aaSd };
}
