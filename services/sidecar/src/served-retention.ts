// Retention of a consenting capture's served output (SHADOWPLANE_SIDECAR_RETAIN_SERVED): redacted
// like the request, sealed for the artifact store with its TTL on the capture worker thread
// (retainServed); the publisher puts it before the envelope and, when the put fails, publishes the
// envelope without the reference (withoutArtifactRef). Counted in
// shadowplane_sidecar_served_retention_total (proxy.ts counts a failed seal, publisher.ts the put).
import { isUtf8 } from 'node:buffer';
import { sealArtifact, type Keyring } from '@shadowplane/artifacts';
import { SERVED_ARTIFACT_BINDING, SERVED_ARTIFACT_PURPOSE } from '@shadowplane/contracts';
import { parseResponse } from '@shadowplane/providers';
import type { CaptureInput, RetainedServed } from './capture-protocol.js';
import type { cpuBudget } from './cpu-meter.js';
import { redactJson } from './redact.js';
import type { ServedRun } from './served-summary.js';

/**
 * Seals the served output of a consenting capture for the artifact store: a 2xx only, with the
 * artifact `keyring` (null where the build runs without one: `no_keyring`). A JSON body is parsed,
 * redacted whole with the request's redactor and kept as `response_raw` (JSON text), its output
 * and tool calls read back from the redacted text with the provider dialect; a stream keeps its
 * assembled output and tool calls, redacted. Sealed with libs/artifacts `sealArtifact`, bound to
 * {@link SERVED_ARTIFACT_BINDING}, the item hash `hash`, its purpose and the TTL
 * (`c.retainServed.ttlDays`); redaction stops at the worker's CPU budget `cpu` (`cpu_budget`).
 * Returns the sealed name and bytes, or why not. Never throws.
 */
export function retainServed(
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

/**
 * The envelope JSON `data` with `"artifact_ref":"art:<name>"` written as `"artifact_ref":null`
 * (the served output it names was not stored). The text is unique: the ref holds the sha256 of
 * the sealed bytes and no other field carries it.
 */
export function withoutArtifactRef(data: Uint8Array, name: string): Uint8Array {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const needle = Buffer.from(`"artifact_ref":"art:${name}"`, 'utf8');
  const at = buf.indexOf(needle);
  if (at === -1) return data;
  return Buffer.concat([
    buf.subarray(0, at),
    Buffer.from('"artifact_ref":null', 'utf8'),
    buf.subarray(at + needle.length),
  ]);
}
