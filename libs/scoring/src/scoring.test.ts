import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  compositeQuality,
  detectRefusal,
  extractFinalNumber,
  scoreExpectation,
  scoreJsonSchema,
  scoreJsonValid,
  scoreMustInclude,
  scoreMustNotInclude,
  scoreNumeric,
  scoreOutcome,
  scoreProgrammatic,
  scoreRefusal,
  trustClass,
} from './index.js';

const gsm8k = readFileSync(new URL('../../../examples/data/gsm8k-test.jsonl', import.meta.url), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as { question: string; answer: string });

describe('numeric answer match', () => {
  it('reads the GSM8K #### answer of real examples (answers read by hand from examples/data)', () => {
    expect(extractFinalNumber(gsm8k[0]!.answer)).toBe(18);
    expect(extractFinalNumber(gsm8k[1]!.answer)).toBe(3);
    expect(extractFinalNumber(gsm8k[2]!.answer)).toBe(70000); // text also holds "70,000" and "$<<200000-130000=70000>>"
    expect(extractFinalNumber(gsm8k[146]!.answer)).toBe(2125); // "#### 2,125"
    expect(extractFinalNumber(gsm8k[489]!.answer)).toBe(-10);
  });
  it('falls back to the last number when there is no #### marker, normalising $, commas and .0', () => {
    expect(extractFinalNumber('She makes $1,234.00 in total.')).toBe(1234);
    expect(extractFinalNumber('First 3 then 4, so the answer is 7.')).toBe(7);
    expect(extractFinalNumber('no digits here')).toBeNull();
  });
  it('scores 1 for a matching answer, 0 for a wrong one, null without output', () => {
    expect(scoreNumeric('The answer is 18.', '18').score).toBe(1);
    expect(scoreNumeric('#### 70,000', 70000).score).toBe(1);
    expect(scoreNumeric('The answer is 17.', '18').score).toBe(0);
    expect(scoreNumeric('I do not know', '18').score).toBe(0);
    expect(scoreNumeric(null, '18').score).toBeNull();
  });
});

describe('other programmatic scorers', () => {
  it('exact, regex, must_include and must_not_include give literal results', () => {
    expect(scoreExpectation({ kind: 'exact', value: 'Paris' }, '  Paris\n').score).toBe(1);
    expect(scoreExpectation({ kind: 'exact', value: 'Paris' }, 'paris').score).toBe(0);
    expect(scoreExpectation({ kind: 'regex', value: '^SELECT\\b' }, 'SELECT * FROM t').score).toBe(1);
    expect(scoreExpectation({ kind: 'regex', value: '(' }, 'x').score).toBeNull();
    expect(scoreMustInclude('alpha beta', ['alpha', 'gamma'])).toMatchObject({ score: 0, detail: 'missing "gamma"' });
    expect(scoreMustNotInclude('alpha beta', ['gamma']).score).toBe(1);
    expect(scoreMustNotInclude('alpha beta', ['beta']).score).toBe(0);
  });
  it('JSON validity accepts fenced JSON and rejects prose', () => {
    expect(scoreJsonValid('```json\n{"a": 1}\n```').score).toBe(1);
    expect(scoreJsonValid('{"a": 1').score).toBe(0);
  });
  it('JSON Schema validity names the failing path', () => {
    const schema = { type: 'object', required: ['age'], properties: { age: { type: 'integer', minimum: 0 } } };
    expect(scoreJsonSchema('{"age": 4}', schema).score).toBe(1);
    const bad = scoreJsonSchema('{"age": -1}', schema);
    expect(bad.score).toBe(0);
    expect(bad.detail).toContain('/age');
    expect(
      scoreJsonSchema('{"email":"x"}', { type: 'object', properties: { email: { type: 'string', format: 'email' } } })
        .score,
    ).toBe(0);
  });
  it('JSON Schema from a request can neither crash, loop, pass by default nor depend on other schemas', () => {
    // an async validator returns a Promise (truthy) and rejects it unhandled: refused, no score
    const async = scoreJsonSchema('{"a":1}', { $async: true, type: 'string' });
    expect(async.score).toBeNull();
    expect(async.detail).toContain('$async');
    // a schema that refers to itself without end overflows the stack while validating: no score
    const loop = scoreJsonSchema('{"a":1}', { anyOf: [{ type: 'string' }, { $ref: '#' }] });
    expect(loop.score).toBeNull();
    expect(loop.detail).toContain('validation failed');
    // two different schemas under one $id are each compiled on their own
    const id = 'https://example.com/s';
    expect(scoreJsonSchema('"x"', { $id: id, type: 'string' }).score).toBe(1);
    expect(scoreJsonSchema('"x"', { $id: id, type: 'number' }).score).toBe(0);
  });
  it('detects refusals from the documented phrase list only', () => {
    expect(detectRefusal('I’m sorry, but I can’t help with that request.')).toEqual({
      refused: true,
      phrase: "i can't help with",
    });
    expect(scoreRefusal('Sure! The capital of France is Paris.').score).toBe(1);
    expect(scoreRefusal('I cannot assist with creating malware.').score).toBe(0);
  });
  it('scores expectations per the campaign scorers and marks hard assertions', () => {
    const r = scoreProgrammatic({
      output: 'So the answer is #### 17',
      expectations: [
        { kind: 'numeric', value: '18', hard: true },
        { kind: 'must_include', value: ['answer'] },
      ],
      scorers: [
        { kind: 'expectations' },
        { kind: 'refusal' },
        { kind: 'regex', pattern: 'SQL', call_types: ['other'] },
      ],
      callType: 'math',
    });
    expect(r.map((s) => [s.scorer, s.score, s.hard === true])).toEqual([
      ['expect:numeric', 0, true],
      ['expect:must_include', 1, false],
      ['refusal', 1, false],
    ]);
  });
});

describe('composite quality and trust class', () => {
  it('is the mean of programmatic scores, null when nothing scored (never 0)', () => {
    expect(
      compositeQuality([scoreOutcome({ result: 'pass', score: null, source: 'crm' }), scoreJsonValid('nope')]),
    ).toMatchObject({ quality: 0.5, judgeShare: 0 });
    expect(compositeQuality([scoreNumeric(null, 3), scoreJsonValid(null)])).toEqual({
      quality: null,
      judgeShare: null,
      scored: 0,
      hardFailed: false,
    });
  });
  it('gives the judge its disclosed weight and classes A/B/C by judge share', () => {
    const c = compositeQuality(
      [
        { score: 1, scorer: 'expect:numeric', detail: '', source: 'programmatic' },
        { score: 0, scorer: 'judge:m', detail: '', source: 'judge' },
      ],
      0.25,
    );
    expect(c.quality).toBeCloseTo(0.75, 12);
    expect(c.judgeShare).toBe(0.25);
    expect([trustClass(0), trustClass(0.25), trustClass(0.5), trustClass(0.51), trustClass(1)]).toEqual([
      'A',
      'B',
      'B',
      'C',
      'C',
    ]);
  });
  it('flags a failed hard assertion', () => {
    expect(
      compositeQuality([
        scoreExpectation({ kind: 'must_not_include', value: ['DROP TABLE'], hard: true }, 'DROP TABLE users'),
      ]).hardFailed,
    ).toBe(true);
  });
});
