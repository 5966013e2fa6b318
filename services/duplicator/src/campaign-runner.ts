import { AckPolicy, DeliverPolicy, type JsMsg, type ConsumerMessages } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { z } from 'zod';
import type { Logger } from 'pino';
import { JsonKv } from '@shadowplane/bus';
import {
  type Campaign,
  DispatchState,
  Envelope,
  aaArmId,
  dispatchKeys,
  reservationIds,
  sha256Hex,
  simhash64,
  type Arm,
  type ArmRole,
  type ItemEvent,
  type Observation,
} from '@shadowplane/contracts';
import { createArmLimiter } from '@shadowplane/ratelimit';
import { rateCardCost, requestPromptText } from '@shadowplane/providers';
import { JudgeRunner, type JudgedArm } from './judge-runner.js';
import { itemSpan } from './observe.js';
import { FrozenSource } from './frozen.js';
import type { RunnerContext } from './campaign/context.js';
import { planArms, isAaItem, isSampled, type ArmPlan, type ArmSlot } from './campaign/plan.js';
import { invokeArm, type ArmCallDeps } from './campaign/arm-call.js';
import { buildObservation } from './campaign/observation.js';

export type { RunnerContext } from './campaign/context.js';
export { isAaItem, isSampled } from './campaign/plan.js';

/** The item claim in `shadow_dispatch` under `<campaign>.<item_hash>` (first writer wins). */
export const ItemClaim = z
  .object({
    kind: z.literal('item'),
    state: z.enum(['claimed', 'reserved', 'finished', 'excluded']),
    envelope_id: z.string(),
    worker_id: z.string(),
    reason: z.string().nullable(),
    at: z.string(),
  })
  .strict();
export type ItemClaim = z.infer<typeof ItemClaim>;

/**
 * Items admitted per call type, `<campaign>._n.<call_type>`, incremented by CAS up to max_items.
 * `recent` holds the first 16 hex chars of the last {@link RECENT_ADMITTED} admitted items, so a
 * redelivery after a crash between counting and the claim update does not count an item twice
 * (the redelivery comes within ack_wait + lease TTL, long before 256 more items are admitted).
 */
const Counter = z.object({ count: z.number().int().nonnegative(), recent: z.array(z.string()).optional() }).strict();
const RECENT_ADMITTED = 256;

type Verdict = { ack: true } | { ack: false; delayMs: number };
const ACK: Verdict = { ack: true };
const later = (delayMs: number): Verdict => ({ ack: false, delayMs });

const iso = (ms: number) => new Date(ms).toISOString();
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Consumes one running campaign: a durable pull consumer on CAPTURE shared by every worker,
 * and the per-item protocol (claim → reserve → count → invoke arms → observe → settle → ack).
 * See the package README section "Dispatch protocol" for the crash analysis.
 */
export class CampaignRunner {
  readonly id: string;
  private campaign: Campaign;
  private readonly slots: ArmSlot[];
  private readonly claims: JsonKv<typeof ItemClaim>;
  private readonly arms: JsonKv<typeof DispatchState>;
  private readonly counters: JsonKv<typeof Counter>;
  private messages: ConsumerMessages | null = null;
  private loop: Promise<void> | null = null;
  private active = 0;
  private wake: (() => void) | null = null;
  private stopped = false;
  private readonly localItems = new Set<string>();
  private readonly log: Logger;
  private readonly armCallDeps: ArmCallDeps;
  private lagTimer: NodeJS.Timeout | undefined;
  /** the dataset of a `frozen:<hash>` campaign (frozen.ts); null for live ones */
  private frozen: FrozenSource | null = null;
  /** a post-item completion check is running / another was asked for meanwhile (completeSoon) */
  private completing = false;
  private completeAgain = false;
  lag = 0;

  constructor(
    private readonly ctx: RunnerContext,
    campaign: Campaign,
  ) {
    this.id = campaign.id;
    this.campaign = campaign;
    this.log = ctx.log.child({ campaignId: campaign.id });
    this.armCallDeps = {
      ctx,
      campaignId: campaign.id,
      log: this.log,
      markBudgetExhausted: () => this.markBudgetExhausted(),
    };
    this.claims = new JsonKv(ctx.dispatchKv, ItemClaim);
    this.arms = new JsonKv(ctx.dispatchKv, DispatchState);
    this.counters = new JsonKv(ctx.dispatchKv, Counter);
    this.slots = this.buildSlots();
    this.judge = JudgeRunner.forCampaign({ ...ctx, gateEnabled: () => ctx.gate.enabled() }, campaign);
  }
  private readonly judge: JudgeRunner | null;

  /** Names the consumer: one durable per campaign, shared by all workers. */
  get durable(): string {
    return `dup_${this.id}`;
  }

  private buildSlots(): ArmSlot[] {
    const spec = this.campaign.spec;
    const out: ArmSlot[] = [];
    const add = (arm: Arm, role: ArmRole, armId: string, limiterOf?: ArmSlot) => {
      const p = this.ctx.providers.get(arm.provider);
      if (!p) {
        this.ctx.metrics.armsSkipped.inc({ reason: 'unknown_provider' });
        this.log.error({ armId, provider: arm.provider }, 'arm names a provider not on the allowlist; arm skipped');
        return undefined;
      }
      if (!arm.rate_card) {
        // Without a rate card the worst case cannot be bounded before the call, so the budget
        // invariant could not be kept: the arm is not dispatched (the report shows it missing).
        this.ctx.metrics.armsSkipped.inc({ reason: 'no_rate_card' });
        this.log.error({ armId }, 'arm has no rate_card: its worst-case cost cannot be reserved; arm skipped');
        return undefined;
      }
      const limiter =
        limiterOf?.limiter ??
        createArmLimiter({
          id: `${this.id}.${armId}`,
          rpm: arm.limits.rpm,
          tpm: arm.limits.tpm,
          concurrency: arm.limits.concurrency,
          windowMs: this.ctx.rateWindowMs,
          redisUrl: this.ctx.redisUrl,
          onWait: (ms) => this.ctx.metrics.rateLimitWait.observe({ arm_role: role }, ms / 1000),
        });
      const slot = { armId, role, arm, provider: p.entry, apiKey: p.apiKey, limiter };
      out.push(slot);
      return slot;
    };
    // compare mode (docs/bench.md): the baseline run's retained observations stand for the
    // incumbent, so it is never called (and no A-A pair is drawn); only the candidate spends
    const inc = spec.compare ? undefined : add(spec.incumbent, 'incumbent', spec.incumbent.id);
    if (inc && spec.aa_share > 0) {
      // the A-A call shares the incumbent's limits (same provider and model)
      add(spec.incumbent, 'incumbent_aa', aaArmId(spec.incumbent.id), inc);
    }
    for (const c of spec.candidates) add(c, 'candidate', c.id);
    return out;
  }

  /** Creates (or joins) the shared durable consumer and starts pulling. */
  async start(): Promise<void> {
    if (!this.campaign.spec.compare && !this.slots.some((s) => s.role === 'incumbent')) {
      this.log.error({}, 'the incumbent arm cannot be dispatched; campaign not consumed');
      return;
    }
    const n = this.ctx.bus.names;
    const spec = this.campaign.spec;
    if (spec.source !== 'live') {
      this.frozen = await FrozenSource.load(this.ctx.bus, this.id, spec.source);
      if (!this.frozen) {
        this.log.error({ source: spec.source }, 'the frozen dataset is not stored; campaign not consumed');
        return;
      }
    }
    const filter =
      spec.call_types.length === 1 ? n.captureFilter(spec.suite, spec.call_types[0]) : n.captureFilter(spec.suite);
    const cfg = {
      durable_name: this.durable,
      ack_policy: AckPolicy.Explicit,
      filter_subject: filter,
      ack_wait: this.ctx.ackWaitMs * 1_000_000,
      max_ack_pending: Math.max(100, this.ctx.itemConcurrency * 32),
      max_deliver: -1,
      ...(this.frozen === null
        ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: this.campaign.created_at }
        : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: this.frozen.startSeq }),
    };
    // references gone from the stream are excluded with a reason before anything is dispatched
    if (this.frozen) await this.frozen.checkStream();
    try {
      await this.ctx.bus.jsm.consumers.add(n.streams.capture, cfg);
    } catch (e) {
      // another worker created it first (possibly with other settings): join it as it is
      await this.ctx.bus.jsm.consumers.info(n.streams.capture, this.durable).catch(() => {
        throw e;
      });
    }
    const consumer = await this.ctx.bus.js.consumers.get(n.streams.capture, this.durable);
    this.messages = await consumer.consume({ max_messages: this.ctx.itemConcurrency });
    this.loop = this.pull(this.messages);
    this.lagTimer = setInterval(() => {
      consumer
        .info(true)
        .then((i) => (this.lag = i.num_pending))
        .catch(() => undefined);
      // a frozen run ends when its dataset is used up, whether or not more captures arrive
      if (this.frozen) void this.maybeComplete().catch((e) => this.log.warn({ err: e }, 'completion check failed'));
    }, 2000);
    this.lagTimer.unref();
    this.log.info({ durable: this.durable, filter }, 'consuming campaign');
    if (this.frozen) void this.maybeComplete().catch((e) => this.log.warn({ err: e }, 'completion check failed'));
  }

  private async pull(messages: ConsumerMessages): Promise<void> {
    for await (const m of messages) {
      while (this.active >= this.ctx.itemConcurrency) await new Promise<void>((r) => (this.wake = r));
      if (this.stopped) {
        m.nak();
        continue;
      }
      this.active++;
      void this.handle(m).finally(() => {
        this.active--;
        const w = this.wake;
        this.wake = null;
        w?.();
      });
    }
  }

  /** The campaign's state as this runner last saw it. */
  get state(): Campaign['state'] {
    return this.campaign.state;
  }

  /** Takes the campaign's latest KV value (state changes). */
  update(c: Campaign): void {
    this.campaign = c;
  }

  /** Stops pulling; in-flight items finish (their calls, settlements and acks). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.lagTimer) clearInterval(this.lagTimer);
    await this.messages?.close().catch(() => undefined);
    await this.loop?.catch(() => undefined);
    while (this.active > 0) await sleep(20);
    await Promise.race([
      Promise.all([...[...new Set(this.slots.map((s) => s.limiter))].map((l) => l.close()), this.judge?.close()]),
      sleep(3000),
    ]);
  }

  private async handle(m: JsMsg): Promise<void> {
    let env: Envelope;
    try {
      env = Envelope.parse(m.json());
    } catch (e) {
      this.log.warn({ err: e, seq: m.seq }, 'capture is not a valid envelope; terminated');
      m.term();
      return;
    }
    if (!this.campaign.spec.call_types.includes(env.call_type) || env.suite !== this.campaign.spec.suite) {
      m.ack();
      return;
    }
    if (this.frozen && (await this.frozen.classify(m.seq, env.envelope_id, env.item_hash)) === 'skip') {
      m.ack(); // not one of the dataset's captures: a frozen run dispatches no live traffic
      return;
    }
    if (this.localItems.has(env.envelope_id)) {
      // another delivery of this very capture is being handled here right now
      m.nak(Math.max(500, Math.floor(this.ctx.ackWaitMs / 2)));
      return;
    }
    this.localItems.add(env.envelope_id);
    const hb = setInterval(() => m.working(), Math.max(100, Math.floor(this.ctx.ackWaitMs / 3)));
    try {
      const v = await itemSpan(this.id, env, () => this.processItem(env));
      if (v.ack) m.ack();
      else m.nak(v.delayMs);
    } catch (e) {
      this.log.error({ err: e, itemHash: env.item_hash }, 'item processing failed; will be redelivered');
      m.nak(2000);
    } finally {
      clearInterval(hb);
      this.localItems.delete(env.envelope_id);
    }
    this.completeSoon();
  }

  /**
   * Runs a completion check after an item, coalesced: while one runs, the items that finish ask
   * for a single further check that starts when it ends (it sees all of them), instead of one
   * ledger and counter read each.
   */
  private completeSoon(): void {
    if (this.completing) {
      this.completeAgain = true;
      return;
    }
    this.completing = true;
    void this.maybeComplete()
      .catch((e) => this.log.warn({ err: e }, 'completion check failed'))
      .finally(() => {
        this.completing = false;
        if (this.completeAgain) {
          this.completeAgain = false;
          this.completeSoon();
        }
      });
  }

  // ------------------------------------------------------------------ item protocol

  private async processItem(env: Envelope): Promise<Verdict> {
    const spec = this.campaign.spec;
    if (this.campaign.state !== 'running') return this.processInactive(env, this.campaign.state);
    if (spec.deadline && Date.now() > Date.parse(spec.deadline)) {
      await this.event(env, 'excluded', 'after_deadline', `x.${this.id}.${env.envelope_id}`);
      return ACK;
    }
    if (!spec.traffic_classes.includes(env.traffic_class)) {
      await this.event(env, 'excluded', 'traffic_class', `x.${this.id}.${env.envelope_id}`);
      this.ctx.metrics.items.inc({ outcome: 'excluded' });
      return ACK;
    }
    if (!isSampled(this.id, env.item_hash, spec.sample_rate)) {
      this.ctx.metrics.items.inc({ outcome: 'not_sampled' });
      return ACK;
    }
    if (!this.ctx.gate.enabled()) return later(1000);

    const key = dispatchKeys.item(this.id, env.item_hash);
    let claim = await this.claims.get(key);
    if (!claim) {
      const value: ItemClaim = {
        kind: 'item',
        state: 'claimed',
        envelope_id: env.envelope_id,
        worker_id: this.ctx.workerId,
        reason: null,
        at: new Date().toISOString(),
      };
      const rev = await this.claims.create(key, value);
      claim = rev === null ? await this.claims.get(key) : { value, revision: rev };
      if (!claim) return later(500);
    }
    if (claim.value.envelope_id !== env.envelope_id) {
      // an exact duplicate of an item already claimed: it only adds weight
      await this.event(env, 'duplicate', null, `dup.${this.id}.${env.envelope_id}`);
      this.ctx.metrics.items.inc({ outcome: 'duplicate' });
      return ACK;
    }
    if (claim.value.state === 'excluded' || claim.value.state === 'finished') return ACK;

    const body = await this.resolveBody(env);
    const plans = planArms(this.campaign, this.slots, env, body);
    if (!Array.isArray(plans)) return this.exclude(env, key, claim.revision, plans.reason);
    if (spec.instrument === 'replay') return this.replayItem(env, key, claim, plans, body);

    if (claim.value.state === 'claimed') {
      const r = await this.admit(env, key, claim.revision, plans);
      if (r !== 'admitted') return r;
    }
    return this.dispatch(env, key, body, plans);
  }

  /**
   * An item delivered while the campaign is not running: nothing new is invoked, but whatever
   * the item holds is accounted for, in every state. Admitted items: arms lost in flight (owner
   * dead) are charged their upper bound, done arms re-published and settled, and — unless the
   * campaign is only paused — arms never started are released; the item is then finished (all
   * arms done) or excluded (`lost_in_flight`, or `campaign_<state>`). An admission a crash
   * interrupted (reserved, not yet recorded) is released in a terminal state. A paused campaign
   * keeps everything else for its resumption (redelivered later); a terminal one acks it.
   */
  private async processInactive(env: Envelope, state: Campaign['state']): Promise<Verdict> {
    const paused = state === 'paused';
    const key = dispatchKeys.item(this.id, env.item_hash);
    const claim = await this.claims.get(key);
    if (
      !claim ||
      claim.value.envelope_id !== env.envelope_id ||
      claim.value.state === 'excluded' ||
      claim.value.state === 'finished'
    )
      return paused ? later(2000) : ACK;
    const body = await this.resolveBody(env);
    const plans = planArms(this.campaign, this.slots, env, body);
    if (!Array.isArray(plans)) return this.exclude(env, key, claim.revision, plans.reason); // nothing was reserved for it
    if (claim.value.state === 'claimed') {
      if (paused) return later(2000);
      // reserved at admission but not yet counted/recorded when a worker died: release it
      const s = await this.ctx.ledger.settle(
        this.id,
        { ids: plans.map((p) => reservationIds.arm(env.item_hash, p.slot.armId, 1)) },
        0,
      );
      if (s.found)
        this.log.info(
          { itemHash: env.item_hash, releasedMicroUsd: s.releasedMicroUsd },
          'admission interrupted by a crash released (campaign not running)',
        );
      return this.exclude(env, key, claim.revision, `campaign_${state}`);
    }
    const armKey = (p: ArmPlan) => dispatchKeys.arm(this.id, env.item_hash, p.slot.armId);
    const states = await Promise.all(plans.map((p) => this.arms.get(armKey(p))));
    // as when running: only another live worker's call defers the item (one of this worker's own
    // is an orphan of a handling that failed: this process handles one delivery of it at a time)
    for (const st of states) {
      if (
        st &&
        st.value.state === 'invoking' &&
        st.value.worker_id !== this.ctx.workerId &&
        (await this.ctx.leases.alive(st.value.worker_id))
      )
        return later(this.ctx.leases.ttlMs);
    }
    const anyLost = states.some((st) => st && (st.value.state === 'lost' || st.value.state === 'invoking'));
    if (paused && !anyLost) return later(2000);
    if (states.every((st) => st?.value.state === 'done')) {
      for (let i = 0; i < plans.length; i++) await this.publishAndSettle(env, plans[i]!, states[i]!.value);
      if (this.judge) {
        // no new judge call; recorded ones are published, lost ones recovered, the rest named
        const arms = await this.judgedEarlier(plans, states);
        const j = await this.judge.judgeItem(env, body, arms, {
          newCalls: false,
          notRunReason: `judge_not_run:campaign_${state}`,
        });
        if (j) return later(j.deferMs);
      }
      await this.finishClaim(key);
      return ACK;
    }
    for (let i = 0; i < plans.length; i++) await this.recoverArm(env, plans[i]!, armKey(plans[i]!), states[i] ?? null);
    const reason = anyLost ? 'lost_in_flight' : `campaign_${state}`;
    await this.event(env, 'excluded', reason, `${anyLost ? 'lost' : 'x'}.${this.id}.${env.item_hash}`);
    this.ctx.metrics.items.inc({ outcome: anyLost ? 'lost_in_flight' : 'excluded' });
    await this.finishClaim(key);
    return ACK;
  }

  /**
   * True while this campaign's ledger holds reservations: a runner of a campaign that is no
   * longer running keeps consuming until then, so no reservation is stranded.
   */
  async holdsReservations(): Promise<boolean> {
    const l = await this.ctx.ledger.snapshot(this.id);
    return l !== null && l.reserved_micro_usd > 0;
  }

  private async exclude(env: Envelope, key: string, revision: number, reason: string): Promise<Verdict> {
    const cur = await this.claims.get(key);
    if (cur && cur.value.state !== 'excluded')
      await this.claims.update(
        key,
        { ...cur.value, state: 'excluded', reason, at: new Date().toISOString() },
        cur.revision ?? revision,
      );
    await this.event(env, 'excluded', reason, `x.${this.id}.${env.item_hash}`);
    this.ctx.metrics.items.inc({ outcome: 'excluded' });
    return ACK;
  }

  /** claimed → reserved: reserve every arm's first attempt, then take a max_items slot. */
  private async admit(env: Envelope, key: string, revision: number, plans: ArmPlan[]): Promise<'admitted' | Verdict> {
    const spec = this.campaign.spec;
    const counterKey = dispatchKeys.admitted(this.id, env.call_type);
    const count = (await this.counters.get(counterKey))?.value.count ?? 0;
    if (count >= spec.max_items) return this.exclude(env, key, revision, 'over_max_items');
    const parts: Record<string, number> = {};
    for (const p of plans) parts[reservationIds.arm(env.item_hash, p.slot.armId, 1)] = p.boundMicroUsd;
    const r = await this.ctx.ledger.reserve(this.id, parts);
    if (!r.ok) {
      if (r.reason === 'no_ledger') {
        this.log.warn({}, 'campaign has no budget ledger yet; item retried later');
        return later(2000);
      }
      if (r.reason === 'already_settled') {
        // only an admission refused for max_items releases first attempts before the claim
        // records it (a crash in between): finish that exclusion
        return this.exclude(env, key, revision, 'over_max_items');
      }
      this.ctx.metrics.reservations.inc({ result: 'refused' });
      await this.markBudgetExhausted();
      return this.exclude(env, key, revision, 'budget_exhausted');
    }
    this.ctx.metrics.reservations.inc({ result: 'granted' });
    const total = Object.values(parts).reduce((a, b) => a + b, 0);
    this.ctx.metrics.reservedUsd.inc(total / 1e6);
    const admitted = await this.takeSlot(env);
    if (!admitted) {
      await this.ctx.ledger.settle(this.id, { ids: Object.keys(parts) }, 0);
      this.ctx.metrics.reservedUsd.dec(total / 1e6);
      return this.exclude(env, key, revision, 'over_max_items');
    }
    const cur = await this.claims.get(key);
    if (!cur) return later(500);
    if (cur.value.state === 'claimed') {
      const ok = await this.claims.update(
        key,
        { ...cur.value, state: 'reserved', at: new Date().toISOString() },
        cur.revision,
      );
      if (ok === null) return later(500);
    }
    this.ctx.metrics.reservedUsd.dec(total / 1e6);
    return 'admitted';
  }

  /** Takes one of the call type's max_items slots for the item (by CAS); false when they are all taken. */
  private async takeSlot(env: Envelope): Promise<boolean> {
    const max = this.campaign.spec.max_items;
    let admitted = false;
    const tag = env.item_hash.slice(0, 16);
    await this.counters.mutate(dispatchKeys.admitted(this.id, env.call_type), (cur) => {
      const c = cur?.count ?? 0;
      const recent = cur?.recent ?? [];
      if (recent.includes(tag)) {
        admitted = true; // counted before a crash: do not count again
        return undefined;
      }
      admitted = c < max;
      return admitted ? { count: c + 1, recent: [...recent.slice(-(RECENT_ADMITTED - 1)), tag] } : undefined;
    });
    return admitted;
  }

  /**
   * Instrument `replay` (docs/bench.md "Instruments"): no arm is called, nothing is reserved or
   * spent. The capture's served production usage is priced on each arm's rate card — the
   * incumbent's and every candidate's — so the candidate's token counts are assumed equal to the
   * incumbent's (no candidate tokenizer is run). An item whose capture has no 2xx served summary
   * is excluded as `replay_no_served_response`, one without both token counts as
   * `replay_no_served_usage`. The observations are a function of the capture and the pinned spec
   * alone, so a redelivery publishes the same ones (and JetStream de-duplicates them).
   */
  private async replayItem(
    env: Envelope,
    key: string,
    claim: { value: ItemClaim; revision: number },
    plans: ArmPlan[],
    body: unknown,
  ): Promise<Verdict> {
    const served = env.served;
    if (!served || served.status < 200 || served.status >= 300 || served.abandoned)
      return this.exclude(env, key, claim.revision, 'replay_no_served_response');
    if (served.usage.input_tokens === null || served.usage.output_tokens === null)
      return this.exclude(env, key, claim.revision, 'replay_no_served_usage');
    if (claim.value.state === 'claimed') {
      if (!(await this.takeSlot(env))) return this.exclude(env, key, claim.revision, 'over_max_items');
      const cur = await this.claims.get(key);
      if (!cur) return later(500);
      if (cur.value.state === 'claimed') {
        const ok = await this.claims.update(
          key,
          { ...cur.value, state: 'reserved', at: new Date().toISOString() },
          cur.revision,
        );
        if (ok === null) return later(500);
      }
    }
    const simhash = simhash64(requestPromptText(env.api, body));
    const startMs = Date.parse(env.captured_at);
    for (const p of plans) {
      const inc = p.slot.role === 'incumbent';
      // the served usage as the candidate's too, without the incumbent provider's raw block
      const usage = inc ? served.usage : { ...served.usage, raw: null };
      const obs: Observation = {
        schema: 'shadow.observation/v1',
        campaign_id: this.id,
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
      await this.ctx.bus.js.publish(this.ctx.bus.names.obsSubject(this.id), JSON.stringify(obs), {
        msgID: dispatchKeys.arm(this.id, env.item_hash, p.slot.armId),
      });
    }
    this.ctx.metrics.items.inc({ outcome: 'replayed' });
    await this.finishClaim(key);
    return ACK;
  }

  /** reserved → finished: invoke arms not yet invoked, recover lost ones, publish, settle. */
  private async dispatch(env: Envelope, key: string, body: unknown, plans: ArmPlan[]): Promise<Verdict> {
    const armKey = (p: ArmPlan) => dispatchKeys.arm(this.id, env.item_hash, p.slot.armId);
    const states = await Promise.all(plans.map((p) => this.arms.get(armKey(p))));
    // an arm still being invoked by a live worker: leave the item to it and look again later
    for (let i = 0; i < plans.length; i++) {
      const s = states[i];
      if (
        s &&
        s.value.state === 'invoking' &&
        s.value.worker_id !== this.ctx.workerId &&
        (await this.ctx.leases.alive(s.value.worker_id))
      )
        return later(this.ctx.leases.ttlMs);
    }
    const lostNow = states.some((s) => s && (s.value.state === 'lost' || s.value.state === 'invoking'));
    if (lostNow) {
      for (let i = 0; i < plans.length; i++)
        await this.recoverArm(env, plans[i]!, armKey(plans[i]!), states[i] ?? null);
      await this.event(env, 'excluded', 'lost_in_flight', `lost.${this.id}.${env.item_hash}`);
      this.ctx.metrics.items.inc({ outcome: 'lost_in_flight' });
      await this.finishClaim(key);
      return ACK;
    }
    // arms already done (a redelivery after a crash past their done record): re-publish and settle
    for (let i = 0; i < plans.length; i++) {
      const s = states[i];
      if (s && s.value.state === 'done') await this.publishAndSettle(env, plans[i]!, s.value);
    }
    const todo = plans.filter((_, i) => states[i] === null);
    // two-phase start for contemporaneous arms: every arm's `invoking` record and first-attempt
    // reservation are written first, then all first calls are released together
    const prepared = await Promise.all(todo.map((p) => this.prepareArm(env, p, armKey(p))));
    const results = await Promise.all(
      todo.map((p, i) =>
        prepared[i] !== null ? invokeArm(this.armCallDeps, env, p, armKey(p)) : Promise.resolve(null),
      ),
    );
    const starts = results.flatMap((r) => (r && r.attempts[0] ? [r.attempts[0].startedAtMs] : []));
    const firstStart = Math.min(...starts);
    const promptText = requestPromptText(env.api, body);
    const simhash = simhash64(promptText);
    const judged: JudgedArm[] = [];
    await Promise.all(
      todo.map(async (p, i) => {
        const r = results[i];
        if (!r) return; // never called (paid_dispatch went off first): retried on redelivery
        const obs = await buildObservation(
          this.ctx,
          this.campaign,
          env,
          p,
          r.attempts,
          r.chargedMicroUsd,
          r.attempts[0]!.startedAtMs - firstStart,
          simhash,
        );
        judged.push({
          armId: p.slot.armId,
          role: p.slot.role,
          provider: p.slot.provider.id,
          outputText: obs.status === 'ok' ? (r.attempts[r.attempts.length - 1]!.parsed?.outputText ?? null) : null,
        });
        const done: DispatchState = {
          state: 'done',
          worker_id: this.ctx.workerId,
          reserved_micro_usd: r.reservedMicroUsd,
          at: new Date().toISOString(),
          attempts: r.attempts.length,
          charged_micro_usd: r.chargedMicroUsd,
          observation: obs,
        };
        // written against the revision of our own `invoking` record: any other write since fails it
        if ((await this.arms.update(armKey(p), done, prepared[i]!)) === null)
          throw new Error(`dispatch state of ${armKey(p)} changed under us`);
        await this.publishAndSettle(env, p, done);
        const last = r.attempts[r.attempts.length - 1]!;
        this.ctx.metrics.dispatches.inc({ arm_role: p.slot.role, outcome: last.errorClass ?? 'ok' });
      }),
    );
    if (results.some((r) => r === null)) return later(1000);
    // the judge runs once the item's arms all settled, in this pass or an earlier one (its worker
    // died before or during the judge): judge-runner.ts reuses or recovers recorded judge calls
    if (this.judge) {
      const earlier = await this.judgedEarlier(plans, states);
      if (earlier.length + judged.length === plans.length) {
        const j = await this.judge.judgeItem(env, body, [...earlier, ...judged]);
        if (j) return later(j.deferMs);
      }
    }
    this.ctx.metrics.items.inc({ outcome: 'dispatched' });
    await this.finishClaim(key);
    return ACK;
  }

  /** The arms an earlier processing settled (`done`), as the judge sees them (outputs read back). */
  private judgedEarlier(plans: ArmPlan[], states: ({ value: DispatchState } | null)[]): Promise<JudgedArm[]> {
    return Promise.all(
      plans.flatMap((p, i) => {
        const st = states[i];
        if (!st || st.value.state !== 'done') return [];
        const arm = { armId: p.slot.armId, role: p.slot.role, provider: p.slot.provider.id };
        return [this.judge!.recordedArm(arm, st.value.observation)];
      }),
    );
  }

  private async finishClaim(key: string): Promise<void> {
    await this.claims.mutate(key, (cur) =>
      cur && cur.state !== 'finished' ? { ...cur, state: 'finished', at: new Date().toISOString() } : undefined,
    );
  }

  /**
   * Recovery of one arm of an item that lost an arm in flight (the item is ineligible):
   * `invoking` by a dead worker → `lost`, charged everything reserved for it (its upper bound);
   * never started → `lost` with charge 0 (its reservation released; it will never be invoked);
   * `done` → re-published and settled; `lost` → its settlement completed.
   */
  private async recoverArm(
    env: Envelope,
    p: ArmPlan,
    key: string,
    st: { value: DispatchState; revision: number } | null,
  ): Promise<void> {
    const prefix = reservationIds.armPrefix(env.item_hash, p.slot.armId);
    if (st === null) {
      const v: DispatchState = {
        state: 'lost',
        worker_id: this.ctx.workerId,
        reserved_micro_usd: 0,
        at: new Date().toISOString(),
        attempts: 0,
        charged_micro_usd: 0,
      };
      if ((await this.arms.create(key, v)) === null) return this.recoverArm(env, p, key, await this.arms.get(key));
      await this.ctx.ledger.settle(this.id, { prefix }, 0);
      this.ctx.metrics.dispatches.inc({ arm_role: p.slot.role, outcome: 'not_invoked' });
      return;
    }
    if (st.value.state === 'done') return this.publishAndSettle(env, p, st.value);
    if (st.value.state === 'invoking') {
      // its owner is dead (checked by the caller): what it reserved is what it may have spent
      const charge = await this.ctx.ledger.outstandingFor(this.id, prefix);
      const v: DispatchState = {
        ...st.value,
        state: 'lost',
        at: new Date().toISOString(),
        charged_micro_usd: charge,
        reserved_micro_usd: Math.max(st.value.reserved_micro_usd, charge),
      };
      if ((await this.arms.update(key, v, st.revision)) === null)
        return this.recoverArm(env, p, key, await this.arms.get(key));
      const s = await this.ctx.ledger.settle(this.id, { prefix }, 'reserved');
      this.ctx.metrics.spendUsd.inc(s.settledMicroUsd / 1e6);
      this.ctx.metrics.dispatches.inc({ arm_role: p.slot.role, outcome: 'lost' });
      this.log.warn(
        { itemHash: env.item_hash, armId: p.slot.armId, deadWorker: st.value.worker_id, chargedMicroUsd: charge },
        'arm lost in flight; charged at its upper bound',
      );
      return;
    }
    // lost: finish a settlement a crash may have interrupted (idempotent)
    const s = await this.ctx.ledger.settle(this.id, { prefix }, 'reserved');
    if (s.found) this.ctx.metrics.spendUsd.inc(s.settledMicroUsd / 1e6);
  }

  private async publishAndSettle(env: Envelope, p: ArmPlan, st: DispatchState): Promise<void> {
    if (st.observation) {
      await this.ctx.bus.js.publish(this.ctx.bus.names.obsSubject(this.id), JSON.stringify(st.observation), {
        msgID: dispatchKeys.arm(this.id, env.item_hash, p.slot.armId), // one observation per arm call
      });
    }
    const s = await this.ctx.ledger.settle(
      this.id,
      { prefix: reservationIds.armPrefix(env.item_hash, p.slot.armId) },
      st.charged_micro_usd ?? 'reserved',
    );
    if (s.found) this.ctx.metrics.spendUsd.inc(s.settledMicroUsd / 1e6);
    if (s.overchargeMicroUsd > 0) this.ctx.metrics.overcharges.inc();
  }

  /**
   * Phase 1 of an arm: ensures its first attempt is reserved (idempotent; normally done at
   * admission) and records `invoking` before any call. Returns the record's revision (the done
   * record is written against it), or null = not startable now (budget refused).
   */
  private async prepareArm(env: Envelope, p: ArmPlan, key: string): Promise<number | null> {
    const r = await this.ctx.ledger.reserve(this.id, {
      [reservationIds.arm(env.item_hash, p.slot.armId, 1)]: p.boundMicroUsd,
    });
    if (!r.ok) {
      this.ctx.metrics.reservations.inc({ result: 'refused' });
      if (r.reason === 'budget_exhausted') await this.markBudgetExhausted();
      return null;
    }
    const base: DispatchState = {
      state: 'invoking',
      worker_id: this.ctx.workerId,
      reserved_micro_usd: p.boundMicroUsd,
      at: new Date().toISOString(),
      attempts: 0,
    };
    const rev = await this.arms.create(key, base);
    if (rev === null) throw new Error(`arm ${key} was claimed by another worker`);
    return rev;
  }

  private async resolveBody(env: Envelope): Promise<unknown> {
    if (env.request.body !== null && env.request.body !== undefined) return env.request.body;
    const ref = env.request.body_ref;
    if (!ref) return null;
    const bytes = await this.ctx.captureBodies.getBlob(ref.name);
    if (!bytes) throw new Error(`capture body ${ref.name} is missing`);
    if (sha256Hex(bytes) !== ref.sha256) throw new Error(`capture body ${ref.name} does not match its sha256`);
    return JSON.parse(new TextDecoder().decode(bytes));
  }

  /** Publishes an item event; `msgID` (JetStream de-duplication) must contain the campaign id, as OBS is shared by every campaign. */
  private async event(env: Envelope, kind: ItemEvent['kind'], reason: string | null, msgID: string): Promise<void> {
    const ev: ItemEvent = {
      schema: 'shadow.item_event/v1',
      campaign_id: this.id,
      item_hash: env.item_hash,
      call_type: env.call_type,
      envelope_id: env.envelope_id,
      kind,
      reason,
      at: new Date().toISOString(),
    };
    await this.ctx.bus.js.publish(this.ctx.bus.names.obsSubject(this.id), JSON.stringify(ev), { msgID });
  }

  private async markBudgetExhausted(): Promise<void> {
    await this.ctx.ledger.markExhausted(this.id);
    await this.transition('budget_exhausted', 'a budget reservation was refused');
  }

  private async transition(to: 'budget_exhausted' | 'completed', reason: string): Promise<void> {
    const r = await this.ctx.campaigns.mutate(this.id, (cur) =>
      cur && cur.state === 'running'
        ? { ...cur, state: to, state_reason: reason, updated_at: new Date().toISOString() }
        : undefined,
    );
    if (r.changed) {
      this.log.info({ state: to, reason }, 'campaign state changed');
      if (r.value) this.campaign = r.value;
    }
  }

  /**
   * A frozen run is done when every referenced capture still in the stream was acknowledged (the
   * consumer's ack floor passed the last one, or nothing is pending) and nothing is in flight;
   * references that vanished meanwhile and whose items were never claimed are excluded first.
   */
  private async frozenDone(): Promise<boolean> {
    const f = this.frozen!;
    const info = await this.ctx.bus.jsm.consumers.info(this.ctx.bus.names.streams.capture, this.durable);
    if (info.num_ack_pending > 0) return false;
    if (info.ack_floor.stream_seq < f.maxPresentSeq && info.num_pending > 0) return false;
    await f.checkStream(async (item) => (await this.claims.get(`${this.id}.${item}`)) !== null);
    return true;
  }

  /**
   * Marks the campaign `completed` when every call type has max_items items admitted and no
   * reservation is outstanding (so every admitted item has settled and published), or when
   * the deadline passed and nothing is outstanding.
   */
  async maybeComplete(): Promise<void> {
    if (this.campaign.state !== 'running') return;
    const l = await this.ctx.ledger.snapshot(this.id);
    if (!l || l.reserved_micro_usd > 0) return;
    const spec = this.campaign.spec;
    if (spec.deadline && Date.now() > Date.parse(spec.deadline)) {
      await this.transition('completed', 'deadline_reached');
      return this.compactSettlements();
    }
    if (this.frozen && (await this.frozenDone())) {
      await this.transition('completed', 'dataset_exhausted');
      return this.compactSettlements();
    }
    for (const ct of spec.call_types) {
      const c = (await this.counters.get(dispatchKeys.admitted(this.id, ct)))?.value.count ?? 0;
      if (c < spec.max_items) return;
    }
    await this.transition('completed', 'max_items_reached');
    await this.compactSettlements();
  }

  /** Completed with nothing outstanding: its settlement records go (the ledger closes first; libs/budget compactSettled). */
  private async compactSettlements(): Promise<void> {
    if (this.campaign.state !== 'completed') return;
    try {
      const r = await this.ctx.ledger.compactSettled(this.id);
      this.log.info(r, 'settlement records compacted');
    } catch (err) {
      // records left behind are only storage; a later completion check removes them
      this.log.warn({ err }, 'settlement record compaction failed');
    }
  }
}
