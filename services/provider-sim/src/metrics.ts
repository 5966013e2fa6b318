import { Counter, Histogram, Registry } from 'prom-client';

/**
 * Prometheus metrics of one sim instance, on its own registry (so several sims can live in one
 * test process). Labels are closed sets: `model` is a configured name or `unknown`, `api` one of
 * the four APIs or `other`, `status` the HTTP status (`0` = none sent), `fault` a fault kind or
 * `none`.
 * - `shadowplane_provider_sim_requests_total{model,api,status,fault}`
 * - `shadowplane_provider_sim_request_duration_seconds{api}` (histogram, whole response)
 * - `shadowplane_provider_sim_tokens_total{model,kind}` kind ∈ input|cache_read|cache_write|output
 */
export class SimMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'shadowplane_provider_sim_requests_total',
    help: 'API requests served by the provider sim, by model, API, HTTP status and injected fault',
    labelNames: ['model', 'api', 'status', 'fault'] as const,
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: 'shadowplane_provider_sim_request_duration_seconds',
    help: 'Time from request received to response finished (or connection closed), seconds',
    labelNames: ['api'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly tokens = new Counter({
    name: 'shadowplane_provider_sim_tokens_total',
    help: 'Tokens reported in served responses, by model and kind',
    labelNames: ['model', 'kind'] as const,
    registers: [this.registry],
  });

  private readonly tokenChildren = new Map<string, { inc(n: number): void }[]>();

  /** Adds one response's token usage (label children cached per model; this is per request). */
  countTokens(model: string, u: { input: number; cacheRead: number; cacheWrite: number; output: number }): void {
    let c = this.tokenChildren.get(model);
    if (!c) {
      c = (['input', 'cache_read', 'cache_write', 'output'] as const).map((kind) =>
        this.tokens.labels({ model, kind }),
      );
      this.tokenChildren.set(model, c);
    }
    c[0]!.inc(u.input);
    if (u.cacheRead > 0) c[1]!.inc(u.cacheRead);
    if (u.cacheWrite > 0) c[2]!.inc(u.cacheWrite);
    c[3]!.inc(u.output);
  }

  private readonly requestChildren = new Map<string, { inc(): void }>();
  private readonly durationChildren = new Map<string, { observe(v: number): void }>();

  /** Counts one finished API request and its duration (label children cached: this is per request). */
  countRequest(model: string, api: string, status: string, fault: string, seconds: number): void {
    const k = `${model}|${api}|${status}|${fault}`;
    let c = this.requestChildren.get(k);
    if (!c) {
      c = this.requests.labels({ model, api, status, fault });
      this.requestChildren.set(k, c);
    }
    c.inc();
    let d = this.durationChildren.get(api);
    if (!d) {
      d = this.duration.labels({ api });
      this.durationChildren.set(api, d);
    }
    d.observe(seconds);
  }
}
