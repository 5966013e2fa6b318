// @shadowplane/evidence: the pure fold (observations → report + evidence bundle), near-duplicate
// clustering, and offline bundle verification. No I/O. Named exports only.
export { foldReport, judgeKey, observationId } from './fold.js';
export type { FoldInput, FoldResult, FoldCampaign } from './fold.js';
export {
  computeComparison,
  comparisonLevel,
  comparisonPowerPlan,
  capByInstrument,
  weakestInstrument,
  DECISION_INTERVAL_METHOD,
} from './compare.js';
export type { PairRow, ComparisonSettings, ComparisonResult } from './compare.js';
export { buildBundle, BUNDLE_PARTS } from './bundle.js';
export type { EvidenceBundle, BundleParts, CostEvidenceRow, StatsPart } from './bundle.js';
export { verifyBundle } from './verify.js';
export type { VerifyResult, BundleProblem } from './verify.js';
export { clusterBySimhash, hammingDistance64, NEAR_DUPLICATE_HAMMING_BITS, NEAR_DUPLICATE_METHOD } from './clusters.js';
export { obsInterner } from './obs-intern.js';
export type { ObsInterner } from './obs-intern.js';
export { ObsTable } from './obs-table.js';
export type { FoldObs, FoldUsage, FoldCost } from './obs-table.js';
export { fastCanonicalJson, fastContentHash, writeCanonicalJson } from './canonical-fast.js';
export { compareModeMessages } from './compare-mode.js';
export type { CompareModeInput, CompareModeResult } from './compare-mode.js';
export { buildDatasets, bodyProblem } from './dataset.js';
export type { BuildInput, CaptureRecord, SkipRecord, UnparseableRecord } from './dataset.js';
export { sequentialComparison, sequentialSummary, rowsInOrder } from './sequential.js';
export { groupSequentialComparison, plannedLooks } from './group-sequential.js';
export type { GroupSequentialSettings } from './group-sequential.js';
export { stoppingSpendPlan, groupSequentialSettling } from './sequential-plan.js';
export type { StoppingSpendPlan, StoppingSpendInput, ScenarioSpend, SpendScenario } from './sequential-plan.js';
export type { SequentialResult, SequentialLookRecord, SequentialSettings } from './sequential.js';
