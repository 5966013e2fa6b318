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
