import { DeliverPolicy } from '@nats-io/jetstream';
import type { Bus } from '@shadowplane/bus';
import { Envelope, type Api, type Arm, type CampaignSpec, type ProviderEntry } from '@shadowplane/contracts';
import { attemptUpperBoundMicroUsd, prepareArmRequest, promptTokensUpperBound } from '@shadowplane/providers';

/**
 * Request size assumed when no recent capture exists for a call type: a 4,000-byte JSON body,
 * priced as 4,000 input tokens — the same bytes-as-tokens bound the duplicator reserves with.
 */
export const ASSUMED_PROMPT_BYTES = 4000;
/** How far back a dry run looks in CAPTURE for recent envelopes, ms (24 h). */
export const CAPTURE_LOOKBACK_MS = 86_400_000;
/** Wall-clock budget for reading the CAPTURE tail of one call type, ms. */
const TAIL_READ_BUDGET_MS = 2_000;

/**
 * The largest request among recent envelopes of one call type: its API, its body when the
 * envelope carries it inline (null when the body lives in the object store), and its size in
 * bytes as the duplicator would measure it (`promptTokensUpperBound` of the inline body, else the
 * captured byte count).
 */
export interface PromptSample {
  api: Api;
  body: unknown;
  bytes: number;
}

/** Recent envelopes of one call type: how many were read and the largest request, or null when none were found. */
export interface CaptureSample {
  envelopes: number;
  largest: PromptSample | null;
}

/**
 * Reads up to the `limit` most recent envelopes on `shadow.capture.<suite>.<call_type>` within
 * the last {@link CAPTURE_LOOKBACK_MS} and returns the largest request (by its byte bound). Uses
 * an ordered (ephemeral, no-ack) consumer: reading leaves no state behind. Bounded by
 * {@link TAIL_READ_BUDGET_MS}; unparsable messages are skipped.
 */
export async function sampleCaptureTail(
  bus: Bus,
  suite: string,
  callType: string,
  limit: number,
): Promise<CaptureSample> {
  if (limit <= 0) return { envelopes: 0, largest: null };
  const subject = bus.names.captureSubject(suite, callType);
  const info = await bus.jsm.streams.info(bus.names.streams.capture, { subjects_filter: subject });
  const count = info.state.subjects?.[subject] ?? 0;
  if (count === 0) return { envelopes: 0, largest: null };
  const consumer = await bus.js.consumers.get(bus.names.streams.capture, {
    filter_subjects: subject, // a string → filter_subject: nats-server 2.9 has no multi-filter consumers
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: new Date(Date.now() - CAPTURE_LOOKBACK_MS).toISOString(),
  });
  const ring: PromptSample[] = [];
  const deadline = Date.now() + TAIL_READ_BUDGET_MS;
  try {
    while (Date.now() < deadline) {
      const batch = await consumer.fetch({ max_messages: 500, expires: 1000 });
      let got = 0;
      let pending = 1;
      for await (const m of batch) {
        got++;
        pending = m.info.pending;
        const env = Envelope.safeParse(safeJson(m.data));
        if (env.success) {
          const e = env.data;
          ring.push(
            e.request.body_ref
              ? { api: e.api, body: null, bytes: e.request.bytes }
              : { api: e.api, body: e.request.body, bytes: promptTokensUpperBound(e.request.body) },
          );
          if (ring.length > limit) ring.shift();
        }
        if (pending === 0) break;
      }
      if (got === 0 || pending === 0) break;
    }
  } finally {
    await consumer.delete().catch(() => undefined);
  }
  const largest = ring.reduce<PromptSample | null>((m, x) => (m === null || x.bytes > m.bytes ? x : m), null);
  return { envelopes: ring.length, largest };
}

function safeJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(data));
  } catch {
    return undefined;
  }
}

/**
 * Worst-case cost of one call of `arm` on `sample`, in USD, by the duplicator's own reservation
 * formula (libs/providers `attemptUpperBoundMicroUsd`): the request as translated for the arm
 * (`prepareArmRequest`) measured in bytes, each byte priced as an input token at the card's
 * highest input-side price, plus `max_output_tokens` at the output price. A body kept in the
 * object store is measured by its captured size. One attempt; retries could add up to
 * `limits.max_retries` more. Returns null without a rate card (nothing to price with).
 */
export function armWorstCaseUsd(arm: Arm, sample: PromptSample, providerApi?: Api): number | null {
  return armWorstCase(arm, sample, providerApi).usd;
}

/** {@link armWorstCaseUsd} with the reason a null cost has (`no_rate_card`). */
function armWorstCase(arm: Arm, sample: PromptSample, providerApi?: Api): { usd: number | null; reason?: string } {
  if (!arm.rate_card) return { usd: null, reason: 'no_rate_card' };
  let bytes = sample.bytes;
  if (sample.body !== null) {
    const prep = prepareArmRequest(sample.api, sample.body, {
      api: arm.api ?? providerApi ?? sample.api, // the duplicator's rule: the arm's API, else its provider's
      model: arm.model,
      maxOutputTokens: arm.max_output_tokens,
    });
    // an item the arm cannot take is not sent (no cost); the untranslated size still bounds the plan
    if (prep.ok) bytes = promptTokensUpperBound(prep.body);
  }
  return { usd: attemptUpperBoundMicroUsd(bytes, arm.max_output_tokens, arm.rate_card) / 1e6 };
}

/** Per-item worst case of a spec for one prompt size: every arm once, plus the A-A share of a second incumbent call. */
export function itemWorstCase(
  spec: CampaignSpec,
  sample: PromptSample,
  providers: readonly ProviderEntry[] = [],
): {
  arms: {
    arm_id: string;
    role: 'incumbent' | 'candidate' | 'incumbent_aa';
    worst_case_usd: number | null;
    reason?: string;
  }[];
  total: number | null;
} {
  const arms: {
    arm_id: string;
    role: 'incumbent' | 'candidate' | 'incumbent_aa';
    worst_case_usd: number | null;
    reason?: string;
  }[] = [];
  const push = (arm: Arm, role: 'incumbent' | 'candidate' | 'incumbent_aa', factor: number) => {
    const { usd, reason } = armWorstCase(arm, sample, providers.find((p) => p.id === arm.provider)?.api);
    arms.push(
      usd === null
        ? { arm_id: arm.id, role, worst_case_usd: null, reason: reason ?? 'no_rate_card' }
        : { arm_id: arm.id, role, worst_case_usd: usd * factor },
    );
  };
  push(spec.incumbent, 'incumbent', 1);
  for (const c of spec.candidates) push(c, 'candidate', 1);
  if (spec.aa_share > 0) push(spec.incumbent, 'incumbent_aa', spec.aa_share);
  const total = arms.some((a) => a.worst_case_usd === null)
    ? null
    : arms.reduce((s, a) => s + (a.worst_case_usd ?? 0), 0);
  return { arms, total };
}
