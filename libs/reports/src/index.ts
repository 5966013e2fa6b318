// @shadowplane/reports: where reports, bundles, dataset cards and progress live in NATS, and how
// control and shadowctl read them. Named exports only.
export {
  reportDocsStore,
  writeReport,
  readReport,
  readRunRecord,
  readLatestReport,
  readFinalReport,
  writeProgress,
  readProgress,
  readDatasetCard,
  readObsSubject,
  exportObservations,
  requestReport,
} from './reports.js';
export type { StoredReport, ReportWrite } from './reports.js';
export { renderReportHtml, niceTicks, usd, SKEW_WARNING_MS, PROJECTION_DAYS } from './html.js';
export type { RenderOptions, RenderBundle } from './html.js';
export { buildLedger, callRow, SEQUENTIAL_SKEW_MS } from './ledger.js';
export type { Ledger, CallRow, ArmRollup, HostRollup, ConcurrencyCheck } from './ledger.js';
export { ledgerCsv } from './csv.js';
