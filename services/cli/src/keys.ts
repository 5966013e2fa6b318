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

/** The scopes a control API key can carry (services/control `Scope`). */
export const KEY_SCOPES = Object.freeze(['campaign:read', 'campaign:write', 'outcome:write', 'admin'] as const);

/**
 * Keys-file entries as the YAML list SHADOWPLANE_CONTROL_API_KEYS_FILE holds, e.g.
 * `- id: ops\n  hash: "sha256:…"\n  scopes: [campaign:read]\n` — ready to append to the file.
 */
export function keysFileYaml(entries: readonly { id: string; hash: string; scopes: readonly string[] }[]): string {
  return entries.map((e) => `- id: ${e.id}\n  hash: "${e.hash}"\n  scopes: [${e.scopes.join(', ')}]\n`).join('');
}
