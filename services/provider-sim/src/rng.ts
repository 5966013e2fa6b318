import { createHash } from 'node:crypto';

/**
 * Seeded, stateless randomness: every draw is a hash of its inputs, so a value depends only on
 * (seed, what is being drawn, for whom) and never on call order or Math.random.
 */

function digest(parts: readonly (string | number)[]): Buffer {
  const h = createHash('sha256');
  for (const p of parts) h.update(String(p)).update('\u0000');
  return h.digest();
}

/**
 * A uniform number in [0, 1) derived from `parts` (52 bits of sha256).
 * @param parts strings/numbers identifying the draw, e.g. `[seed, 'correct', model, qIndex]`
 */
export function hashUnit(...parts: (string | number)[]): number {
  const d = digest(parts);
  // 20 bits from the first word + 32 bits from the second = 52 bits, exact in a double
  return ((d.readUInt32BE(0) >>> 12) * 2 ** 32 + d.readUInt32BE(4)) / 2 ** 52;
}

/** `n` lowercase hex characters (n ≤ 64) derived from `parts`. */
export function hashHex(n: number, ...parts: (string | number)[]): string {
  return digest(parts).toString('hex').slice(0, n);
}

/** `n` characters of [A-Za-z0-9] derived from `parts` (n ≤ 40); provider-style ids. */
export function hashAlnum(n: number, ...parts: (string | number)[]): string {
  const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const d = Buffer.concat([digest(parts), digest(['alnum', ...parts])]);
  let s = '';
  for (let i = 0; i < n; i++) s += A[d[i]! % 62];
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
