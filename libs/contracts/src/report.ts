import { z } from 'zod';

// First cut of the report contracts; the verdict service (issue 7) owns their detailed shape.

/**
 * Dataset card for one call type of a campaign: what the evidence is made of.
 * `dataset_hash` = contentHash of the sorted item hashes with their weights, independent of
 * envelope ids. Source: DESIGN.md "Report".
 */
export const DatasetCard = z
  .object({
    schema: z.literal('shadow.dataset_card/v1'),
    dataset_hash: z.string().regex(/^[0-9a-f]{64}$/),
    campaign_id: z.string(),
    call_type: z.string(),
    unique_items: z.number().int().nonnegative(),
    total_weight: z.number().int().nonnegative(),
    near_duplicate_clusters: z.number().int().nonnegative(),
    near_duplicate_threshold: z.number(),
    strata: z.record(z.string(), z.number().int().nonnegative()),
    traffic_classes: z.record(z.string(), z.number().int().nonnegative()),
    exclusions: z.array(z.object({ item_hash: z.string(), reason: z.string() })),
    power_plan: z.unknown(),
  })
  .passthrough();
export type DatasetCard = z.infer<typeof DatasetCard>;

/** A verdict report; its id is the sha256 of its canonical JSON. */
export const Report = z
  .object({
    schema: z.literal('shadow.report/v1'),
    campaign_id: z.string(),
    provisional: z.boolean(),
  })
  .passthrough();
export type Report = z.infer<typeof Report>;
