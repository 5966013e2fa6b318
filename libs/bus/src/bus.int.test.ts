import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BudgetLedger } from '@shadowplane/contracts';
import { execFileSync } from 'node:child_process';
import { natsServerBinary, randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import { assertCasSafeServer, connectBus, provision, openKv, JsonKv, type Bus } from './index.js';

describe('bus', () => {
  let bus: Bus;
  beforeAll(async () => {
    bus = await connectBus({ url: sharedNatsUrl(), name: 'bus-test', prefix: randomPrefix('bus') });
  });
  afterAll(async () => bus.close());

  it('provisions every stream and bucket, and a second provision is a no-op', async () => {
    await provision(bus, { storage: 'memory' });
    const made = await provision(bus, { storage: 'memory' });
    const streams: string[] = [];
    for await (const s of bus.jsm.streams.list()) streams.push(s.config.name);
    const n = bus.names;
    for (const name of [
      n.streams.capture,
      n.streams.obs,
      `KV_${n.buckets.budget}`,
      `KV_${n.buckets.campaigns}`,
      `KV_${n.buckets.dispatch}`,
      `KV_${n.buckets.flags}`,
      `KV_${n.buckets.reports}`,
      `OBJ_${n.buckets.artifacts}`,
      `OBJ_${n.captureBodies}`,
    ]) {
      expect(streams).toContain(name);
    }
    // what it returns (a role's startup log) names exactly those
    expect(
      [...made.streams, ...made.buckets.map((b) => `KV_${b}`), ...made.objectStores.map((o) => `OBJ_${o}`)].sort(),
    ).toEqual(
      [
        n.streams.capture,
        n.streams.obs,
        `KV_${n.buckets.budget}`,
        `KV_${n.buckets.campaigns}`,
        `KV_${n.buckets.dispatch}`,
        `KV_${n.buckets.flags}`,
        `KV_${n.buckets.reports}`,
        `KV_${n.buckets.suites}`,
        `OBJ_${n.buckets.artifacts}`,
        `OBJ_${n.captureBodies}`,
        `OBJ_${n.datasets}`,
      ].sort(),
    );
  });

  it('reads the server version at connect: the pinned build, not one with the replicated-bucket CAS race', async () => {
    const reported = /v(\d+\.\d+\.\d+)/.exec(execFileSync(natsServerBinary(), ['--version'], { encoding: 'utf8' }))![1];
    expect(bus.serverVersion).toBe(reported);
    expect(() => assertCasSafeServer(bus.serverVersion)).not.toThrow();
  });

  it('compare-and-set mutate loses no update under 40 concurrent writers', async () => {
    await provision(bus, { storage: 'memory' });
    const ledger = new JsonKv(await openKv(bus, bus.names.buckets.budget), BudgetLedger);
    await ledger.put('c1', {
      limit_micro_usd: 1_000_000,
      reserved_micro_usd: 0,
      settled_micro_usd: 0,
      exhausted: false,
    });
    await Promise.all(
      Array.from({ length: 40 }, () =>
        ledger.mutate('c1', (cur) => (cur ? { ...cur, reserved_micro_usd: cur.reserved_micro_usd + 7 } : undefined)),
      ),
    );
    expect((await ledger.get('c1'))?.value.reserved_micro_usd).toBe(280);
  });

  it("mutateTogether group-commits one instance's concurrent calls and loses none against another writer", async () => {
    await provision(bus, { storage: 'memory' });
    const kv = await openKv(bus, bus.names.buckets.dispatch);
    const Count = z.object({ n: z.number().int(), order: z.array(z.number()) }).strict();
    const a = new JsonKv(kv, Count);
    const b = new JsonKv(kv, Count); // another process's client of the same key
    const rev0 = await a.put('cnt', { n: 0, order: [] });
    const inc = (who: JsonKv<typeof Count>, i: number) =>
      who.mutateTogether('cnt', (cur) => ({ n: (cur?.n ?? 0) + 1, order: [...(cur?.order ?? []), i] }));
    const seen = await Promise.all([
      ...Array.from({ length: 30 }, (_, i) => inc(a, i)),
      ...Array.from({ length: 10 }, (_, i) =>
        b.mutate('cnt', (cur) => ({ n: cur!.n + 1, order: [...cur!.order, 100 + i] })),
      ),
    ]);
    const end = (await a.get('cnt'))!;
    expect(end.value.n).toBe(40);
    expect([...end.value.order].sort((x, y) => x - y)).toEqual([
      ...Array.from({ length: 30 }, (_, i) => i),
      ...Array.from({ length: 10 }, (_, i) => 100 + i),
    ]);
    // a's calls keep their arrival order within the value, and each saw its own result
    const mine = end.value.order.filter((x) => x < 100);
    expect(mine).toEqual([...mine].sort((x, y) => x - y));
    for (let i = 0; i < 30; i++) expect(seen[i]!.value!.order.at(-1)).toBe(i);
    // b's 10 writes are one each; a's 30 calls took far fewer than 30 (the revision counts writes)
    expect(end.revision - rev0 - 10).toBeLessThan(15);
  });

  it('validates writes unless told the writer is trusted, and reads always', async () => {
    const kv = await openKv(bus, bus.names.buckets.flags);
    const On = z.object({ on: z.boolean() }).strict();
    const bad = { on: 'yes' } as unknown as { on: boolean };
    await expect(new JsonKv(kv, On).put('v1', bad)).rejects.toThrow();
    expect(await kv.get('v1')).toBeNull(); // nothing was written
    await new JsonKv(kv, On, { validateWrites: false }).put('v2', bad);
    await expect(new JsonKv(kv, On).get('v2')).rejects.toThrow();
    await expect(new JsonKv(kv, On, { validateWrites: false }).get('v2')).rejects.toThrow();
  });

  it('create refuses an existing key and update refuses a stale revision', async () => {
    const kv = new JsonKv(await openKv(bus, bus.names.buckets.flags), z.object({ on: z.boolean() }));
    const rev = await kv.create('f', { on: true });
    expect(rev).toBeTypeOf('number');
    expect(await kv.create('f', { on: false })).toBeNull();
    expect(await kv.update('f', { on: false }, rev! + 100)).toBeNull();
    expect(await kv.update('f', { on: false }, rev!)).toBeTypeOf('number');
    expect((await kv.get('f'))?.value).toEqual({ on: false });
  });
});
