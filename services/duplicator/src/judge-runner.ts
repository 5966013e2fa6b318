import type { Logger } from 'pino';
import type { ObjectStore } from '@nats-io/obj';
import type { Dispatcher } from 'undici';
import type { Bus } from '@shadowplane/bus';
import {
  reservationIds,
  type ArmRole,
  type Campaign,
  type Envelope,
  type JudgeVerdict,
  type LlmJudgeSpec,
  type ProviderEntry,
} from '@shadowplane/contracts';
import type { BudgetLedgerClient } from '@shadowplane/budget';
import { createArmLimiter, type ArmLimiter } from '@shadowplane/ratelimit';
import { putArtifact, type Keyring } from '@shadowplane/artifacts';
import { requestPromptText } from '@shadowplane/providers';
import {
  combinePairwise,
  judgeTemplateHash,
  judgeTemplateId,
  pairwiseMessages,
  parsePairwiseReply,
  parsePointwiseReply,
  pointwiseMessages,
  type JudgeReply,
} from '@shadowplane/scoring';
import {
  attemptUpperBoundMicroUsd,
  prepareArmRequest,
  promptTokensUpperBound,
  requestHeaders,
  requestUrl,
} from '@shadowplane/providers';
import type { JudgeMetrics } from './judge-metrics.js';
import { attemptCharge, callOnce } from './invoke.js';
import { observedJudgeCall } from './observe.js';

/** What the judge runner needs from the worker (a subset of the campaign runner's context). */
export interface JudgeContext {
  bus: Bus;
  log: Logger;
  ledger: BudgetLedgerClient;
  artifacts: ObjectStore;
  keyring: Keyring;
  providers: ReadonlyMap<string, { entry: ProviderEntry; apiKey: string | null }>;
  http: Dispatcher;
  rateWindowMs: number;
  redisUrl: string | undefined;
  /** the paid_dispatch kill switch, checked immediately before every judge call */
  gateEnabled: () => boolean;
  /** the worker's metrics (the judge's part: judge-metrics.ts); absent in tests that do not read them */
  metrics?: { judge: JudgeMetrics };
}

/** One settled arm of an item, as the judge sees it. */
export interface JudgedArm {
  armId: string;
  role: ArmRole;
  /** provider id of the arm (its family comes from the allowlist) */
  provider: string;
  /** the arm's output text, or null when the call failed (nothing to judge) */
  outputText: string | null;
}

/** Family of a provider id: the allowlist's `family`, else the id itself. */
function familyOf(providers: JudgeContext['providers'], id: string): string {
  return providers.get(id)?.entry.family ?? id;
}

/** Null reason of a failed judge call from its error class. */
/**
 * True when the call was not made because its reservation id was already settled: another
 * processing of the same item (a redelivery that overlapped the first, under load) made that
 * call, and its verdict — with the real reply — is the one to publish. Publishing this one would
 * record a null order for a call that was in fact made (and, by message-id de-duplication, could
 * win over the real verdict).
 */
function judgedElsewhere(r: CallResult): boolean {
  return r.reason === 'judge_not_reserved:already_settled';
}

function failureReason(errorClass: string): string {
  return errorClass === 'hang_timeout' ? 'judge_timeout' : `judge_error:${errorClass}`;
}

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
  private readonly limiter: ArmLimiter;
  private readonly provider: ProviderEntry;
  private readonly apiKey: string | null;
  private readonly family: string;

  private constructor(
    private readonly ctx: JudgeContext,
    private readonly campaign: Campaign,
    private readonly spec: LlmJudgeSpec & { rate_card: NonNullable<LlmJudgeSpec['rate_card']> },
  ) {
    const p = ctx.providers.get(spec.provider)!;
    this.provider = p.entry;
    this.apiKey = p.apiKey;
    this.family = familyOf(ctx.providers, spec.provider);
    this.limiter = createArmLimiter({
      id: `${campaign.id}.judge`,
      rpm: spec.limits.rpm,
      concurrency: spec.limits.concurrency,
      windowMs: ctx.rateWindowMs,
      redisUrl: ctx.redisUrl,
    });
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
    await this.limiter.close();
  }

  /** Judges one item whose arms all settled now. Never throws for a judge failure (those become null verdicts). */
  async judgeItem(env: Envelope, body: unknown, arms: readonly JudgedArm[]): Promise<void> {
    const spec = this.spec;
    if (spec.call_types !== undefined && !spec.call_types.includes(env.call_type)) return;
    const inc = arms.find((a) => a.role === 'incumbent');
    if (!inc) return;
    const cands = arms.filter((a) => a.role === 'candidate');
    const fam = (a: JudgedArm) => familyOf(this.ctx.providers, a.provider);
    const pairAllowed = (c: JudgedArm) => this.family !== fam(inc) && this.family !== fam(c);
    const prompt = requestPromptText(env.api, body);
    const ref =
      spec.reference === 'expectation'
        ? env.expectations.find((e) => e.kind === 'numeric' || e.kind === 'exact')?.value
        : undefined;
    const reference = ref === undefined ? undefined : String(ref);
    const tasks: Promise<void>[] = [];
    if (spec.mode === 'pointwise') {
      for (const a of [inc, ...cands]) {
        if (a.outputText === null) continue;
        const allowed = a === inc ? cands.some(pairAllowed) : pairAllowed(a);
        const families = a === inc ? [fam(inc)] : [fam(inc), fam(a)];
        if (!allowed) {
          tasks.push(
            this.publish(env, a, null, families, {
              score: null,
              null_reason: 'same_family',
              orders: [],
              position_flip: null,
              calls: 0,
              charged: 0,
              raws: [],
            }),
          );
          continue;
        }
        const messages = pointwiseMessages({ prompt, output: a.outputText, rubric: spec.rubric, reference });
        tasks.push(
          this.call(env, a.armId, 'single', messages).then((r) =>
            judgedElsewhere(r)
              ? undefined
              : this.publish(env, a, null, families, {
                  score: r.reply?.value ?? null,
                  null_reason: r.reply === null ? r.reason : r.reply.value === null ? r.reply.reason : null,
                  orders: [
                    {
                      order: 'single',
                      value: r.reply?.value ?? null,
                      reason: r.reply === null ? r.reason : r.reply.value === null ? r.reply.reason : null,
                    },
                  ],
                  position_flip: null,
                  calls: r.called ? 1 : 0,
                  charged: r.chargedMicroUsd,
                  raws: [r.raw],
                }),
          ),
        );
      }
    } else {
      if (inc.outputText === null) return;
      for (const c of cands) {
        if (c.outputText === null) continue;
        const families = [fam(inc), fam(c)];
        if (!pairAllowed(c)) {
          tasks.push(
            this.publish(env, c, inc.armId, families, {
              score: null,
              null_reason: 'same_family',
              orders: [],
              position_flip: null,
              calls: 0,
              charged: 0,
              raws: [],
            }),
          );
          continue;
        }
        const ab = pairwiseMessages({ prompt, a: c.outputText, b: inc.outputText, rubric: spec.rubric });
        const ba = pairwiseMessages({ prompt, a: inc.outputText, b: c.outputText, rubric: spec.rubric });
        tasks.push(
          Promise.all([this.call(env, c.armId, 'ab', ab, true), this.call(env, c.armId, 'ba', ba, true)]).then(
            ([x, y]) => {
              if (judgedElsewhere(x) || judgedElsewhere(y)) return;
              const reasonOf = (r: CallResult) =>
                r.reply === null ? r.reason : r.reply.value === null ? r.reply.reason : null;
              const vx = x.reply?.value ?? null;
              const vy = y.reply?.value ?? null;
              const comb = combinePairwise(vx, vy);
              return this.publish(env, c, inc.armId, families, {
                score: comb.score,
                null_reason: comb.score === null ? (reasonOf(x) ?? reasonOf(y)) : null,
                orders: [
                  { order: 'ab', value: vx, reason: reasonOf(x) },
                  { order: 'ba', value: vy, reason: reasonOf(y) },
                ],
                position_flip: comb.flip,
                calls: (x.called ? 1 : 0) + (y.called ? 1 : 0),
                charged: x.chargedMicroUsd + y.chargedMicroUsd,
                raws: [x.raw, y.raw],
              });
            },
          ),
        );
      }
    }
    await Promise.all(tasks);
  }

  /** One judge call under the ledger, the limiter and the gate. */
  private async call(
    env: Envelope,
    armId: string,
    order: 'single' | 'ab' | 'ba',
    messages: { role: string; content: string }[],
    pairwise = false,
  ): Promise<CallResult> {
    const spec = this.spec;
    const src = { model: spec.model, temperature: 0, max_tokens: spec.max_output_tokens, messages };
    const prep = prepareArmRequest('openai.chat', src, {
      api: this.provider.api,
      model: spec.model,
      maxOutputTokens: spec.max_output_tokens,
    });
    const m = this.ctx.metrics?.judge;
    const mode = spec.mode;
    if (!prep.ok) {
      m?.call(mode, { errorClass: null, latencyMs: null, chargedMicroUsd: 0, notCalled: 'untranslatable' });
      return {
        reply: null,
        reason: `judge_untranslatable:${prep.reason}`,
        called: false,
        chargedMicroUsd: 0,
        raw: null,
      };
    }
    const bound = attemptUpperBoundMicroUsd(promptTokensUpperBound(prep.body), spec.max_output_tokens, spec.rate_card);
    const rid = reservationIds.judge(env.item_hash, armId, order);
    const r = await this.ctx.ledger.reserve(this.campaign.id, { [rid]: bound });
    if (!r.ok) {
      m?.call(mode, {
        errorClass: null,
        latencyMs: null,
        chargedMicroUsd: 0,
        notCalled: r.reason === 'budget_exhausted' ? 'budget_exhausted' : 'not_reserved',
      });
      return {
        reply: null,
        reason: r.reason === 'budget_exhausted' ? 'judge_budget_exhausted' : `judge_not_reserved:${r.reason}`,
        called: false,
        chargedMicroUsd: 0,
        raw: null,
      };
    }
    let out;
    try {
      out = await this.limiter.schedule(1, async () => {
        if (!this.ctx.gateEnabled()) return null;
        const meta = {
          providerId: spec.provider,
          baseUrl: this.provider.base_url,
          api: prep.api,
          model: spec.model,
          maxTokens: spec.max_output_tokens,
          judgedArmId: armId,
          order,
          rateCard: spec.rate_card,
        };
        return observedJudgeCall(meta, () =>
          callOnce({
            url: requestUrl(prep.api, this.provider.base_url),
            api: prep.api,
            headers: requestHeaders(prep.api, { apiKey: this.apiKey, stream: false }),
            body: prep.body,
            firstByteTimeoutMs: spec.timeout_ms,
            stallTimeoutMs: spec.timeout_ms,
            dispatcher: this.ctx.http,
          }),
        );
      });
    } catch (e) {
      this.ctx.log.warn(
        { err: e, campaignId: this.campaign.id },
        'judge rate limiter failed before the call; judge call withdrawn',
      );
      out = null;
    }
    if (out === null) {
      await this.ctx.ledger.settle(this.campaign.id, { ids: [rid] }, 0);
      m?.call(mode, { errorClass: null, latencyMs: null, chargedMicroUsd: 0, notCalled: 'paid_dispatch_disabled' });
      return { reply: null, reason: 'judge_paid_dispatch_disabled', called: false, chargedMicroUsd: 0, raw: null };
    }
    const c = attemptCharge(out, spec.rate_card);
    const charged = c === 'reserved' ? bound : Math.min(c, bound);
    await this.ctx.ledger.settle(this.campaign.id, { ids: [rid] }, charged);
    m?.call(mode, { errorClass: out.errorClass, latencyMs: out.latencyMs, chargedMicroUsd: charged });
    if (out.errorClass !== null)
      return {
        reply: null,
        reason: failureReason(out.errorClass),
        called: true,
        chargedMicroUsd: charged,
        raw: out.rawText,
      };
    const text = out.parsed?.outputText ?? '';
    const reply = pairwise ? parsePairwiseReply(text) : parsePointwiseReply(text);
    return { reply, reason: null, called: true, chargedMicroUsd: charged, raw: out.rawText };
  }

  private async publish(
    env: Envelope,
    arm: JudgedArm,
    against: string | null,
    families: string[],
    v: {
      score: number | null;
      null_reason: string | null;
      orders: JudgeVerdict['orders'];
      position_flip: boolean | null;
      calls: number;
      charged: number;
      raws: (string | null)[];
    },
  ): Promise<void> {
    const spec = this.spec;
    const tid = judgeTemplateId(spec.mode, spec.template_version);
    let artifactRef: string | null = null;
    if (v.calls > 0) {
      artifactRef = await putArtifact(
        this.ctx.artifacts,
        this.ctx.keyring,
        {
          output_text: JSON.stringify({ score: v.score, null_reason: v.null_reason, orders: v.orders }),
          tool_calls: [],
          response_raw: JSON.stringify(v.raws),
        },
        {
          campaign_id: this.campaign.id,
          arm_id: `judge.${arm.armId}`,
          item_hash: env.item_hash,
          purpose: this.campaign.spec.retention.purpose,
          ttl_days: this.campaign.spec.retention.ttl_days,
        },
      );
    }
    const msg: JudgeVerdict = {
      schema: 'shadow.judge_verdict/v1',
      campaign_id: this.campaign.id,
      item_hash: env.item_hash,
      call_type: env.call_type,
      envelope_id: env.envelope_id,
      mode: spec.mode,
      arm_id: arm.armId,
      role: arm.role,
      against_arm_id: against,
      judge_provider: spec.provider,
      judge_model: spec.model,
      judge_family: this.family,
      arm_families: families,
      template_id: tid,
      template_hash: judgeTemplateHash(tid),
      score: v.score,
      null_reason: v.score === null ? (v.null_reason ?? 'judge_unparsable') : null,
      orders: v.orders,
      position_flip: v.position_flip,
      calls: v.calls,
      charged_micro_usd: v.charged,
      cost_usd: v.charged / 1e6,
      artifact_ref: artifactRef,
    };
    await this.ctx.bus.js.publish(this.ctx.bus.names.obsSubject(this.campaign.id), JSON.stringify(msg), {
      msgID: `${this.campaign.id}.${env.item_hash}.judge.${arm.armId}.${spec.mode}`,
    });
    this.ctx.metrics?.judge.verdict(spec.mode, msg.score, msg.null_reason);
  }
}

interface CallResult {
  reply: JudgeReply | null;
  /** why there is no reply (reply null) */
  reason: string | null;
  called: boolean;
  chargedMicroUsd: number;
  raw: string | null;
}
