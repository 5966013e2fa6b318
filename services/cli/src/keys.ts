import { createHash, randomBytes } from 'node:crypto';

/**
 * The keys-file hash of an API key: `sha256:` + hex sha256 of its UTF-8 bytes — the format the
 * control API's SHADOWPLANE_CONTROL_API_KEYS_FILE expects.
 */
export function hashKey(key: string): string {
  return `sha256:${createHash('sha256').update(key, 'utf8').digest('hex')}`;
}

/** A fresh random API key: `sp_` + 32 random bytes, base64url (256 bits). */
export function generateKey(): string {
  return `sp_${randomBytes(32).toString('base64url')}`;
}
