import { loadKeyring, type Keyring } from '@shadowplane/artifacts';
import { ConfigError, EXIT_CONFIG, EXIT_USAGE, renderHelp } from '@shadowplane/config';
import { createLogger, createMetricsRegistry, startTracing } from '@shadowplane/telemetry';
import { VerdictEnv as VerdictEnvSchema, loadVerdictEnv, splitHostPort, type VerdictEnv } from './config.js';
import { startVerdict, type VerdictHandle } from './service.js';

const HELP = renderHelp({
  usage: 'shadowplane verdict',
  summary:
    'Folds observations from the OBS stream into reports and evidence bundles: replays the stream from its start (restart = replay = the same reports), writes progress summaries, writes the final report when a campaign is terminal and its backlog is drained, and answers provisional report requests on <prefix.>shadow.verdict.report. Configured by the environment alone.',
  env: VerdictEnvSchema,
  notes: ['Prints {"event":"listening","role":"verdict","url":<ops url>} on stdout when ready; drains on SIGTERM.'],
});

/** Entry point of `shadowplane verdict`. */
export async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return 0;
  }
  if (argv.length) {
    process.stderr.write(`shadowplane verdict: unknown arguments ${argv.join(' ')}\n\n${HELP}`);
    return EXIT_USAGE;
  }
  let env: VerdictEnv;
  let keyring: Keyring | null = null;
  try {
    env = loadVerdictEnv(process.env);
    if (env.SHADOWPLANE_ARTIFACT_KEYS_FILE || env.SHADOWPLANE_ARTIFACT_KEY_FILE || env.SHADOWPLANE_ARTIFACT_KEY)
      keyring = loadKeyring(process.env);
  } catch (e) {
    if (e instanceof ConfigError || (e as { code?: string }).code === 'config_invalid') {
      process.stderr.write(`shadowplane verdict: ${(e as Error).message}\n`);
      return EXIT_CONFIG;
    }
    throw e;
  }
  const logger = createLogger({
    service: 'verdict',
    version: '0.1.0',
    level: env.SHADOWPLANE_LOG_LEVEL as never,
    destination: process.stderr as never,
  });
  const { host, port } = splitHostPort(env.SHADOWPLANE_VERDICT_OPS_LISTEN);
  const tracing = startTracing({ serviceName: 'shadowplane-verdict', serviceVersion: '0.1.0', role: 'verdict' });
  let handle: VerdictHandle;
  try {
    handle = await startVerdict({
      natsUrl: env.SHADOWPLANE_NATS_URL,
      prefix: env.SHADOWPLANE_NATS_PREFIX,
      opsHost: host,
      opsPort: port,
      keyring,
      progressIntervalMs: env.SHADOWPLANE_VERDICT_PROGRESS_INTERVAL_MS,
      tickMs: env.SHADOWPLANE_VERDICT_TICK_MS,
      storage: env.SHADOWPLANE_NATS_STORAGE,
      logger,
      registry: createMetricsRegistry({ role: 'verdict' }),
    });
  } catch (e) {
    process.stderr.write(`shadowplane verdict: cannot start: ${(e as Error).message}\n`);
    return 1;
  }
  if (!keyring) logger.warn({}, 'no artifact key configured: outputs cannot be read, so every output is unscored');
  process.stdout.write(`${JSON.stringify({ event: 'listening', role: 'verdict', url: handle.opsUrl })}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  await handle.close();
  await tracing.shutdown();
  return 0;
}
