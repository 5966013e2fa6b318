/**
 * Frozen datasets of a suite (`shadow.dataset/v1`), the freeze request, the suite status and the
 * small marker the sidecar publishes for a capture it skipped (`shadow.capture_skip/v1`).
 *
 * A dataset is a snapshot of references into the CAPTURE stream (stream sequence + item hash +
 * envelope id), never a copy of the requests. `dataset_hash` = contentHash of the sorted
 * `[item_hash, weight]` pairs of its items — the same formula the fold uses for a report's dataset
 * card, so a frozen run that admits every item reports the same hash.
 * Source: issue 17 "The Bench lifecycle" items 1–3; docs/architecture.md "State".
 */
import { z } from 'zod';
import { MAX_ITEMS_CEILING, MAX_ITEMS_DEFAULT, MIN_ARM_OBSERVATIONS } from './campaign.js';
import { SubmittedExpectation, Sha256Hex, SubjectToken, TrafficClass } from './envelope.js';
import { Api } from './usage.js';
import { DatasetCard, type FitEligibility } from './dataset-card.js';
import { PowerPlanValue } from './report.js';
import { SyntheticBuilder, SyntheticBuilderRecord, syntheticExpansionCount } from './dataset-synthetic.js';

/**
 * Why a capture is left out of a frozen dataset (closed list):
 * - `over_cap`: beyond `max_items` distinct items (the highest-frequency items are kept)
 * - `too_large`: the sidecar skipped the capture for size (counted from its markers)
 * - `unparseable`: the message is not a valid envelope, or its body has no readable prompt
 * - `stateful`: the request depends on provider-side state (`previous_response_id`, …)
 * - `untranslatable`: no arm may be sent it (provider-executed tools, non-text content)
 * - `low_confidence_redaction`: the sidecar could not classify something PII-like (its markers)
 * - `test_traffic`: traffic class `test`
 * - `body_missing`: the body in the object store is gone or does not match its digest
 */
export const DATASET_EXCLUSION_REASONS = [
  'over_cap',
  'too_large',
  'unparseable',
  'stateful',
  'untranslatable',
  'low_confidence_redaction',
  'test_traffic',
  'body_missing',
] as const;
export const DatasetExclusionReason = z.enum(DATASET_EXCLUSION_REASONS);
export type DatasetExclusionReason = z.infer<typeof DatasetExclusionReason>;

/** The builders of the closed vocabulary, all implemented. */
export const DATASET_BUILDER_KINDS = ['from_filter', 'from_failures', 'import', 'synthetic'] as const;

/**
 * `from_failures`: the items an ended run with a final report observed failing on one arm — an
 * error observation, or a paired quality score below `below` (0–1, default 0.5) in the report's
 * evidence — taken back from the CAPTURE stream (their captures still there, any traffic class
 * but `test`). `arm_id` defaults to the run's first candidate.
 */
export const FromFailuresBuilder = z
  .object({
    kind: z.literal('from_failures'),
    campaign_id: z.string().regex(/^cmp_[0-9a-z]{1,60}$/),
    arm_id: SubjectToken.optional(),
    below: z.number().min(0).max(1).default(0.5),
  })
  .strict();
export type FromFailuresBuilder = z.infer<typeof FromFailuresBuilder>;

/** The `from_failures` builder as a dataset records it: the run, the arm, the threshold and how many items failed. */
const FromFailuresBuilderRecord = z
  .object({
    kind: z.literal('from_failures'),
    campaign_id: z.string(),
    arm_id: SubjectToken,
    below: z.number(),
    failed_items: z.number().int().nonnegative(),
  })
  .strict();
type FromFailuresBuilderRecord = z.infer<typeof FromFailuresBuilderRecord>;

/** Largest request body of one imported item, bytes of its JSON (it travels inline in an envelope). */
export const IMPORT_ITEM_MAX_BYTES = 256 * 1024;

/**
 * One operator-supplied item of an `import` freeze (one line of a JSONL file): the call type, the
 * request body as it would be sent on `api` (default `openai.chat`), and an optional reference —
 * one expectation or several (`{kind: 'numeric', value: 42}`, `{kind: 'exact', value: '…'}`, …),
 * scored like a capture's expectations.
 */
const ImportItem = z
  .object({
    call_type: SubjectToken,
    api: Api.default('openai.chat'),
    request: z.record(z.string(), z.unknown()),
    reference: z.union([SubmittedExpectation, z.array(SubmittedExpectation).min(1)]).optional(),
  })
  .strict();
type ImportItem = z.infer<typeof ImportItem>;

/**
 * `import`: operator-supplied items (the lines of a JSONL file, as `items`). Each is published on the
 * CAPTURE stream as an envelope of traffic class `import` (never `production`: the census says so
 * and the card is not fit-eligible), then frozen alone — one dataset per call type of the items.
 */
export const ImportBuilder = z
  .object({ kind: z.literal('import'), items: z.array(ImportItem).min(1).max(MAX_ITEMS_CEILING) })
  .strict();
export type ImportBuilder = z.infer<typeof ImportBuilder>;

/** The `import` builder as a dataset records it: how many items were imported, not the items. */
const ImportBuilderRecord = z
  .object({ kind: z.literal('import'), imported_items: z.number().int().positive() })
  .strict();
type ImportBuilderRecord = z.infer<typeof ImportBuilderRecord>;

/**
 * `from_filter`: every capture of the suite's call type in the stream, narrowed by `filter`
 * (traffic classes admitted; `test` is always excluded as `test_traffic`) and `window`
 * (`since` ≤ captured_at < `until`, ISO 8601; either end open).
 */
const FromFilterBuilder = z
  .object({
    kind: z.literal('from_filter'),
    filter: z
      .object({
        traffic_classes: z
          .array(TrafficClass.exclude(['test']))
          .min(1)
          .default(['production', 'synthetic', 'import']),
        call_types: z.array(SubjectToken).min(1).max(32).optional(),
      })
      .strict()
      .default({ traffic_classes: ['production', 'synthetic', 'import'] }),
    window: z
      .object({
        since: z.iso.datetime({ offset: true }).optional(),
        until: z.iso.datetime({ offset: true }).optional(),
      })
      .strict()
      .default({}),
  })
  .strict();

/**
 * Body of `POST /v1/suites/{suite}/freeze`. `max_items` distinct items per call type (default 500,
 * at most 5000). `margin_pp` and `alpha` set the power plan on the card (defaults as a campaign's).
 * A `synthetic` builder that expands to more than `max_items` requests is refused (naming
 * `builder.rows` / `builder.product`), never truncated.
 */
export const FreezeRequest = z
  .object({
    max_items: z.number().int().positive().max(MAX_ITEMS_CEILING).default(MAX_ITEMS_DEFAULT),
    builder: z
      .discriminatedUnion('kind', [FromFilterBuilder, ImportBuilder, FromFailuresBuilder, SyntheticBuilder])
      .default(FromFilterBuilder.parse({ kind: 'from_filter' })),
    margin_pp: z.number().min(0).max(100).default(2),
    alpha: z.number().gt(0).lt(0.5).default(0.05),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (r.builder.kind !== 'synthetic') return;
    const n = syntheticExpansionCount(r.builder);
    if (n > r.max_items)
      ctx.addIssue({
        code: 'custom',
        path: ['builder', r.builder.rows ? 'rows' : 'product'],
        message: `expands to ${n > 1e15 ? n.toExponential(2) : n} requests, more than max_items ${r.max_items}${
          n > MAX_ITEMS_CEILING
            ? ` (at most ${MAX_ITEMS_CEILING}): bind fewer values`
            : ': raise max_items or bind fewer values'
        } (a synthetic expansion is refused, never truncated)`,
      });
  });
export type FreezeRequest = z.infer<typeof FreezeRequest>;
export type FreezeRequestInput = z.input<typeof FreezeRequest>;

/** One reference into the CAPTURE stream. */
const CaptureRef = z.object({ seq: z.number().int().positive(), envelope_id: z.uuid() }).strict();

/** One distinct item of a dataset: its weight is the number of captures referenced (`refs.length`). */
export const DatasetItem = z
  .object({
    item_hash: Sha256Hex,
    weight: z.number().int().positive(),
    /** near-duplicate cluster id (smallest item_hash of the cluster) */
    cluster: Sha256Hex,
    prompt_simhash: z.string().regex(/^[0-9a-f]{16}$/),
    traffic_class: TrafficClass,
    refs: z.array(CaptureRef).min(1),
  })
  .strict();
export type DatasetItem = z.infer<typeof DatasetItem>;

/**
 * Derives a card's fit-eligibility: eligible exactly when every item is production traffic
 * (`census` has no other class, at least one item), there are at least MIN_ARM_OBSERVATIONS (8)
 * distinct items and near-duplicate clusters (the fewest a comparison can be measured on), and the
 * power plan is powered at the card's margin (`power_plan.powered`: clusters ≥ clusters needed).
 * Shape: a card (`census` {class: {items, weight}}, `unique_items`, `near_duplicate_clusters`,
 * `power_plan`) → {eligible, reasons in FIT_INELIGIBLE_REASONS order}.
 */
export function deriveFitEligibility(card: DatasetCard): FitEligibility {
  const reasons: FitEligibility['reasons'] = [];
  const census = (card['census'] ?? {}) as Record<string, { items?: number }>;
  const classes = Object.entries(census).filter(([, v]) => (v.items ?? 0) > 0);
  if (classes.length === 0 || classes.some(([k]) => k !== 'production')) reasons.push('census_not_production');
  if (card.unique_items < MIN_ARM_OBSERVATIONS || card.near_duplicate_clusters < MIN_ARM_OBSERVATIONS)
    reasons.push('below_min_items');
  const plan = PowerPlanValue.safeParse(card.power_plan);
  if (!plan.success) reasons.push('no_power_plan');
  else if (!plan.data.powered) reasons.push('underpowered');
  return { eligible: reasons.length === 0, reasons };
}

/**
 * `shadow.dataset/v1`: one call type's frozen dataset, stored once under its hash (object store
 * `shadow_datasets`). `items` sorted by item_hash. Immutable: a re-freeze with the same items
 * finds it and writes nothing.
 */
export const Dataset = z
  .object({
    schema: z.literal('shadow.dataset/v1'),
    dataset_hash: Sha256Hex,
    suite: SubjectToken,
    call_type: SubjectToken,
    stream: z.string(),
    builder: z.discriminatedUnion('kind', [
      FromFilterBuilder,
      ImportBuilderRecord,
      FromFailuresBuilderRecord,
      SyntheticBuilderRecord,
    ]),
    max_items: z.number().int().positive(),
    items: z.array(DatasetItem),
    card: DatasetCard,
  })
  .strict()
  .superRefine((d, ctx) => {
    // absent on datasets frozen before it existed (readers derive it); present, it must be the derivation
    const stated = d.card['fit_eligibility'];
    if (stated === undefined) return;
    const derived = deriveFitEligibility(d.card);
    if (JSON.stringify(stated) !== JSON.stringify(derived))
      ctx.addIssue({
        code: 'custom',
        path: ['card', 'fit_eligibility'],
        message: `is derived from the card, never asserted: the card gives ${JSON.stringify(derived)}`,
      });
  });
export type Dataset = z.infer<typeof Dataset>;

/** The suite index entry `<suite>.<call_type>` in KV `shadow_suites`: the latest frozen dataset. */
export const SuiteFreezeRecord = z
  .object({
    dataset_hash: Sha256Hex,
    frozen_at: z.iso.datetime({ offset: true }),
    unique_items: z.number().int().nonnegative(),
  })
  .strict();
export type SuiteFreezeRecord = z.infer<typeof SuiteFreezeRecord>;

/**
 * `shadow.capture_skip/v1`: what the sidecar publishes instead of an envelope when it skips a
 * sampled capture for its size or for an unsure redaction, on
 * `shadow.capture.<suite>.<call_type>.skipped` (outside every campaign's filter). It holds no
 * request content, only that a capture was skipped and why, so a dataset card can count it.
 */
export const CaptureSkipMarker = z
  .object({
    schema: z.literal('shadow.capture_skip/v1'),
    marker_id: z.uuid(),
    at: z.iso.datetime({ offset: true }),
    suite: SubjectToken,
    call_type: SubjectToken,
    reason: z.enum(['too_large', 'pii_uncertain']),
    traffic_class: TrafficClass,
    /** request bytes as announced or read when the skip was decided, null when unknown */
    bytes: z.number().int().nonnegative().nullable(),
  })
  .strict();
export type CaptureSkipMarker = z.infer<typeof CaptureSkipMarker>;
