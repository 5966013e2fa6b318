import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedNatsUrl } from '@shadowplane/testkit';
import type { JudgeVerdict, Observation } from '@shadowplane/contracts';
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
});
