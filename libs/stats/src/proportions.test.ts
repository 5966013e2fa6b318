import { describe, expect, it } from 'vitest';
import { twoProportionZ, wilsonInterval } from './proportions.js';

describe('wilsonInterval', () => {
  it('at 90% is narrower than at 95% and contains the point estimate', () => {
    const [a, b] = wilsonInterval(30, 100, 0.9);
    const [c, d] = wilsonInterval(30, 100);
    expect(a).toBeGreaterThan(c);
    expect(b).toBeLessThan(d);
    expect(a).toBeLessThan(0.3);
    expect(b).toBeGreaterThan(0.3);
  });
  it('matches the closed form by hand for 2/4 at 95% (centre 0.5, symmetric)', () => {
    // z = 1.959963984540054; centre = (2 + z²/2)/(4 + z²) = 0.5; half = z/(4+z²)·√(1 + z²/4)
    const z = 1.959963984540054;
    const half = (z / (4 + z * z)) * Math.sqrt(1 + (z * z) / 4);
    const [lo, hi] = wilsonInterval(2, 4);
    expect(lo).toBeCloseTo(0.5 - half, 14);
    expect(hi).toBeCloseTo(0.5 + half, 14);
  });
  it.each([
    [0, 0, 0.95, /at least 1/],
    [5, 4, 0.95, /exceeds n/],
    [1.5, 4, 0.95, /non-negative integer/],
    [-1, 4, 0.95, /non-negative integer/],
    [1, 4, 1, /confidence/],
    [1, 4, 0, /confidence/],
  ] as const)('throws RangeError for successes=%s n=%s confidence=%s', (x, n, conf, msg) => {
    expect(() => wilsonInterval(x, n, conf)).toThrow(RangeError);
    expect(() => wilsonInterval(x, n, conf)).toThrow(msg);
  });
});

describe('twoProportionZ', () => {
  it('is antisymmetric in the two samples with the same p-value', () => {
    const a = twoProportionZ(45, 100, 30, 100);
    const b = twoProportionZ(30, 100, 45, 100);
    expect(b.z).toBeCloseTo(-a.z, 14);
    expect(b.pTwoSided).toBeCloseTo(a.pTwoSided, 14);
  });
  it('returns z = 0, p = 1 when both samples are all-success or all-failure (no variance)', () => {
    expect(twoProportionZ(0, 10, 0, 20)).toEqual({ z: 0, pTwoSided: 1 });
    expect(twoProportionZ(10, 10, 20, 20)).toEqual({ z: 0, pTwoSided: 1 });
  });
  it('gives z = 0 and p = 1 for equal proportions', () => {
    const r = twoProportionZ(10, 50, 20, 100);
    expect(r.z).toBeCloseTo(0, 14);
    expect(r.pTwoSided).toBeCloseTo(1, 14);
  });
  it('throws RangeError on empty samples or successes above trials', () => {
    expect(() => twoProportionZ(0, 0, 1, 2)).toThrow(RangeError);
    expect(() => twoProportionZ(3, 2, 1, 2)).toThrow(/exceed/);
  });
});
