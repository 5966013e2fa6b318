/**
 * Seeded pseudo-random numbers for the bootstrap and simulations: xoshiro128** seeded through
 * SplitMix64. Deterministic across platforms and Node versions (integer arithmetic only).
 *
 * Why not a package: the bootstrap draws ~10⁸ cluster indices per fold; the generator's four
 * 32-bit words are kept in local variables inside that loop (see bootstrap.ts), which a library
 * object with per-call dispatch cannot match. The algorithm is small and checked against the
 * authors' C reference output in rng.test.ts.
 */

const MASK64 = (1n << 64n) - 1n;

/**
 * SplitMix64 (Steele, Lea & Flood 2014; Vigna's reference `splitmix64.c`), used only to expand a
 * seed into generator state, as the xoshiro authors recommend.
 */
function splitmix64(seed: bigint): () => bigint {
  let x = seed & MASK64;
  return () => {
    x = (x + 0x9e3779b97f4a7c15n) & MASK64;
    let z = x;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
    return z ^ (z >> 31n);
  };
}

/**
 * The initial xoshiro128** state for `seed`: two SplitMix64 outputs, each split low word first.
 *
 * Shape: seed, a safe integer (negative seeds are taken modulo 2⁶⁴) → 4 uint32 words, never all zero.
 * Errors: RangeError when seed is not a safe integer.
 */
export function seedState(seed: number): Uint32Array {
  if (!Number.isSafeInteger(seed)) throw new RangeError(`rng: seed must be a safe integer, got ${seed}`);
  const next = splitmix64(BigInt(seed));
  const a = next();
  const b = next();
  const s = new Uint32Array([Number(a & 0xffffffffn), Number(a >> 32n), Number(b & 0xffffffffn), Number(b >> 32n)]);
  if ((s[0]! | s[1]! | s[2]! | s[3]!) === 0) s[0] = 1; // xoshiro's one forbidden state
  return s;
}

/**
 * A seeded xoshiro128** generator exposing 32-bit words, 53-bit uniforms and unbiased integers.
 * Source: Blackman, D. & Vigna, S. (2021), "Scrambled linear pseudorandom number generators",
 * ACM TOMS 47(4); reference `xoshiro128starstar.c` (prng.di.unimi.it).
 */
export class Xoshiro128ss {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /** @param seed safe integer; see {@link seedState}. Throws RangeError otherwise. */
  constructor(seed: number) {
    const s = seedState(seed);
    this.s0 = s[0]!;
    this.s1 = s[1]!;
    this.s2 = s[2]!;
    this.s3 = s[3]!;
  }

  /** The next 32-bit output as an unsigned integer in [0, 2³²). */
  nextUint32(): number {
    const s1 = this.s1;
    const m = Math.imul(s1, 5);
    const result = Math.imul((m << 7) | (m >>> 25), 9) >>> 0;
    const t = s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= s1;
    this.s1 = s1 ^ this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = (this.s3 << 11) | (this.s3 >>> 21);
    return result;
  }

  /** A uniform double in [0, 1) with 53 random bits (two outputs, as genrand_res53). */
  nextFloat(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /**
   * An unbiased integer in [0, k) by Lemire's multiply-and-reject method (Lemire 2019, "Fast
   * random integer generation in an interval", ACM TOMS 29(1)).
   * Errors: RangeError when k is not an integer in [1, 2²¹] (the product must stay exact in a double).
   */
  nextInt(k: number): number {
    if (!Number.isInteger(k) || k < 1 || k > MAX_INT_RANGE)
      throw new RangeError(`rng: range must be an integer in [1, ${MAX_INT_RANGE}], got ${k}`);
    let m = this.nextUint32() * k;
    let l = m % 4294967296;
    if (l < k) {
      const threshold = (4294967296 - k) % k;
      while (l < threshold) {
        m = this.nextUint32() * k;
        l = m % 4294967296;
      }
    }
    return Math.floor(m / 4294967296);
  }
}

/** Largest k for which {@link Xoshiro128ss.nextInt} keeps x·k exact in a double (2²¹). */
export const MAX_INT_RANGE = 2097152;

/**
 * A seeded uniform generator on [0, 1).
 *
 * Shape: seed (safe integer; the same seed gives the same sequence on every platform) → a function
 * returning doubles in [0, 1) with 53 random bits each.
 * Errors: RangeError when seed is not a safe integer.
 * Source: xoshiro128** (Blackman & Vigna 2021) seeded by SplitMix64; see {@link Xoshiro128ss}.
 */
export function createRng(seed: number): () => number {
  const g = new Xoshiro128ss(seed);
  return () => g.nextFloat();
}

/**
 * Seeded standard normal draws: Box–Muller on {@link createRng}'s stream, both values of each
 * pair used (simulation of Brownian paths and of look statistics).
 *
 * Shape: seed (safe integer) → a function returning N(0, 1) doubles; the same seed gives the same
 * sequence on every platform.
 * Errors: RangeError when seed is not a safe integer.
 * Source: Box, G.E.P. & Muller, M.E. (1958), "A note on the generation of random normal
 * deviates", Annals of Mathematical Statistics 29(2), 610–611.
 */
export function createNormalRng(seed: number): () => number {
  const u = createRng(seed);
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    // 1 − u ∈ (0, 1]: the log is finite
    const r = Math.sqrt(-2 * Math.log(1 - u()));
    const a = 2 * Math.PI * u();
    spare = r * Math.sin(a);
    return r * Math.cos(a);
  };
}
