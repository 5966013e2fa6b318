import { describe, expect, it } from 'vitest';
import {
  combinePairwise,
  judgeTemplateHash,
  pairwiseMessages,
  parsePairwiseReply,
  parsePointwiseReply,
  pointwiseMessages,
} from './judge-templates.js';

describe('judge templates', () => {
  it('hashes each template to a fixed 64-hex value that differs between modes', () => {
    const a = judgeTemplateHash('pointwise/v1');
    const b = judgeTemplateHash('pairwise/v1');
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).not.toBe(b);
    expect(judgeTemplateHash('pointwise/v1')).toBe(a);
  });

  it('marks the question, reference and answer in a pointwise user message', () => {
    const m = pointwiseMessages({ prompt: 'What is 2+2?', output: '4', reference: '4', rubric: 'be exact' });
    expect(m[1]!.content).toContain('[[question]]\nWhat is 2+2?\n[[/question]]');
    expect(m[1]!.content).toContain('[[reference]]\n4\n[[/reference]]');
    expect(m[1]!.content).toContain('[[rubric]]\nbe exact\n[[/rubric]]');
    expect(m[1]!.content).toContain('[[answer]]\n4\n[[/answer]]');
  });

  it('shows answer a first as A in a pairwise message', () => {
    const m = pairwiseMessages({ prompt: 'q', a: 'first', b: 'second' });
    expect(m[1]!.content.indexOf('[[answer_a]]\nfirst')).toBeGreaterThan(0);
    expect(m[1]!.content.indexOf('[[answer_b]]\nsecond')).toBeGreaterThan(m[1]!.content.indexOf('[[answer_a]]'));
  });
});

describe('judge reply parsing', () => {
  it('reads a pointwise score in [0, 1] and its reason', () => {
    expect(parsePointwiseReply('{"score": 0.75, "reason": "mostly right"}')).toEqual({
      value: 0.75,
      reason: 'mostly right',
    });
  });
  it('gives null, never 0, for an out-of-range or missing score', () => {
    expect(parsePointwiseReply('{"score": 7}')).toEqual({ value: null, reason: 'judge_unparsable' });
    expect(parsePointwiseReply('no json here')).toEqual({ value: null, reason: 'judge_unparsable' });
  });
  it('names a refusal as judge_refused_reply', () => {
    expect(parsePointwiseReply("I'm sorry, but I can't help with that.").reason).toBe('judge_refused_reply');
  });
  it('maps a pairwise winner A/B/tie to the first answer preference 1/0/0.5', () => {
    expect(parsePairwiseReply('{"winner":"A"}').value).toBe(1);
    expect(parsePairwiseReply('{"winner":"b"}').value).toBe(0);
    expect(parsePairwiseReply('{"winner":"tie"}').value).toBe(0.5);
    expect(parsePairwiseReply('{"winner":"C"}')).toEqual({ value: null, reason: 'judge_unparsable' });
  });
});

describe('combinePairwise', () => {
  it('cancels a judge that always picks the first answer into a tie with a flip', () => {
    expect(combinePairwise(1, 1)).toEqual({ score: 0.5, flip: true });
  });
  it('keeps a consistent candidate win at 1 without a flip', () => {
    expect(combinePairwise(1, 0)).toEqual({ score: 1, flip: false });
  });
  it('is null when either order failed', () => {
    expect(combinePairwise(1, null)).toEqual({ score: null, flip: null });
  });
});
