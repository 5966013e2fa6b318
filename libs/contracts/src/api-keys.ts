/**
 * Control API keys as every role spells them: the scopes, the keys-file entry and the hash a key is
 * stored under. Control checks them, shadowctl makes them (`keys new`, `keys hash`), `shadowplane up`
 * writes a session key — one definition, so a key one of them hashes is a key the others accept.
 * Source: docs/configuration.md (SHADOWPLANE_CONTROL_API_KEYS_FILE).
 */
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';

/**
 * The API scopes. Scopes do not imply each other (an `admin` key flips flags but cannot launch
 * unless it also holds `campaign:write`): least privilege, each key lists what it may do.
 */
export const Scope = z.enum(['campaign:read', 'campaign:write', 'outcome:write', 'admin']);
export type Scope = z.infer<typeof Scope>;

/** Every scope, in the order the docs list them. */
export const API_KEY_SCOPES: readonly Scope[] = Object.freeze([...Scope.options]);

/** One entry of the API keys file: the key is stored only as `sha256:<64 hex>` of its UTF-8 bytes. */
export const ApiKeyEntry = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1–64 of [A-Za-z0-9_.-]'),
    hash: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'must be sha256:<64 lowercase hex> (see `shadowctl keys hash`)'),
    scopes: z.array(Scope).min(1),
  })
  .strict();
export type ApiKeyEntry = z.infer<typeof ApiKeyEntry>;

/**
 * Hashes an API key for the keys file: `sha256:` + hex sha256 of its UTF-8 bytes. API keys are
 * long random strings (≥ 128 bits), so a fast hash suffices — there is nothing to brute-force.
 */
export function hashApiKey(key: string): string {
  return `sha256:${createHash('sha256').update(key, 'utf8').digest('hex')}`;
}

/** A fresh API key: `sp_` + 32 random bytes base64url (256 bits). */
export function generateApiKey(): string {
  return `sp_${randomBytes(32).toString('base64url')}`;
}
