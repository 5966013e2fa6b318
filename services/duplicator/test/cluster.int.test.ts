import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { connectBus, openKv, type Bus } from '@shadowplane/bus';
import { BudgetLedger, type ItemEvent, type Observation } from '@shadowplane/contracts';
import { startNatsCluster, type NatsClusterHandle } from '@shadowplane/testkit';
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
  largeMediumArms,
} from './harness.js';

// The budget cap on a real 3-node JetStream cluster (three nats-servers routed on loopback, R3
// everywhere): two worker processes run a campaign whose budget runs out, while the leader of a
// stream is killed and restarted. Every revision of the ledger is watched.
const limits = { first_byte_timeout_ms: 5000, stall_timeout_ms: 5000, max_retries: 1, concurrency: 64 };
const N = 48;

describe('budget cap on a replicated 3-node NATS cluster', () => {
  let cluster: NatsClusterHandle;
  let rig: Rig;
  let watcher: Bus;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    cluster = await startNatsCluster({ size: 3 });
    const cfg = simConfig();
    for (const m of Object.values(cfg.models))
      Object.assign(m, { latency: { ttft_ms: { median: 150, sigma: 0.3 }, output_tokens_per_s: 4000, jitter: 0.2 } });
    rig = await startRig(cluster.url, cfg, { replicas: 3, storage: 'file' });
    watcher = await connectBus({ url: cluster.url, name: 'ledger-watch', prefix: rig.prefix, replicas: 3 });
  }, 120_000);
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await watcher?.close();
    await rig?.close();
    await cluster?.stop();
  });

  const leaderIndex = async (stream: string) => {
    const info = await rig.bus.jsm.streams.info(stream);
    return cluster.indexOf(info.cluster?.leader ?? '');
  };

  for (const victim of ['budget', 'capture+obs'] as const) {
    it(`never over the cap, settled = charges, nothing reserved, no double call, no capture lost — ${victim} leader killed and restarted`, async () => {
      const n = rig.bus.names;
      const suite = `cl-${victim === 'budget' ? 'b' : 'co'}`;
      // room for about half the items: the cap is reached while the leader is down or electing
      const { id } = await launchCampaign(rig.bus, {
        name: `cluster ${victim}`,
        suite,
        call_types: ['qa'],
        ...largeMediumArms({ limits }),
        max_items: N,
        max_cost_usd: 0.03,
        aa_share: 0,
      });
      // every revision of the ledger, from its creation on
      const revisions: BudgetLedger[] = [];
      const kv = await openKv(watcher, n.buckets.budget);
      const watch = await kv.watch({ key: id });
      const watching = (async () => {
        for await (const e of watch) if (e.operation === 'PUT') revisions.push(BudgetLedger.parse(e.json()));
      })();
      const before = rig.sim.calls().length;
      for (let i = 0; i < 2; i++)
        children.push(
          (await spawnWorker(rig, { SHADOWPLANE_NATS_REPLICAS: '3', SHADOWPLANE_DUPLICATOR_ITEM_CONCURRENCY: '6' }))
            .child,
        );
      const envs = Array.from({ length: N }, (_, i) =>
        chatEnvelope(suite, 'qa', `Cluster ${victim} item ${i}: spell ${i * 7} in words.`),
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

      const streams = victim === 'budget' ? [`KV_${n.buckets.budget}`] : [n.streams.capture, n.streams.obs];
      // leaders first, then the kills (a request to a server being killed would time out)
      const leaders = await Promise.all(streams.map((s) => leaderIndex(s)));
      expect(leaders.every((i) => i >= 0)).toBe(true);
      const killed = [...new Set(leaders)];
      // one server down at a time (R3 keeps a quorum): the workers carry on against the two
      // survivors while a new leader is elected, then it comes back and catches up
      for (const i of killed) {
        await cluster.kill(i);
        await sleep(2000);
        await cluster.restart(i);
      }
      let last = '';
      await waitFor(
        'campaign finished and nothing reserved',
        async () => {
          const c = await campaignState(rig.bus, id);
          const l = await ledger(rig.bus, id);
          last = `state ${c?.state}, reserved ${l?.reserved_micro_usd}, outstanding ${Object.keys(l?.outstanding ?? {}).length}`;
          if (!c || !l || c.state === 'running' || l.reserved_micro_usd > 0) return false;
          return [...(await readArmStates(rig.bus, id)).values()].every((st) => st.state !== 'invoking');
        },
        120_000,
        250,
      ).catch((e: Error) => {
        throw new Error(`${e.message}; last seen: ${last}`);
      });
      await sleep(500); // the last revisions reach the watcher
      watch.stop();
      await watching;

      const final = (await ledger(rig.bus, id))!;
      // 1. never over the cap, in any revision
      expect(revisions.length).toBeGreaterThan(10);
      const over = revisions.filter((r) => r.settled_micro_usd + r.reserved_micro_usd > r.limit_micro_usd);
      expect(over).toEqual([]);
      // 2. settled = Σ observation charges + lost arms at their bounds; nothing reserved
      const msgs = await readObs(rig.bus, id);
      const obs = msgs.filter((m): m is Observation => m.schema === 'shadow.observation/v1');
      const events = msgs.filter((m): m is ItemEvent => m.schema === 'shadow.item_event/v1');
      const states = [...(await readArmStates(rig.bus, id)).entries()];
      const lost = states.filter(([, s]) => s.state === 'lost');
      expect(final.reserved_micro_usd).toBe(0);
      expect(final.settled_micro_usd).toBe(
        obs.reduce((a, o) => a + o.charged_micro_usd, 0) + lost.reduce((a, [, s]) => a + (s.charged_micro_usd ?? 0), 0),
      );
      // every done arm's observation is on OBS (none lost with a stream leader)
      const done = states.filter(([, s]) => s.state === 'done');
      expect(new Set(obs.map((o) => `${id}.${o.item_hash}.${o.arm_id}`))).toEqual(new Set(done.map(([k]) => k)));
      // 3. the provider's bill ≤ settled: each call of this campaign either has its observation
      //    (charged its resolved cost or its bound) or belongs to a lost arm charged its bound
      const calls = rig.sim.calls().slice(before);
      const perRequest = new Map<string, number>();
      for (const c of calls) perRequest.set(c.requestHash, (perRequest.get(c.requestHash) ?? 0) + 1);
      expect([...perRequest.values()].filter((k) => k > 1)).toEqual([]); // 0 double invocations
      const attempts = obs.reduce((a, o) => a + o.attempts, 0) + lost.reduce((a, [, s]) => a + (s.attempts ?? 0), 0);
      expect(calls.length).toBeLessThanOrEqual(attempts + lost.length);
      // 4. no captured item lost: CAPTURE holds all N, and every admitted item is finished or excluded with an event
      const capInfo = await rig.bus.jsm.streams.info(n.streams.capture, {
        subjects_filter: n.captureSubject(suite, 'qa'),
      });
      expect(capInfo.state.subjects?.[n.captureSubject(suite, 'qa')]).toBe(N);
      const seen = new Set([...obs.map((o) => o.item_hash), ...events.map((e) => e.item_hash)]);
      for (const [k] of states) expect(seen.has(k.split('.')[1]!)).toBe(true);
      process.stdout.write(
        `cluster (${victim} leader killed: node ${killed.map((i) => i + 1).join(',')}): ${revisions.length} ledger revisions, max ${Math.max(...revisions.map((r) => r.settled_micro_usd + r.reserved_micro_usd))} / ${final.limit_micro_usd} µUSD; settled ${final.settled_micro_usd}; ${obs.length} observations, ${lost.length} lost arms, ${calls.length} calls; state ${(await campaignState(rig.bus, id))?.state}\n`,
      );
      for (const c of children.splice(0)) c.kill('SIGKILL');
    }, 300_000);
  }
});
