import { z } from 'zod';
import { ShadowplaneError } from '@shadowplane/contracts';
import { SimJudge } from './judge.js';

/** The faults the sim can inject, by rate (config) or by the `x-sim-fault` request header. */
export const FAULT_KINDS = ['rate_limit', 'server_error', 'overloaded', 'hang', 'stall', 'cut', 'malformed'] as const;
/** One injectable fault. See README.md "Faults" for the wire shape of each per API. */
export type FaultKind = (typeof FAULT_KINDS)[number];

const NonNeg = z.number().nonnegative();
const Prob = z.number().min(0).max(1);

/**
 * Prices in USD per million tokens. `cached_input` prices cache reads; `cache_write` prices
 * Anthropic cache creation (defaults to 1.25 × input, Anthropic's 5-minute cache-write rate).
 */
export const SimPrices = z
  .object({
    input: NonNeg,
    cached_input: NonNeg,
    output: NonNeg,
    cache_write: NonNeg.optional(),
  })
  .strict();

/** A lognormal distribution given by its median and log-space sigma (sigma 0 = constant). */
const LogNormal = z.object({ median: NonNeg, sigma: NonNeg.default(0) }).strict();

/** Per-model latency model. All times ms; `output_tokens_per_s` 0 means instant output. */
export const SimLatency = z
  .object({
    /** time to first token (ms), lognormal */
    ttft_ms: LogNormal.default({ median: 0, sigma: 0 }),
    /** generation speed after the first token; 0 = no delay */
    output_tokens_per_s: NonNeg.default(0),
    /** uniform ± fraction applied to the generation time (0.2 = ±20%) */
    jitter: Prob.default(0),
  })
  .strict();

/** Length of filler answers (prompts the dataset does not recognise), tokens, lognormal, clamped. */
export const SimOutputLength = z
  .object({
    median: z.number().int().positive().default(120),
    sigma: NonNeg.default(0.5),
    min: z.number().int().positive().default(4),
    max: z.number().int().positive().default(1024),
  })
  .strict()
  .refine((o) => o.min <= o.max, { message: 'min must be ≤ max', path: ['min'] });

/** Fault probabilities per request (seeded); their sum must be ≤ 1. */
export const SimFaultRates = z
  .object({
    rate_limit: Prob.default(0),
    server_error: Prob.default(0),
    overloaded: Prob.default(0),
    hang: Prob.default(0),
    stall: Prob.default(0),
    cut: Prob.default(0),
    malformed: Prob.default(0),
  })
  .strict()
  .refine((r) => Object.values(r).reduce((a, b) => a + b, 0) <= 1 + 1e-9, { message: 'fault rates must sum to ≤ 1' });

/**
 * One simulated model. Every field has a default except `accuracy` and `prices`.
 * - `accuracy`: share of recognised GSM8K questions answered correctly (0–1)
 * - `usage_mode`: `always` (every response and stream reports usage), `openai_include_usage_only`
 *   (the real behaviour: OpenAI chat streams report usage only with
 *   `stream_options.include_usage`; non-streaming, Responses, Anthropic and OpenRouter always
 *   do), `never` (no usage block anywhere — exercises null usage)
 * - `openrouter`: `cost` adds `usage.cost` + `cost_details`; `providers` are the upstream names
 *   served (first = default); `honor_pin` false ignores `provider.order`
 * - `prompt_cache`: a repeated prompt prefix of ≥ `min_tokens` within `ttl_ms` is reported as
 *   cached in blocks of `block_tokens` (OpenAI's 1024 + 128·k rule)
 * - `rate_limits`: requests and tokens (input + output) per window (`rate_limit_window_ms`)
 * - `answer_noise`: per-call noise on recognised GSM8K questions, temperature-like (0–1, default 0
 *   = deterministic): with this probability a call's correctness is drawn afresh (correct with
 *   probability `accuracy`) instead of being the model's fixed answer to the item, so the same item
 *   can be answered differently on re-invocation (an A-A pair can disagree) while the expected
 *   accuracy stays `accuracy`. Seeded per (model, request, occurrence): a replay of the same calls
 *   in the same order gives the same answers.
 */
export const SimModel = z
  .object({
    accuracy: Prob,
    answer_noise: Prob.default(0),
    prices: SimPrices,
    aliases: z.array(z.string().min(1)).default([]),
    context_window: z.number().int().positive().default(128_000),
    max_output_tokens: z.number().int().positive().default(16_384),
    latency: SimLatency.default(SimLatency.parse({})),
    output_length: SimOutputLength.default(SimOutputLength.parse({})),
    usage_mode: z.enum(['always', 'openai_include_usage_only', 'never']).default('openai_include_usage_only'),
    openrouter: z
      .object({
        cost: z.boolean().default(true),
        providers: z.array(z.string().min(1)).min(1).default(['SimCloud']),
        honor_pin: z.boolean().default(true),
      })
      .strict()
      .default({ cost: true, providers: ['SimCloud'], honor_pin: true }),
    prompt_cache: z
      .object({
        enabled: z.boolean().default(true),
        min_tokens: z.number().int().positive().default(1024),
        block_tokens: z.number().int().positive().default(128),
        ttl_ms: z.number().int().positive().default(300_000),
      })
      .strict()
      .default({ enabled: true, min_tokens: 1024, block_tokens: 128, ttl_ms: 300_000 }),
    rate_limits: z
      .object({
        rpm: z.number().int().positive().default(30_000),
        tpm: z.number().int().positive().default(150_000_000),
      })
      .strict()
      .default({ rpm: 30_000, tpm: 150_000_000 }),
    faults: SimFaultRates.default(SimFaultRates.parse({})),
    /** answers LLM-judge prompts with known behaviour (judge.ts); absent = an ordinary model */
    judge: SimJudge.optional(),
  })
  .strict();
/** A resolved model config. */
export type SimModel = z.infer<typeof SimModel>;

/**
 * The whole sim config (YAML file or programmatic). Top-level knobs:
 * - `latency_scale`: multiplies every configured latency (0 = none; handy for tests/benchmarks)
 * - `rate_limit_window_ms`: the sliding window for RPM/TPM (60 000 = real minute; shorten in tests)
 * - `hang_ms` / `stall_ms`: how long a hang / mid-stream stall lasts when no
 *   `x-sim-fault-after-ms` is given
 * - `difficulty_weight`: 0–1, how much a shared per-question difficulty (vs per-model noise)
 *   decides which questions a model gets wrong; correlates the tiers' errors like real models
 * - `require_auth`: 401 without `Authorization: Bearer …` / `x-api-key`
 * - `epoch_s`: base of the `created` timestamps in bodies (no wall clock in bodies)
 * - `call_log_max`: calls kept for `GET /sim/calls` (oldest dropped)
 */
export const SimConfig = z
  .object({
    models: z
      .record(z.string().min(1), SimModel)
      .refine((m) => Object.keys(m).length > 0, { message: 'at least one model is required' }),
    seed: z.number().int().nonnegative().default(0),
    latency_scale: NonNeg.default(1),
    rate_limit_window_ms: z.number().int().positive().default(60_000),
    hang_ms: z.number().int().positive().default(120_000),
    stall_ms: z.number().int().positive().default(120_000),
    difficulty_weight: Prob.default(0.5),
    require_auth: z.boolean().default(false),
    epoch_s: z.number().int().nonnegative().default(1_767_225_600),
    call_log_max: z.number().int().positive().default(100_000),
    max_body_bytes: z
      .number()
      .int()
      .positive()
      .default(32 * 1024 * 1024),
  })
  .strict()
  .superRefine((c, ctx) => {
    const seen = new Map<string, string>();
    for (const [name, m] of Object.entries(c.models)) {
      for (const n of [name, ...m.aliases]) {
        const prev = seen.get(n);
        if (prev !== undefined && prev !== name)
          ctx.addIssue({
            code: 'custom',
            message: `model name ${n} is used by ${prev} too`,
            path: ['models', name, 'aliases'],
          });
        seen.set(n, name);
      }
    }
  });
/** A resolved, validated sim config (all defaults applied). */
export type SimConfig = z.infer<typeof SimConfig>;
/** Sim config as written by a user, before defaults. */
export type SimConfigInput = z.input<typeof SimConfig>;

/**
 * The documented default: three tiers served on every API shape (README.md "Default tiers").
 * `sim-large` is the incumbent (GSM8K accuracy 0.92), `sim-medium` the good cheap candidate
 * (0.90), `sim-small` the bad cheap one (0.55). Prices USD per million tokens. Latencies are
 * small but ordered (large slowest) so tests stay fast; scale with `latency_scale`.
 */
export const DEFAULT_SIM_CONFIG: SimConfigInput = Object.freeze({
  models: {
    'sim-large': {
      accuracy: 0.92,
      prices: { input: 2.5, cached_input: 1.25, output: 10.0 },
      context_window: 200_000,
      max_output_tokens: 32_768,
      latency: { ttft_ms: { median: 30, sigma: 0.3 }, output_tokens_per_s: 2000, jitter: 0.1 },
      output_length: { median: 160, sigma: 0.5, min: 8, max: 1024 },
      openrouter: { providers: ['SimCloud', 'SimEdge'] },
    },
    'sim-medium': {
      accuracy: 0.9,
      prices: { input: 0.4, cached_input: 0.1, output: 1.6 },
      context_window: 128_000,
      max_output_tokens: 16_384,
      latency: { ttft_ms: { median: 20, sigma: 0.3 }, output_tokens_per_s: 3000, jitter: 0.1 },
      output_length: { median: 140, sigma: 0.5, min: 8, max: 1024 },
      openrouter: { providers: ['SimCloud', 'SimEdge'] },
    },
    'sim-small': {
      accuracy: 0.55,
      prices: { input: 0.1, cached_input: 0.025, output: 0.4 },
      context_window: 32_000,
      max_output_tokens: 8_192,
      latency: { ttft_ms: { median: 10, sigma: 0.3 }, output_tokens_per_s: 4000, jitter: 0.1 },
      output_length: { median: 100, sigma: 0.6, min: 4, max: 1024 },
      openrouter: { providers: ['SimEdge'] },
    },
  },
}) as SimConfigInput;

/** Formats a zod issue path as a dotted key, e.g. `models.sim-large.prices.input`. */
export function issueKey(path: readonly PropertyKey[]): string {
  return path.map(String).join('.') || '(root)';
}

/**
 * Validates a sim config and applies defaults.
 * @param input config as written (YAML-parsed object or programmatic)
 * @returns the frozen resolved config
 * @throws ShadowplaneError `config_invalid` with `details.issues: [{key, message}]` naming every
 *   offending key (e.g. `models.sim-large.accuracy`)
 */
export function parseSimConfig(input: unknown): SimConfig {
  const r = SimConfig.safeParse(input);
  if (!r.success) {
    const issues = r.error.issues.map((i) => ({ key: issueKey(i.path), message: i.message }));
    throw new ShadowplaneError(
      'config_invalid',
      `invalid provider-sim config: ${issues.map((i) => `${i.key}: ${i.message}`).join('; ')}`,
      {
        details: { issues },
      },
    );
  }
  return deepFreeze(r.data);
}

function deepFreeze<T>(o: T): T {
  if (o !== null && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}
