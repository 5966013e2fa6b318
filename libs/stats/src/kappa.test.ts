import { describe, expect, it } from 'vitest';
import { cohensKappa } from './kappa.js';

/** Expands a k×k table of counts (rows: rater 1, columns: rater 2) into label pairs. */
function pairsOf(table: number[][]): [string, string][] {
  const out: [string, string][] = [];
  table.forEach((r, i) =>
    r.forEach((c, j) => {
      for (let t = 0; t < c; t++) out.push([`c${i}`, `c${j}`]);
    }),
  );
  return out;
}

// Reference values computed independently of this code: kappa by hand from the table, the standard
// error by the delta method on the multinomial cell shares (numerical gradient of kappa,
// var = Σ p_t (g_t − Σ p g)² / n), which is the asymptotic variance Fleiss, Cohen & Everitt (1969)
// give in closed form. Computed in plain Python, 2026-12-01.
describe('cohensKappa', () => {
  it('matches kappa 0.7 and se 0.071056 on a 2x2 table [[40,10],[5,45]]', () => {
    const r = cohensKappa(
      pairsOf([
        [40, 10],
        [5, 45],
      ]),
    );
    expect(r.n).toBe(100);
    expect(r.observed).toBeCloseTo(0.85, 12);
    expect(r.expected).toBeCloseTo(0.5, 12);
    expect(r.kappa).toBeCloseTo(0.7, 12);
    expect(r.se).toBeCloseTo(0.0710563157, 7);
    expect(r.lower).toBeCloseTo(0.7 - 1.959963985 * 0.0710563157, 6);
    expect(r.upper).toBeCloseTo(0.7 + 1.959963985 * 0.0710563157, 6);
  });

  it('matches kappa 0.428571 and se 0.075959 on the 3x3 table [[53,5,2],[11,14,5],[1,6,3]] (p_o .70, p_e .475)', () => {
    const r = cohensKappa(
      pairsOf([
        [53, 5, 2],
        [11, 14, 5],
        [1, 6, 3],
      ]),
    );
    expect(r.observed).toBeCloseTo(0.7, 12);
    expect(r.expected).toBeCloseTo(0.475, 12);
    expect(r.kappa).toBeCloseTo(0.4285714286, 9);
    expect(r.se).toBeCloseTo(0.0759588315, 7);
  });

  it('is 1 with se 0 when the raters always agree on two categories', () => {
    const r = cohensKappa(
      pairsOf([
        [7, 0],
        [0, 3],
      ]),
    );
    expect(r.kappa).toBe(1);
    expect(r.se).toBeCloseTo(0, 12);
    expect(r.upper).toBe(1);
  });

  it('is null (undefined) when both raters used one single category', () => {
    const r = cohensKappa([
      ['x', 'x'],
      ['x', 'x'],
    ]);
    expect(r.kappa).toBeNull();
    expect(r.lower).toBeNull();
  });

  it('refuses an empty input', () => {
    expect(() => cohensKappa([])).toThrow(RangeError);
  });
});
