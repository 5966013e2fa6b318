import { describe, expect, it } from 'vitest';
import { createNormalRng } from './rng.js';
import { normCdf, normPpf } from './normal.js';
import { studentTCdf, studentTPpf, studentTUpperPpf } from './distributions.js';
import { pairedScoreIntervals } from './score-interval.js';
import {
  GROUP_SEQUENTIAL_MAX_LOOKS,
  conditionalPower,
  obrienFlemingSpending,
  spendingBoundaries,
} from './group-sequential.js';

const equal = (k: number): number[] => Array.from({ length: k }, (_, i) => (i + 1) / k);

describe('obrienFlemingSpending', () => {
  it('spends nothing at 0, all of α at 1, and is increasing', () => {
    expect(obrienFlemingSpending(0, 0.025)).toBe(0);
    expect(obrienFlemingSpending(1, 0.025)).toBeCloseTo(0.025, 12);
    const xs = [0.1, 0.2, 0.5, 0.9, 1].map((t) => obrienFlemingSpending(t, 0.05));
    for (let i = 1; i < xs.length; i++) expect(xs[i]!).toBeGreaterThan(xs[i - 1]!);
    // α(0.2) = 2Φ(−z_{0.9875}/√0.2) for one-sided α = 0.025
    expect(obrienFlemingSpending(0.2, 0.025)).toBeCloseTo(2 * normCdf(-normPpf(0.9875) / Math.sqrt(0.2)), 15);
  });

  it('refuses t outside [0, 1] and α outside (0, 0.5)', () => {
    expect(() => obrienFlemingSpending(1.1, 0.025)).toThrow(RangeError);
    expect(() => obrienFlemingSpending(0.5, 0.5)).toThrow(RangeError);
  });
});

describe('spendingBoundaries', () => {
  it("matches the published Lan–DeMets O'Brien–Fleming boundaries for K = 5 equal looks, one-sided α = 0.025", () => {
    // published: gsDesign sfLDOF, k = 5, test.type = 1, alpha = 0.025: 4.8769 3.3569 2.6803 2.2898 2.0310
    const b = spendingBoundaries(equal(5), 0.025);
    const published = [4.8769, 3.3569, 2.6803, 2.2898, 2.031];
    b.critical.forEach((c, i) => expect(Math.abs(c - published[i]!)).toBeLessThan(1e-3));
    expect(b.spent.at(-1)).toBeCloseTo(0.025, 12);
  });

  it('one look is the fixed-n one-sided critical value, at t = 1 or as a closing look', () => {
    expect(spendingBoundaries([1], 0.0304).critical[0]).toBeCloseTo(normPpf(1 - 0.0304), 10);
    expect(spendingBoundaries([0.6], 0.0304, { lastSpendsAll: true }).critical[0]).toBeCloseTo(normPpf(1 - 0.0304), 10);
    const closing = spendingBoundaries([0.3, 0.6, 0.8], 0.025, { lastSpendsAll: true });
    expect(closing.spent.at(-1)).toBe(0.025);
    expect(closing.critical.slice(0, 2)).toEqual(spendingBoundaries([0.3, 0.6, 0.8], 0.025).critical.slice(0, 2));
  });

  it('crossing probabilities by simulation equal the spent α at every look (unequal spacing)', () => {
    const fr = [0.15, 0.4, 0.55, 0.8, 1];
    const alpha = 0.05;
    const b = spendingBoundaries(fr, alpha);
    const z = createNormalRng(20261205);
    const n = 200_000;
    const crossedBy = new Array<number>(fr.length).fill(0);
    for (let i = 0; i < n; i++) {
      let B = 0;
      let prev = 0;
      for (let k = 0; k < fr.length; k++) {
        B += Math.sqrt(fr[k]! - prev) * z();
        prev = fr[k]!;
        if (B / Math.sqrt(fr[k]!) >= b.critical[k]!) {
          for (let j = k; j < fr.length; j++) crossedBy[j]!++;
          break;
        }
      }
    }
    for (let k = 0; k < fr.length; k++) {
      const p = b.spent[k]!;
      const sd = Math.sqrt((p * (1 - p)) / n);
      // 4 MC sd, plus a floor for the early looks whose spend is a handful of paths
      expect(Math.abs(crossedBy[k]! / n - p)).toBeLessThan(4 * sd + 2e-5);
    }
  });

  it('many looks: boundaries decrease, stay finite, and the last one stays near the fixed-n value', () => {
    const b = spendingBoundaries(equal(40), 0.0304);
    for (let i = 1; i < b.critical.length; i++) expect(b.critical[i]!).toBeLessThan(b.critical[i - 1]!);
    expect(b.critical.every(Number.isFinite)).toBe(true);
    const zFixed = normPpf(1 - 0.0304);
    expect(b.critical.at(-1)!).toBeGreaterThan(zFixed);
    expect(b.critical.at(-1)!).toBeLessThan(zFixed + 0.3);
    // extremely early looks are capped rather than infinite (JSON-safe)
    expect(spendingBoundaries(equal(GROUP_SEQUENTIAL_MAX_LOOKS), 0.0304).critical[0]).toBe(15);
  });

  it('refuses unordered, out-of-range or too many fractions', () => {
    expect(() => spendingBoundaries([], 0.025)).toThrow(RangeError);
    expect(() => spendingBoundaries([0.5, 0.4, 1], 0.025)).toThrow(RangeError);
    expect(() => spendingBoundaries([0.5, 1.2], 0.025)).toThrow(RangeError);
    expect(() => spendingBoundaries(equal(GROUP_SEQUENTIAL_MAX_LOOKS + 1), 0.025)).toThrow(RangeError);
    expect(() => spendingBoundaries([1], 0.6)).toThrow(RangeError);
  });
});

describe('conditionalPower', () => {
  it('is the B-value formula, 0/1 at the last look, and 1 on an infinite drift', () => {
    // z = 1 at t = 0.25, θ = 3, c_K = 2: Φ((0.5 + 2.25 − 2)/√0.75)
    expect(conditionalPower({ z: 1, t: 0.25, drift: 3, finalCritical: 2 })).toBeCloseTo(
      normCdf(0.75 / Math.sqrt(0.75)),
      14,
    );
    expect(conditionalPower({ z: 2.1, t: 1, drift: 0, finalCritical: 2 })).toBe(1);
    expect(conditionalPower({ z: 1.9, t: 1, drift: 0, finalCritical: 2 })).toBe(0);
    expect(conditionalPower({ z: 0, t: 0.5, drift: Infinity, finalCritical: 2 })).toBe(1);
    expect(() => conditionalPower({ z: 0, t: 0, drift: 1, finalCritical: 2 })).toThrow(RangeError);
  });

  it('agrees with a simulation of the remaining increment', () => {
    const z = createNormalRng(7);
    const o = { z: 0.8, t: 0.4, drift: 2.5, finalCritical: 2.05 };
    const n = 100_000;
    let hit = 0;
    for (let i = 0; i < n; i++) {
      const B1 = o.z * Math.sqrt(o.t) + o.drift * (1 - o.t) + Math.sqrt(1 - o.t) * z();
      if (B1 >= o.finalCritical) hit++;
    }
    const p = conditionalPower(o);
    expect(Math.abs(hit / n - p)).toBeLessThan(4 * Math.sqrt((p * (1 - p)) / n));
  });
});

describe('studentTUpperPpf and pairedScoreIntervals({ oneSidedTail })', () => {
  it('matches the ordinary quantile where both are defined and keeps tiny tails', () => {
    for (const df of [1, 7, 30, 400]) {
      expect(studentTUpperPpf(0.025, df)).toBeCloseTo(studentTPpf(0.975, df), 9);
      const t = studentTUpperPpf(1e-20, df);
      expect(Number.isFinite(t)).toBe(true);
      // P(T ≥ t) = 1 − CDF(t); the CDF rounds to 1 here, so check one decade either side instead
      expect(studentTUpperPpf(1e-19, df)).toBeLessThan(t);
      expect(studentTUpperPpf(1e-21, df)).toBeGreaterThan(t);
    }
    expect(1 - studentTCdf(studentTUpperPpf(0.001, 12), 12)).toBeCloseTo(0.001, 10);
  });

  it('a one-sided tail gives the interval of the corresponding two-sided level', () => {
    const items = Array.from({ length: 40 }, (_, i) => ({
      cluster: i,
      weight: 1 + (i % 3),
      qIncumbent: i % 4 === 0 ? 0 : 1,
      qCandidate: i % 5 === 0 ? 0 : 1,
      costIncumbentUsd: 0.002 + 0.0001 * (i % 7),
      costCandidateUsd: 0.001 + 0.0001 * (i % 5),
    }));
    const a = pairedScoreIntervals(items, { level: 0.95 });
    const b = pairedScoreIntervals(items, { oneSidedTail: 0.025 });
    expect(b.qualityDelta.lower).toBeCloseTo(a.qualityDelta.lower, 8);
    expect(b.qualityDelta.upper).toBeCloseTo(a.qualityDelta.upper, 8);
    expect(b.costSavings!.lower).toBeCloseTo(a.costSavings!.lower, 8);
    expect(b.level).toBeCloseTo(0.95, 12);
    // a tail far below double precision of 1 − p still gives a (wide) finite interval
    const c = pairedScoreIntervals(items, { oneSidedTail: 1e-30 });
    expect(c.qualityDelta.lower).toBeLessThan(a.qualityDelta.lower);
    expect(() => pairedScoreIntervals(items, { oneSidedTail: 0.6 })).toThrow(RangeError);
  });
});
