import type { Keyring } from '@shadowplane/artifacts';
import type { Bus } from '@shadowplane/bus';
import type { CampaignProgress, ObsMessage } from '@shadowplane/contracts';

/**
 * What the control API needs from `@shadowplane/reports` (the verdict service's read side). The
 * app takes it as a dependency so its routes do not bind to the verdict service's storage layout;
 * `main` passes the real module.
 */
export interface ReportsPort {
  /**
   * `html` is '' when the report has no HTML rendering; `runRecordId`/`runRecord` (the run's
   * campaign id/state, window, latency/TTFT percentiles; points at the report) are null for
   * reports written before run records.
   */
  readLatestReport(
    bus: Bus,
    campaignId: string,
  ): Promise<{
    reportId: string;
    report: unknown;
    provisional: boolean;
    runRecordId: string | null;
    runRecord: unknown;
    html: string;
    bundle: unknown;
  } | null>;
  readProgress(bus: Bus, campaignId: string): Promise<ProgressLike | null>;
  readDatasetCard(bus: Bus, hash: string): Promise<unknown>;
  exportObservations(bus: Bus, campaignId: string, opts: { keyring?: Keyring }): AsyncIterable<ObsMessage>;
  requestReport(
    bus: Bus,
    campaignId: string,
    opts: { timeoutMs: number; traceContext?: { traceparent: string; tracestate?: string | null } | null },
  ): Promise<{ reportId: string; runRecordId: string | null } | null>;
}

/** The progress fields the control API reads (the `CampaignProgress` contract satisfies it). */
export type ProgressLike = Pick<CampaignProgress, 'call_types' | 'arms' | 'updated_at'>;
