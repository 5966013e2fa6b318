import { API_KEY_SCOPES, generateApiKey, hashApiKey } from '@shadowplane/contracts';

/**
 * The keys-file hash of an API key: `sha256:` + hex sha256 of its UTF-8 bytes — the format the
 * control API's SHADOWPLANE_CONTROL_API_KEYS_FILE expects (libs/contracts `hashApiKey`).
 */
export const hashKey: (key: string) => string = hashApiKey;

/** A fresh random API key: `sp_` + 32 random bytes, base64url (256 bits; libs/contracts `generateApiKey`). */
export const generateKey: () => string = generateApiKey;

/** The scopes a control API key can carry (libs/contracts `Scope`). */
export const KEY_SCOPES = API_KEY_SCOPES;

/**
 * Keys-file entries as the YAML list SHADOWPLANE_CONTROL_API_KEYS_FILE holds, e.g.
 * `- id: ops\n  hash: "sha256:…"\n  scopes: [campaign:read]\n` — ready to append to the file.
 */
export function keysFileYaml(entries: readonly { id: string; hash: string; scopes: readonly string[] }[]): string {
  return entries.map((e) => `- id: ${e.id}\n  hash: "${e.hash}"\n  scopes: [${e.scopes.join(', ')}]\n`).join('');
}
