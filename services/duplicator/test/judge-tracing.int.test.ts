// Judge calls traced like the arms' calls: GenAI client spans under the item span, exported over
// OTLP/HTTP (JSON) to a loopback receiver by an in-process worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JudgeVerdict } from '@shadowplane/contracts';
import { startTracing, type TracingHandle } from '@shadowplane/telemetry';
import { sharedNatsUrl, startOtlpReceiver, type OtlpReceiverHandle } from '@shadowplane/testkit';
import {
  campaignState,
  chatEnvelope,
  launchCampaign,
  publishEnvelopes,
  readObs,
  simConfig,
  startRig,
  startWorker,
  waitFor,
  type Rig,
} from './harness.js';
import type { DuplicatorHandle } from '../src/index.js';

const OTEL_KEYS = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_BSP_SCHEDULE_DELAY'];
const saved = Object.fromEntries(OTEL_KEYS.map((k) => [k, process.env[k]]));
const N = 3;

describe('judge spans', () => {
  let otlp: OtlpReceiverHandle;
  let tracing: TracingHandle;
  let rig: Rig;
  let w: DuplicatorHandle | undefined;
  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] = otlp.url;
    process.env['OTEL_EXPORTER_OTLP_PROTOCOL'] = 'http/json';
    process.env['OTEL_BSP_SCHEDULE_DELAY'] = '100';
    tracing = startTracing({ serviceName: 'judge-test', role: 'duplicator' });
    rig = await startRig(
      sharedNatsUrl(),
      simConfig({
        models: {
          ...simConfig().models,
          'sim-judge': {
            accuracy: 0.5,
            prices: { input: 0.2, cached_input: 0.05, output: 0.8 },
            latency: { ttft_ms: { median: 2, sigma: 0.2 }, output_tokens_per_s: 20_000, jitter: 0.1 },
            judge: { accuracy: 1 },
          },
        },
      }),
    );
    w = await startWorker(rig);
  }, 120_000);
  afterAll(async () => {
    await w?.close();
    await rig?.close();
    await tracing?.shutdown();
    await otlp?.close();
    for (const k of OTEL_KEYS) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });

  it('each pairwise judge call is a `chat <judge model>` client span under the item span, with usage and cost', async () => {
    expect(tracing.enabled).toBe(true);
    const { id } = await launchCampaign(rig.bus, {
      name: 'judge-traced',
      suite: 'jt',
      call_types: ['chat'],
      incumbent: {
        id: 'large',
        provider: 'simopenai',
        model: 'sim-large',
        rate_card: { input: 2.5, cached_input: 1.25, output: 10 },
        max_output_tokens: 100,
      },
      candidates: [
        {
          id: 'medium',
          provider: 'simopenai',
          model: 'sim-medium',
          rate_card: { input: 0.4, cached_input: 0.1, output: 1.6 },
          max_output_tokens: 100,
        },
      ],
      max_items: N,
      max_cost_usd: 5,
      aa_share: 0,
      scorers: [
        {
          kind: 'llm_judge',
          provider: 'simanthropic',
          model: 'sim-judge',
          mode: 'pairwise',
          rate_card: { input: 0.2, output: 0.8 },
          max_output_tokens: 64,
        },
      ],
    });
    await publishEnvelopes(
      rig.bus,
      Array.from({ length: N }, (_, i) => chatEnvelope('jt', 'chat', `Say something about topic ${i}.`)),
    );
    await waitFor('campaign completed', async () => (await campaignState(rig.bus, id))?.state === 'completed', 60_000);
    const verdicts = await waitFor(
      'judge verdicts',
      async () => {
        const v = (await readObs(rig.bus, id)).filter((m): m is JudgeVerdict => m.schema === 'shadow.judge_verdict/v1');
        return v.length >= N ? v : null;
      },
      60_000,
    );
    const spans = await waitFor(
      'judge spans exported',
      async () => {
        const s = otlp.spans();
        return s.filter((x) => x.name === 'chat sim-judge').length >= 2 * N ? s : null;
      },
      60_000,
    ); // the batch span processor exports on its own schedule: generous on a loaded machine
    const items = spans.filter((s) => s.name === 'shadowplane.item' && s.attributes['shadowplane.campaign.id'] === id);
    expect(items).toHaveLength(N);
    const judges = spans.filter((s) => s.name === 'chat sim-judge');
    expect(judges).toHaveLength(2 * N);
    // both presentation orders of every item, each a client span in its item's trace
    for (const item of items) {
      const mine = judges.filter((j) => j.parentSpanId === item.spanId);
      expect(mine.map((j) => j.attributes['shadowplane.judge.order']).sort()).toEqual(['ab', 'ba']);
      for (const j of mine) {
        expect(j.traceId).toBe(item.traceId);
        expect(j.kind).toBe(3);
        expect(j.attributes).toMatchObject({
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'anthropic',
          'gen_ai.request.model': 'sim-judge',
          'shadowplane.judge': true,
          'shadowplane.judge.arm.id': 'medium',
          'shadowplane.provider.id': 'simanthropic',
          'shadowplane.cost.basis': expect.any(String),
        });
        expect(j.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
        expect(j.attributes['shadowplane.cost.usd']).toBeGreaterThan(0);
        expect(j.attributes).not.toHaveProperty('error.type');
      }
    }
    // the spans' costs are the judge's charges on the ledger (micro-USD, rounded up per call)
    const spanUsd = judges.reduce((a, j) => a + (j.attributes['shadowplane.cost.usd'] as number), 0);
    const chargedUsd = verdicts.reduce((a, v) => a + v.charged_micro_usd, 0) / 1e6;
    expect(Math.abs(spanUsd - chargedUsd)).toBeLessThanOrEqual((2 * N) / 1e6);
  }, 180_000);
});
