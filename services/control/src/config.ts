import { z } from 'zod';
import { CommonEnv, parseConfig } from '@shadowplane/config';

/** Default largest accepted request body, bytes (1 MiB). */
export const DEFAULT_BODY_LIMIT_BYTES = 1_048_576;

/**
 * Every environment variable the control role reads, as one zod schema (docs are generated from
 * the `.describe()` texts). Bad values make `shadowplane control` exit 78 naming the key.
 */
export const ControlEnv = CommonEnv.extend({
  SHADOWPLANE_CONTROL_LISTEN: z
    .string()
    .regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be host:port, e.g. 127.0.0.1:8090')
    .default('127.0.0.1:8090')
    .describe('host:port the REST API (and /healthz, /readyz, /metrics) listens on; port 0 picks a free one'),
  SHADOWPLANE_CONTROL_API_KEYS_FILE: z
    .string()
    .min(1)
    .describe(
      'YAML/JSON list of API keys [{id, hash: "sha256:<hex>", scopes: [campaign:read|campaign:write|outcome:write|admin]}]; required',
    ),
  SHADOWPLANE_PROVIDERS_FILE: z
    .string()
    .min(1)
    .describe('YAML/JSON operator allowlist of providers; arms may only name ids from it; required'),
  SHADOWPLANE_CONTROL_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(16 * 1_048_576)
    .default(DEFAULT_BODY_LIMIT_BYTES)
    .describe('largest request body accepted, bytes (default 1 MiB); larger bodies get 413 payload_too_large'),
  SHADOWPLANE_CONTROL_CAPTURE_SAMPLE: z.coerce
    .number()
    .int()
    .min(0)
    .max(10_000)
    .default(200)
    .describe(
      'how many recent CAPTURE envelopes per call type a dry run reads to estimate the cost per item (default 200)',
    ),
  SHADOWPLANE_ARTIFACT_KEYS_FILE: z
    .string()
    .optional()
    .describe('artifact keyring file; when set, admins may export observations with decrypted outputs (?outputs=1)'),
  SHADOWPLANE_ARTIFACT_KEY_FILE: z
    .string()
    .optional()
    .describe('single artifact key file (alternative to SHADOWPLANE_ARTIFACT_KEYS_FILE)'),
  SHADOWPLANE_CONTROL_STORAGE: z
    .enum(['file', 'memory'])
    .default('file')
    .describe('JetStream storage for streams/buckets this role provisions when they do not exist yet (default file)'),
});
export type ControlEnv = z.infer<typeof ControlEnv>;

/** The resolved control configuration. */
export interface ControlConfig {
  env: ControlEnv;
  host: string;
  port: number;
}

/**
 * Parses the control role's environment once at start.
 * @throws ConfigError (code config_invalid) naming every offending variable
 */
export function loadControlConfig(env: NodeJS.ProcessEnv): ControlConfig {
  const parsed = parseConfig(ControlEnv, env);
  const m = /^(.*):(\d+)$/.exec(parsed.SHADOWPLANE_CONTROL_LISTEN)!;
  const host = m[1]!.replace(/^\[|\]$/g, '');
  return { env: parsed, host, port: Number(m[2]) };
}
