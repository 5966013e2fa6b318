import { describe, expect, it } from 'vitest';
import { normCdf, normPpf } from './normal.js';

// Expected values printed by CPython 3.11: 0.5*math.erfc(-z/math.sqrt(2)) (C libm erfc) and
// statistics.NormalDist().inv_cdf(p); independent of this code.
const CDF: [number, number][] = [
  [-30, 4.906713927148764e-198],
  [-10, 7.619853024160593e-24],
  [-5, 2.866515718791946e-7],
  [-1.959963984540054, 0.02500000000000002],
  [-1, 0.15865525393145707],
  [-0.3, 0.3820885778110474],
  [0, 0.5],
  [0.2, 0.579259709439103],
  [0.5, 0.6914624612740131],
  [1, 0.8413447460685429],
  [3, 0.9986501019683699],
  [8.3, 1],
];
const PPF: [number, number][] = [
  [1e-300, -37.0470962993612],
  [1e-10, -6.361340902404056],
  [0.001, -3.090232306167813],
  [0.02, -2.0537489106318225],
  [0.3, -0.5244005127080407],
  [0.7, 0.5244005127080407],
  [0.999999, 4.753424308817089],
];

describe('normCdf', () => {
  it.each(CDF)('Φ(%s) matches libm erfc to 1e-14 relative', (z, want) => {
    const got = normCdf(z);
    expect(Math.abs(got - want)).toBeLessThanOrEqual(1e-14 * want);
  });
  it('maps ±∞ to 0 and 1 and NaN to NaN', () => {
    expect(normCdf(Number.NEGATIVE_INFINITY)).toBe(0);
    expect(normCdf(Number.POSITIVE_INFINITY)).toBe(1);
    expect(normCdf(Number.NaN)).toBeNaN();
  });
  it('is symmetric: Φ(z) + Φ(−z) = 1 across interval boundaries of the approximation', () => {
    for (const z of [0.1, 0.46875 * Math.SQRT2, 1, 2.5, 4 * Math.SQRT2, 6, 7.5])
      expect(normCdf(z) + normCdf(-z)).toBeCloseTo(1, 15);
  });
});

describe('normPpf', () => {
  it.each(PPF)('Φ⁻¹(%s) matches Python statistics.NormalDist to 1e-13 relative', (p, want) => {
    expect(Math.abs(normPpf(p) - want)).toBeLessThanOrEqual(1e-13 * Math.abs(want));
  });
  it('inverts normCdf to 1e-12 across the body and both tails', () => {
    for (const p of [1e-200, 1e-20, 1e-6, 0.01, 0.075, 0.2, 0.5, 0.8, 0.925, 0.99, 1 - 1e-9]) {
      expect(Math.abs(normCdf(normPpf(p)) - p)).toBeLessThanOrEqual(1e-12 * Math.min(p, 1));
    }
  });
  it('is antisymmetric: Φ⁻¹(1 − p) = −Φ⁻¹(p)', () => {
    for (const p of [0.01, 0.1, 0.3]) expect(normPpf(1 - p)).toBeCloseTo(-normPpf(p), 12);
  });
  it.each([0, 1, -0.1, 1.5, Number.NaN])('throws RangeError for p = %s (outside the open interval)', (p) => {
    expect(() => normPpf(p)).toThrow(RangeError);
    expect(() => normPpf(p)).toThrow(/open interval \(0, 1\)/);
  });
});
