import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * The control role's metrics, registered on an injected registry. Labels are closed sets:
 * `route` is the route pattern (or `unmatched`), `method` the HTTP method, `status` the class
 * (2xx/4xx/5xx), `outcome` a fixed vocabulary.
 */
export class ControlMetrics {
  readonly requests: Counter<'method' | 'route' | 'status'>;
  readonly duration: Histogram<'method' | 'route'>;
  readonly launches: Counter<'outcome'>;
  readonly authFailures: Counter<'reason'>;
  readonly transitions: Counter<'action' | 'outcome'>;

  constructor(registry: Registry) {
    this.requests = new Counter({
      name: 'shadowplane_control_http_requests_total',
      help: 'HTTP requests answered, by route pattern and status class',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'shadowplane_control_http_request_duration_seconds',
      help: 'HTTP request duration, seconds',
      labelNames: ['method', 'route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
    this.launches = new Counter({
      name: 'shadowplane_control_campaign_launches_total',
      help: 'POST /v1/campaigns outcomes: launched, dry_run, invalid, unknown_provider, underpowered, paid_dispatch_disabled, error',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.authFailures = new Counter({
      name: 'shadowplane_control_auth_failures_total',
      help: 'requests refused by auth: unauthenticated or forbidden',
      labelNames: ['reason'],
      registers: [registry],
    });
    this.transitions = new Counter({
      name: 'shadowplane_control_campaign_transitions_total',
      help: 'pause/resume/stop requests by outcome (changed, unchanged, conflict, refused)',
      labelNames: ['action', 'outcome'],
      registers: [registry],
    });
  }
}
