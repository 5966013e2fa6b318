import { loadKeyring, type Keyring } from '@shadowplane/artifacts';
import { ConfigError, EXIT_CONFIG } from '@shadowplane/config';
import { createLogger, createMetricsRegistry, startTracing } from '@shadowplane/telemetry';
import { loadVerdictEnv, splitHostPort, type VerdictEnv } from './config.js';
import { startVerdict, type VerdictHandle } from './service.js';

const HELP = `usage: shadowplane verdict

Folds observations from the OBS stream into reports and evidence bundles: replays the stream from
its start (restart = replay = the same reports), writes progress summaries, writes the final
report when a campaign is terminal and its backlog is drained, and answers provisional report
requests on <prefix.>shadow.verdict.report.

Environment (see services/verdict/src/config.ts):
  SHADOWPLANE_NATS_URL, SHADOWPLANE_NATS_PREFIX, SHADOWPLANE_LOG_LEVEL
  SHADOWPLANE_VERDICT_OPS_LISTEN            host:port of /healthz /readyz /metrics (default 127.0.0.1:9466)
  SHADOWPLANE_VERDICT_PROGRESS_INTERVAL_MS  progress write interval (default 2000)
  SHADOWPLANE_VERDICT_TICK_MS               terminal-campaign check interval (default 500)
  SHADOWPLANE_ARTIFACT_KEYS_FILE | SHADOWPLANE_ARTIFACT_KEY_FILE | SHADOWPLANE_ARTIFACT_KEY
                                            keyring to decrypt outputs for scoring (optional)
Prints {"event":"listening","role":"verdict","url":<ops url>} when ready; drains on SIGTERM.
Exit codes: 0 stopped cleanly, 1 crashed, 64 usage, 78 bad configuration.
`;

/** Entry point of `shadowplane verdict`. */
export async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return 0;
  }
  if (argv.length) {
    process.stderr.write(`shadowplane verdict: unknown arguments ${argv.join(' ')}\n\n${HELP}`);
    return 64;
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
