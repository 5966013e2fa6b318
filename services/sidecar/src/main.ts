import { ConfigError, EXIT_CONFIG, EXIT_USAGE } from '@shadowplane/config';
import { loadConfig } from './config.js';
import { startTracing } from '@shadowplane/telemetry';
import { SIDECAR_VERSION, startSidecar } from './sidecar.js';

/**
 * `shadowplane sidecar [--listen host:port] [--upstream url | --config sidecar.yaml] [--nats url]
 * [--sample rate] ...`: runs the proxy until SIGTERM/SIGINT, then drains gracefully.
 * Prints one JSON line `{"event":"listening","role":"sidecar","url":...,"ops_url":...}` on stdout
 * when ready; logs go to stderr.
 * @returns 0 after a clean drain, 64 (EX_USAGE) for an unknown flag or argument, 78 (EX_CONFIG) for bad configuration naming the key, 1 when a
 * listen address cannot be bound
 */
export async function main(argv: string[]): Promise<number> {
  let loaded;
  try {
    loaded = loadConfig(argv);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`shadowplane sidecar: ${e.message}\n`);
      return EXIT_CONFIG;
    }
    throw e;
  }
  if (loaded.kind === 'help') {
    process.stdout.write(loaded.text);
    return 0;
  }
  if (loaded.kind === 'usage') {
    process.stderr.write(`shadowplane sidecar: ${loaded.message}\n\n${loaded.help}`);
    return EXIT_USAGE;
  }
  const tracing = startTracing({
    serviceName: 'shadowplane-sidecar',
    serviceVersion: SIDECAR_VERSION,
    role: 'sidecar',
  });
  let sidecar;
  try {
    sidecar = await startSidecar(loaded.config);
  } catch (e) {
    process.stderr.write(`shadowplane sidecar: cannot start: ${(e as Error).message}\n`);
    return 1;
  }
  process.stdout.write(
    `${JSON.stringify({ event: 'listening', role: 'sidecar', url: sidecar.url, ops_url: sidecar.opsUrl })}\n`,
  );
  await new Promise<void>((resolve) => {
    const onSignal = () => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  await sidecar.stop();
  await tracing.shutdown();
  return 0;
}
