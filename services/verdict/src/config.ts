import { z } from 'zod';
import { CommonEnv, parseConfig } from '@shadowplane/config';

/**
 * Every environment variable the verdict role reads, as one zod schema (docs are generated from the
 * `.describe()` texts). Bad values make `shadowplane verdict` exit 78 naming the key.
 */
export const VerdictEnv = CommonEnv.extend({
  SHADOWPLANE_VERDICT_OPS_LISTEN: z
    .string()
    .regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be host:port, e.g. 127.0.0.1:9464')
    .default('127.0.0.1:9466')
    .describe('host:port of /healthz, /readyz and /metrics; port 0 picks a free one'),
  SHADOWPLANE_VERDICT_PROGRESS_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(2000)
    .describe('how often changed campaign progress summaries are written to the reports KV, ms (default 2000)'),
  SHADOWPLANE_VERDICT_TICK_MS: z.coerce
    .number()
    .int()
    .min(50)
    .max(60_000)
    .default(500)
    .describe(
      'how often terminal campaigns are checked for a drained OBS backlog and a final report, ms (default 500)',
    ),
  SHADOWPLANE_ARTIFACT_KEYS_FILE: z
    .string()
    .optional()
    .describe('artifact keyring file; outputs are decrypted for scoring (without a key every output is unscored)'),
  SHADOWPLANE_ARTIFACT_KEY_FILE: z
    .string()
    .optional()
    .describe('single artifact key file (alternative to SHADOWPLANE_ARTIFACT_KEYS_FILE)'),
  SHADOWPLANE_ARTIFACT_KEY: z
    .string()
    .optional()
    .describe('single base64 artifact key in the environment (development only)'),
  SHADOWPLANE_NATS_STORAGE: z
    .enum(['file', 'memory'])
    .default('file')
    .describe('JetStream storage for streams/buckets this role provisions when they do not exist yet (default file)'),
});
export type VerdictEnv = z.infer<typeof VerdictEnv>;

/**
 * Parses the verdict role's environment once at start.
 * @throws ConfigError (code config_invalid) naming every offending variable
 */
export function loadVerdictEnv(env: NodeJS.ProcessEnv): VerdictEnv {
  return parseConfig(VerdictEnv, env);
}

/** Splits `host:port` (IPv6 in brackets) into its parts. */
export function splitHostPort(s: string): { host: string; port: number } {
  const i = s.lastIndexOf(':');
  return { host: s.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(s.slice(i + 1)) };
}
