// The capture build's contract: what the proxy gathers for a sampled exchange (CaptureInput),
// what a build gives back (BuildResult, reduced to a Publishable for the publisher), and the
// messages that carry them to and from the capture worker thread (capture-worker.ts).
import type { Envelope } from '@shadowplane/contracts';
import type { SampleDecision } from './sampling.js';

/** Reasons a sampled request is excluded once its body has been seen (metric label values). */
export type ExcludeReason =
  | 'too_large'
  | 'not_json'
  | 'pii_uncertain'
  | 'model_filtered'
  | 'client_aborted'
  | 'request_incomplete'
  | 'upstream_failed'
  | 'bad_body_encoding'
  | 'envelope_invalid'
  | 'worker_error'
  | 'worker_lost'
  | 'worker_queue_full'
  | 'cpu_budget'
  | 'memory_budget';

/** The teed response of a sampled request: chunk references (no copies) and arrival times. */
export interface TeedResponse {
  status: number;
  /** response headers as `[name, value]` pairs, as received */
  headers: [string, string][];
  chunks: Buffer[];
  /** arrival time of each chunk, ms on the same clock as `startMs` */
  times: number[];
  /** more bytes arrived than the response tee keeps: the served summary is unknown */
  truncated: boolean;
}

/** Everything `buildEnvelope` (capture.ts) needs; gathered on the hot path without parsing anything. */
export interface CaptureInput {
  decision: Extract<SampleDecision, { kind: 'sampled' }>;
  method: string;
  /** path as forwarded upstream, without query */
  path: string;
  contentType: string | null;
  contentEncoding: string | null;
  requestChunks: Buffer[];
  requestBytes: number;
  /** null when the upstream never answered */
  response: TeedResponse | null;
  /** ms (performance.now clock): request head seen, and response end */
  startMs: number;
  endMs: number;
  placement: 'ingress' | 'egress';
  sidecarId: string;
  /** request bodies larger than this (bytes, redacted JSON) go to the object store */
  inlineMaxBytes: number;
  /** most bytes a request body or a response may decode to (either over → excluded `too_large`) */
  maxBodyBytes: number;
  /** most decoded bytes per encoded byte (gzip/deflate/br), above it → excluded `too_large` */
  maxDecodeRatio: number;
  /** CPU budget of one build on the worker thread (its thread CPU time, cpu-meter.ts), ms; over it → excluded `cpu_budget` */
  cpuBudgetMs: number;
  /** extra secret member names for the redactor (see redact.ts) */
  secretFieldNames: readonly string[];
  /** the request body already decoded (by `decodeBounded`, body-decode.ts, when the processor sized it), else null */
  decodedBody?: Buffer | null;
  /** object store holding large bodies (natsNames().captureBodies) */
  bodyStore: string;
  /** ISO time of capture (default now) */
  capturedAt?: string;
  /**
   * retain the served output (SHADOWPLANE_SIDECAR_RETAIN_SERVED on and the request consented):
   * its TTL in days. Absent/null: not retained, and the envelope has no `served.artifact_ref`.
   */
  retainServed?: { ttlDays: number } | null;
}

/**
 * Why a served output that was to be retained was not (metric label values): no served summary
 * (`no_served`: the response was larger than the tee or could not be decoded), a non-2xx status,
 * a body that is not the JSON it claims (`not_json`), an unsure redaction, the CPU budget, no
 * keyring where the build ran, an encryption failure, or the artifact store put failing
 * (publisher.ts).
 */
export type RetainFailReason =
  | 'no_served'
  | 'not_2xx'
  | 'not_json'
  | 'pii_uncertain'
  | 'cpu_budget'
  | 'no_keyring'
  | 'seal_error'
  | 'object_store_error';

/** What became of a capture's served-output retention: sealed (to be put), or not, with why. */
export type RetainedServed =
  { kind: 'sealed'; name: string; bytes: Buffer } | { kind: 'failed'; reason: RetainFailReason };

/** A built envelope: the JSON to publish and, for a large body, the bytes for the object store. */
export interface BuiltEnvelope {
  kind: 'envelope';
  envelope: Envelope;
  /** the envelope serialised as published */
  data: Uint8Array;
  /** when the body goes to the object store: its name and bytes */
  body: { name: string; bytes: Buffer } | null;
  /** the served output's retention, when the capture asked for it (else null) */
  served: RetainedServed | null;
}

/** Result of `buildEnvelope` (capture.ts). */
export type BuildResult = BuiltEnvelope | { kind: 'excluded'; reason: ExcludeReason; detail?: string };

/** What the publisher needs from a built envelope (small enough to pass between threads). */
export interface Publishable {
  kind: 'envelope';
  envelopeId: string;
  suite: string;
  callType: string;
  /** envelope JSON */
  data: Uint8Array;
  body: { name: string; bytes: Buffer } | null;
  /** the served output's retention (artifact store, sealed), when asked for */
  served: RetainedServed | null;
}

/** Result of processing a capture: ready to publish, or excluded with a reason. */
export type ProcessResult = Publishable | { kind: 'excluded'; reason: ExcludeReason; detail?: string };

/** Reduces a {@link BuildResult} to what the publisher needs. */
export function toPublishable(r: BuildResult): ProcessResult {
  if (r.kind === 'excluded') return r;
  return {
    kind: 'envelope',
    envelopeId: r.envelope.envelope_id,
    suite: r.envelope.suite,
    callType: r.envelope.call_type,
    data: r.data,
    body: r.body,
    served: r.served,
  };
}

/**
 * Main thread → capture worker: build `input` (its request body as one chunk; Buffers arrive as
 * Uint8Arrays, structured clone).
 */
export interface WorkerRequest {
  id: number;
  input: CaptureInput;
}

/**
 * Capture worker → main thread: `{started: id}` when the build of `id` begins (the wall-clock
 * backstop runs from then), `{id, result}` when it is done (envelope, body and sealed bytes
 * transferred, not copied; they arrive as Uint8Arrays).
 */
export type WorkerReply = { started: number } | { id: number; result: ProcessResult };
