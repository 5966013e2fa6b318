import type { CampaignProgress, ObsMessage } from '@shadowplane/contracts';

/**
 * Progress of one campaign from its OBS messages (counts only; cheap to recompute).
 * Per call type: items_seen (distinct items with any message), items_unique (distinct items with an
 * observation), items_dispatched (distinct items with at least one arm call recorded),
 * items_excluded (distinct excluded items by reason), duplicates (duplicate events).
 * Per arm (`<arm_id>`, A-A second calls under `<arm_id>.aa`): calls_ok, calls_error by class, abandoned.
 */
export function computeProgress(
  campaignId: string,
  messages: Iterable<ObsMessage>,
  latestReportId: string | null,
  now: Date,
): CampaignProgress {
  const cts = new Map<
    string,
    { seen: Set<string>; obs: Set<string>; excluded: Map<string, string>; duplicates: number }
  >();
  const arms: CampaignProgress['arms'] = {};
  let n = 0;
  const ct = (c: string) => {
    let x = cts.get(c);
    if (!x) cts.set(c, (x = { seen: new Set(), obs: new Set(), excluded: new Map(), duplicates: 0 }));
    return x;
  };
  for (const m of messages) {
    n++;
    if (m.schema === 'shadow.observation/v1') {
      const c = ct(m.call_type);
      c.seen.add(m.item_hash);
      c.obs.add(m.item_hash);
      const key = m.role === 'incumbent_aa' ? `${m.arm_id}.aa` : m.arm_id;
      const a = (arms[key] ??= { calls_ok: 0, calls_error: {}, abandoned: 0 });
      if (m.status === 'ok') a.calls_ok++;
      else a.calls_error[m.error_class ?? 'unknown'] = (a.calls_error[m.error_class ?? 'unknown'] ?? 0) + 1;
      if (m.abandoned) a.abandoned++;
    } else if (m.schema === 'shadow.item_event/v1') {
      const c = ct(m.call_type);
      c.seen.add(m.item_hash);
      if (m.kind === 'duplicate') c.duplicates++;
      else if (!c.excluded.has(m.item_hash)) c.excluded.set(m.item_hash, m.reason ?? 'excluded');
    }
  }
  const call_types: CampaignProgress['call_types'] = {};
  for (const [k, c] of [...cts.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const ex: Record<string, number> = {};
    for (const r of c.excluded.values()) ex[r] = (ex[r] ?? 0) + 1;
    call_types[k] = {
      items_seen: c.seen.size,
      items_unique: c.obs.size,
      items_dispatched: c.obs.size,
      items_excluded: ex,
      duplicates: c.duplicates,
    };
  }
  return {
    schema: 'shadow.progress/v1',
    campaign_id: campaignId,
    messages: n,
    call_types,
    arms,
    latest_report_id: latestReportId,
    updated_at: now.toISOString(),
  };
}
