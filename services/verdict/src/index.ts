// The verdict role: folds observations into reports (services/verdict). Named exports only.
export { startVerdict } from './service.js';
export type { VerdictConfig, VerdictHandle } from './service.js';
export { VerdictEnv, loadVerdictEnv } from './config.js';
export { computeProgress } from './progress.js';
