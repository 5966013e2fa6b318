import { z } from 'zod';

// Dataset cards and fit eligibility, apart from the report contracts that they are not part of
// (a card is read by control's power plan and written by the dataset builder). Additive changes only.

/**
 * Why a dataset card is not fit to decide on (closed list):
 * - `census_not_production`: some item is not production traffic (imported, synthetic), or there are no items
 * - `below_min_items`: fewer than MIN_ARM_OBSERVATIONS (8) distinct items or near-duplicate clusters
 * - `underpowered`: the card's power plan does not reach its margin (clusters < clusters needed)
 * - `no_power_plan`: the card holds no readable power plan
 */
export const FIT_INELIGIBLE_REASONS = [
  'census_not_production',
  'below_min_items',
  'underpowered',
  'no_power_plan',
] as const;

/**
 * `card.fit_eligibility`: whether the dataset can carry a decision, derived from the card's own
 * census, counts and power plan by `deriveFitEligibility` (dataset.ts) — never asserted: a dataset whose
 * card states anything else does not parse.
 */
export const FitEligibility = z
  .object({
    eligible: z.boolean(),
    /** empty exactly when eligible */
    reasons: z.array(z.enum(FIT_INELIGIBLE_REASONS)),
  })
  .strict();
export type FitEligibility = z.infer<typeof FitEligibility>;

/**
 * Dataset card for one call type of a campaign: what the evidence is made of.
 * `dataset_hash` = contentHash of the sorted `[item_hash, weight]` pairs of the admitted items,
 * independent of envelope ids and arrival order. Near-duplicate clusters: 64-bit SimHash of the
 * normalised prompt (`prompt_simhash`), items within Hamming distance ≤ `near_duplicate_threshold`
 * bits joined transitively (union-find). Strata: items by their expectation kinds
 * (`numeric`, `exact+regex`, ... or `none`). Exclusions: one row per excluded item with its reason.
 * Source: docs/architecture.md "Contracts" (Report); issue 7 "Dataset card".
 */
export const DatasetCard = z
  .object({
    schema: z.literal('shadow.dataset_card/v1'),
    dataset_hash: z.string().regex(/^[0-9a-f]{64}$/),
    /**
     * The campaign the card was first written for. Optional: cards inside a report (and cards
     * written since run records exist) omit it, so the card and the report are content-addressed
     * by the evidence alone; the run record (`RunRecord.campaign_id`) names the campaign.
     */
    campaign_id: z.string().optional(),
    call_type: z.string(),
    /** distinct admitted items (after exclusions) */
    unique_items: z.number().int().nonnegative(),
    /** Σ weights: each item counts 1 + its duplicate events */
    total_weight: z.number().int().nonnegative(),
    /** items with at least one duplicate event */
    duplicated_items: z.number().int().nonnegative().optional(),
    near_duplicate_clusters: z.number().int().nonnegative(),
    /** Hamming distance in bits (of 64) at or below which two prompts are near duplicates */
    near_duplicate_threshold: z.number(),
    near_duplicate_method: z.string().optional(),
    strata: z.record(z.string(), z.number().int().nonnegative()),
    traffic_classes: z.record(z.string(), z.number().int().nonnegative()),
    exclusions: z.array(z.object({ item_hash: z.string(), reason: z.string() })),
    /** per-reason counts of `exclusions` */
    exclusion_counts: z.record(z.string(), z.number().int().nonnegative()).optional(),
    /** power plan of the call type at the incumbent's admitted clusters (first candidate's α) */
    power_plan: z.unknown(),
    /** frozen dataset cards: whether the dataset can carry a decision, derived from this card */
    fit_eligibility: FitEligibility.optional(),
  })
  .passthrough();
export type DatasetCard = z.infer<typeof DatasetCard>;
