import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { CommonEnv, EnvBool, parseConfig } from '@shadowplane/config';

const int = (d: number, min = 1) => z.coerce.number().int().min(min).default(d);

/**
 * Every environment variable the duplicator reads (common ones from @shadowplane/config plus its
 * own), one zod schema; `loadConfig` fails listing every bad key (exit 78 from `main`).
 */
export const DuplicatorEnv = CommonEnv.extend({
  SHADOWPLANE_PROVIDERS_FILE: z
    .string()
    .min(1)
    .describe(
      'YAML/JSON operator allowlist of providers: id, base_url (API root incl. version, e.g. https://api.openai.com/v1), api, api_key_env|api_key_file. Required.',
    ),
  SHADOWPLANE_REDIS_URL: z
    .string()
    .url()
    .optional()
    .describe(
      'Redis URL: per-arm RPM/TPM/concurrency limits become cluster-wide (bottleneck clustering). Per process when unset.',
    ),
  SHADOWPLANE_ARTIFACT_KEYS_FILE: z
    .string()
    .optional()
    .describe(
      'JSON keyring {"active":kid,"keys":{kid:base64}} for AES-256-GCM artifact encryption (one of the three artifact key variables is required).',
    ),
  SHADOWPLANE_ARTIFACT_KEY_FILE: z
    .string()
    .optional()
    .describe('file holding one base64 32-byte artifact key (kid "default").'),
  SHADOWPLANE_ARTIFACT_KEY: z
    .string()
    .optional()
    .describe('one base64 32-byte artifact key in the environment (dev only).'),
  SHADOWPLANE_DUPLICATOR_WORKER_ID: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .optional()
    .describe(
      "this worker's id in dispatch records and leases; default <hostname>-<pid>-<random>. Must be unique per live process.",
    ),
  SHADOWPLANE_DUPLICATOR_OPS_LISTEN: z
    .string()
    .regex(/^[^:]+:\d{1,5}$/, 'must be host:port')
    .default('127.0.0.1:9465')
    .describe(
      'host:port of the ops server (/healthz, /readyz, /metrics); port 0 = ephemeral. Each role has its own default port (sidecar 9464, duplicator 9465, verdict 9466) so they can share a host.',
    ),
  SHADOWPLANE_DUPLICATOR_ITEM_CONCURRENCY: int(16).describe('items dispatched at once per campaign by this worker.'),
  SHADOWPLANE_DUPLICATOR_ACK_WAIT_MS: int(60_000, 500).describe(
    "JetStream ack_wait of the campaign consumers, ms; in-flight items send working() heartbeats every third of it, so a dead worker's items are redelivered after about this long.",
  ),
  SHADOWPLANE_DUPLICATOR_LEASE_TTL_MS: int(15_000, 300).describe(
    'a worker whose lease heartbeat is older than this (ms) is dead: its in-flight arms are lost and charged at their upper bound.',
  ),
  SHADOWPLANE_DUPLICATOR_RATE_WINDOW_MS: int(60_000, 10).describe(
    'the window arm rpm/tpm limits refer to, ms (60000 = per minute; tests scale it down).',
  ),
  SHADOWPLANE_DUPLICATOR_RETRY_BASE_MS: int(500, 0).describe(
    'base of the exponential retry backoff, ms (a provider retry-after wins when longer).',
  ),
  SHADOWPLANE_DUPLICATOR_FLAG_POLL_MS: int(500, 50).describe(
    'the paid_dispatch flag is re-read at least this often (ms) besides the KV watch; a failed read counts as off.',
  ),
  SHADOWPLANE_DUPLICATOR_PROVISION: EnvBool.default(true).describe(
    'create missing streams/buckets at start (idempotent).',
  ),
  SHADOWPLANE_DUPLICATOR_STORAGE: z
    .enum(['file', 'memory'])
    .default('file')
    .describe('storage of streams/buckets this worker provisions.'),
});
export type DuplicatorEnv = z.infer<typeof DuplicatorEnv>;

/** Resolved duplicator configuration (what {@link startDuplicator} takes). Times in ms. */
export interface DuplicatorConfig {
  natsUrl: string;
  natsPrefix: string;
  /** replicas of every stream, bucket and object store (SHADOWPLANE_NATS_REPLICAS; unset: the env var, else 1) */
  natsReplicas?: number;
  logLevel: DuplicatorEnv['SHADOWPLANE_LOG_LEVEL'];
  providersFile: string;
  redisUrl: string | undefined;
  workerId: string;
  opsHost: string;
  opsPort: number;
  itemConcurrency: number;
  ackWaitMs: number;
  leaseTtlMs: number;
  rateWindowMs: number;
  retryBaseMs: number;
  flagPollMs: number;
  provision: boolean;
  storage: 'file' | 'memory';
}

/** A default worker id: `<hostname>-<pid>-<4 random hex>`, sanitised to [A-Za-z0-9_-]. */
export function defaultWorkerId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(2).toString('hex')}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

/**
 * Parses the environment into a {@link DuplicatorConfig}.
 * @throws ConfigError (code config_invalid) naming every offending variable
 */
export function loadConfig(env: NodeJS.ProcessEnv): DuplicatorConfig {
  const e = parseConfig(DuplicatorEnv, env);
  const [host, port] = e.SHADOWPLANE_DUPLICATOR_OPS_LISTEN.split(/:(?=\d+$)/) as [string, string];
  return {
    natsUrl: e.SHADOWPLANE_NATS_URL,
    natsPrefix: e.SHADOWPLANE_NATS_PREFIX,
    natsReplicas: e.SHADOWPLANE_NATS_REPLICAS,
    logLevel: e.SHADOWPLANE_LOG_LEVEL,
    providersFile: e.SHADOWPLANE_PROVIDERS_FILE,
    redisUrl: e.SHADOWPLANE_REDIS_URL,
    workerId: e.SHADOWPLANE_DUPLICATOR_WORKER_ID ?? defaultWorkerId(),
    opsHost: host,
    opsPort: Number(port),
    itemConcurrency: e.SHADOWPLANE_DUPLICATOR_ITEM_CONCURRENCY,
    ackWaitMs: e.SHADOWPLANE_DUPLICATOR_ACK_WAIT_MS,
    leaseTtlMs: e.SHADOWPLANE_DUPLICATOR_LEASE_TTL_MS,
    rateWindowMs: e.SHADOWPLANE_DUPLICATOR_RATE_WINDOW_MS,
    retryBaseMs: e.SHADOWPLANE_DUPLICATOR_RETRY_BASE_MS,
    flagPollMs: e.SHADOWPLANE_DUPLICATOR_FLAG_POLL_MS,
    provision: e.SHADOWPLANE_DUPLICATOR_PROVISION,
    storage: e.SHADOWPLANE_DUPLICATOR_STORAGE,
  };
}
