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

/**
 * Streams {@link fastCanonicalJson}`(v)` to `sink` in chunks of about `chunkChars` UTF-16 code
 * units (the last one shorter), never holding the whole text: the concatenation of the chunks is
 * exactly `fastCanonicalJson(v)`. Arrays and objects are walked; each leaf is written as
 * `fastCanonicalJson` writes it. Used to hash and to write bundles of hundreds of MB.
 * Errors: TypeError on a non-finite number (chunks before it may have been emitted).
 */
export function writeCanonicalJson(v: unknown, sink: (chunk: string) => void, chunkChars = 1 << 20): void {
  let buf = '';
  const emit = (x: unknown): void => {
    if (typeof x !== 'object' || x === null) {
      buf += fastCanonicalJson(x);
    } else if (Array.isArray(x)) {
      buf += '[';
      for (let i = 0; i < x.length; i++) {
        if (i > 0) buf += ',';
        const el: unknown = x[i];
        if (el === undefined) buf += 'null';
        else emit(el);
      }
      buf += ']';
    } else {
      const o = x as Record<string, unknown>;
      const keys = Object.keys(o).sort();
      buf += '{';
      let first = true;
      for (const k of keys) {
        const m = o[k];
        if (m === undefined) continue;
        if (!first) buf += ',';
        first = false;
        buf += `${JSON.stringify(k)}:`;
        emit(m);
      }
      buf += '}';
    }
    if (buf.length >= chunkChars) {
      sink(buf);
      buf = '';
    }
  };
  emit(v);
  if (buf.length > 0) sink(buf);
}

/**
 * sha256 (hex) of {@link fastCanonicalJson}; equals contracts `contentHash` for JSON values. The
 * text is hashed as it is streamed ({@link writeCanonicalJson}), so a large part is never one string.
 */
export function fastContentHash(v: unknown): string {
  const h = createHash('sha256');
  writeCanonicalJson(v, (c) => h.update(c));
  return h.digest('hex');
}
