import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DryRunResult } from '@shadowplane/contracts';
import { auth, fixture, KEYS, validSpec, type Fixture } from '../testing/helpers.js';

const post = (f: Fixture, url: string, body: unknown) =>
  f.app.inject({
    method: 'POST',
    url,
    headers: { ...auth(KEYS.write), 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });

// an expensive judge ($10 per million tokens in and out), pointwise: two calls per item (incumbent, medium)
const judge = { kind: 'llm_judge', provider: 'sim-anthropic', model: 'j', rate_card: { input: 10, output: 10 } };

describe('control: the LLM judge phase in the dry run and at launch', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture();
    await f.setFlag(true);
  });
  afterAll(async () => f.close());

  it('a dry run shows judge_worst_case_usd apart from the arm estimate, never summed into it (by hand: 2 × 0.08304 per item)', async () => {
    const spec = validSpec({ call_types: ['fresh'], scorers: [{ kind: 'expectations' }, judge] });
    const withJudge = DryRunResult.parse((await post(f, '/v1/campaigns?dry_run=true', spec)).json());
    const without = DryRunResult.parse(
      (await post(f, '/v1/campaigns?dry_run=true', validSpec({ call_types: ['fresh'] }))).json(),
    );
    // each call, as the judge runner reserves: (4000 prompt + 512·4 answer + 2000 template) bytes = 8048 input
    // tokens at $10/M, + 256 output tokens at $10/M = 0.08304
    expect(withJudge.judge!.per_item_worst_case_usd).toBeCloseTo(2 * (8048 + 256) * 10e-6, 12);
    expect(withJudge.judge!.judge_worst_case_usd).toBeCloseTo(200 * 2 * (8048 + 256) * 10e-6, 9);
    expect(withJudge.estimate.worst_case_total_usd).toBe(without.estimate.worst_case_total_usd);
    expect(without.judge).toBeNull();
  });

  it('refuses a launch with 422 judge_phase_unaffordable when the cap covers an item of arms but not its judge calls, writing nothing', async () => {
    const before = await f.snapshot();
    const res = await post(
      f,
      '/v1/campaigns',
      validSpec({ call_types: ['fresh'], max_cost_usd: 0.03, scorers: [{ kind: 'expectations' }, judge] }),
    );
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('judge_phase_unaffordable');
    expect(res.json().error.details.call_types).toEqual(['fresh']);
    expect(await f.snapshot()).toEqual(before);
  });

  it('refuses a live launch of a judge without a rate card with 400 naming the field', async () => {
    const res = await post(
      f,
      '/v1/campaigns',
      validSpec({ call_types: ['fresh'], scorers: [{ kind: 'llm_judge', provider: 'sim-anthropic', model: 'j' }] }),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.issues.map((i: { path: string }) => i.path)).toEqual(['scorers.0.rate_card']);
  });
});
