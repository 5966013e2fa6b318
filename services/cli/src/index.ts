// @shadowplane/cli: shadowctl. Named exports only.
export { main } from './main.js';
export { ControlClient } from './client.js';
export type { ClientOptions, ApiResponse } from './client.js';
export { EXIT, CliError, exitForStatus } from './exit-codes.js';
export { evaluateGate } from './gate.js';
export type { GateResult, GateRow } from './gate.js';
export { watchCampaign, sequentialLines } from './watch.js';
export type { WatchOptions } from './watch.js';
export { hashKey, generateKey } from './keys.js';
