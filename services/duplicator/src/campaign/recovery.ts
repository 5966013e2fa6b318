// Settling arms an item already holds: done arms re-published, arms lost in flight charged.
import { type DispatchState, dispatchKeys, reservationIds, type Envelope } from '@shadowplane/contracts';
import type { JudgedArm } from '../judge-runner.js';
import type { ArmPlan } from './plan.js';
import type { CampaignState } from './state.js';

/**
 * Recovery of one arm of an item that lost an arm in flight (the item is ineligible):
 * `invoking` by a dead worker → `lost`, charged everything reserved for it (its upper bound);
 * never started → `lost` with charge 0 (its reservation released; it will never be invoked);
 * `done` → re-published and settled; `lost` → its settlement completed.
 */
export async function recoverArm(
  s: CampaignState,
  env: Envelope,
  p: ArmPlan,
  key: string,
  st: { value: DispatchState; revision: number } | null,
): Promise<void> {
  const prefix = reservationIds.armPrefix(env.item_hash, p.slot.armId);
  if (st === null) {
    const v: DispatchState = {
      state: 'lost',
      worker_id: s.ctx.workerId,
      reserved_micro_usd: 0,
      at: new Date().toISOString(),
      attempts: 0,
      charged_micro_usd: 0,
    };
    if ((await s.arms.create(key, v)) === null) return recoverArm(s, env, p, key, await s.arms.get(key));
    await s.ctx.ledger.settle(s.id, { prefix }, 0);
    s.ctx.metrics.dispatches.inc({ arm_role: p.slot.role, outcome: 'not_invoked' });
    return;
  }
  if (st.value.state === 'done') return publishAndSettle(s, env, p, st.value);
  if (st.value.state === 'invoking') {
    // its owner is dead (checked by the caller): what it reserved is what it may have spent
    const charge = await s.ctx.ledger.outstandingFor(s.id, prefix);
    const v: DispatchState = {
      ...st.value,
      state: 'lost',
      at: new Date().toISOString(),
      charged_micro_usd: charge,
      reserved_micro_usd: Math.max(st.value.reserved_micro_usd, charge),
    };
    if ((await s.arms.update(key, v, st.revision)) === null) return recoverArm(s, env, p, key, await s.arms.get(key));
    const r = await s.ctx.ledger.settle(s.id, { prefix }, 'reserved');
    s.ctx.metrics.spendUsd.inc(r.settledMicroUsd / 1e6);
    s.ctx.metrics.dispatches.inc({ arm_role: p.slot.role, outcome: 'lost' });
    s.log.warn(
      { itemHash: env.item_hash, armId: p.slot.armId, deadWorker: st.value.worker_id, chargedMicroUsd: charge },
      'arm lost in flight; charged at its upper bound',
    );
    return;
  }
  // lost: finish a settlement a crash may have interrupted (idempotent)
  const r = await s.ctx.ledger.settle(s.id, { prefix }, 'reserved');
  if (r.found) s.ctx.metrics.spendUsd.inc(r.settledMicroUsd / 1e6);
}

/** Publishes a settled arm's observation (de-duplicated per arm call) and settles its reservations at its charge. */
export async function publishAndSettle(s: CampaignState, env: Envelope, p: ArmPlan, st: DispatchState): Promise<void> {
  if (st.observation) {
    await s.ctx.bus.js.publish(s.ctx.bus.names.obsSubject(s.id), JSON.stringify(st.observation), {
      msgID: dispatchKeys.arm(s.id, env.item_hash, p.slot.armId), // one observation per arm call
    });
  }
  const r = await s.ctx.ledger.settle(
    s.id,
    { prefix: reservationIds.armPrefix(env.item_hash, p.slot.armId) },
    st.charged_micro_usd ?? 'reserved',
  );
  if (r.found) s.ctx.metrics.spendUsd.inc(r.settledMicroUsd / 1e6);
  if (r.overchargeMicroUsd > 0) s.ctx.metrics.overcharges.inc();
}

/** The arms an earlier processing settled (`done`), as the judge sees them (outputs read back). */
export function judgedEarlier(
  s: CampaignState,
  plans: ArmPlan[],
  states: ({ value: DispatchState } | null)[],
): Promise<JudgedArm[]> {
  return Promise.all(
    plans.flatMap((p, i) => {
      const st = states[i];
      if (!st || st.value.state !== 'done') return [];
      const arm = { armId: p.slot.armId, role: p.slot.role, provider: p.slot.provider.id };
      return [s.judge!.recordedArm(arm, st.value.observation)];
    }),
  );
}

/**
 * True when another worker, still alive (its lease), has one of the item's arms `invoking` (the
 * arms' records in plan order; each owner's lease is looked up in turn, up to the first live one).
 */
export async function heldByLiveWorker(
  s: CampaignState,
  states: readonly ({ value: DispatchState } | null)[],
): Promise<boolean> {
  for (const st of states) {
    if (
      st &&
      st.value.state === 'invoking' &&
      st.value.worker_id !== s.ctx.workerId &&
      (await s.ctx.leases.alive(st.value.worker_id))
    )
      return true;
  }
  return false;
}
