import { describe, expect, it } from 'vitest';
import { createRng, MAX_INT_RANGE, Xoshiro128ss } from './rng.js';

// Printed by libs/stats/test/xoshiro128ss-reference.c (the authors' C reference code, compiled with
// cc -O2): first 8 outputs after SplitMix64 seeding, then a 53-bit double from the next two.
const REFERENCE: [number, number[], number][] = [
  [
    0,
    [3737715805, 2584255861, 2876756834, 3286328325, 1553311962, 1625202774, 3260698944, 2754151956],
    0.61726604091350246,
  ],
  [
    1,
    [1695105466, 1423115009, 634581793, 1068227753, 716759206, 4186505319, 3777694425, 2710820970],
    0.66553710122584353,
  ],
  [
    42,
    [1776835114, 4165204688, 17111135, 2317295270, 2792088233, 2554630222, 2940343271, 2244566231],
    0.83064748854815251,
  ],
  [
    9007199254740991,
    [1233166643, 1287031142, 661813442, 2960669951, 2601079046, 1036114921, 2300589652, 2591400186],
    0.3802385326556551,
  ],
];

describe('Xoshiro128ss', () => {
  it.each(REFERENCE)('seed %s reproduces the C reference output bit for bit', (seed, words, dbl) => {
    const g = new Xoshiro128ss(seed);
    expect(Array.from({ length: 8 }, () => g.nextUint32())).toEqual(words);
    expect(g.nextFloat()).toBe(dbl);
  });
  it('nextInt is uniform over a small range (chi-square, 6 bins, 60,000 draws)', () => {
    const g = new Xoshiro128ss(123);
    const bins = new Array<number>(6).fill(0);
    for (let i = 0; i < 60_000; i++) bins[g.nextInt(6)]!++;
    const chi = bins.reduce((s, b) => s + (b - 10_000) ** 2 / 10_000, 0);
    expect(chi).toBeLessThan(20.5); // χ²₅ 0.999 quantile = 20.52
  });
  it('nextInt stays in [0, k) at the largest supported range and rejects larger', () => {
    const g = new Xoshiro128ss(5);
    for (let i = 0; i < 10_000; i++) {
      const x = g.nextInt(MAX_INT_RANGE);
      expect(x >= 0 && x < MAX_INT_RANGE && Number.isInteger(x)).toBe(true);
    }
    expect(() => g.nextInt(MAX_INT_RANGE + 1)).toThrow(RangeError);
    expect(() => g.nextInt(0)).toThrow(RangeError);
  });
});

describe('createRng', () => {
  it('is deterministic per seed and differs across seeds', () => {
    const a = createRng(99);
    const b = createRng(99);
    const c = createRng(100);
    const xs = Array.from({ length: 5 }, () => a());
    expect(Array.from({ length: 5 }, () => b())).toEqual(xs);
    expect(Array.from({ length: 5 }, () => c())).not.toEqual(xs);
  });
  it('returns values in [0, 1) with mean ≈ 1/2 and variance ≈ 1/12', () => {
    const r = createRng(7);
    let s = 0;
    let s2 = 0;
    const n = 100_000;
    for (let i = 0; i < n; i++) {
      const u = r();
      expect(u >= 0 && u < 1).toBe(true);
      s += u;
      s2 += u * u;
    }
    const mean = s / n;
    expect(Math.abs(mean - 0.5)).toBeLessThan(4 * Math.sqrt(1 / 12 / n));
    expect(Math.abs(s2 / n - mean * mean - 1 / 12)).toBeLessThan(0.002);
  });
  it('throws RangeError on a non-integer or unsafe seed', () => {
    expect(() => createRng(1.5)).toThrow(/safe integer/);
    expect(() => createRng(2 ** 60)).toThrow(RangeError);
  });
});
