import { z } from 'zod';
import { Api, RateCard } from './usage.js';
import { SubjectToken } from './envelope.js';

// The arms a campaign compares and the scorers that grade them (parts of CampaignSpec).

/** Suffix of the arm id generated for the A-A second incumbent call; spec arm ids may not end with it. */
export const AA_ARM_SUFFIX = '__aa';
/** The A-A arm's id for an incumbent arm id (`<incumbent>__aa`). */
export const aaArmId = (incumbentId: string): string => `${incumbentId}${AA_ARM_SUFFIX}`;

/** Per-arm limits. RPM/TPM are enforced with bottleneck; times in ms. */
export const ArmLimits = z
  .object({
    rpm: z.number().int().positive().optional(),
    tpm: z.number().int().positive().optional(),
    concurrency: z.number().int().positive().max(1024).default(8),
    /** no first byte within this many ms → hang_timeout */
    first_byte_timeout_ms: z.number().int().positive().default(30_000),
    /** no byte for this many ms mid-stream → hang_timeout */
    stall_timeout_ms: z.number().int().positive().default(30_000),
    /** retries on 429/529/5xx only; each retry is charged */
    max_retries: z.number().int().min(0).max(10).default(2),
    /**
     * longest provider `retry-after` honoured, ms: a 429/529 asking for more ends the attempt
     * `rate_limited` (no retry, its reservation released) and pauses this arm for this long only
     */
    max_retry_after_ms: z.number().int().positive().max(3_600_000).default(60_000),
  })
  .strict();
export type ArmLimits = z.infer<typeof ArmLimits>;

/**
 * One arm of a campaign: a provider from the operator allowlist (an id, never a URL) and a model.
 * `pin` asks a routing provider to serve from specific upstreams (OpenRouter `provider.order`
 * with fallbacks off); `pin_honored` in observations says whether it was.
 * `rate_card` prices reported tokens (USD per million); without it only provider-reported cost
 * can price the arm. `max_output_tokens` caps output and bounds the worst-case reservation.
 */
export const Arm = z
  .object({
    id: SubjectToken,
    provider: z
      .string()
      .regex(
        /^[a-z0-9][a-z0-9_-]{0,63}$/,
        'must be a provider id from the operator allowlist (lowercase [a-z0-9_-]), not a URL',
      ),
    model: z.string().min(1).max(200),
    api: Api.optional(),
    pin: z
      .object({ upstreams: z.array(z.string().min(1)).min(1) })
      .strict()
      .optional(),
    rate_card: RateCard.optional(),
    /**
     * Set by the control API when `rate_card` was taken from the shipped price catalogue by model
     * name (an arm submitted without one): the catalogue version, the entry's model id, its source
     * and the date its prices were listed. Absent when the operator gave the card.
     */
    rate_card_from: z
      .object({ catalogue: z.string(), model: z.string(), source: z.string(), as_of: z.string() })
      .strict()
      .optional(),
    max_output_tokens: z.number().int().positive().max(1_000_000).default(1024),
    limits: ArmLimits.default(ArmLimits.parse({})),
  })
  .strict();
export type Arm = z.infer<typeof Arm>;

/**
 * The LLM judge scorer. The judge is a provider from the operator allowlist, called by the
 * duplicator after an item's arms settle, through the same provider code, rate limits and budget
 * ledger as the arms. `mode`: `pointwise` grades each arm's output against the rubric (and, with
 * `reference: expectation`, the item's first-party expected value); `pairwise` compares each
 * candidate with the incumbent in both orders (A/B then B/A) so position bias cancels, ties allowed.
 * `call_types` limits judging to some call types (default: all). `rate_card` (USD per million
 * tokens) bounds each judge call's reservation; a live launch refuses a judge without one.
 * `max_output_tokens` caps the judge's reply; `timeout_ms` bounds each judge call.
 * `template_version` names the prompt template (libs/scoring JUDGE_TEMPLATES); its hash is pinned.
 */
export const LlmJudgeSpec = z
  .object({
    kind: z.literal('llm_judge'),
    provider: z.string(),
    model: z.string(),
    weight: z.number().min(0).max(1).default(0.5),
    mode: z.enum(['pointwise', 'pairwise']).default('pointwise'),
    call_types: z.array(SubjectToken).min(1).optional(),
    rubric: z.string().min(1).max(4000).optional(),
    reference: z.enum(['none', 'expectation']).default('none'),
    rate_card: RateCard.optional(),
    max_output_tokens: z.number().int().positive().max(4096).default(256),
    timeout_ms: z.number().int().positive().max(600_000).default(30_000),
    template_version: z.literal('v1').default('v1'),
    limits: z
      .object({
        rpm: z.number().int().positive().optional(),
        concurrency: z.number().int().positive().max(1024).default(4),
      })
      .strict()
      .default({ concurrency: 4 }),
  })
  .strict();
export type LlmJudgeSpec = z.infer<typeof LlmJudgeSpec>;

/** A programmatic or judge scorer configured on a campaign (libs/scoring). */
export const ScorerSpec = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('expectations') }).strict(),
  z.object({ kind: z.literal('json_valid') }).strict(),
  z.object({ kind: z.literal('refusal') }).strict(),
  z.object({ kind: z.literal('regex'), pattern: z.string(), call_types: z.array(SubjectToken).optional() }).strict(),
  LlmJudgeSpec,
]);
export type ScorerSpec = z.infer<typeof ScorerSpec>;
