// Writes verdict-side state (progress, reports, dataset cards) through @shadowplane/reports, the
// verdict service's own storage library, so control's read routes have something to serve.
import type { Bus } from '@shadowplane/bus';
import { canonicalJson, contentHash, type CampaignProgress, type DatasetCard } from '@shadowplane/contracts';
import { buildBundle } from '@shadowplane/evidence';
import { writeProgress, writeReport } from '@shadowplane/reports';

/** Writes progress for a campaign (per call type and per arm counts). */
export async function seedProgress(
  bus: Bus,
  campaignId: string,
  p: Pick<CampaignProgress, 'call_types' | 'arms'>,
): Promise<void> {
  await writeProgress(bus, {
    schema: 'shadow.progress/v1',
    campaign_id: campaignId,
    messages: 0,
    ...p,
    latest_report_id: null,
    updated_at: new Date().toISOString(),
  });
}

/** One comparison row as the verdict service writes it (only the fields the gate reads vary). */
export function comparison(
  candidate: string,
  decision: 'pass' | 'fail' | 'inconclusive' | null,
  state: 'BEAT' | 'NOT_BEAT' | 'CANNOT_MEASURE',
) {
  return {
    candidate_arm_id: candidate,
    state,
    cannot_measure: null,
    insufficient: null,
    decision,
    decision_reasons: [],
    remediation: [],
    basis: 'rate_card' as const,
    pairs: { items: 40, clusters: 40, total_weight: 40, excluded: {} },
    hard_gate_failures: 0,
    cost_ceiling_breaches: 0,
    trust_class: 'A' as const,
    judge_weight_share: 0,
    stats: null,
    power_plan: null,
  };
}

/**
 * Writes a report (final unless `provisional`), its run record, its HTML, its bundle and one
 * dataset card. The run record names the campaign and carries one arm's latency percentiles.
 * @returns the dataset hash of the card
 */
export async function seedReport(
  bus: Bus,
  campaignId: string,
  o: { provisional?: boolean; comparisons?: ReturnType<typeof comparison>[]; verdictText?: string[] } = {},
): Promise<string> {
  const card: DatasetCard = {
    schema: 'shadow.dataset_card/v1',
    dataset_hash: contentHash({ campaignId, items: 40 }),
    campaign_id: campaignId,
    call_type: 'solve',
    unique_items: 40,
    total_weight: 43,
    near_duplicate_clusters: 40,
    near_duplicate_threshold: 3,
    strata: { numeric: 40 },
    traffic_classes: { production: 43 },
    exclusions: [],
    power_plan: null,
  };
  const report = {
    schema: 'shadow.report/v1',
    provisional: o.provisional ?? false,
    call_types: [
      {
        call_type: 'solve',
        dataset_card: card,
        basis: 'rate_card',
        arms: [],
        comparisons: o.comparisons ?? [comparison('medium', 'pass', 'BEAT')],
        frontier: { points: [], beside: [] },
      },
    ],
    verdict_text: o.verdictText ?? ['solve: medium BEAT large (non-inferior, cheaper)'],
  };
  const reportJson = canonicalJson(report);
  const reportId = contentHash(report);
  const pct = { p50: 120, p90: 340, n: 40 };
  const run = {
    schema: 'shadow.run_record/v1',
    report_id: reportId,
    campaign_id: campaignId,
    campaign_state: o.provisional ? 'running' : 'completed',
    provisional: o.provisional ?? false,
    window: { first_started_at: '2026-11-01T12:00:00.000Z', last_ended_at: '2026-11-01T12:10:00.000Z' },
    counts: { messages_in: 120, superseded_observations: 0 },
    call_types: [
      {
        call_type: 'solve',
        arms: [{ arm_id: 'medium', role: 'candidate', latency_ms: pct, ttft_ms: pct, start_skew_ms: pct, retries: 0 }],
      },
    ],
  };
  const runRecordId = contentHash(run);
  await writeReport(bus, {
    campaignId,
    reportId,
    reportJson,
    runRecordId,
    runRecordJson: canonicalJson({ ...run, run_record_id: runRecordId }),
    provisional: report.provisional,
    html: `<!doctype html><title>${campaignId}</title><h1>report ${reportId}</h1>`,
    // a bundle of the real shape (no evidence rows): the OpenAPI test validates it against its schema
    bundle: buildBundle({
      report: { ...report, report_id: reportId } as never,
      runRecord: { ...run, run_record_id: runRecordId } as never,
      datasetCards: [card],
      runSpec: { campaign_id: campaignId, run_index: 1, spec_hash: contentHash({ campaignId }), spec: null },
      costEvidence: [],
      paired: [],
      stats: [],
      aa: [],
      outcomes: [],
      lineage: { envelope_ids: [], observation_ids: [], outcome_ids: [] },
    }),
    datasetCards: [card],
  });
  return card.dataset_hash;
}
