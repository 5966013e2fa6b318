import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { openKv, type Bus } from '@shadowplane/bus';
import { sharedNatsUrl } from '@shadowplane/testkit';
import type { JudgeVerdict, Observation } from '@shadowplane/contracts';
import {
  campaignState,
  chatEnvelope,
  launchCampaign,
  ledger,
  publishEnvelopes,
  readObs,
  simConfig,
  spawnWorker,
  startRig,
  waitFor,
  type Rig,
  largeMediumArms,
} from './harness.js';
import { JudgeCallRecord } from '../src/judge-record.js';

const JUDGE_MODEL = 'sim-judge-hangs-first';

/** Every judge call record of a campaign (key → record). */
async function judgeRecords(bus: Bus, campaignId: string): Promise<Map<string, JudgeCallRecord>> {
  const kv = await openKv(bus, bus.names.buckets.dispatch);
  const out = new Map<string, JudgeCallRecord>();
  for await (const k of await kv.keys(`${campaignId}.*.judge.>`)) {
    const e = await kv.get(k);
    if (e && e.operation === 'PUT') out.set(k, JudgeCallRecord.parse(e.json()));
  }
  return out;
}

// A duplicator worker killed (SIGKILL) while a judge call is in flight: the item's arms are done,
// the judge call hangs at the sim (judge.hang_first = 1), and the other worker takes the item over.
describe('judge crash safety: kill -9 a worker during a judge call', () => {
  let rig: Rig;
  const workers: { child: ChildProcess; workerId: string }[] = [];
  beforeAll(async () => {
    const base = simConfig();
    rig = await startRig(sharedNatsUrl(), {
      ...base,
      // the hung call outlives any wait below; closing the sim ends it
      hang_ms: 600_000,
      models: {
        ...base.models,
        [JUDGE_MODEL]: {
          accuracy: 0.5,
          prices: { input: 0.2, cached_input: 0.05, output: 0.8 },
          latency: { ttft_ms: { median: 2, sigma: 0.2 }, output_tokens_per_s: 20_000, jitter: 0.1 },
          judge: { accuracy: 0.9, hang_first: 1 },
        },
      },
    });
  });
  afterAll(async () => {
    for (const w of workers) w.child.kill('SIGKILL');
    await rig?.close();
  });

  it('ends every item with a verdict: the lost judge call charged its bound and named, nothing re-called or left reserved', async () => {
    const N = 6;
    const { id } = await launchCampaign(rig.bus, {
      name: 'judge-crash',
      suite: 'jcr',
      call_types: ['chat'],
      ...largeMediumArms({ candidateProvider: 'simopenai' }),
      max_items: N,
      max_cost_usd: 5,
      aa_share: 0,
      scorers: [
        {
          kind: 'llm_judge',
          provider: 'simanthropic',
          model: JUDGE_MODEL,
          mode: 'pairwise',
          rate_card: { input: 0.2, output: 0.8 },
          max_output_tokens: 64,
          // longer than the test: the hung call is in flight until its worker dies
          timeout_ms: 600_000,
        },
      ],
    });
    workers.push(...(await Promise.all([spawnWorker(rig), spawnWorker(rig)])));
    const envs = Array.from({ length: N }, (_, i) => chatEnvelope('jcr', 'chat', `Judge crash item ${i}: say hi.`));
    await publishEnvelopes(rig.bus, envs);

    // the signal: every judge call recorded, all done but the hung one, which the sim holds open
    const hung = await waitFor(
      'one judge call hung in flight, all others done',
      async () => {
        const recs = [...(await judgeRecords(rig.bus, id)).entries()];
        // (already `lost` when, under load, the other worker took the owner for dead before the kill)
        const inFlight = recs.filter(([, r]) => r.state !== 'done');
        const simHolds = rig.sim.calls().some((c) => c.model === JUDGE_MODEL && c.endedAtMs === null);
        return recs.length === 2 * N && inFlight.length === 1 && simHolds ? inFlight[0] : null;
      },
      120_000,
      100,
    );
    const [hungKey, hungRec] = hung;
    const victim = workers.find((w) => w.workerId === hungRec.worker_id)!;
    expect(victim).toBeDefined();
    victim.child.kill('SIGKILL');

    await waitFor(
      'campaign completed by the survivor',
      async () => (await campaignState(rig.bus, id))?.state === 'completed',
      180_000,
      250,
    );
    const msgs = await readObs(rig.bus, id);
    const obs = msgs.filter((m): m is Observation => m.schema === 'shadow.observation/v1');
    const verdicts = msgs.filter((m): m is JudgeVerdict => m.schema === 'shadow.judge_verdict/v1');
    const hungItem = hungKey.split('.')[1]!;

    // every item has exactly one verdict (no double verdict), scored or null with a named reason
    expect(verdicts.map((v) => v.item_hash).sort()).toEqual(envs.map((e) => e.item_hash).sort());
    for (const v of verdicts) {
      if (v.item_hash === hungItem) {
        expect(v.score).toBeNull(); // never 0
        expect(v.null_reason).toBe('judge_lost_in_flight');
        expect(v.orders.map((o) => o.reason)).toContain('judge_lost_in_flight');
        expect(v.calls).toBe(2);
      } else {
        expect(v.score).not.toBeNull();
        expect(v.calls).toBe(2);
      }
    }

    // the lost call: recorded lost by the survivor, charged its reserved bound, in its verdict's charge
    const recs = await judgeRecords(rig.bus, id);
    const lost = recs.get(hungKey)!;
    expect(lost.state).toBe('lost');
    expect(lost.worker_id).toBe(victim.workerId);
    expect(lost.reserved_micro_usd).toBeGreaterThan(0);
    expect(lost.charged_micro_usd).toBe(lost.reserved_micro_usd);
    expect([...recs.values()].filter((r) => r.state !== 'done')).toHaveLength(1);
    const hv = verdicts.find((v) => v.item_hash === hungItem)!;
    const other = [...recs.entries()].find(([k]) => k !== hungKey && k.split('.')[1] === hungItem)![1];
    expect(hv.charged_micro_usd).toBe(lost.reserved_micro_usd + other.charged_micro_usd!);

    // the sim saw one call per judge order: the lost one was not made again
    expect(rig.sim.calls().filter((c) => c.model === JUDGE_MODEL)).toHaveLength(2 * N);

    // the ledger: nothing reserved; settled = the arms' charges + every verdict's charge (lost at its bound)
    const l = (await ledger(rig.bus, id))!;
    expect(l.reserved_micro_usd).toBe(0);
    expect(l.settled_micro_usd).toBe(
      obs.reduce((a, o) => a + o.charged_micro_usd, 0) + verdicts.reduce((a, v) => a + v.charged_micro_usd, 0),
    );
  }, 420_000);
});
