/**
 * The campaign lifecycle service over NATS KV. Spec validation lives in campaign-validate.ts, the
 * launch refusals in launch-checks.ts, the dry-run plan in campaign-plan.ts.
 */
import type { KV } from '@nats-io/kv';
import { JsonKv, type Bus } from '@shadowplane/bus';
import {
  BudgetLedger,
  Campaign,
  contentHash,
  ShadowplaneError,
  type CampaignSpec,
  type CampaignState,
  type ProviderEntry,
} from '@shadowplane/contracts';
import { comparisonKey, limitMicroUsd, newCampaignId, TERMINAL_STATES } from './campaign-ids.js';
import { planCampaign } from './campaign-plan.js';
import { validateCampaignSpec } from './campaign-validate.js';
import { readPaidDispatch } from './flags.js';
import {
  requireArmRateCards,
  requireJudgeAffordable,
  requireJudgeRateCard,
  requirePaidDispatch,
  requirePowered,
} from './launch-checks.js';
import type { ProgressLike } from './reports-port.js';
import type { CampaignStatus, DryRunResult, Spend } from '@shadowplane/contracts';

export { MAX_PRICE_USD_PER_MTOK, withCatalogueRateCards } from './campaign-validate.js';

/** Options of POST /v1/campaigns that are not part of the pinned spec. */
export interface LaunchOptions {
  /** estimate and plan only; write nothing */
  dryRun: boolean;
  /** refuse (422 underpowered) when a call type cannot reach the margin at max_items */
  requirePower: boolean;
}

function spendOf(l: BudgetLedger): Spend {
  return {
    limit_micro_usd: l.limit_micro_usd,
    reserved_micro_usd: l.reserved_micro_usd,
    settled_micro_usd: l.settled_micro_usd,
    limit_usd: l.limit_micro_usd / 1e6,
    reserved_usd: l.reserved_micro_usd / 1e6,
    settled_usd: l.settled_micro_usd / 1e6,
    exhausted: l.exhausted,
  };
}

/** Dependencies of {@link CampaignService}. */
export interface CampaignServiceDeps {
  bus: Bus;
  campaignsKv: KV;
  budgetKv: KV;
  flagsKv: KV;
  providers: readonly ProviderEntry[];
  /** envelopes per call type a dry run samples from CAPTURE */
  captureSample: number;
  readProgress: (campaignId: string) => Promise<ProgressLike | null>;
  /** a dataset card by its hash (the design effect a `frozen:<hash>` source's power plan uses), or null */
  readDatasetCard?: (hash: string) => Promise<unknown>;
}

/**
 * Campaign lifecycle over NATS KV: validation against the allowlist, dry runs (estimate, power
 * plan, dispositions), launch (ledger first, then campaign), listing, status and state changes
 * by compare-and-set.
 */
export class CampaignService {
  readonly campaigns: JsonKv<typeof Campaign>;
  readonly budget: JsonKv<typeof BudgetLedger>;
  private readonly providerIds: ReadonlySet<string>;
  /** launches of one process are serialised so run_index counts are not raced locally */
  private launchChain: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: CampaignServiceDeps) {
    this.campaigns = new JsonKv(deps.campaignsKv, Campaign);
    this.budget = new JsonKv(deps.budgetKv, BudgetLedger);
    this.providerIds = new Set(deps.providers.map((p) => p.id));
  }

  /**
   * Validates a submitted spec: zod (strict, every offending field named), then every arm's and
   * judge's provider id against the operator allowlist.
   * @throws ShadowplaneError invalid_request (400) or unknown_provider (400) with details.issues
   */
  validateSpec(input: unknown): CampaignSpec {
    return validateCampaignSpec(input, this.providerIds);
  }

  /** Every stored campaign (unparsable entries are skipped), newest first. */
  async list(): Promise<Campaign[]> {
    const out: Campaign[] = [];
    const keys = await this.deps.campaignsKv.keys();
    const ids: string[] = [];
    for await (const k of keys) ids.push(k);
    for (const id of ids) {
      try {
        const c = await this.campaigns.get(id);
        if (c) out.push(c.value);
      } catch {
        // a value that does not parse is not a campaign we can show
      }
    }
    return out.sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id));
  }

  /** The run index a new campaign with this comparison key would get: 1 + earlier runs. */
  async nextRunIndex(key: string): Promise<number> {
    const all = await this.list();
    return 1 + all.filter((c) => c.comparison_key === key).length;
  }

  /** Spend from the ledger, or null when there is none. */
  async spend(id: string): Promise<Spend | null> {
    const l = await this.budget.get(id);
    return l ? spendOf(l.value) : null;
  }

  /**
   * Reads one campaign.
   * @throws ShadowplaneError not_found (404)
   */
  async get(id: string): Promise<Campaign> {
    const c = /^cmp_[0-9a-z]{1,60}$/.test(id) ? await this.campaigns.get(id) : null;
    if (!c) throw new ShadowplaneError('not_found', `no campaign ${id}`, { details: { field: 'id', id } });
    return c.value;
  }

  /** The full status view: campaign, spend, per call type and per arm progress (of `known` when given). */
  async status(id: string, known?: Campaign): Promise<CampaignStatus> {
    // `known`: the campaign value a state change just wrote, so the answer shows that change
    // rather than whatever a concurrent change wrote after it.
    const campaign = known ?? (await this.get(id));
    const [spend, progress] = await Promise.all([this.spend(id), this.deps.readProgress(id)]);
    const spec = campaign.spec;
    const call_types = spec.call_types.map((ct) => {
      const p = progress?.call_types[ct];
      return {
        call_type: ct,
        items_target: spec.max_items,
        items_seen: p?.items_seen ?? 0,
        items_unique: p?.items_unique ?? 0,
        items_dispatched: p?.items_dispatched ?? 0,
        items_excluded: { ...(p?.items_excluded ?? {}) },
        duplicates: p?.duplicates ?? 0,
      };
    });
    const arms = [
      { arm: spec.incumbent, role: 'incumbent' as const },
      ...spec.candidates.map((arm) => ({ arm, role: 'candidate' as const })),
    ].map(({ arm, role }) => {
      const a = progress?.arms[arm.id];
      return {
        arm_id: arm.id,
        role,
        provider: arm.provider,
        model: arm.model,
        calls_ok: a?.calls_ok ?? 0,
        calls_error: { ...(a?.calls_error ?? {}) },
        abandoned: a?.abandoned ?? 0,
      };
    });
    return {
      campaign,
      terminal: TERMINAL_STATES.has(campaign.state),
      spend,
      call_types,
      arms,
      progress_updated_at: progress?.updated_at ?? null,
    };
  }

  /**
   * Plans a campaign without writing anything: worst-case cost estimate from recent captures,
   * power plan per call type, dispositions.
   */
  async plan(spec: CampaignSpec, opts: LaunchOptions): Promise<DryRunResult> {
    return planCampaign(this.deps, (key) => this.nextRunIndex(key), spec, opts);
  }

  /**
   * Launches a campaign. Checks, in order, with nothing written until all pass: power
   * (`require_power` → 422 underpowered naming call types), the kill switch (off/unknown → 503
   * paid_dispatch_disabled). Then writes the budget ledger (create) and only then the campaign
   * (create, state running): a failure between the two leaves at most an orphan ledger that no
   * campaign uses, never a running campaign without a ledger.
   * @throws ShadowplaneError underpowered (422), paid_dispatch_disabled (503), internal (500)
   */
  async launch(spec: CampaignSpec, opts: LaunchOptions): Promise<Campaign> {
    const run = this.launchChain.then(() => this.launchNow(spec, opts));
    this.launchChain = run.catch(() => undefined);
    return run;
  }

  private async launchNow(spec: CampaignSpec, opts: LaunchOptions): Promise<Campaign> {
    // refuse an arm or judge that cannot be bounded, naming it, before anything is written
    requireArmRateCards(spec);
    // the cap must cover an item's arms and its judge phase together, before any arm spends
    if (requireJudgeRateCard(spec) >= 0) requireJudgeAffordable(spec, await this.plan(spec, opts));
    const key = comparisonKey(spec);
    const runIndex = await this.nextRunIndex(key);
    if (opts.requirePower) await requirePowered(spec, runIndex, this.deps.readDatasetCard);
    requirePaidDispatch(await readPaidDispatch(this.deps.flagsKv), 'no campaign may launch');
    const id = newCampaignId();
    const now = new Date().toISOString();
    const ledger: BudgetLedger = {
      limit_micro_usd: limitMicroUsd(spec.max_cost_usd),
      reserved_micro_usd: 0,
      settled_micro_usd: 0,
      exhausted: false,
    };
    const campaign: Campaign = Campaign.parse({
      schema: 'shadow.campaign/v1',
      id,
      spec,
      spec_hash: contentHash(spec),
      comparison_key: key,
      run_index: runIndex,
      state: 'running',
      state_reason: null,
      created_at: now,
      updated_at: now,
    });
    if ((await this.budget.create(id, ledger)) === null)
      throw new ShadowplaneError('internal', `budget ledger ${id} already exists`);
    if ((await this.campaigns.create(id, campaign)) === null)
      throw new ShadowplaneError('internal', `campaign ${id} already exists`);
    return campaign;
  }

  /**
   * Changes a campaign's state by compare-and-set.
   * - pause: running → paused (paused stays paused)
   * - resume: paused → running (running stays running); refused with 503 when paid_dispatch is off
   * - stop: running|paused → stopped (stopped stays stopped)
   * Terminal states (stopped, completed, budget_exhausted, decided) refuse any other change: 409 conflict.
   * @throws ShadowplaneError not_found, conflict, paid_dispatch_disabled
   */
  async transition(id: string, action: 'pause' | 'resume' | 'stop', by: string): Promise<Campaign> {
    await this.get(id);
    if (action === 'resume') requirePaidDispatch(await readPaidDispatch(this.deps.flagsKv), 'a campaign cannot resume');
    const target: CampaignState = action === 'pause' ? 'paused' : action === 'resume' ? 'running' : 'stopped';
    let refused: CampaignState | null = null;
    const r = await this.campaigns.mutate(id, (cur) => {
      refused = null;
      if (!cur) return undefined;
      if (cur.state === target) return undefined;
      if (TERMINAL_STATES.has(cur.state)) {
        refused = cur.state;
        return undefined;
      }
      return { ...cur, state: target, state_reason: `${action} by ${by}`, updated_at: new Date().toISOString() };
    });
    if (refused !== null)
      throw new ShadowplaneError('conflict', `campaign ${id} is ${refused}; it cannot ${action}`, {
        details: { state: refused, action },
      });
    if (!r.value) throw new ShadowplaneError('not_found', `no campaign ${id}`, { details: { field: 'id', id } });
    return r.value;
  }
}
