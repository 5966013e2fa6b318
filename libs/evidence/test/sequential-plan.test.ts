import { describe, expect, it } from 'vitest';
import { groupSequentialSettling, stoppingSpendPlan, type StoppingSpendInput } from '../src/sequential-plan.js';
import { spendingBoundaries } from '@shadowplane/stats';

const base: StoppingSpendInput = {
  rule: 'sequential',
  items: 500,
  batchItems: 25,
  marginPp: 5,
  minSavings: 0.2,
  alphaAdjusted: 0.0304,
  perItemWorstCaseUsd: 0.002,
  costRatios: [0.3],
  sdDiff: Math.sqrt(0.5),
  campaigns: 60,
};
const byScenario = (p: ReturnType<typeof stoppingSpendPlan>) =>
  Object.fromEntries(p.sequential.scenarios.map((s) => [s.scenario, s]));

describe('stoppingSpendPlan', () => {
  it('the worst case is the same under both rules; fixed expects its worst case', () => {
    const p = stoppingSpendPlan(base);
    expect(p.worst_case_items).toBe(500);
    expect(p.worst_case_usd).toBeCloseTo(1, 12);
    expect(p.fixed).toEqual({ expected_items: 500, expected_usd: p.worst_case_usd });
    for (const s of p.sequential.scenarios) {
      expect(s.expected_items).toBeLessThanOrEqual(500);
      expect(s.p90_items).toBeLessThanOrEqual(500);
      expect(s.expected_usd).toBeCloseTo(s.expected_items * 0.002, 6);
    }
  });

  it('a clearly worse candidate stops much earlier than one at the margin', () => {
    const s = byScenario(stoppingSpendPlan(base));
    expect(s['clearly_worse']!.expected_items).toBeLessThan(0.7 * 500);
    expect(s['clearly_worse']!.settled_share).toBeGreaterThan(0.5);
    // at the margin, neither side can be proven: a sequential campaign pays (nearly) everything
    expect(s['at_margin']!.expected_items).toBeGreaterThan(0.9 * 500);
  });

  it('is reproducible (seeded) and a new seed moves the estimate only by simulation noise', () => {
    expect(stoppingSpendPlan(base)).toEqual(stoppingSpendPlan(base));
    const a = byScenario(stoppingSpendPlan(base))['clearly_worse']!.expected_items;
    const b = byScenario(stoppingSpendPlan({ ...base, seed: 7 }))['clearly_worse']!.expected_items;
    expect(Math.abs(a - b)).toBeLessThan(60);
  });

  it('more candidates can only make the campaign longer (it stops when the last one settles)', () => {
    const one = byScenario(stoppingSpendPlan(base))['clearly_worse']!.expected_items;
    const three = byScenario(stoppingSpendPlan({ ...base, costRatios: [0.3, 0.3, 0.3] }))['clearly_worse']!;
    expect(three.expected_items).toBeGreaterThanOrEqual(one - 10);
  });

  it('unpriced arms: no dollars, the savings side assumed met and said so', () => {
    const p = stoppingSpendPlan({ ...base, perItemWorstCaseUsd: null, costRatios: [null] });
    expect(p.worst_case_usd).toBeNull();
    expect(p.sequential.scenarios.every((s) => s.expected_usd === null)).toBe(true);
    expect(p.simulation.model).toMatch(/unpriced \(savings assumed met\)/);
  });

  it('a candidate costing more than min_savings allows is settled as futile early (it cannot pass)', () => {
    const s = byScenario(stoppingSpendPlan({ ...base, costRatios: [0.95] }))['equal']!;
    expect(s.settled_share).toBeGreaterThan(0.9);
    expect(s.expected_items).toBeLessThan(100);
  });

  it('tiny and empty campaigns, and bad input', () => {
    expect(stoppingSpendPlan({ ...base, items: 0 }).sequential.scenarios.every((s) => s.expected_items === 0)).toBe(
      true,
    );
    // below the minimum clusters no look settles: 5 items are all paid
    expect(stoppingSpendPlan({ ...base, items: 5 }).sequential.scenarios.every((s) => s.expected_items === 5)).toBe(
      true,
    );
    expect(() => stoppingSpendPlan({ ...base, items: -1 })).toThrow(RangeError);
    expect(() => stoppingSpendPlan({ ...base, batchItems: 0 })).toThrow(RangeError);
    expect(() => stoppingSpendPlan({ ...base, costRatios: [] })).toThrow(RangeError);
  });

  it('group_sequential: planned looks, worst case unchanged, clearly worse and at-margin runs stop early', () => {
    const p = stoppingSpendPlan({ ...base, rule: 'group_sequential' });
    expect(p.rule).toBe('group_sequential');
    expect(p.group_sequential!.planned_looks).toBe(20);
    const s = Object.fromEntries(p.group_sequential!.scenarios.map((x) => [x.scenario, x]));
    for (const x of p.group_sequential!.scenarios) expect(x.expected_items).toBeLessThanOrEqual(p.worst_case_items);
    expect(s['clearly_worse']!.expected_items).toBeLessThan(0.6 * 500);
    // the futility rule stops most at-margin runs before max_items (the sequential rule cannot)
    expect(s['at_margin']!.expected_items).toBeLessThan(byScenario(p)['at_margin']!.expected_items);
  });

  it('group_sequential: the horizon is max_items even when the budget affords fewer items', () => {
    const p = stoppingSpendPlan({ ...base, items: 200, maxItems: 500 });
    expect(p.group_sequential!.planned_looks).toBe(20);
    for (const x of p.group_sequential!.scenarios) expect(x.p90_items).toBeLessThanOrEqual(200);
    // a plan over the look limit has no group_sequential block
    expect(stoppingSpendPlan({ ...base, items: 5000, batchItems: 1, campaigns: 2 }).group_sequential).toBeNull();
  });

  it('groupSequentialSettling settles only at planned looks, on the boundaries given', () => {
    const looks = [20, 40, 60, 80, 100];
    const b = spendingBoundaries(
      looks.map((n) => n / 100),
      0.0304,
    );
    const worse = Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? -1 : 0));
    const at = groupSequentialSettling(worse, looks, b.critical, 100, 0.05, true);
    expect(looks).toContain(at);
    expect(groupSequentialSettling(worse.slice(0, 10), looks, b.critical, 100, 0.05, true)).toBeNull();
    // savings that cannot be met settle at the first look with enough clusters
    expect(groupSequentialSettling(worse, looks, b.critical, 100, 0.05, false)).toBe(20);
  });
});
