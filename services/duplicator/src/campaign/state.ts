// The per-campaign state every part of a campaign runner shares, and the campaign's own state
// transitions (running → budget_exhausted | completed).
import type { Logger } from 'pino';
import { JsonKv } from '@shadowplane/bus';
import { DispatchState, type Campaign } from '@shadowplane/contracts';
import { JudgeRunner } from '../judge-runner.js';
import type { FrozenSource } from '../frozen.js';
import type { RunnerContext } from './context.js';
import type { ArmSlot } from './plan.js';
import type { ArmCallDeps } from './arm-call.js';
import { buildSlots } from './slots.js';
import { Counter, ItemClaim } from './records.js';

/** One consumed campaign as its runner's modules see it (one record per runner, shared by reference). */
export interface CampaignState {
  readonly id: string;
  /** the campaign's latest KV value as this runner saw it (updated on changes and own transitions) */
  campaign: Campaign;
  readonly ctx: RunnerContext;
  readonly log: Logger;
  /** the shared durable consumer's name: one per campaign, `dup_<campaign>` */
  readonly durable: string;
  readonly slots: ArmSlot[];
  readonly claims: JsonKv<typeof ItemClaim>;
  readonly arms: JsonKv<typeof DispatchState>;
  readonly counters: JsonKv<typeof Counter>;
  /**
   * per call type: the highest admitted count this runner has read or written (counts only
   * grow, so the count is at least this; admission.ts skips the read when it is at max_items)
   */
  readonly admittedSeen: Map<string, number>;
  readonly armCallDeps: ArmCallDeps;
  readonly judge: JudgeRunner | null;
  /** the dataset of a `frozen:<hash>` campaign (frozen.ts); null for live ones (set at start) */
  frozen: FrozenSource | null;
}

/** The state of a runner of `campaign`: its slots (and their limiters) and its judge are created here. */
export function createCampaignState(ctx: RunnerContext, campaign: Campaign): CampaignState {
  const log = ctx.log.child({ campaignId: campaign.id });
  const armCallDeps: ArmCallDeps = {
    ctx,
    campaignId: campaign.id,
    log,
    markBudgetExhausted: () => markBudgetExhausted(s),
  };
  // written only here, from values built by this code or read (and validated) before: no second
  // validation per write — the done record carries the whole observation
  const trusted = { validateWrites: false };
  const claims = new JsonKv(ctx.dispatchKv, ItemClaim, trusted);
  const arms = new JsonKv(ctx.dispatchKv, DispatchState, trusted);
  const counters = new JsonKv(ctx.dispatchKv, Counter, trusted);
  const slots = buildSlots(ctx, campaign, log);
  const judge = JudgeRunner.forCampaign({ ...ctx, gateEnabled: () => ctx.gate.enabled() }, campaign);
  const s: CampaignState = {
    id: campaign.id,
    campaign,
    ctx,
    log,
    durable: `dup_${campaign.id}`,
    slots,
    claims,
    arms,
    counters,
    admittedSeen: new Map(),
    armCallDeps,
    judge,
    frozen: null,
  };
  return s;
}

/** Marks the ledger exhausted and the campaign `budget_exhausted` (a reservation was refused). */
export async function markBudgetExhausted(s: CampaignState): Promise<void> {
  await s.ctx.ledger.markExhausted(s.id);
  await transition(s, 'budget_exhausted', 'a budget reservation was refused');
}

/** Moves a `running` campaign to `to` (by CAS on its KV value; no-op in any other state). */
export async function transition(
  s: CampaignState,
  to: 'budget_exhausted' | 'completed',
  reason: string,
): Promise<void> {
  const r = await s.ctx.campaigns.mutate(s.id, (cur) =>
    cur && cur.state === 'running'
      ? { ...cur, state: to, state_reason: reason, updated_at: new Date().toISOString() }
      : undefined,
  );
  if (r.changed) {
    s.log.info({ state: to, reason }, 'campaign state changed');
    if (r.value) s.campaign = r.value;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Closes the campaign's arm limiters (each once; the A-A slot shares the incumbent's) and its judge, waiting at most 3 s. */
export async function closeCampaignState(s: CampaignState): Promise<void> {
  await Promise.race([
    Promise.all([...[...new Set(s.slots.map((x) => x.limiter))].map((l) => l.close()), s.judge?.close()]),
    sleep(3000),
  ]);
}
