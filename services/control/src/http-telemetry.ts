import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  SpanKind,
  SpanStatusCode,
  contextFromHeaders,
  getTracer,
  traceContextOf,
  tracingEnabled,
  type Span,
  type TraceContextCarrier,
} from '@shadowplane/telemetry';

/** A caller's `x-request-id` we keep: 1–128 visible ASCII characters; anything else is replaced. */
const REQUEST_ID_RE = /^[\x21-\x7e]{1,128}$/;

/**
 * Fastify's request id: the caller's `x-request-id` when it is 1–128 visible ASCII characters,
 * else a fresh UUID. It is logged as `request_id` and echoed in the `x-request-id` response
 * header (see {@link registerHttpTelemetry}).
 */
export function requestId(req: { headers: Record<string, string | string[] | undefined> }): string {
  const v = req.headers['x-request-id'];
  const s = Array.isArray(v) ? v[0] : v;
  return s !== undefined && REQUEST_ID_RE.test(s) ? s : randomUUID();
}

const spans = new WeakMap<FastifyRequest, Span>();

/**
 * The W3C trace context naming this request's SERVER span, for work it asks of another role over
 * NATS (a report request to the verdict service), or null while tracing is off.
 */
export function requestTraceContext(req: FastifyRequest): TraceContextCarrier | null {
  const span = spans.get(req);
  return span ? traceContextOf(span) : null;
}

/**
 * Echoes `x-request-id` on every response, and while tracing is on gives every request a SERVER
 * span `<METHOD> <route pattern>` continuing the caller's W3C `traceparent`, with
 * `http.request.method`, `http.route`, `http.response.status_code`, `url.path` and the request id;
 * a 5xx marks it failed. Register before the routes.
 * Source: OpenTelemetry HTTP server span conventions (https://opentelemetry.io/docs/specs/semconv/http/http-spans/).
 */
export function registerHttpTelemetry(app: FastifyInstance): void {
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
    if (!tracingEnabled()) return;
    const route = req.routeOptions.config.routePath ?? 'unmatched';
    const span = getTracer().startSpan(
      `${req.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': req.method,
          'http.route': route,
          'url.path': req.url.split('?')[0] ?? '/',
          'shadowplane.request_id': req.id,
        },
      },
      contextFromHeaders(req.headers),
    );
    spans.set(req, span);
  });
  app.addHook('onResponse', async (req, reply) => {
    const span = spans.get(req);
    if (!span) return;
    spans.delete(req);
    span.setAttribute('http.response.status_code', reply.statusCode);
    if (reply.statusCode >= 500) {
      span.setAttribute('error.type', String(reply.statusCode));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  });
}
