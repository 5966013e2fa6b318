import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedNatsUrl } from '@shadowplane/testkit';
import type { Observation, ItemEvent } from '@shadowplane/contracts';
import { getArtifact, keyringFrom } from '@shadowplane/artifacts';
import { openObjectStore } from '@shadowplane/bus';
import {
  chatEnvelope,
  gsm8kQuestions,
  launchCampaign,
  ledger,
  publishEnvelopes,
  readObs,
  simConfig,
  startRig,
  startWorker,
  campaignState,
  waitFor,
  type Rig,
} from './harness.js';
import type { DuplicatorHandle } from '../src/index.js';

const arms = {
  incumbent: {
    id: 'large',
    provider: 'simopenai',
    model: 'sim-large',
    rate_card: { input: 2.5, cached_input: 1.25, output: 10 },
    max_output_tokens: 300,
  },
  candidates: [
    {
      id: 'medium',
      provider: 'simanthropic',
      model: 'sim-medium',
      rate_card: { input: 0.4, cached_input: 0.1, output: 1.6 },
      max_output_tokens: 300,
    },
    {
      id: 'small',
      provider: 'simrouter',
      model: 'sim-small',
      rate_card: { input: 0.1, cached_input: 0.025, output: 0.4 },
      max_output_tokens: 300,
      pin: { upstreams: ['SimEdge'] },
    },
  ],
};

describe('duplicator end to end (one in-process worker)', () => {
  let rig: Rig;
  let w: DuplicatorHandle;
  beforeAll(async () => {
    rig = await startRig(sharedNatsUrl(), simConfig());
    w = await startWorker(rig);
  });
  afterAll(async () => {
    await w?.close();
    await rig?.close();
  });

  it('dispatches every unique item to all arms across APIs, counts duplicates, settles exactly, completes', async () => {
    const qs = gsm8kQuestions(12);
    const { id } = await launchCampaign(rig.bus, {
      name: 'e2e',
      suite: 's1',
      call_types: ['qa'],
      incumbent: arms.incumbent,
      candidates: arms.candidates,
      max_items: 12,
      max_cost_usd: 5,
      aa_share: 0.25,
    });
    const envs = qs.map((q, i) => chatEnvelope('s1', 'qa', q, i % 2 === 0 ? { stream: true } : {}));
    const dups = [chatEnvelope('s1', 'qa', qs[0]!), chatEnvelope('s1', 'qa', qs[1]!, {})];
    await publishEnvelopes(rig.bus, [envs[0]!, dups[0]!, envs[1]!, dups[1]!, ...envs.slice(2)]);
    await waitFor('campaign completed', async () => (await campaignState(rig.bus, id))?.state === 'completed', 30_000);

    const msgs = await readObs(rig.bus, id);
    const obs = msgs.filter((m): m is Observation => m.schema === 'shadow.observation/v1');
    const events = msgs.filter((m): m is ItemEvent => m.schema === 'shadow.item_event/v1');
    const items = new Set(envs.map((e) => e.item_hash));
    // every unique item got exactly one observation per arm; A-A items one more
    for (const h of items) {
      const mine = obs.filter((o) => o.item_hash === h);
      const armIds = mine.map((o) => o.arm_id).sort();
      expect(armIds.filter((a) => a !== 'large__aa')).toEqual(['large', 'medium', 'small']);
    }
    expect(obs.filter((o) => o.role === 'incumbent_aa').length).toBeGreaterThan(0);
    // qs[0] (streamed) and qs[0] (not streamed) are the same item; the second envelope is a duplicate
    // (items are processed concurrently, so either envelope of a pair may be the one that claims it)
    const dupEvents = events.filter((e) => e.kind === 'duplicate');
    expect(dupEvents).toHaveLength(2);
    for (const [orig, dup] of [
      [envs[0]!, dups[0]!],
      [envs[1]!, dups[1]!],
    ] as const) {
      expect(dupEvents.filter((e) => e.item_hash === orig.item_hash).map((e) => e.envelope_id)).toHaveLength(1);
      expect([orig.envelope_id, dup.envelope_id]).toContain(
        dupEvents.find((e) => e.item_hash === orig.item_hash)!.envelope_id,
      );
    }
    // sim ground truth: one call per (model, item) for the candidates, one or two for the incumbent
    const calls = rig.sim.calls();
    expect(calls.filter((c) => c.model === 'sim-medium')).toHaveLength(12);
    expect(calls.filter((c) => c.model === 'sim-small')).toHaveLength(12);
    expect(calls.filter((c) => c.model === 'sim-large')).toHaveLength(
      12 + obs.filter((o) => o.role === 'incumbent_aa').length,
    );
    expect(calls.every((c) => c.authPresent)).toBe(true);
    // the ledger settled exactly what the observations were charged
    const l = await ledger(rig.bus, id);
    expect(l?.reserved_micro_usd).toBe(0);
    expect(l?.settled_micro_usd).toBe(obs.reduce((a, o) => a + o.charged_micro_usd, 0));
    // ok calls carry usage, rate-card or provider-reported cost, and an artifact that decrypts to the output
    const ok = obs.filter((o) => o.status === 'ok');
    expect(obs.filter((o) => o.status !== 'ok').map((o) => [o.arm_id, o.http_status, o.error_class])).toEqual([]);
    for (const o of ok) {
      expect(o.usage.input_tokens).toBeGreaterThan(0);
      expect(o.cost.basis).toBe(o.provider === 'simrouter' ? 'provider_reported' : 'rate_card');
      expect(o.charged_micro_usd).toBe(o.cost.micro_usd);
    }
    const store = await openObjectStore(rig.bus, rig.bus.names.buckets.artifacts);
    const art = await getArtifact(store, keyringFrom('default', { default: rig.artifactKey }), ok[0]!.artifact_ref!);
    expect(art.meta).toMatchObject({ campaign_id: id, arm_id: ok[0]!.arm_id, item_hash: ok[0]!.item_hash });
    // pinned OpenRouter arm: SimEdge serves sim-small, so the pin is honoured
    expect(
      obs.filter((o) => o.arm_id === 'small').every((o) => o.pin_honored === true && o.upstream === 'SimEdge'),
    ).toBe(true);
    expect(obs.filter((o) => o.arm_id !== 'small').every((o) => o.pin_honored === null)).toBe(true);
    // streamed items have a TTFT
    const streamed = new Set(
      envs.filter((e) => (e.request.body as { stream?: boolean }).stream).map((e) => e.item_hash),
    );
    expect(obs.filter((o) => streamed.has(o.item_hash)).every((o) => o.ttft_ms !== null)).toBe(true);
  });

  it('two campaigns on one suite each get their own item events (message ids are scoped by campaign)', async () => {
    // both campaigns read the same captures and exclude every one of them (wrong traffic class),
    // and both see the same exact duplicates: before scoping, JetStream de-duplication dropped
    // the second campaign's events
    const spec = {
      suite: 's2',
      call_types: ['qa'],
      incumbent: arms.incumbent,
      candidates: arms.candidates,
      max_items: 4,
      max_cost_usd: 5,
      aa_share: 0,
      traffic_classes: ['synthetic' as const],
    };
    const a = await launchCampaign(rig.bus, { ...spec, name: 'scoped-a' });
    const b = await launchCampaign(rig.bus, { ...spec, name: 'scoped-b' });
    const envs = gsm8kQuestions(3).map((q) => chatEnvelope('s2', 'qa', q));
    await publishEnvelopes(rig.bus, envs);
    for (const id of [a.id, b.id]) {
      const got = await waitFor(`excluded events of ${id}`, async () => {
        const ev = (await readObs(rig.bus, id)).filter((m): m is ItemEvent => m.schema === 'shadow.item_event/v1');
        return ev.length >= envs.length ? ev : null;
      });
      expect(got.map((e) => [e.envelope_id, e.kind, e.reason]).sort()).toEqual(
        envs.map((e) => [e.envelope_id, 'excluded', 'traffic_class']).sort(),
      );
    }
  });
});
