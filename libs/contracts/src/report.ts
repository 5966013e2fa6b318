import { z } from 'zod';
import { DatasetCard } from './dataset-card.js';
import { Instrument } from './observation.js';

// Report contracts. Written by the verdict service (services/verdict, libs/evidence), read by
// control, shadowctl and the demo through @shadowplane/reports. Additive changes only.

/** A lowercase sha256 hex digest (64 characters). */
export const Hex64 = z.string().regex(/^[0-9a-f]{64}$/);
const NullableNumber = z.number().nullable();

/** A point estimate with a two-sided percentile interval (quality on the 0–1 scale, savings as a fraction). */
export const IntervalValue = z.object({ point: z.number(), lower: z.number(), upper: z.number() }).strict();
export type IntervalValue = z.infer<typeof IntervalValue>;

/**
 * The power plan of one comparison (libs/stats `powerPlanFromPairs`): the minimum detectable effect
 * in pp at the clusters we have, where the sd of the paired difference came from (an upper
 * confidence bound on the observed candidate-vs-incumbent spread, or the conservative prior before
 * enough pairs), and the clusters needed for MDE ≤ margin. It explains an inconclusive verdict;
 * never the verdict.
 */
export const PowerPlanValue = z
  .object({
    clusters: z.number().int().nonnegative(),
    alpha_one_sided: z.number(),
    power: z.number(),
    margin_pp: z.number(),
    sd_diff: z.number(),
    /**
     * where sd_diff came from: `paired_upper_bound` (upper confidence bound on the observed
     * candidate-vs-incumbent paired spread), `conservative_prior` (before enough pairs), or
     * `aa_pairs` (reports written before this rule: the A-A spread, which understates it)
     */
    sd_source: z.enum(['paired_upper_bound', 'conservative_prior', 'aa_pairs']),
    aa_pairs: z.number().int().nonnegative(),
    mde_pp: z.number().nullable(),
    clusters_needed_for_margin: z.number().int().nullable(),
    powered: z.boolean(),
    /** observed sd of the paired per-cluster difference, when sd_source is paired_upper_bound */
    sd_observed: z.number().nullable().optional(),
    /** its one-sided upper confidence bound and the confidence used */
    sd_upper_bound: z.number().nullable().optional(),
    sd_confidence: z.number().optional(),
    /** Kish design effect of the cluster weights the prior and the floor are inflated by */
    design_effect: z.number().optional(),
    /** sd of the A-A quality deltas: the incumbent's own noise floor (never the plan's sd) */
    noise_floor_sd: z.number().nullable().optional(),
  })
  .strict();
export type PowerPlanValue = z.infer<typeof PowerPlanValue>;

/** A mean over the values a provider reported; nulls are counted, never treated as zero. */
export const ReportedMean = z
  .object({ mean: NullableNumber, n_reported: z.number().int().nonnegative(), n_null: z.number().int().nonnegative() })
  .strict();
export type ReportedMean = z.infer<typeof ReportedMean>;

/** p50/p90 (type-7 quantiles) over reported values, ms. */
export const Percentiles = z
  .object({ p50: NullableNumber, p90: NullableNumber, n: z.number().int().nonnegative() })
  .strict();
export type Percentiles = z.infer<typeof Percentiles>;

/** A share with its 95% Wilson interval (null when n = 0). */
export const ShareValue = z
  .object({
    n: z.number().int().nonnegative(),
    of: z.number().int().nonnegative(),
    share: NullableNumber,
    lower: NullableNumber,
    upper: NullableNumber,
  })
  .strict();
export type ShareValue = z.infer<typeof ShareValue>;

/**
 * Per arm × call type views. Costs are means over the arm's ok observations priced on `cost.basis`
 * (the arm's majority basis); other-basis and unpriced observations are counted, never blended.
 * Token components in billed units: uncached input = input − cache reads − cache writes (only where
 * all three were reported), cache reads, cache writes, output (reasoning included), reasoning.
 * `status`: `measurable` (≥ 8 ok, scored, priced on a deciding basis), `insufficient`, `unpriced`,
 * `estimate_only` (priced only by the chars÷4 estimate: shown, never ranked), `unscored`, `missing`.
 */
export const ArmView = z
  .object({
    arm_id: z.string(),
    role: z.enum(['incumbent', 'candidate']),
    provider: z.string(),
    model: z.string(),
    status: z.enum(['measurable', 'insufficient', 'unpriced', 'estimate_only', 'unscored', 'missing']),
    observations: z
      .object({
        total: z.number().int().nonnegative(),
        ok: z.number().int().nonnegative(),
        error: z.number().int().nonnegative(),
        abandoned: z.number().int().nonnegative(),
        aa_second_calls: z.number().int().nonnegative(),
      })
      .strict(),
    error_share: ShareValue,
    errors_by_class: z.record(z.string(), ShareValue),
    cost: z
      .object({
        basis: z.enum(['provider_reported', 'rate_card', 'estimate']).nullable(),
        per_request_mean_usd: NullableNumber,
        total_usd: NullableNumber,
        n_priced: z.number().int().nonnegative(),
        n_other_basis: z.number().int().nonnegative(),
        n_unpriced: z.number().int().nonnegative(),
        /** total cost on `basis` ÷ tasks closed by first-party outcomes; null unless an outcome closes a task */
        per_task_usd: NullableNumber,
        tasks_closed: z.number().int().nonnegative(),
        /**
         * calls whose provider reported a cost of 0 beside billed tokens: not counted as free
         * (priced by the rate card, or unpriced without one). Optional: absent in older reports.
         */
        n_provider_zero_mismatch: z.number().int().nonnegative().optional(),
      })
      .strict(),
    tokens: z
      .object({
        input_uncached: ReportedMean,
        cache_read: ReportedMean,
        cache_write: ReportedMean,
        output: ReportedMean,
        reasoning: ReportedMean,
      })
      .strict(),
    /**
     * Measured times. Optional: reports written since run records exist omit them (they differ on
     * every run and say nothing about quality or cost); the run record carries them per call type
     * and arm (`RunRecord.call_types[].arms[].latency_ms / ttft_ms`). Present in older reports.
     */
    latency_ms: Percentiles.optional(),
    ttft_ms: Percentiles.optional(),
    cache_hit_share: ShareValue,
    quality: z
      .object({
        mean: NullableNumber,
        n_scored: z.number().int().nonnegative(),
        n_unscored: z.number().int().nonnegative(),
      })
      .strict(),
  })
  .strict();
export type ArmView = z.infer<typeof ArmView>;

/** The four verdict states per candidate (docs/architecture.md "Statistics of a verdict"). */
export const CandidateState = z.enum(['BEAT', 'NOT_BEAT', 'ON_FRONTIER', 'CANNOT_MEASURE']);
export type CandidateState = z.infer<typeof CandidateState>;

/** Why a comparison cannot be measured. */
export const CannotMeasureReason = z.enum([
  'missing_arm',
  'mixed_bases',
  'unpriced',
  'estimate_only',
  'unscored',
  'insufficient',
  /** the pairs come from replay: cost is measured, quality never decided */
  'instrument_cost_only',
]);
export type CannotMeasureReason = z.infer<typeof CannotMeasureReason>;

/** A named next step that would turn an inconclusive or unmeasurable comparison into an answer. */
export const Remediation = z.object({ code: z.string(), text: z.string() }).strict();
export type Remediation = z.infer<typeof Remediation>;

/** See {@link Comparison} `sequential`. Bounds on the 0–1 quality scale and as savings fractions. */
export const SequentialSummary = z
  .object({
    method: z.string(),
    batch_items: z.number().int().positive(),
    looks: z.number().int().nonnegative(),
    decision: z.enum(['pass', 'fail', 'futile', 'continue']),
    reason: z.string(),
    /** 1-based look that settled the candidate, or null */
    settled_look: z.number().int().positive().nullable(),
    /** paired items up to the settling look (all paired items when unsettled) */
    items_used: z.number().int().nonnegative(),
    /** paired items in this comparison (the settling look's plus what was in flight) */
    items_paired: z.number().int().nonnegative(),
    max_items: z.number().int().positive(),
    /**
     * max_items − items_paired, ≥ 0: items not paid for against max_items — by the sequential stop
     * when the campaign is `decided`, otherwise because traffic, the deadline or the budget ran out
     * (the campaign state says which)
     */
    items_saved: z.number().int().nonnegative(),
    alpha_one_sided_adjusted: z.number(),
    quality_delta: z.object({ lower: z.number(), upper: z.number() }).strict(),
    cost_savings: z.object({ lower: z.number(), upper: z.number() }).strict().nullable(),
    /** clusters whose weight was clipped to the predictable bound (quality, savings) */
    clipped: z.object({ quality: z.number().int(), savings: z.number().int() }).strict(),
    /** group_sequential only: the planned looks (paired items), ending at max_items */
    planned_looks: z.array(z.number().int().positive()).optional(),
    /** group_sequential only: the efficacy boundary (Z scale) of every planned look */
    boundaries: z.array(z.number()).optional(),
    /** group_sequential only: conditional power under D = 0 at the last look evaluated (null at the final look) */
    conditional_power: z.number().nullable().optional(),
  })
  .strict();
export type SequentialSummary = z.infer<typeof SequentialSummary>;

/**
 * One candidate vs the incumbent on one call type. `stats` is null unless the comparison was
 * measured. `insufficient` is set (and state CANNOT_MEASURE) when fewer than MIN_ARM_OBSERVATIONS
 * paired items remain. Trust class: A = every composite score programmatic/first-party (judge
 * weight share 0); B = judge weight share in (0, 0.5]; C = judge share > 0.5 (judge-dominated).
 */
export const Comparison = z
  .object({
    candidate_arm_id: z.string(),
    state: CandidateState,
    cannot_measure: z.object({ reason: CannotMeasureReason, detail: z.string() }).strict().nullable(),
    insufficient: z
      .object({ below_min_n: z.literal(true), need: z.number().int(), have: z.number().int() })
      .strict()
      .nullable(),
    decision: z.enum(['pass', 'fail', 'inconclusive']).nullable(),
    decision_reasons: z.array(z.string()),
    remediation: z.array(Remediation),
    basis: z.enum(['provider_reported', 'rate_card']).nullable(),
    pairs: z
      .object({
        items: z.number().int().nonnegative(),
        clusters: z.number().int().nonnegative(),
        total_weight: z.number().nonnegative(),
        excluded: z.record(z.string(), z.number().int().nonnegative()),
      })
      .strict(),
    hard_gate_failures: z.number().int().nonnegative(),
    cost_ceiling_breaches: z.number().int().nonnegative(),
    trust_class: z.enum(['A', 'B', 'C']).nullable(),
    judge_weight_share: z.number().nullable(),
    /** why the LLM judge was not used for this pair (same family as an arm), or null */
    judge_refused: z.string().nullable().optional(),
    /**
     * The weakest instrument among the paired observations, which capped the state (docs/architecture.md
     * "Verdict statistics"). Optional: reports written before instruments were recorded are all
     * shadow_dual_run.
     */
    instrument: Instrument.optional(),
    stats: z
      .object({
        quality_delta: IntervalValue,
        cost_savings: IntervalValue.nullable(),
        cost_savings_null_reason: z.string().nullable(),
        resamples: z.number().int(),
        seed: z.number().int(),
        level: z.number(),
        alpha_one_sided_adjusted: z.number(),
        candidates_k: z.number().int(),
        run_index: z.number().int(),
        margin_pp: z.number(),
        min_savings: z.number(),
        /** how the decision intervals were built (optional: absent in reports before it was recorded) */
        interval_method: z.string().optional(),
      })
      .strict()
      .nullable(),
    power_plan: PowerPlanValue.nullable(),
    /**
     * The sequential stopping rule's record (spec `stopping: sequential` or `group_sequential`):
     * method, looks, the bounds at the last look evaluated (running confidence-sequence bounds, or
     * the group-sequential look's interval at its boundary), the decision, and the items used and
     * saved against max_items; group_sequential adds the planned looks and their boundaries.
     */
    sequential: SequentialSummary.optional(),
  })
  .strict();
export type Comparison = z.infer<typeof Comparison>;

/** A point of the cost–quality chart: means over the pairs (candidates) or the arm's own items (incumbent). */
export const FrontierPoint = z
  .object({
    arm_id: z.string(),
    cost_usd: z.number(),
    quality: z.number(),
    /** whiskers from the paired bootstrap (candidates); null for the incumbent (the reference) */
    cost_interval: z.tuple([z.number(), z.number()]).nullable(),
    quality_interval: z.tuple([z.number(), z.number()]).nullable(),
    on_frontier: z.boolean(),
    dominated_by: z.string().nullable(),
  })
  .strict();
export type FrontierPoint = z.infer<typeof FrontierPoint>;

/**
 * The LLM judge's calibration and cost over a set of items (a call type, or the whole report).
 * `kappa`: Cohen's kappa between the judge and the programmatic / first-party scores on the same
 * items (pointwise: each judged output good/bad at 0.5; pairwise: candidate better / worse / tie),
 * with its 95% interval (Fleiss, Cohen & Everitt 1969 standard error); null with
 * `kappa_none_reason` when no judged item has such a score, or kappa is undefined.
 * `position_flip`: pairwise judgements whose two orders disagreed. `null_scores`: verdicts with a
 * null score, by reason (never counted as 0). `spend_usd`: what the judge calls were charged —
 * evaluation cost, never inside an arm's cost.
 */
export const JudgeSummary = z
  .object({
    provider: z.string(),
    model: z.string(),
    mode: z.enum(['pointwise', 'pairwise']),
    template_id: z.string(),
    template_hash: z.string(),
    verdicts: z.number().int().nonnegative(),
    scored: z.number().int().nonnegative(),
    null_scores: z.record(z.string(), z.number().int().nonnegative()),
    calls: z.number().int().nonnegative(),
    spend_usd: z.number().nonnegative(),
    kappa: z
      .object({
        value: z.number(),
        lower: z.number(),
        upper: z.number(),
        se: z.number(),
        n: z.number().int().positive(),
        observed_agreement: z.number(),
        against: z.string(),
      })
      .strict()
      .nullable(),
    kappa_none_reason: z.string().nullable(),
    position_flip: z
      .object({ n: z.number().int().nonnegative(), of: z.number().int().nonnegative(), rate: z.number().nullable() })
      .strict()
      .nullable(),
  })
  .strict();
export type JudgeSummary = z.infer<typeof JudgeSummary>;

/** Per call type section of a report. */
export const CallTypeReport = z
  .object({
    call_type: z.string(),
    dataset_card: DatasetCard,
    basis: z.enum(['provider_reported', 'rate_card']).nullable(),
    arms: z.array(ArmView),
    comparisons: z.array(Comparison),
    frontier: z
      .object({
        points: z.array(FrontierPoint),
        /** arms not drawn (insufficient, unpriced, estimate-only, unscored, missing) or dominated, with why */
        beside: z.array(z.object({ arm_id: z.string(), why: z.string() }).strict()),
      })
      .strict(),
    /** the LLM judge on this call type, when the campaign has one */
    judge: JudgeSummary.optional(),
  })
  .strict();
export type CallTypeReport = z.infer<typeof CallTypeReport>;

/**
 * A verdict report (`shadow.report/v1`): what the evidence says. Stored with `report_id` = sha256
 * of the canonical JSON (RFC 8785) of the report without `report_id`; byte-stable on re-read.
 * Reproducible: the same pinned spec and the same evidence (observations, item events, outcomes,
 * in any order, from any campaign id, at any time) give the same report and so the same id.
 * Everything a run measured about time and identity — campaign id and state, the time window,
 * latency/TTFT/start-skew percentiles — lives in the run record ({@link RunRecord}), which points
 * at the report. `campaign_id`, `campaign_state` and `window` stay in the schema only so older
 * reports still parse; reports written now omit them. Margins, α and bootstrap settings come from
 * the pinned `spec`, never live config.
 */
export const Report = z
  .object({
    schema: z.literal('shadow.report/v1'),
    report_id: Hex64.optional(),
    /** older reports only; see {@link RunRecord} */
    campaign_id: z.string().optional(),
    provisional: z.boolean(),
    /** older reports only; see {@link RunRecord} */
    campaign_state: z.string().nullable().optional(),
    run_index: z.number().int().positive().optional(),
    spec_hash: z.string().optional(),
    spec: z.unknown().optional(),
    /** older reports only; see {@link RunRecord} */
    window: z
      .object({ first_started_at: z.string().nullable(), last_ended_at: z.string().nullable() })
      .strict()
      .optional(),
    counts: z
      .object({
        messages: z.number().int(),
        observations: z.number().int(),
        item_events: z.number().int(),
        outcomes: z.number().int(),
      })
      .strict()
      .optional(),
    min_arm_observations: z.number().int().optional(),
    call_types: z.array(CallTypeReport).optional(),
    /** one line per candidate and call type, in words */
    verdict_text: z.array(z.string()).optional(),
    /** the LLM judge over every call type (its spend is evaluation cost, apart from the arms) */
    judge: JudgeSummary.optional(),
    bundle_hash: Hex64.optional(),
  })
  .passthrough();
export type Report = z.infer<typeof Report>;
