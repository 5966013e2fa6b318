// @shadowplane/scoring: programmatic scorers, first-party outcomes, the optional LLM judge,
// composite quality and trust class. Named exports only.
export {
  normaliseNumber,
  extractFinalNumber,
  scoreNumeric,
  scoreExact,
  scoreRegex,
  scoreMustInclude,
  scoreMustNotInclude,
  parseJsonOutput,
  scoreJsonValid,
  scoreJsonSchema,
  REFUSAL_PHRASES,
  detectRefusal,
  scoreRefusal,
  scoreExpectation,
} from './scorers.js';
export type { ScoreResult, ScoreSource } from './scorers.js';
export { scoreProgrammatic, scoreOutcome, compositeQuality, trustClass } from './composite.js';
export type { ProgrammaticInput, Composite, TrustClass } from './composite.js';
export {
  JUDGE_TEMPLATES,
  judgeTemplateId,
  judgeTemplateHash,
  pointwiseMessages,
  pairwiseMessages,
  parsePointwiseReply,
  parsePairwiseReply,
  combinePairwise,
} from './judge-templates.js';
export type { JudgeTemplate, JudgeReply } from './judge-templates.js';
