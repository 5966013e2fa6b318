// The envelope build of a sampled exchange, off the hot path: on the event loop within a small
// budget (buildEnvelopeInline) or on the capture worker thread (buildEnvelope). Its parts live
// beside it: capture-protocol.ts (inputs and results), body-decode.ts, envelope-json.ts,
// served-summary.ts and served-retention.ts.
import { randomUUID } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import type { Keyring } from '@shadowplane/artifacts';
import { itemHash, sha256Hex, type Envelope, type Redaction } from '@shadowplane/contracts';
import { requestModel } from '@shadowplane/providers';
import { decodeBounded } from './body-decode.js';
import type { BuildResult, CaptureInput, RetainedServed } from './capture-protocol.js';
import { cpuBudget } from './cpu-meter.js';
import { serializeEnvelope, textHidesValues } from './envelope-json.js';
import { redactJson } from './redact.js';
import { modelMatches } from './sampling.js';
import { retainServed } from './served-retention.js';
import { summarizeServed } from './served-summary.js';

/**
 * Limits of a build on the event loop: it gives up (`offload`) after {@link INLINE_BUDGET_MS} of
 * redaction or at a string longer than {@link INLINE_MAX_STRING}, so one capture holds the loop
 * for a few milliseconds at most (the slowest rule on its worst input is ~1 µs per byte:
 * `npm run bench:redact`).
 */
const INLINE_BUDGET_MS = 2;
const INLINE_MAX_STRING = 4096;

/**
 * Turns a finished sampled exchange into an Envelope: decodes and parses the request body,
 * redacts PII (excluding the item when the redactor is unsure), applies the rule's model filter,
 * computes `item_hash = itemHash(api, path, redactedBody)`, summarises the served response with
 * libs/providers (usage, TTFT, model and upstream echo), and decides inline vs object store.
 * Runs off the hot path (after the response ended). Never throws.
 *
 * The stored body is the client's exact bytes when nothing was redacted (so a replay is
 * byte-identical), else `JSON.stringify` of the redacted body — also when the text holds more
 * than its parsed value shows ({@link textHidesValues}). `request.bytes` is the size of the body as
 * received from the client. Secrets travel only in headers, which are never captured.
 * `served` is null when the upstream never answered or the response was larger than the tee.
 * With `c.retainServed` (and `keyring`, the artifact keyring) a 2xx served output is redacted like
 * the request (a JSON body whole, a stream's assembled output and tool calls), sealed
 * (libs/artifacts `sealArtifact`, bound to `SERVED_ARTIFACT_BINDING`, the item hash and
 * the TTL: served-retention.ts) and named in `served.artifact_ref`; the publisher puts it before the envelope. A
 * retention that fails leaves `artifact_ref` null, never the capture.
 */
export function buildEnvelope(c: CaptureInput, keyring: Keyring | null = null): BuildResult {
  try {
    return build(c, 'worker', keyring) as BuildResult;
  } catch (e) {
    return { kind: 'excluded', reason: 'envelope_invalid', detail: e instanceof Error ? e.message : String(e) };
  }
}

/**
 * {@link buildEnvelope} for the event loop: the same build within {@link INLINE_BUDGET_MS} and
 * {@link INLINE_MAX_STRING}, or `offload` when it would take longer (the caller builds it on the
 * worker, with the full CPU budget). Never throws.
 */
export function buildEnvelopeInline(c: CaptureInput): BuildResult | { kind: 'offload' } {
  // retaining a served output (redaction of the response, encryption) is worker work
  if (c.retainServed) return { kind: 'offload' };
  try {
    return build(c, 'inline', null);
  } catch (e) {
    return { kind: 'excluded', reason: 'envelope_invalid', detail: e instanceof Error ? e.message : String(e) };
  }
}

function build(
  c: CaptureInput,
  where: 'inline' | 'worker',
  keyring: Keyring | null,
): BuildResult | { kind: 'offload' } {
  const d = c.decision;
  // the worker's budget is CPU time of its thread, from the start of the build (decode and parse count)
  const cpu = where === 'worker' ? cpuBudget(c.cpuBudgetMs) : null;
  let decoded: Buffer;
  if (c.decodedBody) {
    decoded = c.decodedBody;
  } else {
    const raw = c.requestChunks.length === 1 ? c.requestChunks[0]! : Buffer.concat(c.requestChunks, c.requestBytes);
    const dec = decodeBounded(raw, c.contentEncoding, c.maxBodyBytes, c.maxDecodeRatio);
    if (dec.kind === 'too_large')
      return { kind: 'excluded', reason: 'too_large', detail: 'decoded body over the limit' };
    if (dec.kind === 'bad') return { kind: 'excluded', reason: 'bad_body_encoding' };
    decoded = dec.bytes;
  }
  if (!isUtf8(decoded)) return { kind: 'excluded', reason: 'not_json', detail: 'invalid utf-8' };
  const text = decoded.toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { kind: 'excluded', reason: 'not_json' };
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return { kind: 'excluded', reason: 'not_json', detail: 'not an object' };

  const red =
    where === 'inline'
      ? redactJson(body, {
          secretFieldNames: c.secretFieldNames,
          deadline: performance.now() + INLINE_BUDGET_MS,
          maxStringLength: INLINE_MAX_STRING,
        })
      : cpu!.over()
        ? null
        : redactJson(body, { secretFieldNames: c.secretFieldNames, overBudget: cpu!.over });
  if (red === null) return { kind: 'excluded', reason: 'cpu_budget' };
  if (red.overBudget) return where === 'inline' ? { kind: 'offload' } : { kind: 'excluded', reason: 'cpu_budget' };
  if (red.uncertain) return { kind: 'excluded', reason: 'pii_uncertain', detail: red.uncertainReasons.join(',') };
  if (!modelMatches(d.models, requestModel(d.api, red.value))) return { kind: 'excluded', reason: 'model_filtered' };
  const redactions: Redaction[] = [...red.counts.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([type, count]) => ({ type, count }));

  const hash = itemHash(d.api, c.path, red.value);
  // the client's bytes only when they hold nothing but the value redaction saw
  const verbatim = redactions.length === 0 && c.contentEncoding === null && !textHidesValues(decoded, body);
  const stored = verbatim ? decoded : Buffer.from(JSON.stringify(red.value), 'utf8');
  let bodyOut: { name: string; bytes: Buffer } | null = null;
  let bodyRef: Envelope['request']['body_ref'] = null;
  if (stored.byteLength > c.inlineMaxBytes) {
    const sha = sha256Hex(stored);
    bodyOut = { name: `req-${sha}`, bytes: stored };
    bodyRef = { store: c.bodyStore, name: bodyOut.name, sha256: sha, bytes: stored.byteLength };
  }

  const envelope: Envelope = {
    schema: 'shadow.envelope/v1',
    envelope_id: randomUUID(),
    captured_at: c.capturedAt ?? new Date().toISOString(),
    suite: d.suite,
    call_type: d.callType,
    api: d.api,
    method: c.method,
    path: c.path,
    request: {
      body: bodyRef === null ? red.value : null,
      body_ref: bodyRef,
      bytes: c.requestBytes,
      content_type: c.contentType,
    },
    item_hash: hash,
    served: null,
    traffic_class: d.trafficClass,
    retention: { consent: d.retentionConsent },
    expectations: d.expectations,
    redactions,
    source: { placement: c.placement, sidecar_id: c.sidecarId, sticky_key_hash: d.stickyKeyHash },
    ...(d.traceContext ? { trace_context: d.traceContext } : {}),
  };
  const run = summarizeServed(c);
  let retained: RetainedServed | null = null;
  if (run !== null) {
    envelope.served = run.summary;
    if (c.retainServed) {
      retained = retainServed(c, run, hash, keyring, cpu);
      run.summary.artifact_ref = retained.kind === 'sealed' ? `art:${retained.name}` : null;
    }
  } else if (c.retainServed) retained = { kind: 'failed', reason: 'no_served' };
  // No zod re-validation here: it cost ~30% of the build (profiled). Every field is built from
  // validated parts (config/sampler tokens, detectApi, providers usage); the integration tests
  // parse every published envelope with the contract schema.
  return {
    kind: 'envelope',
    envelope,
    data: serializeEnvelope(envelope, bodyRef === null && stored === decoded ? decoded : null),
    body: bodyOut,
    served: retained,
  };
}
