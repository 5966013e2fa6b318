import { describe, expect, it } from 'vitest';
import { compositeQuality, scoreExpectation, scoreProgrammatic, scoreRegex } from './index.js';

// V8's backtracking RegExp takes 0.7 s on 200 characters with this pattern and 12 s on 400 (×17
// per doubling, ~n⁴): a 1 MB output would take (1e6 / 400)⁴ × 12 s ≈ 10⁷ years. RE2's automata
// scan it once. Finishing at all (vitest's 60 s deadline below, generous for a loaded machine)
// is the signal; nothing is timed.
const CATASTROPHIC = '^(?:.|\\n)*(?:.|\\n)*(?:.|\\n)*(?:.|\\n)*QQQ$';
const MB = 1024 * 1024;

describe('scoreRegex: linear time, RE2 only', () => {
  it('scores the catastrophic pattern on a 1 MB output, both ways', { timeout: 60_000 }, () => {
    const text = 'a\n'.repeat(MB / 2);
    expect(scoreRegex(text, CATASTROPHIC)).toMatchObject({ score: 0, detail: 'no match' });
    expect(scoreRegex(`${text}QQQ`, CATASTROPHIC)).toMatchObject({ score: 1, detail: 'matched' });
    // the literal is there but not at the end: no shortcut on a missing literal, the whole text is read
    expect(scoreRegex(`${text}QQQ.`, CATASTROPHIC)).toMatchObject({ score: 0, detail: 'no match' });
  });
  it('matches as the documented RE2 syntax says (anywhere in the output, inline flags)', () => {
    expect(scoreRegex('x SELECT 1', '^SELECT\\b').score).toBe(0);
    expect(scoreRegex('x SELECT 1', 'SELECT\\b').score).toBe(1);
    expect(scoreRegex('Yes.', '(?i)^yes').score).toBe(1);
    expect(scoreRegex('a\nb', 'a.b').score).toBe(0); // `.` does not match \n
    expect(scoreRegex('a\nb', '(?s)a.b').score).toBe(1);
  });
  it('gives no score, with the reason, for a pattern RE2 refuses (one stored before the rule)', () => {
    for (const p of ['x(?=y)', '(a)\\1', 'a{2,1000}']) {
      const r = scoreRegex('xy aa', p);
      expect(r.score, p).toBeNull();
      expect(r.detail, p).toMatch(/^pattern refused: /);
    }
    expect(scoreRegex('xy', 'x(?=y)', 'regex').scorer).toBe('regex');
  });
  it('a refused hard expectation counts as unscored, neither a pass nor a hard fail', () => {
    const refused = scoreExpectation({ kind: 'regex', value: '(?<!a)b', hard: true }, 'b');
    expect(refused).toMatchObject({ score: null, hard: true });
    const withExact = compositeQuality([refused, scoreExpectation({ kind: 'exact', value: 'b' }, 'b')]);
    expect(withExact).toEqual({ quality: 1, judgeShare: 0, scored: 1, hardFailed: false });
    expect(compositeQuality([refused])).toEqual({ quality: null, judgeShare: null, scored: 0, hardFailed: false });
  });
  it('a campaign regex scorer RE2 refuses scores null on every output', () => {
    const r = scoreProgrammatic({
      output: 'the answer is 42',
      expectations: [],
      scorers: [
        { kind: 'regex', pattern: '(?=42)' },
        { kind: 'regex', pattern: '\\d+' },
      ],
      callType: 'x',
    });
    expect(r.map((s) => s.score)).toEqual([null, 1]);
  });
});
