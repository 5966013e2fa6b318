// Instrument `replay`: observations priced from the capture's served usage, no arm called.
import { dispatchKeys, simhash64, type Envelope, type Observation } from '@shadowplane/contracts';
import { rateCardCost, requestPromptText } from '@shadowplane/providers';
import type { ArmPlan } from './plan.js';
import { ACK, type ItemClaim, type Verdict } from './records.js';
import type { CampaignState } from './state.js';
import { takeSlot } from './admission.js';
import { exclude, finishClaim, recordReserved } from './claim.js';

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Instrument `replay` (docs/bench.md "Instruments"): no arm is called, nothing is reserved or
 * spent. The capture's served production usage is priced on each arm's rate card — the
 * incumbent's and every candidate's — so the candidate's token counts are assumed equal to the
 * incumbent's (no candidate tokenizer is run). An item whose capture has no 2xx served summary
 * is excluded as `replay_no_served_response`, one without both token counts as
 * `replay_no_served_usage`. The observations are a function of the capture and the pinned spec
 * alone, so a redelivery publishes the same ones (and JetStream de-duplicates them).
 */
export async function replayItem(
  s: CampaignState,
  env: Envelope,
  key: string,
  claim: { value: ItemClaim; revision: number },
  plans: ArmPlan[],
  body: unknown,
): Promise<Verdict> {
  const served = env.served;
  if (!served || served.status < 200 || served.status >= 300 || served.abandoned)
    return exclude(s, env, key, claim.revision, 'replay_no_served_response');
  if (served.usage.input_tokens === null || served.usage.output_tokens === null)
    return exclude(s, env, key, claim.revision, 'replay_no_served_usage');
  if (claim.value.state === 'claimed') {
    if (!(await takeSlot(s, env))) return exclude(s, env, key, claim.revision, 'over_max_items');
    const recorded = await recordReserved(s, key, claim);
    if (!('claim' in recorded)) return recorded;
  }
  const simhash = simhash64(requestPromptText(env.api, body));
  const startMs = Date.parse(env.captured_at);
  for (const p of plans) {
    const inc = p.slot.role === 'incumbent';
    // the served usage as the candidate's too, without the incumbent provider's raw block
    const usage = inc ? served.usage : { ...served.usage, raw: null };
    const obs: Observation = {
      schema: 'shadow.observation/v1',
      campaign_id: s.id,
      item_hash: env.item_hash,
      call_type: env.call_type,
      arm_id: p.slot.armId,
      role: p.slot.role,
      instrument: 'replay',
      envelope_id: env.envelope_id,
      provider: p.slot.provider.id,
      model: p.slot.arm.model,
      started_at: iso(startMs),
      ended_at: iso(startMs + (inc ? served.latency_ms : 0)),
      start_skew_ms: 0,
      attempts: 1,
      status: 'ok',
      http_status: inc ? served.status : null,
      error_class: null,
      latency_ms: inc ? served.latency_ms : null,
      ttft_ms: inc ? served.ttft_ms : null,
      usage,
      cost: rateCardCost(usage, p.slot.arm.rate_card!),
      charged_micro_usd: 0,
      upstream: inc ? served.upstream : null,
      model_echo: inc ? served.model : null,
      pin_honored: null,
      abandoned: false,
      finish_reason: inc ? served.finish_reason : null,
      artifact_ref: null,
      output_digest: null,
      tool_calls: [],
      prompt_simhash: simhash,
      traffic_class: env.traffic_class,
      expectations: env.expectations,
    };
    await s.ctx.bus.js.publish(s.ctx.bus.names.obsSubject(s.id), JSON.stringify(obs), {
      msgID: dispatchKeys.arm(s.id, env.item_hash, p.slot.armId),
    });
  }
  s.ctx.metrics.items.inc({ outcome: 'replayed' });
  await finishClaim(s, key);
  return ACK;
}
