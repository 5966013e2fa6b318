// The observation record of one arm call, with its output stored as an encrypted artifact.
import { putArtifact } from '@shadowplane/artifacts';
import { NULL_USAGE, sha256Hex, type Campaign, type Envelope, type Observation } from '@shadowplane/contracts';
import { rateCardCost, resolveCost } from '@shadowplane/providers';
import type { AttemptOutcome } from '../invoke.js';
import type { RunnerContext } from './context.js';
import type { ArmPlan } from './plan.js';

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The `shadow.observation/v1` record of arm plan `p` on item `env` after its attempts (the last
 * one is the result): cost from the provider-reported usage and the arm's rate card, `charged`
 * µUSD as settled against the budget, `skewMs` the start skew against the item's first arm, and
 * the prompt's simhash. A 2xx output is stored as an encrypted artifact under the campaign's
 * retention (purpose, TTL) and referenced by `artifact_ref`. In a `judged_dataset_run` the
 * observation carries that instrument and its cost is the rate-card price of the reported usage.
 */
export async function buildObservation(
  ctx: RunnerContext,
  campaign: Campaign,
  env: Envelope,
  p: ArmPlan,
  attempts: AttemptOutcome[],
  charged: number,
  skewMs: number,
  simhash: string,
): Promise<Observation> {
  const last = attempts[attempts.length - 1]!;
  const parsed = last.parsed;
  const is2xx = last.status !== null && last.status >= 200 && last.status < 300;
  // judged_dataset_run pairs the candidate with the served call, priced on the incumbent's rate
  // card (the served summary carries no provider-reported cost): the candidate is priced on its
  // own card too, so the two costs share a basis
  const judged = campaign.spec.instrument === 'judged_dataset_run';
  // a failed call whose body reported usage was billed: its cost is recorded like a 2xx's
  const cost =
    parsed && (is2xx || parsed.usage.raw !== null)
      ? judged && p.slot.arm.rate_card
        ? rateCardCost(parsed.usage, p.slot.arm.rate_card)
        : resolveCost(parsed, p.slot.arm.rate_card)
      : { usd: null, micro_usd: null, basis: null, reason: last.errorClass ?? 'no_response' };
  let artifactRef: string | null = null;
  let digest: string | null = null;
  if (is2xx && parsed) {
    digest = sha256Hex(parsed.outputText);
    const spec = campaign.spec;
    artifactRef = await putArtifact(
      { bus: ctx.bus, bucket: ctx.bus.names.buckets.artifacts },
      ctx.keyring,
      {
        output_text: parsed.outputText,
        tool_calls: parsed.toolCalls,
        ...(last.rawText !== null ? { response_raw: last.rawText } : {}),
      },
      {
        campaign_id: campaign.id,
        arm_id: p.slot.armId,
        item_hash: env.item_hash,
        purpose: spec.retention.purpose,
        ttl_days: spec.retention.ttl_days,
      },
    );
  }
  const pin = p.slot.arm.pin;
  return {
    schema: 'shadow.observation/v1',
    campaign_id: campaign.id,
    item_hash: env.item_hash,
    call_type: env.call_type,
    arm_id: p.slot.armId,
    role: p.slot.role,
    instrument: judged ? 'judged_dataset_run' : 'shadow_dual_run',
    envelope_id: env.envelope_id,
    provider: p.slot.provider.id,
    model: p.slot.arm.model,
    started_at: iso(attempts[0]!.startedAtMs),
    ended_at: iso(last.endedAtMs),
    start_skew_ms: Math.max(0, Math.round(skewMs * 1000) / 1000),
    attempts: attempts.length,
    status: last.errorClass === null ? 'ok' : 'error',
    http_status: last.status,
    error_class: last.errorClass,
    latency_ms: Math.round(last.latencyMs * 1000) / 1000,
    ttft_ms: last.ttftMs === null ? null : Math.round(last.ttftMs * 1000) / 1000,
    usage: parsed ? parsed.usage : { ...NULL_USAGE },
    cost,
    charged_micro_usd: charged,
    upstream: parsed?.upstream ?? null,
    model_echo: parsed?.model ?? null,
    pin_honored: pin && parsed?.upstream ? pin.upstreams.includes(parsed.upstream) : null,
    abandoned: is2xx && parsed !== null && parsed.abandoned,
    finish_reason: parsed?.finishReason ?? null,
    artifact_ref: artifactRef,
    output_digest: digest,
    tool_calls: parsed?.toolCalls ?? [],
    prompt_simhash: simhash,
    traffic_class: env.traffic_class,
    expectations: env.expectations,
  };
}
