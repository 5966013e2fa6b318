import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ProviderAllowlist, ShadowplaneError, type ProviderEntry } from '@shadowplane/contracts';
import { baseUrlProblem } from '@shadowplane/providers';

/** Exit code for bad configuration (EX_CONFIG from sysexits.h), distinct from crashes (1). */
export const EXIT_CONFIG = 78;

/** Environment variables every role reads, with their meaning. Role-specific ones live beside each role. */
export const COMMON_ENV = {
  SHADOWPLANE_NATS_URL: 'NATS server URL(s), comma-separated (default nats://127.0.0.1:4222)',
  SHADOWPLANE_NATS_PREFIX: 'isolation prefix for stream/bucket/subject names (default none)',
  SHADOWPLANE_NATS_REPLICAS:
    'replicas (1-5) of every stream, KV bucket and object store: 1 on a single server, 3 on a 3-node JetStream cluster; existing ones with another count are refused at start',
  SHADOWPLANE_LOG_LEVEL: 'pino level: fatal|error|warn|info|debug|trace (default info)',
  SHADOWPLANE_OTLP_ENDPOINT: 'OTLP/HTTP traces endpoint; tracing is off when unset',
  SHADOWPLANE_PROVIDERS_FILE: 'YAML/JSON operator allowlist of providers (id, base_url, api, api_key_env|api_key_file)',
  SHADOWPLANE_REDIS_URL: 'Redis URL for cluster-wide rate limits (per-process limits when unset)',
} as const;

/** The zod fields for {@link COMMON_ENV}, for a role's env schema to extend. */
export const CommonEnv = z.object({
  SHADOWPLANE_NATS_URL: z.string().default('nats://127.0.0.1:4222').describe(COMMON_ENV.SHADOWPLANE_NATS_URL),
  SHADOWPLANE_NATS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{0,32}$/)
    .default('')
    .describe(COMMON_ENV.SHADOWPLANE_NATS_PREFIX),
  SHADOWPLANE_NATS_REPLICAS: z.coerce
    .number()
    .int()
    .min(1)
    .max(5)
    .default(1)
    .describe(COMMON_ENV.SHADOWPLANE_NATS_REPLICAS),
  SHADOWPLANE_LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe(COMMON_ENV.SHADOWPLANE_LOG_LEVEL),
  SHADOWPLANE_OTLP_ENDPOINT: z.url().optional().describe(COMMON_ENV.SHADOWPLANE_OTLP_ENDPOINT),
});

/** A strict boolean env var: only `true|false|1|0` (anything else is a config error). */
export const EnvBool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/**
 * Thrown for invalid configuration; `issues` lists every offending key with its problem.
 * Roles print it and exit with {@link EXIT_CONFIG}.
 */
export class ConfigError extends ShadowplaneError {
  readonly issues: { key: string; message: string }[];
  constructor(issues: { key: string; message: string }[]) {
    super('config_invalid', `invalid configuration: ${issues.map((i) => `${i.key}: ${i.message}`).join('; ')}`, {
      details: { issues },
    });
    this.issues = issues;
  }
}

/**
 * Parses a config object (env vars, or merged env + file + flags) with one zod schema, listing
 * every bad key at once.
 * @throws ConfigError (code config_invalid) naming each offending key
 */
export function parseConfig<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data as z.infer<S>;
  throw new ConfigError(r.error.issues.map((i) => ({ key: i.path.join('.') || '(root)', message: i.message })));
}

/**
 * Reads the operator allowlist of providers from a YAML or JSON file: either a list of entries
 * or `{ providers: [...] }`. Ids must be unique.
 * @throws ConfigError naming the file and the offending entry
 */
export function loadProviderAllowlist(path: string): ProviderEntry[] {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new ConfigError([
      { key: 'SHADOWPLANE_PROVIDERS_FILE', message: `cannot read ${path}: ${(e as Error).message}` },
    ]);
  }
  const list =
    doc && typeof doc === 'object' && !Array.isArray(doc) && 'providers' in doc
      ? (doc as { providers: unknown }).providers
      : doc;
  const r = ProviderAllowlist.safeParse(list);
  if (!r.success)
    throw new ConfigError(
      r.error.issues.map((i) => ({ key: `SHADOWPLANE_PROVIDERS_FILE[${i.path.join('.')}]`, message: i.message })),
    );
  const seen = new Set<string>();
  for (const p of r.data) {
    if (seen.has(p.id))
      throw new ConfigError([{ key: `SHADOWPLANE_PROVIDERS_FILE[${p.id}]`, message: 'duplicate provider id' }]);
    seen.add(p.id);
    // one base_url rule for every role (libs/providers adapters): refused here, not as a 404 per call
    const problem = baseUrlProblem(p.api, p.base_url);
    if (problem) throw new ConfigError([{ key: `SHADOWPLANE_PROVIDERS_FILE[${p.id}].base_url`, message: problem }]);
  }
  return r.data;
}

/**
 * Resolves a provider's API key from its `api_key_env` or `api_key_file` (never logged).
 * @returns the key, or null when the entry names no key source
 * @throws ConfigError when the named variable or file is missing
 */
export function providerApiKey(p: ProviderEntry, env: NodeJS.ProcessEnv = process.env): string | null {
  if (p.api_key_file) {
    try {
      return readFileSync(p.api_key_file, 'utf8').trim();
    } catch {
      throw new ConfigError([{ key: `providers.${p.id}.api_key_file`, message: 'cannot read the key file' }]);
    }
  }
  if (p.api_key_env) {
    const v = env[p.api_key_env];
    if (!v) throw new ConfigError([{ key: `providers.${p.id}.api_key_env`, message: `${p.api_key_env} is not set` }]);
    return v;
  }
  return null;
}

/** Reads a YAML/JSON config file into a plain object ({} when `path` is undefined). */
export function readConfigFile(path: string | undefined): Record<string, unknown> {
  if (!path) return {};
  const doc = parseYaml(readFileSync(path, 'utf8')) as unknown;
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw new ConfigError([{ key: path, message: 'config file must hold a mapping' }]);
  return doc as Record<string, unknown>;
}
