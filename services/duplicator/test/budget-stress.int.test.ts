import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { sharedNatsUrl } from '@shadowplane/testkit';
import type { ItemEvent, Observation } from '@shadowplane/contracts';
import { itemHash, type Api } from '@shadowplane/contracts';
import { prepareArmRequest } from '@shadowplane/providers';
import {
  chatEnvelope,
  campaignState,
  launchCampaign,
  ledger,
  publishEnvelopes,
  readArmStates,
  readObs,
  simConfig,
  spawnWorker,
  startRig,
  waitFor,
  sleep,
  type Rig,
} from './harness.js';

// 4 worker processes, 500 unique items, 3 arms, a budget of about half the campaign's actual
// spend, provider-sim with random latency and 10% faults (429, 5xx, 529/503, hangs, stalls,
// cuts, malformed bodies). Ground truth: the ledger sampled continually, the sim's call log.
const faults = {
  rate_limit: 0.02,
  server_error: 0.02,
  overloaded: 0.02,
  hang: 0.01,
  stall: 0.01,
  cut: 0.01,
  malformed: 0.01,
};
const limits = { first_byte_timeout_ms: 400, stall_timeout_ms: 400, max_retries: 2, concurrency: 32 };
const armsById: Record<string, { api: Api; path: string; model: string }> = {
  large: { api: 'openai.chat', path: '/v1/chat/completions', model: 'sim-large' },
  medium: { api: 'anthropic.messages', path: '/v1/messages', model: 'sim-medium' },
  small: { api: 'openai.chat', path: '/v1/chat/completions', model: 'sim-small' },
};

describe('budget invariant under stress (4 worker processes)', () => {
  let rig: Rig;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    const cfg = simConfig();
    for (const m of Object.values(cfg.models)) Object.assign(m, { faults });
    rig = await startRig(sharedNatsUrl(), { ...cfg, hang_ms: 1200, stall_ms: 1200 });
  });
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await rig?.close();
  });

  it('keeps settled + reserved ≤ limit at every sample, settles exactly the charged observations, never double-invokes', async () => {
    const N = 500;
    const maxCostUsd = 0.35; // ≈ half of what 500 items cost here (≈ 1,400 µUSD per item incl. faults charged at their upper bound)
    const { id } = await launchCampaign(rig.bus, {
      name: 'stress',
      suite: 'st',
      call_types: ['qa'],
      incumbent: {
        id: 'large',
        provider: 'simopenai',
        model: 'sim-large',
        rate_card: { input: 2.5, cached_input: 1.25, output: 10 },
        max_output_tokens: 200,
        limits,
      },
      candidates: [
        {
          id: 'medium',
          provider: 'simanthropic',
          model: 'sim-medium',
          rate_card: { input: 0.4, cached_input: 0.1, output: 1.6 },
          max_output_tokens: 200,
          limits,
        },
        {
          id: 'small',
          provider: 'simopenai',
          model: 'sim-small',
          rate_card: { input: 0.1, cached_input: 0.025, output: 0.4 },
          max_output_tokens: 200,
          limits,
        },
      ],
      max_items: N,
      max_cost_usd: maxCostUsd,
      aa_share: 0.1,
    });
    const limit = Math.ceil(maxCostUsd * 1e6);
    const envs = Array.from({ length: N }, (_, i) =>
      chatEnvelope(
        'st',
        'qa',
        `Stress item ${i}: what is ${i} plus ${i * 7}? Answer briefly.`,
        i % 3 === 0 ? { stream: true } : {},
      ),
    );
    const t0 = Date.now();
    const spawned = await Promise.all(
      Array.from({ length: 4 }, () => spawnWorker(rig, { SHADOWPLANE_DUPLICATOR_ITEM_CONCURRENCY: '8' })),
    );
    children.push(...spawned.map((s) => s.child));
    const tStarted = Date.now();

    // The sampler never throws: a detached promise that rejects is an unhandled error, and a read
    // that times out while the shared nats-server is busy says nothing about the ledger. Read
    // failures are counted and bounded below; invariant breaches are collected and asserted.
    let sampling = true;
    const samples: number[] = [];
    const breaches: string[] = [];
    const readErrors: string[] = [];
    const sampler = (async () => {
      while (sampling) {
        let l: Awaited<ReturnType<typeof ledger>>;
        try {
          l = await ledger(rig.bus, id);
        } catch (err) {
          readErrors.push(`${(err as Error).name}: ${(err as Error).message}`);
          await sleep(50);
          continue;
        }
        if (l) {
          const used = l.settled_micro_usd + l.reserved_micro_usd;
          samples.push(used);
          if (used > l.limit_micro_usd)
            breaches.push(
              `settled ${l.settled_micro_usd} + reserved ${l.reserved_micro_usd} > limit ${l.limit_micro_usd}`,
            );
          const outstanding = Object.values(l.outstanding ?? {}).reduce((a, b) => a + b, 0);
          if (l.reserved_micro_usd !== outstanding)
            breaches.push(`reserved ${l.reserved_micro_usd} ≠ Σ outstanding ${outstanding}`);
        }
        await sleep(3);
      }
    })();
    try {
      await publishEnvelopes(rig.bus, envs);
      await waitFor(
        'budget exhausted',
        async () => (await campaignState(rig.bus, id))?.state === 'budget_exhausted',
        90_000,
        200,
      );
      const tExhausted = Date.now();
      process.stdout.write(
        `stress: workers up in ${tStarted - t0} ms, budget exhausted after ${tExhausted - tStarted} ms\n`,
      );
      try {
        await waitFor(
          'in-flight items settled',
          async () => (await ledger(rig.bus, id))?.reserved_micro_usd === 0,
          180_000, // four worker processes finishing their retries on a loaded 2-core machine
          100,
        );
      } catch (e) {
        // say which reservations are still open, so a stuck one can be told from a slow one
        const l = await ledger(rig.bus, id).catch(() => null);
        process.stdout.write(`stress: still reserved ${JSON.stringify(l?.outstanding ?? null)}\n`);
        throw e;
      }
      await sleep(1500); // anything still finishing would show up as a reservation or an observation
    } finally {
      sampling = false;
      await sampler;
    }
    if (readErrors.length > 0)
      process.stdout.write(`stress: ${readErrors.length} ledger reads failed, first: ${readErrors[0]}\n`);
    expect(breaches).toEqual([]);
    expect(readErrors.length).toBeLessThan(samples.length / 10);

    const l = await waitFor('the final ledger', () => ledger(rig.bus, id));
    expect(l.reserved_micro_usd).toBe(0);
    expect(samples.length).toBeGreaterThan(200);
    expect(Math.max(...samples)).toBeLessThanOrEqual(limit);
    expect(l.settled_micro_usd).toBeGreaterThan(limit * 0.6); // the budget was actually used, not refused early

    const msgs = await readObs(rig.bus, id);
    const obs = msgs.filter((m): m is Observation => m.schema === 'shadow.observation/v1');
    const events = msgs.filter((m): m is ItemEvent => m.schema === 'shadow.item_event/v1');
    const states = await readArmStates(rig.bus, id);
    const lostCharges = [...states.values()]
      .filter((s) => s.state === 'lost')
      .reduce((a, s) => a + (s.charged_micro_usd ?? 0), 0);
    // the ledger's spend is exactly what the observations (and any lost calls) were charged
    expect(l.settled_micro_usd).toBe(obs.reduce((a, o) => a + o.charged_micro_usd, 0) + lostCharges);

    // one observation per (item, arm); a share of the items dispatched: exhaustion is declared when
    // a new item's worst case no longer fits beside the in-flight reservations (held at their bounds),
    // so how many items get in depends on how many are in flight; that the budget was used is the
    // settled > 0.6 × limit check above
    const perArm = new Map<string, number>();
    for (const o of obs) perArm.set(`${o.item_hash}.${o.arm_id}`, (perArm.get(`${o.item_hash}.${o.arm_id}`) ?? 0) + 1);
    expect([...perArm.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    const dispatched = new Set(obs.map((o) => o.item_hash));
    expect(dispatched.size).toBeGreaterThan(N * 0.15);
    expect(dispatched.size).toBeLessThan(N);
    expect(events.filter((e) => e.reason === 'budget_exhausted').length).toBeGreaterThan(0);

    // sim ground truth: the sim's requestHash is itemHash(api, path, body) of what each arm sent,
    // so every call can be traced to (item, arm). No call may be unaccounted for, no (item, arm)
    // may be called more often than its observation's attempts, and an attempt the sim never
    // logged must be a last attempt we aborted ourselves (hang_timeout / network error).
    const byItem = new Map(envs.map((e) => [e.item_hash, e]));
    const expected = new Map<string, { attempts: number; abortable: number }>();
    for (const o of obs) {
      const env = byItem.get(o.item_hash)!;
      const target = armsById[o.arm_id.replace(/__aa$/, '')]!;
      const prep = prepareArmRequest('openai.chat', env.request.body, {
        api: target.api,
        model: target.model,
        maxOutputTokens: 200,
      });
      if (!prep.ok) throw new Error(prep.reason);
      const h = itemHash(target.api, target.path, prep.body);
      const cur = expected.get(h) ?? { attempts: 0, abortable: 0 };
      cur.attempts += o.attempts;
      if (o.error_class === 'hang_timeout' || o.error_class === 'network_error') cur.abortable += 1;
      expected.set(h, cur);
    }
    const calls = rig.sim.calls();
    const seen = new Map<string, number>();
    for (const c of calls) seen.set(c.requestHash, (seen.get(c.requestHash) ?? 0) + 1);
    for (const [h, n] of seen) {
      const e = expected.get(h);
      expect(e, `sim call ${h} matches no observation`).toBeDefined();
      expect(n).toBeLessThanOrEqual(e!.attempts);
      expect(e!.attempts - n).toBeLessThanOrEqual(e!.abortable);
    }
    const unlogged = [...expected.entries()].reduce((a, [h, e]) => a + e.attempts - (seen.get(h) ?? 0), 0);
    // faults happened, were classified, and retried only where retryable
    expect(obs.some((o) => o.attempts > 1)).toBe(true);
    expect(obs.some((o) => o.error_class === 'hang_timeout')).toBe(true);
    // never retried after a non-retryable outcome: a retried arm's earlier attempts were all 429/529/5xx,
    // so an arm with more attempts than one ends either in success or in any class after a retryable one
    expect(obs.filter((o) => o.attempts > 3)).toEqual([]);
    process.stdout.write(
      `stress: ${dispatched.size} items dispatched, ${obs.length} observations, ${calls.length} sim calls (${unlogged} aborted attempts the sim never logged), ${samples.length} ledger samples, max sampled ${Math.max(...samples)} of ${limit} µUSD, settled ${l.settled_micro_usd}\n`,
    );
  }, 420_000);
});
