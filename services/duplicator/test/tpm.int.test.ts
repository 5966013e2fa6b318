import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedNatsUrl } from '@shadowplane/testkit';
import { openKv } from '@shadowplane/bus';
import type { Observation } from '@shadowplane/contracts';
import {
  campaignState,
  chatEnvelope,
  launchCampaign,
  ledger,
  publishEnvelopes,
  readObs,
  simConfig,
  startRig,
  startWorker,
  waitFor,
  type Rig,
} from './harness.js';
import type { DuplicatorHandle } from '../src/index.js';

const WINDOW_MS = 3000; // the TPM "minute" scaled down
const TPM = 1000;
const MAX_OUT = 100;
/** The limiter records a call just before callOnce stamps started_at; windows checked are this much shorter. */
const START_SKEW_MS = 250;

/** Largest sum of `w` over events starting inside any half-open window (t − ms, t]. */
function maxInWindow(events: { at: number; w: number }[], ms: number): number {
  const s = [...events].sort((a, b) => a.at - b.at);
  let best = 0;
  for (let i = 0; i < s.length; i++) {
    let sum = 0;
    for (let j = i; j >= 0 && s[j]!.at > s[i]!.at - ms; j--) sum += s[j]!.w;
    best = Math.max(best, sum);
  }
  return best;
}

describe('TPM on actual tokens (real limiter, provider-sim), and settlement compaction at completion', () => {
  let rig: Rig;
  let worker: DuplicatorHandle;
  beforeAll(async () => {
    rig = await startRig(sharedNatsUrl(), simConfig());
    worker = await startWorker(rig, { rateWindowMs: WINDOW_MS, itemConcurrency: 16 });
  });
  afterAll(async () => {
    await worker?.close();
    await rig?.close();
  }, 60_000);

  it('admits each call on its bound, corrects to reported usage, and never lets more than TPM into a window', async () => {
    const N = 30;
    const { id } = await launchCampaign(rig.bus, {
      name: 'tpm',
      suite: 'tpm',
      call_types: ['qa'],
      incumbent: {
        id: 'large',
        provider: 'simopenai',
        model: 'sim-large',
        rate_card: { input: 2.5, output: 10 },
        max_output_tokens: MAX_OUT,
        limits: { tpm: TPM, max_retries: 0 },
      },
      candidates: [{ id: 'small', provider: 'simopenai', model: 'sim-small', rate_card: { input: 0.1, output: 0.4 } }],
      max_items: N,
      max_cost_usd: 10,
      aa_share: 0,
    });
    const envs = Array.from({ length: N }, (_, i) => chatEnvelope('tpm', 'qa', `Token item ${i}: name ${i}.`));
    await publishEnvelopes(rig.bus, envs);
    await waitFor('completed', async () => (await campaignState(rig.bus, id))?.state === 'completed', 150_000, 200);
    // completed with nothing outstanding: the worker compacts the settlement records (one per
    // settled reservation) and the ledger is closed to new reservations
    const budget = await openKv(rig.bus, rig.bus.names.buckets.budget);
    const records = async () => {
      let n = 0;
      for await (const _k of await budget.keys(`${id}.settled.>`)) n++;
      return n;
    };
    await waitFor('settlement records compacted', async () => (await records()) === 0, 30_000, 100);
    expect((await ledger(rig.bus, id))?.exhausted).toBe(true);

    const obs = (await readObs(rig.bus, id))
      .filter((m): m is Observation => m.schema === 'shadow.observation/v1')
      .filter((o) => o.arm_id === 'large');
    expect(obs).toHaveLength(N);
    const used = obs.map((o) => ({
      at: Date.parse(o.started_at),
      w: (o.usage.input_tokens ?? 0) + (o.usage.output_tokens ?? 0),
    }));
    expect(used.every((u) => u.w > 0)).toBe(true);
    // the limit holds on what was actually used, over every sliding window
    expect(maxInWindow(used, WINDOW_MS - START_SKEW_MS)).toBeLessThanOrEqual(TPM);
    // and the correction is real: a window held more calls than the bounds alone would admit
    const bound = Math.max(...envs.map((e) => Buffer.byteLength(JSON.stringify(e.request.body), 'utf8'))) + MAX_OUT;
    const boundOnly = Math.floor(TPM / bound);
    const peakCalls = maxInWindow(
      used.map((u) => ({ at: u.at, w: 1 })),
      WINDOW_MS - START_SKEW_MS,
    );
    expect(peakCalls).toBeGreaterThan(boundOnly);
    // and the limit was binding: 30 calls of this size need more than one window
    const span = Math.max(...used.map((u) => u.at)) - Math.min(...used.map((u) => u.at));
    expect(span).toBeGreaterThan(WINDOW_MS - START_SKEW_MS);
    process.stdout.write(
      `tpm: bound ${bound} tokens/call (${boundOnly} per window on bounds), peak ${peakCalls} calls and ${maxInWindow(used, WINDOW_MS)} actual tokens per ${WINDOW_MS} ms window (limit ${TPM})\n`,
    );
  }, 200_000);
});
