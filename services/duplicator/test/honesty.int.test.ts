import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedNatsUrl } from '@shadowplane/testkit';
import type { Observation } from '@shadowplane/contracts';
import {
  campaignState,
  chatEnvelope,
  launchCampaign,
  ledger,
  publishEnvelopes,
  readObs,
  setPaidDispatch,
  simConfig,
  sleep,
  startRig,
  startWorker,
  waitFor,
  type Rig,
} from './harness.js';
import type { DuplicatorHandle } from '../src/index.js';

const card = (input: number, output: number) => ({ input, output });

describe('observation honesty, contemporaneity and the kill switch (one in-process worker)', () => {
  let rig: Rig;
  let w: DuplicatorHandle;
  beforeAll(async () => {
    const cfg = simConfig();
    // a model that never reports usage (exercises null usage and abandoned calls)
    cfg.models['sim-nousage'] = { ...cfg.models['sim-small']!, usage_mode: 'never' } as never;
    rig = await startRig(sharedNatsUrl(), cfg);
    w = await startWorker(rig, { itemConcurrency: 8 });
  });
  afterAll(async () => {
    await w?.close();
    await rig?.close();
  });

  it('keeps null usage null, flags the call abandoned, and charges its upper bound', async () => {
    const { id } = await launchCampaign(rig.bus, {
      name: 'nullusage',
      suite: 'nu',
      call_types: ['qa'],
      incumbent: {
        id: 'large',
        provider: 'simopenai',
        model: 'sim-large',
        rate_card: card(2.5, 10),
        max_output_tokens: 100,
      },
      candidates: [
        {
          id: 'nousage',
          provider: 'simopenai',
          model: 'sim-nousage',
          rate_card: card(0.1, 0.4),
          max_output_tokens: 100,
        },
      ],
      max_items: 4,
      max_cost_usd: 1,
      aa_share: 0,
    });
    await publishEnvelopes(
      rig.bus,
      Array.from({ length: 4 }, (_, i) =>
        chatEnvelope('nu', 'qa', `Null usage ${i}: say hi.`, { stream: i % 2 === 0 }),
      ),
    );
    await waitFor('completed', async () => (await campaignState(rig.bus, id))?.state === 'completed', 30_000);
    const obs = (await readObs(rig.bus, id)).filter((m): m is Observation => m.schema === 'shadow.observation/v1');
    const nu = obs.filter((o) => o.arm_id === 'nousage');
    expect(nu).toHaveLength(4);
    for (const o of nu) {
      expect(o.usage).toEqual({
        input_tokens: null,
        cache_read_input_tokens: null,
        cache_creation_input_tokens: null,
        output_tokens: null,
        reasoning_output_tokens: null,
        raw: null,
      });
      expect(o.abandoned).toBe(true);
      expect(o.cost).toEqual({ usd: null, micro_usd: null, basis: null, reason: 'no_usage' });
      expect(o.charged_micro_usd).toBeGreaterThan(0); // billed but uncounted: charged at its upper bound
      expect(o.artifact_ref).toMatch(/^art:[0-9a-f]{64}$/);
    }
    expect(
      obs.filter((o) => o.arm_id === 'large').every((o) => o.abandoned === false && o.usage.output_tokens !== null),
    ).toBe(true);
    expect((await ledger(rig.bus, id))?.settled_micro_usd).toBe(obs.reduce((a, o) => a + o.charged_micro_usd, 0));
  });

  it('starts the arms of an item within 50 ms of each other at p95', async () => {
    const N = 40;
    const { id } = await launchCampaign(rig.bus, {
      name: 'skew',
      suite: 'sk',
      call_types: ['qa'],
      incumbent: {
        id: 'large',
        provider: 'simopenai',
        model: 'sim-large',
        rate_card: card(2.5, 10),
        max_output_tokens: 100,
      },
      candidates: [
        {
          id: 'medium',
          provider: 'simanthropic',
          model: 'sim-medium',
          rate_card: card(0.4, 1.6),
          max_output_tokens: 100,
        },
        { id: 'small', provider: 'simrouter', model: 'sim-small', rate_card: card(0.1, 0.4), max_output_tokens: 100 },
      ],
      max_items: N,
      max_cost_usd: 1,
      aa_share: 0.2,
    });
    await publishEnvelopes(
      rig.bus,
      Array.from({ length: N }, (_, i) => chatEnvelope('sk', 'qa', `Skew ${i}: what is ${i} squared?`)),
    );
    await waitFor('completed', async () => (await campaignState(rig.bus, id))?.state === 'completed', 60_000);
    const obs = (await readObs(rig.bus, id)).filter((m): m is Observation => m.schema === 'shadow.observation/v1');
    // per item: the largest start skew among its arms (start_skew_ms is relative to the earliest arm)
    const perItem = new Map<string, number>();
    for (const o of obs) perItem.set(o.item_hash, Math.max(perItem.get(o.item_hash) ?? 0, o.start_skew_ms));
    const skews = [...perItem.values()].sort((a, b) => a - b);
    expect(skews).toHaveLength(N);
    const p95 = skews[Math.ceil(0.95 * skews.length) - 1]!;
    expect(p95).toBeLessThanOrEqual(50);
    // and the recorded skew agrees with the recorded start times
    for (const h of perItem.keys()) {
      const mine = obs.filter((o) => o.item_hash === h);
      const first = Math.min(...mine.map((o) => Date.parse(o.started_at)));
      for (const o of mine)
        expect(Math.abs(Date.parse(o.started_at) - first - o.start_skew_ms)).toBeLessThanOrEqual(1.5);
    }
    process.stdout.write(
      `skew: p50 ${skews[Math.floor(skews.length / 2)]!.toFixed(2)} ms, p95 ${p95.toFixed(2)} ms, max ${skews[skews.length - 1]!.toFixed(2)} ms over ${N} items\n`,
    );
  });

  it('starts no provider call within 1 s of paid_dispatch going off, and resumes when it is on again', async () => {
    const { id } = await launchCampaign(rig.bus, {
      name: 'flag',
      suite: 'fl',
      call_types: ['qa'],
      incumbent: {
        id: 'large',
        provider: 'simopenai',
        model: 'sim-large',
        rate_card: card(2.5, 10),
        max_output_tokens: 100,
      },
      candidates: [
        { id: 'small', provider: 'simopenai', model: 'sim-small', rate_card: card(0.1, 0.4), max_output_tokens: 100 },
      ],
      max_items: 30,
      max_cost_usd: 1,
      aa_share: 0,
    });
    const before = rig.sim.calls().length;
    await setPaidDispatch(rig.bus, false);
    const offAt = Date.now();
    await sleep(1000);
    await publishEnvelopes(
      rig.bus,
      Array.from({ length: 30 }, (_, i) => chatEnvelope('fl', 'qa', `Flag ${i}: count to three.`)),
    );
    await sleep(1500);
    const duringOff = rig.sim
      .calls()
      .slice(before)
      .filter((c) => c.startedAtMs > offAt + 1000);
    expect(duringOff).toEqual([]);
    await setPaidDispatch(rig.bus, true);
    await waitFor(
      'completed after the flag is back on',
      async () => (await campaignState(rig.bus, id))?.state === 'completed',
      60_000,
    );
    const obs = (await readObs(rig.bus, id)).filter((m): m is Observation => m.schema === 'shadow.observation/v1');
    expect(obs).toHaveLength(60);
  });
});
