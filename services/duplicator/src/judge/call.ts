// One judge call under the campaign's budget ledger, the judge's rate limiter and the
// paid_dispatch gate, recorded in `shadow_dispatch` so it is made at most once.
import { reservationIds, type Envelope } from '@shadowplane/contracts';
import {
  attemptUpperBoundMicroUsd,
  prepareArmRequest,
  promptTokensUpperBound,
  requestHeaders,
  requestUrl,
} from '@shadowplane/providers';
import { attemptCharge, callOnce } from '../invoke.js';
import { observedJudgeCall } from '../observe.js';
import { judgeCallKey, type JudgeCallRecord } from '../judge-record.js';
import type { JudgeSetup } from './context.js';
import { DEFER, notCalled, replyResult, type CallResult } from './result.js';
import { resumeJudgeCall } from './resume.js';

/**
 * One judge call under the ledger, the limiter and the gate, recorded in `shadow_dispatch`
 * (judge-record.ts): a recorded call is reused or recovered, never made again. Its worst case
 * (prompt bytes as tokens + `max_output_tokens` at the judge's rate card, µUSD) is reserved under
 * `<item>.judge.<arm>.<order>` and settled at the actual cost (or the bound when unknown).
 * @returns the call's result, or DEFER when a live worker holds it in flight
 */
export async function judgeCall(
  d: JudgeSetup,
  env: Envelope,
  armId: string,
  order: 'single' | 'ab' | 'ba',
  messages: { role: string; content: string }[],
  pairwise: boolean,
  run: { newCalls: boolean; notRunReason: string },
): Promise<CallResult | typeof DEFER> {
  const spec = d.spec;
  const key = judgeCallKey(d.campaign.id, env.item_hash, armId, order);
  const rid = reservationIds.judge(env.item_hash, armId, order);
  const prior = await d.records.get(key);
  if (prior) return resumeJudgeCall(d, key, rid, prior);
  const m = d.ctx.metrics?.judge;
  const mode = spec.mode;
  if (!run.newCalls) return notCalled(run.notRunReason);
  const src = { model: spec.model, temperature: 0, max_tokens: spec.max_output_tokens, messages };
  const prep = prepareArmRequest('openai.chat', src, {
    api: d.provider.api,
    model: spec.model,
    maxOutputTokens: spec.max_output_tokens,
  });
  if (!prep.ok) {
    m?.call(mode, { errorClass: null, latencyMs: null, chargedMicroUsd: 0, notCalled: 'untranslatable' });
    return notCalled(`judge_untranslatable:${prep.reason}`);
  }
  const bound = attemptUpperBoundMicroUsd(promptTokensUpperBound(prep.body), spec.max_output_tokens, spec.rate_card);
  const r = await d.ctx.ledger.reserve(d.campaign.id, { [rid]: bound });
  if (!r.ok) {
    if (r.reason === 'already_settled') {
      // settled by another processing: its record says what it found (absent: it published)
      const now = await d.records.get(key);
      if (now) return resumeJudgeCall(d, key, rid, now);
    }
    m?.call(mode, {
      errorClass: null,
      latencyMs: null,
      chargedMicroUsd: 0,
      notCalled: r.reason === 'budget_exhausted' ? 'budget_exhausted' : 'not_reserved',
    });
    return notCalled(r.reason === 'budget_exhausted' ? 'judge_budget_exhausted' : `judge_not_reserved:${r.reason}`);
  }
  // reserved, then recorded `invoking` before any call: a record in flight always has its reservation
  const invoking: JudgeCallRecord = {
    kind: 'judge_call',
    state: 'invoking',
    worker_id: d.ctx.workerId,
    reserved_micro_usd: bound,
    at: new Date().toISOString(),
  };
  const rev = await d.records.create(key, invoking);
  if (rev === null) {
    // another processing recorded it first (between our read and create)
    const now = await d.records.get(key);
    return now ? resumeJudgeCall(d, key, rid, now) : DEFER;
  }
  let out;
  try {
    out = await d.limiter.schedule(1, async () => {
      if (!d.ctx.gateEnabled()) return null;
      const meta = {
        providerId: spec.provider,
        baseUrl: d.provider.base_url,
        api: prep.api,
        model: spec.model,
        maxTokens: spec.max_output_tokens,
        judgedArmId: armId,
        order,
        rateCard: spec.rate_card,
      };
      return observedJudgeCall(meta, () =>
        callOnce({
          url: requestUrl(prep.api, d.provider.base_url),
          api: prep.api,
          headers: requestHeaders(prep.api, { apiKey: d.apiKey, stream: false }),
          body: prep.body,
          firstByteTimeoutMs: spec.timeout_ms,
          stallTimeoutMs: spec.timeout_ms,
          dispatcher: d.ctx.http,
        }),
      );
    });
  } catch (e) {
    d.ctx.log.warn(
      { err: e, campaignId: d.campaign.id },
      'judge rate limiter failed before the call; judge call withdrawn',
    );
    out = null;
  }
  let result: CallResult;
  if (out === null) {
    result = notCalled('judge_paid_dispatch_disabled');
  } else {
    const c = attemptCharge(out, spec.rate_card);
    const charged = c === 'reserved' ? bound : Math.min(c, bound);
    result = replyResult(out, charged, pairwise);
  }
  const done: JudgeCallRecord = {
    ...invoking,
    state: 'done',
    at: new Date().toISOString(),
    charged_micro_usd: result.chargedMicroUsd,
    called: result.called,
    value: result.value,
    reason: result.reason,
  };
  if ((await d.records.update(key, done, rev)) === null) {
    // recorded lost meanwhile (this worker was taken for dead): that record and its charge stand
    const now = await d.records.get(key);
    if (now) return resumeJudgeCall(d, key, rid, now);
    throw new Error(`judge call record ${key} vanished under us`);
  }
  await d.ctx.ledger.settle(d.campaign.id, { ids: [rid] }, result.chargedMicroUsd);
  if (out === null)
    m?.call(mode, { errorClass: null, latencyMs: null, chargedMicroUsd: 0, notCalled: 'paid_dispatch_disabled' });
  else m?.call(mode, { errorClass: out.errorClass, latencyMs: out.latencyMs, chargedMicroUsd: result.chargedMicroUsd });
  return result;
}
