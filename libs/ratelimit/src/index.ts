// @shadowplane/ratelimit: per-arm RPM/TPM/concurrency limits on bottleneck. Named exports only.
export { createArmLimiter, limiterSettings, closeRedisConnections } from './arm-limiter.js';
export type { ArmLimiter, ArmLimiterOptions } from './arm-limiter.js';
