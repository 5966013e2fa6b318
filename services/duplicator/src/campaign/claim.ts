// An item's claim transitions (reserved, finished, excluded) and its item events.
import type { Envelope, ItemEvent } from '@shadowplane/contracts';
import type { Versioned } from '@shadowplane/bus';
import { ACK, later, type ItemClaim, type Verdict } from './records.js';
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

/**
 * Records the item's claim `finished` (unless it already is). `known` is the claim as this
 * processing last wrote it: written against its revision first (no read), read back only when
 * that write loses (the claim changed meanwhile).
 */
export async function finishClaim(s: CampaignState, key: string, known?: Versioned<ItemClaim>): Promise<void> {
  if (known && known.value.state !== 'finished') {
    const next: ItemClaim = { ...known.value, state: 'finished', at: new Date().toISOString() };
    if ((await s.claims.update(key, next, known.revision)) !== null) return;
  }
  await s.claims.mutate(key, (cur) =>
    cur && cur.state !== 'finished' ? { ...cur, state: 'finished', at: new Date().toISOString() } : undefined,
  );
}

/** What {@link recordReserved} found: the claim as it now stands, and whether this call moved it. */
export interface Reserved {
  claim: Versioned<ItemClaim>;
  /**
   * true = this call moved the claim claimed → reserved (by CAS): no processing dispatched the
   * item before, so none of its arms has a record yet (arm records are written only under a
   * `reserved` claim)
   */
  fresh: boolean;
}

/**
 * Records the item's claim `reserved` if it is still `claimed` (by CAS). `known` is the claim as
 * this processing read or created it: the write goes against its revision first, and the claim
 * is read back only when that loses. Returns the claim now recorded, or the verdict `later(500)`
 * when the claim vanished or changed meanwhile.
 */
export async function recordReserved(
  s: CampaignState,
  key: string,
  known?: Versioned<ItemClaim>,
): Promise<Verdict | Reserved> {
  if (known && known.value.state === 'claimed') {
    const value: ItemClaim = { ...known.value, state: 'reserved', at: new Date().toISOString() };
    const rev = await s.claims.update(key, value, known.revision);
    if (rev !== null) return { claim: { value, revision: rev }, fresh: true };
  }
  const cur = await s.claims.get(key);
  if (!cur) return later(500);
  if (cur.value.state === 'claimed') {
    const value: ItemClaim = { ...cur.value, state: 'reserved', at: new Date().toISOString() };
    const rev = await s.claims.update(key, value, cur.revision);
    if (rev === null) return later(500);
    return { claim: { value, revision: rev }, fresh: true };
  }
  return { claim: cur, fresh: false };
}
