import * as crypto from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * Canonical JSON per RFC 8785 (JSON Canonicalization Scheme): object keys sorted by UTF-16 code
 * units, no insignificant whitespace, numbers in ECMAScript shortest round-trip form (so `1.0`,
 * `1` and `1e0` all serialise as `1`). `undefined` members are dropped as JSON.stringify does.
 *
 * @param value any JSON-compatible value
 * @returns the canonical UTF-8 text
 * @throws TypeError for non-finite numbers (NaN, Infinity), which JSON cannot represent
 * Source: RFC 8785; implementation from the `canonicalize` package.
 */
export function canonicalJson(value: unknown): string {
  assertFinite(value);
  const out = (canonicalize as unknown as (v: unknown) => string | undefined)(value);
  if (out === undefined) throw new TypeError('value has no JSON representation');
  return out;
}

function assertFinite(v: unknown): void {
  if (!allFinite(v)) throw new TypeError(`non-finite number at ${nonFinitePath(v, '$')}`);
}

// the common case walks without building a path string per member; the path is found on failure
function allFinite(v: unknown): boolean {
  if (typeof v === 'number') return Number.isFinite(v);
  if (v === null || typeof v !== 'object') return true;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!allFinite(v[i])) return false;
    return true;
  }
  for (const k in v) if (Object.hasOwn(v, k) && !allFinite((v as Record<string, unknown>)[k])) return false;
  return true;
}

function nonFinitePath(v: unknown, path: string): string | null {
  if (typeof v === 'number') return Number.isFinite(v) ? null : path;
  if (v === null || typeof v !== 'object') return null;
  for (const [k, x] of Object.entries(v)) {
    const p = nonFinitePath(x, Array.isArray(v) ? `${path}[${k}]` : `${path}.${k}`);
    if (p !== null) return p;
  }
  return null;
}

// one-shot hashing (Node ≥ 20.12) skips the Hash object a stream-style update/digest needs
const oneShot = (crypto as { hash?: (algorithm: string, data: string | Uint8Array, encoding: 'hex') => string }).hash;

/** sha256 of a string (hashed as UTF-8) or bytes, as 64 lowercase hex characters. */
export function sha256Hex(data: string | Uint8Array): string {
  if (oneShot !== undefined) return oneShot('sha256', data, 'hex');
  return crypto.createHash('sha256').update(data).digest('hex');
}

/** sha256 of the canonical JSON of `value` (hex). Used for content-addressed ids. */
export function contentHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/**
 * Request-body fields that do not change what the model is asked, so they are left out of
 * `item_hash`. Top-level keys unless dotted. Why each is volatile:
 * - `user`, `safety_identifier`, `prompt_cache_key`: caller identity / cache routing hints
 * - `metadata`: free-form tags (trace ids, tenant ids) that differ per call
 * - `stream`, `stream_options`: transport, not content — a streamed and a non-streamed call of
 *   the same prompt are the same item
 * - `store`: server-side persistence switch (forced off for shadow calls anyway)
 * - `service_tier`: billing lane, not content
 * - `n`: ignored here because shadow calls always ask for one choice
 */
export const VOLATILE_REQUEST_FIELDS: readonly string[] = Object.freeze([
  'user',
  'safety_identifier',
  'prompt_cache_key',
  'metadata',
  'stream',
  'stream_options',
  'store',
  'service_tier',
  'n',
]);

/**
 * The content hash that identifies one item (one distinct request) across envelopes: sha256 of
 * canonical JSON of `{ api, path, body }` with {@link VOLATILE_REQUEST_FIELDS} removed from the
 * body. Identical requests give an identical hash whatever their ids, timestamps or key order.
 *
 * @param api wire API id, e.g. `openai.chat`
 * @param path request path without query, e.g. `/v1/chat/completions`
 * @param body the parsed (and already redacted) request body; non-objects are hashed as given
 * @returns 64 lowercase hex characters
 * Source: docs/architecture.md "Contracts" (Envelope).
 */
export function itemHash(api: string, path: string, body: unknown): string {
  return contentHash({ api, path, body: stripVolatile(body) });
}

/** Returns a shallow copy of `body` without the volatile top-level fields (non-objects unchanged). */
export function stripVolatile(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (VOLATILE_REQUEST_FIELDS.includes(k)) continue;
    // a member named __proto__ (JSON.parse makes it an own member) must stay one, not become the prototype
    if (k === '__proto__')
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    else out[k] = v;
  }
  return out;
}
