import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { itemHash } from '@shadowplane/contracts';
import { DEFAULT_SIM_CONFIG, startProviderSim, type ProviderSim, type SimCall } from './index.js';
import { main } from './main.js';

const post = (url: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('sim control endpoints', () => {
  let sim: ProviderSim;
  beforeAll(async () => {
    sim = await startProviderSim({ config: { ...DEFAULT_SIM_CONFIG, latency_scale: 0, require_auth: true } });
  });
  afterAll(() => sim.close());

  it('logs every call with its request hash, newest last; ?since filters; reset clears', async () => {
    const body = { model: 'sim-large', messages: [{ role: 'user', content: 'hi' }] };
    expect((await post(sim.url, '/v1/chat/completions', body, { authorization: 'Bearer sk-x' })).status).toBe(200);
    // status and end time are in the log as soon as the response is written, not only on socket close
    expect(sim.calls().at(-1)).toMatchObject({ seq: 1, status: 200 });
    expect(sim.calls().at(-1)!.endedAtMs).not.toBeNull();
    expect((await post(sim.url, '/v1/messages', { ...body, max_tokens: 5 }, { 'x-api-key': 'k' })).status).toBe(200);
    expect(
      (await post(sim.url, '/v1/chat/completions', { ...body, model: 'nope' }, { authorization: 'Bearer sk-x' }))
        .status,
    ).toBe(404);
    const noAuth = await post(sim.url, '/v1/chat/completions', body);
    expect(noAuth.status).toBe(401);
    const calls = (await (await fetch(`${sim.url}/sim/calls`)).json()) as SimCall[];
    expect(calls.map((c) => [c.seq, c.api, c.model, c.status, c.authPresent])).toEqual([
      [1, 'openai.chat', 'sim-large', 200, true],
      [2, 'anthropic.messages', 'sim-large', 200, true],
      [3, 'openai.chat', 'nope', 404, true],
      [4, 'openai.chat', '', 401, false],
    ]);
    expect(calls[0]!.requestHash).toBe(itemHash('openai.chat', '/v1/chat/completions', body));
    expect(calls[0]!.endedAtMs).toBeGreaterThanOrEqual(calls[0]!.startedAtMs);
    const since = (await (await fetch(`${sim.url}/sim/calls?since=2`)).json()) as SimCall[];
    expect(since.map((c) => c.seq)).toEqual([3, 4]);
    expect(sim.calls()).toHaveLength(4);
    expect((await fetch(`${sim.url}/sim/reset`, { method: 'POST' })).status).toBe(200);
    expect(sim.calls()).toHaveLength(0);
  });

  it('exposes Prometheus metrics by model, api, status and fault', async () => {
    await post(
      sim.url,
      '/v1/chat/completions',
      { model: 'sim-small', messages: [{ role: 'user', content: 'x' }] },
      { authorization: 'Bearer k', 'x-sim-fault': 'server_error' },
    );
    const text = await (await fetch(`${sim.url}/metrics`)).text();
    expect(text).toMatch(
      /shadowplane_provider_sim_requests_total\{model="sim-small",api="openai.chat",status="500",fault="server_error"\} 1/,
    );
    expect(text).toMatch(
      /shadowplane_provider_sim_requests_total\{model="sim-large",api="openai.chat",status="200",fault="none"\} 1/,
    );
    expect(text).toContain('shadowplane_provider_sim_tokens_total{model="sim-large",kind="output"}');
    expect(text).toContain('shadowplane_provider_sim_request_duration_seconds_bucket');
  });

  it('lists models in the OpenAI shape, or the Anthropic shape when anthropic-version is sent; healthz is ok', async () => {
    const oa = (await (await fetch(`${sim.url}/v1/models`)).json()) as { object: string; data: { id: string }[] };
    expect(oa.object).toBe('list');
    expect(oa.data.map((m) => m.id)).toEqual(['sim-large', 'sim-medium', 'sim-small']);
    const an = (await (
      await fetch(`${sim.url}/v1/models`, { headers: { 'anthropic-version': '2023-06-01' } })
    ).json()) as { data: { type: string }[]; has_more: boolean };
    expect(an.data[0]!.type).toBe('model');
    expect(an.has_more).toBe(false);
    expect((await fetch(`${sim.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${sim.url}/nope`)).status).toBe(404);
  });

  it('rejects requests the provider would reject, in its own error shape', async () => {
    const h = { authorization: 'Bearer k' };
    const noMax = await post(
      sim.url,
      '/v1/messages',
      { model: 'sim-large', messages: [{ role: 'user', content: 'x' }] },
      h,
    );
    expect(noMax.status).toBe(400);
    expect(await noMax.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'max_tokens: Field required' },
    });
    const badJson = await fetch(`${sim.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...h, 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(badJson.status).toBe(400);
    expect(((await badJson.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
    const tooLong = await post(
      sim.url,
      '/v1/chat/completions',
      { model: 'sim-small', max_tokens: 100_000, messages: [{ role: 'user', content: 'x' }] },
      h,
    );
    expect(tooLong.status).toBe(400);
    const prev = await post(
      sim.url,
      '/v1/responses',
      { model: 'sim-small', input: 'x', previous_response_id: 'resp_1' },
      h,
    );
    expect(prev.status).toBe(400);
  });

  it('honours an OpenRouter provider pin, and 404s a pin it cannot serve without fallbacks', async () => {
    const h = { authorization: 'Bearer k' };
    const pinned = await post(
      sim.url,
      '/api/v1/chat/completions',
      {
        model: 'sim-large',
        provider: { order: ['SimEdge'], allow_fallbacks: false },
        messages: [{ role: 'user', content: 'x' }],
      },
      h,
    );
    expect(((await pinned.json()) as { provider: string }).provider).toBe('SimEdge');
    const impossible = await post(
      sim.url,
      '/api/v1/chat/completions',
      {
        model: 'sim-small',
        provider: { order: ['SimCloud'], allow_fallbacks: false },
        messages: [{ role: 'user', content: 'x' }],
      },
      h,
    );
    expect(impossible.status).toBe(404);
  });

  it('emits a tool call when tools are offered and the prompt says to use the tool', async () => {
    const h = { authorization: 'Bearer k' };
    const tools = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } },
        },
      },
    ];
    const r = (await (
      await post(
        sim.url,
        '/v1/chat/completions',
        { model: 'sim-large', tools, messages: [{ role: 'user', content: 'Please use the tool get_weather.' }] },
        h,
      )
    ).json()) as {
      choices: {
        finish_reason: string;
        message: { tool_calls: { function: { name: string; arguments: string } }[] };
      }[];
    };
    expect(r.choices[0]!.finish_reason).toBe('tool_calls');
    expect(r.choices[0]!.message.tool_calls[0]!.function).toEqual({
      name: 'get_weather',
      arguments: '{"city":"sim","days":1}',
    });
  });
});

describe('shadowplane provider-sim (main)', () => {
  it('exits 78 naming the key when the config file is invalid', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sim-cfg-'));
    const file = join(dir, 'sim.yaml');
    writeFileSync(file, 'models:\n  m:\n    accuracy: 2\n    prices: { input: 1, cached_input: 1, output: 1 }\n');
    const errs: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
      errs.push(String(s));
      return true;
    });
    try {
      expect(await main(['--config', file, '--listen', '127.0.0.1:0'])).toBe(78);
      expect(await main(['--seed', 'abc'])).toBe(78);
      expect(await main(['--listen', 'nonsense'])).toBe(78);
      expect(await main(['--bogus'])).toBe(64);
    } finally {
      spy.mockRestore();
    }
    expect(errs.join('')).toContain('config:models.m.accuracy');
    expect(errs.join('')).toContain('--seed / SHADOWPLANE_SIM_SEED');
    expect(errs.join('')).toContain('--listen / SHADOWPLANE_SIM_LISTEN');
  });

  it('runs as a process: prints the listening URL as JSON, serves, and exits 0 on SIGTERM', async () => {
    const bin = fileURLToPath(new URL('../../shadowplane/bin/shadowplane.mjs', import.meta.url));
    const child = spawn(process.execPath, [bin, 'provider-sim', '--listen', '127.0.0.1:0', '--seed', '3'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SHADOWPLANE_SIM_LATENCY_SCALE: '0' },
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        const rl = createInterface({ input: child.stdout! });
        rl.once('line', resolve);
        child.once('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      const ev = JSON.parse(line) as { event: string; url: string };
      expect(ev.event).toBe('listening');
      const r = await post(ev.url, '/v1/chat/completions', {
        model: 'sim-medium',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(r.status).toBe(200);
      const code = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      child.kill('SIGTERM');
      expect(await code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 90_000);
});
