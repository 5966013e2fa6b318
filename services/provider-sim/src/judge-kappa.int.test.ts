import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { parsePointwiseReply, pointwiseMessages, scoreNumeric } from '@shadowplane/scoring';
import { cohensKappa } from '@shadowplane/stats';
import { DEFAULT_SIM_CONFIG, startProviderSim } from './index.js';

// Kappa of the sim judge against the programmatic GSM8K score, measured as the pipeline measures
// it (arm answers over HTTP, the pointwise judge template, libs/scoring parsers, libs/stats kappa),
// against what the configured judge accuracy implies. A judge that perceives each answer's truth
// correctly with probability a, on outputs of which a share p is programmatically correct, has
//   p_o = a,  q = p·a + (1 − p)(1 − a) (share it calls good),  p_e = p·q + (1 − p)(1 − q),
//   κ = (a − p_e) / (1 − p_e)
// so κ depends on the base rate p as well as on a (a = 0.9: κ 0.80 at p = 0.5, 0.72 at p = 0.8).

const rows = readFileSync(fileURLToPath(new URL('../../../examples/data/gsm8k-test.jsonl', import.meta.url)), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as { question: string; answer: string });
const truth = (i: number) => rows[i]!.answer.split('####').at(-1)!.trim().replace(/,/g, '');
const SYSTEM = 'Solve the grade-school math problem step by step. End with a final line "#### <number>".';
const TIERS = ['sim-large', 'sim-medium', 'sim-small'] as const;
const N = 200; // questions per seed; × 3 tiers = 600 judged outputs
const ACCURACY = 0.9;

const dispatcher = new Agent({ connections: 16, pipelining: 1 });
afterAll(() => dispatcher.close());

async function chat(url: string, body: unknown): Promise<string> {
  const r = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    dispatcher,
  });
  const text = await r.body.text();
  expect(r.statusCode).toBe(200);
  return (JSON.parse(text) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
}

/** κ implied by judge accuracy `a` at programmatic base rate `p` (see the header). */
function impliedKappa(a: number, p: number): number {
  const q = p * a + (1 - p) * (1 - a);
  const pe = p * q + (1 - p) * (1 - q);
  return (a - pe) / (1 - pe);
}

async function measure(seed: number, accuracy: number) {
  const sim = await startProviderSim({
    config: {
      ...DEFAULT_SIM_CONFIG,
      latency_scale: 0,
      models: {
        ...DEFAULT_SIM_CONFIG.models,
        'sim-judge': { accuracy: 0.5, prices: { input: 0.2, cached_input: 0.05, output: 0.8 }, judge: { accuracy } },
      },
    },
    seed,
  });
  try {
    const jobs = TIERS.flatMap((model) => Array.from({ length: N }, (_, i) => ({ model, i })));
    const pairs: [string, string][] = new Array(jobs.length);
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < jobs.length) {
          const k = next++;
          const { model, i } = jobs[k]!;
          const q = rows[i]!.question;
          const out = await chat(sim.url, {
            model,
            max_tokens: 512,
            messages: [
              { role: 'system', content: SYSTEM },
              { role: 'user', content: q },
            ],
          });
          const prog = scoreNumeric(out, truth(i)).score!;
          const reply = await chat(sim.url, {
            model: 'sim-judge',
            max_tokens: 64,
            temperature: 0,
            messages: pointwiseMessages({ prompt: `${SYSTEM}\n${q}`, output: out }),
          });
          const j = parsePointwiseReply(reply).value;
          expect(j).not.toBeNull();
          pairs[k] = [j! >= 0.5 ? 'good' : 'bad', prog >= 0.5 ? 'good' : 'bad'];
        }
      }),
    );
    const k = cohensKappa(pairs, 0.95);
    const p = pairs.filter(([, b]) => b === 'good').length / pairs.length;
    return { k, p, n: pairs.length };
  } finally {
    await sim.close();
  }
}

describe('sim judge kappa against the programmatic score', () => {
  it('a judge of accuracy 1 agrees with the programmatic score on every output (kappa 1)', async () => {
    const { k } = await measure(7, 1);
    expect(k.observed).toBeCloseTo(1, 12);
    expect(k.kappa).toBeCloseTo(1, 12);
  }, 240_000);

  it(`accuracy ${ACCURACY}: over 3 seeds kappa matches the value the accuracy and base rate imply`, async () => {
    let sumDiff = 0;
    let sumVar = 0;
    for (const seed of [0, 7, 11]) {
      const { k, p, n } = await measure(seed, ACCURACY);
      const want = impliedKappa(ACCURACY, p);
      // per seed: observed agreement is a binomial share around a; kappa within 3 of its own s.e.
      expect(Math.abs(k.observed - ACCURACY)).toBeLessThan(3 * Math.sqrt((ACCURACY * (1 - ACCURACY)) / n));
      expect(Math.abs(k.kappa! - want)).toBeLessThan(3 * k.se!);
      sumDiff += k.kappa! - want;
      sumVar += k.se! ** 2;
    }
    // pooled over the seeds: the mean deviation within 3 standard errors of 0 (no bias)
    expect(Math.abs(sumDiff / 3)).toBeLessThan((3 * Math.sqrt(sumVar)) / 3);
  }, 480_000);

  it('the implied kappa is the textbook value at the reference points', () => {
    expect(impliedKappa(0.9, 0.5)).toBeCloseTo(0.8, 12);
    // p = 0.8: q = 0.74, p_e = 0.644, κ = 0.256 / 0.356
    expect(impliedKappa(0.9, 0.8)).toBeCloseTo(0.256 / 0.356, 12);
  });
});
