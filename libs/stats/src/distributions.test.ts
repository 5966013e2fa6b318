import { describe, expect, it } from 'vitest';
import { chiSquarePpf, studentTCdf, studentTPpf } from './index.js';

// Expected values: printed Student t and chi-square tables (e.g. NIST/SEMATECH e-Handbook of
// Statistical Methods §1.3.6.7.2 and §1.3.6.7.4), 5–6 significant digits.
describe('Student t and chi-square quantiles', () => {
  it.each([
    [0.975, 1, 12.706],
    [0.975, 7, 2.365],
    [0.95, 7, 1.895],
    [0.99, 7, 2.998],
    [0.995, 2, 9.925],
    [0.975, 30, 2.042],
    [0.95, 100, 1.66],
  ])('studentTPpf(%f, %i) is the table value %f', (p, df, t) => {
    expect(studentTPpf(p, df)).toBeCloseTo(t, 3);
    expect(studentTPpf(1 - p, df)).toBeCloseTo(-t, 3);
    expect(studentTCdf(studentTPpf(p, df), df)).toBeCloseTo(p, 12);
  });
  it('tends to the normal quantile for large df', () => {
    expect(studentTPpf(0.975, 1e8)).toBeCloseTo(1.959964, 5);
  });
  it.each([
    [0.05, 7, 2.167],
    [0.2, 7, 3.822],
    [0.95, 7, 14.067],
    [0.05, 10, 3.94],
    [0.95, 10, 18.307],
    [0.1, 1, 0.01579],
  ])('chiSquarePpf(%f, %i) is the table value %f', (p, df, x) => {
    expect(chiSquarePpf(p, df)).toBeCloseTo(x, 3);
  });
  it('refuses p outside (0, 1) and df ≤ 0', () => {
    expect(() => studentTPpf(0, 3)).toThrow(RangeError);
    expect(() => studentTPpf(0.5, 0)).toThrow(RangeError);
    expect(() => chiSquarePpf(1, 3)).toThrow(RangeError);
    expect(() => chiSquarePpf(0.5, -1)).toThrow(RangeError);
  });
});
