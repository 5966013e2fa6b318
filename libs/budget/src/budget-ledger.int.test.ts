import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectBus, openKv, provision, type Bus } from '@shadowplane/bus';
import { randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import { BudgetLedgerClient, newLedger } from './index.js';

describe('BudgetLedgerClient', () => {
  let bus: Bus;
  let client: BudgetLedgerClient;
  const overcharges: number[] = [];
  beforeAll(async () => {
    bus = await connectBus({ url: sharedNatsUrl(), name: 'budget-test', prefix: randomPrefix('bud') });
    await provision(bus, { storage: 'memory' });
    client = new BudgetLedgerClient(await openKv(bus, bus.names.buckets.budget), {
      onOvercharge: (_c, x) => overcharges.push(x),
    });
  });
  afterAll(async () => bus.close());

  it('newLedger turns USD into whole micro-USD, rounding up', () => {
    expect(newLedger(2.5).limit_micro_usd).toBe(2_500_000);
    expect(newLedger(0.0000015).limit_micro_usd).toBe(2);
    expect(newLedger(0.1 + 0.2).limit_micro_usd).toBe(300_000);
  });

  it('refuses a reservation that would exceed the limit, sets exhausted, and refuses everything after', async () => {
    await client.ledgers.put('a', newLedger(0.001)); // 1000 micro-USD
    expect((await client.reserve('a', { x: 600 })).ok).toBe(true);
    const r = await client.reserve('a', { y: 401 });
    expect(r).toMatchObject({ ok: false, reason: 'budget_exhausted' });
    const small = await client.reserve('a', { z: 1 });
    expect(small.ok).toBe(false);
    expect(await client.snapshot('a')).toEqual({
      limit_micro_usd: 1000,
      reserved_micro_usd: 600,
      settled_micro_usd: 0,
      exhausted: true,
      outstanding: { x: 600 },
    });
  });

  it('reserve and settle are idempotent by reservation id', async () => {
    await client.ledgers.put('b', newLedger(1));
    expect((await client.reserve('b', { 'i1.inc.1': 300, 'i1.cand.1': 200 })).ok).toBe(true);
    expect((await client.reserve('b', { 'i1.inc.1': 300, 'i1.cand.1': 200 })).ok).toBe(true);
    expect((await client.snapshot('b'))?.reserved_micro_usd).toBe(500);
    const s1 = await client.settle('b', { prefix: 'i1.inc.' }, 120);
    expect(s1).toEqual({ found: true, releasedMicroUsd: 300, settledMicroUsd: 120, overchargeMicroUsd: 0 });
    const s2 = await client.settle('b', { prefix: 'i1.inc.' }, 120);
    expect(s2.found).toBe(false);
    expect(await client.snapshot('b')).toEqual({
      limit_micro_usd: 1_000_000,
      reserved_micro_usd: 200,
      settled_micro_usd: 120,
      exhausted: false,
      outstanding: { 'i1.cand.1': 200 },
    });
    await client.settle('b', { ids: ['i1.cand.1'] }, 200);
    expect(await client.snapshot('b')).toEqual({
      limit_micro_usd: 1_000_000,
      reserved_micro_usd: 0,
      settled_micro_usd: 320,
      exhausted: false,
    });
  });

  it('refuses to reserve again an id that was settled, whole-request and without writing', async () => {
    await client.ledgers.put('s', newLedger(1));
    expect((await client.reserve('s', { 'i1.inc.1': 300 })).ok).toBe(true);
    await client.settle('s', { prefix: 'i1.inc.' }, 100);
    const before = await client.ledgers.get('s');
    const again = await client.reserve('s', { 'i1.inc.1': 300, 'i1.cand.1': 50 });
    expect(again).toMatchObject({ ok: false, reason: 'already_settled', settledIds: ['i1.inc.1'] });
    expect((await client.ledgers.get('s'))?.revision).toBe(before?.revision);
    // an id settled by exact selector is refused too; ids never settled still reserve
    expect((await client.reserve('s', { 'i2.inc.1': 10 })).ok).toBe(true);
    await client.settle('s', { ids: ['i2.inc.1'] }, 'reserved');
    expect(await client.reserve('s', { 'i2.inc.1': 10 })).toMatchObject({ ok: false, reason: 'already_settled' });
    expect((await client.reserve('s', { 'i2.inc.2': 10 })).ok).toBe(true);
    expect(await client.snapshot('s')).toEqual({
      limit_micro_usd: 1_000_000,
      reserved_micro_usd: 10,
      settled_micro_usd: 110,
      exhausted: false,
      outstanding: { 'i2.inc.2': 10 },
    });
  });

  it('neverReserved: the settlement records are not looked up (the caller vouches), a settlement in the same batch still refuses', async () => {
    await client.ledgers.put('nr', newLedger(1));
    expect((await client.reserve('nr', { 'i1.inc.1': 300 })).ok).toBe(true);
    // settled, then reserved again in the same batch: refused even with the flag
    const [s, again] = await Promise.all([
      client.settle('nr', { ids: ['i1.inc.1'] }, 100),
      client.reserve('nr', { 'i1.inc.1': 300 }, { neverReserved: true }),
    ]);
    expect(s.found).toBe(true);
    expect(again).toMatchObject({ ok: false, reason: 'already_settled', settledIds: ['i1.inc.1'] });
    // in a later batch the record is not read: the flag is the caller's promise that no id was ever reserved
    expect((await client.reserve('nr', { 'i1.inc.1': 300 }, { neverReserved: true })).ok).toBe(true);
    expect((await client.reserve('nr', { 'i9.inc.1': 5 }, { neverReserved: true })).ok).toBe(true);
    expect(await client.snapshot('nr')).toMatchObject({ reserved_micro_usd: 305, settled_micro_usd: 100 });
  });

  it('a reserve racing the settlement of the same id never leaves it reserved after the settlement', async () => {
    for (let round = 0; round < 20; round++) {
      const id = `race${round}`;
      await client.ledgers.put(id, newLedger(1));
      await client.reserve(id, { r: 100 });
      // the settlement and a duplicate reserve (a redelivery) at once
      const [s, r] = await Promise.all([client.settle(id, { ids: ['r'] }, 40), client.reserve(id, { r: 100 })]);
      expect(s.found).toBe(true);
      const l = (await client.snapshot(id))!;
      // either the reserve saw it outstanding (a no-op) or saw the settlement record: never re-reserved
      expect({ round, reserved: l.reserved_micro_usd, settled: l.settled_micro_usd, r: r.ok || r.reason }).toEqual({
        round,
        reserved: 0,
        settled: 40,
        r: r.ok ? true : 'already_settled',
      });
    }
  });

  it('clamps an actual cost above its reservation and reports the excess', async () => {
    await client.ledgers.put('c', newLedger(1));
    await client.reserve('c', { r: 50 });
    const s = await client.settle('c', { ids: ['r'] }, 80);
    expect(s).toEqual({ found: true, releasedMicroUsd: 50, settledMicroUsd: 50, overchargeMicroUsd: 30 });
    expect(overcharges).toContain(30);
    expect((await client.snapshot('c'))?.settled_micro_usd).toBe(50);
  });

  it('reports no_ledger for a campaign without a ledger', async () => {
    expect(await client.reserve('nope', { a: 1 })).toMatchObject({ ok: false, reason: 'no_ledger' });
  });

  it('keeps settled + reserved ≤ limit under 6 concurrent clients racing 300 reservations', async () => {
    await client.ledgers.put('d', newLedger(0.01)); // 10,000 micro-USD
    const clients = await Promise.all(
      Array.from({ length: 6 }, async () => new BudgetLedgerClient(await openKv(bus, bus.names.buckets.budget))),
    );
    let sampling = true;
    const samples: number[] = [];
    const sampler = (async () => {
      while (sampling) {
        const l = await client.snapshot('d');
        if (l) samples.push(l.settled_micro_usd + l.reserved_micro_usd);
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    let granted = 0;
    let settledSum = 0;
    await Promise.all(
      clients.map(async (c, w) => {
        for (let i = 0; i < 50; i++) {
          const id = `w${w}.i${i}`;
          const r = await c.reserve('d', { [id]: 97 });
          if (!r.ok) continue;
          granted++;
          const actual = (w * 50 + i) % 98; // 0..97, never above the reservation
          settledSum += actual;
          await c.settle('d', { ids: [id] }, actual);
        }
      }),
    );
    sampling = false;
    await sampler;
    const end = await client.snapshot('d');
    expect(samples.length).toBeGreaterThan(10);
    expect(Math.max(...samples)).toBeLessThanOrEqual(10_000);
    expect(end?.reserved_micro_usd).toBe(0);
    expect(end?.settled_micro_usd).toBe(settledSum);
    // 300 × 97 far exceeds the limit: the ledger must have refused some, and granted at least limit/97 worth early on
    expect(granted).toBeLessThan(300);
    expect(granted).toBeGreaterThanOrEqual(Math.floor(10_000 / 97));
  });

  it('applies concurrent operations of one client as one batch: exact totals, in arrival order, few writes', async () => {
    await client.ledgers.put('g', newLedger(0.00003)); // 30 micro-USD
    const rev0 = (await client.ledgers.get('g'))!.revision;
    // 40 reserves of 1 issued together (30 fit), each settled at once with actual 0 or 1
    const rs = await Promise.all(Array.from({ length: 40 }, (_, i) => client.reserve('g', { [`r${i}`]: 1 })));
    expect(rs.map((r) => r.ok)).toEqual(Array.from({ length: 40 }, (_, i) => i < 30));
    expect(rs[30]).toMatchObject({ ok: false, reason: 'budget_exhausted' });
    const ss = await Promise.all(Array.from({ length: 30 }, (_, i) => client.settle('g', { ids: [`r${i}`] }, i % 2)));
    expect(ss.every((s) => s.found && s.releasedMicroUsd === 1)).toBe(true);
    // a settle and a re-reserve of the same id in one batch: the reserve sees the settlement
    const [s, again] = await Promise.all([
      client.settle('g', { ids: ['r0'] }, 0),
      client.reserve('g', { r0: 1, fresh: 1 }),
    ]);
    expect(s.found).toBe(false); // settled above already
    expect(again).toMatchObject({ ok: false, reason: 'already_settled', settledIds: ['r0'] });
    const end = (await client.ledgers.get('g'))!;
    expect(end.value).toEqual({ limit_micro_usd: 30, reserved_micro_usd: 0, settled_micro_usd: 15, exhausted: true });
    // 70 changing operations, one writer: a handful of group commits, not one ledger write each
    // (the revision is the bucket's sequence, which also counts the 30 settlement records)
    expect(end.revision - rev0 - 30).toBeLessThan(10);
  });

  it('compacts the settlement records of a finished campaign: none left, totals kept, nothing reservable again', async () => {
    const countRecords = async (c: string) => {
      let n = 0;
      for await (const _k of await client.ledgers.kv.keys(`${c}.settled.>`)) n++;
      return n;
    };
    await client.ledgers.put('cmp', newLedger(1));
    const ids = Array.from({ length: 40 }, (_, i) => `item${i}.arm.1`);
    for (const id of ids) expect((await client.reserve('cmp', { [id]: 100 })).ok).toBe(true);
    for (const id of ids.slice(0, 39)) await client.settle('cmp', { ids: [id] }, 60);
    // one still outstanding: nothing is compacted or closed
    expect(await client.compactSettled('cmp')).toEqual({ removed: 0, outstanding: 1 });
    expect(await countRecords('cmp')).toBe(39);
    expect((await client.snapshot('cmp'))!.exhausted).toBe(false);
    await client.settle('cmp', { ids: [ids[39]!] }, 60);
    const before = (await client.snapshot('cmp'))!;
    expect(await client.compactSettled('cmp')).toEqual({ removed: 40, outstanding: 0 });
    expect(await countRecords('cmp')).toBe(0);
    const after = (await client.snapshot('cmp'))!;
    expect(after).toMatchObject({
      settled_micro_usd: before.settled_micro_usd,
      reserved_micro_usd: 0,
      exhausted: true,
    });
    // a late redelivery of a settled id cannot reopen it, with or without its record
    expect(await client.reserve('cmp', { [ids[0]!]: 100 })).toMatchObject({ ok: false, reason: 'budget_exhausted' });
    expect(await client.compactSettled('cmp')).toEqual({ removed: 0, outstanding: 0 }); // idempotent
  });
});

describe('BudgetLedgerClient settle at the reserved upper bound', () => {
  it("charges exactly what was reserved when the actual is 'reserved'", async () => {
    const bus = await connectBus({ url: sharedNatsUrl(), name: 'budget-test2', prefix: randomPrefix('bud') });
    await provision(bus, { storage: 'memory' });
    const c = new BudgetLedgerClient(await openKv(bus, bus.names.buckets.budget));
    await c.ledgers.put('e', newLedger(1));
    await c.reserve('e', { 'i.a.1': 70, 'i.a.2': 30, 'i.b.1': 5 });
    expect(await c.settle('e', { prefix: 'i.a.' }, 'reserved')).toEqual({
      found: true,
      releasedMicroUsd: 100,
      settledMicroUsd: 100,
      overchargeMicroUsd: 0,
    });
    expect(await c.snapshot('e')).toMatchObject({
      reserved_micro_usd: 5,
      settled_micro_usd: 100,
      outstanding: { 'i.b.1': 5 },
    });
    await bus.close();
  });
});
