import { describe, expect, it } from 'vitest';
import { evaluateGate } from './gate.js';
import { hashKey } from './keys.js';

const cmp = (candidate_arm_id: string, decision: 'pass' | 'fail' | 'inconclusive' | null, state = 'NOT_BEAT') => ({
  candidate_arm_id,
  decision,
  state,
});
const report = (rows: ReturnType<typeof cmp>[][]) => ({
  schema: 'shadow.report/v1',
  call_types: rows.map((comparisons, i) => ({ call_type: `ct${i}`, comparisons })),
});

describe('--gate', () => {
  it('passes only when every comparison decided pass on a final report', () => {
    expect(
      evaluateGate(report([[cmp('medium', 'pass', 'BEAT')], [cmp('medium', 'pass', 'BEAT')]]), false),
    ).toMatchObject({ pass: true });
  });
  it('fails on fail, inconclusive or an unmeasured comparison, naming each', () => {
    const g = evaluateGate(
      report([
        [cmp('medium', 'pass'), cmp('small', 'fail')],
        [cmp('medium', 'inconclusive'), cmp('small', null, 'CANNOT_MEASURE')],
      ]),
      false,
    );
    expect(g.pass).toBe(false);
    expect(g.reason).toBe('ct0/small: fail; ct1/medium: inconclusive; ct1/small: not measured (CANNOT_MEASURE)');
  });
  it('gates one candidate with --candidate', () => {
    const r = report([[cmp('medium', 'pass'), cmp('small', 'fail')]]);
    expect(evaluateGate(r, false, 'medium').pass).toBe(true);
    expect(evaluateGate(r, false, 'small').pass).toBe(false);
    expect(evaluateGate(r, false, 'tiny')).toMatchObject({ pass: false, reason: 'no comparison for candidate tiny' });
  });
  it('never passes a provisional report or one without comparisons', () => {
    expect(evaluateGate(report([[cmp('medium', 'pass')]]), true)).toMatchObject({
      pass: false,
      reason: 'the report is provisional',
    });
    expect(evaluateGate({ schema: 'shadow.report/v1' }, false).pass).toBe(false);
  });
  it('hashes keys the way the control API stores them (FIPS 180-2 "abc")', () => {
    expect(hashKey('abc')).toBe('sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
