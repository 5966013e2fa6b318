// Which arms an item is sent to and what each request is: sampling, A-A selection, the
// per-arm request translation and its worst-case cost bound.
import { createHash } from 'node:crypto';
import type { Arm, ArmRole, Campaign, Envelope, ProviderEntry } from '@shadowplane/contracts';
import type { ArmLimiter } from '@shadowplane/ratelimit';
import {
  attemptUpperBoundMicroUsd,
  prepareArmRequest,
  promptTokensUpperBound,
  requestMaxOutputTokens,
} from '@shadowplane/providers';
import { tpmWeight } from '../invoke.js';
import type { CallMeta } from '../observe.js';

/** One arm as dispatched for a campaign: the spec arm plus its role and resolved provider. */
export interface ArmSlot {
  armId: string;
  role: ArmRole;
  arm: Arm;
  provider: ProviderEntry;
  apiKey: string | null;
  limiter: ArmLimiter;
}

/** One arm's request for one item. */
export interface ArmPlan {
  slot: ArmSlot;
  api: Arm['api'] & string;
  body: Record<string, unknown>;
  stream: boolean;
  boundMicroUsd: number;
  weight: number;
}

/** The span/metric description of attempt `attempt` of plan `p`. */
export const callMeta = (p: ArmPlan, attempt: number): CallMeta => ({
  providerId: p.slot.provider.id,
  baseUrl: p.slot.provider.base_url,
  api: p.api,
  model: p.slot.arm.model,
  armId: p.slot.armId,
  armRole: p.slot.role,
  stream: p.stream,
  maxTokens: requestMaxOutputTokens(p.api, p.body) ?? p.slot.arm.max_output_tokens,
  rateCard: p.slot.arm.rate_card,
  attempt,
});

const unit = (s: string) => parseInt(createHash('sha256').update(s).digest('hex').slice(0, 8), 16) / 2 ** 32;
/** Deterministic sampling: every worker agrees whether an item is in the sample. */
export const isSampled = (campaignId: string, item: string, rate: number) =>
  rate >= 1 || unit(`sample:${campaignId}:${item}`) < rate;
/**
 * Deterministic A-A selection (independent of sampling), keyed by the pinned spec's hash (the
 * runner passes `spec_hash`): every worker agrees, and two runs of the same spec on the same items
 * pick the same A-A items, so their reports (A-A noise floor, power plans) are reproducible.
 */
export const isAaItem = (specKey: string, item: string, share: number) =>
  share > 0 && (share >= 1 || unit(`aa:${specKey}:${item}`) < share);

/**
 * The arm requests for one item: every slot of the campaign (the A-A slot only on A-A items),
 * each translated to its arm's API with its worst-case cost bound (µUSD) and TPM weight (tokens).
 * Returns `{ reason }` when any arm's request cannot be built (the item is then excluded).
 */
export function planArms(
  campaign: Campaign,
  slots: readonly ArmSlot[],
  env: Envelope,
  body: unknown,
): ArmPlan[] | { reason: string } {
  const aa = isAaItem(campaign.spec_hash, env.item_hash, campaign.spec.aa_share);
  const out: ArmPlan[] = [];
  for (const slot of slots) {
    if (slot.role === 'incumbent_aa' && !aa) continue;
    const api = slot.arm.api ?? slot.provider.api;
    const prep = prepareArmRequest(env.api, body, {
      api,
      model: slot.arm.model,
      maxOutputTokens: slot.arm.max_output_tokens,
      pinUpstreams: slot.arm.pin?.upstreams,
    });
    if (!prep.ok) return { reason: prep.reason };
    const maxOut = requestMaxOutputTokens(api, prep.body) ?? slot.arm.max_output_tokens;
    out.push({
      slot,
      api,
      body: prep.body,
      stream: prep.stream,
      boundMicroUsd: attemptUpperBoundMicroUsd(promptTokensUpperBound(prep.body), maxOut, slot.arm.rate_card!),
      weight: tpmWeight(prep.body, maxOut),
    });
  }
  return out;
}
