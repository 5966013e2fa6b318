import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadKeyring } from '@shadowplane/artifacts';
import { sharedNatsUrl } from '@shadowplane/testkit';
import type { Envelope, Observation } from '@shadowplane/contracts';
import { readFinalReport } from '@shadowplane/reports';
import { verifyBundle } from '@shadowplane/evidence';
import { startVerdict, type VerdictHandle } from '@shadowplane/verdict';
import {
  REPO,
  campaignState,
  chatEnvelope,
  launchCampaign,
  ledger,
  publishEnvelopes,
  readObs,
  simConfig,
  sleep,
  startRig,
  startWorker,
  waitFor,
  type Rig,
} from './harness.js';
import type { DuplicatorHandle } from '../src/index.js';

// Sequential stopping end to end: a real nats-server, provider-sim, an in-process duplicator
// worker and the verdict service. GSM8K traffic keeps arriving; the clearly worse sim-small
// (accuracy 0.55 against 0.92) settles as a fail, the verdict service moves the campaign to
// `decided` long before max_items, dispatch stops, in-flight arms settle, and the ledger ends with
// nothing reserved and settled = Σ the observations' charges.

function gsm8k(n: number): Envelope[] {
  const lines = readFileSync(join(REPO, 'examples/data/gsm8k-test.jsonl'), 'utf8').split('\n').filter(Boolean);
  return lines.slice(0, n).map((l) => {
    const row = JSON.parse(l) as { question: string; answer: string };
    const final = /####\s*(.+)\s*$/.exec(row.answer)![1]!.trim().replace(/,/g, '');
    const e = chatEnvelope('seqe2e', 'math', row.question, { max_tokens: 256 });
    return { ...e, expectations: [{ kind: 'numeric', value: final, hard: false }] } as Envelope;
  });
}

describe('sequential stopping: a clearly worse candidate decides the campaign before max_items', () => {
  let rig: Rig;
  let w: DuplicatorHandle;
  let v: VerdictHandle;
  beforeAll(async () => {
    rig = await startRig(sharedNatsUrl(), simConfig(), { knownAnswers: true });
    w = await startWorker(rig, { itemConcurrency: 4 });
    v = await startVerdict({
      natsUrl: rig.natsUrl,
      prefix: rig.prefix,
      keyring: loadKeyring({ SHADOWPLANE_ARTIFACT_KEY: rig.artifactKey }),
      tickMs: 100,
      sequentialLookMs: 200,
      storage: 'memory',
    });
  });
  afterAll(async () => {
    await w?.close();
    await v?.close();
    await rig?.close();
  });

  it('reaches decided, stops dispatch, releases every reservation, and settles exactly what was charged', async () => {
    const maxItems = 400;
    const { id } = await launchCampaign(rig.bus, {
      name: 'sequential e2e',
      suite: 'seqe2e',
      call_types: ['math'],
      incumbent: {
        id: 'large',
        provider: 'simopenai',
        model: 'sim-large',
        rate_card: { input: 2.5, cached_input: 1.25, output: 10 },
        max_output_tokens: 256,
      },
      candidates: [
        {
          id: 'small',
          provider: 'simopenai',
          model: 'sim-small',
          rate_card: { input: 0.1, cached_input: 0.025, output: 0.4 },
          max_output_tokens: 256,
        },
      ],
      max_items: maxItems,
      max_cost_usd: 20,
      margins: { noninferiority_pp: 5, min_savings: 0.2 },
      aa_share: 0,
      stopping: 'sequential',
      stopping_batch_items: 20,
    });
    // live traffic: 20 envelopes at a time while the campaign runs
    const envs = gsm8k(maxItems);
    let sent = 0;
    while (sent < envs.length && (await campaignState(rig.bus, id))?.state === 'running') {
      await publishEnvelopes(rig.bus, envs.slice(sent, sent + 20));
      sent += 20;
      await sleep(250);
    }
    const decided = await waitFor('campaign decided', async () => {
      const c = await campaignState(rig.bus, id);
      return c && c.state !== 'running' ? c : null;
    });
    expect(decided.state).toBe('decided');
    expect(decided.state_reason).toMatch(/math\/small fail/);

    // in-flight arms settle and nothing stays reserved
    const l = await waitFor(
      'ledger drained',
      async () => {
        const x = await ledger(rig.bus, id);
        return x && x.reserved_micro_usd === 0 && Object.keys(x.outstanding ?? {}).length === 0 ? x : null;
      },
      60_000,
    );
    const fin = await waitFor('final report', () => readFinalReport(rig.bus, id), 60_000);
    const obs = (await readObs(rig.bus, id)).filter((m): m is Observation => m.schema === 'shadow.observation/v1');
    expect(l.settled_micro_usd).toBe(obs.reduce((a, o) => a + o.charged_micro_usd, 0));
    expect(l.settled_micro_usd).toBeGreaterThan(0);

    const cmp = fin.report.call_types![0]!.comparisons[0]!;
    const items = new Set(obs.map((o) => o.item_hash)).size;
    process.stdout.write(
      `sequential e2e: decided after ${cmp.sequential?.items_used} paired items (look ${cmp.sequential?.settled_look}); ${items} items dispatched of ${maxItems}, ${sent} envelopes published; settled $${(l.settled_micro_usd / 1e6).toFixed(4)}\n`,
    );
    expect(items).toBeLessThan(maxItems);
    expect(cmp.decision).toBe('fail');
    expect(cmp.sequential).toMatchObject({ decision: 'fail', max_items: maxItems });
    expect(cmp.sequential!.items_saved).toBe(maxItems - cmp.sequential!.items_paired);
    expect(cmp.sequential!.items_saved).toBeGreaterThan(0);
    expect(fin.runRecord).toMatchObject({ campaign_state: 'decided' });
    expect(verifyBundle(fin.bundle)).toEqual({ ok: true, problems: [] });

    // dispatch has stopped: more traffic for the decided campaign buys nothing
    const before = rig.sim.calls().length;
    if (sent < envs.length) await publishEnvelopes(rig.bus, envs.slice(sent, sent + 20));
    await sleep(1500);
    expect(rig.sim.calls().length).toBe(before);
  }, 180_000);
});
