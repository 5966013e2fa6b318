import { describe, expect, it } from 'vitest';
import { DECISION_REASONS, nonInferiorityDecision } from './decision.js';

const tokens = (reasons: string[]): string[] => reasons.map((r) => r.split(':')[0]!);

describe('nonInferiorityDecision (margin 2 pp, min savings 20%)', () => {
  const base = { marginPp: 2, minSavings: 0.2 };
  it.each([
    [
      'pass: lower(D) −1.5pp > −2pp and lower(S) 30% ≥ 20%',
      { lower: -0.015, upper: 0.01 },
      { lower: 0.3 },
      'pass',
      ['quality_noninferior', 'savings_cleared'],
    ],
    [
      'inconclusive: lower(D) exactly at −margin does not clear (strict >)',
      { lower: -0.02, upper: 0.01 },
      { lower: 0.3 },
      'inconclusive',
      ['quality_lower_bound_not_above_margin'],
    ],
    [
      'inconclusive: quality clears but savings lower bound 10% < 20%',
      { lower: -0.01, upper: 0.01 },
      { lower: 0.1 },
      'inconclusive',
      ['savings_lower_bound_below_min'],
    ],
    [
      'pass: savings lower bound exactly at the minimum clears (≥)',
      { lower: -0.01, upper: 0.01 },
      { lower: 0.2 },
      'pass',
      ['quality_noninferior', 'savings_cleared'],
    ],
    [
      'inconclusive: both bounds miss, both named',
      { lower: -0.05, upper: 0.01 },
      { lower: 0.05 },
      'inconclusive',
      ['quality_lower_bound_not_above_margin', 'savings_lower_bound_below_min'],
    ],
    [
      'fail: upper(D) −3pp < −2pp',
      { lower: -0.06, upper: -0.03 },
      { lower: 0.5 },
      'fail',
      ['quality_upper_bound_below_margin'],
    ],
    [
      'inconclusive: savings unmeasurable (null) never passes',
      { lower: 0.01, upper: 0.03 },
      null,
      'inconclusive',
      ['savings_unmeasurable'],
    ],
  ] as const)('%s', (_n, qualityDelta, costSavings, decision, want) => {
    const r = nonInferiorityDecision({ ...base, qualityDelta, costSavings });
    expect(r.decision).toBe(decision);
    expect(tokens(r.reasons)).toEqual(want);
  });

  it('fails on a broken hard gate or a breached cost ceiling even when the intervals would pass', () => {
    const good = { ...base, qualityDelta: { lower: 0, upper: 0.02 }, costSavings: { lower: 0.5 } };
    expect(nonInferiorityDecision({ ...good, hardGateBroken: true })).toMatchObject({ decision: 'fail' });
    expect(
      tokens(nonInferiorityDecision({ ...good, hardGateBroken: true, costCeilingBreached: true }).reasons),
    ).toEqual(['hard_gate_broken', 'cost_ceiling_breached']);
    expect(nonInferiorityDecision({ ...good, hardGateBroken: false, costCeilingBreached: false }).decision).toBe(
      'pass',
    );
  });

  it('writes the bounds in the reason text in pp and percent', () => {
    const r = nonInferiorityDecision({
      ...base,
      qualityDelta: { lower: -0.0312, upper: 0.004 },
      costSavings: { lower: 0.3 },
    });
    expect(r.reasons[0]).toBe('quality_lower_bound_not_above_margin: lower(D) -3.12pp <= -2.00pp (upper 0.40pp)');
  });

  it('uses only tokens from DECISION_REASONS', () => {
    const r = nonInferiorityDecision({
      ...base,
      qualityDelta: { lower: -0.05, upper: -0.03 },
      costSavings: null,
      hardGateBroken: true,
    });
    for (const t of tokens(r.reasons)) expect(DECISION_REASONS).toContain(t);
  });

  it('throws RangeError on a negative margin or NaN bounds', () => {
    expect(() =>
      nonInferiorityDecision({
        marginPp: -1,
        minSavings: 0,
        qualityDelta: { lower: 0, upper: 0 },
        costSavings: { lower: 0 },
      }),
    ).toThrow(RangeError);
    expect(() =>
      nonInferiorityDecision({
        marginPp: 1,
        minSavings: 0,
        qualityDelta: { lower: Number.NaN, upper: 0 },
        costSavings: { lower: 0 },
      }),
    ).toThrow(/NaN/);
    expect(() =>
      nonInferiorityDecision({
        marginPp: 1,
        minSavings: 0,
        qualityDelta: { lower: 0, upper: 0 },
        costSavings: { lower: Number.NaN },
      }),
    ).toThrow(/pass null/);
  });
});
