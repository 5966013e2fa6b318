/** The verdict role's metrics, registered on an injected registry (see docs/metrics.md). */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Counters of folded and invalid OBS messages, reports written and decided campaigns; fold time in seconds. */
export class VerdictMetrics {
  readonly messages: Counter<'kind'>;
  readonly invalid: Counter;
  readonly reports: Counter<'kind'>;
  readonly foldSeconds: Histogram;
  readonly campaigns: Gauge;
  readonly decided: Counter;
  constructor(r: Registry) {
    this.decided = new Counter({
      name: 'shadowplane_verdict_campaigns_decided_total',
      help: 'sequential and group_sequential campaigns moved to decided because every candidate was settled',
      registers: [r],
    });
    this.messages = new Counter({
      name: 'shadowplane_verdict_obs_messages_total',
      help: 'OBS messages folded, by kind',
      labelNames: ['kind'],
      registers: [r],
    });
    this.invalid = new Counter({
      name: 'shadowplane_verdict_obs_invalid_total',
      help: 'OBS messages that failed the contract and were skipped',
      registers: [r],
    });
    this.reports = new Counter({
      name: 'shadowplane_verdict_reports_written_total',
      help: 'reports written, final or provisional',
      labelNames: ['kind'],
      registers: [r],
    });
    this.foldSeconds = new Histogram({
      name: 'shadowplane_verdict_fold_seconds',
      help: 'time to fold a campaign into a report',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [r],
    });
    this.campaigns = new Gauge({
      name: 'shadowplane_verdict_campaigns',
      help: 'campaigns with state in this process',
      registers: [r],
    });
  }
}
