import { z } from 'zod';
import { Expectation, SubjectToken } from './envelope.js';
import { CompareSpec } from './bench.js';
import { regexProblem } from './regex.js';
import { AA_ARM_SUFFIX, aaArmId, Arm, ScorerSpec } from './campaign-arm.js';

/** Hard ceiling on max_items per call type (docs/architecture.md "Contracts" (Campaign)). */
export const MAX_ITEMS_CEILING = 5000;
/** Paired items between two sequential looks when `stopping_batch_items` is absent. */
export const SEQUENTIAL_BATCH_DEFAULT = 25;
/**
 * Most planned looks of a `group_sequential` campaign (its exact boundaries cost O(looks·grid²));
 * the same value as libs/stats GROUP_SEQUENTIAL_MAX_LOOKS, which contracts does not import.
 */
export const GROUP_SEQUENTIAL_MAX_LOOKS = 200;
/** Default max_items per call type. */
export const MAX_ITEMS_DEFAULT = 500;
/** Fewest merged observations per arm before any verdict (docs/architecture.md honesty rule 10). */
export const MIN_ARM_OBSERVATIONS = 8;
/**
 * The instruments a campaign spec may choose (docs/bench.md "Instruments"). Compare mode
 * (`compare:`) also produces `judged_dataset_run` observations, without choosing it here.
 */
const CampaignInstrument = z.enum(['shadow_dual_run', 'replay', 'judged_dataset_run']);
type CampaignInstrument = z.infer<typeof CampaignInstrument>;

/**
 * Why a `replay` spec cannot run as written, one issue per field (empty when it can). Replay calls
 * no arm, so anything that needs an arm's output or a live call is refused rather than ignored:
 * a live source (replay prices a frozen dataset's captured usage), `compare`, A-A pairs
 * (`aa_share` must be 0), an `llm_judge` scorer, sequential or group-sequential stopping, and `max_request_cost_usd`
 * (a per-request ceiling on a call that is never made).
 */
export function replayConflicts(spec: {
  source: string;
  compare?: unknown;
  aa_share: number;
  scorers: readonly { kind: string }[];
  stopping?: string | undefined;
  max_request_cost_usd?: number | undefined;
}): { path: (string | number)[]; message: string }[] {
  const out: { path: (string | number)[]; message: string }[] = [];
  const why = 'instrument replay calls no arm';
  if (spec.source === 'live')
    out.push({ path: ['source'], message: `${why}: it prices a frozen dataset's captured usage, use frozen:<hash>` });
  if (spec.compare !== undefined) out.push({ path: ['compare'], message: `${why}: it cannot run in compare mode` });
  if (spec.aa_share !== 0) out.push({ path: ['aa_share'], message: `${why}: it draws no A-A pairs, set aa_share: 0` });
  spec.scorers.forEach((sc, i) => {
    if (sc.kind === 'llm_judge')
      out.push({ path: ['scorers', i], message: `${why}: there is no candidate output to judge` });
  });
  if (spec.stopping === 'sequential' || spec.stopping === 'group_sequential')
    out.push({ path: ['stopping'], message: `${why}: it decides no quality, so there is nothing to stop on` });
  if (spec.max_request_cost_usd !== undefined)
    out.push({ path: ['max_request_cost_usd'], message: `${why}: there is no request to cap` });
  return out;
}

/**
 * Why a `judged_dataset_run` spec cannot run as written, one issue per field (empty when it can).
 * The incumbent is never called: its observation is built from the output production actually
 * served, retained by the sidecar (docs/bench.md "judged_dataset_run"). So refused: a live source
 * (the served outputs of a frozen dataset are re-scored, use frozen:<hash>), `compare` (the served
 * output is the reference, not a baseline run), A-A pairs (`aa_share` must be 0: there is no
 * second incumbent call), an `llm_judge` scorer (the served output is redacted — its PII replaced
 * by placeholders — while the candidate's is not, so a judge comparing them would be biased), and
 * sequential or group-sequential stopping (their looks are not supported for this instrument).
 */
export function judgedDatasetRunConflicts(spec: {
  source: string;
  compare?: unknown;
  aa_share: number;
  scorers: readonly { kind: string }[];
  stopping?: string | undefined;
}): { path: (string | number)[]; message: string }[] {
  const out: { path: (string | number)[]; message: string }[] = [];
  const why = 'instrument judged_dataset_run never calls the incumbent';
  if (spec.source === 'live')
    out.push({
      path: ['source'],
      message: `${why}: it re-scores the served outputs retained for a frozen dataset, use frozen:<hash>`,
    });
  if (spec.compare !== undefined)
    out.push({ path: ['compare'], message: `${why}: the served output is its reference, not a baseline run` });
  if (spec.aa_share !== 0) out.push({ path: ['aa_share'], message: `${why}: it draws no A-A pairs, set aa_share: 0` });
  spec.scorers.forEach((sc, i) => {
    if (sc.kind === 'llm_judge')
      out.push({
        path: ['scorers', i],
        message: `${why}: the served output is redacted (placeholders for PII) and the candidate's is not, so a judge comparing them would be biased`,
      });
  });
  if (spec.stopping === 'sequential' || spec.stopping === 'group_sequential')
    out.push({
      path: ['stopping'],
      message: `instrument judged_dataset_run does not support ${spec.stopping} stopping: use stopping fixed`,
    });
  return out;
}

/** The fields of a campaign spec, before the cross-field rules ({@link CampaignSpec}). */
const CampaignSpecFields = z
  .object({
    name: z.string().min(1).max(200).describe('human name shown in reports'),
    suite: SubjectToken.describe('the capture suite this campaign reads (sidecar rules or x-shadow-suite)'),
    call_types: z
      .array(SubjectToken)
      .min(1)
      .max(32)
      .describe('call types of the suite to shadow; each gets its own verdict'),
    source: z
      .union([
        z.literal('live'),
        z.string().regex(/^frozen:[0-9a-f]{64}$/, "must be 'live' or 'frozen:<dataset_hash>'"),
      ])
      .default('live')
      .describe(
        "live: traffic captured after launch; frozen:<dataset_hash>: exactly that frozen dataset's captures, weights kept, no live traffic (one call type, the dataset's; POST /v1/suites/{suite}/freeze)",
      ),
    incumbent: Arm.describe('the tier serving production now: the reference every candidate is paired with'),
    candidates: z.array(Arm).min(1).max(8).describe('cheaper tiers to test against the incumbent'),
    sample_rate: z
      .number()
      .gt(0)
      .max(1)
      .default(1)
      .describe('share of captured unique items to dispatch, chosen by item_hash so every worker agrees'),
    max_items: z
      .number()
      .int()
      .positive()
      .max(MAX_ITEMS_CEILING)
      .default(MAX_ITEMS_DEFAULT)
      .describe('unique items dispatched per call type'),
    max_cost_usd: z
      .number()
      .positive()
      .max(1_000_000)
      .describe('hard budget, USD: settled + reserved spend never exceeds it'),
    deadline: z.iso.datetime({ offset: true }).optional().describe('no new dispatch after this instant (ISO 8601)'),
    margins: z
      .object({
        noninferiority_pp: z
          .number()
          .min(0)
          .max(100)
          .default(2)
          .describe('how many percentage points of quality a candidate may lose and still pass'),
        min_savings: z
          .number()
          .min(0)
          .max(1)
          .default(0)
          .describe('the cost savings (fraction) the lower interval bound must reach to pass'),
      })
      .strict()
      .default({ noninferiority_pp: 2, min_savings: 0 }),
    /** hard per-request cost ceiling for candidates, USD; breaching it fails the candidate */
    max_request_cost_usd: z.number().positive().optional(),
    scorers: z
      .array(ScorerSpec)
      .default([{ kind: 'expectations' }])
      .describe('how outputs are scored; composite quality is their weighted mean'),
    alpha: z
      .number()
      .gt(0)
      .lt(0.5)
      .default(0.05)
      .describe('one-sided error rate before Bonferroni and α-spending across repeated runs'),
    /** share of items that get a second, independent incumbent call (A-A noise floor) */
    aa_share: z.number().min(0).max(1).default(0.1),
    bootstrap: z
      .object({
        resamples: z.number().int().min(2000).max(100_000).default(2000),
        seed: z.number().int().nonnegative().default(1),
      })
      .strict()
      .default({ resamples: 2000, seed: 1 }),
    retention: z
      .object({
        ttl_days: z.number().int().min(1).max(365).default(7),
        purpose: z.string().min(1).max(200).default('shadow-evaluation'),
      })
      .strict()
      .default({ ttl_days: 7, purpose: 'shadow-evaluation' }),
    /** traffic classes admitted as evidence; production only unless widened on purpose */
    traffic_classes: z
      .array(z.enum(['production', 'synthetic', 'import', 'test']))
      .min(1)
      .default(['production']),
    expectations: z.array(Expectation).optional(),
    stopping: z
      .enum(['fixed', 'sequential', 'group_sequential'])
      .optional()
      .describe(
        "fixed (absent): decide at max_items or the budget; sequential: look after every batch with anytime-valid confidence sequences and stop (state decided) once every candidate is settled; group_sequential: look only at the planned looks every batch up to max_items, against O'Brien-Fleming-type alpha-spending boundaries with a non-binding futility stop, and stop (state decided) once every candidate is settled (valid for the planned looks only)",
      ),
    stopping_batch_items: z
      .number()
      .int()
      .min(1)
      .max(MAX_ITEMS_CEILING)
      .optional()
      .describe(
        `paired items per candidate between two sequential looks (default ${SEQUENTIAL_BATCH_DEFAULT}); only with stopping sequential or group_sequential (there: the planned look spacing, at most ${GROUP_SEQUENTIAL_MAX_LOOKS} looks up to max_items)`,
      ),
    /** compare mode (docs/bench.md): the candidates alone, paired with a baseline run's retained arm */
    compare: CompareSpec.optional(),
    instrument: CampaignInstrument.optional().describe(
      "how the run measures (absent: shadow_dual_run). shadow_dual_run: every arm called on each item; replay: no arm is called ($0): each frozen item's captured production usage is priced on the incumbent's and each candidate's rate card, the candidate's token counts assumed equal to the incumbent's; cost half only, never a quality verdict, scorers not applied (needs a frozen source and aa_share 0; no llm_judge, sequential or group_sequential stopping, compare or max_request_cost_usd); judged_dataset_run: the incumbent is never called — its observation is the output production served, retained by the sidecar under consent (served.artifact_ref), usage and latency from the served summary — and each candidate is called and both scored; items without a retained served output are excluded with a reason; state capped at ON_FRONTIER (needs a frozen source and aa_share 0; no llm_judge, sequential or group_sequential stopping or compare)",
    ),
  })
  .strict();
type SpecFields = z.infer<typeof CampaignSpecFields>;

/** The rules across fields every spec keeps, submitted or stored. */
function specRules(spec: SpecFields, ctx: z.RefinementCtx): void {
  if (spec.stopping_batch_items !== undefined && spec.stopping !== 'sequential' && spec.stopping !== 'group_sequential')
    ctx.addIssue({
      code: 'custom',
      message: 'stopping_batch_items applies only to stopping: sequential or group_sequential',
      path: ['stopping_batch_items'],
    });
  if (spec.stopping === 'group_sequential') {
    const looks = Math.ceil(spec.max_items / (spec.stopping_batch_items ?? SEQUENTIAL_BATCH_DEFAULT));
    if (looks > GROUP_SEQUENTIAL_MAX_LOOKS)
      ctx.addIssue({
        code: 'custom',
        message: `group_sequential plans at most ${GROUP_SEQUENTIAL_MAX_LOOKS} looks; max_items ${spec.max_items} / stopping_batch_items ${spec.stopping_batch_items ?? SEQUENTIAL_BATCH_DEFAULT} gives ${looks}: raise stopping_batch_items`,
        path: ['stopping_batch_items'],
      });
  }
  if (spec.stopping_batch_items !== undefined && spec.stopping_batch_items > spec.max_items)
    ctx.addIssue({
      code: 'custom',
      message: `stopping_batch_items (${spec.stopping_batch_items}) must not exceed max_items (${spec.max_items}): no look would happen before the end`,
      path: ['stopping_batch_items'],
    });
  if (spec.compare && spec.candidates.length !== 1)
    ctx.addIssue({
      code: 'custom',
      message: 'compare mode runs exactly one candidate (the current config) against the baseline',
      path: ['candidates'],
    });
  if (spec.compare && spec.scorers.some((s) => s.kind === 'llm_judge'))
    ctx.addIssue({
      code: 'custom',
      message: 'compare mode scores with programmatic scorers and outcomes only: an llm_judge needs both arms called',
      path: ['scorers'],
    });
  if (spec.instrument === 'replay') replayConflicts(spec).forEach((x) => ctx.addIssue({ code: 'custom', ...x }));
  if (spec.instrument === 'judged_dataset_run')
    judgedDatasetRunConflicts(spec).forEach((x) => ctx.addIssue({ code: 'custom', ...x }));
  const ids = [spec.incumbent.id, ...spec.candidates.map((c) => c.id)];
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    // reserved for the A-A arm the duplicator generates: a spec arm with it would take its
    // observations, reservations and dispatch records
    if (id.endsWith(AA_ARM_SUFFIX))
      ctx.addIssue({
        code: 'custom',
        message: `arm ids ending in ${AA_ARM_SUFFIX} are reserved for the generated A-A arm (${aaArmId(spec.incumbent.id)})`,
        path: i === 0 ? ['incumbent', 'id'] : ['candidates', i - 1, 'id'],
      });
    if (seen.has(id))
      ctx.addIssue({
        code: 'custom',
        message: `duplicate arm id ${id}`,
        path: i === 0 ? ['incumbent', 'id'] : ['candidates', i - 1, 'id'],
      });
    seen.add(id);
  });
  // a call type listed twice would be counted and budgeted twice
  const cts = new Set<string>();
  spec.call_types.forEach((ct, i) => {
    if (cts.has(ct)) ctx.addIssue({ code: 'custom', message: `duplicate call type ${ct}`, path: ['call_types', i] });
    cts.add(ct);
  });
  // one judge per campaign: its weight, budget and calibration are reported as one instrument
  spec.scorers.forEach((sc, i) => {
    if (sc.kind === 'llm_judge' && spec.scorers.findIndex((x) => x.kind === 'llm_judge') !== i)
      ctx.addIssue({ code: 'custom', message: 'at most one llm_judge scorer', path: ['scorers', i] });
  });
}

/**
 * The pattern rule of a submitted spec: every regex scorer's `pattern` and regex expectation's
 * `value` compiles under RE2 within the size limits (regex.ts). A pattern that does not would
 * score every item null and spend the budget for nothing.
 */
function patternRules(spec: SpecFields, ctx: z.RefinementCtx): void {
  spec.scorers.forEach((sc, i) => {
    const why = sc.kind === 'regex' ? regexProblem(sc.pattern) : null;
    if (why !== null) ctx.addIssue({ code: 'custom', message: why, path: ['scorers', i, 'pattern'] });
  });
  spec.expectations?.forEach((e, i) => {
    const why = e.kind === 'regex' ? regexProblem(e.value) : null;
    if (why !== null) ctx.addIssue({ code: 'custom', message: why, path: ['expectations', i, 'value'] });
  });
}

/**
 * The campaign spec an operator submits (POST /v1/campaigns). Immutable once running.
 * Money in USD, margins in percentage points (pp) of quality on a 0–1 scale × 100,
 * `min_savings` as a fraction (0.2 = 20% cheaper). Source: docs/architecture.md "Contracts" (Campaign).
 */
export const CampaignSpec = CampaignSpecFields.superRefine(specRules).superRefine(patternRules);
export type CampaignSpec = z.infer<typeof CampaignSpec>;

/**
 * A spec as pinned in a stored campaign record: {@link CampaignSpec} without the pattern rule, so
 * a campaign launched when patterns were JavaScript regular expressions still reads; a pattern
 * RE2 refuses scores null with its reason instead of a pass or a fail.
 */
export const StoredCampaignSpec = CampaignSpecFields.superRefine(specRules);
/** The campaign spec as submitted, before defaults. */
export type CampaignSpecInput = z.input<typeof CampaignSpec>;
