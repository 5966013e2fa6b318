// Routes and rules from a YAML file: path-prefix and Host routing, strip_prefix, egress placement,
// model filters applied at capture time, and the capture ceiling.
import type { ServerResponse } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliverPolicy } from '@nats-io/jetstream';
import { connectBus, type Bus } from '@shadowplane/bus';
import { CaptureSkipMarker, Envelope } from '@shadowplane/contracts';
import { randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import { loadConfig, type SidecarHandle } from '../src/index.js';
import { metricValue, send, startTestSidecar, startUpstream, waitFor, type TestUpstream } from './helpers.js';

const REPLY = JSON.stringify({
  id: 'r',
  model: 'x',
  choices: [{ message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 1 },
});

describe('routes and rules from YAML', () => {
  let a: TestUpstream;
  let b: TestUpstream;
  let sc: SidecarHandle;
  let bus: Bus;
  const prefix = randomPrefix('sco');

  beforeAll(async () => {
    const handler = (_req: unknown, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(REPLY);
    };
    a = await startUpstream(handler);
    b = await startUpstream(handler);
    const dir = mkdtempSync(join(tmpdir(), 'sidecar-routes-'));
    const file = join(dir, 'sidecar.yaml');
    writeFileSync(
      file,
      `
routes:
  - path_prefix: /openai/
    upstream: ${a.url}/base
    strip_prefix: true
    placement: egress
  - host: other.internal
    upstream: ${b.url}
sampling:
  rate: 0
  suite: yaml
  rules:
    - name: gpt-only
      path_prefix: /openai/v1/chat/completions
      models: ["gpt-4o*"]
      call_type: chat
      rate: 1
`,
    );
    const r = loadConfig(
      [
        '--config',
        file,
        '--listen',
        '127.0.0.1:0',
        '--ops-listen',
        '127.0.0.1:0',
        '--nats',
        sharedNatsUrl(),
        '--prefix',
        prefix,
      ],
      {
        SHADOWPLANE_SIDECAR_CAPTURE_MAX_BYTES: '2048',
        SHADOWPLANE_SIDECAR_ID: 'routes-test',
      },
    );
    if (r.kind !== 'config') throw new Error('help');
    sc = await startTestSidecar(r.config);
    bus = await connectBus({ url: sharedNatsUrl(), name: 'sidecar-routes-test', prefix });
    expect(await waitFor(() => sc.publisher.isConnected, 10_000)).toBe(true);
  });
  afterAll(async () => {
    await sc?.stop();
    await bus?.close();
    await a?.close();
    await b?.close();
  });

  const chat = (model: string, pad = '') =>
    JSON.stringify({ model, messages: [{ role: 'user', content: `hello${pad}` }] });

  it('routes by path prefix (stripped, onto the upstream base path) and by Host; nothing else is forwarded', async () => {
    const r1 = await send(sc.url, {
      path: '/openai/v1/chat/completions?x=1',
      headers: { 'content-type': 'application/json' },
      body: chat('gpt-4o-mini'),
    });
    expect(r1.status).toBe(200);
    expect(a.seen.at(-1)!.url).toBe('/base/v1/chat/completions?x=1');
    const r2 = await send(sc.url, {
      path: '/v1/messages',
      headers: { 'content-type': 'application/json', host: 'other.internal:8080' },
      body: chat('m'),
    });
    expect(r2.status).toBe(200);
    expect(b.seen.at(-1)!.url).toBe('/v1/messages');
    const before = a.seen.length + b.seen.length;
    const r3 = await send(sc.url, { path: '/elsewhere', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(r3.status).toBe(404);
    expect(JSON.parse(r3.body.toString()).error.code).toBe('not_found');
    expect(a.seen.length + b.seen.length).toBe(before);
  });

  it('a rule model filter is applied at capture time: other models are excluded as model_filtered', async () => {
    const r = await send(sc.url, {
      path: '/openai/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      body: chat('claude-3-haiku'),
    });
    expect(r.headers['x-shadow-capture']).toBe('queued');
    expect(
      await waitFor(
        async () =>
          (await metricValue(sc, 'shadowplane_sidecar_captures_total', {
            outcome: 'excluded',
            reason: 'model_filtered',
          })) === 1,
      ),
    ).toBe(true);
    // the gpt-4o-mini request of the first test was published, as egress, with the stripped path
    expect(
      await waitFor(
        async () => (await metricValue(sc, 'shadowplane_sidecar_captures_total', { outcome: 'published' })) === 1,
      ),
    ).toBe(true);
    const c = await bus.js.consumers.get(bus.names.streams.capture, { deliver_policy: DeliverPolicy.All });
    const m = await c.next({ expires: 2000 });
    expect(m?.subject).toBe(`${prefix}.shadow.capture.yaml.chat`);
    const env = Envelope.parse(m!.json());
    expect(env.source.placement).toBe('egress');
    expect(env.path).toBe('/base/v1/chat/completions');
    expect(env.source.sidecar_id).toBe('routes-test');
  });

  it('over the capture ceiling: a declared length is skipped up front, a chunked upload is excluded once it grows past it; both requests pass', async () => {
    const big = chat('gpt-4o-mini', 'x'.repeat(4000));
    const r1 = await send(sc.url, {
      path: '/openai/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      body: big,
    });
    expect(r1.status).toBe(200);
    expect(r1.headers['x-shadow-capture']).toBe('skipped:too_large');
    expect(a.seen.at(-1)!.body.toString()).toBe(big);
    const r2 = await send(sc.url, {
      path: '/openai/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      chunks: [big.slice(0, 1000), big.slice(1000, 3000), big.slice(3000)],
    });
    expect(r2.status).toBe(200);
    expect(a.seen.at(-1)!.body.toString()).toBe(big);
    expect(
      await metricValue(sc, 'shadowplane_sidecar_captures_total', { outcome: 'skipped', reason: 'too_large' }),
    ).toBe(1);
    expect(
      await waitFor(
        async () =>
          (await metricValue(sc, 'shadowplane_sidecar_captures_total', {
            outcome: 'excluded',
            reason: 'too_large',
          })) === 1,
      ),
    ).toBe(true);
    // each skip leaves a content-free marker on `<suite>.<call_type>.skipped` for dataset cards
    const markers = async () => {
      const info = await bus.jsm.streams.info(bus.names.streams.capture, {
        subjects_filter: `${prefix}.shadow.capture.>`,
      });
      return Object.entries(info.state.subjects ?? {}).filter(([k]) => k.endsWith('.skipped'));
    };
    expect(await waitFor(async () => (await markers()).reduce((n, [, c]) => n + c, 0) === 2)).toBe(true);
    const [[subject]] = (await markers()) as [[string, number]];
    const c = await bus.js.consumers.get(bus.names.streams.capture, {
      filter_subjects: subject,
      deliver_policy: DeliverPolicy.All,
    });
    const got = [await c.next({ expires: 2000 }), await c.next({ expires: 2000 })].map((m) =>
      CaptureSkipMarker.parse(m!.json()),
    );
    expect(got.map((m) => m.reason)).toEqual(['too_large', 'too_large']);
    expect(got[0]!.bytes).toBe(Buffer.byteLength(big));
    expect(JSON.stringify(got)).not.toContain('xxxx');
  });
});
