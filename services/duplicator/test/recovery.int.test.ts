import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { JsonKv, openKv } from '@shadowplane/bus';
import { sharedNatsUrl } from '@shadowplane/testkit';
import { Campaign, type ItemEvent, type Observation } from '@shadowplane/contracts';
import {
  campaignState,
  chatEnvelope,
  launchCampaign,
  ledger,
  publishEnvelopes,
  readArmStates,
  readObs,
  simConfig,
  spawnWorker,
  startRig,
  waitFor,
  type Rig,
  largeMediumArms,
} from './harness.js';

// A campaign leaves `running` while its arms are in flight, every worker is killed (-9), and a
// replacement starts: whatever the state, the replacement recovers what the dead held — lost arms
// charged their upper bound, finished arms settled and published — and nothing stays reserved.
const limits = { first_byte_timeout_ms: 5000, stall_timeout_ms: 5000, max_retries: 0, concurrency: 64 };

describe('recovery of arms lost in flight, in every campaign state', () => {
  let rig: Rig;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    const cfg = simConfig();
    // slow calls: the kill always finds some in flight
    for (const m of Object.values(cfg.models))
      Object.assign(m, { latency: { ttft_ms: { median: 1500, sigma: 0.2 }, output_tokens_per_s: 2000, jitter: 0.1 } });
    rig = await startRig(sharedNatsUrl(), cfg);
  });
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await rig?.close();
  });

  const spawn = async () => {
    const w = await spawnWorker(rig, { SHADOWPLANE_DUPLICATOR_ITEM_CONCURRENCY: '4' });
    children.push(w.child);
    return w;
  };
  const setState = async (id: string, state: Campaign['state']) => {
    const kv = new JsonKv(await openKv(rig.bus, rig.bus.names.buckets.campaigns), Campaign);
    await kv.mutate(id, (c) =>
      c ? { ...c, state, state_reason: 'test', updated_at: new Date().toISOString() } : undefined,
    );
  };
  const kill = (c: ChildProcess) =>
    new Promise<void>((r) =>
      c.exitCode !== null || c.signalCode !== null ? r() : (c.once('exit', () => r()), c.kill('SIGKILL')),
    );

  /** Everything is accounted for: checked at the end of each scenario. */
  const audit = async (id: string) => {
    const l = (await ledger(rig.bus, id))!;
    const msgs = await readObs(rig.bus, id);
    const obs = msgs.filter((m): m is Observation => m.schema === 'shadow.observation/v1');
    const events = msgs.filter((m): m is ItemEvent => m.schema === 'shadow.item_event/v1');
    const states = [...(await readArmStates(rig.bus, id)).entries()];
    const lost = states.filter(([, s]) => s.state === 'lost');
    const calls = rig.sim.calls(); // every scenario's: no request of any reached the provider twice
    // nothing reserved, nothing left invoking
    expect(l.reserved_micro_usd).toBe(0);
    expect(l.outstanding ?? {}).toEqual({});
    expect(states.filter(([, s]) => s.state === 'invoking')).toEqual([]);
    // settled = observations' charges + lost arms at their bounds, exactly
    expect(l.settled_micro_usd).toBe(
      obs.reduce((a, o) => a + o.charged_micro_usd, 0) + lost.reduce((a, [, s]) => a + (s.charged_micro_usd ?? 0), 0),
    );
    expect(l.settled_micro_usd).toBeLessThanOrEqual(l.limit_micro_usd);
    // every lost arm that was invoked was charged its whole reservation, and its item has a lost_in_flight event
    const lostInvoked = lost.filter(([, s]) => (s.charged_micro_usd ?? 0) > 0);
    for (const [, s] of lostInvoked) expect(s.charged_micro_usd).toBe(s.reserved_micro_usd);
    const lostItems = new Set(events.filter((e) => e.reason === 'lost_in_flight').map((e) => e.item_hash));
    for (const [key] of lostInvoked) expect(lostItems.has(key.split('.')[1]!)).toBe(true);
    // arms never started were released (charge 0) and their items excluded with a reason
    const excluded = new Set(events.filter((e) => e.kind === 'excluded').map((e) => e.item_hash));
    for (const [key] of lost) expect(excluded.has(key.split('.')[1]!)).toBe(true);
    // no request reached the provider twice
    const per = new Map<string, number>();
    for (const c of calls) per.set(c.requestHash, (per.get(c.requestHash) ?? 0) + 1);
    expect([...per.values()].filter((n) => n > 1)).toEqual([]);
    return { lostInvoked: lostInvoked.length, obs: obs.length, settled: l.settled_micro_usd };
  };

  for (const target of ['stopped', 'budget_exhausted', 'paused'] as const) {
    it(`${target}: a replacement worker recovers every arm a killed worker held`, async () => {
      const suite = `rec-${target.replace('_', '-')}`;
      const { id } = await launchCampaign(rig.bus, {
        name: `recovery ${target}`,
        suite,
        call_types: ['qa'],
        ...largeMediumArms({ limits }),
        max_items: 40,
        // budget_exhausted: room for a few items only, so the refusal comes while arms are in flight
        max_cost_usd: target === 'budget_exhausted' ? 0.012 : 10,
        aa_share: 0,
      });
      const before = rig.sim.calls().length;
      const workers = await Promise.all([spawn(), spawn()]);
      const envs = Array.from({ length: 40 }, (_, i) =>
        chatEnvelope(suite, 'qa', `Recovery ${target} item ${i}: what is ${i} squared?`),
      );
      await publishEnvelopes(rig.bus, envs);
      await waitFor(
        'calls in flight',
        async () =>
          rig.sim
            .calls()
            .slice(before)
            .some((c) => c.endedAtMs === null),
        60_000,
        10,
      );
      if (target === 'budget_exhausted')
        await waitFor(
          'budget exhausted',
          async () => (await campaignState(rig.bus, id))?.state === 'budget_exhausted',
          60_000,
          10,
        );
      else await setState(id, target);
      const inFlight = rig.sim
        .calls()
        .slice(before)
        .filter((c) => c.endedAtMs === null).length;
      expect(workers).toHaveLength(2);
      // every worker alive (an earlier scenario's replacement consumes this campaign too)
      await Promise.all(children.splice(0).map((c) => kill(c)));
      expect(inFlight).toBeGreaterThan(0);

      await spawn();
      if (target === 'paused') {
        // paused: the lost arms are recovered now; admitted items wait for the resumption
        await waitFor(
          'no arm left invoking',
          async () => [...(await readArmStates(rig.bus, id)).values()].every((s) => s.state !== 'invoking'),
          60_000,
          200,
        );
        expect((await campaignState(rig.bus, id))?.state).toBe('paused');
        await setState(id, 'running');
        await waitFor(
          'completed after resuming',
          async () => (await campaignState(rig.bus, id))?.state === 'completed',
          120_000,
          200,
        );
      } else {
        await waitFor(
          'nothing reserved',
          async () => {
            const l = await ledger(rig.bus, id);
            return (
              l !== null &&
              l.reserved_micro_usd === 0 &&
              [...(await readArmStates(rig.bus, id)).values()].every((s) => s.state !== 'invoking')
            );
          },
          60_000,
          200,
        );
      }
      const r = await audit(id);
      expect(r.lostInvoked).toBeGreaterThan(0);
      expect((await campaignState(rig.bus, id))?.state).toBe(target === 'paused' ? 'completed' : target);
      process.stdout.write(
        `recovery ${target}: ${inFlight} calls in flight at the kill; ${r.lostInvoked} arms lost and charged; ${r.obs} observations; settled ${r.settled} µUSD\n`,
      );
    }, 240_000);
  }
});
