// Traces of a small campaign, exported by a real duplicator process over OTLP/HTTP (JSON) to a
// real Jaeger, read back through Jaeger's query API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import type { Observation } from '@shadowplane/contracts';
import { sharedNatsUrl, startJaeger, type JaegerHandle, type JaegerSpan } from '@shadowplane/testkit';
import { campaignState, chatEnvelope, gsm8kQuestions, launchCampaign, publishEnvelopes, readObs, simConfig, spawnWorker, startRig, waitFor, type Rig } from './harness.js';

const PROD_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PROD_SPAN = '00f067aa0ba902b7';
const tag = (s: JaegerSpan, k: string) => s.tags.find((t) => t.key === k)?.value;

describe('duplicator traces in Jaeger', () => {
  let jaeger: JaegerHandle;
  let rig: Rig;
  let child: ChildProcess | undefined;
  beforeAll(async () => {
    jaeger = await startJaeger();
    rig = await startRig(sharedNatsUrl(), simConfig());
  }, 120_000);
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await rig?.close();
    await jaeger?.stop();
  });

  it('exports an item span per capture (linked, not parented, to the production trace) with a GenAI chat span per provider call', async () => {
    const service = `dup-${rig.prefix}`;
    const w = await spawnWorker(rig, {
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpHttpUrl,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: service,
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=ci',
      OTEL_BSP_SCHEDULE_DELAY: '200',
    });
    child = w.child;
    const { id } = await launchCampaign(rig.bus, {
      name: 'traced',
      suite: 'tr',
      call_types: ['qa'],
      incumbent: { id: 'large', provider: 'simopenai', model: 'sim-large', rate_card: { input: 2.5, cached_input: 1.25, output: 10 }, max_output_tokens: 200 },
      candidates: [{ id: 'medium', provider: 'simanthropic', model: 'sim-medium', rate_card: { input: 0.4, cached_input: 0.1, output: 1.6 }, max_output_tokens: 200 }],
      max_items: 3,
      max_cost_usd: 5,
      aa_share: 0,
    });
    const envs = gsm8kQuestions(3).map((q) => chatEnvelope('tr', 'qa', q));
    envs[0]!.trace_context = { traceparent: `00-${PROD_TRACE}-${PROD_SPAN}-01`, tracestate: 'router=1' };
    await publishEnvelopes(rig.bus, envs);
    await waitFor('campaign completed', async () => (await campaignState(rig.bus, id))?.state === 'completed', 60_000);
    // a drained worker flushes its spans before it exits
    const exited = new Promise<number | null>((r) => child!.once('exit', (c) => r(c)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);

    const spans = await waitFor('spans in jaeger', async () => {
      const s = await jaeger.spans(service);
      return s.filter((x) => x.operationName.startsWith('chat ')).length >= 6 ? s : null;
    }, 30_000);
    const items = spans.filter((s) => s.operationName === 'shadowplane.item');
    const chats = spans.filter((s) => s.operationName.startsWith('chat '));
    expect(items).toHaveLength(3);
    expect(chats.map((s) => s.operationName).sort()).toEqual(['chat sim-large', 'chat sim-large', 'chat sim-large', 'chat sim-medium', 'chat sim-medium', 'chat sim-medium']);
    expect(new Set(items.map((s) => tag(s, 'shadowplane.item.hash')))).toEqual(new Set(envs.map((e) => e.item_hash)));

    // the linked item: a new trace whose only reference is a link (FOLLOWS_FROM) to the production span
    const linked = items.find((s) => tag(s, 'shadowplane.envelope.id') === envs[0]!.envelope_id)!;
    expect(linked.traceID).not.toBe(PROD_TRACE);
    expect(linked.references).toEqual([expect.objectContaining({ refType: 'FOLLOWS_FROM', traceID: PROD_TRACE, spanID: PROD_SPAN })]);
    for (const s of items.filter((x) => x !== linked)) expect(s.references).toEqual([]);

    // every chat span is a child of its item's span, and says what the observation says
    const obs = (await readObs(rig.bus, id)).filter((m): m is Observation => m.schema === 'shadow.observation/v1');
    expect(obs).toHaveLength(6);
    for (const c of chats) {
      const parent = c.references.find((r) => r.refType === 'CHILD_OF');
      const item = items.find((i) => i.spanID === parent?.spanID);
      expect(item, `parent of ${c.operationName}`).toBeDefined();
      expect(c.traceID).toBe(item!.traceID);
      const armId = tag(c, 'shadowplane.arm.id');
      const o = obs.find((x) => x.item_hash === tag(item!, 'shadowplane.item.hash') && x.arm_id === armId)!;
      expect(o).toBeDefined();
      expect(tag(c, 'span.kind')).toBe('client');
      expect(tag(c, 'gen_ai.operation.name')).toBe('chat');
      expect(tag(c, 'gen_ai.provider.name')).toBe(armId === 'large' ? 'openai' : 'anthropic');
      expect(tag(c, 'gen_ai.request.model')).toBe(o.model);
      expect(tag(c, 'gen_ai.response.model')).toBe(o.model_echo);
      expect(tag(c, 'gen_ai.response.finish_reasons')).toContain(o.finish_reason);
      const usage: Array<[string, number | null]> = [
        ['gen_ai.usage.input_tokens', o.usage.input_tokens],
        ['gen_ai.usage.output_tokens', o.usage.output_tokens],
        ['gen_ai.usage.cache_read.input_tokens', o.usage.cache_read_input_tokens],
        ['gen_ai.usage.cache_creation.input_tokens', o.usage.cache_creation_input_tokens],
        ['gen_ai.usage.reasoning.output_tokens', o.usage.reasoning_output_tokens],
      ];
      for (const [k, v] of usage) {
        // a figure the provider did not report is absent, never 0
        if (v === null) expect(c.tags.map((t) => t.key)).not.toContain(k);
        else expect(tag(c, k)).toBe(v);
      }
      expect(tag(c, 'shadowplane.cost.basis')).toBe(o.cost.basis);
      expect(tag(c, 'shadowplane.cost.usd')).toBeCloseTo(o.cost.usd!, 12);
      expect(c.tags.map((t) => t.key)).not.toContain('error.type');
    }
  }, 240_000);
});
