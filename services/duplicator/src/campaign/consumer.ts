// The campaign's share of its durable pull consumer on CAPTURE: creation (or joining), the pull
// loop bounded by the item concurrency, per-delivery handling (ack, nak, heartbeats), consumer
// lag, coalesced completion checks, and draining on stop.
import { AckPolicy, DeliverPolicy, type JsMsg, type ConsumerMessages } from '@nats-io/jetstream';
import { Envelope } from '@shadowplane/contracts';
import { itemSpan } from '../observe.js';
import { FrozenSource } from '../frozen.js';
import type { CampaignState } from './state.js';
import { processItem } from './item.js';
import { maybeComplete } from './completion.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** One worker's consumption of one campaign (see the package README section "Dispatch protocol"). */
export class CampaignConsumer {
  private messages: ConsumerMessages | null = null;
  private loop: Promise<void> | null = null;
  private active = 0;
  private wake: (() => void) | null = null;
  private stopped = false;
  private readonly localItems = new Set<string>();
  private lagTimer: NodeJS.Timeout | undefined;
  /** a post-item completion check is running / another was asked for meanwhile (completeSoon) */
  private completing = false;
  private completeAgain = false;
  /** messages pending on the consumer at its last look (every 2 s) */
  lag = 0;

  constructor(private readonly s: CampaignState) {}

  /** Creates (or joins) the shared durable consumer and starts pulling. */
  async start(): Promise<void> {
    const s = this.s;
    const incumbentCalled = !s.campaign.spec.compare && s.campaign.spec.instrument !== 'judged_dataset_run';
    if (incumbentCalled && !s.slots.some((x) => x.role === 'incumbent')) {
      s.log.error({}, 'the incumbent arm cannot be dispatched; campaign not consumed');
      return;
    }
    const n = s.ctx.bus.names;
    const spec = s.campaign.spec;
    if (spec.source !== 'live') {
      s.frozen = await FrozenSource.load(s.ctx.bus, s.id, spec.source);
      if (!s.frozen) {
        s.log.error({ source: spec.source }, 'the frozen dataset is not stored; campaign not consumed');
        return;
      }
    }
    const filter =
      spec.call_types.length === 1 ? n.captureFilter(spec.suite, spec.call_types[0]) : n.captureFilter(spec.suite);
    const cfg = {
      durable_name: s.durable,
      ack_policy: AckPolicy.Explicit,
      filter_subject: filter,
      ack_wait: s.ctx.ackWaitMs * 1_000_000,
      max_ack_pending: Math.max(100, s.ctx.itemConcurrency * 32),
      max_deliver: -1,
      ...(s.frozen === null
        ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: s.campaign.created_at }
        : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: s.frozen.startSeq }),
    };
    // references gone from the stream are excluded with a reason before anything is dispatched
    if (s.frozen) await s.frozen.checkStream();
    try {
      await s.ctx.bus.jsm.consumers.add(n.streams.capture, cfg);
    } catch (e) {
      // another worker created it first (possibly with other settings): join it as it is
      await s.ctx.bus.jsm.consumers.info(n.streams.capture, s.durable).catch(() => {
        throw e;
      });
    }
    const consumer = await s.ctx.bus.js.consumers.get(n.streams.capture, s.durable);
    this.messages = await consumer.consume({ max_messages: s.ctx.itemConcurrency });
    this.loop = this.pull(this.messages);
    this.lagTimer = setInterval(() => {
      consumer
        .info(true)
        .then((i) => (this.lag = i.num_pending))
        .catch(() => undefined);
      // a frozen run ends when its dataset is used up, whether or not more captures arrive
      if (s.frozen) void maybeComplete(s).catch((e) => s.log.warn({ err: e }, 'completion check failed'));
    }, 2000);
    this.lagTimer.unref();
    s.log.info({ durable: s.durable, filter }, 'consuming campaign');
    if (s.frozen) void maybeComplete(s).catch((e) => s.log.warn({ err: e }, 'completion check failed'));
  }

  private async pull(messages: ConsumerMessages): Promise<void> {
    for await (const m of messages) {
      while (this.active >= this.s.ctx.itemConcurrency) await new Promise<void>((r) => (this.wake = r));
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

  /** Stops pulling; in-flight items finish (their calls, settlements and acks). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.lagTimer) clearInterval(this.lagTimer);
    await this.messages?.close().catch(() => undefined);
    await this.loop?.catch(() => undefined);
    while (this.active > 0) await sleep(20);
  }

  private async handle(m: JsMsg): Promise<void> {
    const s = this.s;
    let env: Envelope;
    try {
      env = Envelope.parse(m.json());
    } catch (e) {
      s.log.warn({ err: e, seq: m.seq }, 'capture is not a valid envelope; terminated');
      m.term();
      return;
    }
    if (!s.campaign.spec.call_types.includes(env.call_type) || env.suite !== s.campaign.spec.suite) {
      m.ack();
      return;
    }
    if (s.frozen && (await s.frozen.classify(m.seq, env.envelope_id, env.item_hash)) === 'skip') {
      m.ack(); // not one of the dataset's captures: a frozen run dispatches no live traffic
      return;
    }
    if (this.localItems.has(env.envelope_id)) {
      // another delivery of this very capture is being handled here right now
      m.nak(Math.max(500, Math.floor(s.ctx.ackWaitMs / 2)));
      return;
    }
    this.localItems.add(env.envelope_id);
    const hb = setInterval(() => m.working(), Math.max(100, Math.floor(s.ctx.ackWaitMs / 3)));
    try {
      const v = await itemSpan(s.id, env, () => processItem(s, env));
      if (v.ack) m.ack();
      else m.nak(v.delayMs);
    } catch (e) {
      s.log.error({ err: e, itemHash: env.item_hash }, 'item processing failed; will be redelivered');
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
    void maybeComplete(this.s)
      .catch((e) => this.s.log.warn({ err: e }, 'completion check failed'))
      .finally(() => {
        this.completing = false;
        if (this.completeAgain) {
          this.completeAgain = false;
          this.completeSoon();
        }
      });
  }
}
