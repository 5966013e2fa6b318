import type { Campaign } from '@shadowplane/contracts';
import type { RunnerContext } from './campaign/context.js';
import { closeCampaignState, createCampaignState, type CampaignState } from './campaign/state.js';
import { CampaignConsumer } from './campaign/consumer.js';
import { holdsReservations, maybeComplete } from './campaign/completion.js';

export type { RunnerContext } from './campaign/context.js';
export { isAaItem, isSampled } from './campaign/plan.js';
export { ItemClaim } from './campaign/records.js';

/**
 * Consumes one running campaign: a durable pull consumer on CAPTURE shared by every worker
 * (campaign/consumer.ts), and the per-item protocol (claim → reserve → count → invoke arms →
 * observe → settle → ack; campaign/item.ts and the modules it calls). See the package README
 * section "Dispatch protocol" for the crash analysis. The per-campaign state the modules share
 * is one explicit record (campaign/state.ts).
 */
export class CampaignRunner {
  readonly id: string;
  private readonly s: CampaignState;
  private readonly consumer: CampaignConsumer;

  constructor(ctx: RunnerContext, campaign: Campaign) {
    this.id = campaign.id;
    this.s = createCampaignState(ctx, campaign);
    this.consumer = new CampaignConsumer(this.s);
  }

  /** Names the consumer: one durable per campaign, shared by all workers. */
  get durable(): string {
    return this.s.durable;
  }

  /** Messages pending on the consumer at its last look (every 2 s). */
  get lag(): number {
    return this.consumer.lag;
  }

  /** Creates (or joins) the shared durable consumer and starts pulling. */
  start(): Promise<void> {
    return this.consumer.start();
  }

  /** The campaign's state as this runner last saw it. */
  get state(): Campaign['state'] {
    return this.s.campaign.state;
  }

  /** Takes the campaign's latest KV value (state changes). */
  update(c: Campaign): void {
    this.s.campaign = c;
  }

  /** Stops pulling; in-flight items finish (their calls, settlements and acks). */
  async stop(): Promise<void> {
    await this.consumer.stop();
    await closeCampaignState(this.s);
  }

  /**
   * True while this campaign's ledger holds reservations: a runner of a campaign that is no
   * longer running keeps consuming until then, so no reservation is stranded.
   */
  holdsReservations(): Promise<boolean> {
    return holdsReservations(this.s);
  }

  /**
   * Marks the campaign `completed` when every call type has max_items items admitted and no
   * reservation is outstanding (so every admitted item has settled and published), or when
   * the deadline passed and nothing is outstanding.
   */
  maybeComplete(): Promise<void> {
    return maybeComplete(this.s);
  }
}
