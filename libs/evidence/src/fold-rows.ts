/**
 * The bundle's row parts (cost evidence: one row per ok observation; paired rows: one per pair)
 * held compactly — table row numbers and the few values computed by the fold — and built as row
 * objects only when read. At 100k items × 3 arms the row objects were ~75 MB held from the
 * pairing stage to the end of the write; built on demand they live one at a time while the
 * bundle is hashed and written.
 *
 * {@link lazyRows} gives a part as a read-only array whose rows are built on each read (what the
 * offline fold writes); `toArray()` gives plain rows (what the verdict service stores). Both give
 * the same values, so the same canonical JSON and hashes.
 */
import type { CostEvidenceRow } from './bundle.js';
import type { PairRow } from './compare.js';
import type { ObsTable } from './obs-table.js';
import { floats, ints, type Col } from './fold-util.js';

/**
 * A read-only array of `length` rows, row i built by `at(i)` each time it is read. It is an
 * array to every reader (Array.isArray, length, indexing, iteration, filter, JSON.stringify,
 * canonical JSON); writes are refused (TypeError in strict mode). Rows read twice are equal,
 * not the same object.
 */
export function lazyRows<T>(length: number, at: (i: number) => T): T[] {
  const index = (k: string | symbol): number | null => {
    if (typeof k !== 'string') return null;
    const i = Number(k);
    return Number.isInteger(i) && i >= 0 && String(i) === k ? i : null;
  };
  return new Proxy<T[]>([], {
    get(target, k, receiver) {
      if (k === 'length') return length;
      const i = index(k);
      if (i !== null) return i < length ? at(i) : undefined;
      return Reflect.get(target, k, receiver) as unknown;
    },
    has(target, k) {
      const i = index(k);
      return i !== null ? i < length : Reflect.has(target, k);
    },
    ownKeys() {
      const keys: string[] = [];
      for (let i = 0; i < length; i++) keys.push(String(i));
      keys.push('length');
      return keys;
    },
    getOwnPropertyDescriptor(target, k) {
      if (k === 'length') return { value: length, writable: true, enumerable: false, configurable: false };
      const i = index(k);
      if (i !== null)
        return i < length ? { value: at(i), writable: false, enumerable: true, configurable: true } : undefined;
      return Reflect.getOwnPropertyDescriptor(target, k);
    },
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  });
}

/** The cost evidence rows of a fold: per ok observation its table row and its arm's group. */
export class CostRows {
  // one row per ok observation: at most one per table row
  private readonly rows: Col<Int32Array>;
  private readonly group: Col<Int32Array>;
  private readonly groups: { call_type: string; arm_id: string; basis: CostEvidenceRow['basis'] }[] = [];

  constructor(private readonly t: ObsTable) {
    this.rows = ints(t.length);
    this.group = ints(t.length);
  }

  /** Starts the rows of arm `armId` on call type `ct`, whose majority cost basis is `basis`. */
  startArm(ct: string, armId: string, basis: CostEvidenceRow['basis']): void {
    this.groups.push({ call_type: ct, arm_id: armId, basis });
  }

  /** Adds the ok observation at table row `row` to the current arm. */
  add(row: number): void {
    this.rows.push(row);
    this.group.push(this.groups.length - 1);
  }

  /** Rows held. */
  get length(): number {
    return this.rows.n;
  }

  /** Row i as the bundle writes it. */
  at(i: number): CostEvidenceRow {
    const g = this.groups[this.group.a[i]!]!;
    const o = this.t.row(this.rows.a[i]!);
    const cost = o.cost;
    const u = o.usage;
    return {
      call_type: g.call_type,
      arm_id: g.arm_id,
      obs_id: this.t.id(this.rows.a[i]!),
      item_hash: o.item_hash,
      basis: cost.basis,
      usd: cost.usd,
      on_basis: g.basis !== null && cost.basis === g.basis && cost.usd !== null,
      input_tokens: u.input_tokens,
      cache_read_input_tokens: u.cache_read_input_tokens,
      cache_creation_input_tokens: u.cache_creation_input_tokens,
      output_tokens: u.output_tokens,
      reasoning_output_tokens: u.reasoning_output_tokens,
      abandoned: o.abandoned,
    };
  }
}

/** What a paired row reads about its item, at the item's index in `admitted` (fold-items.ts). */
export interface PairItems {
  /** admitted item hashes, sorted */
  admitted: readonly string[];
  clusters: readonly string[];
  weights: Float64Array;
  /** table row of the item's first observation (its prompt SimHash) */
  firstRow: Int32Array;
}

/**
 * The paired rows of one comparison as columns: the item's index, both calls' table rows, the two
 * qualities, the pair's judge share and the row of its later-ending call; every other value is read
 * from the table and the items stage when a row is built. 100k row objects were ~11 MB of live heap
 * per comparison, one held through each candidate's statistics.
 */
export class PairStore {
  private readonly item: Col<Int32Array>;
  private readonly inc: Col<Int32Array>;
  private readonly cand: Col<Int32Array>;
  private readonly later: Col<Int32Array>;
  private readonly qInc: Col<Float64Array>;
  private readonly qCand: Col<Float64Array>;
  private readonly share: Col<Float64Array>;

  /** `capacity`: room for that many pairs; by default one per admitted item (the most there can be). */
  constructor(
    private readonly t: ObsTable,
    private readonly items: PairItems,
    capacity = items.admitted.length,
  ) {
    const n = capacity;
    this.item = ints(n);
    this.inc = ints(n);
    this.cand = ints(n);
    this.later = ints(n);
    this.qInc = floats(n);
    this.qCand = floats(n);
    this.share = floats(n);
  }

  /** Rows held. */
  get length(): number {
    return this.item.n;
  }

  /**
   * Adds the pair of admitted item `i` (index in `items.admitted`): table rows of the incumbent's and
   * the candidate's calls, their qualities, and the judge weight share of the pair's composites.
   */
  push(i: number, incRow: number, candRow: number, qInc: number, qCand: number, judgeShare: number): void {
    this.item.push(i);
    this.inc.push(incRow);
    this.cand.push(candRow);
    // the later end of the two calls (the candidate's on a tie: the same text either way)
    this.later.push(this.t.cmpTime('ended_at', incRow, candRow) > 0 ? incRow : candRow);
    this.qInc.push(qInc);
    this.qCand.push(qCand);
    this.share.push(judgeShare);
  }

  /** Row i as the bundle writes it: a plain object, lineage ids included. */
  at(i: number): PairRow {
    const k = this.item.a[i]!;
    const inc = this.inc.a[i]!;
    const cand = this.cand.a[i]!;
    return {
      item_hash: this.items.admitted[k]!,
      cluster: this.items.clusters[k]!,
      simhash: this.t.row(this.items.firstRow[k]!).prompt_simhash,
      weight: this.items.weights[k]!,
      q_inc: this.qInc.a[i]!,
      q_cand: this.qCand.a[i]!,
      cost_inc_usd: this.t.row(inc).cost.usd!,
      cost_cand_usd: this.t.row(cand).cost.usd!,
      obs_inc: this.t.id(inc),
      obs_cand: this.t.id(cand),
    };
  }

  /** Row i for the statistics: the same values, its lineage ids read only when asked (not for JSON). */
  view(i: number): PairRow {
    const k = this.item.a[i]!;
    return new PairView(
      this.items.admitted[k]!,
      this.items.clusters[k]!,
      this.t.row(this.items.firstRow[k]!).prompt_simhash,
      this.items.weights[k]!,
      this.qInc.a[i]!,
      this.qCand.a[i]!,
      this.t.row(this.inc.a[i]!).cost.usd!,
      this.t.row(this.cand.a[i]!).cost.usd!,
      this.t,
      this.inc.a[i]!,
      this.cand.a[i]!,
    );
  }

  /** The judge weight share of each pair's composites, by row. */
  judgeShares(): Float64Array {
    return this.share.a.subarray(0, this.share.n);
  }

  /**
   * The item hashes in the order their pairs were complete (the later end of the two calls, as
   * text), ties by item_hash: the sequential look order.
   */
  arrivalOrder(): string[] {
    const keys = Array.from(
      { length: this.length },
      (_, i) => [`${this.t.time('ended_at', this.later.a[i]!)}|${this.items.admitted[this.item.a[i]!]!}`, i] as const,
    );
    keys.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return keys.map(([, i]) => this.items.admitted[this.item.a[i]!]!);
  }
}

/** A paired row whose lineage ids are read from the table on access. */
class PairView implements PairRow {
  constructor(
    readonly item_hash: string,
    readonly cluster: string,
    readonly simhash: string,
    readonly weight: number,
    readonly q_inc: number,
    readonly q_cand: number,
    readonly cost_inc_usd: number,
    readonly cost_cand_usd: number,
    private readonly t: ObsTable,
    private readonly rowInc: number,
    private readonly rowCand: number,
  ) {}
  get obs_inc(): string {
    return this.t.id(this.rowInc);
  }
  get obs_cand(): string {
    return this.t.id(this.rowCand);
  }
}

/** A row store as a bundle part: lazy ({@link lazyRows}) or plain rows. */
export function rowsPart<T>(store: { length: number; at(i: number): T }, lazy: boolean): T[] {
  if (lazy) return lazyRows(store.length, (i) => store.at(i));
  const out = new Array<T>(store.length);
  for (let i = 0; i < store.length; i++) out[i] = store.at(i);
  return out;
}
