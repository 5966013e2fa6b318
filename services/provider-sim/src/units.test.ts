import { describe, expect, it } from 'vitest';
import { encode } from 'gpt-tokenizer';
import { isShadowplaneError } from '@shadowplane/contracts';
import { DEFAULT_SIM_CONFIG, parseSimConfig } from './config.js';
import { KnownAnswers, normalizeWhitespace, wrongAnswer } from './dataset.js';
import { openaiDuration, PromptCache, SlidingWindowLimiter } from './limits.js';
import { fillerPieces } from './text.js';
import { rateCardCost } from './engine.js';

describe('filler text', () => {
  it('has exactly the requested number of o200k tokens for every length 1..600', () => {
    for (let n = 1; n <= 600; n++) {
      const pieces = fillerPieces(n, n * 2654435761);
      expect(pieces).toHaveLength(n);
      expect(encode(pieces.join('')).length).toBe(n);
    }
  });

  it('is a pure function of its seed', () => {
    expect(fillerPieces(50, 99).join('')).toBe(fillerPieces(50, 99).join(''));
    expect(fillerPieces(50, 99).join('')).not.toBe(fillerPieces(50, 100).join(''));
  });
});

describe('wrong answers', () => {
  it('never equal the right one and keep its formatting', () => {
    for (const final of ['18', '0', '1', '-3', '1,600', '1,450,000', '2.5', '114,200']) {
      for (let k = 0; k < 50; k++) {
        const w = wrongAnswer(final, k / 50, ((k * 7) % 50) / 50);
        expect(w.replace(/,/g, '')).not.toBe(final.replace(/,/g, ''));
        expect(Number.isFinite(Number(w.replace(/,/g, '')))).toBe(true);
        if (final.includes(',') && Math.abs(Number(w.replace(/,/g, ''))) >= 1000) expect(w).toContain(',');
      }
    }
  });
});

describe('known-answer matching', () => {
  const rows = [
    { question: 'Tom has 3 apples.  He buys 2 more. How many?', answer: 'Tom has 3+2=<<3+2=5>>5 apples.\n#### 5' },
    {
      question: 'A train goes 60 miles per hour for 2 hours. How far?',
      answer: 'It goes 60*2=<<60*2=120>>120 miles.\n#### 120',
    },
  ];
  const k = new KnownAnswers(rows, 1, 0.5);

  it('finds a question by exact text after whitespace normalisation, also inside a longer prompt', () => {
    expect(k.match('Tom has 3 apples. He buys 2 more.\nHow many?')?.index).toBe(0);
    expect(k.match('Please solve:\n\nA train goes 60 miles per hour for 2 hours. How far?\nThanks')?.index).toBe(1);
    expect(k.match('Tom has 3 pears. He buys 2 more. How many?')).toBeNull();
    expect(normalizeWhitespace('  a \n\t b  ')).toBe('a b');
  });

  it('answers in GSM8K style without the <<calc>> annotations', () => {
    const all = new KnownAnswers(rows, 1, 0.5);
    const a = all.answer('m', 1, all.items[0]!);
    expect(a).toEqual({ text: 'Tom has 3+2=5 apples.\n#### 5', correct: true, final: '5' });
    const b = all.answer('m', 0, all.items[1]!);
    expect(b.correct).toBe(false);
    expect(b.text).toMatch(/^It goes 60\*2=\d+ miles\.\n#### \d+$/);
    expect(b.final).not.toBe('120');
  });
});

describe('limits and caching', () => {
  it('the sliding window admits rpm requests per window and frees them as they age out', () => {
    const l = new SlidingWindowLimiter(2, 1000, 100);
    expect(l.check(0, 1).ok).toBe(true);
    l.record(0, 1);
    l.record(10, 1);
    const r = l.check(20, 1);
    expect(r).toEqual({ ok: false, limit: 'requests', retryAfterMs: 80 });
    expect(l.check(101, 1).ok).toBe(true);
    expect(l.state(101).remainingRequests).toBe(1);
  });

  it('formats reset durations like OpenAI', () => {
    expect(openaiDuration(2)).toBe('2ms');
    expect(openaiDuration(1500)).toBe('1.5s');
    expect(openaiDuration(360_000)).toBe('6m0s');
    expect(openaiDuration(1_252_666)).toBe('20m52.666s');
  });

  it('prompt cache reads the longest cached 1024+128k prefix within the TTL', () => {
    const c = new PromptCache(1024, 128, 1000);
    const a = Array.from({ length: 1300 }, (_, i) => i);
    expect(c.touch([a], 0)).toEqual({ read: 0, cacheable: 1280 });
    expect(c.touch([a.slice(0, 1200), [7, 7, 7]], 10)).toEqual({ read: 1152, cacheable: 1152 });
    expect(c.touch([a], 2000).read).toBe(0); // expired
    expect(c.touch([a.slice(0, 500)], 2001)).toEqual({ read: 0, cacheable: 0 });
  });

  it('rate-card cost prices each token once (sim-large: 2.50 / 1.25 / 10.00 USD per Mtok)', () => {
    const cfg = parseSimConfig(DEFAULT_SIM_CONFIG).models['sim-large']!;
    // 1000 input of which 400 cached, 100 output: 600·2.5 + 400·1.25 + 100·10 = 3000 µUSD
    expect(rateCardCost(cfg, { input: 1000, cacheRead: 400, cacheWrite: 0, output: 100 }).total).toBeCloseTo(0.003, 12);
  });
});

describe('config validation', () => {
  it('applies defaults to the documented three tiers', () => {
    const c = parseSimConfig(DEFAULT_SIM_CONFIG);
    expect(Object.keys(c.models)).toEqual(['sim-large', 'sim-medium', 'sim-small']);
    expect(c.models['sim-medium']!.usage_mode).toBe('openai_include_usage_only');
    expect(c.models['sim-small']!.prices).toEqual({ input: 0.1, cached_input: 0.025, output: 0.4 });
  });

  it('names the offending key', () => {
    try {
      parseSimConfig({ models: { m: { accuracy: 1.5, prices: { input: 1, cached_input: 1, output: 1 } } } });
      throw new Error('expected config_invalid');
    } catch (e) {
      expect(isShadowplaneError(e) && e.code).toBe('config_invalid');
      expect((e as { details: { issues: { key: string }[] } }).details.issues[0]!.key).toBe('models.m.accuracy');
    }
    expect(() => parseSimConfig({ models: {}, seed: 1 })).toThrow(/models/);
    expect(() => parseSimConfig({ ...DEFAULT_SIM_CONFIG, bogus: 1 })).toThrow(/bogus|Unrecognized/);
  });
});
