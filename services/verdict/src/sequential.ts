import type { Report } from '@shadowplane/contracts';

/**
 * Whether a (provisional) report of a `stopping: sequential` (or `group_sequential`, `rule`)
 * campaign settles it: every
 * comparison of every call type carries a sequential record whose decision is pass, fail or
 * futile. A comparison without one (not yet measurable, fewer than the minimum pairs) keeps the
 * campaign running. Shape: report → { settled, reason } (reason names each candidate's decision
 * and the items it used, for the campaign's state_reason, prefixed by the rule).
 */
export function sequentialVerdict(
  report: Report,
  rule: 'sequential' | 'group_sequential' = 'sequential',
): { settled: boolean; reason: string } {
  const parts: string[] = [];
  let settled = (report.call_types ?? []).length > 0;
  for (const ct of report.call_types ?? []) {
    if (ct.comparisons.length === 0) settled = false;
    for (const c of ct.comparisons) {
      const s = c.sequential;
      if (!s || s.decision === 'continue') settled = false;
      else
        parts.push(
          `${ct.call_type}/${c.candidate_arm_id} ${s.decision} at look ${s.settled_look} (${s.items_used} items)`,
        );
    }
  }
  return { settled, reason: settled ? `${rule}: every candidate settled: ${parts.join('; ')}` : '' };
}
