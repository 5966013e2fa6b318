import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { generateKey } from '@shadowplane/artifacts';
import type { Envelope, ProviderEntry } from '@shadowplane/contracts';
import { startDuplicator, type DuplicatorHandle } from '@shadowplane/duplicator';
import { startProviderSim, type ProviderSim } from '@shadowplane/provider-sim';
import { chatEnvelope, randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import { auth, fixture, KEYS, type Fixture } from '../testing/helpers.js';

// The kill switch end to end: a campaign launched through the control API, a real duplicator
// worker (default flag poll, 500 ms) re-invoking arms at a real provider-sim while envelopes keep
// arriving on CAPTURE; an admin flips paid_dispatch off through the API. Counted at the sim: no
// provider call starts later than 1 s after the flip, and a launch attempt then gets 503 with
// nothing written.

function envelope(i: number): Envelope {
  return chatEnvelope('ks', 'math', `Kill-switch item ${i}: what is ${i} + ${i * 3}?`, { max_tokens: 64 });
}

describe('kill switch: paid_dispatch off stops provider calls within 1 s', () => {
  let sim: ProviderSim;
  let f: Fixture;
  let worker: DuplicatorHandle;
  let publishing = true;
  let publisher: Promise<void> = Promise.resolve();
  beforeAll(async () => {
    sim = await startProviderSim({ datasetPath: '', seed: 11 });
    const providers: ProviderEntry[] = [
      { id: 'sim-openai', base_url: `${sim.url}/v1`, api: 'openai.chat', api_key_env: 'SIM_KEY' },
    ];
    const prefix = randomPrefix('ks');
    f = await fixture({ flag: false, providers, prefix });
    worker = await startDuplicator(
      {
        natsUrl: sharedNatsUrl(),
        natsPrefix: prefix,
        logLevel: 'warn',
        providersFile: '',
        redisUrl: undefined,
        workerId: `ks-${randomUUID().slice(0, 8)}`,
        opsHost: '127.0.0.1',
        opsPort: 0,
        itemConcurrency: 8,
        ackWaitMs: 5000,
        leaseTtlMs: 3000,
        rateWindowMs: 60_000,
        retryBaseMs: 20,
        flagPollMs: 500,
        provision: false,
        storage: 'memory',
      },
      {
        providers,
        env: { SIM_KEY: 'sk-sim', SHADOWPLANE_ARTIFACT_KEY: generateKey() },
        logger: pino({ level: 'warn' }, pino.destination(2)),
      },
    );
  });
  afterAll(async () => {
    publishing = false;
    await publisher;
    await worker?.close();
    await f?.close();
    await sim?.close();
  });

  it('stops every new provider call within 1 s of the flip, and refuses a new launch with 503 writing nothing', async () => {
    const flip = (enabled: boolean) =>
      f.app.inject({
        method: 'PUT',
        url: '/v1/admin/flags/paid_dispatch',
        headers: { ...auth(KEYS.admin), 'content-type': 'application/json' },
        payload: { enabled, reason: 'kill-switch test' },
      });
    expect((await flip(true)).statusCode).toBe(200);
    const spec = {
      name: 'kill switch',
      suite: 'ks',
      call_types: ['math'],
      incumbent: {
        id: 'large',
        provider: 'sim-openai',
        model: 'sim-large',
        rate_card: { input: 2.5, cached_input: 1.25, output: 10 },
        max_output_tokens: 64,
      },
      candidates: [
        {
          id: 'small',
          provider: 'sim-openai',
          model: 'sim-small',
          rate_card: { input: 0.1, cached_input: 0.025, output: 0.4 },
          max_output_tokens: 64,
        },
      ],
      max_items: 5000,
      max_cost_usd: 50,
      aa_share: 0,
    };
    const launched = await f.app.inject({
      method: 'POST',
      url: '/v1/campaigns',
      headers: { ...auth(KEYS.write), 'content-type': 'application/json' },
      payload: spec,
    });
    expect(launched.statusCode).toBe(201);

    // live traffic: a new envelope every 10 ms for as long as the test runs
    let i = 0;
    publisher = (async () => {
      while (publishing) {
        const e = envelope(i++);
        await f.bus.js.publish(f.bus.names.captureSubject('ks', 'math'), JSON.stringify(e), { msgID: e.envelope_id });
        await new Promise((r) => setTimeout(r, 10));
      }
    })();

    // wait until the worker is calling the sim steadily
    const deadline = Date.now() + 20_000;
    while (sim.calls().length < 40 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(sim.calls().length).toBeGreaterThanOrEqual(40);

    const tOff = Date.now();
    expect((await flip(false)).statusCode).toBe(200);
    const callsBeforeFlip = sim.calls().filter((c) => c.startedAtMs < tOff);
    expect(callsBeforeFlip.filter((c) => c.startedAtMs >= tOff - 500).length).toBeGreaterThan(0); // it was calling right up to the flip

    await new Promise((r) => setTimeout(r, 3000)); // envelopes keep arriving meanwhile
    const published = i;
    const late = sim.calls().filter((c) => c.startedAtMs > tOff + 1000);
    const after = sim.calls().filter((c) => c.startedAtMs >= tOff);
    const lastStartMs = Math.max(...sim.calls().map((c) => c.startedAtMs)) - tOff;
    process.stdout.write(
      `kill switch: ${callsBeforeFlip.length} calls before the flip, ${after.length} started after it (last ${lastStartMs} ms after), ${late.length} later than 1 s; ${published} envelopes published\n`,
    );
    expect(late).toEqual([]);

    const before = await f.snapshot();
    const refused = await f.app.inject({
      method: 'POST',
      url: '/v1/campaigns',
      headers: { ...auth(KEYS.write), 'content-type': 'application/json' },
      payload: { ...spec, name: 'after the flip' },
    });
    expect([refused.statusCode, refused.json().error.code]).toEqual([503, 'paid_dispatch_disabled']);
    expect(await f.snapshot()).toEqual(before);
  });
});
