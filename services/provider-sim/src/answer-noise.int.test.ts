import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_SIM_CONFIG, startProviderSim } from './index.js';

// Per-call noise (`answer_noise`): an item asked twice can be answered differently, as a real
// model at a temperature does, while the expected accuracy stays the configured one.
const rows = readFileSync(fileURLToPath(new URL('../../../examples/data/gsm8k-test.jsonl', import.meta.url)), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as { question: string; answer: string });
const truth = (i: number) => rows[i]!.answer.split('####').at(-1)!.trim().replace(/,/g, '');
const N = 400;
const A = 0.9; // sim-medium's configured accuracy
const dispatcher = new Agent({ connections: 16, pipelining: 1 });
afterAll(() => dispatcher.close());

/** Asks sim-medium every one of the first N questions twice (same body); returns the two correctness vectors. */
async function twice(noise: number, seed: number): Promise<{ first: boolean[]; second: boolean[] }> {
  const medium = DEFAULT_SIM_CONFIG.models['sim-medium']!;
  const sim = await startProviderSim({
    config: {
      ...DEFAULT_SIM_CONFIG,
      latency_scale: 0,
      models: { 'sim-medium': { ...medium, accuracy: A, answer_noise: noise } },
    },
    seed,
  });
  const ask = async (i: number) => {
    const r = await request(`${sim.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'sim-medium',
        max_tokens: 512,
        messages: [{ role: 'user', content: rows[i]!.question }],
      }),
      dispatcher,
    });
    const text = (JSON.parse(await r.body.text()) as { choices: { message: { content: string } }[] }).choices[0]!
      .message.content;
    return /####\s*(\S+)\s*$/.exec(text)?.[1]?.replace(/,/g, '') === truth(i);
  };
  try {
    const first: boolean[] = [];
    const second: boolean[] = [];
    // sequential per item so each item's occurrence order (first, second) is fixed
    for (let i = 0; i < N; i++) {
      first.push(await ask(i));
      second.push(await ask(i));
    }
    return { first, second };
  } finally {
    await sim.close();
  }
}

describe('provider-sim per-call answer noise', () => {
  it('answer_noise 0: an item asked twice is answered the same way every time (deterministic)', async () => {
    const { first, second } = await twice(0, 5);
    expect(first).toEqual(second);
  }, 240_000);

  it('answer_noise 0.3: re-invocations disagree at the rate the noise implies; accuracy stays at 0.9; seeded', async () => {
    const n = 0.3;
    const { first, second } = await twice(n, 5);
    const differ = first.filter((c, i) => c !== second[i]).length / N;
    // fixed-correct items flip with n(1 − a) per call, fixed-wrong ones with n·a:
    // P(differ) = a·2n(1−a)(1 − n(1−a)) + (1−a)·2na(1 − na) = 0.0524 + 0.0394 = 0.0918
    const want = A * 2 * n * (1 - A) * (1 - n * (1 - A)) + (1 - A) * 2 * n * A * (1 - n * A);
    expect(want).toBeCloseTo(0.0918, 3);
    const se = Math.sqrt((want * (1 - want)) / N);
    expect(differ).toBeGreaterThan(0);
    expect(Math.abs(differ - want)).toBeLessThan(3 * se + 0.02); // + the accuracy-share slack of the first N items
    const acc = [...first, ...second].filter(Boolean).length / (2 * N);
    expect(Math.abs(acc - A)).toBeLessThan(0.04);
    // same seed, same order of calls → the same answers
    const again = await twice(n, 5);
    expect(again.first).toEqual(first);
    expect(again.second).toEqual(second);
  }, 480_000);
});
