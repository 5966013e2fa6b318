// The capture tee of one sampled exchange (see CaptureTee).
import { performance } from 'node:perf_hooks';
import type { NatsNames } from '@shadowplane/contracts';
import type { TeedResponse } from '../capture-protocol.js';
import type { SidecarMetrics } from '../metrics.js';
import type { CapturePublisher } from '../publisher.js';
import type { SampleDecision } from '../sampling.js';
import { skipMarker } from '../skip-marker.js';

/**
 * The tee of one sampled exchange: references to request and response chunks, bounded by the
 * per-capture ceilings and the publisher's global byte budget. `abandon` releases everything and
 * counts why.
 */
export class CaptureTee {
  chunks: Buffer[] = [];
  bytes = 0;
  heldBytes = 0;
  active = true;
  requestComplete = false;
  contentType: string | null = null;
  contentEncoding: string | null = null;
  response: TeedResponse | null = null;
  /** why the tee was given up, for the echo header */
  abandonedFor: string | null = null;
  private responseBytes = 0;

  constructor(
    readonly decision: Extract<SampleDecision, { kind: 'sampled' }>,
    private readonly publisher: CapturePublisher,
    private readonly metrics: SidecarMetrics,
    private readonly maxRequestBytes: number,
    private readonly maxResponseBytes: number,
    readonly startMs: number,
    /** names for the skip marker of a body that outgrew the capture (skip-marker.ts) */
    private readonly names?: NatsNames,
  ) {}

  /** Tees one request body chunk (a reference), or abandons the capture past its ceiling or the budget. */
  pushRequest(chunk: Buffer): void {
    if (!this.active) return;
    this.bytes += chunk.byteLength;
    if (this.bytes > this.maxRequestBytes) return this.abandon('too_large');
    if (!this.publisher.tryHold(chunk.byteLength)) return this.abandon('queue_full');
    this.heldBytes += chunk.byteLength;
    this.chunks.push(chunk);
  }

  /** Starts teeing the response: its status and the relayed fields as `[name, value]` pairs. */
  startResponse(status: number, headers: [string, string][]): void {
    if (!this.active) return;
    this.response = { status, headers, chunks: [], times: [], truncated: false };
  }

  /** Tees one decoded response body chunk with its arrival time; past a ceiling the teed response is truncated. */
  pushResponse(chunk: Buffer): void {
    const r = this.response;
    if (!this.active || r === null || r.truncated) return;
    this.responseBytes += chunk.byteLength;
    if (this.responseBytes > this.maxResponseBytes || !this.publisher.tryHold(chunk.byteLength)) {
      // the served summary becomes unknown (served: null); the request is still captured
      r.truncated = true;
      let freed = 0;
      for (const c of r.chunks) freed += c.byteLength;
      this.publisher.release(freed);
      this.heldBytes -= freed;
      r.chunks = [];
      r.times = [];
      return;
    }
    this.heldBytes += chunk.byteLength;
    r.chunks.push(chunk);
    r.times.push(performance.now());
  }

  /** Gives up the capture: frees the tee and counts the reason (excluded, or dropped for the budget). */
  abandon(reason: 'too_large' | 'queue_full' | 'client_aborted' | 'request_incomplete' | 'upstream_failed'): void {
    if (!this.active) return;
    this.active = false;
    this.abandonedFor = reason;
    this.publisher.release(this.heldBytes);
    this.heldBytes = 0;
    this.chunks = [];
    this.response = null;
    if (reason === 'too_large' && this.names)
      this.publisher.enqueueMarker(skipMarker(this.names, this.decision, 'too_large', this.bytes));
    this.metrics.capture(reason === 'queue_full' ? 'dropped' : 'excluded', reason);
  }
}
