import { inject } from 'vitest';

/**
 * The URL of the nats-server shared by the whole test run: started by the vitest global setup
 * (test/global-setup.ts), or the one named by NATS_URL. Tests isolate themselves with
 * randomPrefix() names, never by assuming an empty server.
 */
export function sharedNatsUrl(): string {
  return inject('natsUrl');
}
