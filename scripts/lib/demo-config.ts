import type { CampaignSpecInput } from '@shadowplane/contracts';
import { DEFAULT_SIM_CONFIG } from '@shadowplane/provider-sim';

// What the demo runs: the sim's tiers and judge of known quality, their prices, and the campaign.

/**
 * The demo tiers' true GSM8K accuracy, chosen so each outcome a user will meet shows by the tiers'
 * true quality: sim-medium is truly better than the incumbent (a cheaper tier that earns BEAT),
 * sim-small far worse (fails); chat, judged on 60 prompts, stays honestly inconclusive.
 */
export const DEMO_ACCURACY = { 'sim-large': 0.92, 'sim-medium': 0.96, 'sim-small': 0.55 } as const;
/**
 * Temperature-like per-call noise of the candidate tiers: a call's correctness is redrawn with this
 * probability. Not on the incumbent: its production call, shadow call and A-A call carry the same
 * body, and the sim's noise draw follows their arrival order, which is racy, so noise there would
 * break "the same seed gives the same report id".
 */
export const DEMO_ANSWER_NOISE = 0.1;

/** The sim's models for the demo: the built-in tiers at {@link DEMO_ACCURACY}, candidates with noise, plus sim-judge. */
export function demoModels(): Record<string, unknown> {
  const models: Record<string, unknown> = { ...DEFAULT_SIM_CONFIG.models, 'sim-judge': SIM_JUDGE };
  for (const [name, accuracy] of Object.entries(DEMO_ACCURACY))
    models[name] = {
      ...DEFAULT_SIM_CONFIG.models[name],
      accuracy,
      answer_noise: name === 'sim-large' ? 0 : DEMO_ANSWER_NOISE,
    };
  return models;
}

/** sim-judge: a cheap judge model from its own provider family, with known accuracy and no bias. */
const JUDGE_PRICES = { input: 0.2, output: 0.8 } as const;
const SIM_JUDGE = {
  accuracy: 0.5,
  prices: { ...JUDGE_PRICES, cached_input: 0.05 },
  max_output_tokens: 256,
  latency: { ttft_ms: { median: 10, sigma: 0.3 }, output_tokens_per_s: 4000, jitter: 0.1 },
  judge: { accuracy: 0.9 },
} as const;

const ARM_PRICES = {
  'sim-large': { input: 2.5, cached_input: 1.25, output: 10 },
  'sim-medium': { input: 0.4, cached_input: 0.1, output: 1.6 },
  'sim-small': { input: 0.1, cached_input: 0.025, output: 0.4 },
} as const;

/** Knobs of the demo campaign (a subset of DemoOptions). */
export interface DemoSpecOptions {
  gsm8k: number;
  chat: number;
  maxCostUsd: number;
  seed: number;
  stopping?: 'fixed' | 'sequential' | undefined;
}

/**
 * The demo's campaign spec: sim-large against sim-medium and sim-small on GSM8K and chat, priced
 * by rate card, scored by the expectations and the sim judge, sequential stopping by default.
 */
export function demoSpec(o: DemoSpecOptions): CampaignSpecInput {
  return {
    name: 'demo: can a cheaper tier answer GSM8K and chat as well as sim-large?',
    suite: 'demo',
    call_types: ['gsm8k', 'chat'],
    incumbent: {
      id: 'large',
      provider: 'sim',
      model: 'sim-large',
      rate_card: ARM_PRICES['sim-large'],
      max_output_tokens: 512,
    },
    candidates: [
      {
        id: 'medium',
        provider: 'sim',
        model: 'sim-medium',
        rate_card: ARM_PRICES['sim-medium'],
        max_output_tokens: 512,
      },
      {
        id: 'small',
        provider: 'sim',
        model: 'sim-small',
        rate_card: ARM_PRICES['sim-small'],
        max_output_tokens: 512,
      },
    ],
    max_items: Math.max(o.gsm8k, o.chat),
    max_cost_usd: o.maxCostUsd,
    margins: { noninferiority_pp: 5, min_savings: 0.2 },
    // the judge grades every output; on GSM8K the expectations outweigh it (trust class B) and
    // calibrate it (kappa); chat has only the judge (trust class C)
    scorers: [
      { kind: 'expectations' },
      {
        kind: 'llm_judge',
        provider: 'simjudge',
        model: 'sim-judge',
        mode: 'pointwise',
        weight: 0.5,
        rate_card: JUDGE_PRICES,
        max_output_tokens: 64,
      },
    ],
    aa_share: 0.1,
    bootstrap: { resamples: 2000, seed: o.seed },
    traffic_classes: ['production'],
    // look after every 25 paired items; stop (decided) once every candidate is settled
    ...((o.stopping ?? 'sequential') === 'sequential'
      ? { stopping: 'sequential' as const, stopping_batch_items: 25 }
      : { stopping: 'fixed' as const }),
  };
}
