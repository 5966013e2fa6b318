import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { isShadowplaneError } from '@shadowplane/contracts';
import { DEFAULT_SIM_CONFIG, issueKey, type SimConfigInput } from './config.js';
import { startProviderSim } from './index.js';

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;

/** Exit code for a configuration error (sysexits EX_CONFIG). */
export const EXIT_CONFIG = 78;
/** Exit code for a usage error (sysexits EX_USAGE). */
export const EXIT_USAGE = 64;

// the layout of every role's help (libs/config renderHelp), written out: this role depends on no config lib
const HELP = `Usage: shadowplane provider-sim [options]

A simulated OpenAI / Anthropic / OpenRouter upstream (see services/provider-sim/README.md).

Options:
  -h, --help          display help for command
  --listen HOST:PORT  bind address (default 127.0.0.1:4000; port 0 = any free port)
  --config FILE       YAML sim config (default: the built-in three tiers)
  --seed N            seed for every random choice (default 0 or the config's seed)
  --dataset FILE      known-answer jsonl (default examples/data/gsm8k-test.jsonl)

Environment:
  SHADOWPLANE_SIM_LISTEN, SHADOWPLANE_SIM_CONFIG, SHADOWPLANE_SIM_SEED, SHADOWPLANE_SIM_DATASET
        the flags above (a flag wins over its variable)
  SHADOWPLANE_SIM_LATENCY_SCALE
        multiplies every simulated latency (default: the config's latency_scale)
  SHADOWPLANE_SIM_LOG_LEVEL
        pino level (default info)

Prints {"event":"listening","url":"http://HOST:PORT"} on stdout when ready; stops on SIGTERM.

Exit codes: 0 stopped cleanly or done, 1 crashed or could not start, 64 bad flag or argument,
78 bad configuration (the variable or key is named on stderr).
`;

/** The role's settings from flags and env (flags win). One schema, validated once at start. */
const Settings = z
  .object({
    SHADOWPLANE_SIM_LISTEN: z
      .string()
      .regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be HOST:PORT')
      .refine((s) => Number(s.slice(s.lastIndexOf(':') + 1)) <= 65535, 'port must be ≤ 65535')
      .default('127.0.0.1:4000'),
    SHADOWPLANE_SIM_CONFIG: z.string().min(1).optional(),
    SHADOWPLANE_SIM_SEED: z.coerce.number().int().nonnegative().optional(),
    SHADOWPLANE_SIM_DATASET: z.string().optional(),
    SHADOWPLANE_SIM_LATENCY_SCALE: z.coerce.number().nonnegative().optional(),
    SHADOWPLANE_SIM_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .strip();

const FLAG_OF: Record<string, string> = {
  SHADOWPLANE_SIM_LISTEN: '--listen / SHADOWPLANE_SIM_LISTEN',
  SHADOWPLANE_SIM_CONFIG: '--config / SHADOWPLANE_SIM_CONFIG',
  SHADOWPLANE_SIM_SEED: '--seed / SHADOWPLANE_SIM_SEED',
  SHADOWPLANE_SIM_DATASET: '--dataset / SHADOWPLANE_SIM_DATASET',
};

function configError(key: string, message: string): number {
  process.stderr.write(`${JSON.stringify({ event: 'config_invalid', key, message })}\n`);
  return EXIT_CONFIG;
}

/**
 * Entry point of `shadowplane provider-sim`. Runs until SIGINT/SIGTERM.
 * @param argv arguments after the role name
 * @returns exit code: 0 clean shutdown, 64 usage error, 78 invalid config (key named on stderr)
 */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let flags: {
    listen?: string | undefined;
    config?: string | undefined;
    seed?: string | undefined;
    dataset?: string | undefined;
    help?: boolean | undefined;
  };
  try {
    flags = parseArgs({
      args: argv,
      options: {
        listen: { type: 'string' },
        config: { type: 'string' },
        seed: { type: 'string' },
        dataset: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (e) {
    process.stderr.write(`shadowplane provider-sim: ${(e as Error).message}\n\n${HELP}`);
    return EXIT_USAGE;
  }
  if (flags.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const merged = {
    ...env,
    ...(flags.listen !== undefined ? { SHADOWPLANE_SIM_LISTEN: flags.listen } : {}),
    ...(flags.config !== undefined ? { SHADOWPLANE_SIM_CONFIG: flags.config } : {}),
    ...(flags.seed !== undefined ? { SHADOWPLANE_SIM_SEED: flags.seed } : {}),
    ...(flags.dataset !== undefined ? { SHADOWPLANE_SIM_DATASET: flags.dataset } : {}),
  };
  const s = Settings.safeParse(merged);
  if (!s.success) {
    const i = s.error.issues[0]!;
    const k = issueKey(i.path);
    return configError(FLAG_OF[k] ?? k, i.message);
  }
  const settings = s.data;

  let config: SimConfigInput = DEFAULT_SIM_CONFIG;
  if (settings.SHADOWPLANE_SIM_CONFIG !== undefined) {
    try {
      config = parseYaml(readFileSync(settings.SHADOWPLANE_SIM_CONFIG, 'utf8')) as SimConfigInput;
    } catch (e) {
      return configError(
        FLAG_OF.SHADOWPLANE_SIM_CONFIG!,
        `cannot read or parse ${settings.SHADOWPLANE_SIM_CONFIG}: ${(e as Error).message}`,
      );
    }
  }
  if (settings.SHADOWPLANE_SIM_LATENCY_SCALE !== undefined)
    config = { ...config, latency_scale: settings.SHADOWPLANE_SIM_LATENCY_SCALE };

  const logger = pino(
    {
      name: 'provider-sim',
      level: settings.SHADOWPLANE_SIM_LOG_LEVEL,
      base: { service: 'provider-sim', version: VERSION },
    },
    pino.destination(2),
  );
  const listen = settings.SHADOWPLANE_SIM_LISTEN;
  const at = listen.lastIndexOf(':');
  const host = listen.slice(0, at).replace(/^\[|\]$/g, '');
  const port = Number(listen.slice(at + 1));

  let sim;
  try {
    sim = await startProviderSim({
      config,
      host,
      port,
      logger,
      ...(settings.SHADOWPLANE_SIM_SEED !== undefined ? { seed: settings.SHADOWPLANE_SIM_SEED } : {}),
      ...(settings.SHADOWPLANE_SIM_DATASET !== undefined ? { datasetPath: settings.SHADOWPLANE_SIM_DATASET } : {}),
    });
  } catch (e) {
    if (isShadowplaneError(e) && e.code === 'config_invalid') {
      const d = e.details as { issues?: { key: string; message: string }[]; key?: string } | undefined;
      const first = d?.issues?.[0];
      if (first) return configError(`config:${first.key}`, first.message);
      return configError(d?.key === 'dataset' ? FLAG_OF.SHADOWPLANE_SIM_DATASET! : 'config', e.message);
    }
    const code = (e as { code?: string }).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL')
      return configError(FLAG_OF.SHADOWPLANE_SIM_LISTEN!, `cannot listen on ${listen}: ${code}`);
    throw e;
  }
  process.stdout.write(`${JSON.stringify({ event: 'listening', url: sim.url })}\n`);
  logger.info(
    { url: sim.url, models: Object.keys(sim.config.models), seed: sim.config.seed },
    'provider-sim listening',
  );

  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await sim.close();
  logger.info({}, 'provider-sim stopped');
  return 0;
}
