import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { sharedNatsUrl } from '@shadowplane/testkit';
import { itemHash, type Api, type ItemEvent, type Observation } from '@shadowplane/contracts';
import { prepareArmRequest } from '@shadowplane/providers';
import {
  campaignState,
  chatEnvelope,
  launchCampaign,
  ledger,
  publishEnvelopes,
  readArmStates,
  readObs,
  simConfig,
  sleep,
  spawnWorker,
  startRig,
  waitFor,
  type Rig,
} from './harness.js';

const arms: Record<
  string,
  {
    api: Api;
    path: string;
    model: string;
    provider: string;
    card: { input: number; output: number; cached_input: number };
  }
> = {
  large: {
    api: 'openai.chat',
    path: '/v1/chat/completions',
    model: 'sim-large',
    provider: 'simopenai',
    card: { input: 2.5, cached_input: 1.25, output: 10 },
  },
  medium: {
    api: 'anthropic.messages',
    path: '/v1/messages',
    model: 'sim-medium',
    provider: 'simanthropic',
    card: { input: 0.4, cached_input: 0.1, output: 1.6 },
  },
};
const MAX_OUT = 100;

describe('crash safety: kill -9 workers mid-dispatch', () => {
  let rig: Rig;
  const workers: { child: ChildProcess; workerId: string }[] = [];
  beforeAll(async () => {
    const cfg = simConfig();
    // slow enough that every worker always has calls in flight when it is killed
    for (const m of Object.values(cfg.models))
      Object.assign(m, { latency: { ttft_ms: { median: 400, sigma: 0.3 }, output_tokens_per_s: 2000, jitter: 0.2 } });
    rig = await startRig(sharedNatsUrl(), cfg);
  });
  afterAll(async () => {
    for (const w of workers) w.child.kill('SIGKILL');
    await rig?.close();
  });

  it('never invokes an arm twice, charges orphaned arms their upper bound, and the survivor completes the rest', async () => {
    const N = 60;
    const limits = { first_byte_timeout_ms: 5000, stall_timeout_ms: 5000, max_retries: 0, concurrency: 64 };
    const { id } = await launchCampaign(rig.bus, {
      name: 'crash',
      suite: 'cr',
      call_types: ['qa'],
      incumbent: {
        id: 'large',
        provider: 'simopenai',
        model: 'sim-large',
        rate_card: arms.large!.card,
        max_output_tokens: MAX_OUT,
        limits,
      },
      candidates: [
        {
          id: 'medium',
          provider: 'simanthropic',
          model: 'sim-medium',
          rate_card: arms.medium!.card,
          max_output_tokens: MAX_OUT,
          limits,
        },
      ],
      max_items: N,
      max_cost_usd: 10,
      aa_share: 0,
    });
    workers.push(
      ...(await Promise.all(
        Array.from({ length: 4 }, () => spawnWorker(rig, { SHADOWPLANE_DUPLICATOR_ITEM_CONCURRENCY: '4' })),
      )),
    );
    const envs = Array.from({ length: N }, (_, i) =>
      chatEnvelope('cr', 'qa', `Crash item ${i}: name a prime larger than ${i * 11}.`),
    );
    await publishEnvelopes(rig.bus, envs);
    // kill three of the four workers, one after another, while they have calls in flight
    const killed: string[] = [];
    for (let k = 0; k < 3; k++) {
      await waitFor('calls in flight', async () => rig.sim.calls().some((c) => c.endedAtMs === null), 60_000, 20);
      await sleep(150);
      const w = workers[k]!;
      w.child.kill('SIGKILL');
      killed.push(w.workerId);
      await sleep(700);
    }
    await waitFor(
      'campaign completed by the survivor',
      async () => (await campaignState(rig.bus, id))?.state === 'completed',
      120_000,
      250,
    );

    const msgs = await readObs(rig.bus, id);
    const obs = msgs.filter((m): m is Observation => m.schema === 'shadow.observation/v1');
    const lostEvents = msgs.filter(
      (m): m is ItemEvent => m.schema === 'shadow.item_event/v1' && m.reason === 'lost_in_flight',
    );
    const states = await readArmStates(rig.bus, id);
    const lost = [...states.entries()].filter(([, s]) => s.state === 'lost');
    const lostInvoked = lost.filter(([, s]) => (s.charged_micro_usd ?? 0) > 0);

    // the kills hit calls in flight
    expect(lostInvoked.length).toBeGreaterThan(0);
    expect(lostInvoked.every(([, s]) => killed.includes(s.worker_id))).toBe(true);

    // 1. no arm invoked twice for an item (sim call log: one call per (item, arm) request)
    const perRequest = new Map<string, number>();
    for (const c of rig.sim.calls()) perRequest.set(c.requestHash, (perRequest.get(c.requestHash) ?? 0) + 1);
    expect([...perRequest.entries()].filter(([, n]) => n > 1)).toEqual([]);

    // 2. orphaned reservations settled at their upper bound: UTF-8 bytes of the body sent × the
    //    highest input price + max output tokens × output price, rounded up to whole µUSD
    const byItem = new Map(envs.map((e) => [e.item_hash, e]));
    for (const [key, s] of lostInvoked) {
      const [, item, armId] = key.split('.') as [string, string, string];
      const a = arms[armId]!;
      const prep = prepareArmRequest('openai.chat', byItem.get(item)!.request.body, {
        api: a.api,
        model: a.model,
        maxOutputTokens: MAX_OUT,
      });
      if (!prep.ok) throw new Error(prep.reason);
      const bytes = Buffer.byteLength(JSON.stringify(prep.body));
      const bound = Math.ceil(bytes * a.card.input + MAX_OUT * a.card.output);
      expect(s.charged_micro_usd).toBe(bound);
      // and the sim saw at most that one call
      expect(perRequest.get(itemHash(a.api, a.path, prep.body)) ?? 0).toBeLessThanOrEqual(1);
    }

    // 3. every item is accounted for: all arms observed, or excluded as lost in flight
    const lostItems = new Set(lostEvents.map((e) => e.item_hash));
    for (const e of envs) {
      const armsSeen = obs
        .filter((o) => o.item_hash === e.item_hash)
        .map((o) => o.arm_id)
        .sort();
      if (lostItems.has(e.item_hash)) continue;
      expect(armsSeen).toEqual(['large', 'medium']);
    }
    for (const [key] of lost) expect(lostItems.has(key.split('.')[1]!)).toBe(true);
    expect(obs.every((o) => o.status === 'ok')).toBe(true);

    // 4. the ledger: nothing outstanding, settled = observations' charges + lost charges, exactly
    const l = (await ledger(rig.bus, id))!;
    expect(l.reserved_micro_usd).toBe(0);
    expect(l.settled_micro_usd).toBe(
      obs.reduce((a, o) => a + o.charged_micro_usd, 0) + lost.reduce((a, [, s]) => a + (s.charged_micro_usd ?? 0), 0),
    );
    process.stdout.write(
      `crash: killed ${killed.length} workers; ${lostInvoked.length} arms lost in flight over ${lostItems.size} items; ${obs.length} observations; ${rig.sim.calls().length} sim calls\n`,
    );
  }, 300_000);
});
