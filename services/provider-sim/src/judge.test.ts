import { describe, expect, it } from 'vitest';
import { combinePairwise, pairwiseMessages, parsePairwiseReply } from '@shadowplane/scoring';
import { SimJudge, simJudgeReply } from './judge.js';

/** Two answers of equal quality per question: both drawn from the sim's open-question ground truth (good share 0.5). */
function pair(i: number): { q: string; cand: string; inc: string } {
  return { q: `Write a haiku about item ${i}.`, cand: `candidate answer ${i}`, inc: `incumbent answer ${i}` };
}

function judge(cfg: Partial<SimJudge>, user: string, requestHash: string): number | null {
  const reply = simJudgeReply(user, {
    cfg: SimJudge.parse({ open_good_share: 0.5, ...cfg }),
    model: 'j',
    modelAccuracy: 0.5,
    known: null,
    seed: 3,
    requestHash,
  });
  return reply === null ? null : parsePairwiseReply(reply).value;
}

describe('provider-sim judge', () => {
  it('answers only judge prompts (null for an ordinary request)', () => {
    expect(
      simJudgeReply('What is 2+2?', {
        cfg: SimJudge.parse({}),
        model: 'j',
        modelAccuracy: 0.5,
        known: null,
        seed: 1,
        requestHash: 'h',
      }),
    ).toBeNull();
  });

  it('with position bias 0.4, one order favours the first answer; both orders cancel it (n = 2000)', () => {
    const n = 2000;
    let oneOrder = 0;
    let both = 0;
    let flips = 0;
    for (let i = 0; i < n; i++) {
      const p = pair(i);
      const ab = judge(
        { position_bias: 0.4, accuracy: 1 },
        pairwiseMessages({ prompt: p.q, a: p.cand, b: p.inc })[1]!.content,
        `ab${i}`,
      )!;
      const ba = judge(
        { position_bias: 0.4, accuracy: 1 },
        pairwiseMessages({ prompt: p.q, a: p.inc, b: p.cand })[1]!.content,
        `ba${i}`,
      )!;
      oneOrder += ab;
      const c = combinePairwise(ab, ba);
      both += c.score!;
      if (c.flip) flips++;
    }
    // equal-quality arms: the unbiased preference is 0.5; one order gives 0.5 + bias/2 = 0.7
    expect(oneOrder / n).toBeGreaterThan(0.66);
    expect(oneOrder / n).toBeLessThan(0.74);
    // both orders: within 3 standard errors of 0.5 (per-pair sd ≤ 0.5 → se ≤ 0.0112)
    expect(Math.abs(both / n - 0.5)).toBeLessThan(0.034);
    // a flip needs the bias in exactly one order or disagreeing truths: clearly present
    expect(flips / n).toBeGreaterThan(0.3);
  });

  it('with accuracy 1 and no bias, prefers the answer the ground truth calls good and never flips', () => {
    let flips = 0;
    for (let i = 0; i < 300; i++) {
      const p = pair(i);
      const ab = judge({ accuracy: 1 }, pairwiseMessages({ prompt: p.q, a: p.cand, b: p.inc })[1]!.content, `x${i}`)!;
      const ba = judge({ accuracy: 1 }, pairwiseMessages({ prompt: p.q, a: p.inc, b: p.cand })[1]!.content, `y${i}`)!;
      if (combinePairwise(ab, ba).flip) flips++;
    }
    expect(flips).toBe(0);
  });

  it('with refusal_rate 1 replies with a refusal the parser names', () => {
    const p = pair(1);
    const reply = simJudgeReply(pairwiseMessages({ prompt: p.q, a: p.cand, b: p.inc })[1]!.content, {
      cfg: SimJudge.parse({ refusal_rate: 1 }),
      model: 'j',
      modelAccuracy: 0.5,
      known: null,
      seed: 1,
      requestHash: 'h',
    })!;
    expect(parsePairwiseReply(reply).reason).toBe('judge_refused_reply');
  });
});
