// Served-output retention end to end: sidecar (SHADOWPLANE_SIDECAR_RETAIN_SERVED) → real
// nats-server → the envelope's served.artifact_ref, the sealed bytes in the artifact store, and
// their decryption with the same keyring the duplicator uses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliverPolicy } from '@nats-io/jetstream';
import { generateKey, getArtifact, loadKeyring } from '@shadowplane/artifacts';
import { connectBus, openObjectStore, type Bus } from '@shadowplane/bus';
import { Envelope, SERVED_ARTIFACT_BINDING, SERVED_ARTIFACT_PURPOSE } from '@shadowplane/contracts';
import { randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import type { SidecarHandle } from '../src/index.js';
import { withoutArtifactRef } from '../src/served-retention.js';
import {
  metricValue,
  send,
  sleep,
  startTestSidecar,
  startUpstream,
  testConfig,
  waitFor,
  type TestUpstream,
} from './helpers.js';

const LLM = '/v1/chat/completions';
// what production served: an answer holding an e-mail address and a phone number
const ANSWER = 'Your agent is Jane: write to jane.doe@example.com or call +44 20 7946 0958 before Friday.';
const SERVED_JSON = JSON.stringify({
  id: 'chatcmpl-retain-1',
  object: 'chat.completion',
  created: 1744990626,
  model: 'gpt-4o-mini-2024-07-18',
  choices: [{ index: 0, message: { role: 'assistant', content: ANSWER }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 21, completion_tokens: 24, total_tokens: 45 },
});
const REDACTED_ANSWER = 'Your agent is Jane: write to <EMAIL> or call <PHONE> before Friday.';

function sse(text: string): string {
  const parts = [text.slice(0, 30), text.slice(30, 60), text.slice(60)];
  const ev = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  return (
    parts
      .map((p, i) =>
        ev({
          id: 'chatcmpl-s',
          object: 'chat.completion.chunk',
          model: 'gpt-4o-mini',
          choices: [
            { index: 0, delta: i === 0 ? { role: 'assistant', content: p } : { content: p }, finish_reason: null },
          ],
        }),
      )
      .join('') +
    ev({
      id: 'chatcmpl-s',
      object: 'chat.completion.chunk',
      model: 'gpt-4o-mini',
      choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
    }) +
    ev({
      id: 'chatcmpl-s',
      object: 'chat.completion.chunk',
      model: 'gpt-4o-mini',
      choices: [],
      usage: { prompt_tokens: 9, completion_tokens: 24, total_tokens: 33 },
    }) +
    'data: [DONE]\n\n'
  );
}

describe('served-output retention', () => {
  let up: TestUpstream;
  let sc: SidecarHandle;
  let bus: Bus;
  const prefix = randomPrefix('ret');
  const key = generateKey();
  const keyring = loadKeyring({ SHADOWPLANE_ARTIFACT_KEY: key });

  beforeAll(async () => {
    up = await startUpstream(async (req, res) => {
      if (new URL(req.url, 'http://x').searchParams.get('case') === 'sse') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const e of sse(ANSWER).split(/(?<=\n\n)/)) {
          res.write(e);
          await sleep(2);
        }
        return res.end();
      }
      if (new URL(req.url, 'http://x').searchParams.get('case') === '500') {
        res.writeHead(500, { 'content-type': 'application/json' });
        return res.end('{"error":{"message":"boom","type":"server_error"}}');
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(SERVED_JSON);
    });
    sc = await startTestSidecar(
      testConfig(up.url, sharedNatsUrl(), prefix, ['--sample', '1'], {
        SHADOWPLANE_SIDECAR_RETAIN_SERVED: 'true',
        SHADOWPLANE_SIDECAR_RETAIN_SERVED_TTL_DAYS: '3',
        SHADOWPLANE_ARTIFACT_KEY: key,
        SHADOWPLANE_SIDECAR_CAPTURE_BATCH_MS: '0',
        SHADOWPLANE_SIDECAR_OPT_IN: 'true',
      }),
    );
    bus = await connectBus({ url: sharedNatsUrl(), name: 'sidecar-retention-test', prefix });
    expect(await waitFor(() => sc.publisher.isConnected, 20_000)).toBe(true);
  });

  afterAll(async () => {
    await sc?.stop();
    await bus?.close();
    await up?.close();
  });

  /** Sends one chat request as suite `suite` and returns its envelope as read back from JetStream. */
  async function roundTrip(
    suite: string,
    headers: Record<string, string>,
    path = LLM,
  ): Promise<{ env: Envelope; client: Buffer }> {
    const r = await send(sc.url, {
      path,
      headers: { 'content-type': 'application/json', 'x-shadow-suite': suite, ...headers },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: `who is my agent (${suite})?` }],
      }),
    });
    expect(r.headers['x-shadow-capture']).toBe('queued');
    const subject = `${prefix}.shadow.capture.${suite}.openai_chat`;
    let env: Envelope | null = null;
    expect(
      await waitFor(
        async () => {
          const info = await bus.jsm.streams.info(bus.names.streams.capture).catch(() => null);
          if (!info || info.state.messages === 0) return false;
          const c = await bus.js.consumers.get(bus.names.streams.capture, {
            deliver_policy: DeliverPolicy.All,
            filter_subjects: [subject],
          });
          const m = await c.next({ expires: 1000 });
          if (!m) return false;
          env = Envelope.parse(JSON.parse(Buffer.from(m.data).toString('utf8')));
          return true;
        },
        30_000,
        100,
      ),
    ).toBe(true);
    return { env: env!, client: r.body };
  }

  it('with consent, a JSON answer is redacted, encrypted, stored with its TTL and named in served.artifact_ref; the client gets the bytes unchanged', async () => {
    const before = await metricValue(sc, 'shadowplane_sidecar_served_retention_total', { outcome: 'retained' });
    const { env, client } = await roundTrip('consented', { 'x-shadow-retention-consent': 'true' });
    expect(client.toString('utf8')).toBe(SERVED_JSON); // production untouched: PII and all
    expect(env.retention.consent).toBe(true);
    const ref = env.served?.artifact_ref;
    expect(ref).toMatch(/^art:[0-9a-f]{64}$/);
    const store = await openObjectStore(bus, bus.names.buckets.artifacts);
    const stored = await store.getBlob(ref!.slice(4));
    expect(stored).not.toBeNull();
    const storedText = Buffer.from(stored!).toString('utf8');
    // encrypted: neither the answer nor its PII is in the store's bytes
    for (const plain of [ANSWER, 'jane.doe@example.com', '7946 0958', 'Your agent is Jane', REDACTED_ANSWER])
      expect(storedText).not.toContain(plain);
    const a = await getArtifact(store, keyring, ref!);
    expect(a.output_text).toBe(REDACTED_ANSWER);
    expect(a.tool_calls).toEqual([]);
    // the body kept whole, redacted, still parseable in its dialect
    const raw = JSON.parse(a.response_raw!) as { choices: { message: { content: string } }[]; usage: unknown };
    expect(raw.choices[0]!.message.content).toBe(REDACTED_ANSWER);
    expect(raw.usage).toEqual({ prompt_tokens: 21, completion_tokens: 24, total_tokens: 45 });
    expect(a.meta.campaign_id).toBe(SERVED_ARTIFACT_BINDING.campaign_id);
    expect(a.meta.arm_id).toBe(SERVED_ARTIFACT_BINDING.arm_id);
    expect(a.meta.item_hash).toBe(env.item_hash);
    expect(a.meta.purpose).toBe(SERVED_ARTIFACT_PURPOSE);
    const ttlMs = Date.parse(a.meta.expires_at) - Date.parse(env.captured_at);
    expect(ttlMs).toBeGreaterThan(3 * 86_400_000 - 600_000);
    expect(ttlMs).toBeLessThan(3 * 86_400_000 + 600_000);
    // another keyring cannot read it
    await expect(getArtifact(store, loadKeyring({ SHADOWPLANE_ARTIFACT_KEY: generateKey() }), ref!)).rejects.toThrow(
      /unknown key id|failed authentication/,
    );
    expect(
      await metricValue(sc, 'shadowplane_sidecar_served_retention_total', { outcome: 'retained' }),
    ).toBeGreaterThan(before);
  });

  it('a stream keeps its assembled output, redacted', async () => {
    const { env, client } = await roundTrip('streamed', { 'x-shadow-retention-consent': 'yes' }, `${LLM}?case=sse`);
    expect(client.toString('utf8')).toBe(sse(ANSWER));
    expect(env.served?.stream).toBe(true);
    const ref = env.served?.artifact_ref;
    expect(ref).toMatch(/^art:[0-9a-f]{64}$/);
    const store = await openObjectStore(bus, bus.names.buckets.artifacts);
    const storedText = Buffer.from((await store.getBlob(ref!.slice(4)))!).toString('utf8');
    expect(storedText).not.toContain('jane.doe@example.com');
    const a = await getArtifact(store, keyring, ref!);
    expect(a.output_text).toBe(REDACTED_ANSWER);
    expect(a.response_raw).toBeUndefined();
  });

  it('without consent nothing is retained: the envelope has no artifact reference', async () => {
    const { env } = await roundTrip('noconsent', { 'x-shadow-retention-consent': 'false' });
    expect(env.retention.consent).toBe(false);
    expect(env.served?.status).toBe(200);
    expect(env.served?.artifact_ref ?? null).toBeNull();
  });

  it('a non-2xx answer is not retained (artifact_ref null, counted)', async () => {
    const before = await metricValue(sc, 'shadowplane_sidecar_served_retention_total', {
      outcome: 'failed',
      reason: 'not_2xx',
    });
    const { env } = await roundTrip('failing', { 'x-shadow-retention-consent': 'true' }, `${LLM}?case=500`);
    expect(env.served?.status).toBe(500);
    expect(env.served?.artifact_ref).toBeNull();
    expect(
      await metricValue(sc, 'shadowplane_sidecar_served_retention_total', { outcome: 'failed', reason: 'not_2xx' }),
    ).toBe(before + 1);
  });
});

describe('withoutArtifactRef', () => {
  it('writes the named reference as null and leaves every other byte alone', () => {
    const name = 'a'.repeat(64);
    const env = { served: { status: 200, artifact_ref: `art:${name}` }, note: 'art:' };
    const out = Buffer.from(withoutArtifactRef(Buffer.from(JSON.stringify(env)), name)).toString('utf8');
    expect(JSON.parse(out)).toEqual({ served: { status: 200, artifact_ref: null }, note: 'art:' });
    // another name: unchanged
    const same = withoutArtifactRef(Buffer.from(JSON.stringify(env)), 'b'.repeat(64));
    expect(Buffer.from(same).toString('utf8')).toBe(JSON.stringify(env));
  });
});
