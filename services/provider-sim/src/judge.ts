import { z } from 'zod';
import type { KnownAnswers } from './dataset.js';
import { hashUnit } from './rng.js';

const Prob = z.number().min(0).max(1);

/**
 * A simulated LLM judge with known behaviour, configured per model (`models.<name>.judge`).
 * A model with this block answers judge prompts (the `[[question]]`/`[[answer]]` or
 * `[[answer_a]]`/`[[answer_b]]` parts of the libs/scoring templates) instead of the user request.
 * Ground truth of an answer: for a known GSM8K question, whether its final number (`#### x`, else
 * the last number) equals the reference; for any other question, a seeded draw per answer text
 * that is good with probability `open_good_share`.
 * - `accuracy`: probability the judge perceives an answer's truth correctly (each answer drawn
 *   independently per request);
 * - `position_bias`: probability a pairwise judgement is "A" whatever the answers;
 * - `verbosity_bias`: probability a judgement (not already position-biased) prefers the longer
 *   answer (pairwise) or grades a longer-than-median answer 1 (pointwise: > 400 characters);
 * - `self_preference`: probability it prefers (pairwise) or grades 1 (pointwise) an answer that is
 *   exactly what this model itself would answer to the known question;
 * - `refusal_rate`, `unparsable_rate`: probability the reply is a refusal, or not JSON;
 * - `hang_first`: the first n calls to this model (since start or `/sim/reset`) hang like the
 *   `hang` fault (nothing sent for `hang_ms`), later ones answer: a judge call that stays in flight
 *   while the caller is killed, then a judge that works for whoever takes over.
 * Every draw is a seeded hash of (seed, request hash, what): the same request gives the same reply.
 */
export const SimJudge = z
  .object({
    accuracy: Prob.default(0.9),
    position_bias: Prob.default(0),
    verbosity_bias: Prob.default(0),
    self_preference: Prob.default(0),
    refusal_rate: Prob.default(0),
    unparsable_rate: Prob.default(0),
    hang_first: z.number().int().nonnegative().default(0),
    open_good_share: Prob.default(0.7),
  })
  .strict();
export type SimJudge = z.infer<typeof SimJudge>;

function partOf(text: string, name: string): string | null {
  const open = `[[${name}]]\n`;
  const i = text.indexOf(open);
  if (i < 0) return null;
  const j = text.indexOf(`\n[[/${name}]]`, i + open.length);
  return j < 0 ? null : text.slice(i + open.length, j);
}

/** Final number of a GSM8K-style answer: after `####`, else the last number; commas dropped. */
function finalNumber(s: string): string | null {
  const m = /####\s*([-\d.,]+)/.exec(s);
  const raw = m ? m[1]! : (s.match(/-?\d[\d,]*(?:\.\d+)?/g) ?? []).pop();
  return raw === undefined ? null : raw.replace(/,/g, '').replace(/\.$/, '');
}

/** Inputs of {@link simJudgeReply}. */
export interface SimJudgeContext {
  cfg: SimJudge;
  /** the judge model's own name and accuracy (for self-preference) */
  model: string;
  modelAccuracy: number;
  known: KnownAnswers | null;
  seed: number;
  requestHash: string;
}

/**
 * The simulated judge's reply text to a judge prompt, or null when `user` is not a judge prompt
 * (then the model answers normally). See {@link SimJudge} for the behaviour.
 */
export function simJudgeReply(user: string, c: SimJudgeContext): string | null {
  const question = partOf(user, 'question');
  if (question === null) return null;
  const single = partOf(user, 'answer');
  const a = partOf(user, 'answer_a');
  const b = partOf(user, 'answer_b');
  if (single === null && (a === null || b === null)) return null;
  const u = (what: string) => hashUnit(c.seed, 'judge', c.requestHash, what);
  if (u('refuse') < c.cfg.refusal_rate) return "I'm sorry, but I can't help with grading this.";
  if (u('garble') < c.cfg.unparsable_rate) return 'The first answer seems fine overall, more or less.';
  const q = c.known ? c.known.match(question) : null;
  const truth = (ans: string): boolean => {
    if (q) return finalNumber(ans) === q.final.replace(/,/g, '');
    return hashUnit(c.seed, 'judge-truth', ans) < c.cfg.open_good_share;
  };
  const own = (ans: string) =>
    q !== null && c.known !== null && c.known.answer(c.model, c.modelAccuracy, q).text === ans;
  const perceive = (ans: string, what: string) => (u(`acc:${what}`) < c.cfg.accuracy ? truth(ans) : !truth(ans));
  if (single !== null) {
    let good = perceive(single, 'single');
    if (u('self') < c.cfg.self_preference && own(single)) good = true;
    else if (u('verbose') < c.cfg.verbosity_bias && single.length > 400) good = true;
    return JSON.stringify({ score: good ? 1 : 0, reason: good ? 'the answer is correct' : 'the answer is wrong' });
  }
  let winner: 'A' | 'B' | 'tie';
  if (u('position') < c.cfg.position_bias) winner = 'A';
  else if (u('self') < c.cfg.self_preference && own(a!) !== own(b!)) winner = own(a!) ? 'A' : 'B';
  else if (u('verbose') < c.cfg.verbosity_bias && a!.length !== b!.length) winner = a!.length > b!.length ? 'A' : 'B';
  else {
    // perceptions are drawn per answer text, so swapping the order swaps them too
    const pa = perceive(a!, `text:${a!}`);
    const pb = perceive(b!, `text:${b!}`);
    winner = pa === pb ? 'tie' : pa ? 'A' : 'B';
  }
  return JSON.stringify({ winner, reason: `answer ${winner} is better` });
}
