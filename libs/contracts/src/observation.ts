import { z } from 'zod';
import { Cost, ErrorClass, Usage } from './usage.js';
import { Expectation, SubjectToken, TrafficClass } from './envelope.js';

/** Role of an arm call: the incumbent, a candidate, or the second incumbent call of an A-A pair. */
export const ArmRole = z.enum(['incumbent', 'candidate', 'incumbent_aa']);
export type ArmRole = z.infer<typeof ArmRole>;

/**
 * How an observation was produced, which caps what the fold may conclude from it (docs/architecture.md
 * "Verdict statistics"): `shadow_dual_run` (all arms called together from the same pinned
 * envelope: counterfactual, any verdict state), `judged_dataset_run` (arms run over a dataset
 * and judged, not a contemporaneous shadow of production: at most ON_FRONTIER), `replay`
 * (a candidate re-run of captured traffic against a historical served output: the cost half only,
 * never a quality verdict).
 */
export const Instrument = z.enum(['shadow_dual_run', 'judged_dataset_run', 'replay']);
export type Instrument = z.infer<typeof Instrument>;

/**
 * `shadow.observation/v1`: one arm call for one item, published on `shadow.obs.<campaign>`.
 * Times ISO-8601; durations ms. `usage` fields null when not reported; `abandoned` = 2xx without
 * usage (billed but uncounted). `charged_micro_usd` is what the budget ledger settled for this
 * call (actual cost, or the reserved upper bound when cost is unknown), summed over retries.
 * `start_skew_ms` = this arm's start minus the earliest arm start for the same item.
 * `output_text` is absent on the bus (outputs live encrypted in the artifact store); it is filled
 * in only by an authorised export for offline folds.
 * Source: docs/architecture.md "Contracts" (Observation).
 */
export const Observation = z
  .object({
    schema: z.literal('shadow.observation/v1'),
    campaign_id: SubjectToken,
    item_hash: z.string().regex(/^[0-9a-f]{64}$/),
    call_type: SubjectToken,
    arm_id: SubjectToken,
    role: ArmRole,
    instrument: Instrument,
    envelope_id: z.uuid(),
    provider: z.string(),
    model: z.string(),
    started_at: z.iso.datetime({ offset: true }),
    ended_at: z.iso.datetime({ offset: true }),
    start_skew_ms: z.number().nonnegative(),
    attempts: z.number().int().positive(),
    status: z.enum(['ok', 'error']),
    http_status: z.number().int().nullable(),
    error_class: ErrorClass.nullable(),
    latency_ms: z.number().nonnegative().nullable(),
    ttft_ms: z.number().nonnegative().nullable(),
    usage: Usage,
    cost: Cost,
    charged_micro_usd: z.number().int().nonnegative(),
    upstream: z.string().nullable(),
    model_echo: z.string().nullable(),
    pin_honored: z.boolean().nullable(),
    abandoned: z.boolean(),
    finish_reason: z.string().nullable(),
    artifact_ref: z.string().nullable(),
    output_digest: z.string().nullable(),
    output_text: z.string().nullable().optional(),
    /** tool calls the model asked for: recorded, never executed */
    tool_calls: z.array(z.object({ name: z.string(), arguments: z.string() })).default([]),
    /** near-duplicate signature of the normalised prompt (64-bit SimHash, 16 hex chars) */
    prompt_simhash: z.string().regex(/^[0-9a-f]{16}$/),
    traffic_class: TrafficClass,
    expectations: z.array(Expectation),
  })
  .strict();
export type Observation = z.infer<typeof Observation>;

/**
 * `shadow.item_event/v1`, also on `shadow.obs.<campaign>`: what happened to an item besides arm
 * calls. `duplicate` adds exact-duplicate weight; `excluded` removes the item with a reason
 * (e.g. `pii_uncertain`, `over_max_items`, `untranslatable:<what>`, `stateful_request`,
 * `lost_in_flight`, `budget_exhausted`, `traffic_class`; in a frozen run `capture_expired` /
 * `capture_mismatch` for a dataset reference no longer in the capture stream).
 */
export const ItemEvent = z
  .object({
    schema: z.literal('shadow.item_event/v1'),
    campaign_id: SubjectToken,
    item_hash: z.string().regex(/^[0-9a-f]{64}$/),
    call_type: SubjectToken,
    envelope_id: z.uuid(),
    kind: z.enum(['duplicate', 'excluded']),
    reason: z.string().nullable(),
    at: z.iso.datetime({ offset: true }),
  })
  .strict();
export type ItemEvent = z.infer<typeof ItemEvent>;

/**
 * `shadow.outcome/v1`: a first-party outcome accepted by the control API (POST /v1/outcomes),
 * published on `shadow.obs.<campaign>` (or `shadow.obs._outcomes` when it names no campaign) so
 * the verdict service folds it with the observations. `outcome_id` = contentHash of the outcome
 * fields, so a retried POST is de-duplicated by JetStream.
 */
export const OutcomeRecord = z
  .object({
    schema: z.literal('shadow.outcome/v1'),
    outcome_id: z.string().regex(/^[0-9a-f]{64}$/),
    campaign_id: SubjectToken.nullable(),
    envelope_id: z.uuid().nullable(),
    item_hash: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .nullable(),
    arm_id: SubjectToken.nullable(),
    result: z.enum(['pass', 'fail', 'score']),
    score: z.number().min(0).max(1).nullable(),
    source: z.string(),
    closes_task: z.boolean(),
    received_at: z.iso.datetime({ offset: true }),
  })
  .strict();
export type OutcomeRecord = z.infer<typeof OutcomeRecord>;

/**
 * `shadow.judge_verdict/v1`, on `shadow.obs.<campaign>`: the LLM judge's verdict on one arm of one
 * item (pointwise) or on one candidate against the incumbent (pairwise), published by the
 * duplicator after the item's arms settled. `score` in [0, 1]: pointwise the judge's grade of
 * `arm_id`'s output; pairwise the candidate's preference (win 1, tie 0.5, loss 0) averaged over
 * both presentation orders. `score` is null — never 0 — when the judge was refused (same family),
 * unaffordable, timed out, refused to answer or replied unparsably; `null_reason` says which.
 * `orders` records each call's parsed result (`ab` = candidate shown first). `position_flip` is
 * true when the two orders disagree on the winner (pairwise, both parsed), else false or null.
 * `charged_micro_usd` is what the ledger settled for the judge calls (evaluation cost, never an
 * arm's). `artifact_ref` names the encrypted raw replies (artifact store, same retention).
 * `template_hash` = sha256 of the prompt template the judge was given (pinned in the spec via
 * `template_version`).
 */
export const JudgeVerdict = z
  .object({
    schema: z.literal('shadow.judge_verdict/v1'),
    campaign_id: SubjectToken,
    item_hash: z.string().regex(/^[0-9a-f]{64}$/),
    call_type: SubjectToken,
    envelope_id: z.uuid(),
    mode: z.enum(['pointwise', 'pairwise']),
    arm_id: SubjectToken,
    role: ArmRole,
    against_arm_id: SubjectToken.nullable(),
    judge_provider: z.string(),
    judge_model: z.string(),
    judge_family: z.string(),
    arm_families: z.array(z.string()),
    template_id: z.string(),
    template_hash: z.string().regex(/^[0-9a-f]{64}$/),
    score: z.number().min(0).max(1).nullable(),
    null_reason: z.string().nullable(),
    orders: z.array(
      z
        .object({
          order: z.enum(['single', 'ab', 'ba']),
          value: z.number().min(0).max(1).nullable(),
          reason: z.string().nullable(),
        })
        .strict(),
    ),
    position_flip: z.boolean().nullable(),
    calls: z.number().int().nonnegative(),
    charged_micro_usd: z.number().int().nonnegative(),
    cost_usd: z.number().nonnegative().nullable(),
    artifact_ref: z.string().nullable(),
  })
  .strict();
export type JudgeVerdict = z.infer<typeof JudgeVerdict>;

/** Any message on the OBS stream. */
export const ObsMessage = z.discriminatedUnion('schema', [Observation, ItemEvent, OutcomeRecord, JudgeVerdict]);
export type ObsMessage = z.infer<typeof ObsMessage>;

/**
 * Per (campaign, item, arm) dispatch state in `shadow_dispatch`, for idempotent redelivery.
 * `invoking` written (by CAS) before the provider call; a redelivered item that finds `invoking`
 * from a dead worker is not invoked again — it is lost in flight and charged its upper bound.
 */
export const DispatchState = z
  .object({
    state: z.enum(['invoking', 'done', 'lost']),
    worker_id: z.string(),
    reserved_micro_usd: z.number().int().nonnegative(),
    at: z.iso.datetime({ offset: true }),
    /** provider calls started for this arm so far (retries included); absent in older records */
    attempts: z.number().int().nonnegative().optional(),
    /** `done`: what the ledger settled for this arm; `lost`: the upper bound it was charged */
    charged_micro_usd: z.number().int().nonnegative().optional(),
    /** `done`: the observation as published, so a redelivery can re-publish it (JetStream de-dupes) */
    observation: Observation.optional(),
  })
  .strict();
export type DispatchState = z.infer<typeof DispatchState>;
