import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { assertCasSafeServer, connectBus, provision, watchCasSafeServer, type Bus } from '@shadowplane/bus';
import { EXIT_CONFIG, EXIT_USAGE, loadProviderAllowlist, ConfigError, renderHelp } from '@shadowplane/config';
import { isShadowplaneError, type ShadowplaneError } from '@shadowplane/contracts';
import { loadKeyring } from '@shadowplane/artifacts';
import * as reportsLib from '@shadowplane/reports';
import { createLogger, createMetricsRegistry, startTracing } from '@shadowplane/telemetry';
import { buildControlApp } from './app.js';
import { generateApiKey, hashApiKey, loadApiKeys } from './auth.js';
import { ControlEnv, loadControlConfig } from './config.js';
import type { ReportsPort } from './reports-port.js';

const VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

/** A running control API. */
export interface ControlHandle {
  url: string;
  app: FastifyInstance;
  bus: Bus;
  /** stops accepting, drains in-flight requests, closes NATS */
  close(): Promise<void>;
}

/**
 * Starts the control API from an environment (the same variables `shadowplane control` reads;
 * see config.ts): parses config, connects and provisions NATS, listens.
 * @throws ConfigError (config_invalid) for bad configuration; connection errors as thrown by NATS
 */
/** Reconnected to a nats-server whose KV compare-and-set is unsafe: stop at once (78, bad configuration). */
function defaultUnsafeServer(err: ShadowplaneError): void {
  process.stderr.write(`shadowplane control: ${err.message}\n`);
  process.exit(EXIT_CONFIG);
}

export async function startControl(
  env: NodeJS.ProcessEnv,
  opts: {
    logDestination?: { write(msg: string): void };
    /** on a reconnect to a nats-server with the CAS race (already logged); default: exit 78 */
    onUnsafeServer?: (err: ShadowplaneError) => void;
  } = {},
): Promise<ControlHandle> {
  const cfg = loadControlConfig(env);
  const apiKeys = loadApiKeys(cfg.env.SHADOWPLANE_CONTROL_API_KEYS_FILE);
  const providers = loadProviderAllowlist(cfg.env.SHADOWPLANE_PROVIDERS_FILE);
  const keyring =
    cfg.env.SHADOWPLANE_ARTIFACT_KEYS_FILE || cfg.env.SHADOWPLANE_ARTIFACT_KEY_FILE ? loadKeyring(env) : undefined;
  const logger = createLogger({
    service: 'control',
    version: VERSION,
    level: cfg.env.SHADOWPLANE_LOG_LEVEL,
    destination: opts.logDestination ?? process.stderr,
  });
  const registry = createMetricsRegistry({ role: 'control' });
  const bus = await connectBus({
    url: cfg.env.SHADOWPLANE_NATS_URL,
    name: 'shadowplane-control',
    prefix: cfg.env.SHADOWPLANE_NATS_PREFIX,
    replicas: cfg.env.SHADOWPLANE_NATS_REPLICAS,
  });
  try {
    assertCasSafeServer(bus.serverVersion); // campaign state and the budget ledger rest on compare-and-set
  } catch (e) {
    await bus.close();
    throw e;
  }
  // and after every reconnect: on a server with the CAS race the API stops rather than write state there
  watchCasSafeServer(bus.nc, (err) => {
    logger.error({ code: err.code, details: err.details }, err.message);
    (opts.onUnsafeServer ?? defaultUnsafeServer)(err);
  });
  await provision(bus, { storage: cfg.env.SHADOWPLANE_CONTROL_STORAGE });
  const app = await buildControlApp({
    bus,
    providers,
    apiKeys,
    reports: reportsLib satisfies ReportsPort,
    logger,
    registry,
    version: VERSION,
    bodyLimitBytes: cfg.env.SHADOWPLANE_CONTROL_BODY_LIMIT_BYTES,
    captureSample: cfg.env.SHADOWPLANE_CONTROL_CAPTURE_SAMPLE,
    ...(keyring === undefined ? {} : { keyring }),
  });
  const address = await app.listen({ host: cfg.host, port: cfg.port });
  let closed = false;
  return {
    url: address,
    app,
    bus,
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await bus.close();
    },
  };
}

const HELP = renderHelp({
  usage: 'shadowplane control [--hash-key [KEY] | --new-key]',
  summary:
    'Serves the control REST API (campaigns, dry runs, reports, outcomes, datasets, the kill switch; OpenAPI at /openapi.json). Configured by the environment.',
  options: [
    ['--hash-key [KEY]', 'print the keys-file hash of KEY (or of the key read from stdin) and exit'],
    ['--new-key', 'print a fresh random API key and its hash, and exit'],
  ],
  env: ControlEnv,
  notes: ['Prints {"event":"listening","role":"control","url":...} on stdout when ready; drains on SIGTERM.'],
});

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}

/** Entry point of `shadowplane control`. Prints `{"event":"listening","role":"control","url":...}` when ready; drains on SIGTERM/SIGINT. */
export async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return 0;
  }
  if (argv[0] === '--hash-key') {
    const key = argv[1] ?? (await readStdin());
    if (!key) {
      process.stderr.write('shadowplane control --hash-key: no key given\n');
      return EXIT_USAGE;
    }
    process.stdout.write(`${hashApiKey(key)}\n`);
    return 0;
  }
  if (argv[0] === '--new-key') {
    const key = generateApiKey();
    process.stdout.write(`${JSON.stringify({ key, hash: hashApiKey(key) })}\n`);
    return 0;
  }
  if (argv.length) {
    process.stderr.write(`shadowplane control: unknown arguments ${argv.join(' ')}\n\n${HELP}`);
    return EXIT_USAGE;
  }
  const tracing = startTracing({ serviceName: 'shadowplane-control', serviceVersion: VERSION, role: 'control' });
  let handle: ControlHandle;
  try {
    handle = await startControl(process.env);
  } catch (e) {
    if (
      e instanceof ConfigError ||
      (isShadowplaneError(e) && (e.code === 'nats_server_unsupported' || e.code === 'nats_replicas_mismatch'))
    ) {
      process.stderr.write(`shadowplane control: ${(e as Error).message}\n`);
      return EXIT_CONFIG;
    }
    process.stderr.write(`shadowplane control: cannot start: ${(e as Error).message}\n`);
    return 1;
  }
  process.stdout.write(`${JSON.stringify({ event: 'listening', role: 'control', url: handle.url })}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await handle.close();
  await tracing.shutdown();
  return 0;
}
