/** The sequential rule's state change: a campaign every candidate of which is settled becomes `decided`. */
import type { KV } from '@nats-io/kv';
import { Campaign, type Campaign as CampaignT } from '@shadowplane/contracts';
import type { Logger } from '@shadowplane/telemetry';
import { TERMINAL } from './campaign-slots.js';
import type { VerdictMetrics } from './verdict-metrics.js';

/**
 * running|paused → decided by compare-and-set on `shadow_campaigns` (up to 5 attempts): a stop, a
 * completion or the budget that got there first wins. `reason` becomes the state_reason.
 */
export async function decideCampaign(
  campaignsKv: KV,
  id: string,
  reason: string,
  log: Logger,
  metrics: VerdictMetrics,
): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const e = await campaignsKv.get(id);
    if (!e || e.length === 0) return;
    const cur = Campaign.parse(e.json());
    if (TERMINAL.has(cur.state)) return;
    const next: CampaignT = { ...cur, state: 'decided', state_reason: reason, updated_at: new Date().toISOString() };
    try {
      await campaignsKv.update(id, JSON.stringify(next), e.revision);
      log.info({ campaignId: id, reason }, 'campaign decided by the sequential rule');
      metrics.decided.inc();
      return;
    } catch {
      // revision moved: re-read and retry
    }
  }
  log.warn({ campaignId: id }, 'could not mark the campaign decided (kept changing)');
}
