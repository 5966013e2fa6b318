// The official SDKs, streaming and not, through the sidecar to provider-sim behave exactly as
// direct: same results, same chunks, same usage; and the capture's served usage equals what the
// SDK saw (provider-sim ground truth).
import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliverPolicy } from '@nats-io/jetstream';
import { connectBus, type Bus } from '@shadowplane/bus';
import { Envelope } from '@shadowplane/contracts';
import { startProviderSim, type ProviderSim } from '@shadowplane/provider-sim';
import { randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import type { SidecarHandle } from '../src/index.js';
import { startTestSidecar, testConfig, waitFor } from './helpers.js';

const QUESTION = (
  JSON.parse(
    readFileSync(new URL('../../../examples/data/gsm8k-test.jsonl', import.meta.url), 'utf8').split('\n')[0]!,
  ) as { question: string }
).question;

describe('official SDKs through the sidecar to provider-sim', () => {
  let sim: ProviderSim;
  let sc: SidecarHandle;
  let bus: Bus;
  const prefix = randomPrefix('scs');

  beforeAll(async () => {
    sim = await startProviderSim({ seed: 7 });
    sc = await startTestSidecar(testConfig(sim.url, sharedNatsUrl(), prefix, ['--sample', '1', '--suite', 'sdk']));
    bus = await connectBus({ url: sharedNatsUrl(), name: 'sidecar-sdk-test', prefix });
    expect(await waitFor(() => sc.publisher.isConnected, 10_000)).toBe(true);
  });
  afterAll(async () => {
    await sc?.stop();
    await bus?.close();
    await sim?.close();
  });

  const openai = (base: string) =>
    new OpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-test-direct-and-proxied', maxRetries: 0 });
  const params = { model: 'sim-large', messages: [{ role: 'user' as const, content: QUESTION }] };

  it('openai chat, non-streaming: identical completion via the sidecar and direct', async () => {
    sim.reset();
    const direct = await openai(sim.url).chat.completions.create(params);
    sim.reset();
    const { data: proxied, response } = await openai(sc.url).chat.completions.create(params).withResponse();
    expect(proxied).toEqual(direct);
    expect(response.headers.get('x-shadow-capture')).toBe('queued');
    expect(direct.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(sim.calls().at(-1)!.authPresent).toBe(true);
  });

  it('openai chat, streaming: identical chunks via the sidecar and direct', async () => {
    const collect = async (base: string) => {
      const stream = await openai(base).chat.completions.create({
        ...params,
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks: unknown[] = [];
      for await (const c of stream) chunks.push(c);
      return chunks;
    };
    sim.reset();
    const direct = await collect(sim.url);
    sim.reset();
    const proxied = await collect(sc.url);
    expect(direct.length).toBeGreaterThan(2);
    expect(proxied).toEqual(direct);
  });

  it('anthropic messages, streaming: identical events via the sidecar and direct', async () => {
    const collect = async (base: string) => {
      const client = new Anthropic({ baseURL: base, apiKey: 'sk-ant-test-key', maxRetries: 0 });
      const stream = client.messages.stream({
        model: 'sim-medium',
        max_tokens: 256,
        messages: [{ role: 'user', content: QUESTION }],
      });
      const events: unknown[] = [];
      for await (const e of stream) events.push(e);
      return { events, final: await stream.finalMessage() };
    };
    sim.reset();
    const direct = await collect(sim.url);
    sim.reset();
    const proxied = await collect(sc.url);
    expect(proxied).toEqual(direct);
  });

  it('the captured envelopes carry the usage the SDK saw', async () => {
    sim.reset();
    const res = await openai(sc.url).chat.completions.create({ ...params, model: 'sim-small' });
    expect(
      await waitFor(
        async () => ((await bus.jsm.streams.info(bus.names.streams.capture)).state.messages ?? 0) >= 4,
        10_000,
      ),
    ).toBe(true);
    const c = await bus.js.consumers.get(bus.names.streams.capture, { deliver_policy: DeliverPolicy.All });
    let found: Envelope | null = null;
    for (let i = 0; i < 10; i++) {
      const m = await c.next({ expires: 1000 });
      if (!m) break;
      const env = Envelope.parse(m.json());
      if (env.served?.model === res.model && env.api === 'openai.chat' && !env.served.stream) found = env;
    }
    expect(found).not.toBeNull();
    expect(found!.suite).toBe('sdk');
    expect(found!.served!.usage.input_tokens).toBe(res.usage!.prompt_tokens);
    expect(found!.served!.usage.output_tokens).toBe(res.usage!.completion_tokens);
  });
});
