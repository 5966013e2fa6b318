import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { classifyError, createResponseParser, retryAfterSeconds } from '@shadowplane/providers';
import type { Api } from '@shadowplane/contracts';
import { DEFAULT_SIM_CONFIG, startProviderSim, type ProviderSim, type SimConfigInput } from './index.js';

const FIX = fileURLToPath(new URL('../../../test/fixtures/providers/', import.meta.url));
const fixtureJson = (p: string) => JSON.parse(readFileSync(FIX + p, 'utf8')) as unknown;
const fixtureHeaders = (p: string) =>
  new Map(
    (JSON.parse(readFileSync(FIX + p, 'utf8')) as { headers: [string, string][] }).headers.map(([k, v]) => [
      k.toLowerCase(),
      v,
    ]),
  );

/** The shape of a JSON value: object keys (sorted, recursively) and leaf types; strings/numbers collapse. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shape);
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, shape((v as Record<string, unknown>)[k])]),
    );
  return v === null ? null : typeof v;
}

interface Raw {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** ms from request start to headers, and arrival times (ms from start) of each body chunk */
  headersAtMs: number;
  chunkAtMs: number[];
  /** the connection ended before the body was complete */
  aborted: boolean;
}

/** POSTs with node:http and records raw bytes, chunk timings and whether the response was cut. */
function rawPost(
  url: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  abortAfterMs?: number,
): Promise<Raw | 'no-response'> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const data = JSON.stringify(body);
    const req = httpRequest(
      url + path,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...headers },
      },
      (res) => {
        const out: Raw = {
          status: res.statusCode ?? 0,
          headers: res.headers as Record<string, string>,
          body: Buffer.alloc(0),
          headersAtMs: performance.now() - t0,
          chunkAtMs: [],
          aborted: false,
        };
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          out.chunkAtMs.push(performance.now() - t0);
        });
        const finish = () => {
          out.body = Buffer.concat(chunks);
          resolve(out);
        };
        res.on('aborted', () => (out.aborted = true));
        res.on('error', () => {
          out.aborted = true;
          finish();
        });
        res.on('end', finish);
      },
    );
    req.on('error', (e) => (abortAfterMs !== undefined ? resolve('no-response') : reject(e)));
    if (abortAfterMs !== undefined) setTimeout(() => req.destroy(), abortAfterMs);
    req.end(data);
  });
}

const BODY: Record<Api, { path: string; body: Record<string, unknown> }> = {
  'openai.chat': {
    path: '/v1/chat/completions',
    body: { model: 'sim-medium', messages: [{ role: 'user', content: 'Hello there, write a paragraph.' }] },
  },
  'openai.responses': {
    path: '/v1/responses',
    body: { model: 'sim-medium', input: 'Hello there, write a paragraph.' },
  },
  'anthropic.messages': {
    path: '/v1/messages',
    body: {
      model: 'sim-medium',
      max_tokens: 300,
      messages: [{ role: 'user', content: 'Hello there, write a paragraph.' }],
    },
  },
  'openrouter.chat': {
    path: '/api/v1/chat/completions',
    body: { model: 'sim-medium', messages: [{ role: 'user', content: 'Hello there, write a paragraph.' }] },
  },
};
const APIS = Object.keys(BODY) as Api[];

function classify(api: Api, r: Raw) {
  const p = createResponseParser(api, { status: r.status, headers: r.headers });
  p.push(r.body);
  return p.end();
}

let sim: ProviderSim;
beforeAll(async () => {
  sim = await startProviderSim({ config: { ...DEFAULT_SIM_CONFIG, latency_scale: 0 } });
});
afterAll(() => sim.close());

describe('faults by header, shaped like each real provider', () => {
  it('rate_limit: OpenAI 429 with retry-after and the recorded rate_limit_exceeded body shape', async () => {
    const r = (await rawPost(sim.url, BODY['openai.chat'].path, BODY['openai.chat'].body, {
      'x-sim-fault': 'rate_limit',
    })) as Raw;
    expect(r.status).toBe(429);
    expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(r.headers['x-ratelimit-remaining-requests']).toBeDefined();
    const body = JSON.parse(r.body.toString()) as { error: { code: string } };
    expect(shape(body)).toEqual(shape(fixtureJson('openai/error-429-rate-limit-tokens.json')));
    expect(body.error.code).toBe('rate_limit_exceeded');
    const c = classifyError(r.status, r.headers, r.body.toString());
    expect(c.errorClass).toBe('rate_limited');
    expect(retryAfterSeconds(r.headers)).toBeGreaterThan(0);
  });

  it('rate_limit: Anthropic 429 rate_limit_error with retry-after, x-should-retry and ratelimit headers', async () => {
    const r = (await rawPost(sim.url, BODY['anthropic.messages'].path, BODY['anthropic.messages'].body, {
      'x-sim-fault': 'rate_limit',
    })) as Raw;
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('1');
    expect(r.headers['x-should-retry']).toBe(
      fixtureHeaders('anthropic/error-429-headers-only.headers.json').get('x-should-retry'),
    );
    expect(r.headers['anthropic-ratelimit-requests-remaining']).toBeDefined();
    const body = JSON.parse(r.body.toString()) as { type: string; error: { type: string }; request_id: string };
    const fx = fixtureJson('anthropic/error-429-rate-limit.json') as { type: string; error: { type: string } };
    expect(body.type).toBe(fx.type);
    expect(body.error.type).toBe(fx.error.type);
    expect(shape(body.error)).toEqual(shape(fx.error));
    expect(r.headers['request-id']).toBe(body.request_id);
    expect(classifyError(r.status, r.headers, r.body.toString()).errorClass).toBe('rate_limited');
  });

  it('rate_limit: OpenRouter 429 in the recorded upstream-rate-limited shape', async () => {
    const r = (await rawPost(sim.url, BODY['openrouter.chat'].path, BODY['openrouter.chat'].body, {
      'x-sim-fault': 'rate_limit',
    })) as Raw;
    expect(r.status).toBe(429);
    expect(shape(JSON.parse(r.body.toString()))).toEqual(
      shape(fixtureJson('openrouter/error-429-upstream-rate-limited.json')),
    );
    expect(classifyError(r.status, r.headers, r.body.toString()).errorClass).toBe('rate_limited');
  });

  it('server_error: OpenAI 500 server_error and Anthropic 500 api_error in the recorded shapes', async () => {
    const o = (await rawPost(sim.url, BODY['openai.chat'].path, BODY['openai.chat'].body, {
      'x-sim-fault': 'server_error',
    })) as Raw;
    expect(o.status).toBe(500);
    const ob = JSON.parse(o.body.toString()) as { error: { type: string; message: string } };
    expect(shape(ob)).toEqual(shape(fixtureJson('openai/error-500-server-error.json')));
    expect(ob.error.type).toBe('server_error');
    expect(ob.error.message).toContain(o.headers['x-request-id']);
    expect(classifyError(o.status, o.headers, o.body.toString()).errorClass).toBe('upstream_5xx');
    const a = (await rawPost(sim.url, BODY['anthropic.messages'].path, BODY['anthropic.messages'].body, {
      'x-sim-fault': 'server_error',
    })) as Raw;
    expect(a.status).toBe(500);
    const ab = JSON.parse(a.body.toString()) as { error: { type: string }; request_id: string };
    expect(Object.keys(ab).sort()).toEqual(
      Object.keys(fixtureJson('anthropic/error-500-api-error.json') as object).sort(),
    );
    expect(ab.error.type).toBe('api_error');
    expect(classifyError(a.status, a.headers, a.body.toString()).errorClass).toBe('upstream_5xx');
  });

  it('overloaded: Anthropic 529 is byte-identical to the recorded body, with its headers', async () => {
    const r = (await rawPost(sim.url, BODY['anthropic.messages'].path, BODY['anthropic.messages'].body, {
      'x-sim-fault': 'overloaded',
    })) as Raw;
    expect(r.status).toBe(529);
    expect(r.body.toString()).toBe(readFileSync(FIX + 'anthropic/error-529-overloaded.json', 'utf8').trim());
    const fh = fixtureHeaders('anthropic/error-529-overloaded.headers.json');
    for (const h of ['x-should-retry', 'cache-control', 'content-length', 'content-type'])
      expect(r.headers[h]).toBe(fh.get(h));
    expect(r.headers['request-id']).toMatch(/^req_/);
    expect(classifyError(r.status, r.headers, r.body.toString()).errorClass).toBe('overloaded');
  });

  it('the official SDKs surface the injected errors as their typed errors', async () => {
    const openai = new OpenAI({ apiKey: 'k', baseURL: `${sim.url}/v1`, maxRetries: 0 });
    const e1 = await openai.chat.completions
      .create(
        { model: 'sim-large', messages: [{ role: 'user', content: 'x' }] },
        { headers: { 'x-sim-fault': 'rate_limit' } },
      )
      .catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(OpenAI.RateLimitError);
    expect((e1 as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('1');
    const anthropic = new Anthropic({ apiKey: 'k', baseURL: sim.url, maxRetries: 0 });
    const e2 = await anthropic.messages
      .create(
        { model: 'sim-large', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] },
        { headers: { 'x-sim-fault': 'overloaded' } },
      )
      .catch((e: unknown) => e);
    expect(e2).toBeInstanceOf(Anthropic.APIError);
    expect((e2 as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
  });

  it('hang: no byte before x-sim-fault-after-ms, then a normal response', async () => {
    const r = (await rawPost(sim.url, BODY['openai.chat'].path, BODY['openai.chat'].body, {
      'x-sim-fault': 'hang',
      'x-sim-fault-after-ms': '400',
    })) as Raw;
    expect(r.headersAtMs).toBeGreaterThanOrEqual(390);
    expect(r.status).toBe(200);
    expect(classify('openai.chat', r).errorClass).toBeNull();
  });

  it('hang without a limit: the client gives up with no response; the call log shows status 0', async () => {
    const before = sim.calls().length;
    const r = await rawPost(
      sim.url,
      BODY['anthropic.messages'].path,
      BODY['anthropic.messages'].body,
      { 'x-sim-fault': 'hang' },
      300,
    );
    expect(r).toBe('no-response');
    await new Promise((res) => setTimeout(res, 50));
    const call = sim.calls()[before]!;
    expect(call.fault).toBe('hang');
    expect(call.status).toBe(0);
    expect(call.endedAtMs).not.toBeNull();
  });

  for (const api of APIS) {
    it(`stall (${api}): the stream pauses mid-way for x-sim-fault-after-ms, then completes`, async () => {
      const r = (await rawPost(
        sim.url,
        BODY[api].path,
        { ...BODY[api].body, stream: true },
        { 'x-sim-fault': 'stall', 'x-sim-fault-after-ms': '400' },
      )) as Raw;
      expect(r.status).toBe(200);
      // the server sleeps 400 ms after the first half: the end comes ≥ 400 ms after the start,
      // and (loosely, the machine may be loaded) well after the first bytes
      expect(r.chunkAtMs.at(-1)!).toBeGreaterThanOrEqual(395);
      const gaps = r.chunkAtMs.slice(1).map((t, i) => t - r.chunkAtMs[i]!);
      expect(Math.max(...gaps)).toBeGreaterThanOrEqual(150);
      expect(r.aborted).toBe(false);
      const parsed = classify(api, r);
      expect(parsed.complete).toBe(true);
      expect(parsed.errorClass).toBeNull();
    });

    it(`cut (${api}): the stream ends mid-way without usage or terminal event`, async () => {
      const r = (await rawPost(
        sim.url,
        BODY[api].path,
        {
          ...BODY[api].body,
          stream: true,
          stream_options: api === 'openai.chat' ? { include_usage: true } : undefined,
        },
        { 'x-sim-fault': 'cut' },
      )) as Raw;
      expect(r.status).toBe(200);
      expect(r.aborted).toBe(true);
      const text = r.body.toString();
      expect(text).not.toContain('[DONE]');
      expect(text).not.toContain('message_stop');
      expect(text).not.toContain('response.completed');
      const parsed = classify(api, r);
      expect(parsed.errorClass).toBe('stream_cut');
      expect(parsed.usage.output_tokens).toBeNull();
    });

    it(`malformed (${api}): a 200 whose JSON body cannot be parsed`, async () => {
      const r = (await rawPost(sim.url, BODY[api].path, BODY[api].body, { 'x-sim-fault': 'malformed' })) as Raw;
      expect(r.status).toBe(200);
      expect(() => JSON.parse(r.body.toString())).toThrow();
      expect(classify(api, r).errorClass).toBe('malformed_response');
    });
  }

  it('malformed stream: one event is not valid JSON; the stream still terminates', async () => {
    const r = (await rawPost(
      sim.url,
      BODY['openai.chat'].path,
      { ...BODY['openai.chat'].body, stream: true },
      { 'x-sim-fault': 'malformed' },
    )) as Raw;
    expect(r.body.toString()).toContain('data: [DONE]');
    expect(classify('openai.chat', r).errorClass).toBe('malformed_response');
  });

  it('cut non-stream: the connection closes before content-length bytes arrive', async () => {
    const r = (await rawPost(sim.url, BODY['openai.chat'].path, BODY['openai.chat'].body, {
      'x-sim-fault': 'cut',
    })) as Raw;
    expect(r.aborted).toBe(true);
    expect(r.body.length).toBeLessThan(Number(r.headers['content-length']));
  });

  it('an unknown x-sim-fault value is a 400 naming the header', async () => {
    const r = (await rawPost(sim.url, BODY['openai.chat'].path, BODY['openai.chat'].body, {
      'x-sim-fault': 'gremlins',
    })) as Raw;
    expect(r.status).toBe(400);
    expect((JSON.parse(r.body.toString()) as { error: { param: string } }).error.param).toBe('x-sim-fault');
  });
});

describe('faults by rate and rate-limit enforcement', () => {
  const faulty: SimConfigInput = {
    ...DEFAULT_SIM_CONFIG,
    latency_scale: 0,
    models: {
      'sim-x': {
        accuracy: 0.5,
        prices: { input: 1, cached_input: 0.5, output: 2 },
        faults: { server_error: 0.2, overloaded: 0.1 },
      },
    },
  };

  async function statuses(seed: number): Promise<number[]> {
    const s = await startProviderSim({ config: faulty, seed });
    try {
      const out: number[] = [];
      for (let i = 0; i < 300; i++)
        out.push(
          (
            (await rawPost(s.url, '/v1/messages', {
              model: 'sim-x',
              max_tokens: 20,
              messages: [{ role: 'user', content: `q${i}` }],
            })) as Raw
          ).status,
        );
      return out;
    } finally {
      await s.close();
    }
  }

  it('injects faults at the configured rates, the same sequence under the same seed', async () => {
    const a = await statuses(5);
    const b = await statuses(5);
    expect(b).toEqual(a);
    const share = (s: number) => a.filter((x) => x === s).length / a.length;
    expect(share(500)).toBeGreaterThan(0.12);
    expect(share(500)).toBeLessThan(0.28);
    expect(share(529)).toBeGreaterThan(0.04);
    expect(share(529)).toBeLessThan(0.16);
  }, 120_000);

  it('enforces RPM over the sliding window with 429 + retry-after and counts remaining requests down', async () => {
    const s = await startProviderSim({
      config: {
        ...faulty,
        rate_limit_window_ms: 1000,
        models: {
          'sim-x': {
            accuracy: 0.5,
            prices: { input: 1, cached_input: 0.5, output: 2 },
            rate_limits: { rpm: 3, tpm: 1_000_000 },
          },
        },
      },
    });
    try {
      const call = () =>
        rawPost(s.url, '/v1/chat/completions', {
          model: 'sim-x',
          messages: [{ role: 'user', content: 'hi' }],
        }) as Promise<Raw>;
      const rs = [await call(), await call(), await call()];
      expect(rs.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(rs.map((r) => r.headers['x-ratelimit-remaining-requests'])).toEqual(['2', '1', '0']);
      const limited = await call();
      expect(limited.status).toBe(429);
      expect(limited.headers['retry-after']).toBe('1');
      const waitMs = Number(limited.headers['retry-after-ms']);
      expect(waitMs).toBeGreaterThan(0);
      expect(waitMs).toBeLessThanOrEqual(1000);
      expect((JSON.parse(limited.body.toString()) as { error: { type: string } }).error.type).toBe('requests');
      await new Promise((res) => setTimeout(res, waitMs + 30));
      expect((await call()).status).toBe(200);
      expect(s.calls().filter((c) => c.fault === 'rate_limit')).toHaveLength(1);
    } finally {
      await s.close();
    }
  });

  it('enforces TPM: a request that does not fit gets 429 with type tokens (Anthropic: rate_limit_error)', async () => {
    const s = await startProviderSim({
      config: {
        ...faulty,
        rate_limit_window_ms: 60_000,
        models: {
          'sim-x': {
            accuracy: 0.5,
            prices: { input: 1, cached_input: 0.5, output: 2 },
            rate_limits: { rpm: 100, tpm: 300 },
          },
        },
      },
    });
    try {
      const first = (await rawPost(s.url, '/v1/messages', {
        model: 'sim-x',
        max_tokens: 250,
        messages: [{ role: 'user', content: 'hi' }],
      })) as Raw;
      expect(first.status).toBe(200);
      expect(Number(first.headers['anthropic-ratelimit-tokens-remaining'])).toBeLessThan(300);
      const big = (await rawPost(s.url, '/v1/messages', {
        model: 'sim-x',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'word '.repeat(400) }],
      })) as Raw;
      expect(big.status).toBe(429);
      expect((JSON.parse(big.body.toString()) as { error: { type: string } }).error.type).toBe('rate_limit_error');
      expect(Number(big.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    } finally {
      await s.close();
    }
  });
});
