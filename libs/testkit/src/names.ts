import { randomBytes } from 'node:crypto';
import { natsNames, type NatsNames } from '@shadowplane/contracts';

/** A fresh random NATS name prefix, so each test gets its own streams and buckets. */
export function randomPrefix(tag = 't'): string {
  return `${tag}${randomBytes(5).toString('hex')}`;
}

/** natsNames() under a fresh random prefix. */
export function testNames(tag = 't'): NatsNames {
  return natsNames(randomPrefix(tag));
}
