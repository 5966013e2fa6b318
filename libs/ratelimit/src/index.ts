// @shadowplane/ratelimit: per-arm RPM (bottleneck), TPM (sliding token window) and concurrency limits. Named exports only.
export { createArmLimiter, limiterSettings, closeRedisConnections } from './arm-limiter.js';
export type { ArmLimiter, ArmLimiterOptions } from './arm-limiter.js';
