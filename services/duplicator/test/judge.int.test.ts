import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedNatsUrl } from '@shadowplane/testkit';
import { openKv, JsonKv } from '@shadowplane/bus';
import { BudgetLedgerClient } from '@shadowplane/budget';
import { reservationIds, type JudgeVerdict, type Observation } from '@shadowplane/contracts';
import {
  chatEnvelope,
  campaignState,
  launchCampaign,
  ledger,
  publishEnvelopes,
  readObs,
  simConfig,
  startRig,
  startWorker,
  waitFor,
  type Rig,
} from './harness.js';
import type { DuplicatorHandle } from '../src/index.js';
import { JudgeCallRecord, judgeCallKey } from '../src/judge-record.js';

const judgeModel = (judge: object) => ({
  accuracy: 0.5,
  prices: { input: 0.2, cached_input: 0.05, output: 0.8 },
  latency: { ttft_ms: { median: 2, sigma: 0.2 }, output_tokens_per_s: 20_000, jitter: 0.1 },
  judge,
});
const inc = {
  id: 'large',
  provider: 'simopenai',
  model: 'sim-large',
  rate_card: { input: 2.5, cached_input: 1.25, output: 10 },
  max_output_tokens: 100,
};
const cand = (provider: string) => ({
  id: 'medium',
  provider,
  model: 'sim-medium',
  rate_card: { input: 0.4, cached_input: 0.1, output: 1.6 },
  max_output_tokens: 100,
});
const judge = (model: string, mode: 'pointwise' | 'pairwise') => ({
  kind: 'llm_judge' as const,
  provider: 'simanthropic',
  model,
  mode,
  rate_card: { input: 0.2, output: 0.8 },
  max_output_tokens: 64,
});

describe('duplicator: the LLM judge after an item settles (provider-sim judge upstream)', () => {
  let rig: Rig;
  let w: DuplicatorHandle;
  beforeAll(async () => {
    rig = await startRig(
      sharedNatsUrl(),
      simConfig({
        models: {
          ...simConfig().models,
          'sim-judge-first': judgeModel({ accuracy: 1, position_bias: 1 }),
          'sim-judge-refuses': judgeModel({ refusal_rate: 1 }),
        },
      }),
    );
    w = await startWorker(rig);
  });
  afterAll(async () => {
    await w?.close();
    await rig?.close();
  });

  const run = async (suite: string, candProvider: string, scorer: ReturnType<typeof judge>, n = 8) => {
    const { id } = await launchCampaign(rig.bus, {
      name: 'judge',
      suite,
      call_types: ['chat'],
      incumbent: inc,
      candidates: [cand(candProvider)],
      max_items: n,
      max_cost_usd: 5,
      aa_share: 0,
      scorers: [scorer],
    });
    await publishEnvelopes(
      rig.bus,
      Array.from({ length: n }, (_, i) => chatEnvelope(suite, 'chat', `Tell me something about topic ${suite} ${i}.`)),
    );
    await waitFor('campaign completed', async () => (await campaignState(rig.bus, id))?.state === 'completed', 30_000);
    const msgs = await waitFor('judge verdicts', async () => {
      const m = await readObs(rig.bus, id);
      return m.filter((x) => x.schema === 'shadow.judge_verdict/v1').length >= (scorer.mode === 'pairwise' ? n : 2 * n)
        ? m
        : null;
    });
    return {
      id,
      obs: msgs.filter((m): m is Observation => m.schema === 'shadow.observation/v1'),
      verdicts: msgs.filter((m): m is JudgeVerdict => m.schema === 'shadow.judge_verdict/v1'),
    };
  };

  it('judges a pair in both orders: a judge that always answers "A" gets a tie with a position flip, on the same ledger', async () => {
    const { id, obs, verdicts } = await run('js1', 'simopenai', judge('sim-judge-first', 'pairwise'));
    expect(verdicts).toHaveLength(8);
    for (const v of verdicts) {
      expect(v.orders.map((o) => o.value)).toEqual([1, 1]);
      expect(v.score).toBe(0.5);
      expect(v.position_flip).toBe(true);
      expect(v.calls).toBe(2);
      expect(v.artifact_ref).toMatch(/^art:/);
    }
    // the sim saw exactly two judge calls per item
    expect(rig.sim.calls().filter((c) => c.model === 'sim-judge-first')).toHaveLength(16);
    // judge spend settles on the campaign's ledger beside the arms, nothing left reserved
    const l = (await ledger(rig.bus, id))!;
    const arms = obs.reduce((a, o) => a + o.charged_micro_usd, 0);
    const judged = verdicts.reduce((a, v) => a + v.charged_micro_usd, 0);
    expect(judged).toBeGreaterThan(0);
    expect(l.reserved_micro_usd).toBe(0);
    expect(l.settled_micro_usd).toBe(arms + judged);
    // judge metrics: 16 calls (8 pairs × 2 orders), 8 scored verdicts, the spend the verdicts charged
    const text = await w.registry.metrics();
    // the sample of `name` whose labels include every one of `labels` (other labels, e.g. role, may be present)
    const value = (name: string, labels: string[] = []) => {
      const line = text
        .split('\n')
        .find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && labels.every((x) => l.includes(x)));
      return line === undefined ? NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
    };
    expect(value('shadowplane_duplicator_judge_calls_total', ['mode="pairwise"', 'result="ok"'])).toBe(16);
    expect(value('shadowplane_duplicator_judge_verdicts_total', ['mode="pairwise"', 'outcome="scored"'])).toBe(8);
    expect(value('shadowplane_duplicator_judge_call_duration_seconds_count', ['mode="pairwise"'])).toBe(16);
    expect(value('shadowplane_duplicator_judge_spend_usd_total')).toBeCloseTo(judged / 1e6, 9);
  });

  it('refuses a judge of the same family as an arm for that pair without calling it', async () => {
    const before = rig.sim.calls().filter((c) => c.model === 'sim-judge-first').length;
    const { verdicts } = await run('js2', 'simanthropic', judge('sim-judge-first', 'pairwise'));
    expect(verdicts.every((v) => v.score === null && v.null_reason === 'same_family' && v.calls === 0)).toBe(true);
    expect(rig.sim.calls().filter((c) => c.model === 'sim-judge-first')).toHaveLength(before);
  });

  it('leaves the score null with reason judge_refused_reply when the judge refuses, never 0', async () => {
    const { verdicts } = await run('js3', 'simopenai', judge('sim-judge-refuses', 'pointwise'));
    expect(verdicts).toHaveLength(16);
    expect(verdicts.every((v) => v.score === null && v.null_reason === 'judge_refused_reply' && v.calls === 1)).toBe(
      true,
    );
  });
  it('a redelivered item reuses recorded judge calls, and publishes nothing for a call settled elsewhere without a record', async () => {
    const suite = 'js4';
    const { id } = await launchCampaign(rig.bus, {
      name: 'judge-redelivery',
      suite,
      call_types: ['chat'],
      incumbent: inc,
      candidates: [cand('simopenai')],
      max_items: 2,
      max_cost_usd: 5,
      aa_share: 0,
      scorers: [judge('sim-judge-first', 'pairwise')],
    });
    const [reused, elsewhere] = [0, 1].map((i) => chatEnvelope(suite, 'chat', `Judge redelivery item ${i}.`));
    const budget = new BudgetLedgerClient(await openKv(rig.bus, rig.bus.names.buckets.budget));
    const records = new JsonKv(await openKv(rig.bus, rig.bus.names.buckets.dispatch), JudgeCallRecord);
    // item 1: an earlier processing judged both orders (recorded done, settled at 500 µUSD each),
    // then died before its verdict
    for (const [order, value] of [
      ['ab', 1],
      ['ba', 0],
    ] as const) {
      const rid = reservationIds.judge(reused!.item_hash, 'medium', order);
      expect((await budget.reserve(id, { [rid]: 600 })).ok).toBe(true);
      await records.put(judgeCallKey(id, reused!.item_hash, 'medium', order), {
        kind: 'judge_call',
        state: 'done',
        worker_id: 'w-gone',
        reserved_micro_usd: 600,
        charged_micro_usd: 500,
        called: true,
        value,
        reason: null,
        at: new Date().toISOString(),
      });
      await budget.settle(id, { ids: [rid] }, 500);
    }
    // item 2: its "ab" reservation was settled by another processing that left no record here
    // (judgedElsewhere): that processing published the verdict; this one must not add a null one
    const rid2 = reservationIds.judge(elsewhere!.item_hash, 'medium', 'ab');
    expect((await budget.reserve(id, { [rid2]: 700 })).ok).toBe(true);
    await budget.settle(id, { ids: [rid2] }, 700);
    const callsBefore = rig.sim.calls().filter((c) => c.model === 'sim-judge-first').length;

    await publishEnvelopes(rig.bus, [reused!, elsewhere!]);
    await waitFor('campaign completed', async () => (await campaignState(rig.bus, id))?.state === 'completed', 60_000);
    const msgs = await readObs(rig.bus, id);
    const verdicts = msgs.filter((m): m is JudgeVerdict => m.schema === 'shadow.judge_verdict/v1');
    const obs = msgs.filter((m): m is Observation => m.schema === 'shadow.observation/v1');
    // item 1: the recorded orders, not called again: (1 + (1 − 0)) / 2 = 1, no flip, their charges
    const v1 = verdicts.filter((v) => v.item_hash === reused!.item_hash);
    expect(v1).toHaveLength(1);
    expect(v1[0]!.orders.map((o) => o.value)).toEqual([1, 0]);
    expect(v1[0]!.score).toBe(1);
    expect(v1[0]!.position_flip).toBe(false);
    expect(v1[0]!.calls).toBe(2);
    expect(v1[0]!.charged_micro_usd).toBe(1000);
    // item 2: no verdict from this processing (no null order for a call made elsewhere)
    expect(verdicts.filter((v) => v.item_hash === elsewhere!.item_hash)).toHaveLength(0);
    // only item 2's "ba" order was called here
    expect(rig.sim.calls().filter((c) => c.model === 'sim-judge-first').length - callsBefore).toBe(1);
    const l = (await ledger(rig.bus, id))!;
    expect(l.reserved_micro_usd).toBe(0);
    const ba = (await records.get(judgeCallKey(id, elsewhere!.item_hash, 'medium', 'ba')))!.value;
    expect(ba.state).toBe('done');
    expect(l.settled_micro_usd).toBe(
      obs.reduce((a, o) => a + o.charged_micro_usd, 0) + 1000 + 700 + ba.charged_micro_usd!,
    );
  });
});
