// Captures end to end: sidecar → real nats-server → envelope read back from JetStream.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { connectBus, openObjectStore, type Bus } from '@shadowplane/bus';
import { CaptureSkipMarker, Envelope, itemHash } from '@shadowplane/contracts';
import { randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import type { SidecarHandle } from '../src/index.js';
import {
  metricValue,
  send,
  sha,
  sleep,
  startTestSidecar,
  startUpstream,
  testConfig,
  waitFor,
  type TestUpstream,
} from './helpers.js';

const CHAT_JSON = readFileSync(
  new URL('../../../test/fixtures/providers/openai/chat-cached-tokens-1024.json', import.meta.url),
);
const CHAT_SSE = readFileSync(
  new URL('../../../test/fixtures/providers/openai/chat-stream-include-usage-cached-1024.sse', import.meta.url),
);
const LLM = '/v1/chat/completions';

/** Reads every message currently in the prefix's CAPTURE stream. */
async function readCaptures(bus: Bus, expected: number, timeoutMs = 30_000): Promise<JsMsg[]> {
  const out: JsMsg[] = [];
  await waitFor(async () => {
    const info = await bus.jsm.streams.info(bus.names.streams.capture).catch(() => null);
    return (info?.state.messages ?? 0) >= expected;
  }, timeoutMs);
  const c = await bus.js.consumers.get(bus.names.streams.capture, { deliver_policy: DeliverPolicy.All });
  const info = await bus.jsm.streams.info(bus.names.streams.capture);
  for (let i = 0; i < info.state.messages; i++) {
    const m = await c.next({ expires: 10_000 });
    if (!m) break;
    out.push(m);
  }
  return out;
}

describe('captures in JetStream', () => {
  let up: TestUpstream;
  let sc: SidecarHandle;
  let bus: Bus;
  const prefix = randomPrefix('scc');
  const SALT = 'test-salt-0123456789abcdef';

  beforeAll(async () => {
    up = await startUpstream(async (req, res) => {
      const c = new URL(req.url, 'http://x').searchParams.get('case');
      if (c === 'sse') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const events = CHAT_SSE.toString()
          .split('\n\n')
          .filter((e) => e.trim() !== '');
        await sleep(40); // time to first token ≥ 40 ms
        for (const e of events) {
          res.write(`${e}\n\n`);
          await sleep(2);
        }
        return res.end();
      }
      if (c === 'echo-sha') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ sha: sha(req.body) }));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(CHAT_JSON);
    });
    sc = await startTestSidecar(
      testConfig(up.url, sharedNatsUrl(), prefix, ['--sample', '0.5'], {
        SHADOWPLANE_SIDECAR_OPT_IN: 'true',
        SHADOWPLANE_SIDECAR_STICKY_HEADER: 'x-conversation-id',
        SHADOWPLANE_SIDECAR_STICKY_SALT: SALT,
        SHADOWPLANE_SIDECAR_INLINE_MAX_BYTES: String(512 * 1024),
      }),
    );
    bus = await connectBus({ url: sharedNatsUrl(), name: 'sidecar-capture-test', prefix });
    expect(await waitFor(() => sc.publisher.isConnected, 10_000)).toBe(true);
  });

  afterAll(async () => {
    await sc?.stop();
    await bus?.close();
    await up?.close();
  });

  it('an envelope has the right item_hash, usage and redactions, and its raw bytes hold no Authorization, api-key or cookie value', async () => {
    const secrets = {
      authorization: 'Bearer sk-live-SECRETsecretSECRET0123456789',
      'api-key': 'azure-key-4f1c9e0b7d2a4e6f8a1b3c5d7e9f0a2b',
      'x-api-key': 'sk-ant-api03-SECRETvalueSECRETvalue00000000',
      cookie: 'session=cookie-secret-7c1d2e3f4a5b',
    };
    const body = {
      model: 'gpt-4o-mini',
      user: 'u-42',
      messages: [
        { role: 'system', content: 'You are helpful.' },
        {
          role: 'user',
          content:
            'Email me at jane.doe@example.com or call +44 20 7946 0958. Card 4111 1111 1111 1111, IP 10.1.2.3, key sk-proj-abcdefghijklmnopqrstuvwx1234',
        },
      ],
    };
    const r = await send(sc.url, {
      path: `${LLM}?tenant=1`,
      headers: {
        'content-type': 'application/json',
        ...secrets,
        'x-shadow-suite': 'support',
        'x-shadow-call-type': 'qa',
        'x-shadow-expect': '{"kind":"numeric","value":4}',
        'x-shadow-traffic-class': 'test',
      },
      body: JSON.stringify(body),
    });
    expect(r.status).toBe(200);
    expect(r.headers['x-shadow-capture']).toBe('queued');
    const msgs = (await readCaptures(bus, 1)).filter((m) => m.subject === `${prefix}.shadow.capture.support.qa`);
    expect(msgs).toHaveLength(1);
    const m = msgs[0]!;
    expect(m.headers?.get('Nats-Msg-Id')).toBeTruthy();
    const rawText = Buffer.from(m.data).toString('utf8');
    for (const v of Object.values(secrets)) {
      expect(rawText).not.toContain(v);
      expect(rawText).not.toContain(v.replace(/^Bearer /, ''));
    }
    for (const pii of [
      'jane.doe@example.com',
      '7946 0958',
      '4111 1111 1111 1111',
      '10.1.2.3',
      'sk-proj-abcdefghijklmnopqrstuvwx1234',
    ])
      expect(rawText).not.toContain(pii);

    const env = Envelope.parse(JSON.parse(rawText));
    expect(m.headers?.get('Nats-Msg-Id')).toBe(env.envelope_id);
    // the redacted body, written out by hand
    const expectedBody = {
      model: 'gpt-4o-mini',
      user: 'u-42',
      messages: [
        { role: 'system', content: 'You are helpful.' },
        { role: 'user', content: 'Email me at <EMAIL> or call <PHONE>. Card <CARD>, IP <IP>, key <API_KEY>' },
      ],
    };
    expect(env.request.body).toEqual(expectedBody);
    expect(env.item_hash).toBe(itemHash('openai.chat', LLM, expectedBody));
    expect(env.redactions).toEqual([
      { type: 'API_KEY', count: 1 },
      { type: 'CARD', count: 1 },
      { type: 'EMAIL', count: 1 },
      { type: 'IP', count: 1 },
      { type: 'PHONE', count: 1 },
    ]);
    expect(env.api).toBe('openai.chat');
    expect(env.path).toBe(LLM);
    expect(env.traffic_class).toBe('test');
    expect(env.expectations).toEqual([{ kind: 'numeric', value: 4 }]);
    expect(env.source).toEqual({ placement: 'ingress', sidecar_id: 'sidecar-test', sticky_key_hash: null });
    // usage as read by hand from the fixture: prompt 1149 (1024 cached), completion 353, reasoning 0
    expect(env.served?.status).toBe(200);
    expect(env.served?.usage.input_tokens).toBe(1149);
    expect(env.served?.usage.cache_read_input_tokens).toBe(1024);
    expect(env.served?.usage.cache_creation_input_tokens).toBeNull();
    expect(env.served?.usage.output_tokens).toBe(353);
    expect(env.served?.usage.reasoning_output_tokens).toBe(0);
    expect(env.served?.model).toBe('gpt-4o-mini-2024-07-18');
    expect(env.served?.stream).toBe(false);
    expect(env.served?.abandoned).toBe(false);
  });

  it('a streamed response is summarised from the tee: usage from the final chunk, TTFT measured', async () => {
    const body = {
      model: 'gpt-4.1',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Say hi.' }],
    };
    const r = await send(sc.url, {
      path: `${LLM}?case=sse`,
      headers: { 'content-type': 'application/json', 'x-shadow-suite': 'stream' },
      body: JSON.stringify(body),
    });
    expect(r.headers['x-shadow-capture']).toBe('queued');
    expect(sha(r.body)).toBe(
      sha(
        CHAT_SSE.toString()
          .split('\n\n')
          .filter((e) => e.trim() !== '')
          .map((e) => `${e}\n\n`)
          .join(''),
      ),
    );
    const msgs = (await readCaptures(bus, 2)).filter((m) => m.subject.endsWith('.shadow.capture.stream.openai_chat'));
    expect(msgs).toHaveLength(1);
    const env = Envelope.parse(msgs[0]!.json());
    expect(env.item_hash).toBe(itemHash('openai.chat', LLM, body));
    expect(env.redactions).toEqual([]);
    // the fixture's final chunk: prompt 1144 (1024 cached), completion 2; model gpt-4.1-2025-04-14
    expect(env.served?.stream).toBe(true);
    expect(env.served?.usage.input_tokens).toBe(1144);
    expect(env.served?.usage.cache_read_input_tokens).toBe(1024);
    expect(env.served?.usage.output_tokens).toBe(2);
    expect(env.served?.model).toBe('gpt-4.1-2025-04-14');
    expect(env.served?.finish_reason).toBe('stop');
    expect(env.served?.ttft_ms).toBeGreaterThanOrEqual(40);
    expect(env.served?.latency_ms).toBeGreaterThanOrEqual(env.served!.ttft_ms!);
  });

  it('a 5 MB request body goes to the object store and reads back byte-identical (replayable)', async () => {
    const big = Buffer.from(
      JSON.stringify({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'lorem ipsum dolor sit amet '.repeat(200_000) }],
      }),
    );
    expect(big.length).toBeGreaterThan(5_000_000);
    const r = await send(sc.url, {
      path: `${LLM}?case=echo-sha`,
      headers: { 'content-type': 'application/json', 'x-shadow-suite': 'big' },
      body: big,
    });
    expect(JSON.parse(r.body.toString()).sha).toBe(sha(big));
    const msgs = (await readCaptures(bus, 3, 15_000)).filter((m) =>
      m.subject.endsWith('.shadow.capture.big.openai_chat'),
    );
    expect(msgs).toHaveLength(1);
    const env = Envelope.parse(msgs[0]!.json());
    expect(msgs[0]!.data.length).toBeLessThan(10_000);
    expect(env.request.body).toBeNull();
    expect(env.request.bytes).toBe(big.length);
    expect(env.request.body_ref).toMatchObject({ store: bus.names.captureBodies, sha256: sha(big), bytes: big.length });
    const store = await openObjectStore(bus, env.request.body_ref!.store);
    const back = await store.getBlob(env.request.body_ref!.name);
    expect(back).not.toBeNull();
    expect(Buffer.from(back!).equals(big)).toBe(true);
    // built on the worker thread, not on the proxy's event loop
    expect(await metricValue(sc, 'shadowplane_sidecar_capture_builds_total', { where: 'worker' })).toBe(1);
    // replay: the stored body parses to the same item
    expect(itemHash(env.api, env.path, JSON.parse(Buffer.from(back!).toString()))).toBe(env.item_hash);
  });

  it('sticky sampling keeps every request of a conversation together (in or out), and stores only a salted hash', async () => {
    const convs = Array.from({ length: 16 }, (_, i) => `conv-${i}-${prefix}`);
    const echoes = new Map<string, Set<string>>();
    for (let round = 0; round < 3; round++) {
      for (const conv of convs) {
        const r = await send(sc.url, {
          path: `${LLM}?case=echo-sha`,
          headers: { 'content-type': 'application/json', 'x-conversation-id': conv },
          body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `turn ${round} of ${conv}` }] }),
        });
        const set = echoes.get(conv) ?? new Set();
        set.add(String(r.headers['x-shadow-capture']));
        echoes.set(conv, set);
      }
    }
    for (const set of echoes.values()) expect(set.size).toBe(1);
    const outcomes = [...echoes.values()].map((s) => [...s][0]);
    expect(outcomes).toContain('queued');
    expect(outcomes).toContain('not_sampled');
    const inConv = convs.filter((c) => [...echoes.get(c)!][0] === 'queued');
    const expectedCount = 3 * inConv.length;
    const msgs = (await readCaptures(bus, 3 + expectedCount, 10_000)).filter((m) =>
      m.subject.endsWith('.shadow.capture.default.openai_chat'),
    );
    expect(msgs).toHaveLength(expectedCount);
    const hashes = new Set(msgs.map((m) => Envelope.parse(m.json()).source.sticky_key_hash));
    expect(hashes.size).toBe(inConv.length);
    const raw = msgs.map((m) => Buffer.from(m.data).toString()).join('\n');
    for (const c of convs) expect(raw).not.toContain(`"${c}"`);
    // the documented key hash: sha256(salt ‖ 0x00 ‖ key)
    const expected = new Set(inConv.map((c) => createHash('sha256').update(SALT).update('\0').update(c).digest('hex')));
    expect(hashes).toEqual(expected);
  });

  it('opt-out always wins, and a bad x-shadow-expect (a lookahead regex included) skips the capture but not the request', async () => {
    const a = await send(sc.url, {
      path: `${LLM}?case=echo-sha`,
      headers: { 'content-type': 'application/json', 'x-shadow-suite': 's', 'x-shadow-opt-out': '1' },
      body: '{"model":"m"}',
    });
    expect(a.status).toBe(200);
    expect(a.headers['x-shadow-capture']).toBe('skipped:opt_out');
    const b = await send(sc.url, {
      path: `${LLM}?case=echo-sha`,
      headers: { 'content-type': 'application/json', 'x-shadow-suite': 's', 'x-shadow-expect': '{"kind":"nope"}' },
      body: '{"model":"m"}',
    });
    expect(b.status).toBe(200);
    expect(b.headers['x-shadow-capture']).toBe('skipped:bad_expectation');
    expect(up.seen.at(-1)!.headers['x-shadow-expect']).toBeUndefined();
    // a regex RE2 cannot compile (lookahead) is a bad expectation too; the request still passes
    const c = await send(sc.url, {
      path: `${LLM}?case=echo-sha`,
      headers: {
        'content-type': 'application/json',
        'x-shadow-suite': 's',
        'x-shadow-expect': JSON.stringify({ kind: 'regex', value: 'a(?=b)' }),
      },
      body: '{"model":"m"}',
    });
    expect(c.status).toBe(200);
    expect(c.headers['x-shadow-capture']).toBe('skipped:bad_expectation');
    expect(await metricValue(sc, 'shadowplane_sidecar_captures_total', { outcome: 'skipped', reason: 'opt_out' })).toBe(
      1,
    );
  });

  it('a request whose body has PII the redactor cannot classify is excluded as pii_uncertain (the request still passes)', async () => {
    const body = JSON.stringify({
      model: 'm',
      messages: [{ role: 'user', content: 'my card 4111 1111 1111 1112 please' }],
    });
    const r = await send(sc.url, {
      path: `${LLM}?case=echo-sha`,
      headers: { 'content-type': 'application/json', 'x-shadow-suite': 'pii' },
      body,
    });
    expect(JSON.parse(r.body.toString()).sha).toBe(sha(body));
    expect(
      await waitFor(
        async () =>
          (await metricValue(sc, 'shadowplane_sidecar_captures_total', {
            outcome: 'excluded',
            reason: 'pii_uncertain',
          })) === 1,
      ),
    ).toBe(true);
    // a content-free skip marker says so on `shadow.capture.pii.<call_type>.skipped`, for dataset cards
    const filter = `${prefix}.shadow.capture.pii.>`;
    let subjects: Record<string, number> = {};
    expect(
      await waitFor(async () => {
        const info = await bus.jsm.streams.info(bus.names.streams.capture, { subjects_filter: filter });
        subjects = info.state.subjects ?? {};
        return Object.keys(subjects).some((k) => k.endsWith('.skipped'));
      }),
    ).toBe(true);
    expect(Object.keys(subjects).filter((k) => !k.endsWith('.skipped'))).toEqual([]); // no envelope
    const subject = Object.keys(subjects).find((k) => k.endsWith('.skipped'))!;
    const m = await bus.jsm.streams.getMessage(bus.names.streams.capture, { last_by_subj: subject });
    const marker = CaptureSkipMarker.parse(m!.json());
    expect(marker).toMatchObject({ suite: 'pii', reason: 'pii_uncertain', bytes: Buffer.byteLength(body) });
    expect(m!.string()).not.toContain('4111');
    expect(
      await metricValue(sc, 'shadowplane_sidecar_skip_markers_total', { outcome: 'published' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('repeated Content-Encoding lines are one list: a list of codings is not decoded, so the capture is excluded (the request still passes)', async () => {
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    const u = new URL(sc.url);
    const sock = connect({ host: u.hostname, port: Number(u.port) });
    await once(sock, 'connect');
    const chunks: Buffer[] = [];
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.write(
      `POST ${LLM}?case=echo-sha HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Encoding: identity\r\n` +
        `x-shadow-suite: enc\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    await once(sock, 'close');
    const text = Buffer.concat(chunks).toString();
    expect(text.startsWith('HTTP/1.1 200 ')).toBe(true);
    expect(text).toContain(sha(Buffer.from(body)));
    expect(
      await waitFor(
        async () =>
          (await metricValue(sc, 'shadowplane_sidecar_captures_total', {
            outcome: 'excluded',
            reason: 'bad_body_encoding',
          })) === 1,
      ),
    ).toBe(true);
  });

  it('metrics: published count and last publish time move', async () => {
    expect(
      await metricValue(sc, 'shadowplane_sidecar_captures_total', { outcome: 'published' }),
    ).toBeGreaterThanOrEqual(3);
    expect(await metricValue(sc, 'shadowplane_sidecar_last_publish_timestamp_seconds')).toBeGreaterThan(
      Date.now() / 1000 - 120,
    );
    const text = await (await fetch(`${sc.opsUrl}/metrics`)).text();
    expect(text).toContain('shadowplane_sidecar_added_latency_seconds_bucket');
    expect(text).toContain('shadowplane_sidecar_capture_queue_depth{role="sidecar"} 0');
  });
});

describe('stop() with captures in flight', () => {
  it('a large capture still being built on the worker thread when stop() is called is published, not cut off', async () => {
    const up = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(CHAT_JSON);
    });
    const prefix = randomPrefix('scs');
    const sc = await startTestSidecar(
      testConfig(up.url, sharedNatsUrl(), prefix, [], {
        SHADOWPLANE_SIDECAR_OPT_IN: 'true',
        SHADOWPLANE_SIDECAR_FLUSH_TIMEOUT_MS: '120000',
        SHADOWPLANE_SIDECAR_CAPTURE_CPU_BUDGET_MS: '120000',
      }),
    );
    const bus = await connectBus({ url: sharedNatsUrl(), name: 'sidecar-stop-test', prefix });
    try {
      expect(await waitFor(() => sc.publisher.isConnected, 10_000)).toBe(true);
      const big = Buffer.from(
        JSON.stringify({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'lorem ipsum dolor sit amet '.repeat(200_000) }],
        }),
      );
      const rs = await Promise.all(
        [1, 2].map(() =>
          send(sc.url, {
            path: LLM,
            headers: { 'content-type': 'application/json', 'x-shadow-suite': 'stop' },
            body: big,
          }),
        ),
      );
      expect(rs.map((r) => r.status)).toEqual([200, 200]);
      await sc.stop();
      expect(await metricValue(sc, 'shadowplane_sidecar_captures_total', { outcome: 'published' })).toBe(2);
      expect(
        await metricValue(sc, 'shadowplane_sidecar_captures_total', { outcome: 'excluded', reason: 'worker_error' }),
      ).toBe(0);
      const msgs = await readCaptures(bus, 2, 60_000);
      expect(msgs).toHaveLength(2);
    } finally {
      await bus.close();
      await up.close();
    }
  }, 150_000);
});
