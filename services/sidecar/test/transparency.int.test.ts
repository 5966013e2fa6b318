// Byte-for-byte transparency through a real sidecar over loopback, with sampling at 100% so every
// exchange to the LLM path is also teed for capture: what the upstream receives equals what the
// client sent, and what the client receives equals what the upstream sent.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

const FIXTURE = readFileSync(
  new URL('../../../test/fixtures/providers/openai/chat-cached-tokens-1024.json', import.meta.url),
);
const LLM = '/v1/chat/completions';
const BIG = randomBytes(20 * 1024 * 1024);
const GZ = gzipSync(Buffer.from('{"hello":"compressed world"}'.repeat(200)));
const INVALID_UTF8 = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]);
const sseWrites: number[] = [];
let upstreamSent = new Map<string, Buffer>();

describe('sidecar transparency (sampling 100%)', () => {
  let up: TestUpstream;
  let sc: SidecarHandle;

  beforeAll(async () => {
    up = await startUpstream(async (req, res) => {
      const c = new URL(req.url, 'http://x').searchParams.get('case');
      const reply = (status: number, headers: Record<string, string | string[]>, body: Buffer | string) => {
        upstreamSent.set(c ?? '', Buffer.from(body));
        res.writeHead(status, headers);
        res.end(body);
      };
      switch (c) {
        case 'json':
          return reply(
            200,
            {
              'content-type': 'application/json',
              'set-cookie': ['a=1; Path=/', 'b=2; Path=/'],
              'x-request-id': 'req_123',
            },
            FIXTURE,
          );
        case 'echo-sha':
          return reply(
            200,
            { 'content-type': 'application/json' },
            JSON.stringify({ sha: sha(req.body), bytes: req.body.length }),
          );
        case 'big':
          return reply(200, { 'content-type': 'application/octet-stream' }, BIG);
        case 'gzip':
          return reply(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }, GZ);
        case 'invalid-utf8':
          return reply(200, { 'content-type': 'application/json; charset=utf-8' }, INVALID_UTF8);
        case 'empty':
          res.writeHead(204, { 'x-empty': 'yes' });
          return res.end();
        case 'head':
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1234', 'x-head': 'yes' });
          return res.end();
        case '418':
          return reply(
            418,
            { 'content-type': 'application/json' },
            '{"error":{"message":"teapot","type":"invalid_request_error"}}',
          );
        case '503':
          return reply(503, { 'content-type': 'text/plain', 'retry-after': '7' }, 'upstream overloaded\n');
        case 'sse': {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          const parts: Buffer[] = [];
          for (let i = 0; i < 5; i++) {
            const ev = Buffer.from(`data: {"i":${i}}\n\n`);
            parts.push(ev);
            sseWrites.push(performance.now());
            res.write(ev);
            await sleep(150);
          }
          upstreamSent.set('sse', Buffer.concat(parts));
          return res.end();
        }
        case 'cut-length': {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
          res.write(Buffer.alloc(500, 0x61));
          await sleep(50);
          return res.socket?.destroy();
        }
        case 'cut-chunked': {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write('data: {"i":0}\n\n');
          await sleep(50);
          res.write('data: {"i":1}\n\n');
          await sleep(50);
          return res.socket?.destroy();
        }
        case 'hang-stream': {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write('data: {"i":0}\n\n');
          return; // never ends; the client aborts
        }
        default:
          return reply(200, { 'content-type': 'application/json' }, '{"ok":true}');
      }
    });
    sc = await startTestSidecar(testConfig(up.url, sharedNatsUrl(), randomPrefix('sct'), ['--sample', '1']));
  });

  afterAll(async () => {
    await sc?.stop();
    await up?.close();
  });

  const body1 = Buffer.from(
    JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'What is 2+2?' }] }),
  );

  it('JSON: request bytes, headers, query and response bytes/headers pass unchanged; x-shadow-* and hop-by-hop are stripped', async () => {
    const r = await send(sc.url, {
      path: `${LLM}?case=json&q=%20x`,
      headers: [
        ['Content-Type', 'application/json'],
        ['Authorization', 'Bearer sk-test-should-pass-through'],
        ['X-Custom-Thing', 'v1'],
        ['X-Custom-Thing', 'v2'],
        ['x-shadow-suite', 'transparency'],
        ['Connection', 'keep-alive, x-hop'],
        ['x-hop', 'drop me'],
      ],
      body: body1,
    });
    const seen = up.seen.at(-1)!;
    expect(seen.url).toBe(`${LLM}?case=json&q=%20x`);
    expect(sha(seen.body)).toBe(sha(body1));
    expect(seen.headers['authorization']).toBe('Bearer sk-test-should-pass-through');
    expect(seen.headers['x-custom-thing']).toBe('v1, v2');
    expect(seen.headers['x-shadow-suite']).toBeUndefined();
    expect(seen.headers['x-hop']).toBeUndefined();
    expect(seen.headers['host']).toBe(new URL(up.url).host);
    expect(r.status).toBe(200);
    expect(sha(r.body)).toBe(sha(FIXTURE));
    expect(r.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2; Path=/']);
    expect(r.headers['x-request-id']).toBe('req_123');
    expect(r.headers['x-shadow-capture']).toBe('queued');
  });

  it('SSE with slow chunks: each event reaches the client before the upstream has finished', async () => {
    sseWrites.length = 0;
    const r = await send(sc.url, {
      path: `${LLM}?case=sse`,
      headers: { 'content-type': 'application/json' },
      body: '{"model":"m","stream":true,"messages":[]}',
    });
    expect(r.complete).toBe(true);
    expect(sha(r.body)).toBe(sha(upstreamSent.get('sse')!));
    expect(r.chunkTimes.length).toBeGreaterThanOrEqual(5);
    // the first event arrives long before the last one was even written (150 ms apart)
    expect(r.chunkTimes[0]!).toBeLessThan(sseWrites[4]!);
    for (let i = 0; i < 5; i++) expect(r.chunkTimes[i]! - sseWrites[i]!).toBeLessThan(100);
    expect(r.headers['content-type']).toBe('text/event-stream');
  });

  it('a 20 MB binary request body and a 20 MB response body pass byte-for-byte', async () => {
    const r = await send(sc.url, {
      path: `${LLM}?case=echo-sha`,
      headers: { 'content-type': 'application/octet-stream' },
      body: BIG,
    });
    expect(JSON.parse(r.body.toString())).toEqual({ sha: sha(BIG), bytes: BIG.length });
    const d = await send(sc.url, {
      path: `${LLM}?case=big`,
      body: body1,
      headers: { 'content-type': 'application/json' },
    });
    expect(d.body.length).toBe(BIG.length);
    expect(sha(d.body)).toBe(sha(BIG));
  });

  it('a chunked upload arrives whole, still chunked, without a content-length', async () => {
    const pieces = ['{"model":"m",', '"messages":[{"role":"user",', '"content":"chunked hello"}]', '}'];
    const r = await send(sc.url, {
      path: `${LLM}?case=echo-sha`,
      headers: { 'content-type': 'application/json' },
      chunks: pieces,
    });
    const seen = up.seen.at(-1)!;
    expect(seen.headers['transfer-encoding']).toBe('chunked');
    expect(seen.headers['content-length']).toBeUndefined();
    expect(seen.body.toString()).toBe(pieces.join(''));
    expect(JSON.parse(r.body.toString()).sha).toBe(sha(pieces.join('')));
  });

  it('a gzip response is passed through compressed (no decompression, same content-encoding)', async () => {
    const r = await send(sc.url, {
      path: `${LLM}?case=gzip`,
      headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip' },
      body: body1,
    });
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(sha(r.body)).toBe(sha(GZ));
  });

  it('malformed JSON and invalid UTF-8 pass unchanged both ways (the capture is excluded, not the request)', async () => {
    const before = await metricValue(sc, 'shadowplane_sidecar_captures_total', {
      outcome: 'excluded',
      reason: 'not_json',
    });
    const bad = Buffer.from('{"model": "m", "messages": [ {oops');
    const r = await send(sc.url, {
      path: `${LLM}?case=echo-sha`,
      headers: { 'content-type': 'application/json' },
      body: bad,
    });
    expect(JSON.parse(r.body.toString()).sha).toBe(sha(bad));
    const r2 = await send(sc.url, {
      path: `${LLM}?case=invalid-utf8`,
      headers: { 'content-type': 'application/json' },
      body: INVALID_UTF8,
    });
    expect(sha(up.seen.at(-1)!.body)).toBe(sha(INVALID_UTF8));
    expect(sha(r2.body)).toBe(sha(INVALID_UTF8));
    expect(
      await waitFor(
        async () =>
          (await metricValue(sc, 'shadowplane_sidecar_captures_total', { outcome: 'excluded', reason: 'not_json' })) >=
          before + 2,
      ),
    ).toBe(true);
  });

  it('an empty request body and an empty 204 response stay empty', async () => {
    const r = await send(sc.url, { path: `${LLM}?case=empty`, body: '' });
    const seen = up.seen.at(-1)!;
    expect(seen.body.length).toBe(0);
    expect(seen.headers['content-length']).toBe('0');
    expect(r.status).toBe(204);
    expect(r.body.length).toBe(0);
    expect(r.headers['x-empty']).toBe('yes');
  });

  it('HEAD: the upstream content-length is relayed and no body is sent', async () => {
    const r = await send(sc.url, { method: 'HEAD', path: `${LLM}?case=head` });
    expect(up.seen.at(-1)!.method).toBe('HEAD');
    expect(r.status).toBe(200);
    expect(r.headers['content-length']).toBe('1234');
    expect(r.headers['x-head']).toBe('yes');
    expect(r.body.length).toBe(0);
    expect(r.headers['x-shadow-capture']).toBe('not_sampled');
  });

  it('4xx and 5xx from the upstream are relayed with their status, headers and body', async () => {
    const a = await send(sc.url, {
      path: `${LLM}?case=418`,
      headers: { 'content-type': 'application/json' },
      body: body1,
    });
    expect(a.status).toBe(418);
    expect(sha(a.body)).toBe(sha(upstreamSent.get('418')!));
    const b = await send(sc.url, {
      path: `${LLM}?case=503`,
      headers: { 'content-type': 'application/json' },
      body: body1,
    });
    expect(b.status).toBe(503);
    expect(b.headers['retry-after']).toBe('7');
    expect(b.body.toString()).toBe('upstream overloaded\n');
  });

  it('an upstream that closes mid-body (content-length) gives the client the same cut: 500 of 1000 bytes, no clean end', async () => {
    const r = await send(sc.url, {
      path: `${LLM}?case=cut-length`,
      headers: { 'content-type': 'application/json' },
      body: body1,
    });
    expect(r.headers['content-length']).toBe('1000');
    expect(r.body.length).toBe(500);
    expect(r.complete).toBe(false);
  });

  it('an upstream that closes a chunked SSE stream mid-way: the client gets the events so far and a cut, not a terminated stream', async () => {
    const r = await send(sc.url, {
      path: `${LLM}?case=cut-chunked`,
      headers: { 'content-type': 'application/json' },
      body: body1,
    });
    expect(r.body.toString()).toBe('data: {"i":0}\n\ndata: {"i":1}\n\n');
    expect(r.complete).toBe(false);
    expect(
      await waitFor(
        async () => (await metricValue(sc, 'shadowplane_sidecar_requests_total', { outcome: 'upstream_cut' })) >= 2,
      ),
    ).toBe(true);
  });

  it('a client abort mid-stream aborts the upstream call', async () => {
    const r = await send(sc.url, {
      path: `${LLM}?case=hang-stream`,
      headers: { 'content-type': 'application/json' },
      body: body1,
      abortAfterBytes: 5,
    });
    expect(r.complete).toBe(false);
    const seen = up.seen.at(-1)!;
    expect(await waitFor(() => seen.aborted, 3000)).toBe(true);
  });

  it('an upstream that resets every connection → 502 upstream_unavailable JSON; a silent one → 504 upstream_timeout', async () => {
    // resets rather than a closed port: a port given back can be taken by a test running alongside
    const dead = createServer((s) => s.resetAndDestroy());
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', () => r()));
    const port = (dead.address() as { port: number }).port;
    const sc502 = await startTestSidecar(
      testConfig(`http://127.0.0.1:${port}`, sharedNatsUrl(), randomPrefix('sct'), [], {
        SHADOWPLANE_SIDECAR_HEADERS_TIMEOUT_MS: '5000',
      }),
    );
    const silent = createServer(() => undefined); // accepts, never answers
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const sc504 = await startTestSidecar(
      testConfig(
        `http://127.0.0.1:${(silent.address() as { port: number }).port}`,
        sharedNatsUrl(),
        randomPrefix('sct'),
        [],
        { SHADOWPLANE_SIDECAR_HEADERS_TIMEOUT_MS: '300' },
      ),
    );
    try {
      const a = await send(sc502.url, { path: LLM, body: body1, headers: { 'content-type': 'application/json' } });
      expect(a.status).toBe(502);
      expect(JSON.parse(a.body.toString()).error.code).toBe('upstream_unavailable');
      const b = await send(sc504.url, { path: LLM, body: body1, headers: { 'content-type': 'application/json' } });
      expect(b.status).toBe(504);
      expect(JSON.parse(b.body.toString()).error.code).toBe('upstream_timeout');
    } finally {
      await sc502.stop();
      await sc504.stop();
      silent.close();
      dead.close();
    }
  });
});
