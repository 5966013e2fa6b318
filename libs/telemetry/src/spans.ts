import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, isSpanContextValid, trace } from '@opentelemetry/api';
import type { Attributes, Context, Link, Span, SpanOptions } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { getTracer } from './tracing.js';

/** A W3C trace context as carried by a capture envelope (the production request's headers). */
export interface TraceContextCarrier {
  traceparent: string;
  tracestate?: string | null;
}

/** W3C `traceparent`, version 00 form: version-traceid-parentid-flags, lowercase hex. */
export const TRACEPARENT_RE = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

const w3c = new W3CTraceContextPropagator();

/**
 * The span context a `traceparent` (+ `tracestate`) names, as a span link, or null when the
 * value is absent or not a valid W3C trace context (all-zero ids included). Used to link a shadow
 * item to the production request it copies: a link, never a parent, so shadow work never shows
 * up inside the production trace's latency.
 * Source: W3C Trace Context (https://www.w3.org/TR/trace-context/); OTel span links.
 */
export function linkFromTraceContext(tc: TraceContextCarrier | null | undefined, attributes?: Attributes): Link | null {
  if (!tc || !TRACEPARENT_RE.test(tc.traceparent)) return null;
  const carrier: Record<string, string> = { traceparent: tc.traceparent };
  if (tc.tracestate) carrier['tracestate'] = tc.tracestate;
  const ctx = w3c.extract(ROOT_CONTEXT, carrier, { get: (c, k) => c[k], keys: (c) => Object.keys(c) });
  const sc = trace.getSpanContext(ctx);
  if (!sc || !isSpanContextValid(sc)) return null;
  return attributes ? { context: sc, attributes } : { context: sc };
}

/**
 * The parent context named by request headers (`traceparent`/`tracestate`, W3C), or the root
 * context when they carry none — for server spans that continue a caller's trace.
 */
export function contextFromHeaders(headers: Record<string, string | string[] | undefined>): Context {
  const get = (k: string) => {
    const v = headers[k];
    return Array.isArray(v) ? v[0] : v;
  };
  if (get('traceparent') === undefined) return ROOT_CONTEXT;
  return w3c.extract(ROOT_CONTEXT, headers, {
    get: (_c, k) => get(k),
    keys: (c) => Object.keys(c),
  });
}

/**
 * The W3C trace context naming `span` as the parent (`traceparent` version 00, its `tracestate`
 * or null), to carry across a hop OTel does not instrument (a NATS request's headers), or null for
 * a span with an invalid context (tracing off: the API's no-op span).
 * Source: W3C Trace Context (https://www.w3.org/TR/trace-context/#traceparent-header).
 */
export function traceContextOf(span: Span): TraceContextCarrier | null {
  const sc = span.spanContext();
  if (!isSpanContextValid(sc)) return null;
  const flags = (sc.traceFlags & 0xff).toString(16).padStart(2, '0');
  const ts = sc.traceState?.serialize();
  return { traceparent: `00-${sc.traceId}-${sc.spanId}-${flags}`, tracestate: ts ? ts : null };
}

/**
 * Runs `fn` inside a new active span and ends it when `fn` settles: a thrown error is recorded
 * (`exception` event, status ERROR, `error.type` = its `code` or class name) and re-thrown.
 * `parent` picks the parent context (default: the active one; pass `ROOT_CONTEXT` for a new
 * trace). With tracing off the span is the API's no-op span and this costs one closure call.
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions & { parent?: Context },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const { parent, ...spanOptions } = options;
  const span = getTracer().startSpan(name, spanOptions, parent ?? context.active());
  const ctx = trace.setSpan(parent ?? context.active(), span);
  try {
    return await context.with(ctx, () => fn(span));
  } catch (e) {
    recordError(span, e);
    throw e;
  } finally {
    span.end();
  }
}

/** Marks a span failed by `e`: an `exception` event, status ERROR and `error.type`. Never throws. */
export function recordError(span: Span, e: unknown): void {
  try {
    const err = e instanceof Error ? e : new Error(String(e));
    const code = (err as { code?: unknown }).code;
    span.recordException(err);
    span.setAttribute('error.type', typeof code === 'string' ? code : err.name || 'Error');
    span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
  } catch {
    // telemetry never throws into the caller
  }
}

export { ROOT_CONTEXT, SpanKind, SpanStatusCode };
export type { Span, Link, Attributes };
