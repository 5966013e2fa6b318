import type { Expectation, OutcomeRecord, ScorerSpec } from '@shadowplane/contracts';
import { scoreExpectation, scoreJsonValid, scoreRefusal, scoreRegex, type ScoreResult } from './scorers.js';

/** Input of {@link scoreProgrammatic}: one arm's output for one item. */
export interface ProgrammaticInput {
  /** the output text, or null when it is not available (no artifact, no key) */
  output: string | null;
  /** first-party expectations that rode in with the request */
  expectations: readonly Expectation[];
  /** the campaign's scorers (pinned spec) */
  scorers: readonly ScorerSpec[];
  /** call type of the item (for scorers restricted to call types) */
  callType: string;
}

/**
 * Runs every programmatic scorer the campaign configures on one output: `expectations` (each
 * expectation scored by {@link scoreExpectation}), `json_valid`, `refusal`, `regex` (when the call
 * type matches). `llm_judge` is not programmatic and is skipped here (see judge.ts).
 * Results keep the spec order; a scorer that cannot score yields score null.
 */
export function scoreProgrammatic(inp: ProgrammaticInput): ScoreResult[] {
  const out: ScoreResult[] = [];
  for (const s of inp.scorers) {
    switch (s.kind) {
      case 'expectations':
        for (const e of inp.expectations) out.push(scoreExpectation(e, inp.output));
        break;
      case 'json_valid':
        out.push(scoreJsonValid(inp.output));
        break;
      case 'refusal':
        out.push(scoreRefusal(inp.output));
        break;
      case 'regex':
        if (s.call_types === undefined || s.call_types.includes(inp.callType))
          out.push(scoreRegex(inp.output, s.pattern, 'regex'));
        break;
      case 'llm_judge':
        break;
    }
  }
  return out;
}

/**
 * Turns a first-party outcome (OutcomeRecord) into a score: pass → 1, fail → 0, score → its value.
 * Source `first_party`; scorer `outcome:<source>`.
 */
export function scoreOutcome(o: Pick<OutcomeRecord, 'result' | 'score' | 'source'>): ScoreResult {
  const score = o.result === 'pass' ? 1 : o.result === 'fail' ? 0 : o.score;
  return { score, scorer: `outcome:${o.source}`, detail: `first-party outcome ${o.result}`, source: 'first_party' };
}

/** Composite quality of one item on one arm; see {@link compositeQuality}. */
export interface Composite {
  /** weighted mean of the available scores in [0, 1], or null when nothing scored (unscored) */
  quality: number | null;
  /** share of `quality` that comes from an LLM judge (0..1), null when unscored */
  judgeShare: number | null;
  /** number of non-null scores used */
  scored: number;
  /** true when a hard assertion scored 0 */
  hardFailed: boolean;
}

/**
 * Composite quality per item per arm = weighted mean of the available (non-null) scores.
 * Weights: the judge (when it scored) gets `judgeWeight` (spec `llm_judge.weight`, default 0.5);
 * the programmatic and first-party scores share the rest equally. With only programmatic /
 * first-party scores they share weight 1; with only the judge it has weight 1 (judge share 1).
 * Null scores are ignored; with no non-null score the item is unscored (quality null) — never 0 or 1.
 * Several judge scores (unusual) are averaged first.
 */
export function compositeQuality(scores: readonly ScoreResult[], judgeWeight = 0.5): Composite {
  const prog = scores.filter((s) => s.source !== 'judge' && s.score !== null).map((s) => s.score as number);
  const judge = scores.filter((s) => s.source === 'judge' && s.score !== null).map((s) => s.score as number);
  const hardFailed = scores.some((s) => s.hard === true && s.score === 0);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  if (prog.length === 0 && judge.length === 0) return { quality: null, judgeShare: null, scored: 0, hardFailed };
  if (judge.length === 0) return { quality: mean(prog), judgeShare: 0, scored: prog.length, hardFailed };
  if (prog.length === 0) return { quality: mean(judge), judgeShare: 1, scored: judge.length, hardFailed };
  const w = Math.min(1, Math.max(0, judgeWeight));
  return {
    quality: (1 - w) * mean(prog) + w * mean(judge),
    judgeShare: w,
    scored: prog.length + judge.length,
    hardFailed,
  };
}

/** Trust class of a comparison; see {@link trustClass}. */
export type TrustClass = 'A' | 'B' | 'C';

/**
 * Trust class from the weighted mean judge share of the composite scores behind a comparison:
 * A — share 0 (programmatic and first-party scores only);
 * B — 0 < share ≤ 0.5 (mixed; the judge never outweighs the programmatic evidence);
 * C — share > 0.5 (judge-dominated).
 * Source: docs/architecture.md "Statistics of a verdict" (the trust class follows the weight of programmatic
 * scorers and first-party outcomes against the judge); thresholds as defined here.
 */
export function trustClass(judgeShare: number): TrustClass {
  if (!(judgeShare > 0)) return 'A';
  return judgeShare <= 0.5 ? 'B' : 'C';
}
