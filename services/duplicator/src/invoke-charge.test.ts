import { describe, expect, it } from 'vitest';
import { parseResponse } from '@shadowplane/providers';
import { attemptCharge, type AttemptOutcome } from './invoke.js';

const SSE = { status: 200, headers: { 'content-type': 'text/event-stream' } };
const zeroCost = parseResponse(
  'openrouter.chat',
  SSE,
  'data: {"choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":500,"cost":0}}\n\ndata: [DONE]\n\n',
);
const outcome = (parsed = zeroCost): AttemptOutcome => ({
  status: 200,
  parsed,
  errorClass: null,
  errorMessage: null,
  retryAfterS: null,
  startedAtMs: 0,
  endedAtMs: 1,
  latencyMs: 1,
  ttftMs: null,
  rawText: null,
  maybeSent: true,
});

describe('attemptCharge for a provider-reported cost of 0', () => {
  it('charges the rate-card cost of the billed tokens, not 0', () => {
    // 1000 input × $2/M + 500 output × $8/M = $0.002 + $0.004 = 6000 µ$
    expect(attemptCharge(outcome(), { input: 2, output: 8 })).toBe(6000);
  });
  it('charges the reserved upper bound when the arm has no rate card', () => {
    expect(attemptCharge(outcome(), undefined)).toBe('reserved');
  });
  it('charges 0 for a free model whose rate card is 0', () => {
    expect(attemptCharge(outcome(), { input: 0, output: 0 })).toBe(0);
  });
});

describe('attemptCharge for a non-2xx whose body carries usage', () => {
  // the recorded OpenRouter error body shape, as a 502 after generation began, plus its usage
  const errorBody = (usage: object | null) =>
    JSON.stringify({
      error: { code: 502, message: 'Provider returned error', metadata: { provider_name: 'Google' } },
      ...(usage ? { usage } : {}),
      user_id: 'user_REDACTED',
    });
  const failed = (status: number, usage: object | null): AttemptOutcome => {
    const parsed = parseResponse('openrouter.chat', { status, headers: {} }, errorBody(usage));
    return { ...outcome(parsed), status, errorClass: parsed.errorClass };
  };
  it('charges the provider-reported cost of a 5xx that reported usage (not the upper bound)', () => {
    expect(attemptCharge(failed(502, { prompt_tokens: 43, completion_tokens: 10, cost: 0.00005 }), undefined)).toBe(50);
  });
  it('charges a 4xx that reported usage by the rate card (not 0)', () => {
    // 43 × $2/M + 10 × $8/M = 86 + 80 = 166 µ$
    expect(attemptCharge(failed(400, { prompt_tokens: 43, completion_tokens: 10 }), { input: 2, output: 8 })).toBe(166);
  });
  it('a reported cost of 0 with billed tokens on an error body falls back to the rate card as on a 2xx', () => {
    expect(
      attemptCharge(failed(502, { prompt_tokens: 43, completion_tokens: 10, cost: 0 }), { input: 2, output: 8 }),
    ).toBe(166);
  });
  it('without usage the error rules stand: 4xx → 0, 5xx → the upper bound', () => {
    expect(attemptCharge(failed(400, null), { input: 2, output: 8 })).toBe(0);
    expect(attemptCharge(failed(502, null), { input: 2, output: 8 })).toBe('reserved');
  });
});
