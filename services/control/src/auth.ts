import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '@shadowplane/config';
import { ApiKeyEntry, type Scope } from '@shadowplane/contracts';

export { ApiKeyEntry, generateApiKey, hashApiKey, Scope } from '@shadowplane/contracts';

/** The API keys file: a list of entries, or `{ keys: [...] }`. Ids must be unique. */
export const ApiKeysFile = z.array(ApiKeyEntry);

/** Who made a request: the key id (safe to log) and its scopes. */
export interface Principal {
  id: string;
  scopes: ReadonlySet<Scope>;
}

/**
 * Parses and checks a list of key entries.
 * @throws ConfigError naming the bad entry (`SHADOWPLANE_CONTROL_API_KEYS_FILE[i.field]`)
 */
export function parseApiKeys(doc: unknown): ApiKeyEntry[] {
  const list =
    doc && typeof doc === 'object' && !Array.isArray(doc) && 'keys' in doc ? (doc as { keys: unknown }).keys : doc;
  const r = ApiKeysFile.safeParse(list);
  if (!r.success)
    throw new ConfigError(
      r.error.issues.map((i) => ({
        key: `SHADOWPLANE_CONTROL_API_KEYS_FILE[${i.path.join('.')}]`,
        message: i.message,
      })),
    );
  const seen = new Set<string>();
  for (const k of r.data) {
    if (seen.has(k.id))
      throw new ConfigError([{ key: `SHADOWPLANE_CONTROL_API_KEYS_FILE[${k.id}]`, message: 'duplicate key id' }]);
    seen.add(k.id);
  }
  return r.data;
}

/**
 * Reads the API keys file (YAML or JSON).
 * @throws ConfigError when unreadable or invalid, naming SHADOWPLANE_CONTROL_API_KEYS_FILE
 */
export function loadApiKeys(path: string): ApiKeyEntry[] {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new ConfigError([
      { key: 'SHADOWPLANE_CONTROL_API_KEYS_FILE', message: `cannot read ${path}: ${(e as Error).message}` },
    ]);
  }
  return parseApiKeys(doc);
}

/**
 * Authenticates bearer keys against stored hashes. Every stored hash is compared (in constant
 * time per comparison, `crypto.timingSafeEqual`) so the time taken does not depend on which entry,
 * if any, matches.
 */
export class ApiKeyStore {
  private readonly entries: { id: string; digest: Buffer; scopes: ReadonlySet<Scope> }[];

  constructor(entries: ApiKeyEntry[]) {
    this.entries = entries.map((e) => ({
      id: e.id,
      digest: Buffer.from(e.hash.slice('sha256:'.length), 'hex'),
      scopes: new Set(e.scopes),
    }));
  }

  /**
   * @param authorization the `Authorization` header value (`Bearer <key>`), or undefined
   * @returns the principal, or null for no header, another scheme, or an unknown key
   */
  authenticate(authorization: string | undefined): Principal | null {
    if (!authorization) return null;
    const m = /^Bearer[ \t]+(\S{1,512})[ \t]*$/i.exec(authorization);
    if (!m) return null;
    const digest = createHash('sha256').update(m[1]!, 'utf8').digest();
    let found: Principal | null = null;
    for (const e of this.entries) {
      if (timingSafeEqual(digest, e.digest) && found === null) found = { id: e.id, scopes: e.scopes };
    }
    return found;
  }
}
