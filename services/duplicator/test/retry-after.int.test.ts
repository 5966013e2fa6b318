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
  simConfig,
  startRig,
  startWorker,
  waitFor,
  type Rig,
} from './harness.js';
import type { DuplicatorHandle } from '../src/index.js';

// The sim enforces 1 request per 10-minute window on sim-large, so every call after the first
// gets a 429 with `retry-after: 600`. The arm's cap (2 s) ends those attempts at once.
describe('retry-after above the per-arm cap', () => {
  let rig: Rig;
  let w: DuplicatorHandle;
  beforeAll(async () => {
    const cfg = simConfig();
    Object.assign(cfg.models['sim-large']!, { rate_limits: { rpm: 1, tpm: 10_000_000 } });
    rig = await startRig(sharedNatsUrl(), { ...cfg, rate_limit_window_ms: 600_000 });
    w = await startWorker(rig);
  });
  afterAll(async () => {
    await w?.close();
    await rig?.close();
  });

  it('ends the attempt rate_limited without waiting, releases its reservation, and pauses only that arm for the capped time', async () => {
    const N = 6;
    const t0 = Date.now();
    const { id } = await launchCampaign(rig.bus, {
      name: 'retry-after',
      suite: 'ra',
      call_types: ['qa'],
      incumbent: {
        id: 'large',
        provider: 'simopenai',
        model: 'sim-large',
        rate_card: { input: 2.5, output: 10 },
        max_output_tokens: 100,
        limits: { max_retries: 3, max_retry_after_ms: 2000 },
      },
      candidates: [
        {
          id: 'medium',
          provider: 'simopenai',
          model: 'sim-medium',
          rate_card: { input: 0.4, output: 1.6 },
          max_output_tokens: 100,
        },
      ],
      max_items: N,
      max_cost_usd: 5,
      aa_share: 0,
    });
    await publishEnvelopes(
      rig.bus,
      Array.from({ length: N }, (_, i) => chatEnvelope('ra', 'qa', `Retry-after item ${i}: add ${i} and 3.`)),
    );
    await waitFor('completed', async () => (await campaignState(rig.bus, id))?.state === 'completed', 60_000);
    const elapsed = Date.now() - t0;
    const obs = (await readObs(rig.bus, id)).filter((m): m is Observation => m.schema === 'shadow.observation/v1');
    const large = obs.filter((o) => o.arm_id === 'large');
    const medium = obs.filter((o) => o.arm_id === 'medium');
    expect(large).toHaveLength(N);
    expect(medium).toHaveLength(N);
    // one call fits the window; every other incumbent call was refused and not retried
    const limited = large.filter((o) => o.error_class === 'rate_limited');
    expect(limited.length).toBe(N - 1);
    expect(limited.every((o) => o.attempts === 1 && o.charged_micro_usd === 0 && o.http_status === 429)).toBe(true);
    expect(rig.sim.calls().filter((c) => c.model === 'sim-large')).toHaveLength(N);
    // the candidate was not held up by the incumbent's 429s
    expect(medium.every((o) => o.status === 'ok')).toBe(true);
    // nothing waited 600 s: each pause is at most the 2 s cap, so all N items end well inside a minute
    expect(elapsed).toBeLessThan(60_000);
    const l = (await ledger(rig.bus, id))!;
    expect(l.reserved_micro_usd).toBe(0);
    expect(l.settled_micro_usd).toBe(obs.reduce((a, o) => a + o.charged_micro_usd, 0));
    process.stdout.write(
      `retry-after: ${limited.length} of ${N} incumbent calls 429 (retry-after 600 s) ended at once; campaign done in ${elapsed} ms\n`,
    );
  }, 90_000);
});
