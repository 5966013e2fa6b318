// The public surface of @shadowplane/provider-sim. Named exports only.
import { DEFAULT_SIM_CONFIG, parseSimConfig, type SimConfig, type SimConfigInput } from './config.js';
import { DEFAULT_DATASET_PATH, KnownAnswers } from './dataset.js';
import type { SimCall } from './call.js';
import { SimServer, type SimLogger } from './server.js';

export { DEFAULT_SIM_CONFIG, FAULT_KINDS, parseSimConfig, SimConfig as SimConfigSchema } from './config.js';
export type { FaultKind, SimConfig, SimConfigInput, SimModel } from './config.js';
export { DEFAULT_DATASET_PATH } from './dataset.js';
export { rateCardCost } from './engine.js';
export type { SimCall } from './call.js';
export type { SimLogger } from './server.js';

/** Options of {@link startProviderSim}. */
export interface ProviderSimOptions {
  /** sim config (defaults to {@link DEFAULT_SIM_CONFIG}); validated, defaults applied */
  config?: SimConfigInput;
  /** overrides `config.seed` */
  seed?: number;
  /** default 127.0.0.1 */
  host?: string;
  /** default 0 (any free port) */
  port?: number;
  /** known-answer jsonl (GSM8K shape); default examples/data/gsm8k-test.jsonl; '' disables */
  datasetPath?: string;
  /** pino-compatible logger; default none */
  logger?: SimLogger;
}

/** A running sim. */
export interface ProviderSim {
  /** base URL, e.g. `http://127.0.0.1:40123` (OpenAI SDK baseURL = url + '/v1') */
  url: string;
  port: number;
  /** the resolved config */
  config: SimConfig;
  /** the call log, oldest first */
  calls(): SimCall[];
  /** clears the call log, seq, limiter windows, prompt caches and fault counters */
  reset(): void;
  /** the Prometheus exposition text of this sim's metrics */
  metricsText(): Promise<string>;
  /** stops the server, ending in-flight hangs and stalls */
  close(): Promise<void>;
}

/**
 * Starts a provider sim on loopback: OpenAI chat (`/v1/chat/completions`), OpenAI Responses
 * (`/v1/responses`), Anthropic Messages (`/v1/messages`), OpenRouter
 * (`/api/v1/chat/completions`), `/v1/models`, plus `/sim/calls`, `/sim/reset`, `/metrics`,
 * `/healthz`. See services/provider-sim/README.md.
 * @throws ShadowplaneError `config_invalid` naming the offending key (config or dataset)
 */
export async function startProviderSim(opts: ProviderSimOptions = {}): Promise<ProviderSim> {
  const input = { ...(opts.config ?? DEFAULT_SIM_CONFIG), ...(opts.seed !== undefined ? { seed: opts.seed } : {}) };
  const config = parseSimConfig(input);
  const datasetPath = opts.datasetPath ?? DEFAULT_DATASET_PATH;
  const known = datasetPath === '' ? null : KnownAnswers.load(datasetPath, config.seed, config.difficulty_weight);
  const server = new SimServer(config, known, opts.logger ?? null);
  const host = opts.host ?? '127.0.0.1';
  const port = await server.listen(opts.port ?? 0, host);
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    config,
    calls: () => server.calls(),
    reset: () => server.reset(),
    metricsText: () => server.metrics.registry.metrics(),
    close: () => server.close(),
  };
}
