import { Writable } from 'node:stream';
import { Counter } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { GENAI, createLogger, createMetricsRegistry, genAiUsageAttributes, serveOps } from './index.js';

/** An in-memory pino destination: each write is one JSON line. */
function sink(): { stream: Writable; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(c: Buffer, _e, cb) {
      chunks.push(c.toString('utf8'));
      cb();
    },
  });
  return {
    stream,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('createLogger', () => {
  it('binds service and version and puts the message last', () => {
    const s = sink();
    createLogger({ service: 'sidecar', version: '1.2.3', destination: s.stream }).info({ latencyMs: 12 }, 'proxied');
    const [line] = s.lines();
    expect(line).toMatchObject({ service: 'sidecar', version: '1.2.3', latencyMs: 12, msg: 'proxied', level: 'info' });
    expect(typeof line!['time']).toBe('string');
  });

  it('redacts authorization, api-key and cookie headers and *.apiKey wherever they are logged', () => {
    const s = sink();
    const log = createLogger({ service: 't', version: '0', destination: s.stream });
    log.info(
      {
        headers: {
          authorization: 'Bearer sk-live-1',
          'x-api-key': 'sk-ant-2',
          cookie: 'sid=3',
          'content-type': 'application/json',
        },
        req: { headers: { 'api-key': 'azure-4', 'set-cookie': 'a=5' } },
        upstream: { headers: { 'proxy-authorization': 'Basic 6' } },
        provider: { id: 'openai', apiKey: 'sk-7' },
        apiKey: 'sk-8',
      },
      'request',
    );
    const text = JSON.stringify(s.lines()[0]);
    for (const secret of ['sk-live-1', 'sk-ant-2', 'sid=3', 'azure-4', 'a=5', 'Basic 6', 'sk-7', 'sk-8'])
      expect(text).not.toContain(secret);
    const line = s.lines()[0] as any;
    expect(line.headers.authorization).toBe('[REDACTED]');
    expect(line.headers['content-type']).toBe('application/json');
    expect(line.provider.id).toBe('openai');
  });

  it('serialises errors under err and honours the level', () => {
    const s = sink();
    const log = createLogger({ service: 't', version: '0', level: 'warn', destination: s.stream });
    log.info({}, 'dropped');
    log.error({ err: new Error('boom') }, 'failed');
    const lines = s.lines();
    expect(lines).toHaveLength(1);
    expect((lines[0] as any).err.message).toBe('boom');
  });
});

describe('createMetricsRegistry', () => {
  it('keeps the standard process_* and nodejs_* names with the role as a label, and is not the global registry', async () => {
    const r = createMetricsRegistry({ role: 'sidecar' });
    new Counter({ name: 'shadowplane_test_things_total', help: 'things', registers: [r] }).inc(2);
    const text = await r.metrics();
    expect(text).toMatch(/^process_cpu_user_seconds_total\{role="sidecar"\} /m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes\{role="sidecar"\} /m);
    expect(text).not.toContain('shadowplane_sidecar_process_');
    expect(text).toContain('shadowplane_test_things_total{role="sidecar"} 2');
  });
  it('can skip default metrics', async () => {
    const r = createMetricsRegistry({ defaultMetrics: false });
    expect(await r.metrics()).toBe('\n');
  });
});

describe('GENAI names', () => {
  it('spells the OpenTelemetry GenAI attributes as the semantic conventions do', () => {
    expect(GENAI.PROVIDER_NAME).toBe('gen_ai.provider.name');
    expect(GENAI.REQUEST_MODEL).toBe('gen_ai.request.model');
    expect(GENAI.RESPONSE_MODEL).toBe('gen_ai.response.model');
    expect(GENAI.USAGE_INPUT_TOKENS).toBe('gen_ai.usage.input_tokens');
    expect(GENAI.USAGE_OUTPUT_TOKENS).toBe('gen_ai.usage.output_tokens');
    expect(GENAI.USAGE_CACHE_READ_INPUT_TOKENS).toBe('gen_ai.usage.cache_read.input_tokens');
    expect(GENAI.USAGE_CACHE_CREATION_INPUT_TOKENS).toBe('gen_ai.usage.cache_creation.input_tokens');
    expect(GENAI.USAGE_REASONING_OUTPUT_TOKENS).toBe('gen_ai.usage.reasoning.output_tokens');
    expect(GENAI.SHADOWPLANE_COST_USD).toBe('shadowplane.cost.usd');
    expect(GENAI.SHADOWPLANE_COST_BASIS).toBe('shadowplane.cost.basis');
  });
  it('usage attributes leave out fields that were not reported instead of writing 0', () => {
    expect(
      genAiUsageAttributes(
        {
          input_tokens: 10,
          output_tokens: null,
          cache_read_input_tokens: 0,
          cache_creation_input_tokens: null,
          reasoning_output_tokens: null,
        },
        { usd: null, basis: null },
      ),
    ).toEqual({ 'gen_ai.usage.input_tokens': 10, 'gen_ai.usage.cache_read.input_tokens': 0 });
    expect(
      genAiUsageAttributes(
        {
          input_tokens: 1,
          output_tokens: 2,
          cache_read_input_tokens: null,
          cache_creation_input_tokens: null,
          reasoning_output_tokens: null,
        },
        { usd: 0.5, basis: 'rate_card' },
      ),
    ).toMatchObject({ 'shadowplane.cost.usd': 0.5, 'shadowplane.cost.basis': 'rate_card' });
  });
});

describe('serveOps', () => {
  it('serves /metrics, /healthz and /readyz on loopback', async () => {
    const r = createMetricsRegistry({ defaultMetrics: false });
    new Counter({ name: 'shadowplane_ops_probe_total', help: 'p', registers: [r] }).inc();
    let ready = false;
    const ops = await serveOps(r, { ready: () => ready });
    try {
      const m = await fetch(`${ops.url}/metrics`);
      expect(m.status).toBe(200);
      expect(await m.text()).toContain('shadowplane_ops_probe_total 1');
      expect((await fetch(`${ops.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${ops.url}/readyz`)).status).toBe(503);
      ready = true;
      expect((await fetch(`${ops.url}/readyz`)).status).toBe(200);
      const nf = await fetch(`${ops.url}/nope`);
      expect(nf.status).toBe(404);
      expect(await nf.json()).toEqual({ error: { code: 'not_found', message: 'No such resource.' } });
    } finally {
      await ops.close();
    }
  });
});
