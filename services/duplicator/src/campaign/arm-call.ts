// One arm's provider calls for one item, with its retries, reservations and rate limits.
import type { Logger } from 'pino';
import { reservationIds, type Envelope } from '@shadowplane/contracts';
import { requestHeaders, requestUrl } from '@shadowplane/providers';
import { attemptCharge, callOnce, isRetryable, usedTokens, type AttemptOutcome } from '../invoke.js';
import { observedCall } from '../observe.js';
import type { RunnerContext } from './context.js';
import { callMeta, type ArmPlan } from './plan.js';

/** What an arm call needs from its campaign runner. */
export interface ArmCallDeps {
  ctx: RunnerContext;
  campaignId: string;
  log: Logger;
  /** called when the ledger refuses a reservation as `budget_exhausted` */
  markBudgetExhausted: () => Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Calls one arm once the runner recorded it `invoking` (prepareArm); each retry reserves its
 * own attempt first (refused → no more retries); the paid_dispatch gate is checked inside the
 * rate limiter immediately before every HTTP call. Returns null when the first call never
 * started (gate off): the arm's record and reservation are withdrawn, nothing was spent.
 */
export async function invokeArm(
  d: ArmCallDeps,
  env: Envelope,
  p: ArmPlan,
  key: string,
): Promise<{ attempts: AttemptOutcome[]; chargedMicroUsd: number; reservedMicroUsd: number } | null> {
  const attempts: AttemptOutcome[] = [];
  let charged = 0;
  let reserved = 0;
  const maxAttempts = p.slot.arm.limits.max_retries + 1;
  for (let n = 1; n <= maxAttempts; n++) {
    const rid = reservationIds.arm(env.item_hash, p.slot.armId, n);
    const r = n === 1 ? { ok: true as const } : await d.ctx.ledger.reserve(d.campaignId, { [rid]: p.boundMicroUsd });
    if (!r.ok) {
      d.ctx.metrics.reservations.inc({ result: 'refused' });
      if (r.reason === 'budget_exhausted') await d.markBudgetExhausted();
      if (n === 1) {
        await d.ctx.dispatchKv.delete(key).catch(() => undefined);
        return null;
      }
      break;
    }
    if (n > 1) d.ctx.metrics.reservations.inc({ result: 'granted' });
    reserved += p.boundMicroUsd;
    let started = false;
    let out: AttemptOutcome | null;
    try {
      out = await p.slot.limiter.schedule(
        p.weight,
        async () => {
          if (!d.ctx.gate.enabled()) return null;
          started = true;
          return observedCall(d.ctx.metrics.providerCalls, callMeta(p, n), () =>
            callOnce({
              url: requestUrl(p.api, p.slot.provider.base_url),
              api: p.api,
              headers: requestHeaders(p.api, { apiKey: p.slot.apiKey, stream: p.stream }),
              body: p.body,
              firstByteTimeoutMs: p.slot.arm.limits.first_byte_timeout_ms,
              stallTimeoutMs: p.slot.arm.limits.stall_timeout_ms,
              dispatcher: d.ctx.http,
            }),
          );
        },
        usedTokens,
      );
    } catch (e) {
      // callOnce never throws, so the limiter failed before any call: nothing was sent, which
      // is handled like a closed gate below
      if (started) throw e;
      d.log.warn({ err: e, armId: p.slot.armId }, 'rate limiter failed before the call; attempt withdrawn');
      out = null;
    }
    if (out === null) {
      if (n === 1) {
        // paid_dispatch went off (or the limiter failed) before the first call: nothing was
        // sent; the record is withdrawn and the item retried later, its other arms recorded.
        // The first attempt's reservation stays (the item is admitted), so completion waits for it.
        await d.ctx.dispatchKv.delete(key).catch(() => undefined);
        return null;
      }
      await d.ctx.ledger.settle(d.campaignId, { ids: [rid] }, 0);
      reserved -= p.boundMicroUsd;
      break;
    }
    attempts.push(out);
    d.ctx.metrics.attempts.inc({ arm_role: p.slot.role, result: out.errorClass ?? 'ok' });
    const c = attemptCharge(out, p.slot.arm.rate_card);
    charged += c === 'reserved' ? p.boundMicroUsd : Math.min(c, p.boundMicroUsd);
    const afterMs = out.retryAfterS !== null ? out.retryAfterS * 1000 : 0;
    const capMs = p.slot.arm.limits.max_retry_after_ms;
    // the provider limited this arm (its provider and model): pause its limiter, never longer than the cap
    if (afterMs > 0) p.slot.limiter.pauseFor(Math.min(afterMs, capMs));
    // asked to wait longer than the cap: the attempt ends as it is (rate_limited) and the arm
    // settles now, releasing its reservations, instead of parking the item for that long
    if (!isRetryable(out.errorClass) || n === maxAttempts || afterMs > capMs) break;
    const backoff = d.ctx.retryBaseMs * 2 ** (n - 1) * (0.5 + Math.random() / 2);
    await sleep(Math.max(backoff, afterMs));
  }
  return { attempts, chargedMicroUsd: charged, reservedMicroUsd: reserved };
}
