import { z } from 'zod';
import { Campaign, CampaignState, PaidDispatchFlag } from './campaign-records.js';
import { Report } from './report.js';
import { RunRecord } from './run-record.js';
import { ErrorClass } from './usage.js';

// Response shapes of the control API, as zod schemas: control's OpenAPI document is generated
// from them, shadowctl checks the answers it reads against them, and the tests validate live
// responses with them.

/** The header that carries a report answer's report_id (GET /v1/campaigns/{id}/report, every format). */
export const REPORT_ID_HEADER = 'x-shadow-report-id';
/** The header that carries a report answer's run_record_id. */
export const RUN_RECORD_ID_HEADER = 'x-shadow-run-record-id';

/** The error body of every non-2xx answer. */
export const ErrorBody = z
  .object({
    error: z.object({
      code: z.string().describe('stable snake_case code from the error catalogue'),
      message: z.string(),
      details: z.unknown().optional(),
    }),
  })
  .describe('Every API error: {error: {code, message, details?}}');

/** Spend of a campaign from its budget ledger: integers in micro-USD plus the same in USD. */
export const Spend = z.object({
  limit_micro_usd: z.number().int(),
  reserved_micro_usd: z.number().int(),
  settled_micro_usd: z.number().int(),
  limit_usd: z.number(),
  reserved_usd: z.number(),
  settled_usd: z.number(),
  exhausted: z.boolean(),
});
export type Spend = z.infer<typeof Spend>;

/** Per call type progress: items seen/unique/dispatched against the target. */
export const CallTypeProgress = z.object({
  call_type: z.string(),
  items_target: z.number().int(),
  items_seen: z.number().int(),
  items_unique: z.number().int(),
  items_dispatched: z.number().int(),
  items_excluded: z.record(z.string(), z.number().int()),
  duplicates: z.number().int(),
});
export type CallTypeProgress = z.infer<typeof CallTypeProgress>;

/** Per arm counts: successful calls, errors by class, abandoned (2xx without usage). */
export const ArmProgress = z.object({
  arm_id: z.string(),
  role: z.enum(['incumbent', 'candidate']),
  provider: z.string(),
  model: z.string(),
  calls_ok: z.number().int(),
  calls_error: z.record(ErrorClass.or(z.string()), z.number().int()),
  abandoned: z.number().int(),
});
export type ArmProgress = z.infer<typeof ArmProgress>;

/** GET /v1/campaigns/{id}: the stored campaign, its spend, and progress (zeros until the verdict service reports). */
export const CampaignStatus = z.object({
  campaign: Campaign,
  terminal: z.boolean().describe('true for stopped, completed, budget_exhausted and decided'),
  spend: Spend.nullable().describe('null when the ledger is missing'),
  call_types: z.array(CallTypeProgress),
  arms: z.array(ArmProgress),
  progress_updated_at: z.string().nullable().describe('when the verdict service last updated progress; null = never'),
});
export type CampaignStatus = z.infer<typeof CampaignStatus>;

/** One row of GET /v1/campaigns. */
export const CampaignSummary = z.object({
  id: z.string(),
  name: z.string(),
  suite: z.string(),
  call_types: z.array(z.string()),
  state: CampaignState,
  state_reason: z.string().nullable(),
  run_index: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
  spend: Spend.nullable(),
});
export const CampaignList = z.object({ campaigns: z.array(CampaignSummary) });

/** Worst-case cost estimate of one arm for one item (basis `estimate`, discovery only). */
export const ArmEstimate = z.object({
  arm_id: z.string(),
  role: z.enum(['incumbent', 'candidate', 'incumbent_aa']),
  worst_case_usd: z.number().nullable(),
  reason: z.string().optional().describe('why worst_case_usd is null, e.g. no_rate_card'),
});

/** Cost estimate for one call type. */
export const CallTypeEstimate = z.object({
  call_type: z.string(),
  basis: z.literal('estimate'),
  source: z.enum(['capture_tail', 'assumption']),
  envelopes_sampled: z.number().int(),
  prompt_bytes_max: z
    .number()
    .int()
    .describe(
      'largest request body (UTF-8 bytes of its JSON) among the sampled envelopes, or the assumption; priced as that many input tokens (tokens ≤ bytes), the bound the duplicator reserves',
    ),
  assumption: z.string().nullable(),
  arms: z.array(ArmEstimate),
  per_item_worst_case_usd: z
    .number()
    .nullable()
    .describe('all arms once (A-A share included), one attempt each; null when an arm has no rate card'),
  items_target: z.number().int(),
  worst_case_total_usd: z.number().nullable(),
});

/** Power plan for one call type at max_items and the non-inferiority margin. */
export const CallTypePower = z.object({
  call_type: z.string(),
  clusters: z.number().int().describe('max_items, an upper bound on near-duplicate clusters'),
  alpha_one_sided_adjusted: z.number(),
  margin_pp: z.number(),
  mde_pp: z.number().nullable().describe('null below 2 clusters (no t quantile)'),
  sd_diff: z.number(),
  sd_source: z
    .enum(['conservative_prior'])
    .describe('before a campaign no candidate-vs-incumbent pairs exist: the prior √0.5·√design_effect'),
  design_effect: z.number().describe('Kish design effect of cluster weights the prior is inflated by (≥ 1)'),
  design_effect_source: z
    .enum([
      'frozen_dataset_card',
      'none_live_source',
      'frozen_card_not_found',
      'frozen_card_has_none',
      'frozen_card_other_call_type',
    ])
    .describe(
      "frozen_dataset_card: the card a 'frozen:<hash>' source names; otherwise 1, with the reason (live source, card missing, card without one, card of another call type)",
    ),
  clusters_needed_for_margin: z.number().int().nullable(),
  powered: z.boolean(),
});

/** Expected paid items and dollars under `sequential` (or `group_sequential`) in one simulated scenario. */
const ScenarioSpend = z.object({
  scenario: z.enum(['clearly_worse', 'at_margin', 'equal']),
  delta_pp: z.number().describe("the candidates' assumed quality gap, pp (clearly worse = −4 × margin)"),
  expected_items: z.number().describe('mean paid items per call type over the simulated campaigns'),
  p90_items: z.number().int(),
  expected_usd: z.number().nullable().describe('expected_items × per-item worst case of the arms, USD (judge apart)'),
  settled_share: z
    .number()
    .describe('share of simulated campaigns in which every candidate settled before the last item'),
});

/** Spend of one call type under the stopping rules (dry runs only). */
const StoppingSpend = z.object({
  call_type: z.string(),
  rule: z
    .enum(['fixed', 'sequential', 'group_sequential'])
    .describe("the spec's rule; the others are shown for comparison"),
  worst_case_items: z.number().int().describe('min(max_items, items_affordable): the most either rule pays for'),
  worst_case_usd: z
    .number()
    .nullable()
    .describe('the same under every rule: sequential and group_sequential can only stop earlier'),
  fixed: z.object({ expected_items: z.number().int(), expected_usd: z.number().nullable() }),
  sequential: z.object({ batch_items: z.number().int(), scenarios: z.array(ScenarioSpend) }),
  group_sequential: z
    .object({ batch_items: z.number().int(), planned_looks: z.number().int(), scenarios: z.array(ScenarioSpend) })
    .nullable()
    .describe(
      'the same scenarios under group_sequential (planned looks every batch up to max_items); null when that plan would exceed the look limit',
    ),
  simulation: z.object({
    basis: z.literal('simulation'),
    campaigns: z.number().int(),
    seed: z.number().int(),
    model: z.string().describe('the simulated items and costs, in words'),
  }),
});

/** What would happen to one call type. */
export const Disposition = z.object({
  call_type: z.string(),
  disposition: z.enum(['runnable', 'not_runnable']),
  reasons: z
    .array(z.string())
    .describe('why not runnable: paid_dispatch_disabled, underpowered (with require_power), budget_below_one_item'),
  warnings: z
    .array(z.string())
    .describe('e.g. underpowered, no_recent_captures, cost_unknown_no_rate_card, budget_covers_fewer_items'),
});

/** The result of a dry run (POST /v1/campaigns with dry_run): nothing was written. */
export const DryRunResult = z.object({
  dry_run: z.literal(true),
  would_launch: z.boolean(),
  spec: z.unknown().describe('the spec with defaults applied, as it would be pinned'),
  spec_hash: z.string(),
  comparison_key: z.string(),
  run_index: z.number().int(),
  paid_dispatch: z.object({ enabled: z.boolean(), state: z.enum(['on', 'off', 'unknown']) }),
  estimate: z.object({
    basis: z.literal('estimate'),
    call_types: z.array(CallTypeEstimate),
    worst_case_total_usd: z.number().nullable(),
    max_cost_usd: z.number(),
    items_affordable: z
      .number()
      .int()
      .nullable()
      .describe('items per call type the budget covers at the worst case, all call types together'),
  }),
  judge: z
    .object({
      provider: z.string(),
      model: z.string(),
      mode: z.enum(['pointwise', 'pairwise']),
      call_types: z.array(z.string()),
      calls_per_item: z.number().int(),
      per_item_worst_case_usd: z.number().nullable(),
      judge_worst_case_usd: z
        .number()
        .nullable()
        .describe('the LLM judge worst case, USD, shown apart from the arm estimate and never summed into it'),
      refused_pairs: z.array(z.object({ candidate_arm_id: z.string(), reason: z.string() })),
    })
    .nullable()
    .describe('the LLM judge phase, or null without an llm_judge scorer'),
  power: z.array(CallTypePower),
  stopping: z
    .array(StoppingSpend)
    .describe(
      'expected and worst-case spend under fixed, sequential and group_sequential stopping, per call type (libs/evidence stoppingSpendPlan)',
    ),
  dispositions: z.array(Disposition),
});
export type DryRunResult = z.infer<typeof DryRunResult>;

/** GET/PUT /v1/admin/flags/paid_dispatch answer. */
export const FlagView = z.object({
  name: z.literal('paid_dispatch'),
  enabled: z.boolean().describe('false when off or unknown (fail closed)'),
  state: z.enum(['on', 'off', 'unknown']),
  flag: PaidDispatchFlag.nullable(),
});
export type FlagView = z.infer<typeof FlagView>;

/** PUT /v1/admin/flags/paid_dispatch body. */
export const FlagUpdate = z.object({ enabled: z.boolean(), reason: z.string().max(500).optional() }).strict();

/** POST /v1/outcomes answer. */
export const OutcomeAccepted = z.object({
  outcome_id: z.string(),
  subject: z.string(),
  duplicate: z.boolean().describe('true when the same outcome was already recorded (JetStream de-duplication)'),
});

/**
 * GET /v1/campaigns/{id}/report (format=json) answer: the reproducible report (same evidence →
 * same report_id) and the run record of the run that produced it (campaign id/state, window,
 * latency/TTFT percentiles; content-addressed by run_record_id, points at report_id).
 */
export const ReportView = z.object({
  report_id: z.string(),
  provisional: z.boolean(),
  report: Report.describe('shadow.report/v1'),
  run_record_id: z.string().nullable().describe('null for reports written before run records'),
  run_record: RunRecord.nullable().describe('shadow.run_record/v1, or null for reports written before run records'),
});

const Hex64 = z.string().regex(/^[0-9a-f]{64}$/);
/**
 * `GET /v1/campaigns/{id}/report?format=bundle`: the evidence bundle (libs/evidence
 * `EvidenceBundle`, `shadow.evidence_bundle/v1`) — the parts a reviewer re-checks offline with
 * `shadowctl verify`, the sha256 of each part, and `bundle_hash` over the report id and part hashes.
 */
export const EvidenceBundleView = z
  .object({
    schema: z.literal('shadow.evidence_bundle/v1'),
    report_id: Hex64,
    run_record_id: Hex64,
    campaign_id: z.string(),
    parts: z
      .object({
        report: Report,
        run_record: RunRecord,
        dataset_cards: z.array(z.unknown()),
        run_spec: z
          .object({ campaign_id: z.string(), run_index: z.number().int(), spec_hash: z.string(), spec: z.unknown() })
          .passthrough(),
        cost_evidence: z.array(z.unknown()),
        paired: z.array(z.unknown()),
        stats: z.array(z.unknown()),
        aa: z.array(z.unknown()),
        outcomes: z.array(z.unknown()),
        lineage: z
          .object({
            envelope_ids: z.array(z.string()),
            observation_ids: z.array(z.string()),
            outcome_ids: z.array(z.string()),
          })
          .passthrough(),
      })
      .passthrough(),
    hashes: z.record(z.string(), Hex64).describe('part name → sha256 of its canonical JSON'),
    bundle_hash: Hex64,
  })
  .passthrough();

/** /healthz and /readyz answers. */
export const HealthView = z.object({ status: z.string() });
