/**
 * Seeded, stateless randomness: every draw is a hash of its inputs, so a value depends only on
 * (seed, what is being drawn, for whom) and never on call order or Math.random. The hash is
 * cyrb53 (a fast non-cryptographic 53-bit string hash, public domain, bryc/code "cyrb53"):
 * these draws must be cheap on the request path, not secret.
 */

/** cyrb53 of `str` with a 32-bit `seed`: an integer in [0, 2^53). */
export function cyrb53(str: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < str.length; i++) {
    const ch = str.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

const key = (parts: readonly (string | number)[]) => parts.join('\u0000');

/**
 * A uniform number in [0, 1) derived from `parts`.
 * @param parts strings/numbers identifying the draw, e.g. `[seed, 'correct', model, qIndex]`
 */
export function hashUnit(...parts: (string | number)[]): number {
  return cyrb53(key(parts)) / 2 ** 53;
}

/** `n` lowercase hex characters derived from `parts`. */
export function hashHex(n: number, ...parts: (string | number)[]): string {
  const k = key(parts);
  let s = '';
  for (let i = 0; s.length < n; i++)
    s += cyrb53(k, i + 1)
      .toString(16)
      .padStart(14, '0');
  return s.slice(0, n);
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `n` characters of [A-Za-z0-9] derived from `parts`; provider-style ids. */
export function hashAlnum(n: number, ...parts: (string | number)[]): string {
  const k = key(parts);
  let s = '';
  for (let i = 0; s.length < n; i++) {
    let h = cyrb53(k, 0x9e37 + i);
    // 8 base-62 digits per 53-bit hash (62^8 < 2^48)
    for (let j = 0; j < 8 && s.length < n; j++) {
      s += ALNUM[h % 62];
      h = Math.floor(h / 62);
    }
  }
  return s;
}

/** A standard normal deviate from two hashed uniforms (Box–Muller). */
export function hashNormal(...parts: (string | number)[]): number {
  const u1 = Math.max(hashUnit(...parts, 'n1'), 1e-12);
  const u2 = hashUnit(...parts, 'n2');
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/**
 * A small fast PRNG (mulberry32) for sequences inside one deterministic computation, e.g. the
 * words of one filler answer. Seed it from {@link hashUnit}.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
