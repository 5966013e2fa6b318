// claimed → reserved: an item's first-attempt reservations and its max_items slot.
import { dispatchKeys, reservationIds, type Envelope } from '@shadowplane/contracts';
import type { ArmPlan } from './plan.js';
import { RECENT_ADMITTED, later, type Verdict } from './records.js';
import { markBudgetExhausted, type CampaignState } from './state.js';
import type { Versioned } from '@shadowplane/bus';
import type { ItemClaim } from './records.js';
import { exclude, recordReserved, type Reserved } from './claim.js';

/**
 * claimed → reserved: reserve every arm's first attempt, then take a max_items slot. `claim` is
 * the item's claim as read or created by this processing; `created` = this processing created it
 * (no earlier processing of the item exists, so none of its reservation ids was ever reserved or
 * settled: the ledger need not look for their settlement records). Returns the recorded
 * `reserved` claim (claim.ts recordReserved), or what becomes of the delivery instead.
 */
export async function admit(
  s: CampaignState,
  env: Envelope,
  key: string,
  claim: Versioned<ItemClaim>,
  plans: ArmPlan[],
  created = false,
): Promise<Reserved | Verdict> {
  const revision = claim.revision;
  const spec = s.campaign.spec;
  // counts only grow, so a count this runner saw at max means max now (no read); below max,
  // takeSlot decides after the reservation and a refused slot releases it
  if ((s.admittedSeen.get(env.call_type) ?? 0) >= spec.max_items)
    return exclude(s, env, key, revision, 'over_max_items');
  const parts: Record<string, number> = {};
  for (const p of plans) parts[reservationIds.arm(env.item_hash, p.slot.armId, 1)] = p.boundMicroUsd;
  const r = await s.ctx.ledger.reserve(s.id, parts, { neverReserved: created });
  if (!r.ok) {
    if (r.reason === 'no_ledger') {
      s.log.warn({}, 'campaign has no budget ledger yet; item retried later');
      return later(2000);
    }
    if (r.reason === 'already_settled') {
      // only an admission refused for max_items releases first attempts before the claim
      // records it (a crash in between): finish that exclusion
      return exclude(s, env, key, revision, 'over_max_items');
    }
    // the item may be over max_items already (the count seen here can lag): that, not the
    // budget, is then why it is not dispatched, and the campaign is not exhausted by it
    if (await atMaxItems(s, env.call_type)) return exclude(s, env, key, revision, 'over_max_items');
    s.ctx.metrics.reservations.inc({ result: 'refused' });
    await markBudgetExhausted(s);
    return exclude(s, env, key, revision, 'budget_exhausted');
  }
  s.ctx.metrics.reservations.inc({ result: 'granted' });
  const total = Object.values(parts).reduce((a, b) => a + b, 0);
  s.ctx.metrics.reservedUsd.inc(total / 1e6);
  const admitted = await takeSlot(s, env);
  if (!admitted) {
    await s.ctx.ledger.settle(s.id, { ids: Object.keys(parts) }, 0);
    s.ctx.metrics.reservedUsd.dec(total / 1e6);
    return exclude(s, env, key, revision, 'over_max_items');
  }
  const recorded = await recordReserved(s, key, claim);
  if (!('claim' in recorded)) return recorded;
  s.ctx.metrics.reservedUsd.dec(total / 1e6);
  return recorded;
}

/** True when the call type's admitted count (read now) has reached max_items; the count seen is updated. */
async function atMaxItems(s: CampaignState, callType: string): Promise<boolean> {
  const count = (await s.counters.get(dispatchKeys.admitted(s.id, callType)))?.value.count ?? 0;
  s.admittedSeen.set(callType, Math.max(count, s.admittedSeen.get(callType) ?? 0));
  return count >= s.campaign.spec.max_items;
}

/**
 * Takes one of the call type's max_items slots for the item (by CAS, group-committed with the
 * runner's concurrent items: one read and one write per batch); false when they are all taken.
 */
export async function takeSlot(s: CampaignState, env: Envelope): Promise<boolean> {
  const max = s.campaign.spec.max_items;
  let admitted = false;
  const tag = env.item_hash.slice(0, 16);
  const r = await s.counters.mutateTogether(dispatchKeys.admitted(s.id, env.call_type), (cur) => {
    const c = cur?.count ?? 0;
    const recent = cur?.recent ?? [];
    if (recent.includes(tag)) {
      admitted = true; // counted before a crash: do not count again
      return undefined;
    }
    admitted = c < max;
    return admitted ? { count: c + 1, recent: [...recent.slice(-(RECENT_ADMITTED - 1)), tag] } : undefined;
  });
  const seen = r.value?.count ?? 0;
  if (seen > (s.admittedSeen.get(env.call_type) ?? 0)) s.admittedSeen.set(env.call_type, seen);
  return admitted;
}
