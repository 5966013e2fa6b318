// When a campaign is done: max_items admitted, deadline passed or frozen dataset used up, with
// nothing outstanding on its ledger.
import { dispatchKeys } from '@shadowplane/contracts';
import { transition, type CampaignState } from './state.js';

/**
 * True while this campaign's ledger holds reservations: a runner of a campaign that is no
 * longer running keeps consuming until then, so no reservation is stranded.
 */
export async function holdsReservations(s: CampaignState): Promise<boolean> {
  const l = await s.ctx.ledger.snapshot(s.id);
  return l !== null && l.reserved_micro_usd > 0;
}

/**
 * A frozen run is done when every referenced capture still in the stream was acknowledged (the
 * consumer's ack floor passed the last one, or nothing is pending) and nothing is in flight;
 * references that vanished meanwhile and whose items were never claimed are excluded first.
 */
async function frozenDone(s: CampaignState): Promise<boolean> {
  const f = s.frozen!;
  const info = await s.ctx.bus.jsm.consumers.info(s.ctx.bus.names.streams.capture, s.durable);
  if (info.num_ack_pending > 0) return false;
  if (info.ack_floor.stream_seq < f.maxPresentSeq && info.num_pending > 0) return false;
  await f.checkStream(async (item) => (await s.claims.get(`${s.id}.${item}`)) !== null);
  return true;
}

/**
 * Marks the campaign `completed` when every call type has max_items items admitted and no
 * reservation is outstanding (so every admitted item has settled and published), or when
 * the deadline passed and nothing is outstanding.
 */
export async function maybeComplete(s: CampaignState): Promise<void> {
  if (s.campaign.state !== 'running') return;
  const l = await s.ctx.ledger.snapshot(s.id);
  if (!l || l.reserved_micro_usd > 0) return;
  const spec = s.campaign.spec;
  if (spec.deadline && Date.now() > Date.parse(spec.deadline)) {
    await transition(s, 'completed', 'deadline_reached');
    return compactSettlements(s);
  }
  if (s.frozen && (await frozenDone(s))) {
    await transition(s, 'completed', 'dataset_exhausted');
    return compactSettlements(s);
  }
  for (const ct of spec.call_types) {
    const c = (await s.counters.get(dispatchKeys.admitted(s.id, ct)))?.value.count ?? 0;
    if (c < spec.max_items) return;
  }
  await transition(s, 'completed', 'max_items_reached');
  await compactSettlements(s);
}

/** Completed with nothing outstanding: its settlement records go (the ledger closes first; libs/budget compactSettled). */
async function compactSettlements(s: CampaignState): Promise<void> {
  if (s.campaign.state !== 'completed') return;
  try {
    const r = await s.ctx.ledger.compactSettled(s.id);
    s.log.info(r, 'settlement records compacted');
  } catch (err) {
    // records left behind are only storage; a later completion check removes them
    s.log.warn({ err }, 'settlement record compaction failed');
  }
}
