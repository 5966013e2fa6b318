// Recovery of a judge call found recorded in `shadow_dispatch` (judge-record.ts).
import { JUDGE_LOST_IN_FLIGHT, type JudgeCallRecord } from '../judge-record.js';
import type { JudgeSetup } from './context.js';
import { DEFER, lostResult, type CallResult } from './result.js';

/**
 * A judge call found recorded: `done` → its result (settlement repeated, idempotent); `lost` →
 * null `judge_lost_in_flight` at its charge; `invoking` by a live other worker → DEFER; by a
 * dead worker (or an earlier, failed handling in this process) → recorded `lost`, charged what
 * is still reserved for it (its bound: the call may have been sent), and settled at that.
 */
export async function resumeJudgeCall(
  d: JudgeSetup,
  key: string,
  rid: string,
  rec: { value: JudgeCallRecord; revision: number },
): Promise<CallResult | typeof DEFER> {
  const v = rec.value;
  const m = d.ctx.metrics?.judge;
  if (v.state === 'done') {
    const charged = v.charged_micro_usd ?? v.reserved_micro_usd;
    const s = await d.ctx.ledger.settle(d.campaign.id, { ids: [rid] }, charged);
    if (s.found && s.settledMicroUsd > 0) m?.spendUsd.inc(s.settledMicroUsd / 1e6);
    return {
      value: v.value ?? null,
      reason: v.reason ?? null,
      called: v.called ?? true,
      chargedMicroUsd: charged,
      raw: null,
    };
  }
  if (v.state === 'lost') {
    const s = await d.ctx.ledger.settle(d.campaign.id, { ids: [rid] }, 'reserved');
    if (s.found && s.settledMicroUsd > 0) m?.spendUsd.inc(s.settledMicroUsd / 1e6);
    return lostResult(v.charged_micro_usd ?? v.reserved_micro_usd);
  }
  if (v.worker_id !== d.ctx.workerId && (await d.ctx.leases.alive(v.worker_id))) return DEFER;
  const charge = await d.ctx.ledger.outstandingFor(d.campaign.id, rid);
  const lost: JudgeCallRecord = {
    ...v,
    state: 'lost',
    at: new Date().toISOString(),
    charged_micro_usd: charge,
    reason: JUDGE_LOST_IN_FLIGHT,
  };
  if ((await d.records.update(key, lost, rec.revision)) === null) {
    const now = await d.records.get(key);
    if (!now) throw new Error(`judge call record ${key} vanished under us`);
    return resumeJudgeCall(d, key, rid, now);
  }
  const s = await d.ctx.ledger.settle(d.campaign.id, { ids: [rid] }, 'reserved');
  d.ctx.metrics?.judge.call(d.spec.mode, {
    errorClass: null,
    latencyMs: null,
    chargedMicroUsd: s.settledMicroUsd,
    notCalled: 'lost_in_flight',
  });
  d.ctx.log.warn(
    { campaignId: d.campaign.id, judgeCall: key, deadWorker: v.worker_id, chargedMicroUsd: charge },
    'judge call lost in flight; charged its upper bound, its order recorded null',
  );
  return lostResult(charge);
}
