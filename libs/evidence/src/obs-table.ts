/**
 * Observations held as compact columns for the fold (the offline fold reads hundreds of
 * thousands). A parsed observation is an object graph of ~600 bytes even with its repeated
 * strings shared; a row here is ~150 bytes of typed arrays (strings as ids into one pool of
 * distinct values, numbers as float32 or float64 with NaN for null, timestamps as epoch ms) plus
 * its lineage id (32 bytes) and output text (bytes).
 * Only the fields the fold reads are kept; the lineage id is computed from the whole observation
 * when it is added, so it is the same id as {@link observationId} of the message.
 *
 * The fold stages read rows through {@link FoldObs} views: same field names and values as the
 * observation, built from the columns on access.
 */
import type { Observation } from '@shadowplane/contracts';
import { observationId } from './fold-ids.js';
import { ObsRow } from './obs-row.js';
import { isoMs } from './obs-time.js';
import { OutputTexts } from './obs-outputs.js';

/** The usage fields the fold reads (token counts, null when not reported). */
export type FoldUsage = Omit<Observation['usage'], 'raw'>;
/** The cost fields the fold reads. */
export type FoldCost = Pick<Observation['cost'], 'usd' | 'basis' | 'reason'>;

/** What the fold reads of an observation: the fields it uses, valued as in the message. */
export interface FoldObs {
  readonly campaign_id: string;
  readonly item_hash: string;
  readonly call_type: string;
  readonly arm_id: string;
  readonly role: Observation['role'];
  readonly instrument: Observation['instrument'];
  readonly envelope_id: string;
  readonly provider: string;
  readonly model: string;
  readonly started_at: string;
  readonly ended_at: string;
  readonly start_skew_ms: number;
  readonly attempts: number;
  readonly status: Observation['status'];
  readonly error_class: Observation['error_class'];
  readonly latency_ms: number | null;
  readonly ttft_ms: number | null;
  readonly usage: FoldUsage;
  readonly cost: FoldCost;
  readonly charged_micro_usd: number;
  readonly abandoned: boolean;
  readonly output_text: string | null;
  readonly prompt_simhash: string;
  readonly traffic_class: Observation['traffic_class'];
  readonly expectations: Observation['expectations'];
}

const STR = [
  'campaign_id',
  'item_hash',
  'call_type',
  'arm_id',
  'role',
  'instrument',
  'envelope_id',
  'provider',
  'model',
  'status',
  'error_class',
  'basis',
  'reason',
  'prompt_simhash',
  'traffic_class',
  'expectations',
] as const;
const NUM = [
  'start_skew_ms',
  'attempts',
  'latency_ms',
  'ttft_ms',
  'usd',
  'input_tokens',
  'cache_read_input_tokens',
  'cache_creation_input_tokens',
  'output_tokens',
  'reasoning_output_tokens',
  'charged_micro_usd',
] as const;
/** A string column of the table. */
export type StrCol = (typeof STR)[number];
/** A numeric column of the table (NaN = null). */
export type NumCol = (typeof NUM)[number];
/** A timestamp column of the table. */
export type TimeCol = 'started_at' | 'ended_at';

/** Expectation lists whose JSON is longer are not shared: their key would cost as much as the list. */
const MAX_SHARED_LIST_JSON = 1024;
/** Lineage ids held as bytes: 64 lowercase hex digits (what observationId gives). */
const HEX64 = /^[0-9a-f]{64}$/;

/**
 * A growing column store of observations. `add` each observation as it is read (the message can
 * then be dropped); `row(r)` gives a {@link FoldObs} view of row r. Rows are never changed.
 */
export class ObsTable {
  /** rows held */
  length = 0;
  /** @internal string columns: ids into `pool`, -1 for null/absent */
  readonly s = {} as Record<StrCol, Int32Array>;
  /**
   * @internal number columns, NaN for null: float32 while every value is one exactly (token counts,
   * attempts, whole milliseconds), float64 from the first value that is not (half the bytes for most
   * columns: 4 MB less per column at 1M rows)
   */
  readonly n = {} as Record<NumCol, Float32Array | Float64Array>;
  /**
   * @internal started_at / ended_at as epoch ms: a distinct string per observation was ~40 bytes
   * of live heap each (600k at 300k rows); NaN where the text is not what toISOString gives
   * (kept in `otherTimes`)
   */
  readonly tm = {} as Record<TimeCol, Float64Array>;
  /** @internal timestamps not held as ms, by `2·row + (0 started_at, 1 ended_at)` */
  private readonly otherTimes = new Map<number, string>();
  /** @internal */
  abandoned = new Uint8Array(0);
  /** @internal lineage id of each row as 32 bytes (a 64-hex-digit id; 32 bytes, not an ~80-byte string) */
  idBytes = Buffer.alloc(0);
  /** @internal lineage ids that are not 64 lowercase hex digits, by row (none from observationId) */
  private readonly otherIds = new Map<number, string>();
  /** @internal output texts, as bytes outside the JS heap (obs-outputs.ts) */
  readonly outputs = new OutputTexts();
  /** @internal distinct strings and expectation lists, by id */
  readonly pool: unknown[] = [];
  // pool lookups, only needed while rows are added: dropped by compact() (~25 MB at 300k rows)
  private poolIdx: Map<string, number> | null = new Map();
  private listIdx: Map<string, number> | null = new Map();
  private cap = 0;

  constructor() {
    this.grow(1024);
  }

  /**
   * Adds an observation (validated by the contracts schema); `id` is its lineage id when already
   * known, else computed ({@link observationId}). Returns its row number.
   */
  add(o: Observation, id: string = observationId(o)): number {
    if (this.outputs.released)
      throw new Error('ObsTable: output texts were released (releaseOutputs); no row can be added');
    if (this.length === this.cap) this.grow(Math.max(1024, Math.ceil(this.cap * 1.5)));
    const r = this.length++;
    const s = this.s;
    const str = (v: string | null | undefined): number => (v === null || v === undefined ? -1 : this.str(v));
    s.campaign_id[r] = str(o.campaign_id);
    s.item_hash[r] = str(o.item_hash);
    s.call_type[r] = str(o.call_type);
    s.arm_id[r] = str(o.arm_id);
    s.role[r] = str(o.role);
    s.instrument[r] = str(o.instrument);
    s.envelope_id[r] = str(o.envelope_id);
    s.provider[r] = str(o.provider);
    s.model[r] = str(o.model);
    this.setTime('started_at', r, o.started_at);
    this.setTime('ended_at', r, o.ended_at);
    s.status[r] = str(o.status);
    s.error_class[r] = str(o.error_class);
    s.basis[r] = str(o.cost.basis);
    s.reason[r] = str(o.cost.reason);
    s.prompt_simhash[r] = str(o.prompt_simhash);
    s.traffic_class[r] = str(o.traffic_class);
    s.expectations[r] = this.list(o.expectations);
    const num = (k: NumCol, v: number | null): void => this.setNum(k, r, v === null ? NaN : v);
    num('start_skew_ms', o.start_skew_ms);
    num('attempts', o.attempts);
    num('latency_ms', o.latency_ms);
    num('ttft_ms', o.ttft_ms);
    num('usd', o.cost.usd);
    const u = o.usage;
    num('input_tokens', u.input_tokens);
    num('cache_read_input_tokens', u.cache_read_input_tokens);
    num('cache_creation_input_tokens', u.cache_creation_input_tokens);
    num('output_tokens', u.output_tokens);
    num('reasoning_output_tokens', u.reasoning_output_tokens);
    num('charged_micro_usd', o.charged_micro_usd);
    this.abandoned[r] = o.abandoned ? 1 : 0;
    if (HEX64.test(id)) this.idBytes.write(id, 32 * r, 'hex');
    else this.otherIds.set(r, id);
    this.outputs.set(r, o.output_text ?? null);
    return r;
  }

  /** Sets number column `k` of row `r`, widening the column to float64 when `v` is not a float32. */
  private setNum(k: NumCol, r: number, v: number): void {
    let a = this.n[k];
    if (a instanceof Float32Array && Math.fround(v) !== v && !Number.isNaN(v)) {
      a = Float64Array.from(a);
      this.n[k] = a;
    }
    a[r] = v;
  }

  private setTime(k: TimeCol, r: number, v: string): void {
    const ms = isoMs(v);
    this.tm[k][r] = ms;
    if (Number.isNaN(ms)) this.otherTimes.set(2 * r + (k === 'started_at' ? 0 : 1), v);
  }

  /** Timestamp `k` of row `r`, as the observation gave it. */
  time(k: TimeCol, r: number): string {
    const ms = this.tm[k][r]!;
    return Number.isNaN(ms) ? this.otherTimes.get(2 * r + (k === 'started_at' ? 0 : 1))! : new Date(ms).toISOString();
  }

  /**
   * Compares timestamp `k` of rows `a` and `b` in code-unit order of their texts (as `<` on the
   * strings): −1, 0 or 1, without building the strings when both are held as ms.
   */
  cmpTime(k: TimeCol, a: number, b: number): number {
    const x = this.tm[k][a]!;
    const y = this.tm[k][b]!;
    if (!Number.isNaN(x) && !Number.isNaN(y)) return x < y ? -1 : x > y ? 1 : 0;
    const sx = this.time(k, a);
    const sy = this.time(k, b);
    return sx < sy ? -1 : sx > sy ? 1 : 0;
  }

  /** The output text of row `r` (null when absent). @throws Error after {@link releaseOutputs} */
  output(r: number): string | null {
    return this.outputs.get(r);
  }

  /**
   * Frees every output text and its offsets (~10 MB of bytes at 300k rows): for a fold that has
   * scored every observation it will read, since nothing after scoring reads the texts. Rows stay
   * readable but for `output_text`, which then throws; `add` throws too.
   */
  releaseOutputs(): void {
    this.outputs.release();
  }

  /** A view of row `r` (0 ≤ r < length): the observation's fields as the fold reads them. */
  row(r: number): FoldObs {
    return new ObsRow(this, r);
  }

  /** The rows of campaign `cid`, in the order they were added. */
  rowsOf(cid: string): Int32Array {
    const c = this.poolIdx ? this.poolIdx.get(cid) : this.pool.indexOf(cid);
    if (c === undefined || c < 0) return new Int32Array(0);
    const col = this.s.campaign_id;
    let n = 0;
    for (let r = 0; r < this.length; r++) if (col[r] === c) n++;
    const out = new Int32Array(n);
    for (let r = 0, k = 0; r < this.length; r++) if (col[r] === c) out[k++] = r;
    return out;
  }

  /**
   * The table's own copy of string `v` (added to the pool when new): for a reader that keeps other
   * messages beside the table, so their repeated values (item hashes, campaign ids, schema names)
   * are one string each, not one per message.
   */
  intern(v: string): string {
    return this.pool[this.str(v)] as string;
  }

  /** The lineage id of row `r`. */
  id(r: number): string {
    return this.otherIds.get(r) ?? this.idBytes.toString('hex', 32 * r, 32 * r + 32);
  }

  /**
   * Compares the lineage ids of rows `a` and `b` (code-unit order of the id strings): −1, 0 or 1,
   * without building the strings when both are held as bytes (lowercase hex sorts as its bytes).
   */
  cmpId(a: number, b: number): number {
    if (this.otherIds.size > 0 && (this.otherIds.has(a) || this.otherIds.has(b))) {
      const x = this.id(a);
      const y = this.id(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    const d = this.idBytes.compare(this.idBytes, 32 * b, 32 * b + 32, 32 * a, 32 * a + 32);
    return d;
  }

  /**
   * Trims the columns to the rows held and drops the lookups used while adding (they are rebuilt
   * if a row is added later). For a reader that has added every row: at 300k rows the spare
   * capacity and the lookups were ~45 MB held through the fold.
   */
  compact(): void {
    if (this.cap > this.length) this.grow(this.length);
    this.outputs.trim();
    this.poolIdx = null;
    this.listIdx = null;
  }

  /** @internal the pool id of string `v` (added when new) */
  str(v: string): number {
    const idx = this.poolIdx ?? (this.poolIdx = this.rebuildIndex().strings);
    const hit = idx.get(v);
    if (hit !== undefined) return hit;
    this.pool.push(v);
    idx.set(v, this.pool.length - 1);
    return this.pool.length - 1;
  }

  private list(xs: Observation['expectations']): number {
    const key = JSON.stringify(xs);
    const shared = key.length <= MAX_SHARED_LIST_JSON;
    const idx = this.listIdx ?? (this.listIdx = this.rebuildIndex().lists);
    if (shared) {
      const hit = idx.get(key);
      if (hit !== undefined) return hit;
    }
    // frozen: the fold never writes to its input, and rows share the list
    this.pool.push(deepFreeze(structuredClone(xs)));
    if (shared) idx.set(key, this.pool.length - 1);
    return this.pool.length - 1;
  }

  /** The pool lookups as add() keeps them (first id of each string, of each shared list). */
  private rebuildIndex(): { strings: Map<string, number>; lists: Map<string, number> } {
    const strings = new Map<string, number>();
    const lists = new Map<string, number>();
    this.pool.forEach((v, i) => {
      if (typeof v === 'string') {
        if (!strings.has(v)) strings.set(v, i);
        return;
      }
      const key = JSON.stringify(v);
      if (key.length <= MAX_SHARED_LIST_JSON && !lists.has(key)) lists.set(key, i);
    });
    return { strings, lists };
  }

  private grow(cap: number): void {
    for (const k of STR) {
      const a = new Int32Array(cap);
      if (this.s[k]) a.set(this.s[k].subarray(0, cap));
      this.s[k] = a;
    }
    for (const k of NUM) {
      const had = this.n[k];
      const a = had instanceof Float64Array ? new Float64Array(cap) : new Float32Array(cap);
      if (had) a.set(had.subarray(0, cap));
      this.n[k] = a;
    }
    for (const k of ['started_at', 'ended_at'] as const) {
      const a = new Float64Array(cap);
      if (this.tm[k]) a.set(this.tm[k].subarray(0, cap));
      this.tm[k] = a;
    }
    const b = new Uint8Array(cap);
    b.set(this.abandoned.subarray(0, cap));
    this.abandoned = b;
    this.outputs.grow(cap);
    const ids = Buffer.alloc(32 * cap);
    this.idBytes.copy(ids, 0, 0, Math.min(this.idBytes.length, 32 * cap));
    this.idBytes = ids;
    this.cap = cap;
  }
}

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}
