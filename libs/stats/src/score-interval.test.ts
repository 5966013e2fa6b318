import { describe, expect, it } from 'vitest';
import { nonInferiorityDecision, pairedScoreIntervals, studentTPpf, type PairedItem } from './index.js';

/** n singleton items with paired differences d ∈ {−1, 0, 1} (counts given), candidate 30% of the cost with ±5% spread. */
function binary(n: number, worse: number, better: number): PairedItem[] {
  return Array.from({ length: n }, (_, i) => ({
    cluster: i,
    weight: 1,
    qIncumbent: i < worse ? 1 : 0,
    qCandidate: i >= worse && i < worse + better ? 1 : 0,
    costIncumbentUsd: 0.001,
    costCandidateUsd: 0.0003 * (1 + 0.05 * Math.sin(i)),
  }));
}

describe('pairedScoreIntervals', () => {
  it('with no discordant pair the quality interval is the zero-event score bound ±t²/(k − 1 + t²), never [0, 0]', () => {
    for (const n of [8, 20, 300]) {
      const r = pairedScoreIntervals(binary(n, 0, 0), { level: 0.94 });
      const t = studentTPpf(0.97, n - 1);
      expect(r.qualityDelta.point).toBe(0);
      expect(r.qualityDelta.lower).toBeCloseTo(-(t * t) / (n - 1 + t * t), 9);
      expect(r.qualityDelta.upper).toBeCloseTo((t * t) / (n - 1 + t * t), 9);
      expect(r.qualityDelta.degenerate).toBe(true);
    }
  });
  it("8 pairs, two in the candidate's favour, none against: the lower bound stays far below −5 pp", () => {
    const r = pairedScoreIntervals(binary(8, 0, 2), { level: 0.94 });
    expect(r.qualityDelta.point).toBe(0.25);
    expect(r.qualityDelta.lower).toBeLessThan(-0.05);
    expect(
      nonInferiorityDecision({ qualityDelta: r.qualityDelta, costSavings: r.costSavings, marginPp: 5, minSavings: 0.2 })
        .decision,
    ).toBe('inconclusive');
  });
  it('agrees with the normal-theory interval for a large sample with many discordant pairs', () => {
    // 4000 pairs, 600 worse, 560 better: D = −0.01, sd² ≈ (1160/4000 − 0.0001), se = sd/√4000
    const r = pairedScoreIntervals(binary(4000, 600, 560), { level: 0.9 });
    const se = Math.sqrt((1160 / 4000 - 0.0001) / 3999);
    expect(r.qualityDelta.point).toBeCloseTo(-0.01, 12);
    expect(r.qualityDelta.lower).toBeCloseTo(-0.01 - 1.6449 * se, 3);
    expect(r.qualityDelta.upper).toBeCloseTo(-0.01 + 1.6449 * se, 3);
  });
  it('widens for unequal cluster weights (Kish design effect) at the same point estimate', () => {
    const even = pairedScoreIntervals(binary(40, 0, 0), { level: 0.9 });
    const uneven = pairedScoreIntervals(
      binary(40, 0, 0).map((it, i) => ({ ...it, weight: i % 4 === 0 ? 10 : 1 })),
      { level: 0.9 },
    );
    expect(uneven.designEffect).toBeGreaterThan(1.5);
    expect(uneven.qualityDelta.lower).toBeLessThan(even.qualityDelta.lower);
  });
  it('treats a cluster as one unit: 40 items in 8 clusters are no more evidence than 8 clusters', () => {
    const items = binary(40, 0, 0).map((it, i) => ({ ...it, cluster: i % 8 }));
    const r = pairedScoreIntervals(items, { level: 0.94 });
    const t = studentTPpf(0.97, 7);
    expect(r.clusters).toBe(8);
    expect(r.qualityDelta.lower).toBeCloseTo(-(t * t) / (7 + t * t), 9);
  });
  it('continuous quality: a constant −3 pp difference on every item is flagged degenerate', () => {
    const items = binary(30, 0, 0).map((it) => ({ ...it, qIncumbent: 0.8, qCandidate: 0.77 }));
    const r = pairedScoreIntervals(items, { level: 0.9 });
    expect(r.qualityDelta.point).toBeCloseTo(-0.03, 12);
    expect(r.qualityDelta.degenerate).toBe(true);
    expect(r.qualityDelta.lower).toBeLessThan(-0.03);
  });
  it('cost savings: log-ratio interval; a constant cost ratio is degenerate and never clears min_savings', () => {
    const constant = binary(50, 0, 0).map((it) => ({ ...it, costCandidateUsd: 0.0003 }));
    const r = pairedScoreIntervals(constant, { level: 0.9 });
    expect(r.costSavings!.point).toBeCloseTo(0.7, 12);
    expect(r.costSavings!.degenerate).toBe(true);
    const d = nonInferiorityDecision({
      qualityDelta: { lower: 0.01, upper: 0.02 },
      costSavings: r.costSavings,
      marginPp: 5,
      minSavings: 0.2,
    });
    expect(d.decision).toBe('inconclusive');
    expect(d.reasons[0]).toMatch(/^savings_interval_degenerate/);
    const spread = pairedScoreIntervals(binary(50, 0, 0), { level: 0.9 });
    expect(spread.costSavings!.degenerate).toBe(false);
    expect(spread.costSavings!.lower).toBeLessThan(spread.costSavings!.point);
    expect(spread.costSavings!.upper).toBeGreaterThan(spread.costSavings!.point);
  });
  it('returns null savings when a cost is unknown and refuses bad input', () => {
    expect(
      pairedScoreIntervals(
        binary(10, 0, 0).map((it, i) => (i === 3 ? { ...it, costCandidateUsd: Number.NaN } : it)),
        { level: 0.9 },
      ).costSavings,
    ).toBeNull();
    expect(() => pairedScoreIntervals([], { level: 0.9 })).toThrow(RangeError);
    expect(() => pairedScoreIntervals(binary(10, 0, 0), { level: 1 })).toThrow(RangeError);
    expect(() =>
      pairedScoreIntervals(
        binary(10, 0, 0).map((it) => ({ ...it, weight: 0 })),
        { level: 0.9 },
      ),
    ).toThrow(RangeError);
  });
});
