import { z } from 'zod';
import { SubjectToken } from './envelope.js';

/** A campaign id, `cmp_` + lowercase hex (as the control API mints them). */
const CampaignIdRef = z.string().regex(/^cmp_[0-9a-z]{1,60}$/);

/**
 * How a compare run names its baseline: a completed campaign id (`cmp_…`) or `<suite>:main`, the
 * run pinned as that suite's baseline (`PUT /v1/suites/{suite}/baseline`).
 */
export const BaselineRef = z
  .string()
  .regex(/^(cmp_[0-9a-z]{1,60}|[A-Za-z0-9_-]{1,64}:main)$/, "must be a campaign id (cmp_…) or '<suite>:main'");
export type BaselineRef = z.infer<typeof BaselineRef>;

/**
 * The baseline as the control API resolved it at launch, pinned into the run spec so a report
 * never depends on what a suite's baseline points at later (honesty rule 11).
 */
const ResolvedBaseline = z
  .object({
    /** the baseline run (campaign id) whose retained arm observations and artifacts are paired */
    campaign_id: CampaignIdRef,
    /** the arm of the baseline run that is the reference (its incumbent unless pinned otherwise) */
    arm_id: SubjectToken,
    /** the baseline run's final report id when resolved (content hash) */
    report_id: z.string().regex(/^[0-9a-f]{64}$/),
  })
  .strict();

/**
 * `compare` in a campaign spec: run the candidate(s) alone and pair each item, by item_hash, with
 * the baseline run's retained observation of the baseline arm (re-scored from its artifact). The
 * spec's `incumbent` is the baseline arm (filled in by the control API when omitted); it is never
 * called. `resolved` is written by the control API at launch; a submitted one is refused.
 * Source: docs/bench.md "Compare mode".
 */
export const CompareSpec = z
  .object({
    baseline: BaselineRef.describe("the baseline run: a completed campaign id (cmp_…) or '<suite>:main'"),
    resolved: ResolvedBaseline.optional().describe('set by the control API at launch: the pinned baseline'),
  })
  .strict();
export type CompareSpec = z.infer<typeof CompareSpec>;

/**
 * A suite's pinned baseline (`shadow.baseline/v1`), stored in the reports KV under
 * `baseline.<suite>`. Written only through `PUT /v1/suites/{suite}/baseline` (write scope).
 */
export const Baseline = z
  .object({
    schema: z.literal('shadow.baseline/v1'),
    suite: SubjectToken,
    campaign_id: CampaignIdRef,
    arm_id: SubjectToken,
    report_id: z.string().regex(/^[0-9a-f]{64}$/),
    run_record_id: z.string().nullable(),
    /** the baseline run's source (`live` or `frozen:<dataset_hash>`) */
    source: z.string(),
    call_types: z.array(SubjectToken).min(1),
    pinned_at: z.iso.datetime({ offset: true }),
    pinned_by: z.string().max(200),
  })
  .strict();
export type Baseline = z.infer<typeof Baseline>;

/** Exclusion reason of an item whose baseline observation's artifact is missing or expired. */
export const BASELINE_ARTIFACT_MISSING = 'baseline_artifact_missing';
/** Exclusion reason of an item the compare run saw that the baseline run never observed. */
export const NOT_IN_BASELINE = 'not_in_baseline';
