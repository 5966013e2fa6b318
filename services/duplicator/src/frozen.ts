/**
 * The source of a frozen campaign (`source: frozen:<dataset_hash>`): the dataset's references
 * into the CAPTURE stream decide which captures are dispatched. Every referenced capture is
 * handled (the first of an item is dispatched, the others add its weight as `duplicate` events,
 * so weights are kept); anything else on the subject — live traffic — is acknowledged untouched.
 *
 * A referenced capture no longer in the stream (aged out, deleted, or a different message at that
 * sequence) makes its item ineligible: an `excluded` item event with reason `capture_expired` or
 * `capture_mismatch` is published for it, so the report shows it and it is never silently missing.
 * Source: issue 17 item 3.
 */
import type { Bus } from '@shadowplane/bus';
import { openObjectStore } from '@shadowplane/bus';
import { Dataset, type ItemEvent } from '@shadowplane/contracts';

/** What a frozen source says about one delivered capture. */
export type FrozenVerdict = 'dispatch' | 'skip';

/** One frozen campaign's view of its dataset. */
export class FrozenSource {
  private readonly bySeq = new Map<number, { item: string; envelope: string }>();
  /** items made ineligible (a capture of theirs is missing or not what the dataset recorded) */
  private readonly ineligible = new Set<string>();
  /** highest referenced sequence still in the stream at the last check (0: none) */
  maxPresentSeq = 0;

  private constructor(
    private readonly bus: Bus,
    private readonly campaignId: string,
    readonly dataset: Dataset,
  ) {
    for (const it of dataset.items)
      for (const r of it.refs) this.bySeq.set(r.seq, { item: it.item_hash, envelope: r.envelope_id });
  }

  /**
   * Loads the dataset named by a `frozen:<hash>` source, or null when it is not stored (the
   * control API refuses such a launch; a dataset deleted since is logged by the caller).
   */
  static async load(bus: Bus, campaignId: string, source: string): Promise<FrozenSource | null> {
    const hash = source.slice('frozen:'.length);
    const store = await openObjectStore(bus, bus.names.datasets);
    const b = await store.getBlob(hash);
    if (!b) return null;
    return new FrozenSource(bus, campaignId, Dataset.parse(JSON.parse(new TextDecoder().decode(b))));
  }

  /** The first stream sequence worth delivering. */
  get startSeq(): number {
    let min = Infinity;
    for (const s of this.bySeq.keys()) if (s < min) min = s;
    return Number.isFinite(min) ? min : 1;
  }

  /**
   * Whether a delivered capture belongs to the dataset. A referenced sequence holding another
   * envelope makes its item ineligible (`capture_mismatch`, published once).
   */
  async classify(seq: number, envelopeId: string, itemHash: string): Promise<FrozenVerdict> {
    const ref = this.bySeq.get(seq);
    if (!ref) return 'skip';
    if (ref.envelope !== envelopeId || ref.item !== itemHash) {
      await this.makeIneligible(ref.item, 'capture_mismatch');
      return 'skip';
    }
    return this.ineligible.has(ref.item) ? 'skip' : 'dispatch';
  }

  /**
   * Checks every reference against the stream (first/last sequence and deleted sequences) and
   * publishes `capture_expired` for each item with a capture gone. `skipItem` leaves out items
   * already handled (checked again at completion). Returns the number of items newly excluded.
   */
  async checkStream(skipItem: (itemHash: string) => Promise<boolean> = async () => false): Promise<number> {
    const info = await this.bus.jsm.streams.info(this.bus.names.streams.capture, { deleted_details: true });
    const first = info.state.first_seq;
    const last = info.state.last_seq;
    const deleted = new Set(info.state.deleted ?? []);
    const gone = new Set<string>();
    let maxPresent = 0;
    for (const [seq, ref] of this.bySeq) {
      if (seq < first || seq > last || deleted.has(seq) || info.state.messages === 0) gone.add(ref.item);
      else if (seq > maxPresent) maxPresent = seq;
    }
    this.maxPresentSeq = maxPresent;
    let n = 0;
    for (const item of gone) {
      if (this.ineligible.has(item) || (await skipItem(item))) continue;
      await this.makeIneligible(item, 'capture_expired');
      n++;
    }
    return n;
  }

  private async makeIneligible(item: string, reason: 'capture_expired' | 'capture_mismatch'): Promise<void> {
    if (this.ineligible.has(item)) return;
    this.ineligible.add(item);
    const it = this.dataset.items.find((x) => x.item_hash === item)!;
    const ev: ItemEvent = {
      schema: 'shadow.item_event/v1',
      campaign_id: this.campaignId,
      item_hash: item,
      call_type: this.dataset.call_type,
      envelope_id: it.refs[0]!.envelope_id,
      kind: 'excluded',
      reason,
      at: new Date().toISOString(),
    };
    // one event per item whichever worker finds it first (JetStream de-duplication by msgID)
    await this.bus.js.publish(this.bus.names.obsSubject(this.campaignId), JSON.stringify(ev), {
      msgID: `frozen.${this.campaignId}.${item}`,
    });
  }
}
