// The duplicator role's programmatic surface (tests, the demo). Named exports only.
export { startDuplicator, DUPLICATOR_VERSION } from './duplicator.js';
export type { DuplicatorHandle, DuplicatorDeps } from './duplicator.js';
export { loadConfig, DuplicatorEnv, defaultWorkerId } from './config.js';
export type { DuplicatorConfig } from './config.js';
export { attemptCharge, callOnce, isRetryable } from './invoke.js';
export type { AttemptOutcome } from './invoke.js';
export { isSampled, isAaItem, ItemClaim } from './campaign-runner.js';
export { PaidDispatchGate, WorkerLeases, leaseKey } from './liveness.js';
