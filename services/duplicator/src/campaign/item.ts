// The per-item protocol: claim → reserve (admission.ts) → invoke and settle (dispatch.ts), or
// the accounting of an item delivered while its campaign is not running.
import { dispatchKeys, reservationIds, sha256Hex, type Campaign, type Envelope } from '@shadowplane/contracts';
import { planArms, isSampled, type ArmPlan } from './plan.js';
import { ACK, later, type ItemClaim, type Verdict } from './records.js';
import type { CampaignState } from './state.js';
import { event, exclude, finishClaim } from './claim.js';
import { admit } from './admission.js';
import { replayItem } from './replay.js';
import { judgedItem } from './judged.js';
import { dispatch } from './dispatch.js';
import { heldByLiveWorker, judgedEarlier, publishAndSettle, recoverArm } from './recovery.js';

/**
 * One delivery of capture `env` for the campaign: filters (deadline, traffic class, sampling,
 * paid_dispatch gate), claims the item (first writer wins; another capture of it is a
 * `duplicate`), plans its arms, admits it and dispatches it. Returns what becomes of the delivery.
 */
export async function processItem(s: CampaignState, env: Envelope): Promise<Verdict> {
  const spec = s.campaign.spec;
  if (s.campaign.state !== 'running') return processInactive(s, env, s.campaign.state);
  if (spec.deadline && Date.now() > Date.parse(spec.deadline)) {
    await event(s, env, 'excluded', 'after_deadline', `x.${s.id}.${env.envelope_id}`);
    return ACK;
  }
  if (!spec.traffic_classes.includes(env.traffic_class)) {
    await event(s, env, 'excluded', 'traffic_class', `x.${s.id}.${env.envelope_id}`);
    s.ctx.metrics.items.inc({ outcome: 'excluded' });
    return ACK;
  }
  if (!isSampled(s.id, env.item_hash, spec.sample_rate)) {
    s.ctx.metrics.items.inc({ outcome: 'not_sampled' });
    return ACK;
  }
  if (!s.ctx.gate.enabled()) return later(1000);

  const key = dispatchKeys.item(s.id, env.item_hash);
  // first delivery is the common case: create the claim outright (first writer wins) and read it
  // only when it already exists
  const value: ItemClaim = {
    kind: 'item',
    state: 'claimed',
    envelope_id: env.envelope_id,
    worker_id: s.ctx.workerId,
    reason: null,
    at: new Date().toISOString(),
  };
  const rev = await s.claims.create(key, value);
  const claim = rev === null ? await s.claims.get(key) : { value, revision: rev };
  if (!claim) return later(500);
  if (claim.value.envelope_id !== env.envelope_id) {
    // an exact duplicate of an item already claimed: it only adds weight
    await event(s, env, 'duplicate', null, `dup.${s.id}.${env.envelope_id}`);
    s.ctx.metrics.items.inc({ outcome: 'duplicate' });
    return ACK;
  }
  if (claim.value.state === 'excluded' || claim.value.state === 'finished') return ACK;

  const body = await resolveBody(s, env);
  const plans = planArms(s.campaign, s.slots, env, body);
  if (!Array.isArray(plans)) return exclude(s, env, key, claim.revision, plans.reason);
  if (spec.instrument === 'replay') return replayItem(s, env, key, claim, plans, body);
  if (spec.instrument === 'judged_dataset_run') return judgedItem(s, env, key, claim, plans, body, rev !== null);

  if (claim.value.state === 'claimed') {
    const r = await admit(s, env, key, claim, plans, rev !== null);
    if (!('claim' in r)) return r;
    return dispatch(s, env, key, body, plans, r);
  }
  return dispatch(s, env, key, body, plans, { claim, fresh: false });
}

/**
 * An item delivered while the campaign is not running: nothing new is invoked, but whatever
 * the item holds is accounted for, in every state. Admitted items: arms lost in flight (owner
 * dead) are charged their upper bound, done arms re-published and settled, and — unless the
 * campaign is only paused — arms never started are released; the item is then finished (all
 * arms done) or excluded (`lost_in_flight`, or `campaign_<state>`). An admission a crash
 * interrupted (reserved, not yet recorded) is released in a terminal state. A paused campaign
 * keeps everything else for its resumption (redelivered later); a terminal one acks it.
 */
async function processInactive(s: CampaignState, env: Envelope, state: Campaign['state']): Promise<Verdict> {
  const paused = state === 'paused';
  const key = dispatchKeys.item(s.id, env.item_hash);
  const claim = await s.claims.get(key);
  if (
    !claim ||
    claim.value.envelope_id !== env.envelope_id ||
    claim.value.state === 'excluded' ||
    claim.value.state === 'finished'
  )
    return paused ? later(2000) : ACK;
  const body = await resolveBody(s, env);
  const plans = planArms(s.campaign, s.slots, env, body);
  if (!Array.isArray(plans)) return exclude(s, env, key, claim.revision, plans.reason); // nothing was reserved for it
  if (claim.value.state === 'claimed') {
    if (paused) return later(2000);
    // reserved at admission but not yet counted/recorded when a worker died: release it
    const r = await s.ctx.ledger.settle(
      s.id,
      { ids: plans.map((p) => reservationIds.arm(env.item_hash, p.slot.armId, 1)) },
      0,
    );
    if (r.found)
      s.log.info(
        { itemHash: env.item_hash, releasedMicroUsd: r.releasedMicroUsd },
        'admission interrupted by a crash released (campaign not running)',
      );
    return exclude(s, env, key, claim.revision, `campaign_${state}`);
  }
  const armKey = (p: ArmPlan) => dispatchKeys.arm(s.id, env.item_hash, p.slot.armId);
  const states = await Promise.all(plans.map((p) => s.arms.get(armKey(p))));
  // as when running: only another live worker's call defers the item (one of this worker's own
  // is an orphan of a handling that failed: this process handles one delivery of it at a time)
  if (await heldByLiveWorker(s, states)) return later(s.ctx.leases.ttlMs);
  const anyLost = states.some((st) => st && (st.value.state === 'lost' || st.value.state === 'invoking'));
  if (paused && !anyLost) return later(2000);
  if (states.every((st) => st?.value.state === 'done')) {
    for (let i = 0; i < plans.length; i++) await publishAndSettle(s, env, plans[i]!, states[i]!.value);
    if (s.judge) {
      // no new judge call; recorded ones are published, lost ones recovered, the rest named
      const arms = await judgedEarlier(s, plans, states);
      const j = await s.judge.judgeItem(env, body, arms, {
        newCalls: false,
        notRunReason: `judge_not_run:campaign_${state}`,
      });
      if (j) return later(j.deferMs);
    }
    await finishClaim(s, key);
    return ACK;
  }
  for (let i = 0; i < plans.length; i++) await recoverArm(s, env, plans[i]!, armKey(plans[i]!), states[i] ?? null);
  const reason = anyLost ? 'lost_in_flight' : `campaign_${state}`;
  await event(s, env, 'excluded', reason, `${anyLost ? 'lost' : 'x'}.${s.id}.${env.item_hash}`);
  s.ctx.metrics.items.inc({ outcome: anyLost ? 'lost_in_flight' : 'excluded' });
  await finishClaim(s, key);
  return ACK;
}

/** The capture's request body: inline, or read from the capture-body store and checked against its sha256. */
async function resolveBody(s: CampaignState, env: Envelope): Promise<unknown> {
  if (env.request.body !== null && env.request.body !== undefined) return env.request.body;
  const ref = env.request.body_ref;
  if (!ref) return null;
  const bytes = await s.ctx.captureBodies.getBlob(ref.name);
  if (!bytes) throw new Error(`capture body ${ref.name} is missing`);
  if (sha256Hex(bytes) !== ref.sha256) throw new Error(`capture body ${ref.name} does not match its sha256`);
  return JSON.parse(new TextDecoder().decode(bytes));
}
