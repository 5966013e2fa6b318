import { describe, expect, it } from 'vitest';
import { CampaignSpec, type ProviderEntry } from '@shadowplane/contracts';
import { judgeWorstCase } from './judge-estimate.js';

const providers: ProviderEntry[] = [
  { id: 'sim', base_url: 'http://127.0.0.1:1/v1', api: 'openai.chat', family: 'simfam' },
  { id: 'judgep', base_url: 'http://127.0.0.1:2/v1', api: 'openai.chat', family: 'judgefam' },
  { id: 'other', base_url: 'http://127.0.0.1:3/v1', api: 'openai.chat', family: 'judgefam' },
];
const arm = (id: string, provider = 'sim') => ({
  id,
  provider,
  model: `m-${id}`,
  rate_card: { input: 1, output: 2 },
  max_output_tokens: 512,
});
const spec = (mode: 'pointwise' | 'pairwise', candProvider = 'sim') =>
  CampaignSpec.parse({
    name: 'n',
    suite: 's',
    call_types: ['a', 'b'],
    incumbent: arm('inc'),
    candidates: [arm('c1'), arm('c2', candProvider)],
    max_items: 10,
    max_cost_usd: 1,
    scorers: [
      { kind: 'expectations' },
      {
        kind: 'llm_judge',
        provider: 'judgep',
        model: 'j',
        mode,
        rate_card: { input: 0.2, output: 0.8 },
        max_output_tokens: 64,
        call_types: ['b'],
      },
    ],
  });

describe('judgeWorstCase', () => {
  it('prices three pointwise calls per item as the judge runner reserves: (4000 + 512·4 + 2000) bytes = 8048 input tokens at $0.2/M + 64 at $0.8/M each', () => {
    const j = judgeWorstCase(spec('pointwise'), providers, 4000)!;
    expect(j.calls_per_item).toBe(3);
    // by hand: 8048 × 0.2 + 64 × 0.8 = 1609.6 + 51.2 = 1660.8 µ$, reserved rounded up: 1661 µ$ per call
    expect(j.per_item_worst_case_usd).toBeCloseTo(3 * 0.001661, 12);
    // only call type b is judged: 10 items × 1 call type
    expect(j.call_types).toEqual(['b']);
    expect(j.judge_worst_case_usd).toBeCloseTo(10 * 3 * 0.001661, 12);
  });

  it('prices pairwise as two orders per candidate, each reading both answers: (4000 + 2048·2 + 2000) bytes = 10096 input tokens', () => {
    const j = judgeWorstCase(spec('pairwise'), providers, 4000)!;
    expect(j.calls_per_item).toBe(4);
    // 10096 × 0.2 + 64 × 0.8 = 2070.4 µ$ → 2071 µ$ per call
    expect(j.per_item_worst_case_usd).toBeCloseTo(4 * 0.002071, 12);
  });

  it('lists a candidate of the judge family as a refused pair and does not price it', () => {
    const j = judgeWorstCase(spec('pairwise', 'other'), providers, 4000)!;
    expect(j.refused_pairs).toEqual([
      { candidate_arm_id: 'c2', reason: 'same_family: judge family judgefam equals the family of c2' },
    ]);
    expect(j.calls_per_item).toBe(2);
  });
});
