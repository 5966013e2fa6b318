import { JsonKv } from '@shadowplane/bus';
import type { ArmRole, Campaign, Envelope, LlmJudgeSpec, Observation } from '@shadowplane/contracts';
import { createArmLimiter } from '@shadowplane/ratelimit';
import { getArtifact } from '@shadowplane/artifacts';
import { requestPromptText } from '@shadowplane/providers';
import { combinePairwise, pairwiseMessages, pointwiseMessages } from '@shadowplane/scoring';
import { JudgeCallRecord } from './judge-record.js';
import { familyOf, type JudgeContext, type JudgeRunOptions, type JudgeSetup, type JudgedArm } from './judge/context.js';
import { DEFER, judgedElsewhere } from './judge/result.js';
import { judgeCall } from './judge/call.js';
import { publishVerdict } from './judge/publish.js';

export type { JudgeContext, JudgeRunOptions, JudgedArm } from './judge/context.js';
/**
 * Runs the campaign's LLM judge on an item after its arms settled, and publishes one
 * `shadow.judge_verdict/v1` per judged arm (pointwise) or per candidate (pairwise) on the
 * campaign's OBS subject. Each judge call goes through the arms' provider code (translate →
 * callOnce), its own rate limiter, the paid_dispatch gate and the campaign's budget ledger: its
 * worst case (prompt bytes as tokens + `max_output_tokens` at the judge's rate card) is reserved
 * under `<item>.judge.<arm>.<order>` and settled at the actual cost (or the bound when unknown).
 * Same-family rule: a pair (incumbent, candidate) whose arms include the judge's provider family
 * is not judged; the verdict says `same_family`. Failures (timeout, refusal, unparsable reply,
 * unaffordable reservation, closed gate) publish a null score with the reason — never 0. Raw
 * replies are kept encrypted in the artifact store under the campaign's retention.
 * Why here and not in the verdict service: the duplicator holds the providers, limits and
 * ledger, and a verdict computed once and published is folded on every re-fold without re-spending.
 */
export class JudgeRunner {
  private readonly d: JudgeSetup;

  private constructor(
    ctx: JudgeContext,
    campaign: Campaign,
    spec: LlmJudgeSpec & { rate_card: NonNullable<LlmJudgeSpec['rate_card']> },
  ) {
    const p = ctx.providers.get(spec.provider)!;
    const provider = p.entry;
    const apiKey = p.apiKey;
    const family = familyOf(ctx.providers, spec.provider);
    const records = new JsonKv(ctx.dispatchKv, JudgeCallRecord);
    const limiter = createArmLimiter({
      id: `${campaign.id}.judge`,
      rpm: spec.limits.rpm,
      concurrency: spec.limits.concurrency,
      windowMs: ctx.rateWindowMs,
      redisUrl: ctx.redisUrl,
    });
    this.d = { ctx, campaign, spec, provider, apiKey, family, limiter, records };
  }

  /**
   * The campaign's judge runner, or null when the spec configures no judge. A judge whose
   * provider is not on the allowlist or that has no rate card cannot be bounded: it is logged and
   * not run (control refuses such a launch, so this only guards a changed allowlist).
   */
  static forCampaign(ctx: JudgeContext, campaign: Campaign): JudgeRunner | null {
    const s = campaign.spec.scorers.find((x): x is LlmJudgeSpec => x.kind === 'llm_judge');
    if (!s) return null;
    if (!ctx.providers.has(s.provider) || s.rate_card === undefined) {
      ctx.log.error(
        { campaignId: campaign.id, provider: s.provider },
        'llm_judge names a provider not on the allowlist or has no rate_card; judge not run',
      );
      return null;
    }
    return new JudgeRunner(ctx, campaign, { ...s, rate_card: s.rate_card });
  }

  /** Stops the judge's rate limiter. */
  async close(): Promise<void> {
    await this.d.limiter.close();
  }

  /**
   * Judges one item whose arms have all settled (in this processing or an earlier one). Never
   * throws for a judge failure (those become null verdicts). Each call is recorded in
   * `shadow_dispatch` (judge-record.ts), so a redelivered item reuses what an earlier processing
   * judged, recovers a call its dead worker had in flight (charged its bound, null with
   * `judge_lost_in_flight`), and makes only the calls never made.
   * @returns null when every verdict was published; `{deferMs}` when a live worker still holds
   *   one of the item's judge calls (the item is to be looked at again after `deferMs`)
   */
  async judgeItem(
    env: Envelope,
    body: unknown,
    arms: readonly JudgedArm[],
    opts: JudgeRunOptions = {},
  ): Promise<{ deferMs: number } | null> {
    const run = { newCalls: opts.newCalls ?? true, notRunReason: opts.notRunReason ?? 'judge_not_run' };
    const spec = this.d.spec;
    if (spec.call_types !== undefined && !spec.call_types.includes(env.call_type)) return null;
    const inc = arms.find((a) => a.role === 'incumbent');
    if (!inc) return null;
    const cands = arms.filter((a) => a.role === 'candidate');
    const fam = (a: JudgedArm) => familyOf(this.d.ctx.providers, a.provider);
    const pairAllowed = (c: JudgedArm) => this.d.family !== fam(inc) && this.d.family !== fam(c);
    const prompt = requestPromptText(env.api, body);
    const ref =
      spec.reference === 'expectation'
        ? env.expectations.find((e) => e.kind === 'numeric' || e.kind === 'exact')?.value
        : undefined;
    const reference = ref === undefined ? undefined : String(ref);
    let deferred = false;
    const noCall = (reason: string) => ({
      score: null,
      null_reason: reason,
      orders: [],
      position_flip: null,
      calls: 0,
      charged: 0,
      raws: [],
    });
    const tasks: Promise<void>[] = [];
    if (spec.mode === 'pointwise') {
      for (const a of [inc, ...cands]) {
        const allowed = a === inc ? cands.some(pairAllowed) : pairAllowed(a);
        const families = a === inc ? [fam(inc)] : [fam(inc), fam(a)];
        if (a.outputText === null) {
          if (a.unavailableReason !== undefined && allowed)
            tasks.push(publishVerdict(this.d, env, a, null, families, noCall(a.unavailableReason)));
          continue;
        }
        if (!allowed) {
          tasks.push(publishVerdict(this.d, env, a, null, families, noCall('same_family')));
          continue;
        }
        const messages = pointwiseMessages({ prompt, output: a.outputText, rubric: spec.rubric, reference });
        tasks.push(
          judgeCall(this.d, env, a.armId, 'single', messages, false, run).then((r) => {
            if (r === DEFER) {
              deferred = true;
              return;
            }
            if (judgedElsewhere(r)) return;
            return publishVerdict(this.d, env, a, null, families, {
              score: r.value,
              null_reason: r.reason,
              orders: [{ order: 'single', value: r.value, reason: r.reason }],
              position_flip: null,
              calls: r.called ? 1 : 0,
              charged: r.chargedMicroUsd,
              raws: [r.raw],
            });
          }),
        );
      }
    } else {
      if (inc.outputText === null) return null;
      for (const c of cands) {
        const families = [fam(inc), fam(c)];
        if (c.outputText === null) {
          if (c.unavailableReason !== undefined && pairAllowed(c))
            tasks.push(publishVerdict(this.d, env, c, inc.armId, families, noCall(c.unavailableReason)));
          continue;
        }
        if (!pairAllowed(c)) {
          tasks.push(publishVerdict(this.d, env, c, inc.armId, families, noCall('same_family')));
          continue;
        }
        const ab = pairwiseMessages({ prompt, a: c.outputText, b: inc.outputText, rubric: spec.rubric });
        const ba = pairwiseMessages({ prompt, a: inc.outputText, b: c.outputText, rubric: spec.rubric });
        tasks.push(
          Promise.all([
            judgeCall(this.d, env, c.armId, 'ab', ab, true, run),
            judgeCall(this.d, env, c.armId, 'ba', ba, true, run),
          ]).then(([x, y]) => {
            if (x === DEFER || y === DEFER) {
              deferred = true;
              return;
            }
            if (judgedElsewhere(x) || judgedElsewhere(y)) return;
            const comb = combinePairwise(x.value, y.value);
            return publishVerdict(this.d, env, c, inc.armId, families, {
              score: comb.score,
              null_reason: comb.score === null ? (x.reason ?? y.reason) : null,
              orders: [
                { order: 'ab', value: x.value, reason: x.reason },
                { order: 'ba', value: y.value, reason: y.reason },
              ],
              position_flip: comb.flip,
              calls: (x.called ? 1 : 0) + (y.called ? 1 : 0),
              charged: x.chargedMicroUsd + y.chargedMicroUsd,
              raws: [x.raw, y.raw],
            });
          }),
        );
      }
    }
    await Promise.all(tasks);
    return deferred ? { deferMs: this.d.ctx.leases.ttlMs } : null;
  }

  /**
   * An arm settled by an earlier processing, as the judge sees it: its output is read back from
   * the artifact the observation names. An output that cannot be read (artifact expired or
   * removed) gives the arm a null verdict (`judge_output_unavailable`) rather than none.
   */
  async recordedArm(
    arm: { armId: string; role: ArmRole; provider: string },
    obs: Observation | undefined,
  ): Promise<JudgedArm> {
    if (!obs || obs.status !== 'ok' || obs.artifact_ref === null) return { ...arm, outputText: null };
    try {
      const a = await getArtifact(this.d.ctx.artifacts, this.d.ctx.keyring, obs.artifact_ref);
      return { ...arm, outputText: a.output_text };
    } catch (err) {
      this.d.ctx.log.warn(
        { err, campaignId: this.d.campaign.id, itemHash: obs.item_hash, armId: arm.armId },
        'output of an arm settled earlier cannot be read; its judge verdict is null',
      );
      return { ...arm, outputText: null, unavailableReason: 'judge_output_unavailable' };
    }
  }
}
