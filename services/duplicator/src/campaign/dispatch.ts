// reserved → finished: an admitted item's arm calls, their settlement and its judge.
import { type DispatchState, dispatchKeys, reservationIds, simhash64, type Envelope } from '@shadowplane/contracts';
import { requestPromptText } from '@shadowplane/providers';
import type { JudgedArm } from '../judge-runner.js';
import type { ArmPlan } from './plan.js';
import { invokeArm } from './arm-call.js';
import { buildObservation } from './observation.js';
import { ACK, later, type Verdict } from './records.js';
import { markBudgetExhausted, type CampaignState } from './state.js';
import { event, finishClaim, type Reserved } from './claim.js';
import { heldByLiveWorker, judgedEarlier, publishAndSettle, recoverArm } from './recovery.js';

/**
 * reserved → finished: invoke arms not yet invoked, recover lost ones, publish, settle.
 * `reserved` is the item's `reserved` claim; when this processing recorded it (`fresh`), no arm
 * has a record yet and none is read.
 */
export async function dispatch(
  s: CampaignState,
  env: Envelope,
  key: string,
  body: unknown,
  plans: ArmPlan[],
  reserved: Reserved,
): Promise<Verdict> {
  const armKey = (p: ArmPlan) => dispatchKeys.arm(s.id, env.item_hash, p.slot.armId);
  const states = reserved.fresh ? plans.map(() => null) : await Promise.all(plans.map((p) => s.arms.get(armKey(p))));
  // an arm still being invoked by a live worker: leave the item to it and look again later
  if (await heldByLiveWorker(s, states)) return later(s.ctx.leases.ttlMs);
  const lostNow = states.some((st) => st && (st.value.state === 'lost' || st.value.state === 'invoking'));
  if (lostNow) {
    for (let i = 0; i < plans.length; i++) await recoverArm(s, env, plans[i]!, armKey(plans[i]!), states[i] ?? null);
    await event(s, env, 'excluded', 'lost_in_flight', `lost.${s.id}.${env.item_hash}`);
    s.ctx.metrics.items.inc({ outcome: 'lost_in_flight' });
    await finishClaim(s, key);
    return ACK;
  }
  // arms already done (a redelivery after a crash past their done record): re-publish and settle
  for (let i = 0; i < plans.length; i++) {
    const st = states[i];
    if (st && st.value.state === 'done') await publishAndSettle(s, env, plans[i]!, st.value);
  }
  const todo = plans.filter((_, i) => states[i] === null);
  // two-phase start for contemporaneous arms: every arm's `invoking` record and first-attempt
  // reservation are written first, then all first calls are released together
  const prepared = await Promise.all(todo.map((p) => prepareArm(s, env, p, armKey(p))));
  const results = await Promise.all(
    todo.map((p, i) => (prepared[i] !== null ? invokeArm(s.armCallDeps, env, p, armKey(p)) : Promise.resolve(null))),
  );
  const starts = results.flatMap((r) => (r && r.attempts[0] ? [r.attempts[0].startedAtMs] : []));
  const firstStart = Math.min(...starts);
  const promptText = requestPromptText(env.api, body);
  const simhash = simhash64(promptText);
  const judged: JudgedArm[] = [];
  await Promise.all(
    todo.map(async (p, i) => {
      const r = results[i];
      if (!r) return; // never called (paid_dispatch went off first): retried on redelivery
      const obs = await buildObservation(
        s.ctx,
        s.campaign,
        env,
        p,
        r.attempts,
        r.chargedMicroUsd,
        r.attempts[0]!.startedAtMs - firstStart,
        simhash,
      );
      judged.push({
        armId: p.slot.armId,
        role: p.slot.role,
        provider: p.slot.provider.id,
        outputText: obs.status === 'ok' ? (r.attempts[r.attempts.length - 1]!.parsed?.outputText ?? null) : null,
      });
      const done: DispatchState = {
        state: 'done',
        worker_id: s.ctx.workerId,
        reserved_micro_usd: r.reservedMicroUsd,
        at: new Date().toISOString(),
        attempts: r.attempts.length,
        charged_micro_usd: r.chargedMicroUsd,
        observation: obs,
      };
      // written against the revision of our own `invoking` record: any other write since fails it
      if ((await s.arms.update(armKey(p), done, prepared[i]!)) === null)
        throw new Error(`dispatch state of ${armKey(p)} changed under us`);
      await publishAndSettle(s, env, p, done);
      const last = r.attempts[r.attempts.length - 1]!;
      s.ctx.metrics.dispatches.inc({ arm_role: p.slot.role, outcome: last.errorClass ?? 'ok' });
    }),
  );
  if (results.some((r) => r === null)) return later(1000);
  // the judge runs once the item's arms all settled, in this pass or an earlier one (its worker
  // died before or during the judge): judge-runner.ts reuses or recovers recorded judge calls
  if (s.judge) {
    const earlier = await judgedEarlier(s, plans, states);
    if (earlier.length + judged.length === plans.length) {
      const j = await s.judge.judgeItem(env, body, [...earlier, ...judged]);
      if (j) return later(j.deferMs);
    }
  }
  s.ctx.metrics.items.inc({ outcome: 'dispatched' });
  await finishClaim(s, key, reserved.claim);
  return ACK;
}

/**
 * Phase 1 of an arm: ensures its first attempt is reserved (idempotent; normally done at
 * admission) and records `invoking` before any call. Returns the record's revision (the done
 * record is written against it), or null = not startable now (budget refused).
 */
async function prepareArm(s: CampaignState, env: Envelope, p: ArmPlan, key: string): Promise<number | null> {
  const r = await s.ctx.ledger.reserve(s.id, {
    [reservationIds.arm(env.item_hash, p.slot.armId, 1)]: p.boundMicroUsd,
  });
  if (!r.ok) {
    s.ctx.metrics.reservations.inc({ result: 'refused' });
    if (r.reason === 'budget_exhausted') await markBudgetExhausted(s);
    return null;
  }
  const base: DispatchState = {
    state: 'invoking',
    worker_id: s.ctx.workerId,
    reserved_micro_usd: p.boundMicroUsd,
    at: new Date().toISOString(),
    attempts: 0,
  };
  const rev = await s.arms.create(key, base);
  if (rev === null) throw new Error(`arm ${key} was claimed by another worker`);
  return rev;
}
