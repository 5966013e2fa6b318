import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { ProviderCallMetrics } from './observe.js';
import { JudgeMetrics } from './judge-metrics.js';

/** The duplicator's metrics, registered on an injected registry. Labels are small closed sets. */
export class DuplicatorMetrics {
  /** arm calls finished, by arm role and outcome (`ok`, an error class, `lost`, `not_invoked`) */
  readonly dispatches: Counter<'arm_role' | 'outcome'>;
  /** provider HTTP attempts (retries included), by arm role and result (`ok` or an error class) */
  readonly attempts: Counter<'arm_role' | 'result'>;
  /** USD settled on the ledger by this worker (actual costs and upper bounds) */
  readonly spendUsd: Counter;
  /** budget reservations asked, by result (`granted`, `refused`) */
  readonly reservations: Counter<'result'>;
  /** USD this worker holds reserved for in-flight items right now (kept in integer micro-USD) */
  readonly reservedUsd: MicroUsdGauge;
  /** ms spent waiting for an arm's rate limit, seconds */
  readonly rateLimitWait: Histogram<'arm_role'>;
  /** items by outcome (`dispatched`, `replayed` (instrument replay: priced, no call), `duplicate`, `excluded`, `not_sampled`, `lost_in_flight`) */
  readonly items: Counter<'outcome'>;
  /** judged_dataset_run items without a served output to stand for the incumbent, by reason (campaign/judged.ts) */
  readonly servedExcluded: Counter<'reason'>;
  /** captures not yet delivered to the campaign consumers this worker runs (num_pending, polled) */
  readonly consumerLag: Gauge;
  /** campaigns this worker is consuming */
  readonly campaigns: Gauge;
  /** settlements whose actual cost exceeded the reservation (clamped): must stay 0, a bug otherwise */
  readonly overcharges: Counter;
  /** arms left out of dispatch at campaign start, by reason (`no_rate_card`, `unknown_provider`) */
  readonly armsSkipped: Counter<'reason'>;
  /** 1 while paid_dispatch is on, as this worker sees it */
  readonly paidDispatch: Gauge;
  /** per provider call: counts, tokens, duration, time to first token (by provider, model, arm) */
  readonly providerCalls: ProviderCallMetrics;
  /** the LLM judge's calls, duration, spend and verdicts (judge-metrics.ts) */
  readonly judge: JudgeMetrics;

  constructor(r: Registry) {
    const reg = [r];
    this.dispatches = new Counter({
      name: 'shadowplane_duplicator_dispatches_total',
      help: 'arm calls finished, by arm role and outcome',
      labelNames: ['arm_role', 'outcome'],
      registers: reg,
    });
    this.attempts = new Counter({
      name: 'shadowplane_duplicator_provider_attempts_total',
      help: 'provider HTTP attempts incl. retries',
      labelNames: ['arm_role', 'result'],
      registers: reg,
    });
    this.spendUsd = new Counter({
      name: 'shadowplane_duplicator_spend_usd_total',
      help: 'USD settled on budget ledgers by this worker',
      registers: reg,
    });
    this.servedExcluded = new Counter({
      name: 'shadowplane_duplicator_served_exclusions_total',
      help: 'judged_dataset_run items excluded for want of a retained served output, by reason (served_no_response, served_no_usage, served_not_retained, served_artifact_missing, served_artifact_invalid)',
      labelNames: ['reason'],
      registers: reg,
    });
    this.reservations = new Counter({
      name: 'shadowplane_duplicator_reservations_total',
      help: 'budget reservations by result',
      labelNames: ['result'],
      registers: reg,
    });
    this.reservedUsd = new MicroUsdGauge(
      new Gauge({
        name: 'shadowplane_duplicator_reserved_usd',
        help: 'USD reserved by this worker for in-flight items',
        registers: reg,
      }),
    );
    this.rateLimitWait = new Histogram({
      name: 'shadowplane_duplicator_ratelimit_wait_seconds',
      help: 'time an arm call waited for its rate limit',
      labelNames: ['arm_role'],
      buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: reg,
    });
    this.items = new Counter({
      name: 'shadowplane_duplicator_items_total',
      help: 'captured items by outcome',
      labelNames: ['outcome'],
      registers: reg,
    });
    this.consumerLag = new Gauge({
      name: 'shadowplane_duplicator_consumer_lag_messages',
      help: 'captures pending for the campaign consumers of this worker',
      registers: reg,
    });
    this.campaigns = new Gauge({
      name: 'shadowplane_duplicator_campaigns',
      help: 'campaigns being consumed by this worker',
      registers: reg,
    });
    this.overcharges = new Counter({
      name: 'shadowplane_duplicator_budget_overcharge_total',
      help: 'settlements above their reservation (clamped; a bug)',
      registers: reg,
    });
    this.armsSkipped = new Counter({
      name: 'shadowplane_duplicator_arms_skipped_total',
      help: 'arms left out of dispatch',
      labelNames: ['reason'],
      registers: reg,
    });
    this.paidDispatch = new Gauge({
      name: 'shadowplane_duplicator_paid_dispatch',
      help: '1 while paid_dispatch is on',
      registers: reg,
    });
    this.providerCalls = new ProviderCallMetrics(r);
    this.judge = new JudgeMetrics(r);
  }
}

/**
 * A USD gauge whose running total is kept in integer micro-USD, so increments and decrements of
 * the same amounts return it exactly to 0 (a float gauge fed ±x/1e6 drifts: −1.2e-17 was seen).
 * `inc`/`dec` take USD values that came from integer micro-USD (`micro / 1e6`) and round them
 * back exactly; the gauge shows the total ÷ 1e6, converted once.
 */
class MicroUsdGauge {
  private micro = 0;
  constructor(readonly gauge: Gauge) {}
  /** adds `usd` (a micro-USD amount ÷ 1e6) */
  inc(usd: number): void {
    this.addMicro(Math.round(usd * 1e6));
  }
  /** subtracts `usd` (a micro-USD amount ÷ 1e6) */
  dec(usd: number): void {
    this.addMicro(-Math.round(usd * 1e6));
  }
  /** adds an integer micro-USD amount (negative to subtract) */
  addMicro(micro: number): void {
    this.micro += micro;
    this.gauge.set(this.micro / 1e6);
  }
  /** the current total, integer micro-USD */
  get totalMicroUsd(): number {
    return this.micro;
  }
}
