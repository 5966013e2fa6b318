// Traces of a small campaign, exported by a real duplicator process over OTLP/HTTP (JSON) to a
// real Jaeger, read back through Jaeger's query API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync, type ChildProcess } from 'node:child_process';
import type { Observation } from '@shadowplane/contracts';
import { freePort, sharedNatsUrl, startJaeger, type JaegerHandle, type JaegerSpan } from '@shadowplane/testkit';
import {
  campaignState,
  chatEnvelope,
  gsm8kQuestions,
  launchCampaign,
  publishEnvelopes,
  readObs,
  simConfig,
  spawnWorker,
  startRig,
  waitFor,
  type Rig,
} from './harness.js';

const PROD_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PROD_SPAN = '00f067aa0ba902b7';
const PROD_TRACE_2 = '5c0a3f2e9b1d4e7fa8b6c5d4e3f2a1b0';
const PROD_SPAN_2 = '1a2b3c4d5e6f7081';
const tag = (s: JaegerSpan, k: string) => s.tags.find((t) => t.key === k)?.value;
/** The value of the sample `name{labels…}` in Prometheus text (label order free), or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)\{(.*)\} (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...m[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (
      Object.keys(got).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => got[k] === v)
    )
      return Number(m[3]);
  }
  return undefined;
}

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
    const opsPort = await freePort();
    const w = await spawnWorker(rig, {
      SHADOWPLANE_DUPLICATOR_OPS_LISTEN: `127.0.0.1:${opsPort}`,
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
      incumbent: {
        id: 'large',
        provider: 'simopenai',
        model: 'sim-large',
        rate_card: { input: 2.5, cached_input: 1.25, output: 10 },
        max_output_tokens: 200,
      },
      candidates: [
        {
          id: 'medium',
          provider: 'simanthropic',
          model: 'sim-medium',
          rate_card: { input: 0.4, cached_input: 0.1, output: 1.6 },
          max_output_tokens: 200,
        },
      ],
      max_items: 3,
      max_cost_usd: 5,
      aa_share: 0,
    });
    // while the campaign runs, its budget gauges carry its id
    await waitFor(
      'budget gauges',
      async () => {
        const t = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
        return (
          t.includes(`shadowplane_duplicator_campaign_budget_limit_usd{campaign="${id}",role="duplicator"} 5`) &&
          t.includes(`shadowplane_duplicator_campaign_budget_spent_usd{campaign="${id}",role="duplicator"} 0`)
        );
      },
      15_000,
    );
    const envs = gsm8kQuestions(3).map((q) => chatEnvelope('tr', 'qa', q));
    envs[0]!.trace_context = { traceparent: `00-${PROD_TRACE}-${PROD_SPAN}-01`, tracestate: 'router=1' };
    // a second production request of its own trace; the third capture carries none
    envs[1]!.trace_context = { traceparent: `00-${PROD_TRACE_2}-${PROD_SPAN_2}-01`, tracestate: null };
    await publishEnvelopes(rig.bus, envs);
    await waitFor('campaign completed', async () => (await campaignState(rig.bus, id))?.state === 'completed', 60_000);
    // its metrics, sliced by provider, model and arm, pass promtool (see test/deploy for the
    // three prom-client gauge names it flags), and the campaign's budget gauges are live
    const text = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
    // the campaign label exists only while the campaign is consumed: gone once it completed
    await waitFor(
      'campaign series removed',
      async () => !(await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text()).includes(`campaign="${id}"`),
      10_000,
    );
    const lint = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(
      `${lint.stdout}${lint.stderr}`
        .split('\n')
        .filter((l) => l && !/^nodejs_active_(handles|requests|resources)_total non-counter/.test(l)),
    ).toEqual([]);
    const large = { provider: 'simopenai', model: 'sim-large', arm: 'large', role: 'duplicator' };
    const medium = { provider: 'simanthropic', model: 'sim-medium', arm: 'medium', role: 'duplicator' };
    expect(
      sample(text, 'shadowplane_duplicator_provider_calls_total', { ...large, arm_role: 'incumbent', result: 'ok' }),
    ).toBe(3);
    expect(
      sample(text, 'shadowplane_duplicator_provider_calls_total', { ...medium, arm_role: 'candidate', result: 'ok' }),
    ).toBe(3);
    expect(
      sample(text, 'shadowplane_duplicator_provider_call_duration_seconds_count', { ...medium, result: 'ok' }),
    ).toBe(3);
    expect(sample(text, 'shadowplane_duplicator_reserved_usd', { role: 'duplicator' })).toBe(0);
    expect(text).toMatch(/^process_cpu_seconds_total\{role="duplicator"\} /m);
    // a drained worker flushes its spans before it exits
    const exited = new Promise<number | null>((r) => child!.once('exit', (c) => r(c)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);

    const spans = await waitFor(
      'spans in jaeger',
      async () => {
        const s = await jaeger.spans(service);
        return s.filter((x) => x.operationName.startsWith('chat ')).length >= 6 ? s : null;
      },
      30_000,
    );
    const items = spans.filter((s) => s.operationName === 'shadowplane.item');
    const chats = spans.filter((s) => s.operationName.startsWith('chat '));
    expect(items).toHaveLength(3);
    expect(chats.map((s) => s.operationName).sort()).toEqual([
      'chat sim-large',
      'chat sim-large',
      'chat sim-large',
      'chat sim-medium',
      'chat sim-medium',
      'chat sim-medium',
    ]);
    expect(new Set(items.map((s) => tag(s, 'shadowplane.item.hash')))).toEqual(new Set(envs.map((e) => e.item_hash)));

    // each linked item: a new trace whose only reference is a link (FOLLOWS_FROM) to its own
    // production request's span, never another item's
    const itemOf = (i: number) => items.find((s) => tag(s, 'shadowplane.envelope.id') === envs[i]!.envelope_id)!;
    for (const [i, trace, span] of [
      [0, PROD_TRACE, PROD_SPAN],
      [1, PROD_TRACE_2, PROD_SPAN_2],
    ] as const) {
      const linked = itemOf(i);
      expect(linked.traceID).not.toBe(trace);
      expect(linked.references).toEqual([
        expect.objectContaining({ refType: 'FOLLOWS_FROM', traceID: trace, spanID: span }),
      ]);
    }
    expect(itemOf(2).references).toEqual([]);
    expect(new Set(items.map((s) => s.traceID)).size).toBe(3);

    // every chat span is a child of its item's span, and says what the observation says
    const obs = (await readObs(rig.bus, id)).filter((m): m is Observation => m.schema === 'shadow.observation/v1');
    expect(obs).toHaveLength(6);
    // token counters add exactly what the observations recorded, by token type
    for (const [arm, labels] of [
      ['large', large],
      ['medium', medium],
    ] as const) {
      const mine = obs.filter((o) => o.arm_id === arm);
      const total = (f: 'input_tokens' | 'output_tokens') => mine.reduce((a, o) => a + (o.usage[f] ?? 0), 0);
      expect(sample(text, 'shadowplane_duplicator_provider_tokens_total', { ...labels, token_type: 'input' })).toBe(
        total('input_tokens'),
      );
      expect(sample(text, 'shadowplane_duplicator_provider_tokens_total', { ...labels, token_type: 'output' })).toBe(
        total('output_tokens'),
      );
    }
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
