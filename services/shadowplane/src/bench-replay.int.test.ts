import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBenchStack, until, type BenchStack } from '../test/bench-stack.js';
import type { Envelope } from '@shadowplane/contracts';
import { KEYS } from '@shadowplane/control/testing';
import { chatEnvelope } from '@shadowplane/testkit';

// Instrument replay end to end over a real nats-server, the control API, a duplicator worker and
// the verdict service: captures with served usage → freeze → a replay run of the frozen dataset
// calls no arm (the provider's address accepts no connection, so any call would have failed),
// spends $0, prices every item on both rate cards and reports the cost half only.

const SUITE = 'replay';
const CT = 'math';
const USAGE = (i: number, output: number | null) => ({
  input_tokens: 100 + i,
  cache_read_input_tokens: null,
  cache_creation_input_tokens: null,
  output_tokens: output,
  reasoning_output_tokens: null,
  raw: { prompt_tokens: 100 + i, completion_tokens: output },
});

function item(i: number, served: 'ok' | 'none' | 'no_output_tokens' = 'ok'): Envelope {
  const e = chatEnvelope(SUITE, CT, `Replay item ${i}: what is ${i} times ${i + 11}?`, { max_tokens: 64 });
  return {
    ...e,
    served:
      served === 'none'
        ? null
        : {
            status: 200,
            upstream: 'openai',
            model: 'gpt-prod',
            latency_ms: 400 + i,
            ttft_ms: null,
            usage: USAGE(i, served === 'ok' ? 20 + i : null),
            finish_reason: 'stop',
            abandoned: false,
            stream: false,
          },
  };
}

describe('instrument replay on a frozen dataset', () => {
  let stack: BenchStack;
  const req: BenchStack['req'] = (...a) => stack.req(...a);

  beforeAll(async () => {
    stack = await startBenchStack('replay', { noUpstream: true });
  });
  afterAll(async () => stack?.close());

  it('prices the captured usage on both rate cards, calls nothing, and never decides quality', async () => {
    const items = Array.from({ length: 10 }, (_, i) => item(i));
    const noServed = item(50, 'none');
    const noOutput = item(51, 'no_output_tokens');
    for (const e of [...items, noServed, noOutput])
      await stack.f.bus.js.publish(stack.f.bus.names.captureSubject(SUITE, CT), JSON.stringify(e), {
        msgID: e.envelope_id,
      });
    const frozen = await req('POST', `/v1/suites/${SUITE}/freeze`, KEYS.write, {});
    expect(frozen.statusCode).toBe(201);
    const hash: string = frozen.json().datasets[0].dataset_hash;

    const spec = (extra: object = {}) => ({
      name: 'replay run',
      suite: SUITE,
      call_types: [CT],
      source: `frozen:${hash}`,
      instrument: 'replay',
      incumbent: { id: 'large', provider: 'nowhere', model: 'gpt-prod', rate_card: { input: 2.5, output: 10 } },
      candidates: [{ id: 'small', provider: 'nowhere', model: 'gpt-small', rate_card: { input: 0.1, output: 0.4 } }],
      max_cost_usd: 1,
      aa_share: 0,
      ...extra,
    });
    // a combination replay cannot honour is a 400 naming the field
    for (const [extra, path] of [
      [{ aa_share: 0.1 }, 'aa_share'],
      [{ source: 'live' }, 'source'],
      [{ stopping: 'sequential' }, 'stopping'],
      [{ instrument: 'vibes' }, 'instrument'],
    ] as const) {
      const bad = await req('POST', '/v1/campaigns', KEYS.write, spec(extra));
      expect([bad.statusCode, bad.json().error.details.issues[0].path]).toEqual([400, path]);
    }

    const run = await req('POST', '/v1/campaigns', KEYS.write, spec());
    expect(run.statusCode).toBe(201);
    expect(run.json().campaign.spec.instrument).toBe('replay'); // pinned in the run spec
    const id: string = run.json().campaign.id;
    const done = await until('the replay run to complete', async () => {
      const s = (await req('GET', `/v1/campaigns/${id}`, KEYS.read)).json();
      return s.campaign.state === 'completed' ? s.campaign : null;
    });
    expect(done.state_reason).toBe('dataset_exhausted');

    const msgs = (await req('GET', `/v1/campaigns/${id}/observations`, KEYS.read)).body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, any>);
    const obs = msgs.filter((m) => m.schema === 'shadow.observation/v1');
    expect(obs.length).toBe(20); // 10 priced items × 2 arms, no A-A
    expect(obs.every((o) => o.instrument === 'replay' && o.status === 'ok' && o.charged_micro_usd === 0)).toBe(true);
    expect(obs.every((o) => o.artifact_ref === null && o.cost.basis === 'rate_card')).toBe(true);
    // the candidate is priced on the incumbent's captured token counts
    const byItem = (arm: string) => new Map(obs.filter((o) => o.arm_id === arm).map((o) => [o.item_hash, o]));
    const inc = byItem('large');
    const cand = byItem('small');
    for (const [h, o] of inc) {
      expect(cand.get(h)!.usage.input_tokens).toBe(o.usage.input_tokens);
      expect(cand.get(h)!.usage.output_tokens).toBe(o.usage.output_tokens);
    }
    const excluded = msgs.filter((m) => m.kind === 'excluded').map((m) => [m.item_hash, m.reason]);
    expect(excluded).toEqual(
      expect.arrayContaining([
        [noServed.item_hash, 'replay_no_served_response'],
        [noOutput.item_hash, 'replay_no_served_usage'],
      ]),
    );

    const rep = await until('the final report', async () => {
      const r = await req('GET', `/v1/campaigns/${id}/report`, KEYS.read);
      return r.statusCode === 200 && r.json().provisional === false ? (r.json() as any) : null;
    });
    const c = rep.report.call_types[0].comparisons[0];
    expect(c.instrument).toBe('replay');
    expect(c.state).toBe('CANNOT_MEASURE');
    expect(c.decision).toBeNull();
    expect(c.cannot_measure.reason).toBe('instrument_cost_only');
    expect(c.decision_reasons.some((r: string) => r.startsWith('replay_assumed_tokens:'))).toBe(true);
    // both cards price the same tokens at 1/25 → savings exactly 96%
    expect(c.stats.cost_savings.point).toBeCloseTo(0.96, 6);
    expect([c.stats.quality_delta.lower, c.stats.quality_delta.upper]).toEqual([-1, 1]);
    expect(c.pairs.items).toBe(10);
  }, 240_000);
});
