/**
 * The skip marker (`shadow.capture_skip/v1`, libs/contracts): published instead of an envelope
 * when a sampled capture is skipped for its size or for an unsure redaction, so a frozen
 * dataset's card can count what it could not hold. It carries no request content (nothing of a
 * too-large or unsure body leaves the pod) and goes through the same bounded, non-blocking
 * publisher as envelopes (architecture.md honesty rule 1): a full queue drops it, counted in
 * `shadowplane_sidecar_skip_markers_total{outcome="dropped"}`.
 */
import { randomUUID } from 'node:crypto';
import type { CaptureSkipMarker, NatsNames } from '@shadowplane/contracts';
import type { SampleDecision } from './sampling.js';

/** A marker ready for the publisher: subject, JSON bytes and its Nats-Msg-Id. */
export interface SkipMarkerJob {
  subject: string;
  data: Uint8Array;
  msgId: string;
}

/**
 * Builds the marker of a skipped capture.
 * @param bytes the request size known when the skip was decided (Content-Length or bytes read), null if unknown
 */
export function skipMarker(
  names: NatsNames,
  decision: Extract<SampleDecision, { kind: 'sampled' }>,
  reason: CaptureSkipMarker['reason'],
  bytes: number | null,
): SkipMarkerJob {
  const m: CaptureSkipMarker = {
    schema: 'shadow.capture_skip/v1',
    marker_id: randomUUID(),
    at: new Date().toISOString(),
    suite: decision.suite,
    call_type: decision.callType,
    reason,
    traffic_class: decision.trafficClass,
    bytes,
  };
  return {
    subject: names.captureSkipSubject(decision.suite, decision.callType),
    data: new TextEncoder().encode(JSON.stringify(m)),
    msgId: m.marker_id,
  };
}
