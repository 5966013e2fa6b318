import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectBus, provision, type Bus } from '@shadowplane/bus';
import { generateKey, keyringFrom } from '@shadowplane/artifacts';
import { Campaign, contentHash } from '@shadowplane/contracts';
import { verifyBundle } from '@shadowplane/evidence';
import { readFinalReport } from '@shadowplane/reports';
import { randomPrefix, sharedNatsUrl, synthCampaign, synthSpec } from '@shadowplane/testkit';
import { startVerdict, type VerdictHandle } from './index.js';

// The verdict service's sequential looks over a real nats-server: observations of a clearly
// worse candidate arrive in batches; the service moves the campaign to `decided` (compare-and-set
// on the campaign KV) once its confidence sequence (or, under group_sequential, a planned look's
// boundary) settles, well before max_items, and then writes the final report whose sequential
// record verifyBundle recomputes.

const keyring = keyringFrom('k1', { k1: generateKey() });

async function until<T>(fn: () => Promise<T | null | undefined>, timeoutMs = 30_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== null && v !== undefined) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each([
  ['sequential', 'cmp_5e9e000000000001'],
  ['group_sequential', 'cmp_5e9e000000000002'],
] as const)('verdict service: %s stopping', (rule, CID) => {
  let bus: Bus;
  let svc: VerdictHandle | null = null;
  const spec = synthSpec(['worse'], {
    max_items: 1000,
    margins: { noninferiority_pp: 5, min_savings: 0.2 },
    stopping: rule,
    stopping_batch_items: 20,
  });
  const campaign = Campaign.parse({
    schema: 'shadow.campaign/v1',
    id: CID,
    spec,
    spec_hash: contentHash(spec),
    comparison_key: 'gsm8k:math:inc:worse',
    run_index: 1,
    state: 'running',
    state_reason: null,
    created_at: '2026-11-01T11:00:00.000Z',
    updated_at: '2026-11-01T11:00:00.000Z',
  });

  beforeAll(async () => {
    const prefix = randomPrefix('vseq');
    bus = await connectBus({ url: sharedNatsUrl(), name: 'verdict-seq-test', prefix });
    await provision(bus, { storage: 'memory' });
    await bus.kvm.open(bus.names.buckets.campaigns).then((kv) => kv.put(CID, JSON.stringify(campaign)));
    svc = await startVerdict({
      natsUrl: sharedNatsUrl(),
      prefix,
      keyring,
      tickMs: 100,
      progressIntervalMs: 200,
      sequentialLookMs: 100,
      storage: 'memory',
    });
  });
  afterAll(async () => {
    await svc?.close();
    await bus?.close();
  });

  it('moves the campaign to decided once the clearly worse candidate is settled, before all items arrived', async () => {
    const kv = await bus.kvm.open(bus.names.buckets.campaigns);
    const state = async () => Campaign.parse((await kv.get(CID))!.json()).state;
    // 400 items in batches of 40; after each batch wait until the service has looked at it
    const msgs = synthCampaign(CID, 400, 0.85, { worse: 0.45 });
    let published = 0;
    for (let b = 0; b < 10 && (await state()) === 'running'; b++) {
      for (const m of msgs.slice(b * 80, (b + 1) * 80))
        await bus.js.publish(bus.names.obsSubject(CID), JSON.stringify(m));
      published = (b + 1) * 40;
      // the look is asynchronous: give it the chance to run before the next batch
      const t0 = Date.now();
      while (Date.now() - t0 < 1500 && (await state()) === 'running') await new Promise((r) => setTimeout(r, 100));
    }
    expect(await until(async () => ((await state()) === 'decided' ? true : null))).toBe(true);
    const c = Campaign.parse((await kv.get(CID))!.json());
    expect(c.state_reason).toMatch(new RegExp(`^${rule}: every candidate settled: math/worse fail at look \\d+`));
    expect(published).toBeLessThan(400);

    const fin = await until(() => readFinalReport(bus, CID));
    expect(fin.runRecord).toMatchObject({ campaign_state: 'decided', provisional: false });
    const cmp = fin.report.call_types![0]!.comparisons[0]!;
    expect(cmp.decision).toBe('fail');
    expect(cmp.sequential).toMatchObject({ decision: 'fail', max_items: 1000 });
    expect(cmp.sequential!.items_used).toBeLessThanOrEqual(cmp.sequential!.items_paired);
    expect(cmp.sequential!.items_saved).toBe(1000 - cmp.sequential!.items_paired);
    if (rule === 'group_sequential') {
      // settled at a planned look (every 20 paired items), against that look's boundary
      expect(cmp.sequential!.items_used % 20).toBe(0);
      expect(cmp.sequential!.planned_looks).toHaveLength(50);
      expect(cmp.sequential!.method).toMatch(/^group sequential/);
    }
    expect(verifyBundle(fin.bundle)).toEqual({ ok: true, problems: [] });
  });
});
