import { describe, expect, it } from 'vitest';
import { studentTPpf } from '@shadowplane/stats';
import { canonicalJson, contentHash, type ObsMessage } from '@shadowplane/contracts';
import { foldReport, verifyBundle } from './index.js';
import { seededRandom, synthCampaign, synthEvent, synthObservation, synthSpec, uuidFrom } from '@shadowplane/testkit';

const CID = 'cmp_0123456789abcdef';
const campaign = (candidates: string[], over = {}) => ({
  campaign_id: CID,
  spec: synthSpec(candidates, over),
  run_index: 1,
  state: 'completed',
});
const cmpOf = (r: ReturnType<typeof foldReport>, cand: string) =>
  r.report.call_types!.find((c) => c.call_type === 'math')!.comparisons.find((c) => c.candidate_arm_id === cand)!;

describe('fold: verdicts against a known ground truth (GSM8K outputs)', () => {
  const msgs = synthCampaign(CID, 300, 0.9, { equal: 'same', worse: 0.55 });
  const r = foldReport({ campaign: campaign(['equal', 'worse']), messages: msgs, provisional: false });

  it('passes a candidate that is truly equal and cheaper (BEAT), fails one that is much worse', () => {
    const eq = cmpOf(r, 'equal');
    expect(eq.decision).toBe('pass');
    expect(eq.state).toBe('BEAT');
    // No discordant pair among 300: the interval does not collapse to [0, 0]. Its half-width is the
    // score bound t²/(k − 1 + t²) of zero events (k = 300 singleton clusters, t = t₂₉₉ at level).
    const t = studentTPpf((1 + eq.stats!.level) / 2, 299);
    expect(eq.stats!.quality_delta.point).toBe(0);
    expect(eq.stats!.quality_delta.lower).toBeCloseTo(-(t * t) / (299 + t * t), 8);
    expect(eq.stats!.quality_delta.upper).toBeCloseTo((t * t) / (299 + t * t), 8);
    const w = cmpOf(r, 'worse');
    expect(w.decision).toBe('fail');
    expect(w.state).toBe('NOT_BEAT');
    expect(w.decision_reasons[0]).toMatch(/^quality_upper_bound_below_margin/);
  });
  it('uses the Bonferroni and α-spending level for K = 2, run 1, α = 0.05', () => {
    // α_eff = 0.05·6/π²/2 = 0.015198177...; level = 1 − 2·α_eff
    expect(cmpOf(r, 'equal').stats!.level).toBeCloseTo(0.9696036451, 9);
    expect(cmpOf(r, 'equal').stats!.seed).toBe(1);
    expect(cmpOf(r, 'equal').stats!.resamples).toBe(2000);
  });
  it('reports an independent equal-accuracy candidate as pass or inconclusive, never fail', () => {
    const r2 = foldReport({
      campaign: campaign(['indep']),
      messages: synthCampaign(CID, 300, 0.9, { indep: 0.9 }, 11),
      provisional: false,
    });
    expect(['pass', 'inconclusive']).toContain(cmpOf(r2, 'indep').decision);
    if (cmpOf(r2, 'indep').decision === 'inconclusive')
      expect(cmpOf(r2, 'indep').remediation.map((x) => x.code)).toContain('capture_more_traffic');
  });
  it('gives the same report id for the same messages in another order, and the stored text is canonical', () => {
    const shuffled = [...msgs];
    const rnd = seededRandom(3);
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
    }
    const again = foldReport({ campaign: campaign(['equal', 'worse']), messages: shuffled, provisional: false });
    expect(again.reportId).toBe(r.reportId);
    expect(again.reportJson).toBe(r.reportJson);
    expect(canonicalJson(JSON.parse(r.reportJson))).toBe(r.reportJson);
    expect(r.reportId).toMatch(/^[0-9a-f]{64}$/);
  });
  it('puts candidates on the frontier and names nobody beside it when all are measurable', () => {
    const f = r.report.call_types![0]!.frontier;
    expect(f.points.map((p) => p.arm_id).sort()).toEqual(['equal', 'inc', 'worse']);
    expect(f.points.find((p) => p.arm_id === 'inc')!.dominated_by).toBe('equal');
    expect(f.beside.map((b) => b.arm_id).sort()).toEqual(
      ['inc', 'worse'].filter((a) => f.points.find((p) => p.arm_id === a)!.dominated_by !== null).sort(),
    );
  });
});

describe('fold: refusals', () => {
  it('mixed bases: every pair priced on different bases → CANNOT_MEASURE{mixed_bases}', () => {
    const msgs: ObsMessage[] = [];
    for (let i = 0; i < 20; i++) {
      msgs.push(synthObservation(CID, i, 'inc', 'incumbent', { basis: 'rate_card' }));
      msgs.push(synthObservation(CID, i, 'cand', 'candidate', { basis: 'provider_reported' }));
    }
    const c = cmpOf(foldReport({ campaign: campaign(['cand']), messages: msgs, provisional: false }), 'cand');
    expect(c.state).toBe('CANNOT_MEASURE');
    expect(c.cannot_measure!.reason).toBe('mixed_bases');
    expect(c.pairs.excluded).toEqual({ off_basis: 20 });
    expect(c.stats).toBeNull();
  });
  it('mixed bases within an arm: the majority basis decides and off-basis pairs are excluded and counted', () => {
    const msgs: ObsMessage[] = [];
    for (let i = 0; i < 12; i++) {
      const basis = i < 9 ? 'rate_card' : 'provider_reported';
      msgs.push(synthObservation(CID, i, 'inc', 'incumbent', { basis: i < 9 ? 'rate_card' : 'rate_card' }));
      msgs.push(synthObservation(CID, i, 'cand', 'candidate', { basis }));
    }
    const c = cmpOf(foldReport({ campaign: campaign(['cand']), messages: msgs, provisional: false }), 'cand');
    expect(c.basis).toBe('rate_card');
    expect(c.pairs.items).toBe(9);
    expect(c.pairs.excluded).toEqual({ off_basis: 3 });
    expect(c.state).not.toBe('CANNOT_MEASURE');
  });
  it('a missing arm (candidate never succeeded) → CANNOT_MEASURE{missing_arm}', () => {
    const msgs: ObsMessage[] = [];
    for (let i = 0; i < 20; i++) {
      msgs.push(synthObservation(CID, i, 'inc', 'incumbent'));
      msgs.push(synthObservation(CID, i, 'cand', 'candidate', { status: 'error', error_class: 'rate_limited' }));
    }
    const r = foldReport({ campaign: campaign(['cand']), messages: msgs, provisional: false });
    const c = cmpOf(r, 'cand');
    expect(c.state).toBe('CANNOT_MEASURE');
    expect(c.cannot_measure!.reason).toBe('missing_arm');
    const arm = r.report.call_types![0]!.arms.find((a) => a.arm_id === 'cand')!;
    expect(arm.status).toBe('missing');
    expect(arm.errors_by_class.rate_limited!.n).toBe(20);
    expect(arm.error_share.share).toBe(1);
    expect(r.report.call_types![0]!.frontier.beside.find((b) => b.arm_id === 'cand')!.why).toBe(
      'cannot measure: missing_arm',
    );
  });
  it('7 observations → insufficient{below_min_n: true, need: 8, have: 7}', () => {
    const c = cmpOf(
      foldReport({
        campaign: campaign(['cand']),
        messages: synthCampaign(CID, 7, 0.9, { cand: 'same' }),
        provisional: false,
      }),
      'cand',
    );
    expect(c.state).toBe('CANNOT_MEASURE');
    expect(c.cannot_measure!.reason).toBe('insufficient');
    expect(c.insufficient).toEqual({ below_min_n: true, need: 8, have: 7 });
    expect(c.decision).toBeNull();
    expect(c.remediation[0]!.code).toBe('capture_more_traffic');
    // conservative prior √0.5, α_eff = 0.05·6/π² = 0.0303964, z = 1.8747 + 0.8416; n = ⌈(100·2.7163·0.70711/2)²⌉
    expect(c.power_plan!.sd_source).toBe('conservative_prior');
    // with t quantiles (df = k − 1) slightly more than the normal-theory 9,222
    expect(c.remediation[0]!.text).toMatch(
      /^capture more traffic: need 922\d clusters for MDE <= 2pp \(have 7; sd 0\.707 from the conservative prior\)$/,
    );
  });
  it('an all-refused run (every item excluded) is written with per-item reasons and CANNOT_MEASURE', () => {
    const msgs: ObsMessage[] = [...synthCampaign(CID, 10, 0.9, { cand: 'same' })];
    for (let i = 0; i < 10; i++) msgs.push(synthEvent(CID, i, 'excluded', i % 2 ? 'pii_uncertain' : 'lost_in_flight'));
    const r = foldReport({ campaign: campaign(['cand']), messages: msgs, provisional: false });
    const ct = r.report.call_types![0]!;
    expect(ct.dataset_card.unique_items).toBe(0);
    expect(ct.dataset_card.exclusions).toHaveLength(10);
    expect(ct.dataset_card.exclusion_counts).toEqual({ lost_in_flight: 5, pii_uncertain: 5 });
    const c = cmpOf(r, 'cand');
    expect(c.state).toBe('CANNOT_MEASURE');
    expect(c.insufficient).toEqual({ below_min_n: true, need: 8, have: 0 });
    expect(ct.frontier.points).toEqual([]);
  });
  it('an empty run (nothing scored, nothing refused) cannot be written', () => {
    expect(() => foldReport({ campaign: campaign(['cand']), messages: [], provisional: false })).toThrow(
      expect.objectContaining({ code: 'report_empty' }),
    );
  });
  it('outputs no scorer can score → CANNOT_MEASURE{unscored} with a scorer remediation', () => {
    const msgs = synthCampaign(CID, 12, 0.9, { cand: 'same' }).map((m) =>
      m.schema === 'shadow.observation/v1' ? { ...m, output_text: null } : m,
    );
    const r = foldReport({ campaign: campaign(['cand']), messages: msgs, provisional: false });
    const c = cmpOf(r, 'cand');
    expect(c.cannot_measure!.reason).toBe('unscored');
    expect(c.pairs.excluded).toEqual({ unscored: 12 });
    expect(c.remediation.map((x) => x.code)).toEqual(['add_programmatic_scorer', 'register_outcome']);
    expect(r.report.call_types![0]!.arms[0]!.quality).toEqual({ mean: null, n_scored: 0, n_unscored: 12 });
  });
  it('a failed hard assertion on a candidate gates it to fail', () => {
    const msgs: ObsMessage[] = [];
    for (let i = 0; i < 30; i++) {
      msgs.push(synthObservation(CID, i, 'inc', 'incumbent', { hard: true }));
      msgs.push(synthObservation(CID, i, 'cand', 'candidate', { hard: true, correct: i !== 5 }));
    }
    const c = cmpOf(foldReport({ campaign: campaign(['cand']), messages: msgs, provisional: false }), 'cand');
    expect(c.hard_gate_failures).toBe(1);
    expect(c.decision).toBe('fail');
    expect(c.decision_reasons).toContain('hard_gate_broken: a hard assertion failed on the candidate');
  });
});

describe('fold: dataset card, null usage, noise floor', () => {
  it('counts duplicates as weight, joins near-duplicate prompts, and hashes the dataset independent of envelope ids', () => {
    const msgs: ObsMessage[] = synthCampaign(CID, 10, 1, { cand: 'same' });
    // item 1's prompt SimHash 2 bits away from item 0's → same cluster
    const sim0 = (msgs[0] as { prompt_simhash: string }).prompt_simhash;
    const flip = (h: string) => (parseInt(h.slice(0, 8), 16) ^ 0b101).toString(16).padStart(8, '0') + h.slice(8);
    const near = msgs.map((m) =>
      m.schema === 'shadow.observation/v1' && m.envelope_id === (msgs[2] as { envelope_id: string }).envelope_id
        ? { ...m, prompt_simhash: flip(sim0) }
        : m,
    );
    near.push(synthEvent(CID, 3, 'duplicate', null, 1), synthEvent(CID, 3, 'duplicate', null, 2));
    const card = foldReport({ campaign: campaign(['cand']), messages: near, provisional: false }).report.call_types![0]!
      .dataset_card;
    expect(card.unique_items).toBe(10);
    expect(card.total_weight).toBe(12);
    expect(card.duplicated_items).toBe(1);
    expect(card.near_duplicate_clusters).toBe(9);
    expect(card.strata).toEqual({ numeric: 10 });
    const otherIds = near.map((m) =>
      m.schema === 'shadow.item_event/v1' ? { ...m, envelope_id: m.envelope_id.replace(/^./, 'f') } : m,
    );
    expect(
      foldReport({ campaign: campaign(['cand']), messages: otherIds, provisional: false }).report.call_types![0]!
        .dataset_card.dataset_hash,
    ).toBe(card.dataset_hash);
  });
  it('keeps null usage null: abandoned calls are unpriced and their tokens counted as not reported', () => {
    const msgs: ObsMessage[] = [];
    for (let i = 0; i < 10; i++) {
      msgs.push(synthObservation(CID, i, 'inc', 'incumbent'));
      msgs.push(synthObservation(CID, i, 'cand', 'candidate', i < 2 ? { usageNull: true, costUsd: null } : {}));
    }
    const r = foldReport({ campaign: campaign(['cand']), messages: msgs, provisional: false });
    const arm = r.report.call_types![0]!.arms.find((a) => a.arm_id === 'cand')!;
    expect(arm.observations.abandoned).toBe(2);
    expect(arm.cost.n_unpriced).toBe(2);
    expect(arm.cost.n_priced).toBe(8);
    expect(arm.tokens.output.n_null).toBe(2);
    expect(arm.tokens.output.n_reported).toBe(8);
    expect(arm.tokens.reasoning).toEqual({ mean: null, n_reported: 0, n_null: 10 });
    expect(cmpOf(r, 'cand').pairs.excluded).toEqual({ unpriced: 2 });
  });
  it('measures the noise floor from A-A pairs when present', () => {
    const msgs: ObsMessage[] = synthCampaign(CID, 40, 0.8, { cand: 'same' });
    for (let i = 0; i < 10; i++) msgs.push(synthObservation(CID, i, 'inc', 'incumbent_aa', { correct: i % 2 === 0 }));
    const c = cmpOf(foldReport({ campaign: campaign(['cand']), messages: msgs, provisional: false }), 'cand');
    // A-A pairs are the noise floor only; the plan's sd bounds the paired spread (0 observed for a
    // copying candidate) from above: no discordance among 40 clusters still allows a discordance
    // up to the Wilson zero-event bound z²/(40 + z²) at 90%, z = z₀.₉ = 1.2815515655446004
    const z = 1.2815515655446004;
    expect(c.power_plan!.sd_source).toBe('paired_upper_bound');
    expect(c.power_plan!.aa_pairs).toBe(10);
    expect(c.power_plan!.noise_floor_sd).toBeGreaterThan(0);
    expect(c.power_plan!.sd_observed).toBe(0);
    expect(c.power_plan!.sd_diff).toBeCloseTo(Math.sqrt((z * z) / (40 + z * z)), 10);
  });
});

describe('fold: first-party outcomes and the judge', () => {
  const outcome = (i: number, arm: string | null, result: 'pass' | 'fail', closes: boolean) => {
    const o = synthObservation(CID, i, 'inc', 'incumbent');
    return {
      schema: 'shadow.outcome/v1' as const,
      outcome_id: (i.toString(16) + (arm ?? 'x') + result).padEnd(64, '0').replace(/[^0-9a-f]/g, 'a'),
      campaign_id: CID,
      envelope_id: null,
      item_hash: o.item_hash,
      arm_id: arm,
      result,
      score: null,
      source: 'crm',
      closes_task: closes,
      received_at: '2026-11-01T13:00:00.000Z',
    };
  };
  it('merges arm outcomes into quality and prices $/task only over tasks outcomes closed', () => {
    const msgs: ObsMessage[] = [...synthCampaign(CID, 10, 1, { cand: 'same' })];
    for (let i = 0; i < 4; i++) msgs.push(outcome(i, 'cand', 'pass', true));
    msgs.push(outcome(4, 'cand', 'fail', false));
    msgs.push(outcome(5, null, 'fail', true)); // about the served response: provenance, not an arm
    const r = foldReport({ campaign: campaign(['cand']), messages: msgs, provisional: false });
    const arms = r.report.call_types![0]!.arms;
    const cand = arms.find((a) => a.arm_id === 'cand')!;
    expect(cand.cost.tasks_closed).toBe(4);
    // Σ candidate cost = 10·0.0004 + 1e-5·(0+1+2+3+4+5+6+0+1+2) = 0.00424 USD; ÷ 4 tasks
    expect(cand.cost.per_task_usd).toBeCloseTo(0.00106, 12);
    expect(arms.find((a) => a.arm_id === 'inc')!.cost.per_task_usd).toBeNull();
    // item 4: numeric 1 and outcome fail 0 → 0.5; the other nine 1 → mean 0.95
    expect(cand.quality.mean).toBeCloseTo(0.95, 12);
    expect(r.report.counts!.outcomes).toBe(6);
  });
  it('weighs judge scores as disclosed and sets the trust class', () => {
    const msgs = synthCampaign(CID, 12, 1, { cand: 'same' });
    const judge = new Map<string, { score: number; scorer: string; detail: string; source: 'judge' }>();
    for (const m of msgs)
      if (m.schema === 'shadow.observation/v1')
        judge.set(`${m.item_hash}:${m.arm_id}:${m.role}`, {
          score: m.arm_id === 'cand' ? 0.5 : 1,
          scorer: 'judge:j',
          detail: '',
          source: 'judge',
        });
    const withJudge = (weight: number) =>
      foldReport({
        campaign: campaign(['cand'], {
          scorers: [{ kind: 'expectations' }, { kind: 'llm_judge', provider: 'other', model: 'j', weight }],
        }),
        messages: msgs,
        provisional: false,
        judgeScores: judge,
      });
    const b = cmpOf(withJudge(0.3), 'cand');
    expect(b.trust_class).toBe('B');
    expect(b.judge_weight_share).toBeCloseTo(0.3, 12);
    expect(b.stats!.quality_delta.point).toBeCloseTo(-0.15, 12); // 0.3·(0.5 − 1)
    const c = cmpOf(withJudge(0.8), 'cand');
    expect(c.trust_class).toBe('C');
    expect(c.remediation.map((x) => x.code)).toContain('register_outcome');
    expect(
      cmpOf(foldReport({ campaign: campaign(['cand']), messages: msgs, provisional: false }), 'cand').trust_class,
    ).toBe('A');
  });
  it('refuses a judge of the same family as an arm of the pair and says so', () => {
    const msgs = synthCampaign(CID, 12, 1, { cand: 'same' });
    const judge = new Map<string, { score: number; scorer: string; detail: string; source: 'judge' }>();
    for (const m of msgs)
      if (m.schema === 'shadow.observation/v1')
        judge.set(`${m.item_hash}:${m.arm_id}:${m.role}`, {
          score: m.arm_id === 'cand' ? 0.5 : 1,
          scorer: 'judge:j',
          detail: '',
          source: 'judge',
        });
    const spec = campaign(['cand'], {
      scorers: [{ kind: 'expectations' }, { kind: 'llm_judge', provider: 'other', model: 'j', weight: 0.3 }],
    });
    const same = cmpOf(
      foldReport({
        campaign: spec,
        messages: msgs,
        provisional: false,
        judgeScores: judge,
        judgeFamily: 'acme',
        armFamilies: { inc: 'big', cand: 'acme' },
      }),
      'cand',
    );
    expect(same.judge_refused).toBe('judge family acme equals the family of cand: judge scores not used for this pair');
    expect(same.trust_class).toBe('A');
    expect(same.stats!.quality_delta.point).toBe(0);
    const other = cmpOf(
      foldReport({
        campaign: spec,
        messages: msgs,
        provisional: false,
        judgeScores: judge,
        judgeFamily: 'acme',
        armFamilies: { inc: 'big', cand: 'small' },
      }),
      'cand',
    );
    expect(other.judge_refused).toBeNull();
    expect(other.trust_class).toBe('B');
  });
});

describe('fold: reproducible report, per-run record', () => {
  // Run A and run B of the same evidence: B has another campaign id, other envelope ids, a day
  // later, other latencies/TTFT/skew and retries, a redelivered observation, arrival order shuffled.
  const evidence = (cid: string): ObsMessage[] => {
    const msgs: ObsMessage[] = synthCampaign(cid, 60, 0.85, { equal: 'same', worse: 0.5 });
    for (let i = 0; i < 12; i++)
      msgs.push(synthObservation(cid, i, 'inc__aa', 'incumbent_aa', { correct: i % 3 !== 0 }));
    msgs.push(synthEvent(cid, 3, 'duplicate', null, 1), synthEvent(cid, 5, 'duplicate', null, 2));
    for (let i = 60; i < 63; i++)
      msgs.push(synthEvent(cid, i, 'excluded', 'pii_detected'), synthEvent(cid, i, 'excluded', 'body_too_large', 1));
    return msgs;
  };
  const runB = (): ObsMessage[] => {
    const rnd = seededRandom(99);
    const day = 86_400_000;
    const out = evidence('cmp_bbbbbbbbbbbbbbbb').map((m): ObsMessage => {
      if (m.schema === 'shadow.item_event/v1')
        return {
          ...m,
          envelope_id: uuidFrom(`b-${m.envelope_id}`),
          at: new Date(Date.parse(m.at) + day).toISOString(),
        };
      if (m.schema !== 'shadow.observation/v1') return m;
      const late = Math.round(rnd() * 900);
      return {
        ...m,
        envelope_id: uuidFrom(`b-${m.envelope_id}`),
        started_at: new Date(Date.parse(m.started_at) + day + late).toISOString(),
        ended_at: new Date(Date.parse(m.ended_at) + day + 2 * late).toISOString(),
        latency_ms: m.latency_ms === null ? null : m.latency_ms + late,
        ttft_ms: m.ttft_ms === null ? null : m.ttft_ms + Math.round(rnd() * 50),
        start_skew_ms: Math.round(rnd() * 40),
        attempts: rnd() < 0.1 ? 2 : 1,
      };
    });
    const redelivered = out.find((m) => m.schema === 'shadow.observation/v1')!;
    out.push(redelivered);
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };
  const spec = synthSpec(['equal', 'worse']);
  const a = foldReport({
    campaign: { campaign_id: 'cmp_aaaaaaaaaaaaaaaa', spec, run_index: 1, state: 'completed' },
    messages: evidence('cmp_aaaaaaaaaaaaaaaa'),
    provisional: false,
  });
  const b = foldReport({
    campaign: { campaign_id: 'cmp_bbbbbbbbbbbbbbbb', spec, run_index: 1, state: 'stopped' },
    messages: runB(),
    provisional: false,
  });

  it('gives the same report bytes and id for the same evidence from another run, in another order', () => {
    expect(b.reportJson).toBe(a.reportJson);
    expect(b.reportId).toBe(a.reportId);
    const body = JSON.parse(a.reportJson) as Record<string, unknown>;
    for (const k of ['campaign_id', 'campaign_state', 'window']) expect(body).not.toHaveProperty(k);
    expect(a.reportJson).not.toContain('cmp_aaaaaaaaaaaaaaaa');
    expect(a.reportJson).not.toMatch(/latency_ms|ttft_ms|start_skew_ms|2026-11-0/);
    // the evidence itself is all there: A-A second calls, duplicate weights, exclusions
    const ct = a.report.call_types![0]!;
    expect(ct.arms[0]!.observations.aa_second_calls).toBe(12);
    expect(ct.dataset_card.total_weight).toBe(62);
    expect(ct.dataset_card.exclusion_counts).toEqual({ body_too_large: 3 });
    expect(ct.comparisons[0]!.power_plan!.sd_source).toBe('paired_upper_bound');
    expect(ct.comparisons[0]!.power_plan!.aa_pairs).toBe(12);
  });
  it('keeps what each run measured in its own content-addressed run record, pointing at the report', () => {
    expect(a.runRecordId).not.toBe(b.runRecordId);
    for (const r of [a, b]) {
      expect(r.runRecord.report_id).toBe(r.reportId);
      const { run_record_id: id, ...body } = JSON.parse(r.runRecordJson) as Record<string, unknown>;
      expect(id).toBe(r.runRecordId);
      expect(contentHash(body)).toBe(r.runRecordId);
    }
    expect([a.runRecord.campaign_id, a.runRecord.campaign_state]).toEqual(['cmp_aaaaaaaaaaaaaaaa', 'completed']);
    expect([b.runRecord.campaign_id, b.runRecord.campaign_state]).toEqual(['cmp_bbbbbbbbbbbbbbbb', 'stopped']);
    // synth item i starts at 12:00:00 + i s and ends 500 + (i mod 13)·10 ms later (item 59: 570 ms)
    expect(a.runRecord.window).toEqual({
      first_started_at: '2026-11-01T12:00:00.000Z',
      last_ended_at: '2026-11-01T12:00:59.570Z',
    });
    expect(b.runRecord.window.first_started_at!.startsWith('2026-11-02T12:00:0')).toBe(true);
    const incA = a.runRecord.call_types[0]!.arms[0]!;
    expect(incA.arm_id).toBe('inc');
    // latencies of items 0..59: 500 + 10·k, k = 0..7 five times each, k = 8..12 four times each;
    // type 7: p50 = mean of sorted[29] (k=5) and sorted[30] (k=6) = 555; p90 = sorted[53.1] (k=11) = 610
    expect(incA.latency_ms).toEqual({ p50: 555, p90: 610, n: 60 });
    expect(incA.start_skew_ms).toEqual({ p50: 0, p90: 0, n: 60 });
    expect(incA.retries).toBe(0);
    expect(a.runRecord.call_types[0]!.arms.map((x) => [x.arm_id, x.role, x.latency_ms.n])).toEqual([
      ['inc', 'incumbent', 60],
      ['equal', 'candidate', 60],
      ['worse', 'candidate', 60],
      ['inc__aa', 'incumbent_aa', 12],
    ]);
    expect(b.runRecord.call_types[0]!.arms[0]!.latency_ms).not.toEqual(incA.latency_ms);
    expect(a.runRecord.counts).toEqual({ messages_in: 60 * 3 + 12 + 2 + 6, superseded_observations: 0 });
    expect(b.runRecord.counts).toEqual({ messages_in: 60 * 3 + 12 + 2 + 6 + 1, superseded_observations: 1 });
  });
});

describe('fold: the instrument ceiling is enforced by the fold itself', () => {
  // 300 GSM8K items, incumbent 90% correct, candidate copies it: under shadow_dual_run a BEAT.
  const base = synthCampaign(CID, 300, 0.9, { cand: 'same' });
  const withInstrument = (inst: 'judged_dataset_run' | 'replay', which: 'all' | 'one') =>
    base.map((m, i) =>
      m.schema === 'shadow.observation/v1' && (which === 'all' || i === 1) ? { ...m, instrument: inst } : m,
    );
  const fold = (messages: ObsMessage[]) =>
    cmpOf(foldReport({ campaign: campaign(['cand']), messages, provisional: false }), 'cand');

  it('shadow_dual_run: an equal, cheaper candidate is BEAT', () => {
    const c = fold(base);
    expect(c.instrument).toBe('shadow_dual_run');
    expect(c.state).toBe('BEAT');
  });
  it('judged_dataset_run: the same evidence is capped at ON_FRONTIER, with the ceiling named', () => {
    const c = fold(withInstrument('judged_dataset_run', 'all'));
    expect(c.instrument).toBe('judged_dataset_run');
    expect(c.decision).toBe('pass');
    expect(c.state).toBe('ON_FRONTIER');
    expect(c.decision_reasons.some((r) => r.startsWith('instrument_ceiling:'))).toBe(true);
  });
  it('one judged_dataset_run observation among shadow pairs caps the whole comparison', () => {
    expect(fold(withInstrument('judged_dataset_run', 'one')).state).toBe('ON_FRONTIER');
  });
  it('replay: cost savings are measured, quality is never decided (CANNOT_MEASURE{instrument_cost_only})', () => {
    const r = foldReport({
      campaign: campaign(['cand']),
      messages: withInstrument('replay', 'all'),
      provisional: false,
    });
    const c = cmpOf(r, 'cand');
    expect(c.state).toBe('CANNOT_MEASURE');
    expect(c.decision).toBeNull();
    expect(c.cannot_measure!.reason).toBe('instrument_cost_only');
    // synth costs: incumbent 0.002 + (i mod 7)·1e-5, candidate 0.0004 + the same → savings ≈ 79%
    expect(c.stats!.cost_savings!.point).toBeGreaterThan(0.78);
    expect(c.stats!.cost_savings!.point).toBeLessThan(0.8);
    expect(c.remediation.map((x) => x.code)).toContain('run_shadow_dual_run');
    expect(r.report.call_types![0]!.frontier.points.map((p) => p.arm_id)).not.toContain('cand');
    // nothing is known about quality: the whole range, and the token assumption is named
    expect([c.stats!.quality_delta.lower, c.stats!.quality_delta.upper]).toEqual([-1, 1]);
    expect(c.decision_reasons.some((x) => x.startsWith('replay_assumed_tokens:'))).toBe(true);
    expect(c.trust_class).toBeNull();
    expect(verifyBundle(r.bundle).ok).toBe(true);
  });
  it('replay observations without outputs are priced, never counted unscored', () => {
    const messages = withInstrument('replay', 'all').map((m) =>
      m.schema === 'shadow.observation/v1'
        ? { ...m, output_text: null, artifact_ref: null, output_digest: null, expectations: [] }
        : m,
    );
    const c = cmpOf(foldReport({ campaign: campaign(['cand']), messages, provisional: false }), 'cand');
    expect(c.state).toBe('CANNOT_MEASURE');
    expect(c.cannot_measure!.reason).toBe('instrument_cost_only');
    expect(c.pairs.excluded['unscored']).toBeUndefined();
    expect(c.stats!.cost_savings!.point).toBeGreaterThan(0.78);
  });
  it('a bundle whose report was edited to lift the cap fails verification', () => {
    const r = foldReport({
      campaign: campaign(['cand']),
      messages: withInstrument('judged_dataset_run', 'all'),
      provisional: false,
    });
    expect(verifyBundle(r.bundle).ok).toBe(true);
    const edited = JSON.parse(JSON.stringify(r.bundle)) as typeof r.bundle;
    (edited.parts.report.call_types![0]!.comparisons[0] as { state: string }).state = 'BEAT';
    const v = verifyBundle(edited);
    expect(v.ok).toBe(false);
    expect(v.problems.some((p) => p.path.endsWith('comparisons[0].state') && p.expected === 'ON_FRONTIER')).toBe(true);
  });
});

describe('fold: a provider cost of 0 with billed tokens', () => {
  it('is counted per arm as a mismatch, and such calls are priced on the rate card, never as free', () => {
    const msgs = synthCampaign(CID, 20, 0.9, { cand: 'same' }).map((m, i) =>
      m.schema === 'shadow.observation/v1' && m.role === 'candidate' && i < 12
        ? { ...m, cost: { ...m.cost, basis: 'rate_card' as const, reason: 'provider_zero_with_billed_tokens' } }
        : m,
    );
    const r = foldReport({ campaign: campaign(['cand']), messages: msgs, provisional: false });
    const arms = r.report.call_types![0]!.arms;
    // items 0..5 give messages 0..11 (inc, cand alternating): 6 candidate calls relabelled
    expect(arms.find((a) => a.arm_id === 'cand')!.cost.n_provider_zero_mismatch).toBe(6);
    expect(arms.find((a) => a.arm_id === 'inc')!.cost.n_provider_zero_mismatch).toBe(0);
    expect(arms.find((a) => a.arm_id === 'cand')!.cost.total_usd).toBeGreaterThan(0);
  });
});
