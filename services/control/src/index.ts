// @shadowplane/control: the control REST API. Named exports only.
export { buildControlApp } from './app.js';
export type { ControlAppDeps } from './app.js';
export { startControl, main } from './main.js';
export type { ControlHandle } from './main.js';
export { ApiKeyStore, hashApiKey, generateApiKey, loadApiKeys, parseApiKeys, Scope, ApiKeyEntry } from './auth.js';
export type { Principal } from './auth.js';
export { ControlEnv, loadControlConfig } from './config.js';
export { buildOpenApi } from './openapi.js';
export { comparisonKey, limitMicroUsd, newCampaignId, TERMINAL_STATES } from './campaign-ids.js';
export { ROUTES } from './routes.js';
export type { RouteDef } from './routes.js';
export type { ReportsPort } from './reports-port.js';
