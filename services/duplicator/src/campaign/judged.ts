// Instrument `judged_dataset_run`: the incumbent's observation is the output production served
// (retained by the sidecar), the candidates are called as usual.
import { getArtifact } from '@shadowplane/artifacts';
import {
  dispatchKeys,
  isShadowplaneError,
  sha256Hex,
  simhash64,
  SERVED_ARTIFACT_BINDING,
  SERVED_ARTIFACT_PURPOSE,
  type Envelope,
  type Observation,
} from '@shadowplane/contracts';
import { parseResponse, rateCardCost, requestPromptText } from '@shadowplane/providers';
import type { Versioned } from '@shadowplane/bus';
import type { ArmPlan } from './plan.js';
import type { ItemClaim, Verdict } from './records.js';
import type { CampaignState } from './state.js';
import { admit } from './admission.js';
import { dispatch } from './dispatch.js';
import { event, exclude, type Reserved } from './claim.js';

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Why an item of a judged_dataset_run has no served output to stand for the incumbent
 * (item-event reasons, docs/bench.md "judged_dataset_run"):
 * - `served_no_response`: the capture has no 2xx served summary (the upstream failed, or the
 *   response was larger than the sidecar's tee);
 * - `served_no_usage`: the served summary lacks the input or output token count (or the call was
 *   abandoned), so the served call cannot be priced;
 * - `served_not_retained`: the request did not consent to retention, or the sidecar did not
 *   retain its output (retention off, or it failed: `served.artifact_ref` absent or null);
 * - `served_artifact_missing`: the retained output is gone (expired past its TTL, or deleted);
 * - `served_artifact_invalid`: it cannot be read as this item's served output (unknown key,
 *   failed authentication, or bound to another item or purpose).
 */
export type ServedExclusion =
  | 'served_no_response'
  | 'served_no_usage'
  | 'served_not_retained'
  | 'served_artifact_missing'
  | 'served_artifact_invalid';

/**
 * The incumbent's observation of item `env` built from what production served: output and tool
 * calls from the retained artifact (decrypted with the duplicator's keyring; a JSON body parsed
 * with the provider dialect of the capture's api), usage, latency, TTFT, status, upstream and
 * model echo from `env.served`, cost the served usage on the incumbent's rate card, nothing
 * charged. It references the served artifact itself (the verdict service reads its output from
 * it). A function of the capture and the pinned spec alone, so every delivery builds the same one.
 */
export async function servedObservation(
  s: CampaignState,
  env: Envelope,
  simhash: string,
): Promise<{ obs: Observation } | { reason: ServedExclusion }> {
  const served = env.served;
  if (!served || served.status < 200 || served.status >= 300) return { reason: 'served_no_response' };
  if (served.abandoned || served.usage.input_tokens === null || served.usage.output_tokens === null)
    return { reason: 'served_no_usage' };
  const ref = served.artifact_ref ?? null;
  if (!env.retention.consent || ref === null) return { reason: 'served_not_retained' };
  let art: Awaited<ReturnType<typeof getArtifact>>;
  try {
    art = await getArtifact(s.ctx.artifacts, s.ctx.keyring, ref);
  } catch (e) {
    if (isShadowplaneError(e) && e.code === 'not_found') return { reason: 'served_artifact_missing' };
    if (isShadowplaneError(e)) return { reason: 'served_artifact_invalid' };
    throw e; // the store itself failed: retried on redelivery
  }
  const m = art.meta;
  if (
    m.campaign_id !== SERVED_ARTIFACT_BINDING.campaign_id ||
    m.arm_id !== SERVED_ARTIFACT_BINDING.arm_id ||
    m.item_hash !== env.item_hash ||
    m.purpose !== SERVED_ARTIFACT_PURPOSE
  )
    return { reason: 'served_artifact_invalid' };
  let outputText = art.output_text;
  let toolCalls = art.tool_calls;
  let finishReason = served.finish_reason;
  if (art.response_raw !== undefined) {
    const p = parseResponse(env.api, { status: served.status, headers: [] }, art.response_raw);
    if (!p.complete || p.errorClass !== null) return { reason: 'served_artifact_invalid' };
    outputText = p.outputText;
    toolCalls = p.toolCalls;
    finishReason = p.finishReason ?? finishReason;
  }
  const inc = s.campaign.spec.incumbent;
  const card = inc.rate_card;
  const endMs = Date.parse(env.captured_at);
  const obs: Observation = {
    schema: 'shadow.observation/v1',
    campaign_id: s.id,
    item_hash: env.item_hash,
    call_type: env.call_type,
    arm_id: inc.id,
    role: 'incumbent',
    instrument: 'judged_dataset_run',
    envelope_id: env.envelope_id,
    provider: inc.provider,
    model: inc.model,
    started_at: iso(endMs - served.latency_ms),
    ended_at: iso(endMs),
    start_skew_ms: 0,
    attempts: 1,
    status: 'ok',
    http_status: served.status,
    error_class: null,
    latency_ms: served.latency_ms,
    ttft_ms: served.ttft_ms,
    usage: served.usage,
    cost: card ? rateCardCost(served.usage, card) : { usd: null, micro_usd: null, basis: null, reason: 'no_rate_card' },
    charged_micro_usd: 0,
    upstream: served.upstream,
    model_echo: served.model,
    pin_honored: null,
    abandoned: false,
    finish_reason: finishReason,
    artifact_ref: ref,
    output_digest: sha256Hex(outputText),
    tool_calls: toolCalls,
    prompt_simhash: simhash,
    traffic_class: env.traffic_class,
    expectations: env.expectations,
  };
  return { obs };
}

/**
 * Instrument `judged_dataset_run` (docs/bench.md "Instruments"): the incumbent is never called.
 * Its observation is built from the served output ({@link servedObservation}); an item without
 * one is excluded with its {@link ServedExclusion} reason before anything is reserved. Otherwise
 * the candidates (`plans`: the campaign has no incumbent slot) are admitted and dispatched as in
 * a shadow_dual_run, under the budget, and the served observation is published first (same
 * JetStream message id on every delivery). An item already admitted when its served output
 * became unreadable (a redelivery past its TTL) is still dispatched, so its reservations
 * settle, and then excluded with the reason.
 */
export async function judgedItem(
  s: CampaignState,
  env: Envelope,
  key: string,
  claim: Versioned<ItemClaim>,
  plans: ArmPlan[],
  body: unknown,
  created: boolean,
): Promise<Verdict> {
  const served = await servedObservation(s, env, simhash64(requestPromptText(env.api, body)));
  if ('reason' in served && claim.value.state === 'claimed') {
    s.ctx.metrics.servedExcluded.inc({ reason: served.reason });
    return exclude(s, env, key, claim.revision, served.reason);
  }
  let reserved: Reserved;
  if (claim.value.state === 'claimed') {
    const r = await admit(s, env, key, claim, plans, created);
    if (!('claim' in r)) return r;
    reserved = r;
  } else reserved = { claim, fresh: false };
  if ('obs' in served)
    await s.ctx.bus.js.publish(s.ctx.bus.names.obsSubject(s.id), JSON.stringify(served.obs), {
      msgID: dispatchKeys.arm(s.id, env.item_hash, served.obs.arm_id),
    });
  const v = await dispatch(s, env, key, body, plans, reserved);
  if ('reason' in served) {
    s.ctx.metrics.servedExcluded.inc({ reason: served.reason });
    await event(s, env, 'excluded', served.reason, `x.${s.id}.${env.item_hash}`);
  }
  return v;
}
