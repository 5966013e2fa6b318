import { canonicalJson, sha256Hex } from '@shadowplane/contracts';
import { detectRefusal } from './scorers.js';

/**
 * Versioned LLM-judge prompt templates. A template is fixed text; its id (`<mode>/<version>`) is
 * named by the campaign spec (`llm_judge.template_version`) and its hash
 * ({@link judgeTemplateHash}) is recorded in every judge verdict, so a report says exactly which
 * instructions produced its judge scores. Changing a template means adding a new version.
 *
 * The user message marks each part with `[[name]]` … `[[/name]]` so a reply parser (and the
 * provider simulator's judge) can find them; text inside is passed through unchanged.
 */
export interface JudgeTemplate {
  id: string;
  system: string;
  /** the user message's opening line, before the marked parts */
  preamble: string;
}

/** The templates by id. */
export const JUDGE_TEMPLATES: Readonly<Record<'pointwise/v1' | 'pairwise/v1', JudgeTemplate>> = Object.freeze({
  'pointwise/v1': Object.freeze({
    id: 'pointwise/v1',
    system:
      'You grade one answer to a user request. Judge correctness and helpfulness only; ignore length and style. ' +
      'Reply with only a JSON object {"score": <number from 0 to 1>, "reason": "<one sentence>"}: 1 fully correct and helpful, 0 wrong or unhelpful.',
    preamble: 'Grade the answer below.',
  }),
  'pairwise/v1': Object.freeze({
    id: 'pairwise/v1',
    system:
      'You compare two answers, A and B, to the same user request. Judge correctness and helpfulness only; the order of the answers and their length must not matter. ' +
      'Reply with only a JSON object {"winner": "A" | "B" | "tie", "reason": "<one sentence>"}.',
    preamble: 'Compare answer A with answer B.',
  }),
});

/** Id of the template for a mode and version, e.g. `pairwise/v1`. */
export function judgeTemplateId(mode: 'pointwise' | 'pairwise', version: 'v1'): 'pointwise/v1' | 'pairwise/v1' {
  return `${mode}/${version}`;
}

/** sha256 (hex) of the canonical JSON of a template: what the report pins. */
export function judgeTemplateHash(id: 'pointwise/v1' | 'pairwise/v1'): string {
  return sha256Hex(canonicalJson(JUDGE_TEMPLATES[id]));
}

const part = (name: string, text: string) => `[[${name}]]\n${text}\n[[/${name}]]`;

/** OpenAI chat `messages` for a pointwise judge call. `reference` and `rubric` are optional. */
export function pointwiseMessages(o: {
  prompt: string;
  output: string;
  rubric?: string | undefined;
  reference?: string | undefined;
}): { role: 'system' | 'user'; content: string }[] {
  const t = JUDGE_TEMPLATES['pointwise/v1'];
  const parts = [t.preamble];
  if (o.rubric !== undefined) parts.push(part('rubric', o.rubric));
  parts.push(part('question', o.prompt));
  if (o.reference !== undefined) parts.push(part('reference', o.reference));
  parts.push(part('answer', o.output));
  return [
    { role: 'system', content: t.system },
    { role: 'user', content: parts.join('\n\n') },
  ];
}

/** OpenAI chat `messages` for one pairwise judge call: answer `a` is shown first as A. */
export function pairwiseMessages(o: {
  prompt: string;
  a: string;
  b: string;
  rubric?: string | undefined;
}): { role: 'system' | 'user'; content: string }[] {
  const t = JUDGE_TEMPLATES['pairwise/v1'];
  const parts = [t.preamble];
  if (o.rubric !== undefined) parts.push(part('rubric', o.rubric));
  parts.push(part('question', o.prompt), part('answer_a', o.a), part('answer_b', o.b));
  return [
    { role: 'system', content: t.system },
    { role: 'user', content: parts.join('\n\n') },
  ];
}

/** A parsed judge reply: a value in [0, 1], or null with the reason (`judge_refused_reply`, `judge_unparsable`). */
export type JudgeReply =
  { value: number; reason: string | null } | { value: null; reason: 'judge_refused_reply' | 'judge_unparsable' };

function firstJsonObject(content: string): Record<string, unknown> | null {
  const m = /\{[\s\S]*?\}/.exec(content);
  if (!m) return null;
  try {
    const v = JSON.parse(m[0]) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Parses a pointwise reply `{"score": x, "reason": …}` with x in [0, 1]. A reply without that
 * object is `judge_refused_reply` when it reads as a refusal (libs/scoring detectRefusal), else
 * `judge_unparsable`. Never returns 0 for a failure.
 */
export function parsePointwiseReply(content: string): JudgeReply {
  const v = firstJsonObject(content);
  if (v && typeof v.score === 'number' && Number.isFinite(v.score) && v.score >= 0 && v.score <= 1)
    return { value: v.score, reason: typeof v.reason === 'string' ? v.reason.slice(0, 200) : null };
  return { value: null, reason: detectRefusal(content).refused ? 'judge_refused_reply' : 'judge_unparsable' };
}

/**
 * Parses a pairwise reply `{"winner": "A" | "B" | "tie"}` into the preference for the answer
 * shown first: A → 1, tie → 0.5, B → 0. Failures as in {@link parsePointwiseReply}.
 */
export function parsePairwiseReply(content: string): JudgeReply {
  const v = firstJsonObject(content);
  const w = v && typeof v.winner === 'string' ? v.winner.trim().toUpperCase() : null;
  const reason = v && typeof v.reason === 'string' ? v.reason.slice(0, 200) : null;
  if (w === 'A') return { value: 1, reason };
  if (w === 'B') return { value: 0, reason };
  if (w === 'TIE') return { value: 0.5, reason };
  return { value: null, reason: detectRefusal(content).refused ? 'judge_refused_reply' : 'judge_unparsable' };
}

/**
 * Combines the two orders of a pairwise judgement into the candidate's preference in [0, 1]
 * (win 1, tie 0.5, loss 0). `ab` is the preference for the first-shown answer with the candidate
 * first; `ba` with the incumbent first. Candidate preference = mean(ab, 1 − ba): a judge that
 * always picks the first answer gets 0.5 (a tie) whatever the answers, so position bias cancels.
 * `flip` = the two orders disagree on the winner. Null when either order failed (score null,
 * never a guess from one order). Source: MT-Bench (Zheng et al. 2023, "Judging LLM-as-a-Judge"),
 * swap-and-average for position bias.
 */
export function combinePairwise(ab: number | null, ba: number | null): { score: number | null; flip: boolean | null } {
  if (ab === null || ba === null) return { score: null, flip: null };
  const second = 1 - ba;
  return { score: (ab + second) / 2, flip: ab !== second };
}
