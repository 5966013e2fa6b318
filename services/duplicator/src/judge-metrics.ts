import { Counter, Histogram, type Registry } from 'prom-client';
import { ErrorClass } from '@shadowplane/contracts';

/** Closed set of judge-call results: `ok`, a contract error class, why no call was made, or `lost_in_flight` (its worker died during it). */
const NOT_CALLED = [
  'budget_exhausted',
  'not_reserved',
  'paid_dispatch_disabled',
  'untranslatable',
  'lost_in_flight',
] as const;
/** Closed set of verdict outcomes: `scored`, or the null reason with its error class dropped. */
const VERDICT_OUTCOMES = [
  'scored',
  'same_family',
  'judge_timeout',
  'judge_refused_reply',
  'judge_unparsable',
  'judge_error',
  'judge_budget_exhausted',
  'judge_not_reserved',
  'judge_paid_dispatch_disabled',
  'judge_untranslatable',
  'judge_lost_in_flight',
  'judge_output_unavailable',
  'judge_not_run',
] as const;

/**
 * The LLM judge's metrics (docs/metrics.md). Labels are closed sets: `mode` (`pointwise`,
 * `pairwise`), `result` (`ok`, an error class of the contract, or a not-called reason) and
 * `outcome` ({@link VERDICT_OUTCOMES}); no ids, no model names (the judge's provider and model are
 * in the report). Spend is what the ledger was settled at (actual cost, or the bound when unknown).
 */
export class JudgeMetrics {
  /** judge calls by mode and result */
  readonly calls: Counter<'mode' | 'result'>;
  /** send → last byte of a judge call, seconds */
  readonly duration: Histogram<'mode'>;
  /** USD settled on ledgers for judge calls (evaluation cost) */
  readonly spendUsd: Counter;
  /** published judge verdicts by mode and outcome */
  readonly verdicts: Counter<'mode' | 'outcome'>;

  constructor(r: Registry) {
    const registers = [r];
    this.calls = new Counter({
      name: 'shadowplane_duplicator_judge_calls_total',
      help: 'LLM judge calls by mode and result (ok, an error class, or budget_exhausted / not_reserved / paid_dispatch_disabled / untranslatable when no call was made, lost_in_flight when its worker died during it)',
      labelNames: ['mode', 'result'],
      registers,
    });
    this.duration = new Histogram({
      name: 'shadowplane_duplicator_judge_call_duration_seconds',
      help: 'LLM judge call duration, request sent to last byte, seconds',
      labelNames: ['mode'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64],
      registers,
    });
    this.spendUsd = new Counter({
      name: 'shadowplane_duplicator_judge_spend_usd_total',
      help: 'USD settled on budget ledgers for LLM judge calls (evaluation cost, apart from the arms)',
      registers,
    });
    this.verdicts = new Counter({
      name: 'shadowplane_duplicator_judge_verdicts_total',
      // a literal (docs/metrics.md is generated from it); the same list as VERDICT_OUTCOMES
      help: 'LLM judge verdicts published, by mode and outcome (scored, same_family, judge_timeout, judge_refused_reply, judge_unparsable, judge_error, judge_budget_exhausted, judge_not_reserved, judge_paid_dispatch_disabled, judge_untranslatable, judge_lost_in_flight, judge_output_unavailable, judge_not_run)',
      labelNames: ['mode', 'outcome'],
      registers,
    });
  }

  /** Records one judge call: `result` is an error class or null (ok); `notCalled` names why none was made. */
  call(
    mode: 'pointwise' | 'pairwise',
    o: { errorClass: string | null; latencyMs: number | null; chargedMicroUsd: number; notCalled?: string },
  ): void {
    try {
      let result = 'ok';
      if (o.notCalled !== undefined)
        result = (NOT_CALLED as readonly string[]).includes(o.notCalled) ? o.notCalled : 'not_reserved';
      else if (o.errorClass !== null) result = ErrorClass.safeParse(o.errorClass).success ? o.errorClass : 'other';
      this.calls.inc({ mode, result });
      if (o.latencyMs !== null) this.duration.observe({ mode }, o.latencyMs / 1000);
      if (o.chargedMicroUsd > 0) this.spendUsd.inc(o.chargedMicroUsd / 1e6);
    } catch {
      // telemetry never throws into the caller
    }
  }

  /** Records one published verdict by its score (null → its reason, error class dropped). */
  verdict(mode: 'pointwise' | 'pairwise', score: number | null, nullReason: string | null): void {
    try {
      const r = score !== null ? 'scored' : (nullReason ?? 'judge_error').split(':')[0]!;
      this.verdicts.inc({ mode, outcome: (VERDICT_OUTCOMES as readonly string[]).includes(r) ? r : 'judge_error' });
    } catch {
      // telemetry never throws into the caller
    }
  }
}
