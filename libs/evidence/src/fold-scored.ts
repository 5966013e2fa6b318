/**
 * The scored observations of one call type, held as columns indexed by scoring order: table row,
 * composite (quality, judge share, scores used, hard fail) as numbers, the judge-free composite
 * and the programmatic scores only where they differ or are needed. A scored record and a
 * composite object per observation were ~45 MB at 100k items × 3 arms, live from scoring to the
 * end of the fold; {@link ScoredObs} views are built on each read and dropped by the reader.
 */
import type { Composite, ScoreResult } from '@shadowplane/scoring';
import type { FoldObs, ObsTable } from './obs-table.js';
import { Col, bytes, floats, ints } from './fold-util.js';

/** One de-duplicated observation of an admitted item, with its composites (a view: built on read). */
export interface ScoredObs {
  obs: FoldObs;
  id: string;
  /** its row in the fold's ObsTable */
  row: number;
  composite: Composite | null;
  /** the composite without judge scores (differs only when a judge score exists) */
  compositeNoJudge: Composite | null;
  /** true when a judge score joined `composite` (then `compositeNoJudge` differs from it) */
  judged: boolean;
  /** the programmatic and first-party scores (no judge), for pairwise judge composites */
  scores: ScoreResult[];
}

const NO_SCORES: ScoreResult[] = Object.freeze([]) as unknown as ScoreResult[];
const HAS = 1;
const HARD = 2;

/**
 * The scored observations of one call type: in scoring order (index 0 … length − 1, read with
 * {@link at}), and found by (item, arm, role) with {@link get}, the item named by any table row
 * of it. Keys are unique (stage 1 de-duplicates). Composite values are stored as float64 (NaN for
 * null), so views give back the exact numbers the composite had.
 */
export class ScoredIndex {
  private readonly rows: Col<Int32Array>;
  private readonly q: Col<Float64Array>;
  private readonly share: Col<Float64Array>;
  private readonly used: Col<Int32Array>;
  private readonly flags: Col<Uint8Array>;
  /** the judge-free composite, only where a judge score joined the composite */
  private readonly noJudge = new Map<number, Composite>();
  /** programmatic scores, only where kept */
  private readonly scores = new Map<number, ScoreResult[]>();
  /**
   * items numbered densely in the order first scored, by the pool id of their item_hash (−1: not
   * yet): one Int32Array for every arm, where an item_hash-keyed map per arm and role was ~3.5 MB
   * of live heap each at 100k items
   */
  private itemOf = new Int32Array(0);
  private items = 0;
  /** per `arm|role`: scoring index by item number (−1: none) */
  private readonly by = new Map<string, Col<Int32Array>>();
  private readonly byArm = new Map<string, Col<Int32Array>>();

  /** `capacity`: how many observations will be added at most (the columns grow past it if need be). */
  constructor(
    private readonly t: ObsTable,
    capacity = 1024,
  ) {
    this.rows = ints(capacity);
    this.q = floats(capacity);
    this.share = floats(capacity);
    this.used = ints(capacity);
    this.flags = bytes(capacity);
  }

  /** Scored observations held. */
  get length(): number {
    return this.rows.n;
  }

  /**
   * Adds the observation at table row `row` with its composite (null when not ok), its judge-free
   * composite when a judge score joined the composite (else null), and the programmatic scores to
   * keep (empty: none kept).
   */
  add(row: number, composite: Composite | null, noJudge: Composite | null, scores: readonly ScoreResult[]): void {
    const i = this.rows.n;
    const o = this.t.row(row);
    this.rows.push(row);
    this.q.push(composite?.quality ?? NaN);
    this.share.push(composite?.judgeShare ?? NaN);
    this.used.push(composite?.scored ?? 0);
    this.flags.push((composite ? HAS : 0) | (composite?.hardFailed ? HARD : 0));
    if (noJudge) this.noJudge.set(i, noJudge);
    if (scores.length > 0) this.scores.set(i, scores as ScoreResult[]);
    const k = `${o.arm_id}|${o.role}`;
    const item = this.itemNumber(row, true);
    let m = this.by.get(k);
    if (!m) this.by.set(k, (m = new Col(new Int32Array(1024).fill(-1), (n) => new Int32Array(n).fill(-1))));
    while (m.a.length <= item) m.grow();
    m.a[item] = i;
    let list = this.byArm.get(k);
    if (!list) this.byArm.set(k, (list = ints()));
    list.push(i);
  }

  /** The dense number of the item of table row `row` (−1 when none of its observations was added and `assign` is false). */
  private itemNumber(row: number, assign: boolean): number {
    const pid = this.t.s.item_hash[row]!;
    if (pid >= this.itemOf.length) {
      if (!assign) return -1;
      const b = new Int32Array(Math.max(pid + 1, this.t.pool.length, 2 * this.itemOf.length)).fill(-1);
      b.set(this.itemOf);
      this.itemOf = b;
    }
    let it = this.itemOf[pid]!;
    if (it < 0 && assign) this.itemOf[pid] = it = this.items++;
    return it;
  }

  /** The index of the item of table row `itemRow` (any observation of it) on arm `armId` in role `role`, or −1. */
  indexOf(itemRow: number, armId: string, role: string): number {
    const it = this.itemNumber(itemRow, false);
    const m = this.by.get(`${armId}|${role}`);
    return it < 0 || !m || it >= m.a.length ? -1 : m.a[it]!;
  }

  /** The scored observation of the item of table row `itemRow` on arm `armId` in role `role`, if any. */
  get(itemRow: number, armId: string, role: string): ScoredObs | undefined {
    const i = this.indexOf(itemRow, armId, role);
    return i < 0 ? undefined : this.at(i);
  }

  /** Indexes of arm `armId` in role `role`, in scoring order. */
  ofArm(armId: string, role: string): Int32Array {
    const c = this.byArm.get(`${armId}|${role}`);
    return c ? c.a.subarray(0, c.n) : new Int32Array(0);
  }

  /** Table row of index i. */
  rowAt(i: number): number {
    return this.rows.a[i]!;
  }

  /** Quality of index i's composite (null when unscored or not ok). */
  qualityAt(i: number): number | null {
    const v = this.q.a[i]!;
    return Number.isNaN(v) ? null : v;
  }

  /** The composite of index i, built from its columns (null when the observation was not ok). */
  compositeAt(i: number): Composite | null {
    const f = this.flags.a[i]!;
    if ((f & HAS) === 0) return null;
    const q = this.q.a[i]!;
    const s = this.share.a[i]!;
    return {
      quality: Number.isNaN(q) ? null : q,
      judgeShare: Number.isNaN(s) ? null : s,
      scored: this.used.a[i]!,
      hardFailed: (f & HARD) !== 0,
    };
  }

  /** Scored observation i (0 ≤ i < length) as a view. */
  at(i: number): ScoredObs {
    const row = this.rows.a[i]!;
    const composite = this.compositeAt(i);
    const nj = this.noJudge.get(i);
    const t = this.t;
    return {
      obs: t.row(row),
      // built when read: most readers never read it
      get id() {
        return t.id(row);
      },
      row,
      composite,
      compositeNoJudge: nj ?? composite,
      judged: nj !== undefined,
      scores: this.scores.get(i) ?? NO_SCORES,
    };
  }
}
