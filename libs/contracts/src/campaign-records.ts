import { z } from 'zod';
import { Api } from './usage.js';
import { SubjectToken } from './envelope.js';
import { StoredCampaignSpec } from './campaign.js';

// What is kept around a campaign: its stored record and lifecycle, the budget ledger, the
// provider allowlist, first-party outcomes and the paid-dispatch kill switch.

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
 * A campaign as stored in the `shadow_campaigns` KV under its id. `spec` is pinned at launch and
 * read as a {@link StoredCampaignSpec} (a pattern RE2 refuses still reads); `spec_hash` =
 * contentHash(spec). `run_index` numbers repeated runs of the same comparison (same suite, call
 * types and arms) for α-spending (1 for the first).
 */
export const Campaign = z
  .object({
    schema: z.literal('shadow.campaign/v1'),
    id: SubjectToken,
    spec: StoredCampaignSpec,
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
