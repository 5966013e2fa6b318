import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Outcome of one proxied request (label of `shadowplane_sidecar_requests_total`). */
export type RequestOutcome =
  | 'ok'
  | 'upstream_error'
  | 'upstream_timeout'
  | 'upstream_cut'
  | 'client_aborted'
  | 'client_timeout'
  | 'no_route'
  | 'bad_request';

/**
 * Outcome of a capture (label `outcome` of `shadowplane_sidecar_captures_total`):
 * - `not_sampled`: sampling said no (reason '')
 * - `queued`: accepted for the tee at response start (reason ''); each ends as excluded, dropped
 *   or published, so queued − (excluded + dropped + published) = captures in flight
 * - `skipped`: sampled but refused from the head (reason = SkipReason, header `skipped:<reason>`)
 * - `excluded`: refused after the body was seen: `too_large`, `not_json`, `pii_uncertain`,
 *   `model_filtered`, `client_aborted`, `request_incomplete`, `upstream_failed`, `bad_body_encoding`, `envelope_invalid`
 *   (`too_large` also when the body or response decodes past the size or ratio limit)
 * - `dropped`: accepted but not confirmed stored: never built because it cost too much
 *   (`cpu_budget`, `memory_budget`: the build's thread CPU time or the worker heap), because the
 *   capture worker failed (`worker_lost`: queued behind a build the worker died on, at most 32 per
 *   failure) or had 32 builds waiting (`worker_queue_full`), never sent (`queue_full`, `nats_down`,
 *   `shutdown`), refused (`publish_error`: no stream takes the subject, or a JetStream error such
 *   as a full stream; `object_store_error`), or sent without an ack in time (`publish_timeout`,
 *   also for acks still awaited at shutdown): such an envelope may still have been stored — an
 *   unknown, counted here rather than as published. Not retried.
 * - `published`: JetStream acknowledged the envelope (reason '')
 */
export type CaptureOutcome = 'not_sampled' | 'queued' | 'skipped' | 'excluded' | 'dropped' | 'published';

/** Added-latency values kept before they are handed to the histogram (a scrape hands them sooner). */
const ADDED_BATCH = 1024;

/**
 * The sidecar's Prometheus metrics, registered on an injected registry. Names follow
 * `shadowplane_sidecar_<thing>_<unit>`; labels are closed sets.
 *
 * The per-request counters are plain numbers on the hot path, handed to prom-client when it
 * collects (a scrape): prom-client hashes and validates the label set on every `inc`, which
 * profiled at a few per cent of the proxy's CPU per request. Added-latency observations are kept
 * the same way, as raw values replayed into the histogram at collect time (or every
 * {@link ADDED_BATCH} values): one `observe` per request, run cold between requests, cost about as
 * much CPU as parsing the request head; replayed in a loop they cost a fraction of that.
 */
export class SidecarMetrics {
  readonly requests: Counter<'outcome'>;
  readonly addedLatency: Histogram;
  readonly captures: Counter<'outcome' | 'reason'>;
  readonly queueDepth: Gauge;
  readonly queueBytes: Gauge;
  readonly lastPublish: Gauge;
  readonly natsConnected: Gauge;
  readonly builds: Counter<'where'>;
  readonly skipMarkers: Counter<'outcome'>;
  readonly servedRetention: Counter<'outcome' | 'reason'>;

  constructor(registry: Registry) {
    const self = this;
    this.requests = new Counter({
      name: 'shadowplane_sidecar_requests_total',
      help: 'Proxied requests by outcome (ok, upstream_error, upstream_timeout, upstream_cut, client_aborted, client_timeout, no_route, bad_request).',
      labelNames: ['outcome'],
      registers: [registry],
      collect() {
        self.flushRequests();
      },
    });
    this.addedLatency = new Histogram({
      name: 'shadowplane_sidecar_added_latency_seconds',
      help: 'Time spent in the sidecar itself per request, upstream excluded: request head → upstream dispatch, plus upstream response head → response head written.',
      buckets: [0.00005, 0.0001, 0.0002, 0.0003, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05],
      registers: [registry],
      collect() {
        self.flushAdded();
      },
    });
    this.captures = new Counter({
      name: 'shadowplane_sidecar_captures_total',
      help: 'Capture decisions and fates by outcome (not_sampled, queued, skipped, excluded, dropped, published) and reason.',
      labelNames: ['outcome', 'reason'],
      registers: [registry],
      collect() {
        self.flushCaptures();
      },
    });
    this.queueDepth = new Gauge({
      name: 'shadowplane_sidecar_capture_queue_depth',
      help: 'Envelopes waiting to be published.',
      registers: [registry],
    });
    this.queueBytes = new Gauge({
      name: 'shadowplane_sidecar_capture_bytes',
      help: 'Bytes held by captures in flight (teed bodies and queued envelopes).',
      registers: [registry],
    });
    this.lastPublish = new Gauge({
      name: 'shadowplane_sidecar_last_publish_timestamp_seconds',
      help: 'Unix time of the last envelope JetStream acknowledged (0 = never): alert when it stops moving while traffic flows.',
      registers: [registry],
    });
    this.natsConnected = new Gauge({
      name: 'shadowplane_sidecar_nats_connected',
      help: '1 while the NATS connection is up, else 0.',
      registers: [registry],
    });
    this.builds = new Counter({
      name: 'shadowplane_sidecar_capture_builds_total',
      help: 'Envelopes built, by where the work ran: inline (a later event-loop turn, small captures) or worker (a worker thread, large captures).',
      labelNames: ['where'],
      registers: [registry],
    });
    this.skipMarkers = new Counter({
      name: 'shadowplane_sidecar_skip_markers_total',
      help: 'Skip markers (a sampled capture skipped for size or an unsure redaction, published so dataset cards can count it) by outcome (published, dropped).',
      labelNames: ['outcome'],
      registers: [registry],
    });
    for (const outcome of ['published', 'dropped'] as const) this.skipMarkers.inc({ outcome }, 0);
    this.servedRetention = new Counter({
      name: 'shadowplane_sidecar_served_retention_total',
      help: 'Served outputs of consenting captures to retain (SHADOWPLANE_SIDECAR_RETAIN_SERVED), by outcome: retained (in the artifact store, named in served.artifact_ref) or failed (the envelope carries artifact_ref null), with reason (no_served, not_2xx, not_json, pii_uncertain, cpu_budget, no_keyring, seal_error, object_store_error).',
      labelNames: ['outcome', 'reason'],
      registers: [registry],
    });
    this.servedRetention.inc({ outcome: 'retained', reason: '' }, 0);
    // every outcome is exported from the start (0), so a rate() over it exists before the first one
    for (const outcome of [
      'ok',
      'upstream_error',
      'upstream_timeout',
      'upstream_cut',
      'client_aborted',
      'client_timeout',
      'no_route',
      'bad_request',
    ] as const)
      this.requests.inc({ outcome }, 0);
    this.lastPublish.set(0);
    this.natsConnected.set(0);
    this.queueDepth.set(0);
    this.queueBytes.set(0);
  }

  private readonly requestCounts = new Map<RequestOutcome, number>();
  private readonly requestsReported = new Map<RequestOutcome, number>();
  private notSampled = 0;
  private notSampledReported = 0;
  private readonly captureCounts = new Map<
    string,
    { outcome: CaptureOutcome; reason: string; n: number; reported: number }
  >();

  private readonly addedValues = new Float64Array(ADDED_BATCH);
  private addedN = 0;

  /** Records the sidecar's own time for one request, in seconds (prom-client sees it at collect). */
  added(seconds: number): void {
    this.addedValues[this.addedN++] = seconds;
    if (this.addedN === ADDED_BATCH) this.flushAdded();
  }

  private flushAdded(): void {
    const h = this.addedLatency;
    for (let i = 0; i < this.addedN; i++) h.observe(this.addedValues[i]!);
    this.addedN = 0;
  }

  /** Counts one proxied request by outcome (a number now; prom-client sees it at collect). */
  request(outcome: RequestOutcome): void {
    this.requestCounts.set(outcome, (this.requestCounts.get(outcome) ?? 0) + 1);
  }

  /** Counts one capture outcome (numbers now; prom-client sees them at collect). */
  capture(outcome: CaptureOutcome, reason = ''): void {
    if (outcome === 'not_sampled') {
      this.notSampled++;
      return;
    }
    const k = `${outcome}|${reason}`;
    const c = this.captureCounts.get(k);
    if (c !== undefined) c.n++;
    else this.captureCounts.set(k, { outcome, reason, n: 1, reported: 0 });
  }

  private flushRequests(): void {
    for (const [outcome, n] of this.requestCounts) {
      const delta = n - (this.requestsReported.get(outcome) ?? 0);
      if (delta > 0) this.requests.inc({ outcome }, delta);
      this.requestsReported.set(outcome, n);
    }
  }

  private flushCaptures(): void {
    if (this.notSampled > this.notSampledReported) {
      this.captures.inc({ outcome: 'not_sampled', reason: '' }, this.notSampled - this.notSampledReported);
      this.notSampledReported = this.notSampled;
    }
    for (const c of this.captureCounts.values()) {
      if (c.n > c.reported) this.captures.inc({ outcome: c.outcome, reason: c.reason }, c.n - c.reported);
      c.reported = c.n;
    }
  }
}
