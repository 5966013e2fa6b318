import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SIM_CONFIG, startProviderSim, type ProviderSim } from './index.js';

// Ground truth read straight from the dataset file, independent of the sim's own loader.
const rows = readFileSync(fileURLToPath(new URL('../../../examples/data/gsm8k-test.jsonl', import.meta.url)), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as { question: string; answer: string });
const truth = (i: number) => rows[i]!.answer.split('####').at(-1)!.trim().replace(/,/g, '');

const CONFIGURED = { 'sim-large': 0.92, 'sim-medium': 0.9, 'sim-small': 0.55 } as const; // README "Default tiers"
const N = 1000;

const dispatcher = new Agent({ connections: 16, pipelining: 1 });
afterAll(() => dispatcher.close());

async function post(url: string, path: string, body: unknown): Promise<{ status: number; text: string }> {
  const r = await request(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    dispatcher,
  });
  return { status: r.statusCode, text: await r.body.text() };
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

describe('GSM8K answers', () => {
  let sim: ProviderSim;
  beforeAll(async () => {
    sim = await startProviderSim({ config: { ...DEFAULT_SIM_CONFIG, latency_scale: 0 }, seed: 1234 });
  });
  afterAll(() => sim.close());

  it(`over ${N} questions each default model's accuracy is within 3 pp of its configured accuracy`, async () => {
    const idx = Array.from({ length: N }, (_, i) => i);
    for (const [model, acc] of Object.entries(CONFIGURED)) {
      const finals = await mapLimit(idx, 16, async (i) => {
        // the question wrapped in instructions, with its whitespace disturbed: still recognised
        const prompt = `Solve this problem step by step.\n\n${rows[i]!.question.replace(/ /g, '  ')}\n\nEnd with "#### <answer>".`;
        const r = await post(sim.url, '/v1/chat/completions', { model, messages: [{ role: 'user', content: prompt }] });
        expect(r.status).toBe(200);
        const text = (JSON.parse(r.text) as { choices: { message: { content: string } }[] }).choices[0]!.message
          .content;
        return /#### (-?[\d,.]+)\s*$/.exec(text)?.[1]?.replace(/,/g, '') ?? null;
      });
      const correct = finals.filter((f, i) => f === truth(i)).length;
      expect(finals.every((f) => f !== null)).toBe(true);
      expect(Math.abs(correct / N - acc)).toBeLessThanOrEqual(0.03);
    }
  }, 240_000);

  it('answers the same question the same way on every API shape and on repeat', async () => {
    const q = rows[5]!.question;
    const a = await post(sim.url, '/v1/chat/completions', {
      model: 'sim-small',
      messages: [{ role: 'user', content: q }],
    });
    const b = await post(sim.url, '/v1/messages', {
      model: 'sim-small',
      max_tokens: 1000,
      messages: [{ role: 'user', content: q }],
    });
    const c = await post(sim.url, '/v1/responses', { model: 'sim-small', input: q });
    const d = await post(sim.url, '/v1/chat/completions', {
      model: 'sim-small',
      messages: [{ role: 'user', content: q }],
    });
    const ta = (JSON.parse(a.text) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
    const tb = (JSON.parse(b.text) as { content: { text: string }[] }).content[0]!.text;
    const tc = (JSON.parse(c.text) as { output: { content: { text: string }[] }[] }).output[0]!.content[0]!.text;
    const td = (JSON.parse(d.text) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
    expect(tb).toBe(ta);
    expect(tc).toBe(ta);
    expect(td).toBe(ta);
  });

  it('a wrong answer is a plausible different number in GSM8K style', async () => {
    // find a question sim-small gets wrong among the first 40
    for (let i = 0; i < 40; i++) {
      const r = await post(sim.url, '/v1/chat/completions', {
        model: 'sim-small',
        messages: [{ role: 'user', content: rows[i]!.question }],
      });
      const text = (JSON.parse(r.text) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
      const final = /#### (-?[\d,.]+)$/.exec(text)![1]!.replace(/,/g, '');
      if (final !== truth(i)) {
        expect(Number.isFinite(Number(final))).toBe(true);
        expect(text.split('\n').length).toBeGreaterThan(1);
        return;
      }
    }
    throw new Error('sim-small (accuracy 0.55) got 40 questions in a row right');
  });

  it('unrecognised prompts get filler whose length follows the model distribution and respects max_tokens', async () => {
    const lens: number[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await post(sim.url, '/v1/chat/completions', {
        model: 'sim-large',
        messages: [{ role: 'user', content: `Tell me something, variant ${i}.` }],
      });
      lens.push((JSON.parse(r.text) as { usage: { completion_tokens: number } }).usage.completion_tokens);
    }
    lens.sort((x, y) => x - y);
    const median = lens[20]!;
    // sim-large output_length: median 160, sigma 0.5, clamp [8, 1024]
    expect(median).toBeGreaterThan(100);
    expect(median).toBeLessThan(250);
    expect(new Set(lens).size).toBeGreaterThan(10);
    const capped = await post(sim.url, '/v1/chat/completions', {
      model: 'sim-large',
      max_tokens: 7,
      messages: [{ role: 'user', content: 'Tell me something long.' }],
    });
    const body = JSON.parse(capped.text) as {
      choices: { finish_reason: string }[];
      usage: { completion_tokens: number };
    };
    expect(body.choices[0]!.finish_reason).toBe('length');
    expect(body.usage.completion_tokens).toBe(7);
  });
});

describe('determinism under a seed', () => {
  const script: { path: string; body: unknown }[] = [
    {
      path: '/v1/chat/completions',
      body: { model: 'sim-large', messages: [{ role: 'user', content: rows[0]!.question }] },
    },
    {
      path: '/v1/chat/completions',
      body: {
        model: 'sim-medium',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'Hello' }],
      },
    },
    {
      path: '/v1/chat/completions',
      body: {
        model: 'sim-medium',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'Hello' }],
      },
    },
    { path: '/v1/responses', body: { model: 'sim-small', input: rows[3]!.question, stream: true } },
    {
      path: '/v1/messages',
      body: { model: 'sim-large', max_tokens: 400, messages: [{ role: 'user', content: 'Summarise the plan.' }] },
    },
    {
      path: '/v1/messages',
      body: {
        model: 'sim-small',
        max_tokens: 400,
        stream: true,
        messages: [{ role: 'user', content: rows[9]!.question }],
      },
    },
    {
      path: '/api/v1/chat/completions',
      body: { model: 'sim-medium', messages: [{ role: 'user', content: 'Costs?' }] },
    },
    {
      path: '/api/v1/chat/completions',
      body: { model: 'sim-medium', stream: true, messages: [{ role: 'user', content: rows[7]!.question }] },
    },
  ];

  async function run(seed: number): Promise<string[]> {
    // real latency on: timing must not leak into bodies
    const sim = await startProviderSim({ config: { ...DEFAULT_SIM_CONFIG, latency_scale: 0.1 }, seed });
    try {
      const out: string[] = [];
      for (const s of script) out.push((await post(sim.url, s.path, s.body)).text);
      return out;
    } finally {
      await sim.close();
    }
  }

  it('two runs with the same seed give byte-identical bodies; another seed differs', async () => {
    const a = await run(42);
    const b = await run(42);
    const c = await run(43);
    expect(b).toEqual(a);
    expect(a[1]).not.toBe(a[2]); // a repeated request in one run gets a new id
    expect(c[0]).not.toBe(a[0]);
  }, 120_000);
});
