import { describe, expect, it } from 'vitest';
import { NULL_USAGE } from '@shadowplane/contracts';
import type { Usage } from '@shadowplane/contracts';
import {
  attemptUpperBoundMicroUsd,
  parseResponse,
  PROVIDER_ZERO_WITH_TOKENS,
  rateCardCost,
  resolveCost,
  usdToMicroUsdCeil,
} from './index.js';

const u = (o: Partial<Usage>): Usage => ({ ...NULL_USAGE, ...o });

describe('rateCardCost', () => {
  it('prices each token once: cache reads and writes are taken out of plain input', () => {
    // 1000 input of which 600 cache reads and 100 cache writes → 300 plain
    // 300×3 + 600×0.3 + 100×3.75 + 50×15 = 900 + 180 + 375 + 750 = 2205 micro-USD
    const c = rateCardCost(
      u({ input_tokens: 1000, cache_read_input_tokens: 600, cache_creation_input_tokens: 100, output_tokens: 50 }),
      {
        input: 3,
        output: 15,
        cached_input: 0.3,
        cache_write: 3.75,
      },
    );
    expect(c).toEqual({ usd: 0.002205, micro_usd: 2205, basis: 'rate_card' });
  });

  it('does not add reasoning tokens on top of output', () => {
    // 10×1 + 100×2 = 210, whatever the reasoning split
    expect(
      rateCardCost(u({ input_tokens: 10, output_tokens: 100, reasoning_output_tokens: 90 }), { input: 1, output: 2 })
        .micro_usd,
    ).toBe(210);
  });

  it('falls back to the input price when cached_input / cache_write are absent', () => {
    // all 100 input at 2 → 200, + 10×4 = 240
    expect(
      rateCardCost(
        u({ input_tokens: 100, cache_read_input_tokens: 60, cache_creation_input_tokens: 20, output_tokens: 10 }),
        { input: 2, output: 4 },
      ).micro_usd,
    ).toBe(240);
  });

  it('prices Anthropic 1-hour cache writes at cache_write_1h, the 5-minute rest at cache_write', () => {
    // 1000 writes, 400 of them 1h: 600×3.75 + 400×6 + 10×3 (plain input) + 5×15 = 2250 + 2400 + 30 + 75 = 4755
    const raw = {
      input_tokens: 10,
      cache_creation_input_tokens: 1000,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 600, ephemeral_1h_input_tokens: 400 },
      output_tokens: 5,
    };
    const usage = u({
      input_tokens: 1010,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 1000,
      output_tokens: 5,
      raw,
    });
    expect(rateCardCost(usage, { input: 3, output: 15, cache_write: 3.75, cache_write_1h: 6 }).micro_usd).toBe(4755);
    // without a 1h price every write is priced at cache_write: 1000×3.75 + 30 + 75 = 3855
    expect(rateCardCost(usage, { input: 3, output: 15, cache_write: 3.75 }).micro_usd).toBe(3855);
  });

  it('keeps null usage unknown, never 0', () => {
    expect(rateCardCost(u({}), { input: 1, output: 1 })).toEqual({
      usd: null,
      micro_usd: null,
      basis: null,
      reason: 'no_usage',
    });
    expect(rateCardCost(u({ input_tokens: 5 }), { input: 1, output: 1 })).toEqual({
      usd: null,
      micro_usd: null,
      basis: null,
      reason: 'incomplete_usage',
    });
  });

  it('refuses inconsistent usage (cache parts larger than input)', () => {
    expect(
      rateCardCost(u({ input_tokens: 5, cache_read_input_tokens: 9, output_tokens: 1 }), { input: 1, output: 1 })
        .reason,
    ).toBe('inconsistent_usage');
  });

  it('computes micro-USD exactly where floats would drift (100 × 0.07 = 7, not 7.000000000000001 → 8)', () => {
    expect(100 * 0.07).not.toBe(7); // the float trap this guards against
    expect(rateCardCost(u({ input_tokens: 100, output_tokens: 0 }), { input: 0.07, output: 0 }).micro_usd).toBe(7);
  });

  it('rounds a fractional micro-USD up', () => {
    // 1 token × 0.5 = 0.5 micro → 1
    expect(rateCardCost(u({ input_tokens: 1, output_tokens: 0 }), { input: 0.5, output: 0 })).toEqual({
      usd: 0.0000005,
      micro_usd: 1,
      basis: 'rate_card',
    });
  });
});

describe('usdToMicroUsdCeil', () => {
  it.each([
    [0, 0],
    [0.000222, 222],
    [0.0000001, 1],
    [1.5, 1_500_000],
    [2.22e-7, 1],
    [0.1 + 0.2, 300_001], // 0.30000000000000004 is more than 0.3: rounds up
  ])('%d USD → %i micro', (usd, micro) => expect(usdToMicroUsdCeil(usd)).toBe(micro));
  it('rejects negative and non-finite amounts', () => {
    expect(() => usdToMicroUsdCeil(-1)).toThrow(RangeError);
    expect(() => usdToMicroUsdCeil(Number.NaN)).toThrow(RangeError);
  });
});

describe('resolveCost', () => {
  const SSE = { status: 200, headers: { 'content-type': 'text/event-stream' } };
  it('prefers the provider-reported cost over the rate card', () => {
    const r = parseResponse(
      'openrouter.chat',
      SSE,
      'data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":5,"cost":0.00003}}\n\ndata: [DONE]\n\n',
    );
    expect(resolveCost(r, { input: 1, output: 1 })).toEqual({
      usd: 0.00003,
      micro_usd: 30,
      basis: 'provider_reported',
    });
  });
  it('a provider cost of 0 with billed tokens is not a measured zero: the rate card prices it, labelled as such', () => {
    const r = parseResponse(
      'openrouter.chat',
      SSE,
      'data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":5,"cost":0}}\n\ndata: [DONE]\n\n',
    );
    // 5 input + 5 output tokens at $1/M each = $0.00001 = 10 µ$
    expect(resolveCost(r, { input: 1, output: 1 })).toEqual({
      usd: 0.00001,
      micro_usd: 10,
      basis: 'rate_card',
      reason: PROVIDER_ZERO_WITH_TOKENS,
    });
  });
  it('a provider cost of 0 with billed tokens and no rate card is unknown (so the budget settles the upper bound)', () => {
    const r = parseResponse(
      'openrouter.chat',
      SSE,
      'data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":5,"cost":0}}\n\ndata: [DONE]\n\n',
    );
    expect(resolveCost(r)).toEqual({ usd: null, micro_usd: null, basis: null, reason: PROVIDER_ZERO_WITH_TOKENS });
  });
  it('a free model (rate card 0) agrees with a provider 0, which stays provider_reported; so does a 0 with no tokens', () => {
    const r = parseResponse(
      'openrouter.chat',
      SSE,
      'data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":5,"cost":0}}\n\ndata: [DONE]\n\n',
    );
    expect(resolveCost(r, { input: 0, output: 0 })).toEqual({ usd: 0, micro_usd: 0, basis: 'provider_reported' });
    const none = parseResponse(
      'openrouter.chat',
      SSE,
      'data: {"choices":[],"usage":{"prompt_tokens":0,"completion_tokens":0,"cost":0}}\n\ndata: [DONE]\n\n',
    );
    expect(resolveCost(none, { input: 1, output: 1 })).toEqual({ usd: 0, micro_usd: 0, basis: 'provider_reported' });
  });
  it('without a provider cost and without a card, the cost is unknown with a reason', () => {
    const r = parseResponse(
      'openai.chat',
      SSE,
      'data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":5}}\n\ndata: [DONE]\n\n',
    );
    expect(resolveCost(r)).toEqual({ usd: null, micro_usd: null, basis: null, reason: 'no_rate_card' });
    expect(resolveCost(r, { input: 1, output: 1 })).toEqual({ usd: 0.00001, micro_usd: 10, basis: 'rate_card' });
  });
  it('an abandoned response has no cost on any basis', () => {
    const r = parseResponse(
      'openai.chat',
      SSE,
      'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\ndata: [DONE]\n\n',
    );
    expect(resolveCost(r)).toEqual({ usd: null, micro_usd: null, basis: null, reason: 'no_usage' });
    expect(resolveCost(r, { input: 1, output: 1 }).usd).toBeNull();
  });
});

describe('hostile usage figures', () => {
  it('token counts beyond Number.MAX_SAFE_INTEGER are not counts: null, so the cost is unknown, never a huge or Infinity figure', () => {
    const r = parseResponse(
      'openai.chat',
      { status: 200, headers: { 'content-type': 'application/json' } },
      '{"choices":[],"usage":{"prompt_tokens":1e20,"completion_tokens":1e300}}',
    );
    expect(r.usage.input_tokens).toBeNull();
    expect(r.usage.output_tokens).toBeNull();
    expect(resolveCost(r, { input: 1, output: 2 }).usd).toBeNull();
  });

  it('a cost whose micro-USD is not a safe integer → usd null, reason out_of_range (rate card, provider-reported); the worst-case bound saturates high', () => {
    const big = Number.MAX_SAFE_INTEGER;
    expect(rateCardCost(u({ input_tokens: big, output_tokens: big }), { input: 1e6, output: 1e6 })).toEqual({
      usd: null,
      micro_usd: null,
      basis: null,
      reason: 'out_of_range',
    });
    // a reservation bound that cannot be represented is the largest safe integer: no budget covers it
    expect(attemptUpperBoundMicroUsd(4000, 4000, { input: 1e300, output: 1e300 })).toBe(Number.MAX_SAFE_INTEGER);
    const r = parseResponse(
      'openrouter.chat',
      { status: 200, headers: { 'content-type': 'application/json' } },
      '{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"cost":1e300}}',
    );
    const c = resolveCost(r, { input: 1, output: 2 });
    expect(c.basis).not.toBe('provider_reported');
    expect(c.micro_usd === null || Number.isSafeInteger(c.micro_usd)).toBe(true);
  });

  it('negative, fractional and string counts are null, never negative costs', () => {
    for (const usage of [
      '{"prompt_tokens":-5,"completion_tokens":3}',
      '{"prompt_tokens":10.5,"completion_tokens":3}',
      '{"prompt_tokens":"10","completion_tokens":3}',
    ]) {
      const r = parseResponse(
        'openai.chat',
        { status: 200, headers: { 'content-type': 'application/json' } },
        `{"choices":[],"usage":${usage}}`,
      );
      expect(r.usage.input_tokens).toBeNull();
      expect(resolveCost(r, { input: 1, output: 2 }).usd).toBeNull();
    }
  });
});
