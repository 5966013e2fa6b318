// An item's claim transitions (reserved, finished, excluded) and its item events.
import type { Envelope, ItemEvent } from '@shadowplane/contracts';
import { ACK, later, type Verdict } from './records.js';
import type { CampaignState } from './state.js';

/** Publishes an item event; `msgID` (JetStream de-duplication) must contain the campaign id, as OBS is shared by every campaign. */
export async function event(
  s: CampaignState,
  env: Envelope,
  kind: ItemEvent['kind'],
  reason: string | null,
  msgID: string,
): Promise<void> {
  const ev: ItemEvent = {
    schema: 'shadow.item_event/v1',
    campaign_id: s.id,
    item_hash: env.item_hash,
    call_type: env.call_type,
    envelope_id: env.envelope_id,
    kind,
    reason,
    at: new Date().toISOString(),
  };
  await s.ctx.bus.js.publish(s.ctx.bus.names.obsSubject(s.id), JSON.stringify(ev), { msgID });
}

/** Records the item's claim `excluded` with `reason` (unless it already is) and publishes the exclusion. */
export async function exclude(
  s: CampaignState,
  env: Envelope,
  key: string,
  revision: number,
  reason: string,
): Promise<Verdict> {
  const cur = await s.claims.get(key);
  if (cur && cur.value.state !== 'excluded')
    await s.claims.update(
      key,
      { ...cur.value, state: 'excluded', reason, at: new Date().toISOString() },
      cur.revision ?? revision,
    );
  await event(s, env, 'excluded', reason, `x.${s.id}.${env.item_hash}`);
  s.ctx.metrics.items.inc({ outcome: 'excluded' });
  return ACK;
}

/** Records the item's claim `finished` (unless it already is). */
export async function finishClaim(s: CampaignState, key: string): Promise<void> {
  await s.claims.mutate(key, (cur) =>
    cur && cur.state !== 'finished' ? { ...cur, state: 'finished', at: new Date().toISOString() } : undefined,
  );
}

/**
 * Records the item's claim `reserved` if it is still `claimed` (by CAS). Returns null when the
 * claim is recorded, or the verdict `later(500)` when the claim vanished or changed meanwhile.
 */
export async function recordReserved(s: CampaignState, key: string): Promise<Verdict | null> {
  const cur = await s.claims.get(key);
  if (!cur) return later(500);
  if (cur.value.state === 'claimed') {
    const ok = await s.claims.update(
      key,
      { ...cur.value, state: 'reserved', at: new Date().toISOString() },
      cur.revision,
    );
    if (ok === null) return later(500);
  }
  return null;
}
