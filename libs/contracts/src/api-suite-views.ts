/**
 * Response shapes of the suite routes, for the OpenAPI document (control's suites.ts builds them; shadowctl reads them).
 */
import { z } from 'zod';
import { DatasetCard, FitEligibility } from './dataset-card.js';
import { PowerPlanValue } from './report.js';

/** `GET /v1/suites/{suite}/status`. */
export const SuiteStatusView = z
  .object({
    schema: z.literal('shadow.suite_status/v1'),
    suite: z.string(),
    stream: z.string(),
    settings: z.object({ max_items: z.number().int(), margin_pp: z.number(), alpha: z.number() }),
    call_types: z.array(
      z.object({
        call_type: z.string(),
        confirmed_captures: z.number().int().describe('envelopes the CAPTURE stream holds (stored = confirmed)'),
        skip_markers: z.number().int().describe('captures the sidecar skipped (size, unsure redaction), from markers'),
        readiness: z
          .object({
            distinct_items: z.number().int(),
            total_weight: z.number().int(),
            near_duplicate_clusters: z.number().int(),
            exclusion_counts: z.record(z.string(), z.number().int()),
            census: z.unknown(),
            power_plan: PowerPlanValue,
            power_plan_settings: z.unknown(),
            fit_eligibility: FitEligibility.describe(
              'whether a freeze now could carry a decision, derived from its card (census, counts, power plan)',
            ),
            freeze_would_give: z.string().describe('the dataset_hash a freeze now would give'),
          })
          .nullable()
          .describe('a dry freeze of what the stream holds now; null when nothing is captured'),
        frozen: z
          .object({
            dataset_hash: z.string(),
            frozen_at: z.string(),
            current: z.boolean().describe('true while a freeze now would give the same dataset'),
            card: DatasetCard.nullable(),
          })
          .nullable(),
      }),
    ),
  })
  .describe('readiness in qualified-evidence terms: items, clusters, exclusions by reason, power plan');

/** `POST /v1/suites/{suite}/freeze`. */
export const FreezeResultView = z.object({
  suite: z.string(),
  datasets: z.array(
    z.object({
      call_type: z.string(),
      dataset_hash: z.string(),
      created: z.boolean().describe('false: the dataset already existed and nothing was written'),
      card: DatasetCard,
    }),
  ),
});
