import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { ConfigError, EXIT_CODES_LINE, parseConfig, readConfigFile } from '@shadowplane/config';
import { loadKeyring, type Keyring } from '@shadowplane/artifacts';
import { isShadowplaneError } from '@shadowplane/contracts';
import type { SamplerOptions } from './sampling.js';
import { RouteSpec, SidecarEnv, SidecarFile } from './config-schema.js';

/** The resolved sidecar configuration: env + file + flags, validated once at start. */
export interface SidecarConfig {
  listen: { host: string; port: number };
  opsListen: { host: string; port: number };
  natsUrl: string;
  natsPrefix: string;
  logLevel: SidecarEnv['SHADOWPLANE_LOG_LEVEL'];
  sidecarId: string;
  routes: RouteSpec[];
  /** the sampler's settings (see `SamplerOptions` in sampling.ts for each field) */
  sampling: Omit<SamplerOptions, 'random'>;
  capture: {
    inlineMaxBytes: number;
    captureMaxBytes: number;
    responseCaptureMaxBytes: number;
    offloadBytes: number;
    /** most decoded bytes per encoded byte (gzip/deflate/br) */
    maxDecodeRatio: number;
    /** ms of redaction one capture may spend on the worker */
    cpuBudgetMs: number;
    /** heap limit of the capture worker, MiB */
    workerMemoryMb: number;
    /** extra secret member names for the redactor */
    secretFieldNames: string[];
    batchMs: number;
    queueMax: number;
    queueMaxBytes: number;
    publishTimeoutMs: number;
    publishConcurrency: number;
    provision: boolean;
    /**
     * retention of served outputs (SHADOWPLANE_SIDECAR_RETAIN_SERVED): the TTL in days and the
     * artifact keyring; null when off. Applies only to captures whose request consented.
     */
    retainServed: { ttlDays: number; keyring: Keyring } | null;
  };
  upstream: {
    connections: number;
    connectTimeoutMs: number;
    headersTimeoutMs: number;
    bodyTimeoutMs: number;
  };
  keepAliveTimeoutMs: number;
  /** client-side deadlines, ms: head, body idle (and unread pipelined responses), whole request */
  client: { headerTimeoutMs: number; bodyTimeoutMs: number; requestTimeoutMs: number; pipelineMaxUnreadBytes: number };
  /** accept queue of the proxy listener, connections (capped by the kernel's net.core.somaxconn) */
  listenBacklog: number;
  drainTimeoutMs: number;
  /** ms an idle keep-alive connection stays open during a drain (capped by drainTimeoutMs) */
  drainIdleGraceMs: number;
  flushTimeoutMs: number;
}

/** Splits `host:port` (IPv6 in brackets). */
export function parseHostPort(s: string): { host: string; port: number } {
  const i = s.lastIndexOf(':');
  let host = s.slice(0, i);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return { host, port: Number(s.slice(i + 1)) };
}

const FLAG_TO_ENV: Record<string, keyof SidecarEnv> = {
  listen: 'SHADOWPLANE_SIDECAR_LISTEN',
  opsListen: 'SHADOWPLANE_SIDECAR_OPS_LISTEN',
  upstream: 'SHADOWPLANE_SIDECAR_UPSTREAM',
  nats: 'SHADOWPLANE_NATS_URL',
  prefix: 'SHADOWPLANE_NATS_PREFIX',
  sample: 'SHADOWPLANE_SIDECAR_SAMPLE',
  config: 'SHADOWPLANE_SIDECAR_CONFIG',
  suite: 'SHADOWPLANE_SIDECAR_SUITE',
};

/** Result of parsing argv: a config, or a request to print help and exit 0. */
export type LoadConfigResult =
  | { kind: 'config'; config: SidecarConfig }
  | { kind: 'help'; text: string }
  /** a bad flag or argument (exit 64): `message` names it, `help` is the help text */
  | { kind: 'usage'; message: string; help: string };

/**
 * Builds the sidecar configuration from argv flags, env and the optional YAML file
 * (precedence: flag > env > file > default for the scalar settings; routes and rules come from the
 * file, or one catch-all route from `--upstream`).
 * @param argv role arguments (after `shadowplane sidecar`)
 * @param env process environment
 * @throws ConfigError (code config_invalid) naming every offending key or flag value; an unknown flag
 *   or argument is a `usage` result, not an error
 */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): LoadConfigResult {
  const cmd = new Command('shadowplane sidecar')
    .description('transparent streaming proxy beside the router; samples and captures to NATS JetStream')
    .option('--listen <host:port>', 'proxy listen address (SHADOWPLANE_SIDECAR_LISTEN, default 127.0.0.1:8080)')
    .option(
      '--ops-listen <host:port>',
      'ops address for /healthz /readyz /metrics (SHADOWPLANE_SIDECAR_OPS_LISTEN, default 127.0.0.1:9464)',
    )
    .option('--upstream <url>', 'the upstream every request goes to (SHADOWPLANE_SIDECAR_UPSTREAM)')
    .option('--nats <url>', 'NATS URL(s) (SHADOWPLANE_NATS_URL, default nats://127.0.0.1:4222)')
    .option('--prefix <prefix>', 'NATS name prefix (SHADOWPLANE_NATS_PREFIX)')
    .option('--sample <rate>', 'default sampling rate 0–1 (SHADOWPLANE_SIDECAR_SAMPLE, default 0)')
    .option('--suite <suite>', 'suite for captures no rule names (SHADOWPLANE_SIDECAR_SUITE, default "default")')
    .option('--config <file>', 'YAML routes and sampling rules (SHADOWPLANE_SIDECAR_CONFIG)')
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined })
    .helpOption('-h, --help', 'display help for command');
  const help = () =>
    `${cmd.helpInformation()}\nEvery setting also has an environment variable (SHADOWPLANE_SIDECAR_*): the full list with defaults\nis docs/configuration.md. Prints {"event":"listening","role":"sidecar","url":...,"ops_url":...} on stdout\nwhen ready; drains on SIGTERM.\n\n${EXIT_CODES_LINE}\n`;
  try {
    cmd.parse(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError && (e.code === 'commander.helpDisplayed' || e.code === 'commander.help')) {
      return { kind: 'help', text: help() };
    }
    const message = e instanceof Error ? e.message.replace(/^error: /, '') : String(e);
    return { kind: 'usage', message, help: help() };
  }
  const flags = cmd.opts<Record<string, string | undefined>>();
  const merged: Record<string, unknown> = {};
  for (const k of Object.keys(SidecarEnv.shape)) if (env[k] !== undefined && env[k] !== '') merged[k] = env[k];
  for (const [flag, key] of Object.entries(FLAG_TO_ENV)) if (flags[flag] !== undefined) merged[key] = flags[flag];
  const e = parseConfig(SidecarEnv, merged);

  let file: SidecarFile = {};
  if (e.SHADOWPLANE_SIDECAR_CONFIG) {
    let doc: Record<string, unknown>;
    try {
      doc = readConfigFile(e.SHADOWPLANE_SIDECAR_CONFIG);
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      throw new ConfigError([
        {
          key: 'SHADOWPLANE_SIDECAR_CONFIG',
          message: `cannot read ${e.SHADOWPLANE_SIDECAR_CONFIG}: ${(err as Error).message}`,
        },
      ]);
    }
    const r = SidecarFile.safeParse(doc);
    if (!r.success) {
      throw new ConfigError(
        r.error.issues.map((i) => ({
          key: `${e.SHADOWPLANE_SIDECAR_CONFIG}:${i.path.join('.') || '(root)'}`,
          message: i.message,
        })),
      );
    }
    file = r.data;
  }

  let routes: RouteSpec[];
  if (e.SHADOWPLANE_SIDECAR_UPSTREAM !== undefined) {
    if (file.routes)
      throw new ConfigError([
        {
          key: 'SHADOWPLANE_SIDECAR_UPSTREAM',
          message: 'give either --upstream or routes in the config file, not both',
        },
      ]);
    routes = [
      RouteSpec.parse({ upstream: e.SHADOWPLANE_SIDECAR_UPSTREAM, placement: e.SHADOWPLANE_SIDECAR_PLACEMENT }),
    ];
  } else if (file.routes) {
    routes = file.routes;
  } else {
    throw new ConfigError([
      { key: 'SHADOWPLANE_SIDECAR_UPSTREAM', message: 'required: --upstream <url> or routes in --config' },
    ]);
  }

  const s = file.sampling;
  const stickyHeader =
    s?.sticky_header ??
    (e.SHADOWPLANE_SIDECAR_STICKY_HEADER ? e.SHADOWPLANE_SIDECAR_STICKY_HEADER.toLowerCase() : null);
  let stickySalt = e.SHADOWPLANE_SIDECAR_STICKY_SALT ?? null;
  if (stickySalt === null && e.SHADOWPLANE_SIDECAR_STICKY_SALT_FILE) {
    try {
      stickySalt = readFileSync(e.SHADOWPLANE_SIDECAR_STICKY_SALT_FILE, 'utf8').trim();
    } catch {
      throw new ConfigError([{ key: 'SHADOWPLANE_SIDECAR_STICKY_SALT_FILE', message: 'cannot read the salt file' }]);
    }
    if (stickySalt.length < 16)
      throw new ConfigError([
        { key: 'SHADOWPLANE_SIDECAR_STICKY_SALT_FILE', message: 'salt must be at least 16 characters' },
      ]);
  }
  const rules = s?.rules ?? [];
  const needsSalt = stickyHeader !== null || rules.some((r) => typeof r.sticky_header === 'string');
  if (needsSalt && stickySalt === null) {
    throw new ConfigError([
      {
        key: 'SHADOWPLANE_SIDECAR_STICKY_SALT',
        message: 'required when sticky sampling is configured (same value on every replica)',
      },
    ]);
  }

  let retainServed: SidecarConfig['capture']['retainServed'] = null;
  if (e.SHADOWPLANE_SIDECAR_RETAIN_SERVED) {
    try {
      const keys = {
        SHADOWPLANE_ARTIFACT_KEYS_FILE: e.SHADOWPLANE_ARTIFACT_KEYS_FILE,
        SHADOWPLANE_ARTIFACT_KEY_FILE: e.SHADOWPLANE_ARTIFACT_KEY_FILE,
        SHADOWPLANE_ARTIFACT_KEY: e.SHADOWPLANE_ARTIFACT_KEY,
      };
      retainServed = { ttlDays: e.SHADOWPLANE_SIDECAR_RETAIN_SERVED_TTL_DAYS, keyring: loadKeyring(keys) };
    } catch (err) {
      const key =
        isShadowplaneError(err) && typeof (err.details as { key?: unknown } | undefined)?.key === 'string'
          ? (err.details as { key: string }).key
          : e.SHADOWPLANE_ARTIFACT_KEYS_FILE
            ? 'SHADOWPLANE_ARTIFACT_KEYS_FILE'
            : e.SHADOWPLANE_ARTIFACT_KEY_FILE
              ? 'SHADOWPLANE_ARTIFACT_KEY_FILE'
              : 'SHADOWPLANE_ARTIFACT_KEY';
      throw new ConfigError([
        {
          key,
          message: `SHADOWPLANE_SIDECAR_RETAIN_SERVED needs the artifact keyring: ${(err as Error).message}`,
        },
      ]);
    }
  }

  return {
    kind: 'config',
    config: {
      listen: parseHostPort(e.SHADOWPLANE_SIDECAR_LISTEN),
      opsListen: parseHostPort(e.SHADOWPLANE_SIDECAR_OPS_LISTEN),
      natsUrl: e.SHADOWPLANE_NATS_URL,
      natsPrefix: e.SHADOWPLANE_NATS_PREFIX,
      logLevel: e.SHADOWPLANE_LOG_LEVEL,
      sidecarId: e.SHADOWPLANE_SIDECAR_ID,
      routes,
      sampling: {
        rate: s?.rate ?? e.SHADOWPLANE_SIDECAR_SAMPLE,
        suite: s?.suite ?? e.SHADOWPLANE_SIDECAR_SUITE,
        stickyHeader,
        stickySalt,
        optIn: s?.opt_in ?? e.SHADOWPLANE_SIDECAR_OPT_IN,
        optInRate: s?.opt_in_rate ?? 1,
        rules,
        expectations: s?.expectations ?? [],
        retentionConsent: e.SHADOWPLANE_SIDECAR_RETENTION_CONSENT,
      },
      capture: {
        inlineMaxBytes: e.SHADOWPLANE_SIDECAR_INLINE_MAX_BYTES,
        captureMaxBytes: e.SHADOWPLANE_SIDECAR_CAPTURE_MAX_BYTES,
        responseCaptureMaxBytes: e.SHADOWPLANE_SIDECAR_RESPONSE_CAPTURE_MAX_BYTES,
        offloadBytes: e.SHADOWPLANE_SIDECAR_CAPTURE_OFFLOAD_BYTES,
        maxDecodeRatio: e.SHADOWPLANE_SIDECAR_CAPTURE_MAX_DECODE_RATIO,
        cpuBudgetMs: e.SHADOWPLANE_SIDECAR_CAPTURE_CPU_BUDGET_MS,
        workerMemoryMb: e.SHADOWPLANE_SIDECAR_CAPTURE_WORKER_MEMORY_MB,
        secretFieldNames: e.SHADOWPLANE_SIDECAR_REDACT_FIELD_NAMES.split(',')
          .map((x) => x.trim())
          .filter((x) => x !== ''),
        batchMs: e.SHADOWPLANE_SIDECAR_CAPTURE_BATCH_MS,
        queueMax: e.SHADOWPLANE_SIDECAR_CAPTURE_QUEUE_MAX,
        queueMaxBytes: e.SHADOWPLANE_SIDECAR_CAPTURE_QUEUE_MAX_BYTES,
        publishTimeoutMs: e.SHADOWPLANE_SIDECAR_PUBLISH_TIMEOUT_MS,
        publishConcurrency: e.SHADOWPLANE_SIDECAR_PUBLISH_CONCURRENCY,
        provision: e.SHADOWPLANE_SIDECAR_PROVISION,
        retainServed,
      },
      upstream: {
        connections: e.SHADOWPLANE_SIDECAR_UPSTREAM_CONNECTIONS,
        connectTimeoutMs: e.SHADOWPLANE_SIDECAR_CONNECT_TIMEOUT_MS,
        headersTimeoutMs: e.SHADOWPLANE_SIDECAR_HEADERS_TIMEOUT_MS,
        bodyTimeoutMs: e.SHADOWPLANE_SIDECAR_BODY_TIMEOUT_MS,
      },
      keepAliveTimeoutMs: e.SHADOWPLANE_SIDECAR_KEEPALIVE_TIMEOUT_MS,
      client: {
        headerTimeoutMs: e.SHADOWPLANE_SIDECAR_CLIENT_HEADER_TIMEOUT_MS,
        bodyTimeoutMs: e.SHADOWPLANE_SIDECAR_CLIENT_BODY_TIMEOUT_MS,
        requestTimeoutMs: e.SHADOWPLANE_SIDECAR_REQUEST_TIMEOUT_MS,
        pipelineMaxUnreadBytes: e.SHADOWPLANE_SIDECAR_PIPELINE_MAX_UNREAD_BYTES,
      },
      listenBacklog: e.SHADOWPLANE_SIDECAR_LISTEN_BACKLOG,
      drainTimeoutMs: e.SHADOWPLANE_SIDECAR_DRAIN_TIMEOUT_MS,
      drainIdleGraceMs: e.SHADOWPLANE_SIDECAR_DRAIN_IDLE_GRACE_MS,
      flushTimeoutMs: e.SHADOWPLANE_SIDECAR_FLUSH_TIMEOUT_MS,
    },
  };
}
