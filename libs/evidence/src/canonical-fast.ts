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
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return JSON.stringify(v);
    case 'number':
      if (!Number.isFinite(v)) throw new TypeError('non-finite number in canonical JSON');
      return JSON.stringify(v);
    case 'object': {
      if (v === null) return 'null';
      if (Array.isArray(v)) {
        let out = '[';
        for (let i = 0; i < v.length; i++) {
          if (i > 0) out += ',';
          const x: unknown = v[i];
          out += x === undefined ? 'null' : fastCanonicalJson(x);
        }
        return `${out}]`;
      }
      const o = v as Record<string, unknown>;
      const keys = Object.keys(o).sort();
      let out = '{';
      let first = true;
      for (const k of keys) {
        const x = o[k];
        if (x === undefined) continue;
        if (!first) out += ',';
        first = false;
        out += `${JSON.stringify(k)}:${fastCanonicalJson(x)}`;
      }
      return `${out}}`;
    }
    default:
      throw new TypeError(`no JSON representation for ${typeof v}`);
  }
}

/** sha256 (hex) of {@link fastCanonicalJson}; equals contracts `contentHash` for JSON values. */
export function fastContentHash(v: unknown): string {
  return createHash('sha256').update(fastCanonicalJson(v)).digest('hex');
}
