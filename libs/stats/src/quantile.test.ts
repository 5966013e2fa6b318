import { describe, expect, it } from 'vitest';
import { quantileType7 } from './quantile.js';

describe('quantileType7', () => {
  // numpy.percentile([1, 2, 3, 4], [0, 10, 50, 95, 100]) = [1, 1.3, 2.5, 3.85, 4]
  it.each([
    [0, 1],
    [0.1, 1.3],
    [0.5, 2.5],
    [0.95, 3.85],
    [1, 4],
  ])('p = %s of [1, 2, 3, 4] is %s (linear interpolation between order statistics)', (p, want) => {
    expect(quantileType7([1, 2, 3, 4], p)).toBeCloseTo(want, 14);
    expect(quantileType7(Float64Array.from([1, 2, 3, 4]), p)).toBeCloseTo(want, 14);
  });
  it('returns the only element of a one-element sample for every p', () => {
    expect(quantileType7([7], 0)).toBe(7);
    expect(quantileType7([7], 0.05)).toBe(7);
    expect(quantileType7([7], 1)).toBe(7);
  });
  it('returns exactly a repeated value between equal neighbours', () => {
    expect(quantileType7([0.1, 0.1, 0.1, 0.2], 0.4)).toBe(0.1);
  });
  it('throws RangeError on an empty sample or p outside [0, 1]', () => {
    expect(() => quantileType7([], 0.5)).toThrow(/empty/);
    expect(() => quantileType7([1, 2], 1.01)).toThrow(RangeError);
    expect(() => quantileType7([1, 2], Number.NaN)).toThrow(RangeError);
  });
});
