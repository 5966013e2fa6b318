import { afterAll, describe, expect, it } from 'vitest';
import { pointwiseMessages } from '@shadowplane/scoring';
import { startProviderSim, type ProviderSim } from './index.js';

// `judge.hang_first`: the first n calls to a judge model hang (the `hang` fault), later ones
// answer. The duplicator's judge kill test relies on it to hold one judge call in flight.
describe('provider-sim judge: hang_first', () => {
  let sim: ProviderSim | undefined;
  afterAll(async () => {
    await sim?.close();
  });

  it('hangs exactly the first n judge calls, then answers', async () => {
    sim = await startProviderSim({
      datasetPath: '',
      // a short hang so the hung call also completes here (the fault is what is checked, not time)
      config: {
        hang_ms: 50,
        models: {
          'sim-judge': {
            accuracy: 0.5,
            prices: { input: 0.2, cached_input: 0.05, output: 0.8 },
            judge: { hang_first: 2 },
          },
        },
      },
    });
    const messages = pointwiseMessages({ prompt: 'What is 2 + 2?', output: 'It is 4.' });
    for (let i = 0; i < 4; i++) {
      const r = await fetch(`${sim.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-judge', max_tokens: 64, messages }),
      });
      expect(r.status).toBe(200);
      await r.text();
    }
    expect(sim.calls().map((c) => c.fault)).toEqual(['hang', 'hang', null, null]);
    sim.reset(); // counted again from a reset
    await (
      await fetch(`${sim.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-judge', max_tokens: 64, messages }),
      })
    ).text();
    expect(sim.calls().map((c) => c.fault)).toEqual(['hang']);
  });
});
