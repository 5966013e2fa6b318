// The public surface of the sidecar package (for the binary, tests and benchmarks). Named exports only.
export { startSidecar, SIDECAR_VERSION } from './sidecar.js';
export type { SidecarHandle, StartSidecarOptions } from './sidecar.js';
export { loadConfig, parseHostPort } from './config.js';
export { SidecarEnv, SidecarFile, RouteSpec, SamplingRuleSpec } from './config-schema.js';
export type { SidecarConfig, LoadConfigResult } from './config.js';
export { Sampler, modelMatches, SHADOW_HEADERS } from './sampling.js';
export type { SampleDecision, RequestHead, SkipReason, SamplerOptions } from './sampling.js';
export { redactJson, redactText, luhnValid, ibanValid } from './redact.js';
export type { PiiType, RedactionResult } from './redact.js';
export { buildEnvelope } from './capture.js';
export { toPublishable } from './capture-protocol.js';
export type {
  CaptureInput,
  BuildResult,
  BuiltEnvelope,
  ExcludeReason,
  TeedResponse,
  Publishable,
  ProcessResult,
} from './capture-protocol.js';
export { CaptureProcessor } from './processor.js';
export { CapturePublisher } from './publisher.js';
export type { PublishJob, PublisherOptions, DropReason } from './publisher.js';
export { SidecarProxy, CAPTURE_HEADER } from './proxy.js';
export type { ProxyDeps } from './proxy.js';
export { SidecarMetrics } from './metrics.js';
export type { CaptureOutcome, RequestOutcome } from './metrics.js';
