import { Bucket, type KV } from '@nats-io/kv';
import { JsonKv } from '@shadowplane/bus';
import { BudgetLedger } from '@shadowplane/contracts';

/**
 * Result of {@link BudgetLedgerClient.reserve}. `ledger` is the ledger as the group commit that
 * applied the call left it (the call's own change and those of the batch's other operations).
 */
export type ReserveResult =
  | { ok: true; reservationIds: string[]; ledger: BudgetLedger }
  | { ok: false; reason: 'budget_exhausted' | 'no_ledger'; ledger: BudgetLedger | null }
  /** some ids were already settled: a settled reservation is never opened again (nothing written) */
  | { ok: false; reason: 'already_settled'; settledIds: string[]; ledger: BudgetLedger };

/** Result of {@link BudgetLedgerClient.settle}. */
export interface SettleResult {
  /** false when no matching reservation was outstanding (already settled: the call was a no-op) */
  found: boolean;
  /** micro-USD taken off `reserved_micro_usd` (sum of the matched reservations) */
  releasedMicroUsd: number;
  /** micro-USD added to `settled_micro_usd` = min(actual, released) */
  settledMicroUsd: number;
  /** actual − released when positive: a cost above its reservation, clamped (a bug upstream) */
  overchargeMicroUsd: number;
}

/** Which outstanding reservations a settlement covers: exact ids, or every id starting with `prefix`. */
export type SettleSelector = { ids: readonly string[] } | { prefix: string };

/** Options for {@link BudgetLedgerClient}. */
export interface BudgetLedgerClientOptions {
  /** called when a settlement's actual cost exceeded its reservation (clamped); count it as a bug */
  onOvercharge?: (campaignId: string, excessMicroUsd: number) => void;
  /** CAS attempts before giving up (default 500) */
  maxCasAttempts?: number;
}

const sumValues = (o: Record<string, number>): number => Object.values(o).reduce((a, b) => a + b, 0);

/** Most operations applied in one CAS write (bounds the work redone after a conflict). */
const MAX_BATCH = 64;

/** One queued ledger operation (arguments already validated). */
type LedgerOp =
  | { kind: 'reserve'; parts: Record<string, number>; neverReserved: boolean }
  | { kind: 'settle'; which: SettleSelector; actual: number | 'reserved' };

interface LedgerQueue {
  pending: {
    op: LedgerOp;
    resolve: (r: ReserveResult | SettleResult) => void;
    reject: (e: unknown) => void;
  }[];
  running: boolean;
}

/**
 * The per-campaign budget ledger in the `shadow_budget` KV, changed only by compare-and-set so
 * that, across any number of workers, retries and crashes, `settled + reserved ≤ limit` holds
 * after every write (docs/architecture.md honesty rule 6). All amounts are integer micro-USD.
 *
 * Every reservation is kept by id in `outstanding` (id → micro-USD; `reserved_micro_usd` is
 * their sum), which makes both operations idempotent: reserving an id that is already
 * outstanding adds nothing, and settling an id that is no longer outstanding changes nothing.
 * A redelivered or recovered item can therefore repeat any step without double counting.
 * Ids are chosen by the caller; the duplicator uses `<item_hash>.<arm_id>.<attempt>`.
 *
 * A settled id is never reserved again: settling records `<campaign>.settled.<id>` in the same
 * bucket before the CAS write that removes the reservation, and a reservation reads those
 * records after reading the ledger and writes only if the ledger is unchanged since. So a late
 * or duplicated reserve (a redelivery racing a recovery) cannot reopen spend already accounted.
 *
 * Operations one client issues concurrently on one campaign are group-committed: applied in
 * arrival order to one read of the ledger and written in one CAS (see `enqueue`), so a worker's
 * parallel items cost one ledger write per batch and never conflict with each other.
 *
 * The ledger is created by the control service at launch (`limit_micro_usd =
 * ceil(max_cost_usd·1e6)`, zero reserved/settled); this client never creates one.
 */
export class BudgetLedgerClient {
  readonly ledgers: JsonKv<typeof BudgetLedger>;
  private readonly opts: BudgetLedgerClientOptions;
  /** per campaign: operations waiting for the next group commit ({@link enqueue}) */
  private readonly queues = new Map<string, LedgerQueue>();

  /** @param kv the opened `shadow_budget` bucket (`bus.names.buckets.budget`) */
  constructor(kv: KV, opts: BudgetLedgerClientOptions = {}) {
    this.ledgers = new JsonKv(kv, BudgetLedger);
    this.opts = opts;
  }

  /**
   * Reserves every part atomically (one CAS write): all or none. Parts whose id is already
   * outstanding are kept as they are (idempotent); parts of 0 micro-USD are not recorded.
   * Refused — and the ledger's `exhausted` flag set in the same write — when the ledger is
   * already exhausted or settled + reserved + the new parts would exceed the limit. Refused
   * without any write when a new part's id was settled before (`already_settled`).
   * @param parts reservation id → micro-USD (non-negative integers)
   * @param opts.neverReserved the caller knows that no id among `parts` was ever reserved before
   *   (so none can have been settled): their settlement records are not read — one read per id
   *   saved. The duplicator passes it for an item's first attempts when it has just created the
   *   item's claim (no earlier processing of the item exists). Ids settled earlier in the same
   *   batch are still refused.
   * @returns `{ok:true, reservationIds}` or `{ok:false, reason}` (`no_ledger` when the campaign has none)
   * @throws RangeError for a negative or non-integer amount; Error('cas_retries_exhausted') under extreme contention
   */
  async reserve(
    campaignId: string,
    parts: Readonly<Record<string, number>>,
    opts: { neverReserved?: boolean } = {},
  ): Promise<ReserveResult> {
    for (const [id, v] of Object.entries(parts)) {
      if (!Number.isInteger(v) || v < 0)
        throw new RangeError(`reservation ${id}: micro-USD must be a non-negative integer, got ${v}`);
    }
    return this.enqueue<ReserveResult>(campaignId, {
      kind: 'reserve',
      parts: { ...parts },
      neverReserved: opts.neverReserved === true,
    });
  }

  /**
   * Settles outstanding reservations with the actual cost: removes them (reserved −= their sum
   * R) and adds min(actual, R) to settled, in one CAS write. An actual above R is impossible by
   * construction (reservations are worst cases); if it happens it is clamped to R, reported in
   * `overchargeMicroUsd` and to `onOvercharge`. Pass `'reserved'` as the actual for a call whose
   * cost is unknown or that was lost in flight: it is charged its upper bound R. Idempotent: when no selected reservation
   * is outstanding, nothing changes and `found` is false.
   * @param actualMicroUsd non-negative integer micro-USD
   * @throws RangeError for a negative or non-integer amount
   */
  async settle(campaignId: string, which: SettleSelector, actualMicroUsd: number | 'reserved'): Promise<SettleResult> {
    if (actualMicroUsd !== 'reserved' && (!Number.isInteger(actualMicroUsd) || actualMicroUsd < 0))
      throw new RangeError(`actual micro-USD must be a non-negative integer, got ${actualMicroUsd}`);
    const sel: SettleSelector = 'ids' in which ? { ids: [...which.ids] } : { prefix: which.prefix };
    return this.enqueue<SettleResult>(campaignId, { kind: 'settle', which: sel, actual: actualMicroUsd });
  }

  /**
   * Group commit: the reserves and settlements this client is asked for on one campaign while a
   * write of that ledger is in flight wait, and are then applied in arrival order to one read of
   * the ledger and written in one CAS — the same result as applying them one by one, with one
   * read and one write for the whole batch instead of one each (and no CAS conflicts between
   * this process's own concurrent items, the main cost under load before batching).
   */
  private enqueue<R>(campaignId: string, op: LedgerOp): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      let q = this.queues.get(campaignId);
      if (!q) {
        q = { pending: [], running: false };
        this.queues.set(campaignId, q);
      }
      q.pending.push({ op, resolve: resolve as (r: ReserveResult | SettleResult) => void, reject });
      if (!q.running) void this.drain(campaignId, q);
    });
  }

  private async drain(campaignId: string, q: LedgerQueue): Promise<void> {
    q.running = true;
    // one macrotask turn lets the operations of concurrently finishing items join the batch
    await new Promise((r) => setImmediate(r));
    while (q.pending.length > 0) {
      const batch = q.pending.splice(0, MAX_BATCH);
      try {
        const results = await this.applyBatch(
          campaignId,
          batch.map((b) => b.op),
        );
        batch.forEach((b, i) => b.resolve(results[i]!));
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    q.running = false;
    if (q.pending.length === 0) this.queues.delete(campaignId);
    else void this.drain(campaignId, q);
  }

  /** Applies `ops` in order to one read of the ledger and writes the outcome in one CAS (retried on conflict). */
  private async applyBatch(campaignId: string, ops: LedgerOp[]): Promise<(ReserveResult | SettleResult)[]> {
    const none: SettleResult = { found: false, releasedMicroUsd: 0, settledMicroUsd: 0, overchargeMicroUsd: 0 };
    const maxAttempts = this.opts.maxCasAttempts ?? 500;
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const got = await this.ledgers.get(campaignId);
      if (got === null)
        return ops.map((op) => (op.kind === 'reserve' ? { ok: false, reason: 'no_ledger', ledger: null } : none));
      const cur = got.value;
      // read after the ledger: a settlement writes its record before its ledger write
      const candidates = new Set<string>();
      for (const op of ops)
        if (op.kind === 'reserve' && !op.neverReserved)
          for (const [id, v] of Object.entries(op.parts))
            if (v > 0 && !Object.hasOwn(cur.outstanding ?? {}, id)) candidates.add(id);
      const settledBefore = new Set(await this.settledAmong(campaignId, [...candidates]));
      const settledHere = new Set<string>(); // ids settled by an earlier operation of this batch
      // one mutable copy per attempt (each operation used to copy the whole ledger: quadratic in
      // the batch); the results name this ledger as the batch leaves it
      const next: BudgetLedger & { outstanding: Record<string, number> } = {
        ...cur,
        outstanding: { ...(cur.outstanding ?? {}) },
      };
      const outstanding = next.outstanding;
      let changed = false;
      const results: (ReserveResult | SettleResult)[] = [];
      const overcharges: number[] = [];
      for (const op of ops) {
        if (op.kind === 'reserve') {
          let add = 0;
          const fresh: string[] = [];
          for (const [id, v] of Object.entries(op.parts)) {
            if (v === 0 || Object.hasOwn(outstanding, id)) continue;
            fresh.push(id);
            add += v;
          }
          if (add === 0) {
            // a retry of an applied reservation
            results.push({ ok: true, reservationIds: Object.keys(op.parts), ledger: next });
            continue;
          }
          const settledIds = fresh.filter((id) => settledBefore.has(id) || settledHere.has(id));
          if (settledIds.length > 0) {
            results.push({ ok: false, reason: 'already_settled', settledIds, ledger: next });
            continue;
          }
          if (next.exhausted || next.settled_micro_usd + next.reserved_micro_usd + add > next.limit_micro_usd) {
            if (!next.exhausted) {
              next.exhausted = true;
              changed = true;
            }
            results.push({ ok: false, reason: 'budget_exhausted', ledger: next });
            continue;
          }
          for (const id of fresh) outstanding[id] = op.parts[id]!;
          next.reserved_micro_usd += add;
          changed = true;
          results.push({ ok: true, reservationIds: Object.keys(op.parts), ledger: next });
        } else {
          const which = op.which;
          const ids =
            'ids' in which
              ? which.ids.filter((id) => Object.hasOwn(outstanding, id))
              : Object.keys(outstanding).filter((id) => id.startsWith(which.prefix));
          if (ids.length === 0) {
            results.push(none);
            continue;
          }
          let released = 0;
          for (const id of ids) {
            released += outstanding[id]!;
            delete outstanding[id];
            settledHere.add(id);
          }
          const actual = op.actual === 'reserved' ? released : op.actual;
          const settled = Math.min(actual, released);
          next.reserved_micro_usd = Math.max(0, next.reserved_micro_usd - released);
          next.settled_micro_usd += settled;
          changed = true;
          const over = Math.max(0, actual - released);
          if (over > 0) overcharges.push(over);
          results.push({ found: true, releasedMicroUsd: released, settledMicroUsd: settled, overchargeMicroUsd: over });
        }
      }
      if (!changed) return results;
      const written: BudgetLedger = { ...next };
      if (Object.keys(next.outstanding).length === 0) delete written.outstanding;
      // the records first: from the ledger write on, a reserve of these ids must see them
      await Promise.all([...settledHere].map((id) => this.ledgers.kv.put(settledKey(campaignId, id), '1')));
      if ((await this.ledgers.update(campaignId, written, got.revision)) !== null) {
        for (const o of overcharges) this.opts.onOvercharge?.(campaignId, o);
        return results;
      }
      // conflict: jittered pause so contending writers spread out
      await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 + attempt * 2)));
    }
    throw new Error('cas_retries_exhausted');
  }

  /** The ids among `ids` that have a settlement record (parallel reads). */
  private async settledAmong(campaignId: string, ids: readonly string[]): Promise<string[]> {
    const hits = await Promise.all(
      ids.map(async (id) => ((await this.ledgers.kv.get(settledKey(campaignId, id)))?.operation === 'PUT' ? id : null)),
    );
    return hits.filter((x): x is string => x !== null);
  }

  /** Sum of outstanding reservations whose id starts with `prefix` (micro-USD; 0 when none). */
  async outstandingFor(campaignId: string, prefix: string): Promise<number> {
    const l = await this.snapshot(campaignId);
    if (!l) return 0;
    return sumValues(Object.fromEntries(Object.entries(l.outstanding ?? {}).filter(([id]) => id.startsWith(prefix))));
  }

  /** The current ledger, or null when the campaign has none. */
  async snapshot(campaignId: string): Promise<BudgetLedger | null> {
    const v = await this.ledgers.get(campaignId);
    return v ? v.value : null;
  }

  /** Sets `exhausted` (no new reservations succeed afterwards). Idempotent. */
  async markExhausted(campaignId: string): Promise<void> {
    await this.ledgers.mutate(
      campaignId,
      (cur) => (cur === null || cur.exhausted ? undefined : { ...cur, exhausted: true }),
      this.opts.maxCasAttempts ?? 500,
    );
  }

  /**
   * Removes the settlement records of a finished campaign, so they do not grow without bound.
   * Only when nothing is outstanding: the ledger is first marked `exhausted` (permanent: no
   * reservation ever succeeds again, so a record that guarded against reopening a settled id is
   * no longer needed), then every `<campaign>.settled.*` key is purged — by one filtered purge of
   * the bucket's stream (a bucket opened through nats.js; key by key otherwise). Idempotent; a
   * worker that crashes midway leaves records a later call removes.
   * @returns `{removed}` (record messages purged: one per settled id, more where a CAS retry
   *   rewrote one), or `{removed: 0, outstanding}` when reservations are
   *   still open (nothing changed; call again once they are settled)
   */
  async compactSettled(campaignId: string): Promise<{ removed: number; outstanding: number }> {
    const cur = await this.snapshot(campaignId);
    if (cur === null) return { removed: 0, outstanding: 0 };
    const open = Object.keys(cur.outstanding ?? {}).length;
    if (open > 0) return { removed: 0, outstanding: open };
    await this.markExhausted(campaignId);
    // re-read after closing: a reservation that won the race before the close is outstanding now
    const after = await this.snapshot(campaignId);
    const stillOpen = Object.keys(after?.outstanding ?? {}).length;
    if (stillOpen > 0) return { removed: 0, outstanding: stillOpen };
    const kv = this.ledgers.kv;
    if (kv instanceof Bucket) {
      // one purge of the bucket's stream by subject, as nats.js's own purgeDeletes does: a request
      // for all the records instead of one per record (3 per dispatched item) and no purge markers
      const r = await kv.jsm.streams.purge(kv.stream, { filter: kv.subjectForKey(settledKey(campaignId, '>')) });
      return { removed: r.purged, outstanding: 0 };
    }
    const keys: string[] = [];
    for await (const k of await kv.keys(settledKey(campaignId, '>'))) keys.push(k);
    for (const k of keys) await kv.purge(k);
    return { removed: keys.length, outstanding: 0 };
  }
}

/** Key of the record that reservation `id` of `campaignId` was settled (same bucket as the ledger). */
export function settledKey(campaignId: string, id: string): string {
  return `${campaignId}.settled.${id}`;
}

/** A fresh ledger for a campaign's USD cap: limit = ceil(max_cost_usd·1e6) micro-USD, nothing reserved or settled. */
export function newLedger(maxCostUsd: number): BudgetLedger {
  return {
    limit_micro_usd: Math.ceil(Math.round(maxCostUsd * 1e6 * 1e3) / 1e3),
    reserved_micro_usd: 0,
    settled_micro_usd: 0,
    exhausted: false,
  };
}
