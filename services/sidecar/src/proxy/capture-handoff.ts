// A finished capture's way on from its tee: to the capture processor, and what the build gave to
// the publisher (or to the capture metrics and, for some exclusions, a skip marker).
import type { CaptureInput } from '../capture-protocol.js';
import type { ProxyDeps } from '../proxy.js';
import { skipMarker } from '../skip-marker.js';
import type { CaptureTee } from './capture-tee.js';
import type { Exchange } from './exchange.js';

/** Build results that count as `dropped` (what the build cost, or a worker failure), not `excluded` (what the capture held). */
const DROPPED_BUILDS: ReadonlySet<string> = new Set([
  'cpu_budget',
  'memory_budget',
  'worker_lost',
  'worker_queue_full',
]);

/**
 * Hands the tee `cap` of the finished exchange `ex` (response ended at `endMs`, performance.now
 * clock) to the capture processor and takes the tee's chunks from it; the bytes it held are
 * released when the build is done. A built envelope is queued on the publisher (with its object
 * store body and sealed served output) if the byte budget takes it, else dropped as `queue_full`;
 * an exclusion is counted (`dropped` for what the build cost or a worker failure, else
 * `excluded`), `too_large` and `pii_uncertain` also as a skip marker. A failed served-output
 * retention is counted in `servedRetention`. Never throws; nothing here is awaited by the request.
 */
export function handOffCapture(d: ProxyDeps, ex: Exchange, cap: CaptureTee, endMs: number): void {
  const route = ex.route!;
  const cfg = d.config;
  const input: CaptureInput = {
    decision: cap.decision,
    method: ex.method,
    path: ex.upstreamPath,
    contentType: cap.contentType,
    contentEncoding: cap.contentEncoding,
    requestChunks: cap.chunks,
    requestBytes: cap.bytes,
    response: cap.response,
    startMs: cap.startMs,
    endMs,
    placement: route.placement,
    sidecarId: cfg.sidecarId,
    inlineMaxBytes: cfg.capture.inlineMaxBytes,
    maxBodyBytes: cfg.capture.captureMaxBytes,
    maxDecodeRatio: cfg.capture.maxDecodeRatio,
    cpuBudgetMs: cfg.capture.cpuBudgetMs,
    secretFieldNames: cfg.capture.secretFieldNames,
    bodyStore: d.names.captureBodies,
    // now, not when the (batched) build runs
    capturedAt: new Date().toISOString(),
    retainServed:
      cfg.capture.retainServed !== null && cap.decision.retentionConsent
        ? { ttlDays: cfg.capture.retainServed.ttlDays }
        : null,
  };
  const teed = cap.heldBytes;
  cap.chunks = [];
  cap.response = null;
  void d.processor.process(input).then((built) => {
    // the teed chunks are no longer needed; the envelope (and body) replace them in the budget
    d.publisher.release(teed);
    if (built.kind === 'excluded') {
      // over a budget or lost with the worker: dropped for what it cost or for a failure, not for what it held
      d.metrics.capture(DROPPED_BUILDS.has(built.reason) ? 'dropped' : 'excluded', built.reason);
      // worker_lost is logged once per worker failure, with the number lost (processor.ts)
      if (built.reason === 'too_large' || built.reason === 'pii_uncertain')
        d.publisher.enqueueMarker(skipMarker(d.names, input.decision, built.reason, input.requestBytes));
      if (built.reason === 'envelope_invalid' || built.reason === 'worker_error')
        d.log.warn({ reason: built.reason, detail: built.detail }, 'capture not built');
      return;
    }
    const sealed = built.served?.kind === 'sealed' ? built.served : null;
    if (built.served?.kind === 'failed')
      d.metrics.servedRetention.inc({ outcome: 'failed', reason: built.served.reason });
    const envBytes = built.data.byteLength + (built.body?.bytes.byteLength ?? 0) + (sealed?.bytes.byteLength ?? 0);
    if (!d.publisher.tryHold(envBytes)) {
      d.metrics.capture('dropped', 'queue_full');
      return;
    }
    d.publisher.enqueue({
      subject: d.names.captureSubject(built.suite, built.callType),
      data: built.data,
      msgId: built.envelopeId,
      body:
        built.body === null ? null : { store: d.names.captureBodies, name: built.body.name, bytes: built.body.bytes },
      served: sealed === null ? null : { store: d.names.buckets.artifacts, name: sealed.name, bytes: sealed.bytes },
      heldBytes: envBytes,
    });
  });
}
