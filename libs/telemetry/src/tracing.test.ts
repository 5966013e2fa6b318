import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  GENAI,
  ROOT_CONTEXT,
  createLogger,
  endGenAiSpan,
  inSpan,
  linkFromTraceContext,
  startGenAiSpan,
  startTracing,
  tracingEnabled,
} from './index.js';

/** A loopback OTLP/HTTP receiver that keeps every request (path, content type, body). */
async function receiver(): Promise<{
  url: string;
  got: Array<{ path: string; type: string; body: Buffer }>;
  server: Server;
}> {
  const got: Array<{ path: string; type: string; body: Buffer }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ path: req.url ?? '', type: String(req.headers['content-type']), body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, got, server };
}

const OTEL_KEYS = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_SERVICE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_TRACES_SAMPLER',
  'OTEL_SDK_DISABLED',
  'SHADOWPLANE_OTLP_ENDPOINT',
];
const saved = Object.fromEntries(OTEL_KEYS.map((k) => [k, process.env[k]]));
const servers: Server[] = [];
afterEach(() => {
  for (const k of OTEL_KEYS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});
afterAll(() => servers.forEach((s) => s.close()));

type OtlpJson = {
  resourceSpans: Array<{
    resource: { attributes: Array<{ key: string; value: Record<string, unknown> }> };
    scopeSpans: Array<{
      spans: Array<{
        name: string;
        kind: number;
        traceId: string;
        parentSpanId?: string;
        links?: Array<{ traceId: string; spanId: string }>;
        attributes: Array<{ key: string; value: Record<string, unknown> }>;
      }>;
    }>;
  }>;
};
const attrs = (list: Array<{ key: string; value: Record<string, unknown> }>) =>
  Object.fromEntries(list.map((a) => [a.key, Object.values(a.value)[0]]));

describe('startTracing', () => {
  it('is off without an OTLP endpoint, registers nothing and hands out no-op spans', async () => {
    const t = startTracing({ serviceName: 'x', env: {} });
    expect(t).toMatchObject({ enabled: false, disabledReason: 'no_endpoint' });
    expect(tracingEnabled()).toBe(false);
    const s = t.tracer.startSpan('noop');
    expect(s.isRecording()).toBe(false);
    s.end();
    await t.shutdown();
  });

  it('stays off when OTEL_SDK_DISABLED=true even with an endpoint', () => {
    const t = startTracing({
      serviceName: 'x',
      env: { OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1' },
    });
    expect(t).toMatchObject({ enabled: false, disabledReason: 'sdk_disabled' });
  });

  it('exports http/json to OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces with OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES on the resource', async () => {
    const rx = await receiver();
    servers.push(rx.server);
    Object.assign(process.env, {
      OTEL_EXPORTER_OTLP_ENDPOINT: rx.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'dup-east',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test,team=ml-platform',
    });
    const t = startTracing({ serviceName: 'shadowplane-duplicator', role: 'duplicator', serviceVersion: '9.9.9' });
    expect(t.enabled).toBe(true);
    expect(tracingEnabled()).toBe(true);
    const link = linkFromTraceContext({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
    await inSpan('shadowplane.item', { parent: ROOT_CONTEXT, links: link ? [link] : [] }, async () => {
      const s = startGenAiSpan({
        operation: 'chat',
        providerName: 'openai',
        requestModel: 'gpt-4o-mini',
        stream: true,
      });
      endGenAiSpan(s, {
        responseModel: 'gpt-4o-mini-2024-07-18',
        responseId: 'chatcmpl-1',
        finishReasons: ['stop'],
        usage: {
          input_tokens: 12,
          output_tokens: 5,
          cache_read_input_tokens: 0,
          cache_creation_input_tokens: null,
          reasoning_output_tokens: null,
        },
        cost: { usd: 0.0000048, basis: 'rate_card' },
        errorType: null,
        httpStatus: 200,
        ttftSeconds: 0.12,
      });
    });
    await t.shutdown();
    expect(tracingEnabled()).toBe(false);
    const traces = rx.got.filter((g) => g.path === '/v1/traces');
    expect(traces.length).toBeGreaterThanOrEqual(1);
    expect(traces[0]!.type).toContain('application/json');
    const docs = traces.map((g) => JSON.parse(g.body.toString('utf8')) as OtlpJson);
    const res = attrs(docs[0]!.resourceSpans[0]!.resource.attributes);
    expect(res).toMatchObject({
      'service.name': 'dup-east',
      'service.version': '9.9.9',
      'shadowplane.role': 'duplicator',
      'deployment.environment.name': 'test',
      team: 'ml-platform',
    });
    const spans = docs.flatMap((d) => d.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
    expect(spans.map((s) => s.name).sort()).toEqual(['chat gpt-4o-mini', 'shadowplane.item']);
    const item = spans.find((s) => s.name === 'shadowplane.item')!;
    const chat = spans.find((s) => s.name === 'chat gpt-4o-mini')!;
    // linked to the production trace, not parented by it
    expect(item.traceId).not.toBe('0af7651916cd43dd8448eb211c80319c');
    expect(item.parentSpanId ?? '').toBe('');
    expect(item.links).toEqual([
      expect.objectContaining({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' }),
    ]);
    expect(chat.traceId).toBe(item.traceId);
    expect(chat.kind).toBe(3); // CLIENT
    const a = attrs(chat.attributes);
    expect(a).toMatchObject({
      [GENAI.OPERATION_NAME]: 'chat',
      [GENAI.PROVIDER_NAME]: 'openai',
      [GENAI.REQUEST_MODEL]: 'gpt-4o-mini',
      [GENAI.RESPONSE_MODEL]: 'gpt-4o-mini-2024-07-18',
      [GENAI.USAGE_INPUT_TOKENS]: 12,
      [GENAI.USAGE_CACHE_READ_INPUT_TOKENS]: 0,
      [GENAI.SHADOWPLANE_COST_BASIS]: 'rate_card',
    });
    expect(a[GENAI.SHADOWPLANE_COST_USD]).toBeCloseTo(0.0000048, 12);
    // not reported → absent, never 0
    expect(a).not.toHaveProperty(GENAI.USAGE_CACHE_CREATION_INPUT_TOKENS);
    expect(a).not.toHaveProperty(GENAI.USAGE_REASONING_OUTPUT_TOKENS);
    expect(a).not.toHaveProperty(GENAI.ERROR_TYPE);
  });

  it('exports nothing when OTEL_TRACES_SAMPLER=always_off', async () => {
    const rx = await receiver();
    servers.push(rx.server);
    Object.assign(process.env, {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${rx.url}/custom/traces`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_TRACES_SAMPLER: 'always_off',
    });
    const t = startTracing({ serviceName: 'x' });
    expect(t.enabled).toBe(true);
    await inSpan('dropped', {}, async (s) => expect(s.isRecording()).toBe(false));
    await t.shutdown();
    expect(rx.got).toEqual([]);
  });

  it('takes SHADOWPLANE_OTLP_ENDPOINT as the traces URL, and log lines in a span carry trace_id and span_id', async () => {
    const rx = await receiver();
    servers.push(rx.server);
    Object.assign(process.env, {
      SHADOWPLANE_OTLP_ENDPOINT: `${rx.url}/alias/v1/traces`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    });
    const lines: string[] = [];
    const log = createLogger({
      service: 't',
      version: '0',
      destination: new Writable({ write: (c: Buffer, _e, cb) => (lines.push(c.toString()), cb()) }),
    });
    const t = startTracing({ serviceName: 'x' });
    let ids = { traceId: '', spanId: '' };
    await inSpan('logged', {}, async (s) => {
      ids = s.spanContext();
      log.info({}, 'inside');
    });
    log.info({}, 'outside');
    await t.shutdown();
    expect(rx.got.map((g) => [g.path, g.type])).toEqual([['/alias/v1/traces', 'application/x-protobuf']]);
    const [inside, outside] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(inside).toMatchObject({ trace_id: ids.traceId, span_id: ids.spanId, level: 'info' });
    expect(outside).not.toHaveProperty('trace_id');
  });
});

describe('linkFromTraceContext', () => {
  it('links a valid traceparent and refuses malformed or all-zero ones', () => {
    const l = linkFromTraceContext({
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      tracestate: 'vendor=1',
    });
    expect(l?.context).toMatchObject({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: 1,
    });
    expect(linkFromTraceContext({ traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01' })).toBeNull();
    expect(linkFromTraceContext({ traceparent: 'garbage' })).toBeNull();
    expect(linkFromTraceContext(null)).toBeNull();
  });
});
