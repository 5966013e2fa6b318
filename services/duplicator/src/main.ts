import { EXIT_CONFIG, EXIT_USAGE, ConfigError, renderHelp } from '@shadowplane/config';
import { isShadowplaneError } from '@shadowplane/contracts';
import { createLogger, startTracing } from '@shadowplane/telemetry';
import { DuplicatorEnv, loadConfig } from './config.js';
import { DUPLICATOR_VERSION, startDuplicator } from './duplicator.js';

const HELP = renderHelp({
  usage: 'shadowplane duplicator',
  summary:
    'Consumes captures from NATS JetStream and re-invokes every campaign arm under its budget cap and rate limits; publishes observations to the OBS stream. Configured by the environment alone.',
  env: DuplicatorEnv,
  notes: [
    'Prints {"event":"listening","role":"duplicator","url":<ops url>,"worker_id":...} on stdout when ready; logs go to stderr; drains on SIGTERM.',
  ],
});

/**
 * `shadowplane duplicator`: runs one worker until SIGTERM/SIGINT, then drains (in-flight items
 * finish and settle). Prints `{"event":"listening","role":"duplicator","url":<ops url>,"worker_id":...}`
 * on stdout when ready; logs (pino JSON) go to stderr.
 * @returns 0 after a clean drain, 64 for any argument but --help, 78 for bad configuration (also a
 *   NATS older than 2.10 or a replica-count mismatch; the process also exits 78 when it reconnects
 *   to such a server), 1 when start fails
 */
export async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return 0;
  }
  if (argv.length) {
    process.stderr.write(`shadowplane duplicator: unknown arguments ${argv.join(' ')}\n\n${HELP}`);
    return EXIT_USAGE;
  }
  let config;
  try {
    config = loadConfig(process.env);
  } catch (e) {
    process.stderr.write(`shadowplane duplicator: ${(e as Error).message}\n`);
    return e instanceof ConfigError ? EXIT_CONFIG : 1;
  }
  const { pino } = await import('pino');
  const logger = createLogger({
    service: 'duplicator',
    version: DUPLICATOR_VERSION,
    level: config.logLevel,
    destination: pino.destination(2),
  });
  const tracing = startTracing({
    serviceName: 'shadowplane-duplicator',
    serviceVersion: DUPLICATOR_VERSION,
    role: 'duplicator',
  });
  let handle;
  try {
    handle = await startDuplicator(config, {
      logger,
      // reconnected to a nats-server with the CAS race: stop now, without draining (no more ledger writes there)
      onUnsafeServer: (err) => {
        process.stderr.write(`shadowplane duplicator: ${err.message}\n`);
        process.exit(EXIT_CONFIG);
      },
    });
  } catch (e) {
    // bad configuration, or a NATS deployment the ledger cannot run on: say why, exit EX_CONFIG
    if (
      isShadowplaneError(e) &&
      (e.code === 'config_invalid' || e.code === 'nats_server_unsupported' || e.code === 'nats_replicas_mismatch')
    ) {
      process.stderr.write(`shadowplane duplicator: ${e.message}\n`);
      return EXIT_CONFIG;
    }
    logger.fatal({ err: e }, 'duplicator failed to start');
    return 1;
  }
  process.stdout.write(
    `${JSON.stringify({ event: 'listening', role: 'duplicator', url: handle.opsUrl, worker_id: handle.workerId })}\n`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await handle.close();
  await tracing.shutdown();
  return 0;
}
