import { describe, expect, it } from 'vitest';
import type { JudgeVerdict, ObsMessage, Observation } from '@shadowplane/contracts';
import { foldReport, verifyBundle } from './index.js';
import { synthObservation, synthSpec } from '@shadowplane/testkit';

const CID = 'cmp_0123456789abcdef';
const JUDGE = {
  kind: 'llm_judge' as const,
  provider: 'judgep',
  model: 'jm',
  weight: 0.5,
  rate_card: { input: 1, output: 1 },
};

function verdict(o: Observation, score: number | null, over: Partial<JudgeVerdict> = {}): JudgeVerdict {
  return {
    schema: 'shadow.judge_verdict/v1',
    campaign_id: CID,
    item_hash: o.item_hash,
    call_type: o.call_type,
    envelope_id: o.envelope_id,
    mode: 'pointwise',
    arm_id: o.arm_id,
    role: o.role,
    against_arm_id: null,
    judge_provider: 'judgep',
    judge_model: 'jm',
    judge_family: 'judgefam',
    arm_families: o.role === 'incumbent' ? ['sim'] : ['sim', 'sim'],
    template_id: 'pointwise/v1',
    template_hash: 'a'.repeat(64),
    score,
    null_reason: score === null ? 'judge_timeout' : null,
    orders: [{ order: 'single', value: score, reason: null }],
    position_flip: null,
    calls: 1,
    charged_micro_usd: 10,
    cost_usd: 0.00001,
    artifact_ref: null,
    ...over,
  };
}

// 100 items; incumbent wrong on i % 10 == 0, candidate wrong on i % 4 == 0 (numeric expectations);
// the judge agrees with the truth except on i % 20 == 1 (it calls a correct answer bad), and its
// call on the candidate's item 2 timed out.
function campaignMessages(judgeFamily = 'judgefam'): ObsMessage[] {
  const msgs: ObsMessage[] = [];
  for (let i = 0; i < 100; i++) {
    const inc = synthObservation(CID, i, 'inc', 'incumbent', { correct: i % 10 !== 0 });
    const cand = synthObservation(CID, i, 'cand', 'candidate', { correct: i % 4 !== 0 });
    msgs.push(inc, cand);
    const judged = (good: boolean) => (i % 20 === 1 ? 0 : good ? 1 : 0);
    msgs.push(verdict(inc, judged(i % 10 !== 0), { judge_family: judgeFamily }));
    msgs.push(verdict(cand, i === 2 ? null : judged(i % 4 !== 0), { judge_family: judgeFamily }));
  }
  return msgs;
}

describe('fold: LLM judge verdicts', () => {
  const spec = synthSpec(['cand'], { scorers: [{ kind: 'expectations' }, JUDGE] });
  const r = foldReport({
    campaign: { campaign_id: CID, spec, run_index: 1, state: 'completed' },
    messages: campaignMessages(),
    provisional: false,
  });
  const ct = r.report.call_types!.find((c) => c.call_type === 'math')!;

  it('computes kappa 0.844166 over 199 judged outputs (p_o 189/199, hand-computed from the table)', () => {
    expect(ct.judge!.kappa!.n).toBe(199);
    expect(ct.judge!.kappa!.observed_agreement).toBeCloseTo(189 / 199, 12);
    expect(ct.judge!.kappa!.value).toBeCloseTo(0.8441660141, 9);
    expect(ct.judge!.kappa!.lower).toBeLessThan(0.8441660141);
    expect(ct.judge!.kappa!.upper).toBeGreaterThan(0.8441660141);
  });

  it('counts a timed-out judge call as a null score with its reason, never as 0', () => {
    expect(ct.judge!.null_scores).toEqual({ judge_timeout: 1 });
    expect(ct.judge!.scored).toBe(199);
    expect(ct.judge!.verdicts).toBe(200);
    // the candidate's item 2 keeps its programmatic score (1): its arm mean is not pulled down by a 0
    const cand = ct.arms.find((a) => a.arm_id === 'cand')!;
    expect(cand.quality.n_scored).toBe(100);
  });

  it('reports judge spend as evaluation cost apart from the arms', () => {
    expect(r.report.judge!.spend_usd).toBeCloseTo((200 * 10) / 1e6, 12);
    expect(r.report.judge!.calls).toBe(200);
  });

  it('gives trust class B when the judge weight is 0.5 beside programmatic scores', () => {
    expect(ct.comparisons[0]!.trust_class).toBe('B');
    expect(ct.comparisons[0]!.judge_refused).toBeNull();
  });

  it('refuses the judge for a pair whose arm shares its family, naming the reason', () => {
    const r2 = foldReport({
      campaign: { campaign_id: CID, spec, run_index: 1, state: 'completed' },
      messages: campaignMessages('sim'),
      provisional: false,
    });
    const c = r2.report.call_types!.find((x) => x.call_type === 'math')!.comparisons[0]!;
    expect(c.judge_refused).toMatch(/^judge family sim equals the family of inc/);
    expect(c.trust_class).toBe('A');
  });

  it('gives trust class C with the kappa in the verdict line when only the judge scores', () => {
    const specJ = synthSpec(['cand'], { scorers: [JUDGE] });
    const r3 = foldReport({
      campaign: { campaign_id: CID, spec: specJ, run_index: 1, state: 'completed' },
      messages: campaignMessages(),
      provisional: false,
    });
    const c3 = r3.report.call_types![0]!;
    expect(c3.comparisons[0]!.trust_class).toBe('C');
    expect(c3.judge!.kappa).toBeNull();
    expect(c3.judge!.kappa_none_reason).toMatch(/no judged item has a programmatic score/);
    expect(r3.report.verdict_text!.join('\n')).toMatch(
      /trust class C \(judge has no kappa: no judged item has a programmatic score/,
    );
  });

  describe('the evidence bundle carries the judge verdicts and verify recomputes the judge summary', () => {
    const clone = () => JSON.parse(JSON.stringify(r.bundle)) as typeof r.bundle;
    it('bundles every verdict and the 199 agreement rows the kappa was computed from; the bundle verifies', () => {
      expect(r.bundle.parts.judge!.verdicts).toHaveLength(200);
      expect(r.bundle.parts.judge!.agreement).toHaveLength(199);
      expect(verifyBundle(r.bundle)).toEqual({ ok: true, problems: [] });
    });
    it('an edited verdict score is found (its agreement row and the recomputed summary disagree)', () => {
      const b = clone();
      const row = b.parts.judge!.agreement[5]!;
      const v = b.parts.judge!.verdicts.find(
        (x) => `${x.call_type}|${x.item_hash}|${x.arm_id}|${x.role}|${x.mode}` === row.verdict_key,
      )!;
      v.score = v.score === 1 ? 0 : 1;
      const res = verifyBundle(b);
      expect(res.ok).toBe(false);
      expect(res.problems[0]!.path).toBe('parts.judge.agreement[5].judge');
    });
    it('an agreement row whose judge label was flipped together with its verdict changes the kappa: found', () => {
      const b = clone();
      const row = b.parts.judge!.agreement[5]!;
      const v = b.parts.judge!.verdicts.find(
        (x) => `${x.call_type}|${x.item_hash}|${x.arm_id}|${x.role}|${x.mode}` === row.verdict_key,
      )!;
      v.score = row.judge = row.judge >= 0.5 ? 0 : 1;
      const res = verifyBundle(b);
      expect(res.ok).toBe(false);
      expect(res.problems.map((p) => p.path)).toEqual(
        expect.arrayContaining(['parts.report.judge', 'parts.report.call_types[0].judge']),
      );
    });
    it('a report whose kappa was edited is found at the judge summary', () => {
      const b = clone();
      b.parts.report.call_types![0]!.judge!.kappa!.value = 0.95;
      const res = verifyBundle(b);
      expect(res.ok).toBe(false);
      expect(res.problems[0]!.path).toBe('parts.report.call_types[0].judge');
    });
    it('a bundle written before judge evidence was bundled (no judge part, no hash) still verifies its other parts', () => {
      const b = clone();
      delete (b.parts as { judge?: unknown }).judge;
      delete (b.hashes as { judge?: string }).judge;
      const res = verifyBundle(b);
      // only the bundle hash changes (its hashes object lost a key)
      expect(res.problems.map((p) => p.path)).toEqual(['bundle_hash']);
    });
  });
});
