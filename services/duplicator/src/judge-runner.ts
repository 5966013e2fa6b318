import type { Logger } from 'pino';
import type { KV } from '@nats-io/kv';
import type { ObjectStore } from '@nats-io/obj';
import type { Dispatcher } from 'undici';
import { JsonKv, type Bus } from '@shadowplane/bus';
import {
  reservationIds,
  type ArmRole,
  type Campaign,
  type Envelope,
  type JudgeVerdict,
  type LlmJudgeSpec,
  type Observation,
  type ProviderEntry,
} from '@shadowplane/contracts';
import type { BudgetLedgerClient } from '@shadowplane/budget';
import { createArmLimiter, type ArmLimiter } from '@shadowplane/ratelimit';
import { getArtifact, putArtifact, type Keyring } from '@shadowplane/artifacts';
import { requestPromptText } from '@shadowplane/providers';
import {
  combinePairwise,
  judgeTemplateHash,
  judgeTemplateId,
  pairwiseMessages,
  parsePairwiseReply,
  parsePointwiseReply,
  pointwiseMessages,
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
import { JUDGE_LOST_IN_FLIGHT, JudgeCallRecord, judgeCallKey } from './judge-record.js';

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
  /** `shadow_dispatch`: one record per judge call (judge-record.ts) */
  dispatchKv: KV;
  /** this worker's id, written into the judge call records it creates */
  workerId: string;
  /** liveness of the worker that holds a judge call in flight (liveness.ts WorkerLeases) */
  leases: { alive(workerId: string): Promise<boolean>; readonly ttlMs: number };
}

/** How {@link JudgeRunner.judgeItem} may proceed for one item. */
export interface JudgeRunOptions {
  /**
   * false: no new judge call is made (the campaign is no longer running); recorded calls are
   * still reused and calls lost in flight recovered, and a call never made gets `notRunReason`.
   * Default true.
   */
  newCalls?: boolean;
  /** null reason of a judge call not made because `newCalls` is false */
  notRunReason?: string;
}

/** One settled arm of an item, as the judge sees it. */
export interface JudgedArm {
  armId: string;
  role: ArmRole;
  /** provider id of the arm (its family comes from the allowlist) */
  provider: string;
  /** the arm's output text, or null when the call failed (nothing to judge) */
  outputText: string | null;
  /**
   * set when the arm succeeded but its output could not be read back (an earlier processing's
   * artifact is gone): the arm gets a null verdict with this reason instead of none
   */
  unavailableReason?: string;
}

/** Family of a provider id: the allowlist's `family`, else the id itself. */
function familyOf(providers: JudgeContext['providers'], id: string): string {
  return providers.get(id)?.entry.family ?? id;
}

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

/** Null reason of a failed judge call from its error class. */
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
  private readonly records: JsonKv<typeof JudgeCallRecord>;

  private constructor(
    private readonly ctx: JudgeContext,
    private readonly campaign: Campaign,
    private readonly spec: LlmJudgeSpec & { rate_card: NonNullable<LlmJudgeSpec['rate_card']> },
  ) {
    const p = ctx.providers.get(spec.provider)!;
    this.provider = p.entry;
    this.apiKey = p.apiKey;
    this.family = familyOf(ctx.providers, spec.provider);
    this.records = new JsonKv(ctx.dispatchKv, JudgeCallRecord);
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
    const spec = this.spec;
    if (spec.call_types !== undefined && !spec.call_types.includes(env.call_type)) return null;
    const inc = arms.find((a) => a.role === 'incumbent');
    if (!inc) return null;
    const cands = arms.filter((a) => a.role === 'candidate');
    const fam = (a: JudgedArm) => familyOf(this.ctx.providers, a.provider);
    const pairAllowed = (c: JudgedArm) => this.family !== fam(inc) && this.family !== fam(c);
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
            tasks.push(this.publish(env, a, null, families, noCall(a.unavailableReason)));
          continue;
        }
        if (!allowed) {
          tasks.push(this.publish(env, a, null, families, noCall('same_family')));
          continue;
        }
        const messages = pointwiseMessages({ prompt, output: a.outputText, rubric: spec.rubric, reference });
        tasks.push(
          this.call(env, a.armId, 'single', messages, false, run).then((r) => {
            if (r === DEFER) {
              deferred = true;
              return;
            }
            if (judgedElsewhere(r)) return;
            return this.publish(env, a, null, families, {
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
            tasks.push(this.publish(env, c, inc.armId, families, noCall(c.unavailableReason)));
          continue;
        }
        if (!pairAllowed(c)) {
          tasks.push(this.publish(env, c, inc.armId, families, noCall('same_family')));
          continue;
        }
        const ab = pairwiseMessages({ prompt, a: c.outputText, b: inc.outputText, rubric: spec.rubric });
        const ba = pairwiseMessages({ prompt, a: inc.outputText, b: c.outputText, rubric: spec.rubric });
        tasks.push(
          Promise.all([
            this.call(env, c.armId, 'ab', ab, true, run),
            this.call(env, c.armId, 'ba', ba, true, run),
          ]).then(([x, y]) => {
            if (x === DEFER || y === DEFER) {
              deferred = true;
              return;
            }
            if (judgedElsewhere(x) || judgedElsewhere(y)) return;
            const comb = combinePairwise(x.value, y.value);
            return this.publish(env, c, inc.armId, families, {
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
    return deferred ? { deferMs: this.ctx.leases.ttlMs } : null;
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
      const a = await getArtifact(this.ctx.artifacts, this.ctx.keyring, obs.artifact_ref);
      return { ...arm, outputText: a.output_text };
    } catch (err) {
      this.ctx.log.warn(
        { err, campaignId: this.campaign.id, itemHash: obs.item_hash, armId: arm.armId },
        'output of an arm settled earlier cannot be read; its judge verdict is null',
      );
      return { ...arm, outputText: null, unavailableReason: 'judge_output_unavailable' };
    }
  }

  /**
   * One judge call under the ledger, the limiter and the gate, recorded in `shadow_dispatch`
   * (judge-record.ts): a recorded call is reused or recovered, never made again.
   */
  private async call(
    env: Envelope,
    armId: string,
    order: 'single' | 'ab' | 'ba',
    messages: { role: string; content: string }[],
    pairwise: boolean,
    run: { newCalls: boolean; notRunReason: string },
  ): Promise<CallResult | typeof DEFER> {
    const spec = this.spec;
    const key = judgeCallKey(this.campaign.id, env.item_hash, armId, order);
    const rid = reservationIds.judge(env.item_hash, armId, order);
    const prior = await this.records.get(key);
    if (prior) return this.resume(key, rid, prior);
    const m = this.ctx.metrics?.judge;
    const mode = spec.mode;
    if (!run.newCalls) return notCalled(run.notRunReason);
    const src = { model: spec.model, temperature: 0, max_tokens: spec.max_output_tokens, messages };
    const prep = prepareArmRequest('openai.chat', src, {
      api: this.provider.api,
      model: spec.model,
      maxOutputTokens: spec.max_output_tokens,
    });
    if (!prep.ok) {
      m?.call(mode, { errorClass: null, latencyMs: null, chargedMicroUsd: 0, notCalled: 'untranslatable' });
      return notCalled(`judge_untranslatable:${prep.reason}`);
    }
    const bound = attemptUpperBoundMicroUsd(promptTokensUpperBound(prep.body), spec.max_output_tokens, spec.rate_card);
    const r = await this.ctx.ledger.reserve(this.campaign.id, { [rid]: bound });
    if (!r.ok) {
      if (r.reason === 'already_settled') {
        // settled by another processing: its record says what it found (absent: it published)
        const now = await this.records.get(key);
        if (now) return this.resume(key, rid, now);
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
      worker_id: this.ctx.workerId,
      reserved_micro_usd: bound,
      at: new Date().toISOString(),
    };
    const rev = await this.records.create(key, invoking);
    if (rev === null) {
      // another processing recorded it first (between our read and create)
      const now = await this.records.get(key);
      return now ? this.resume(key, rid, now) : DEFER;
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
    let result: CallResult;
    if (out === null) {
      result = notCalled('judge_paid_dispatch_disabled');
    } else {
      const c = attemptCharge(out, spec.rate_card);
      const charged = c === 'reserved' ? bound : Math.min(c, bound);
      if (out.errorClass !== null) {
        result = {
          value: null,
          reason: failureReason(out.errorClass),
          called: true,
          chargedMicroUsd: charged,
          raw: out.rawText,
        };
      } else {
        const text = out.parsed?.outputText ?? '';
        const reply = pairwise ? parsePairwiseReply(text) : parsePointwiseReply(text);
        result = {
          value: reply.value,
          reason: reply.value === null ? reply.reason : null,
          called: true,
          chargedMicroUsd: charged,
          raw: out.rawText,
        };
      }
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
    if ((await this.records.update(key, done, rev)) === null) {
      // recorded lost meanwhile (this worker was taken for dead): that record and its charge stand
      const now = await this.records.get(key);
      if (now) return this.resume(key, rid, now);
      throw new Error(`judge call record ${key} vanished under us`);
    }
    await this.ctx.ledger.settle(this.campaign.id, { ids: [rid] }, result.chargedMicroUsd);
    if (out === null)
      m?.call(mode, { errorClass: null, latencyMs: null, chargedMicroUsd: 0, notCalled: 'paid_dispatch_disabled' });
    else
      m?.call(mode, { errorClass: out.errorClass, latencyMs: out.latencyMs, chargedMicroUsd: result.chargedMicroUsd });
    return result;
  }

  /**
   * A judge call found recorded: `done` → its result (settlement repeated, idempotent); `lost` →
   * null `judge_lost_in_flight` at its charge; `invoking` by a live other worker → DEFER; by a
   * dead worker (or an earlier, failed handling in this process) → recorded `lost`, charged what
   * is still reserved for it (its bound: the call may have been sent), and settled at that.
   */
  private async resume(
    key: string,
    rid: string,
    rec: { value: JudgeCallRecord; revision: number },
  ): Promise<CallResult | typeof DEFER> {
    const v = rec.value;
    const m = this.ctx.metrics?.judge;
    if (v.state === 'done') {
      const charged = v.charged_micro_usd ?? v.reserved_micro_usd;
      const s = await this.ctx.ledger.settle(this.campaign.id, { ids: [rid] }, charged);
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
      const s = await this.ctx.ledger.settle(this.campaign.id, { ids: [rid] }, 'reserved');
      if (s.found && s.settledMicroUsd > 0) m?.spendUsd.inc(s.settledMicroUsd / 1e6);
      return lostResult(v.charged_micro_usd ?? v.reserved_micro_usd);
    }
    if (v.worker_id !== this.ctx.workerId && (await this.ctx.leases.alive(v.worker_id))) return DEFER;
    const charge = await this.ctx.ledger.outstandingFor(this.campaign.id, rid);
    const lost: JudgeCallRecord = {
      ...v,
      state: 'lost',
      at: new Date().toISOString(),
      charged_micro_usd: charge,
      reason: JUDGE_LOST_IN_FLIGHT,
    };
    if ((await this.records.update(key, lost, rec.revision)) === null) {
      const now = await this.records.get(key);
      if (!now) throw new Error(`judge call record ${key} vanished under us`);
      return this.resume(key, rid, now);
    }
    const s = await this.ctx.ledger.settle(this.campaign.id, { ids: [rid] }, 'reserved');
    this.ctx.metrics?.judge.call(this.spec.mode, {
      errorClass: null,
      latencyMs: null,
      chargedMicroUsd: s.settledMicroUsd,
      notCalled: 'lost_in_flight',
    });
    this.ctx.log.warn(
      { campaignId: this.campaign.id, judgeCall: key, deadWorker: v.worker_id, chargedMicroUsd: charge },
      'judge call lost in flight; charged its upper bound, its order recorded null',
    );
    return lostResult(charge);
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

/** What one judge call gave: a value 0–1, or null with the reason (never both). */
interface CallResult {
  value: number | null;
  /** why `value` is null (null when it is not) */
  reason: string | null;
  /** an HTTP call was made (or may have been: lost in flight) */
  called: boolean;
  chargedMicroUsd: number;
  raw: string | null;
}

/** A live worker holds this judge call in flight: the item is looked at again later. */
const DEFER = Symbol('defer');

const notCalled = (reason: string): CallResult => ({
  value: null,
  reason,
  called: false,
  chargedMicroUsd: 0,
  raw: null,
});

const lostResult = (chargedMicroUsd: number): CallResult => ({
  value: null,
  reason: JUDGE_LOST_IN_FLIGHT,
  called: true,
  chargedMicroUsd,
  raw: null,
});
