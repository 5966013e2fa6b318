import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SIM_CONFIG, startProviderSim } from './index.js';

// Bad requests get the provider's own 4xx shape naming the parameter, never a lenient 200:
// a sim that accepts what the real API refuses lets a client bug pass tests.

type Sim = Awaited<ReturnType<typeof startProviderSim>>;
let sim: Sim;
beforeAll(async () => {
  sim = await startProviderSim({ config: { ...DEFAULT_SIM_CONFIG, latency_scale: 0 }, seed: 7, datasetPath: '' });
});
afterAll(async () => sim.close());

const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const r = await fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: r.status, body: (await r.json()) as Record<string, any> };
};
const msgs = [{ role: 'user', content: 'hi' }];

describe('provider-sim refuses wrongly typed parameters like the real APIs', () => {
  it('OpenAI chat: stream "yes", stream_options "x", max_tokens 1.5 / "5" → 400 invalid_type naming the param', async () => {
    for (const [param, extra] of [
      ['stream', { stream: 'yes' }],
      ['stream_options', { stream: true, stream_options: 'x' }],
      ['max_tokens', { max_tokens: 1.5 }],
      ['max_completion_tokens', { max_completion_tokens: '5' }],
    ] as const) {
      const r = await post('/v1/chat/completions', { model: 'sim-small', messages: msgs, ...extra });
      expect(r.status, param).toBe(400);
      expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param, code: 'invalid_type' });
    }
    for (const path of ['/api/v1/chat/completions']) {
      const r = await post(path, { model: 'sim-small', messages: msgs, stream: 1 });
      expect(r.status).toBe(400);
    }
  });

  it('Responses and Anthropic: wrong stream / max tokens types → 400 in their shapes', async () => {
    const r1 = await post('/v1/responses', { model: 'sim-small', input: 'hi', stream: 'true' });
    expect(r1.status).toBe(400);
    expect(r1.body.error).toMatchObject({ param: 'stream', code: 'invalid_type' });
    const r2 = await post('/v1/responses', { model: 'sim-small', input: 'hi', max_output_tokens: 2.5 });
    expect(r2.status).toBe(400);
    const r3 = await post('/v1/messages', { model: 'sim-small', max_tokens: 16, messages: msgs, stream: 'yes' });
    expect(r3.status).toBe(400);
    expect(r3.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(r3.body.error.message).toContain('stream');
  });

  it('a malformed x-sim-fault-after-ms → 400 naming the header, not silently no delay', async () => {
    for (const v of ['-5', '1e400', 'soon', '99999999999']) {
      const r = await post(
        '/v1/chat/completions',
        { model: 'sim-small', messages: msgs },
        { 'x-sim-fault': 'server_error', 'x-sim-fault-after-ms': v },
      );
      expect(r.status, v).toBe(400);
      expect(JSON.stringify(r.body)).toContain('x-sim-fault-after-ms');
    }
    const ok = await post(
      '/v1/chat/completions',
      { model: 'sim-small', messages: msgs },
      { 'x-sim-fault': 'server_error', 'x-sim-fault-after-ms': '0' },
    );
    expect(ok.status).toBe(500);
  });

  it('valid booleans and integers (and null) still pass', async () => {
    const r = await post('/v1/chat/completions', {
      model: 'sim-small',
      messages: msgs,
      stream: false,
      max_tokens: 8,
      stream_options: null,
    });
    expect(r.status).toBe(200);
  });
});
