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

/** Growable Int32 column. */
class Ints {
  a = new Int32Array(1024);
  n = 0;
  push(v: number): void {
    if (this.n === this.a.length) {
      const b = new Int32Array(Math.ceil(this.a.length * 1.5));
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }
}

/** The cost evidence rows of a fold: per ok observation its table row and its arm's group. */
export class CostRows {
  private readonly rows = new Ints();
  private readonly group = new Ints();
  private readonly groups: { call_type: string; arm_id: string; basis: CostEvidenceRow['basis'] }[] = [];

  constructor(private readonly t: ObsTable) {}

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

/** The paired rows of one comparison: both calls' table rows and the values the fold computed. */
export class PairRows {
  private readonly inc: Int32Array;
  private readonly cand: Int32Array;
  private readonly q: Float64Array;
  private readonly w: Float64Array;
  private readonly cluster: string[];
  private readonly simhash: string[];

  /** Compacts `rows`; `rowsOf(r)` gives the table rows of the incumbent's and candidate's calls of r. */
  constructor(
    private readonly t: ObsTable,
    rows: readonly PairRow[],
    rowsOf: (r: PairRow) => [number, number],
  ) {
    const n = rows.length;
    this.inc = new Int32Array(n);
    this.cand = new Int32Array(n);
    this.q = new Float64Array(2 * n);
    this.w = new Float64Array(n);
    this.cluster = new Array<string>(n);
    this.simhash = new Array<string>(n);
    rows.forEach((r, i) => {
      [this.inc[i], this.cand[i]] = rowsOf(r);
      this.q[2 * i] = r.q_inc;
      this.q[2 * i + 1] = r.q_cand;
      this.w[i] = r.weight;
      this.cluster[i] = r.cluster;
      this.simhash[i] = r.simhash;
    });
  }

  /** Rows held. */
  get length(): number {
    return this.inc.length;
  }

  /** Row i, equal to the row it was compacted from. */
  at(i: number): PairRow {
    const a = this.t.row(this.inc[i]!);
    return {
      item_hash: a.item_hash,
      cluster: this.cluster[i]!,
      simhash: this.simhash[i]!,
      weight: this.w[i]!,
      q_inc: this.q[2 * i]!,
      q_cand: this.q[2 * i + 1]!,
      cost_inc_usd: a.cost.usd!,
      cost_cand_usd: this.t.row(this.cand[i]!).cost.usd!,
      obs_inc: this.t.id(this.inc[i]!),
      obs_cand: this.t.id(this.cand[i]!),
    };
  }
}

/** A row store as a bundle part: lazy ({@link lazyRows}) or plain rows. */
export function rowsPart<T>(store: { length: number; at(i: number): T }, lazy: boolean): T[] {
  if (lazy) return lazyRows(store.length, (i) => store.at(i));
  const out = new Array<T>(store.length);
  for (let i = 0; i < store.length; i++) out[i] = store.at(i);
  return out;
}
