import { z } from 'zod';
import { Api, RateCard } from './usage.js';
import { Expectation, SubjectToken } from './envelope.js';
import { CompareSpec } from './bench.js';

/** Hard ceiling on max_items per call type (docs/architecture.md "Contracts" (Campaign)). */
export const MAX_ITEMS_CEILING = 5000;
/** Paired items between two sequential looks when `stopping_batch_items` is absent. */
export const SEQUENTIAL_BATCH_DEFAULT = 25;
/** Default max_items per call type. */
export const MAX_ITEMS_DEFAULT = 500;
/** Fewest merged observations per arm before any verdict (docs/architecture.md honesty rule 10). */
export const MIN_ARM_OBSERVATIONS = 8;

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

/**
 * The instruments a campaign spec may choose (docs/bench.md "Instruments"). `judged_dataset_run`
 * is produced by compare mode only (`compare:`), never chosen here.
 */
const CampaignInstrument = z.enum(['shadow_dual_run', 'replay']);
type CampaignInstrument = z.infer<typeof CampaignInstrument>;

/**
 * Why a `replay` spec cannot run as written, one issue per field (empty when it can). Replay calls
 * no arm, so anything that needs an arm's output or a live call is refused rather than ignored:
 * a live source (replay prices a frozen dataset's captured usage), `compare`, A-A pairs
 * (`aa_share` must be 0), an `llm_judge` scorer, sequential stopping, and `max_request_cost_usd`
 * (a per-request ceiling on a call that is never made).
 */
export function replayConflicts(spec: {
  source: string;
  compare?: unknown;
  aa_share: number;
  scorers: readonly { kind: string }[];
  stopping?: string | undefined;
  max_request_cost_usd?: number | undefined;
}): { path: (string | number)[]; message: string }[] {
  const out: { path: (string | number)[]; message: string }[] = [];
  const why = 'instrument replay calls no arm';
  if (spec.source === 'live')
    out.push({ path: ['source'], message: `${why}: it prices a frozen dataset's captured usage, use frozen:<hash>` });
  if (spec.compare !== undefined) out.push({ path: ['compare'], message: `${why}: it cannot run in compare mode` });
  if (spec.aa_share !== 0) out.push({ path: ['aa_share'], message: `${why}: it draws no A-A pairs, set aa_share: 0` });
  spec.scorers.forEach((sc, i) => {
    if (sc.kind === 'llm_judge')
      out.push({ path: ['scorers', i], message: `${why}: there is no candidate output to judge` });
  });
  if (spec.stopping === 'sequential')
    out.push({ path: ['stopping'], message: `${why}: it decides no quality, so there is nothing to stop on` });
  if (spec.max_request_cost_usd !== undefined)
    out.push({ path: ['max_request_cost_usd'], message: `${why}: there is no request to cap` });
  return out;
}

/**
 * The campaign spec an operator submits (POST /v1/campaigns). Immutable once running.
 * Money in USD, margins in percentage points (pp) of quality on a 0–1 scale × 100,
 * `min_savings` as a fraction (0.2 = 20% cheaper). Source: docs/architecture.md "Contracts" (Campaign).
 */
export const CampaignSpec = z
  .object({
    name: z.string().min(1).max(200).describe('human name shown in reports'),
    suite: SubjectToken.describe('the capture suite this campaign reads (sidecar rules or x-shadow-suite)'),
    call_types: z
      .array(SubjectToken)
      .min(1)
      .max(32)
      .describe('call types of the suite to shadow; each gets its own verdict'),
    source: z
      .union([
        z.literal('live'),
        z.string().regex(/^frozen:[0-9a-f]{64}$/, "must be 'live' or 'frozen:<dataset_hash>'"),
      ])
      .default('live')
      .describe(
        "live: traffic captured after launch; frozen:<dataset_hash>: exactly that frozen dataset's captures, weights kept, no live traffic (one call type, the dataset's; POST /v1/suites/{suite}/freeze)",
      ),
    incumbent: Arm.describe('the tier serving production now: the reference every candidate is paired with'),
    candidates: z.array(Arm).min(1).max(8).describe('cheaper tiers to test against the incumbent'),
    sample_rate: z
      .number()
      .gt(0)
      .max(1)
      .default(1)
      .describe('share of captured unique items to dispatch, chosen by item_hash so every worker agrees'),
    max_items: z
      .number()
      .int()
      .positive()
      .max(MAX_ITEMS_CEILING)
      .default(MAX_ITEMS_DEFAULT)
      .describe('unique items dispatched per call type'),
    max_cost_usd: z
      .number()
      .positive()
      .max(1_000_000)
      .describe('hard budget, USD: settled + reserved spend never exceeds it'),
    deadline: z.iso.datetime({ offset: true }).optional().describe('no new dispatch after this instant (ISO 8601)'),
    margins: z
      .object({
        noninferiority_pp: z
          .number()
          .min(0)
          .max(100)
          .default(2)
          .describe('how many percentage points of quality a candidate may lose and still pass'),
        min_savings: z
          .number()
          .min(0)
          .max(1)
          .default(0)
          .describe('the cost savings (fraction) the lower interval bound must reach to pass'),
      })
      .strict()
      .default({ noninferiority_pp: 2, min_savings: 0 }),
    /** hard per-request cost ceiling for candidates, USD; breaching it fails the candidate */
    max_request_cost_usd: z.number().positive().optional(),
    scorers: z
      .array(ScorerSpec)
      .default([{ kind: 'expectations' }])
      .describe('how outputs are scored; composite quality is their weighted mean'),
    alpha: z
      .number()
      .gt(0)
      .lt(0.5)
      .default(0.05)
      .describe('one-sided error rate before Bonferroni and α-spending across repeated runs'),
    /** share of items that get a second, independent incumbent call (A-A noise floor) */
    aa_share: z.number().min(0).max(1).default(0.1),
    bootstrap: z
      .object({
        resamples: z.number().int().min(2000).max(100_000).default(2000),
        seed: z.number().int().nonnegative().default(1),
      })
      .strict()
      .default({ resamples: 2000, seed: 1 }),
    retention: z
      .object({
        ttl_days: z.number().int().min(1).max(365).default(7),
        purpose: z.string().min(1).max(200).default('shadow-evaluation'),
      })
      .strict()
      .default({ ttl_days: 7, purpose: 'shadow-evaluation' }),
    /** traffic classes admitted as evidence; production only unless widened on purpose */
    traffic_classes: z
      .array(z.enum(['production', 'synthetic', 'import', 'test']))
      .min(1)
      .default(['production']),
    expectations: z.array(Expectation).optional(),
    stopping: z
      .enum(['fixed', 'sequential'])
      .optional()
      .describe(
        'fixed (absent): decide at max_items or the budget; sequential: look after every batch with anytime-valid confidence sequences and stop (state decided) once every candidate is settled',
      ),
    stopping_batch_items: z
      .number()
      .int()
      .min(1)
      .max(MAX_ITEMS_CEILING)
      .optional()
      .describe(
        `paired items per candidate between two sequential looks (default ${SEQUENTIAL_BATCH_DEFAULT}); only with stopping sequential`,
      ),
    /** compare mode (docs/bench.md): the candidates alone, paired with a baseline run's retained arm */
    compare: CompareSpec.optional(),
    instrument: CampaignInstrument.optional().describe(
      "how the run measures (absent: shadow_dual_run). shadow_dual_run: every arm called on each item; replay: no arm is called ($0): each frozen item's captured production usage is priced on the incumbent's and each candidate's rate card, the candidate's token counts assumed equal to the incumbent's; cost half only, never a quality verdict, scorers not applied (needs a frozen source and aa_share 0; no llm_judge, sequential stopping, compare or max_request_cost_usd)",
    ),
  })
  .strict()
  .superRefine((spec, ctx) => {
    if (spec.stopping_batch_items !== undefined && spec.stopping !== 'sequential')
      ctx.addIssue({
        code: 'custom',
        message: 'stopping_batch_items applies only to stopping: sequential',
        path: ['stopping_batch_items'],
      });
    if (spec.stopping_batch_items !== undefined && spec.stopping_batch_items > spec.max_items)
      ctx.addIssue({
        code: 'custom',
        message: `stopping_batch_items (${spec.stopping_batch_items}) must not exceed max_items (${spec.max_items}): no look would happen before the end`,
        path: ['stopping_batch_items'],
      });
    if (spec.compare && spec.candidates.length !== 1)
      ctx.addIssue({
        code: 'custom',
        message: 'compare mode runs exactly one candidate (the current config) against the baseline',
        path: ['candidates'],
      });
    if (spec.compare && spec.scorers.some((s) => s.kind === 'llm_judge'))
      ctx.addIssue({
        code: 'custom',
        message: 'compare mode scores with programmatic scorers and outcomes only: an llm_judge needs both arms called',
        path: ['scorers'],
      });
    if (spec.instrument === 'replay') replayConflicts(spec).forEach((x) => ctx.addIssue({ code: 'custom', ...x }));
    const ids = [spec.incumbent.id, ...spec.candidates.map((c) => c.id)];
    const seen = new Set<string>();
    ids.forEach((id, i) => {
      // reserved for the A-A arm the duplicator generates: a spec arm with it would take its
      // observations, reservations and dispatch records
      if (id.endsWith(AA_ARM_SUFFIX))
        ctx.addIssue({
          code: 'custom',
          message: `arm ids ending in ${AA_ARM_SUFFIX} are reserved for the generated A-A arm (${aaArmId(spec.incumbent.id)})`,
          path: i === 0 ? ['incumbent', 'id'] : ['candidates', i - 1, 'id'],
        });
      if (seen.has(id))
        ctx.addIssue({
          code: 'custom',
          message: `duplicate arm id ${id}`,
          path: i === 0 ? ['incumbent', 'id'] : ['candidates', i - 1, 'id'],
        });
      seen.add(id);
    });
    // a call type listed twice would be counted and budgeted twice
    const cts = new Set<string>();
    spec.call_types.forEach((ct, i) => {
      if (cts.has(ct)) ctx.addIssue({ code: 'custom', message: `duplicate call type ${ct}`, path: ['call_types', i] });
      cts.add(ct);
    });
    // one judge per campaign: its weight, budget and calibration are reported as one instrument
    spec.scorers.forEach((sc, i) => {
      if (sc.kind === 'llm_judge' && spec.scorers.findIndex((x) => x.kind === 'llm_judge') !== i)
        ctx.addIssue({ code: 'custom', message: 'at most one llm_judge scorer', path: ['scorers', i] });
    });
    // a pattern that does not compile would score every item null and spend the budget for nothing
    spec.scorers.forEach((sc, i) => {
      if (sc.kind !== 'regex') return;
      try {
        new RegExp(sc.pattern);
      } catch (e) {
        ctx.addIssue({
          code: 'custom',
          message: `pattern does not compile: ${(e as Error).message}`,
          path: ['scorers', i, 'pattern'],
        });
      }
    });
  });
export type CampaignSpec = z.infer<typeof CampaignSpec>;
/** The campaign spec as submitted, before defaults. */
export type CampaignSpecInput = z.input<typeof CampaignSpec>;

/**
 * Lifecycle of a campaign. `budget_exhausted`, `completed` and `decided` (a sequential campaign
 * whose every candidate is settled) are terminal like `stopped`.
 */
export const CampaignState = z.enum(['running', 'paused', 'stopped', 'completed', 'budget_exhausted', 'decided']);
/** The terminal states: no new dispatch, in-flight arms settle, unspent reservation is released. */
export const TERMINAL_CAMPAIGN_STATES: readonly CampaignState[] = Object.freeze([
  'stopped',
  'completed',
  'budget_exhausted',
  'decided',
]);

export type CampaignState = z.infer<typeof CampaignState>;

/**
 * A campaign as stored in the `shadow_campaigns` KV under its id. `spec` is pinned at launch;
 * `spec_hash` = contentHash(spec). `run_index` numbers repeated runs of the same comparison
 * (same suite, call types and arms) for α-spending (1 for the first).
 */
export const Campaign = z
  .object({
    schema: z.literal('shadow.campaign/v1'),
    id: SubjectToken,
    spec: CampaignSpec,
    spec_hash: z.string(),
    comparison_key: z.string(),
    run_index: z.number().int().positive(),
    state: CampaignState,
    state_reason: z.string().nullable(),
    created_at: z.iso.datetime({ offset: true }),
    updated_at: z.iso.datetime({ offset: true }),
  })
  .strict();
export type Campaign = z.infer<typeof Campaign>;

/**
 * The per-campaign budget ledger in `shadow_budget`, integers in micro-USD so sums are exact.
 * Invariant: settled + reserved ≤ limit, kept by compare-and-set (docs/architecture.md honesty rule 6).
 */
export const BudgetLedger = z
  .object({
    limit_micro_usd: z.number().int().nonnegative(),
    reserved_micro_usd: z.number().int().nonnegative(),
    settled_micro_usd: z.number().int().nonnegative(),
    exhausted: z.boolean(),
    /**
     * Reservations not yet settled, by reservation id → micro-USD (libs/budget). When present,
     * `reserved_micro_usd` equals the sum of its values; keeping each reservation by id makes
     * reserve and settle idempotent across redeliveries and crashes. Absent = none outstanding
     * (a ledger as created at launch).
     */
    outstanding: z.record(z.string(), z.number().int().positive()).optional(),
  })
  .strict();
export type BudgetLedger = z.infer<typeof BudgetLedger>;

/** One allowlisted provider: id → base URL and the secret that holds its API key. */
export const ProviderEntry = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/),
    base_url: z.url(),
    api: Api,
    /** env var name or file path holding the API key; never the key itself */
    api_key_env: z.string().optional(),
    api_key_file: z.string().optional(),
    /** provider family, for refusing same-family judges (e.g. openai, anthropic) */
    family: z.string().optional(),
  })
  .strict();
export type ProviderEntry = z.infer<typeof ProviderEntry>;

/** The operator allowlist: the only providers any arm or judge may name. */
export const ProviderAllowlist = z.array(ProviderEntry);
export type ProviderAllowlist = z.infer<typeof ProviderAllowlist>;

/** A first-party outcome (POST /v1/outcomes) for an envelope or an item. */
export const Outcome = z
  .object({
    campaign_id: SubjectToken.optional(),
    envelope_id: z.uuid().optional(),
    item_hash: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional(),
    arm_id: SubjectToken.optional(),
    result: z.enum(['pass', 'fail', 'score']),
    score: z.number().min(0).max(1).optional(),
    source: z.string().min(1).max(200),
    closes_task: z.boolean().default(false),
    at: z.iso.datetime({ offset: true }).optional(),
  })
  .strict()
  .refine((o) => o.envelope_id !== undefined || o.item_hash !== undefined, {
    message: 'one of envelope_id or item_hash is required',
    path: ['item_hash'],
  })
  .refine((o) => o.result !== 'score' || o.score !== undefined, {
    message: 'score is required when result is score',
    path: ['score'],
  });
export type Outcome = z.infer<typeof Outcome>;

/**
 * The `paid_dispatch` kill switch value in the `shadow_flags` KV. Unknown (absent, unreadable,
 * unparsable) means off: fail closed. Source: docs/architecture.md honesty rules and "State".
 */
export const PaidDispatchFlag = z
  .object({
    enabled: z.boolean(),
    updated_at: z.iso.datetime({ offset: true }),
    updated_by: z.string().max(200),
    reason: z.string().max(500).optional(),
  })
  .strict();
export type PaidDispatchFlag = z.infer<typeof PaidDispatchFlag>;
