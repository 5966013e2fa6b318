// The envelope's JSON text: whether the client's own body text may stand in it as sent
// (textHidesValues), and the serialisation that copies that text in verbatim (serializeEnvelope).
import type { Envelope } from '@shadowplane/contracts';

/**
 * True when the JSON text `bytes` says more than `value`, the value parsed from it, so it must not
 * be stored as sent:
 * - it holds more object members: a key repeated within one object, whose earlier values
 *   JSON.parse drops — redaction saw only the last one, and an earlier one may hold PII. Every
 *   member of valid JSON has exactly one `:` outside strings (UTF-8 continuation bytes are
 *   ≥ 0x80, so they are never mistaken for `"` or `\\`);
 * - a number overflowed to ±Infinity (`1e400`), which the envelope's value writes as null.
 */
export function textHidesValues(bytes: Buffer, value: unknown): boolean {
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
export function serializeEnvelope(envelope: Envelope, bodyBytes: Buffer | null): Buffer {
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
