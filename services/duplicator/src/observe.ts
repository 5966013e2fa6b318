import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ArmRole, Envelope, RateCard } from '@shadowplane/contracts';
import { resolveCost } from '@shadowplane/providers';
import {
  BoundedLabel,
  ROOT_CONTEXT,
  SpanKind,
  endGenAiSpan,
  genAiProviderName,
  inSpan,
  linkFromTraceContext,
  startGenAiSpan,
  tracingEnabled,
} from '@shadowplane/telemetry';
import type { AttemptOutcome } from './invoke.js';

/** What one provider call is, for its span and metrics. */
export interface CallMeta {
  /** allowlist provider id (label `provider`, attribute `shadowplane.provider.id`) */
  providerId: string;
  /** provider base URL (`server.address`, `server.port`) */
  baseUrl: string;
  /** wire API of the call (`gen_ai.provider.name` from its family) */
  api: string;
  /** requested model (label `model`, `gen_ai.request.model`) */
  model: string;
  /** campaign arm id (label `arm`) and its role (label `arm_role`) */
  armId: string;
  armRole: ArmRole;
  stream: boolean;
  maxTokens: number | null;
  /** the arm's rate card, for the cost of a reported usage */
  rateCard: RateCard | undefined;
  /** 1-based attempt number */
  attempt: number;
}

const TOKEN_TYPES = [
  ['input', 'input_tokens'],
  ['output', 'output_tokens'],
  ['cache_read', 'cache_read_input_tokens'],
  ['cache_creation', 'cache_creation_input_tokens'],
  ['reasoning', 'reasoning_output_tokens'],
] as const;

/**
 * Per-call observability of the duplicator's provider calls: a GenAI client span per attempt
 * (while tracing is on) and sliceable metrics. Labels: `provider` (allowlist ids), `model` and
 * `arm` (from campaign specs), each bounded by {@link BoundedLabel} (64 distinct values, then
 * `other`); `arm_role` and `result`/`token_type` are closed sets. See docs/metrics.md.
 */
export class ProviderCallMetrics {
  /** finished provider attempts */
  readonly calls: Counter<'provider' | 'model' | 'arm' | 'arm_role' | 'result'>;
  /** tokens the provider reported, by token type (cache and reasoning are parts of input/output) */
  readonly tokens: Counter<'provider' | 'model' | 'arm' | 'token_type'>;
  /** send → last byte, seconds */
  readonly duration: Histogram<'provider' | 'model' | 'arm' | 'result'>;
  /** send → first content chunk, seconds (streams and JSON alike, when the parser saw one) */
  readonly ttft: Histogram<'provider' | 'model' | 'arm'>;
  private readonly provider = new BoundedLabel(64);
  private readonly model = new BoundedLabel(64);
  private readonly arm = new BoundedLabel(64);

  constructor(r: Registry) {
    const registers = [r];
    this.calls = new Counter({
      name: 'shadowplane_duplicator_provider_calls_total',
      help: 'provider call attempts finished, by provider, model, arm, arm role and result (ok or an error class)',
      labelNames: ['provider', 'model', 'arm', 'arm_role', 'result'],
      registers,
    });
    this.tokens = new Counter({
      name: 'shadowplane_duplicator_provider_tokens_total',
      help: 'tokens reported by providers, by token type (input, output, cache_read, cache_creation, reasoning); unreported figures add nothing',
      labelNames: ['provider', 'model', 'arm', 'token_type'],
      registers,
    });
    this.duration = new Histogram({
      name: 'shadowplane_duplicator_provider_call_duration_seconds',
      help: 'provider call duration, request sent to last byte, seconds',
      labelNames: ['provider', 'model', 'arm', 'result'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128],
      registers,
    });
    this.ttft = new Histogram({
      name: 'shadowplane_duplicator_provider_time_to_first_token_seconds',
      help: 'provider time to first token, request sent to first content chunk, seconds',
      labelNames: ['provider', 'model', 'arm'],
      buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32],
      registers,
    });
  }

  /** Records one finished attempt. Never throws. */
  record(m: CallMeta, o: AttemptOutcome): void {
    try {
      const base = {
        provider: this.provider.value(m.providerId),
        model: this.model.value(m.model),
        arm: this.arm.value(m.armId),
      };
      const result = o.errorClass ?? 'ok';
      this.calls.inc({ ...base, arm_role: m.armRole, result });
      this.duration.observe({ ...base, result }, o.latencyMs / 1000);
      if (o.ttftMs !== null) this.ttft.observe(base, o.ttftMs / 1000);
      const u = o.parsed?.usage;
      if (u) {
        for (const [type, field] of TOKEN_TYPES) {
          const v = u[field];
          if (v !== null && v > 0) this.tokens.inc({ ...base, token_type: type }, v);
        }
      }
    } catch {
      // telemetry never throws into the caller
    }
  }
}

/**
 * Runs one provider attempt (`call`, which never throws) inside a GenAI client span
 * `chat <model>` and records its metrics. The span's cost is what the response resolves to
 * (provider-reported, else the arm's rate card on reported usage) with its basis, absent when
 * unknown; a usage figure the provider did not report is absent, never 0.
 */
export async function observedCall(
  metrics: ProviderCallMetrics,
  m: CallMeta,
  call: () => Promise<AttemptOutcome>,
): Promise<AttemptOutcome> {
  if (!tracingEnabled()) {
    const o = await call();
    metrics.record(m, o);
    return o;
  }
  return genAiCall(
    m,
    {
      'shadowplane.provider.id': m.providerId,
      'shadowplane.arm.id': m.armId,
      'shadowplane.arm.role': m.armRole,
      'shadowplane.attempt': m.attempt,
      'shadowplane.api': m.api,
    },
    async () => {
      const o = await call();
      metrics.record(m, o);
      return o;
    },
  );
}

/** What one judge call is, for its span. */
export interface JudgeCallMeta {
  /** allowlist provider id of the judge */
  providerId: string;
  baseUrl: string;
  /** wire API of the call */
  api: string;
  /** the judge model (`gen_ai.request.model`) */
  model: string;
  maxTokens: number;
  /** the arm whose output is judged (a candidate in pairwise mode) */
  judgedArmId: string;
  /** `single` (pointwise) or the pairwise presentation order `ab` / `ba` */
  order: 'single' | 'ab' | 'ba';
  rateCard: RateCard;
}

/**
 * Runs one judge call (`call`, which never throws) inside a GenAI client span `chat <judge
 * model>`, a child of the active span (the item's, when the item is traced), with the same
 * attributes as an arm's call plus `shadowplane.judge.*`. Off tracing, just `call()`.
 */
export function observedJudgeCall(m: JudgeCallMeta, call: () => Promise<AttemptOutcome>): Promise<AttemptOutcome> {
  if (!tracingEnabled()) return call();
  return genAiCall(
    { ...m, stream: false },
    {
      'shadowplane.provider.id': m.providerId,
      'shadowplane.api': m.api,
      'shadowplane.judge': true,
      'shadowplane.judge.arm.id': m.judgedArmId,
      'shadowplane.judge.order': m.order,
    },
    call,
  );
}

/** The GenAI client span around one call; tracing is known to be on. */
async function genAiCall(
  m: {
    baseUrl: string;
    api: string;
    model: string;
    stream: boolean;
    maxTokens: number | null;
    rateCard: RateCard | undefined;
  },
  attributes: Record<string, string | number | boolean>,
  call: () => Promise<AttemptOutcome>,
): Promise<AttemptOutcome> {
  let server: URL | null = null;
  try {
    server = new URL(m.baseUrl);
  } catch {
    server = null;
  }
  const span = startGenAiSpan({
    operation: 'chat',
    providerName: genAiProviderName(m.api),
    requestModel: m.model,
    stream: m.stream,
    maxTokens: m.maxTokens,
    ...(server
      ? { serverAddress: server.hostname, serverPort: Number(server.port || (server.protocol === 'https:' ? 443 : 80)) }
      : {}),
    attributes,
  });
  const o = await call();
  const p = o.parsed;
  const is2xx = o.status !== null && o.status >= 200 && o.status < 300;
  const cost = is2xx && p ? resolveCost(p, m.rateCard) : null;
  endGenAiSpan(span, {
    responseModel: p?.model ?? null,
    responseId: p?.responseId ?? null,
    finishReasons: p?.finishReason ? [p.finishReason] : [],
    usage: p ? p.usage : null,
    cost: cost ? { usd: cost.usd, basis: cost.basis } : null,
    errorType: o.errorClass,
    httpStatus: o.status,
    ttftSeconds: o.ttftMs === null ? null : o.ttftMs / 1000,
  });
  return o;
}

/**
 * Runs one capture's processing inside a CONSUMER span `shadowplane.item`, a new trace linked
 * (never parented) to the production request's trace when the envelope carries its
 * `traceparent`. Off tracing, just `fn()`.
 */
export function itemSpan<T>(campaignId: string, env: Envelope, fn: () => Promise<T>): Promise<T> {
  if (!tracingEnabled()) return fn();
  const link = linkFromTraceContext(env.trace_context ?? null, { 'shadowplane.link': 'production_request' });
  return inSpan(
    'shadowplane.item',
    {
      kind: SpanKind.CONSUMER,
      parent: ROOT_CONTEXT,
      links: link ? [link] : [],
      attributes: {
        'messaging.system': 'nats',
        'messaging.operation.type': 'process',
        'shadowplane.campaign.id': campaignId,
        'shadowplane.item.hash': env.item_hash,
        'shadowplane.envelope.id': env.envelope_id,
        'shadowplane.call_type': env.call_type,
        'shadowplane.suite': env.suite,
        'shadowplane.traffic_class': env.traffic_class,
      },
    },
    () => fn(),
  );
}

/**
 * Per-campaign budget gauges — limit, reserved, settled (spent) in USD — read from the shared
 * ledger every `intervalMs`. The `campaign` label exists only while this worker consumes the
 * campaign ({@link untrack} removes its series), so ids never pile up. The ledger holds integer
 * micro-USD; each value is converted once (÷ 1e6) per read, so nothing accumulates float error.
 * Every worker of a campaign reports the same ledger: aggregate with `max by (campaign)`.
 */
export class CampaignBudgetGauges {
  readonly limit: Gauge<'campaign'>;
  readonly reserved: Gauge<'campaign'>;
  readonly spent: Gauge<'campaign'>;
  private readonly tracked = new Set<string>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    r: Registry,
    private readonly read: (
      campaignId: string,
    ) => Promise<{ limit_micro_usd: number; reserved_micro_usd: number; settled_micro_usd: number } | null>,
    intervalMs = 2000,
  ) {
    const registers = [r];
    this.limit = new Gauge({
      name: 'shadowplane_duplicator_campaign_budget_limit_usd',
      help: 'campaign max_cost_usd as held by its ledger, for campaigns this worker consumes',
      labelNames: ['campaign'],
      registers,
    });
    this.reserved = new Gauge({
      name: 'shadowplane_duplicator_campaign_budget_reserved_usd',
      help: 'USD reserved on the campaign ledger for calls in flight (all workers)',
      labelNames: ['campaign'],
      registers,
    });
    this.spent = new Gauge({
      name: 'shadowplane_duplicator_campaign_budget_spent_usd',
      help: 'USD settled on the campaign ledger (all workers)',
      labelNames: ['campaign'],
      registers,
    });
    this.timer = setInterval(() => void this.refresh(), intervalMs);
    this.timer.unref();
  }

  /** Starts exporting `campaignId` (read at once, then every interval). */
  track(campaignId: string): void {
    this.tracked.add(campaignId);
    void this.refreshOne(campaignId);
  }

  /** Stops exporting `campaignId` and removes its series. */
  untrack(campaignId: string): void {
    this.tracked.delete(campaignId);
    for (const g of [this.limit, this.reserved, this.spent]) g.remove({ campaign: campaignId });
  }

  /** Reads every tracked campaign's ledger once. Never throws. */
  async refresh(): Promise<void> {
    await Promise.all([...this.tracked].map((id) => this.refreshOne(id)));
  }

  close(): void {
    clearInterval(this.timer);
    for (const id of [...this.tracked]) this.untrack(id);
  }

  private async refreshOne(id: string): Promise<void> {
    try {
      const l = await this.read(id);
      if (!l || !this.tracked.has(id)) return;
      this.limit.set({ campaign: id }, l.limit_micro_usd / 1e6);
      this.reserved.set({ campaign: id }, Math.max(0, l.reserved_micro_usd) / 1e6);
      this.spent.set({ campaign: id }, l.settled_micro_usd / 1e6);
    } catch {
      // a failed read keeps the last values; the next interval tries again
    }
  }
}
