import { randomUUID } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { sealArtifact, type Keyring } from '@shadowplane/artifacts';
import {
  itemHash,
  sha256Hex,
  SERVED_ARTIFACT_BINDING,
  SERVED_ARTIFACT_PURPOSE,
  type Envelope,
  type Redaction,
} from '@shadowplane/contracts';
import { createResponseParser, parseResponse, requestModel, type ParsedResponse } from '@shadowplane/providers';
import { redactJson } from './redact.js';
import { cpuBudget } from './cpu-meter.js';
import { modelMatches, type SampleDecision } from './sampling.js';

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

/** Everything {@link buildEnvelope} needs; gathered on the hot path without parsing anything. */
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
  /** the request body already decoded (by {@link decodeBounded} when the processor sized it), else null */
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

/** Result of {@link buildEnvelope}. */
export type BuildResult = BuiltEnvelope | { kind: 'excluded'; reason: ExcludeReason; detail?: string };

/**
 * Limits of a build on the event loop: it gives up (`offload`) after {@link INLINE_BUDGET_MS} of
 * redaction or at a string longer than {@link INLINE_MAX_STRING}, so one capture holds the loop
 * for a few milliseconds at most (the slowest rule on its worst input is ~1 µs per byte:
 * `npm run bench:redact`).
 */
const INLINE_BUDGET_MS = 2;
const INLINE_MAX_STRING = 4096;

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

/** What {@link decodeBounded} found: the decoded bytes, over a limit, or not decodable. */
export type Decoded = { kind: 'ok'; bytes: Buffer } | { kind: 'too_large' } | { kind: 'bad' };

/**
 * Decodes a body in one content coding (identity, gzip/x-gzip, deflate, br) without ever producing
 * more than `min(max, buf.length × ratio)` bytes: zlib stops at that output length, so a bomb
 * costs at most the limit in memory and the time to inflate it. Unknown codings are `bad`.
 */
export function decodeBounded(buf: Buffer, encoding: string | null, max: number, ratio: number): Decoded {
  const enc = (encoding ?? 'identity').trim().toLowerCase();
  if (enc === 'identity' || enc === '')
    return buf.byteLength > max ? { kind: 'too_large' } : { kind: 'ok', bytes: buf };
  const limit = Math.max(1, Math.min(max, Math.floor(buf.byteLength * ratio)));
  try {
    if (enc === 'gzip' || enc === 'x-gzip') return { kind: 'ok', bytes: gunzipSync(buf, { maxOutputLength: limit }) };
    if (enc === 'deflate') return { kind: 'ok', bytes: inflateSync(buf, { maxOutputLength: limit }) };
    if (enc === 'br') return { kind: 'ok', bytes: brotliDecompressSync(buf, { maxOutputLength: limit }) };
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' ? { kind: 'too_large' } : { kind: 'bad' };
  }
  return { kind: 'bad' };
}

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
 * (libs/artifacts `sealArtifact`, bound to {@link SERVED_ARTIFACT_BINDING}, the item hash and
 * the TTL) and named in `served.artifact_ref`; the publisher puts it before the envelope. A
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
  const run = served(c);
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
    data: serialize(envelope, bodyRef === null && stored === decoded ? decoded : null),
    body: bodyOut,
    served: retained,
  };
}

/**
 * True when the JSON text `bytes` says more than `value`, the value parsed from it, so it must not
 * be stored as sent:
 * - it holds more object members: a key repeated within one object, whose earlier values
 *   JSON.parse drops — redaction saw only the last one, and an earlier one may hold PII. Every
 *   member of valid JSON has exactly one `:` outside strings (UTF-8 continuation bytes are
 *   ≥ 0x80, so they are never mistaken for `"` or `\\`);
 * - a number overflowed to ±Infinity (`1e400`), which the envelope's value writes as null.
 */
function textHidesValues(bytes: Buffer, value: unknown): boolean {
  let colons = 0;
  for (let i = 0, n = bytes.length; i < n; i++) {
    const b = bytes[i];
    if (b === 0x22) {
      for (i++; i < n; i++) {
        const x = bytes[i];
        if (x === 0x5c) i++;
        else if (x === 0x22) break;
      }
    } else if (b === 0x3a) colons++;
  }
  return colons !== countMembers(value);
}

/** Object members in `v`, at every depth; NaN when it holds a number JSON cannot write (1e400 parses to Infinity). */
function countMembers(v: unknown): number {
  if (typeof v === 'number') return Number.isFinite(v) ? 0 : NaN;
  if (v === null || typeof v !== 'object') return 0;
  let n = 0;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) n += countMembers(v[i]);
    return n;
  }
  for (const k in v) if (Object.hasOwn(v, k)) n += 1 + countMembers((v as Record<string, unknown>)[k]);
  return n;
}

/** How an inline request body starts in the envelope JSON when it is written as `null`. */
const BODY_SLOT = ',"request":{"body":null,';

/**
 * `JSON.stringify(envelope)` as UTF-8 bytes, with `bodyBytes` — the client's own JSON text of
 * `request.body` (valid UTF-8, already parsed), when nothing was redacted — copied in verbatim
 * instead of serialising the value just parsed from it and encoding it again. Re-serialising and
 * re-encoding the body were the largest costs of a build (profiled: about a sixth of the CPU per
 * capture for a 1 KB chat request with non-Latin-1 text). Both forms parse to the same value. The
 * slot is found by text: the keys before `request` are fixed and no string value can hold an
 * unescaped `"`, so the first match is the field itself.
 */
function serialize(envelope: Envelope, bodyBytes: Buffer | null): Buffer {
  if (bodyBytes === null) return Buffer.from(JSON.stringify(envelope), 'utf8');
  const body = envelope.request.body;
  envelope.request.body = null;
  const json = JSON.stringify(envelope);
  envelope.request.body = body;
  const at = json.indexOf(BODY_SLOT);
  if (at === -1) return Buffer.from(JSON.stringify(envelope), 'utf8');
  const from = at + BODY_SLOT.length - 5; // the "null" and its comma
  return Buffer.concat([
    Buffer.from(json.slice(0, from), 'utf8'),
    bodyBytes,
    Buffer.from(json.slice(from + 4), 'utf8'),
  ]);
}

/** The served summary with what retention needs: the parse and, for a JSON body, its decoded bytes. */
interface ServedRun {
  summary: NonNullable<Envelope['served']>;
  parsed: ParsedResponse;
  /** the decoded response bytes (kept for retention: a JSON body is redacted whole) */
  plain: Buffer | null;
}

function served(c: CaptureInput): ServedRun | null {
  const r = c.response;
  if (r === null || r.truncated) return null;
  const enc = r.headers.find(([k]) => k.toLowerCase() === 'content-encoding')?.[1] ?? null;
  const parser = createResponseParser(c.decision.api, { status: r.status, headers: r.headers }, c.startMs);
  let plain: Buffer | null = null;
  if (enc === null || enc.trim().toLowerCase() === 'identity') {
    for (let i = 0; i < r.chunks.length; i++) parser.push(r.chunks[i]!, r.times[i]);
    if (c.retainServed) plain = r.chunks.length === 1 ? r.chunks[0]! : Buffer.concat(r.chunks);
  } else {
    // compressed response: no per-chunk timing survives decompression, so no TTFT
    const dec = decodeBounded(Buffer.concat(r.chunks), enc, c.maxBodyBytes, c.maxDecodeRatio);
    if (dec.kind !== 'ok') return null;
    plain = dec.bytes;
    parser.push(dec.bytes);
  }
  const p = parser.end(c.endMs);
  return {
    summary: {
      status: r.status,
      upstream: p.upstream,
      model: p.model,
      latency_ms: round3(Math.max(0, c.endMs - c.startMs)),
      ttft_ms: p.ttftMs === null ? null : round3(p.ttftMs),
      usage: p.usage,
      finish_reason: p.finishReason,
      abandoned: p.abandoned,
      stream: p.stream,
    },
    parsed: p,
    plain,
  };
}

/**
 * Seals the served output of a consenting capture for the artifact store (see
 * {@link buildEnvelope}). A JSON body is parsed, redacted whole with the request's redactor and
 * kept as `response_raw` (JSON text), its output and tool calls read back from the redacted text
 * with the provider dialect; a stream keeps its assembled output and tool calls, redacted. Never
 * throws.
 */
function retainServed(
  c: CaptureInput,
  run: ServedRun,
  hash: string,
  keyring: Keyring | null,
  cpu: ReturnType<typeof cpuBudget> | null,
): RetainedServed {
  if (keyring === null) return { kind: 'failed', reason: 'no_keyring' };
  const st = run.summary.status;
  if (st < 200 || st >= 300) return { kind: 'failed', reason: 'not_2xx' };
  let value: unknown;
  if (run.parsed.stream) {
    value = { output_text: run.parsed.outputText, tool_calls: run.parsed.toolCalls };
  } else {
    if (run.plain === null || !isUtf8(run.plain)) return { kind: 'failed', reason: 'not_json' };
    try {
      value = JSON.parse(run.plain.toString('utf8'));
    } catch {
      return { kind: 'failed', reason: 'not_json' };
    }
  }
  if (cpu?.over()) return { kind: 'failed', reason: 'cpu_budget' };
  const red = redactJson(value, { secretFieldNames: c.secretFieldNames, ...(cpu ? { overBudget: cpu.over } : {}) });
  if (red.overBudget) return { kind: 'failed', reason: 'cpu_budget' };
  if (red.uncertain) return { kind: 'failed', reason: 'pii_uncertain' };
  let body: { output_text: string; tool_calls: { name: string; arguments: string }[]; response_raw?: string };
  if (run.parsed.stream) {
    body = red.value as { output_text: string; tool_calls: { name: string; arguments: string }[] };
  } else {
    const raw = JSON.stringify(red.value);
    const back = parseResponse(c.decision.api, { status: st, headers: [] }, raw);
    body = { output_text: back.outputText, tool_calls: back.toolCalls, response_raw: raw };
  }
  try {
    const sealed = sealArtifact(keyring, body, {
      ...SERVED_ARTIFACT_BINDING,
      item_hash: hash,
      purpose: SERVED_ARTIFACT_PURPOSE,
      ttl_days: c.retainServed!.ttlDays,
    });
    return {
      kind: 'sealed',
      name: sealed.name,
      bytes: Buffer.from(sealed.bytes.buffer, sealed.bytes.byteOffset, sealed.bytes.byteLength),
    };
  } catch {
    return { kind: 'failed', reason: 'seal_error' };
  }
}

function round3(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
