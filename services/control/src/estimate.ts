import { DeliverPolicy } from '@nats-io/jetstream';
import type { Bus } from '@shadowplane/bus';
import { Envelope, type Arm, type CampaignSpec } from '@shadowplane/contracts';
import { estimateCost, requestPromptText } from '@shadowplane/providers';

/** Prompt size assumed when no recent capture exists for a call type: 4,000 characters (~1,000 tokens). */
export const ASSUMED_PROMPT_CHARS = 4000;
/** How far back a dry run looks in CAPTURE for recent envelopes, ms (24 h). */
export const CAPTURE_LOOKBACK_MS = 86_400_000;
/** Wall-clock budget for reading the CAPTURE tail of one call type, ms. */
const TAIL_READ_BUDGET_MS = 2_000;

/** Largest prompt among recent envelopes of one call type, or null when none were found. */
export interface CaptureSample {
  envelopes: number;
  promptCharsMax: number | null;
}

/**
 * Reads up to the `limit` most recent envelopes on `shadow.capture.<suite>.<call_type>` within
 * the last {@link CAPTURE_LOOKBACK_MS} and returns the largest prompt size in characters (the
 * prompt text per `requestPromptText`; for bodies kept in the object store, their byte size — an
 * upper bound). Uses an ordered (ephemeral, no-ack) consumer: reading leaves no state behind.
 * Bounded by {@link TAIL_READ_BUDGET_MS}; unparsable messages are skipped.
 */
export async function sampleCaptureTail(
  bus: Bus,
  suite: string,
  callType: string,
  limit: number,
): Promise<CaptureSample> {
  if (limit <= 0) return { envelopes: 0, promptCharsMax: null };
  const subject = bus.names.captureSubject(suite, callType);
  const info = await bus.jsm.streams.info(bus.names.streams.capture, { subjects_filter: subject });
  const count = info.state.subjects?.[subject] ?? 0;
  if (count === 0) return { envelopes: 0, promptCharsMax: null };
  const consumer = await bus.js.consumers.get(bus.names.streams.capture, {
    filter_subjects: subject, // a string → filter_subject: nats-server 2.9 has no multi-filter consumers
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: new Date(Date.now() - CAPTURE_LOOKBACK_MS).toISOString(),
  });
  const ring: number[] = [];
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
          const chars = e.request.body_ref ? e.request.bytes : requestPromptText(e.api, e.request.body).length;
          ring.push(chars);
          if (ring.length > limit) ring.shift();
        }
        if (pending === 0) break;
      }
      if (got === 0 || pending === 0) break;
    }
  } finally {
    await consumer.delete().catch(() => undefined);
  }
  return { envelopes: ring.length, promptCharsMax: ring.length ? Math.max(...ring) : null };
}

function safeJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(data));
  } catch {
    return undefined;
  }
}

/**
 * Worst-case cost of one call of `arm` on a prompt of `promptChars` characters: ⌈chars/4⌉ input
 * tokens at the input price plus `max_output_tokens` at the output price (basis `estimate`,
 * `estimateCost` from libs/providers). One attempt; retries could add up to `limits.max_retries`
 * more. Returns null without a rate card (nothing to price with).
 */
export function armWorstCaseUsd(arm: Arm, promptChars: number): number | null {
  return armWorstCase(arm, promptChars).usd;
}

/** {@link armWorstCaseUsd} with the reason a null cost has (`no_rate_card`, `out_of_range`). */
function armWorstCase(arm: Arm, promptChars: number): { usd: number | null; reason?: string } {
  if (!arm.rate_card) return { usd: null, reason: 'no_rate_card' };
  const c = estimateCost(promptChars, arm.max_output_tokens * 4, arm.rate_card);
  return c.usd === null ? { usd: null, reason: c.reason ?? 'out_of_range' } : { usd: c.usd };
}

/** Per-item worst case of a spec for one prompt size: every arm once, plus the A-A share of a second incumbent call. */
export function itemWorstCase(
  spec: CampaignSpec,
  promptChars: number,
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
    const { usd, reason } = armWorstCase(arm, promptChars);
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
