/**
 * Synthetic OBS messages with a known ground truth, for tests of the fold, the verdict service and
 * the HTML report. Prompts and gold answers come from GSM8K (examples/data); an arm answers an item
 * correctly or not as the caller decides, and the output text is built from the gold answer
 * (`#### <answer>` when correct, `#### <answer + 1>` when wrong), so the numeric scorer's verdict
 * is known in advance.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  itemHash,
  type CampaignSpec,
  type CampaignSpecInput,
  type ItemEvent,
  type Observation,
  type ObsMessage,
} from '@shadowplane/contracts';
import { CampaignSpec as CampaignSpecSchema } from '@shadowplane/contracts';
import { createRng } from '@shadowplane/stats';

/** GSM8K rows from examples/data: question and the gold final answer. */
export const GSM8K: { question: string; answer: number }[] = readFileSync(
  new URL('../../../examples/data/gsm8k-test.jsonl', import.meta.url),
  'utf8',
)
  .trim()
  .split('\n')
  .map((l) => {
    const r = JSON.parse(l) as { question: string; answer: string };
    return { question: r.question, answer: Number(r.answer.split('####').pop()!.trim().replace(/,/g, '')) };
  });

/** Deterministic uuid-shaped id from a string. */
export function uuidFrom(s: string): string {
  const h = createHash('sha256').update(s).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** A campaign spec with an incumbent and the given candidate ids, rate cards, alpha 0.05, B = 2000. */
export function synthSpec(candidates: string[], over: Partial<CampaignSpecInput> = {}): CampaignSpec {
  return CampaignSpecSchema.parse({
    name: 'synthetic',
    suite: 'gsm8k',
    call_types: ['math'],
    incumbent: { id: 'inc', provider: 'sim', model: 'sim-large', rate_card: { input: 2.5, output: 10 } },
    candidates: candidates.map((id) => ({
      id,
      provider: 'sim',
      model: `sim-${id}`,
      rate_card: { input: 0.4, output: 1.6 },
    })),
    max_cost_usd: 10,
    ...over,
  });
}

/** How one arm answers one item. */
export interface ArmAnswer {
  correct?: boolean;
  status?: 'ok' | 'error';
  error_class?: Observation['error_class'];
  costUsd?: number | null;
  basis?: 'provider_reported' | 'rate_card' | 'estimate' | null;
  /** output text override (e.g. a refusal); null = no output available */
  output?: string | null;
  hard?: boolean;
  usageNull?: boolean;
}

/**
 * One observation of `arm` for GSM8K item `i` (call type `math`), with a numeric expectation on
 * the gold answer. Times are fixed per item so the result is deterministic.
 */
export function synthObservation(
  campaignId: string,
  i: number,
  armId: string,
  role: Observation['role'],
  a: ArmAnswer = {},
): Observation {
  const g = GSM8K[i % GSM8K.length]!;
  const body = { model: 'm', messages: [{ role: 'user', content: g.question }], n_: i };
  const h = itemHash('openai.chat', '/v1/chat/completions', body);
  const status = a.status ?? 'ok';
  const correct = a.correct ?? true;
  const output =
    a.output !== undefined
      ? a.output
      : status === 'ok'
        ? `Working it out step by step.\n#### ${correct ? g.answer : g.answer + 1}`
        : null;
  const cost =
    status === 'ok'
      ? a.costUsd === undefined
        ? (role === 'candidate' ? 0.0004 : 0.002) + (i % 7) * 1e-5
        : a.costUsd
      : null;
  const basis = cost === null ? null : a.basis === undefined ? 'rate_card' : a.basis;
  const t0 = Date.UTC(2026, 10, 1, 12, 0, 0) + i * 1000;
  const usage =
    a.usageNull || status !== 'ok'
      ? {
          input_tokens: null,
          cache_read_input_tokens: null,
          cache_creation_input_tokens: null,
          output_tokens: null,
          reasoning_output_tokens: null,
          raw: null,
        }
      : {
          input_tokens: 120 + (i % 5),
          cache_read_input_tokens: i % 3 === 0 ? 64 : 0,
          cache_creation_input_tokens: 0,
          output_tokens: 40 + (i % 11),
          reasoning_output_tokens: null,
          raw: { prompt_tokens: 120 },
        };
  return {
    schema: 'shadow.observation/v1',
    campaign_id: campaignId,
    item_hash: h,
    call_type: 'math',
    arm_id: armId,
    role,
    instrument: 'shadow_dual_run',
    envelope_id: uuidFrom(`env-${campaignId}-${i}`),
    provider: 'sim',
    model: `model-${armId}`,
    started_at: new Date(t0).toISOString(),
    ended_at: new Date(t0 + 500 + (i % 13) * 10).toISOString(),
    start_skew_ms: 0,
    attempts: 1,
    status,
    http_status: status === 'ok' ? 200 : 500,
    error_class: status === 'ok' ? null : (a.error_class ?? 'upstream_5xx'),
    latency_ms: status === 'ok' ? 500 + (i % 13) * 10 : null,
    ttft_ms: status === 'ok' ? 100 + (i % 9) * 5 : null,
    usage,
    cost: {
      usd: cost,
      micro_usd: cost === null ? null : Math.ceil(cost * 1e6),
      basis,
      ...(cost === null ? { reason: 'no_usage' } : {}),
    },
    charged_micro_usd: cost === null ? 3000 : Math.ceil(cost * 1e6),
    upstream: 'sim',
    model_echo: `model-${armId}`,
    pin_honored: null,
    abandoned: a.usageNull === true && status === 'ok',
    finish_reason: 'stop',
    artifact_ref: null,
    output_digest: null,
    output_text: output,
    tool_calls: [],
    prompt_simhash: createHash('sha256').update(`sim-${i}`).digest('hex').slice(0, 16),
    traffic_class: 'production',
    expectations: [{ kind: 'numeric', value: String(g.answer), ...(a.hard ? { hard: true } : {}) }],
  };
}

/** An item event for GSM8K item `i`. */
export function synthEvent(
  campaignId: string,
  i: number,
  kind: ItemEvent['kind'],
  reason: string | null,
  n = 0,
): ItemEvent {
  const o = synthObservation(campaignId, i, 'inc', 'incumbent');
  return {
    schema: 'shadow.item_event/v1',
    campaign_id: campaignId,
    item_hash: o.item_hash,
    call_type: 'math',
    envelope_id: uuidFrom(`ev-${campaignId}-${i}-${kind}-${n}`),
    kind,
    reason,
    at: o.started_at,
  };
}

/** Seeded uniform [0, 1) draws for deciding correctness in tests: libs/stats' xoshiro128**. */
export const seededRandom = createRng;

/**
 * A whole campaign: `n` items; the incumbent is correct with probability `incAcc`; each candidate
 * either copies the incumbent's correctness (`'same'`) or is correct with its own probability.
 */
export function synthCampaign(
  campaignId: string,
  n: number,
  incAcc: number,
  candidates: Record<string, number | 'same'>,
  seed = 7,
): ObsMessage[] {
  const rnd = seededRandom(seed);
  const out: ObsMessage[] = [];
  for (let i = 0; i < n; i++) {
    const incCorrect = rnd() < incAcc;
    out.push(synthObservation(campaignId, i, 'inc', 'incumbent', { correct: incCorrect }));
    for (const [id, acc] of Object.entries(candidates)) {
      out.push(
        synthObservation(campaignId, i, id, 'candidate', { correct: acc === 'same' ? incCorrect : rnd() < acc }),
      );
    }
  }
  return out;
}
