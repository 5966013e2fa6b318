import { z } from 'zod';
import { Hex64, Percentiles } from './report.js';

// Per-run records and campaign progress: what the verdict service writes while a campaign runs,
// next to (not inside) its reports. Additive changes only.

/** First and last instants of a run, from the observations' own timestamps (ISO 8601), never the clock. */
const RunWindow = z.object({ first_started_at: z.string().nullable(), last_ended_at: z.string().nullable() }).strict();

/**
 * What one run measured about one arm on one call type: type-7 p50/p90 over its ok observations
 * of `latency_ms` (request start → last byte), `ttft_ms` (→ first content token) and
 * `start_skew_ms` (this arm's start minus the earliest arm start for the same item), in ms; and
 * `retries` = Σ(attempts − 1) over all its observations (provider calls repeated by the duplicator).
 * A-A second calls of the incumbent get their own row (role `incumbent_aa`, their own arm id).
 */
export const RunArmTimes = z
  .object({
    arm_id: z.string(),
    role: z.enum(['incumbent', 'candidate', 'incumbent_aa']),
    latency_ms: Percentiles,
    ttft_ms: Percentiles,
    start_skew_ms: Percentiles,
    retries: z.number().int().nonnegative(),
  })
  .strict();
export type RunArmTimes = z.infer<typeof RunArmTimes>;

/**
 * What the calls of one run were charged by the budget ledger, in integer micro-USD (Σ
 * `charged_micro_usd` over the distinct observations handed to the fold, superseded ones included:
 * they were paid for). `arms_micro_usd` sums every arm call (incumbent, candidates, A-A second
 * calls); `by_arm` splits it by `<arm_id>` (A-A second calls under `<arm_id>:aa`). The LLM judge is
 * kept apart: `judge_micro_usd` is Σ `charged_micro_usd` over the judge verdicts (the judge's calls
 * reserve and settle on the same ledger; 0 when the spec configures no `llm_judge` scorer). Calls lost in flight are charged by the ledger without an observation,
 * so the ledger's settled total can exceed `arms_micro_usd`.
 */
export const RunSpend = z
  .object({
    arms_micro_usd: z.number().int().nonnegative(),
    by_arm: z.record(z.string(), z.number().int().nonnegative()),
    judge_micro_usd: z.number().int().nonnegative(),
  })
  .strict();
export type RunSpend = z.infer<typeof RunSpend>;

/**
 * A run record (`shadow.run_record/v1`): what one run measured about time and identity, beside the
 * reproducible report it belongs to. Content-addressed: `run_record_id` = sha256 of the canonical
 * JSON (RFC 8785) of the record without `run_record_id`. It points at its report (`report_id`);
 * the report never points back, so the report's hash does not depend on it. Holds the campaign id
 * and state, the observation time window, per call type × arm latency/TTFT/start-skew percentiles
 * and retries, and delivery counts: `messages_in` = OBS messages handed to the fold (after the
 * verdict service's own de-duplication), `superseded_observations` = observations dropped because
 * an earlier-started one exists for the same call type, item, arm and role (redelivered or
 * re-dispatched work; the report uses the earliest).
 */
export const RunRecord = z
  .object({
    schema: z.literal('shadow.run_record/v1'),
    run_record_id: Hex64.optional(),
    report_id: Hex64,
    campaign_id: z.string(),
    campaign_state: z.string().nullable(),
    provisional: z.boolean(),
    window: RunWindow,
    counts: z
      .object({ messages_in: z.number().int().nonnegative(), superseded_observations: z.number().int().nonnegative() })
      .strict(),
    call_types: z.array(z.object({ call_type: z.string(), arms: z.array(RunArmTimes) }).strict()),
    /** what this run's calls were charged; absent in run records written before it existed */
    spend: RunSpend.optional(),
  })
  .passthrough();
export type RunRecord = z.infer<typeof RunRecord>;

/**
 * Progress of a campaign as the verdict service sees it on the OBS stream (control's
 * GET /v1/campaigns/{id} shows it). Counts per call type and per arm; `updated_at` is wall-clock.
 */
export const CampaignProgress = z
  .object({
    schema: z.literal('shadow.progress/v1'),
    campaign_id: z.string(),
    messages: z.number().int().nonnegative(),
    call_types: z.record(
      z.string(),
      z
        .object({
          items_seen: z.number().int().nonnegative(),
          items_unique: z.number().int().nonnegative(),
          items_dispatched: z.number().int().nonnegative(),
          items_excluded: z.record(z.string(), z.number().int().nonnegative()),
          duplicates: z.number().int().nonnegative(),
        })
        .strict(),
    ),
    arms: z.record(
      z.string(),
      z
        .object({
          calls_ok: z.number().int().nonnegative(),
          calls_error: z.record(z.string(), z.number().int().nonnegative()),
          abandoned: z.number().int().nonnegative(),
        })
        .strict(),
    ),
    latest_report_id: z.string().nullable(),
    updated_at: z.string(),
  })
  .strict();
export type CampaignProgress = z.infer<typeof CampaignProgress>;
