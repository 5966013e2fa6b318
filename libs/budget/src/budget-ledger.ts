import type { KV } from '@nats-io/kv';
import { JsonKv } from '@shadowplane/bus';
import { BudgetLedger } from '@shadowplane/contracts';

/** Result of {@link BudgetLedgerClient.reserve}. */
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
 * The ledger is created by the control service at launch (`limit_micro_usd =
 * ceil(max_cost_usd·1e6)`, zero reserved/settled); this client never creates one.
 */
export class BudgetLedgerClient {
  readonly ledgers: JsonKv<typeof BudgetLedger>;
  private readonly opts: BudgetLedgerClientOptions;

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
   * @returns `{ok:true, reservationIds}` or `{ok:false, reason}` (`no_ledger` when the campaign has none)
   * @throws RangeError for a negative or non-integer amount; Error('cas_retries_exhausted') under extreme contention
   */
  async reserve(campaignId: string, parts: Readonly<Record<string, number>>): Promise<ReserveResult> {
    for (const [id, v] of Object.entries(parts)) {
      if (!Number.isInteger(v) || v < 0)
        throw new RangeError(`reservation ${id}: micro-USD must be a non-negative integer, got ${v}`);
    }
    const maxAttempts = this.opts.maxCasAttempts ?? 500;
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const got = await this.ledgers.get(campaignId);
      if (got === null) return { ok: false, reason: 'no_ledger', ledger: null };
      const cur = got.value;
      const outstanding = { ...(cur.outstanding ?? {}) };
      let add = 0;
      const fresh: string[] = [];
      for (const [id, v] of Object.entries(parts)) {
        if (v === 0 || Object.hasOwn(outstanding, id)) continue;
        outstanding[id] = v;
        add += v;
        fresh.push(id);
      }
      if (add === 0) return { ok: true, reservationIds: Object.keys(parts), ledger: cur }; // retry of an applied reservation
      // read after the ledger: a settlement writes its record before its ledger write
      const settledIds = await this.settledAmong(campaignId, fresh);
      if (settledIds.length > 0) return { ok: false, reason: 'already_settled', settledIds, ledger: cur };
      if (cur.exhausted || cur.settled_micro_usd + cur.reserved_micro_usd + add > cur.limit_micro_usd) {
        if (cur.exhausted) return { ok: false, reason: 'budget_exhausted', ledger: cur };
        const next = { ...cur, exhausted: true };
        if ((await this.ledgers.update(campaignId, next, got.revision)) !== null)
          return { ok: false, reason: 'budget_exhausted', ledger: next };
      } else {
        const next = { ...cur, outstanding, reserved_micro_usd: cur.reserved_micro_usd + add };
        if ((await this.ledgers.update(campaignId, next, got.revision)) !== null)
          return { ok: true, reservationIds: Object.keys(parts), ledger: next };
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
    const none: SettleResult = { found: false, releasedMicroUsd: 0, settledMicroUsd: 0, overchargeMicroUsd: 0 };
    const maxAttempts = this.opts.maxCasAttempts ?? 500;
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const got = await this.ledgers.get(campaignId);
      if (got === null) return none;
      const cur = got.value;
      const outstanding = { ...(cur.outstanding ?? {}) };
      const ids =
        'ids' in which
          ? which.ids.filter((id) => Object.hasOwn(outstanding, id))
          : Object.keys(outstanding).filter((id) => id.startsWith(which.prefix));
      if (ids.length === 0) return none;
      let released = 0;
      for (const id of ids) {
        released += outstanding[id]!;
        delete outstanding[id];
      }
      const actual = actualMicroUsd === 'reserved' ? released : actualMicroUsd;
      const settled = Math.min(actual, released);
      const next: BudgetLedger = {
        ...cur,
        reserved_micro_usd: Math.max(0, cur.reserved_micro_usd - released),
        settled_micro_usd: cur.settled_micro_usd + settled,
      };
      if (Object.keys(outstanding).length > 0) next.outstanding = outstanding;
      else delete next.outstanding;
      // the records first: from the ledger write on, a reserve of these ids must see them
      await Promise.all(ids.map((id) => this.ledgers.kv.put(settledKey(campaignId, id), '1')));
      if ((await this.ledgers.update(campaignId, next, got.revision)) !== null) {
        const res = {
          found: true,
          releasedMicroUsd: released,
          settledMicroUsd: settled,
          overchargeMicroUsd: Math.max(0, actual - released),
        };
        if (res.overchargeMicroUsd > 0) this.opts.onOvercharge?.(campaignId, res.overchargeMicroUsd);
        return res;
      }
      await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 + attempt * 2)));
    }
    throw new Error('cas_retries_exhausted');
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
   * no longer needed), then every `<campaign>.settled.*` key is purged. Idempotent; a worker
   * that crashes midway leaves records a later call removes.
   * @returns `{removed}` (records purged), or `{removed: 0, outstanding}` when reservations are
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
