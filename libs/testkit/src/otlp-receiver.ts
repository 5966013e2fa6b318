import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP JSON export carries it, flattened (attributes as a plain object). */
export interface OtlpSpan {
  name: string;
  /** OTLP SpanKind number: 1 internal, 2 server, 3 client, 4 producer, 5 consumer */
  kind: number;
  traceId: string;
  spanId: string;
  /** '' or absent for a root span */
  parentSpanId?: string;
  links: Array<{ traceId: string; spanId: string }>;
  attributes: Record<string, unknown>;
  /** resource attributes of the export the span came in */
  resource: Record<string, unknown>;
}

/** A loopback OTLP/HTTP receiver (JSON only) that keeps every span it is sent. */
export interface OtlpReceiverHandle {
  /** base URL to give as `OTEL_EXPORTER_OTLP_ENDPOINT` (with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) */
  readonly url: string;
  /** every span received so far, in arrival order */
  spans(): OtlpSpan[];
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
type KeyValue = { key: string; value: AnyValue & { arrayValue?: { values: AnyValue[] } } };
const value = (v: KeyValue['value']): unknown =>
  v.arrayValue
    ? v.arrayValue.values.map((x) => value(x))
    : v.intValue !== undefined
      ? Number(v.intValue)
      : (v.stringValue ?? v.doubleValue ?? v.boolValue);
const flat = (list: KeyValue[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));

/**
 * Starts an OTLP/HTTP receiver on a free loopback port answering `POST /v1/traces` with `{}`:
 * the smallest real backend a span exporter can talk to (no collector needed). Protobuf bodies
 * are answered 415, so a test that forgets `http/json` fails loudly.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiverHandle> {
  const got: OtlpSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (!String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans?: Array<{
          resource?: { attributes?: KeyValue[] };
          scopeSpans?: Array<{
            spans?: Array<
              Omit<OtlpSpan, 'attributes' | 'resource' | 'links'> & {
                attributes?: KeyValue[];
                links?: Array<{ traceId: string; spanId: string }>;
              }
            >;
          }>;
        }>;
      };
      for (const rs of body.resourceSpans ?? []) {
        const resource = flat(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            got.push({ ...s, links: s.links ?? [], attributes: flat(s.attributes), resource });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => [...got],
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
