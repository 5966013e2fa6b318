import { randomUUID } from 'node:crypto';

/**
 * The configuration an end-to-end test gives an in-process duplicator worker on the shared
 * nats-server: names under `prefix`, no Redis, memory storage, short retry/poll/lease times so a
 * test run takes seconds. `workerTag` starts the worker id (a random suffix keeps ids unique).
 * A plain object for `startDuplicator` (the test kit does not depend on the duplicator).
 */
export function testDuplicatorConfig(natsUrl: string, prefix: string, workerTag: string) {
  return {
    natsUrl,
    natsPrefix: prefix,
    logLevel: 'error' as const,
    providersFile: '',
    redisUrl: undefined,
    workerId: `${workerTag}-${randomUUID().slice(0, 8)}`,
    opsHost: '127.0.0.1',
    opsPort: 0,
    itemConcurrency: 8,
    ackWaitMs: 10_000,
    leaseTtlMs: 5000,
    rateWindowMs: 60_000,
    retryBaseMs: 20,
    flagPollMs: 500,
    provision: false,
    storage: 'memory' as const,
  };
}

/** The configuration an end-to-end test gives an in-process verdict service (fast ticks, memory storage). */
export function testVerdictConfig<K>(natsUrl: string, prefix: string, keyring: K) {
  return { natsUrl, prefix, keyring, tickMs: 200, progressIntervalMs: 500, storage: 'memory' as const };
}
