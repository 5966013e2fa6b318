/**
 * Folding a campaign's messages into a report (with compare mode's baseline evidence) and writing
 * it, inside the verdict's trace spans.
 */
import type { Bus } from '@shadowplane/bus';
import type { ObsMessage } from '@shadowplane/contracts';
import { compareModeMessages, foldReport, type FoldResult } from '@shadowplane/evidence';
import { renderReportHtml, writeReport } from '@shadowplane/reports';
import { ROOT_CONTEXT, SpanKind, inSpan, type Logger } from '@shadowplane/telemetry';
import type { CampaignSlot } from './campaign-slots.js';
import type { OutputCache } from './outputs.js';
import type { VerdictMetrics } from './verdict-metrics.js';

/** What folding and writing reads: the service's slots and outcomes, outputs, bus, metrics and log. */
export interface FoldDeps {
  bus: Bus;
  log: Logger;
  metrics: VerdictMetrics;
  slots: Map<string, CampaignSlot>;
  /** outcomes posted without a campaign: evidence for every campaign */
  globalOutcomes: Map<string, ObsMessage>;
  outputs: OutputCache;
  /** the slot of a campaign, created when absent */
  slot: (id: string) => CampaignSlot;
}

/**
 * Folds one campaign's messages (its own and the global outcomes, outputs filled) into a report.
 * Compare mode: the baseline run's retained observations of its arm stand for the incumbent.
 * @throws Error with code not_found when the campaign value is unknown; foldReport's errors
 *   (ShadowplaneError report_empty when nothing was scored or refused)
 */
export async function foldCampaign(d: FoldDeps, id: string, provisional: boolean): Promise<FoldResult> {
  const s = d.slots.get(id);
  if (!s?.campaign) throw Object.assign(new Error(`campaign ${id} unknown`), { code: 'not_found' });
  const c = s.campaign;
  let messages = await d.outputs.fill([...s.messages.values(), ...d.globalOutcomes.values()]);
  const baseline = c.spec.compare?.resolved;
  if (baseline) {
    // compare mode: the baseline run's retained observations of its arm stand for the incumbent
    const b = d.slots.get(baseline.campaign_id);
    const own = [...s.messages.values()];
    const wanted = new Set(own.map((m) => ('item_hash' in m ? m.item_hash : '')));
    const baseObs = [...(b?.messages.values() ?? [])].filter(
      (m) => m.schema === 'shadow.observation/v1' && m.arm_id === baseline.arm_id && wanted.has(m.item_hash),
    );
    // a baseline artifact is evidence only while it is retained: read each one afresh at every
    // fold, so one that expired (or was deleted) since it was cached is ineligible, never used
    for (const m of baseObs)
      if (m.schema === 'shadow.observation/v1' && m.artifact_ref) d.outputs.forget(m.artifact_ref);
    const base = await d.outputs.fill(baseObs);
    messages = compareModeMessages({
      campaignId: id,
      spec: c.spec,
      own: messages,
      baseline: base,
      // gone for good only when the store said not_found; any other read failure is retried next fold
      artifactMissing: (o) => o.status === 'ok' && o.artifact_ref !== null && d.outputs.gone(o.artifact_ref),
    }).messages;
  }
  const end = d.metrics.foldSeconds.startTimer();
  try {
    return foldReport({
      campaign: { campaign_id: id, spec: c.spec, run_index: c.run_index, spec_hash: c.spec_hash, state: c.state },
      messages,
      provisional,
    });
  } finally {
    end();
  }
}

/** Writes a folded report (JSON, HTML, bundle, run record, dataset cards) and marks it the slot's latest. */
async function writeFolded(d: FoldDeps, id: string, r: FoldResult, provisional: boolean): Promise<void> {
  await writeReport(d.bus, {
    campaignId: id,
    reportId: r.reportId,
    reportJson: r.reportJson,
    runRecordId: r.runRecordId,
    runRecordJson: r.runRecordJson,
    provisional,
    html: renderReportHtml(r.report, r.runRecord, { bundle: r.bundle }),
    bundle: r.bundle,
    datasetCards: r.datasetCards,
  });
  d.metrics.reports.inc({ kind: provisional ? 'provisional' : 'final' });
  const s = d.slot(id);
  s.latestId = r.reportId;
  s.dirty = true;
  d.log.info({ campaignId: id, reportId: r.reportId, runRecordId: r.runRecordId, provisional }, 'report written');
}

/**
 * Folds and writes one report inside a span `shadowplane.verdict.fold` (child
 * `shadowplane.verdict.report.write`): a new trace for a final report, the requester's trace
 * when a report request carries a W3C `traceparent` header. Its `shadowplane.campaign.id` is
 * the attribute the duplicator's item spans carry, so one search finds both.
 */
export function foldAndWrite(
  d: FoldDeps,
  id: string,
  provisional: boolean,
  parent = ROOT_CONTEXT,
): Promise<FoldResult> {
  return inSpan(
    'shadowplane.verdict.fold',
    {
      kind: SpanKind.INTERNAL,
      parent,
      attributes: { 'shadowplane.campaign.id': id, 'shadowplane.report.provisional': provisional },
    },
    async (span) => {
      const r = await foldCampaign(d, id, provisional);
      span.setAttributes({
        'shadowplane.report.id': r.reportId,
        'shadowplane.run_record.id': r.runRecordId,
        'shadowplane.verdict.messages': d.slots.get(id)?.messages.size ?? 0,
      });
      await inSpan(
        'shadowplane.verdict.report.write',
        { kind: SpanKind.INTERNAL, attributes: { 'shadowplane.report.id': r.reportId } },
        () => writeFolded(d, id, r, provisional),
      );
      return r;
    },
  );
}
