// The arms a campaign dispatches, each with its provider and rate limiter.
import type { Logger } from 'pino';
import { aaArmId, type Arm, type ArmRole, type Campaign } from '@shadowplane/contracts';
import { createArmLimiter } from '@shadowplane/ratelimit';
import type { RunnerContext } from './context.js';
import type { ArmSlot } from './plan.js';

/**
 * The campaign's arm slots: the incumbent (none in compare mode or a judged_dataset_run), its A-A twin when `aa_share`
 * > 0 (sharing the incumbent's limiter), then every candidate. An arm whose provider is not on
 * the allowlist, or that has no rate card (its worst case cannot be reserved), is logged, counted
 * in `armsSkipped` and left out. Each other arm gets its own limiter `<campaign>.<arm>`.
 */
export function buildSlots(ctx: RunnerContext, campaign: Campaign, log: Logger): ArmSlot[] {
  const spec = campaign.spec;
  const out: ArmSlot[] = [];
  const add = (arm: Arm, role: ArmRole, armId: string, limiterOf?: ArmSlot) => {
    const p = ctx.providers.get(arm.provider);
    if (!p) {
      ctx.metrics.armsSkipped.inc({ reason: 'unknown_provider' });
      log.error({ armId, provider: arm.provider }, 'arm names a provider not on the allowlist; arm skipped');
      return undefined;
    }
    if (!arm.rate_card) {
      // Without a rate card the worst case cannot be bounded before the call, so the budget
      // invariant could not be kept: the arm is not dispatched (the report shows it missing).
      ctx.metrics.armsSkipped.inc({ reason: 'no_rate_card' });
      log.error({ armId }, 'arm has no rate_card: its worst-case cost cannot be reserved; arm skipped');
      return undefined;
    }
    const limiter =
      limiterOf?.limiter ??
      createArmLimiter({
        id: `${campaign.id}.${armId}`,
        rpm: arm.limits.rpm,
        tpm: arm.limits.tpm,
        concurrency: arm.limits.concurrency,
        windowMs: ctx.rateWindowMs,
        redisUrl: ctx.redisUrl,
        onWait: (ms) => ctx.metrics.rateLimitWait.observe({ arm_role: role }, ms / 1000),
      });
    const slot = { armId, role, arm, provider: p.entry, apiKey: p.apiKey, limiter };
    out.push(slot);
    return slot;
  };
  // compare mode (docs/bench.md): the baseline run's retained observations stand for the
  // incumbent, so it is never called (and no A-A pair is drawn); only the candidate spends.
  // judged_dataset_run: the output production served stands for it (judged.ts)
  const inc =
    spec.compare || spec.instrument === 'judged_dataset_run'
      ? undefined
      : add(spec.incumbent, 'incumbent', spec.incumbent.id);
  if (inc && spec.aa_share > 0) {
    // the A-A call shares the incumbent's limits (same provider and model)
    add(spec.incumbent, 'incumbent_aa', aaArmId(spec.incumbent.id), inc);
  }
  for (const c of spec.candidates) add(c, 'candidate', c.id);
  return out;
}
