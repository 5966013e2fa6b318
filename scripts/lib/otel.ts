/** Local OTLP/HTTP endpoint of `make jaeger-up` (deploy/tools/jaeger/local.yaml). */
export const LOCAL_OTLP_HTTP = 'http://127.0.0.1:4318';
/** Local Jaeger query API and UI of `make jaeger-up`. */
export const LOCAL_JAEGER_QUERY = 'http://127.0.0.1:16686';

/** What the demo exports traces to, or null when tracing is off. */
export interface DemoTracing {
  /** OTLP base URL the roles export to (`OTEL_EXPORTER_OTLP_ENDPOINT`) */
  endpoint: string;
  /** true when the endpoint is the local Jaeger of `make jaeger-up` */
  localJaeger: boolean;
}

/**
 * Tracing for a demo run. The roles read the standard `OTEL_*` variables from the demo's
 * environment, so `OTEL_EXPORTER_OTLP_ENDPOINT=… make demo` exports the whole run; `--otel`
 * without it points them at the local Jaeger (`make jaeger-up`). Either way the endpoint is
 * checked first with an empty OTLP/JSON export (`POST /v1/traces` with `{}`), so a demo never
 * claims to trace into a receiver that is not there.
 * Errors: throws with the fix when the endpoint does not answer 2xx within 3 s.
 */
export async function demoTracing(flag: boolean, env: NodeJS.ProcessEnv = process.env): Promise<DemoTracing | null> {
  const set = env['OTEL_EXPORTER_OTLP_ENDPOINT'] ?? env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'];
  if (!flag && !set) return null;
  if (env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true') return null;
  const endpoint = set ?? LOCAL_OTLP_HTTP;
  const tracesUrl = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] ?? `${endpoint.replace(/\/+$/, '')}/v1/traces`;
  const protocol = env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] ?? env['OTEL_EXPORTER_OTLP_PROTOCOL'] ?? 'http/protobuf';
  // gRPC endpoints cannot be probed with an HTTP POST; the roles report their own export errors
  if (protocol !== 'grpc') {
    const ok = await fetch(tracesUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
      signal: AbortSignal.timeout(3000),
    }).then(
      (r) => r.ok,
      () => false,
    );
    if (!ok)
      throw new Error(
        `no OTLP receiver answers at ${tracesUrl}${set ? '' : ' — start one with `make jaeger-up` in another shell'}`,
      );
  }
  if (!set) env['OTEL_EXPORTER_OTLP_ENDPOINT'] = endpoint;
  return { endpoint, localJaeger: endpoint.replace(/\/+$/, '') === LOCAL_OTLP_HTTP };
}
