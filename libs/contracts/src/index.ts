// The one public surface of @shadowplane/contracts. Named exports only.
export { ERROR_CODES, ShadowplaneError, isShadowplaneError } from './errors.js';
export type { ErrorCode } from './errors.js';
export {
  canonicalJson,
  contentHash,
  itemHash,
  sha256Hex,
  stripVolatile,
  VOLATILE_REQUEST_FIELDS,
} from './canonical.js';
export {
  natsNames,
  isSubjectToken,
  FLAG_PAID_DISPATCH,
  OUTCOMES_NO_CAMPAIGN,
  dispatchKeys,
  reservationIds,
} from './names.js';
export type { NatsNames } from './names.js';
export { API_KEY_SCOPES, ApiKeyEntry, Scope, generateApiKey, hashApiKey } from './api-keys.js';
export { Usage, NULL_USAGE, Cost, CostBasis, RateCard, Api, ErrorClass, PROVIDER_ZERO_WITH_TOKENS } from './usage.js';
export {
  Envelope,
  Expectation,
  SubmittedExpectation,
  BodyRef,
  Redaction,
  ServedSummary,
  ArtifactRef,
  SERVED_ARTIFACT_BINDING,
  SERVED_ARTIFACT_PURPOSE,
  TrafficClass,
  SubjectToken,
  Sha256Hex,
} from './envelope.js';
export {
  compileRegex,
  regexProblem,
  RegexPattern,
  REGEX_MAX_PATTERN_CHARS,
  REGEX_MAX_PROGRAM_SIZE,
  REGEX_SYNTAX,
} from './regex.js';
export type { CompiledRegex } from './regex.js';
export { Arm, ArmLimits, ScorerSpec, LlmJudgeSpec, AA_ARM_SUFFIX, aaArmId } from './campaign-arm.js';
export {
  CampaignSpec,
  StoredCampaignSpec,
  replayConflicts,
  judgedDatasetRunConflicts,
  MAX_ITEMS_CEILING,
  SEQUENTIAL_BATCH_DEFAULT,
  GROUP_SEQUENTIAL_MAX_LOOKS,
  MAX_ITEMS_DEFAULT,
  MIN_ARM_OBSERVATIONS,
} from './campaign.js';
export {
  CampaignState,
  Campaign,
  BudgetLedger,
  ProviderEntry,
  ProviderAllowlist,
  Outcome,
  PaidDispatchFlag,
  TERMINAL_CAMPAIGN_STATES,
} from './campaign-records.js';
export type { CampaignSpecInput } from './campaign.js';
export {
  Observation,
  ItemEvent,
  OutcomeRecord,
  ObsMessage,
  ArmRole,
  DispatchState,
  Instrument,
  JudgeVerdict,
} from './observation.js';
export { DatasetCard, FitEligibility, FIT_INELIGIBLE_REASONS } from './dataset-card.js';
export {
  Report,
  IntervalValue,
  PowerPlanValue,
  ReportedMean,
  Percentiles,
  ShareValue,
  ArmView,
  CandidateState,
  CannotMeasureReason,
  Remediation,
  Comparison,
  SequentialSummary,
  FrontierPoint,
  CallTypeReport,
  JudgeSummary,
} from './report.js';
export { CampaignProgress, RunSpend, RunArmTimes, RunRecord } from './run-record.js';
export { simhash64, simhashDistance, normalizeForSimhash, SIMHASH_SHINGLE_WORDS } from './simhash.js';
export { BaselineRef, CompareSpec, Baseline, BASELINE_ARTIFACT_MISSING, NOT_IN_BASELINE } from './bench.js';
export {
  DATASET_EXCLUSION_REASONS,
  DATASET_BUILDER_KINDS,
  DatasetExclusionReason,
  ImportBuilder,
  FromFailuresBuilder,
  IMPORT_ITEM_MAX_BYTES,
  FreezeRequest,
  DatasetItem,
  Dataset,
  SuiteFreezeRecord,
  CaptureSkipMarker,
  deriveFitEligibility,
} from './dataset.js';
export type { FreezeRequestInput } from './dataset.js';
export {
  SyntheticBuilder,
  SyntheticBuilderRecord,
  syntheticExpansionCount,
  syntheticVariables,
  TEMPLATE_VARIABLE,
  SYNTHETIC_MAX_VARIABLES,
  SYNTHETIC_MAX_VALUE_CHARS,
  SYNTHETIC_MAX_TOTAL_BYTES,
} from './dataset-synthetic.js';
export type { TemplateValue } from './dataset-synthetic.js';
export {
  REPORT_ID_HEADER,
  RUN_RECORD_ID_HEADER,
  ErrorBody,
  Spend,
  CallTypeProgress,
  ArmProgress,
  CampaignStatus,
  CampaignSummary,
  CampaignList,
  ArmEstimate,
  CallTypeEstimate,
  CallTypePower,
  Disposition,
  DryRunResult,
  FlagView,
  FlagUpdate,
  OutcomeAccepted,
  ReportView,
  EvidenceBundleView,
  HealthView,
} from './api-views.js';
export { SuiteStatusView, FreezeResultView } from './api-suite-views.js';
