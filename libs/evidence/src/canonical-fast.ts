import { createHash } from 'node:crypto';

/**
 * Canonical JSON (RFC 8785 / JCS) for plain JSON values, fast enough for hundreds of thousands
 * of rows: object keys sorted by UTF-16 code units (the default `Array.prototype.sort` order, as
 * JCS requires), no whitespace, strings and numbers as ECMAScript `JSON.stringify` writes them
 * (which is what JCS specifies). Gives the same text as contracts `canonicalJson` for JSON values;
 * `undefined` members are dropped.
 * Errors: TypeError on a non-finite number.
 */
export function fastCanonicalJson(v: unknown): string {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new TypeError('non-finite number in canonical JSON');
    return JSON.stringify(v);
  }
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : fastCanonicalJson(x))).join(',')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${fastCanonicalJson(o[k])}`).join(',')}}`;
  }
  throw new TypeError(`no JSON representation for ${typeof v}`);
}

/** sha256 (hex) of {@link fastCanonicalJson}; equals contracts `contentHash` for JSON values. */
export function fastContentHash(v: unknown): string {
  return createHash('sha256').update(fastCanonicalJson(v)).digest('hex');
}
