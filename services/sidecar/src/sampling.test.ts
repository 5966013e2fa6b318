import { describe, expect, it } from 'vitest';
import { modelMatches, Sampler, type RequestHead, type SamplerOptions } from './sampling.js';

const base: SamplerOptions = {
  rate: 0,
  suite: 'default',
  stickyHeader: null,
  stickySalt: null,
  optIn: true,
  optInRate: 1,
  rules: [],
  expectations: [],
  retentionConsent: false,
};

function head(
  headers: Record<string, string> = {},
  path = '/v1/chat/completions',
  method = 'POST',
  host = 'router.local',
): RequestHead {
  return { method, path, host, headers: new Map(Object.entries(headers)) };
}

describe('Sampler', () => {
  it('opt-out wins over opt-in and over a rate of 1', () => {
    const s = new Sampler({ ...base, rate: 1 });
    expect(s.decide(head({ 'x-shadow-opt-out': '1', 'x-shadow-suite': 'a' }))).toEqual({
      kind: 'skipped',
      reason: 'opt_out',
    });
    expect(s.decide(head({ 'x-shadow-opt-out': 'true' })).kind).toBe('skipped');
  });

  it('opt-in headers sample at opt_in_rate with the given suite and call type', () => {
    const s = new Sampler(base);
    const d = s.decide(head({ 'x-shadow-suite': 'support', 'x-shadow-call-type': 'triage' }));
    expect(d).toMatchObject({
      kind: 'sampled',
      suite: 'support',
      callType: 'triage',
      api: 'openai.chat',
      trafficClass: 'production',
      stickyKeyHash: null,
    });
  });

  it('an opt-in with an unsafe token is skipped as bad_opt_in; an opt-in to a non-LLM path as unknown_api', () => {
    const s = new Sampler(base);
    expect(s.decide(head({ 'x-shadow-suite': 'a.b' }))).toEqual({ kind: 'skipped', reason: 'bad_opt_in' });
    expect(s.decide(head({ 'x-shadow-suite': 'a' }, '/v1/models', 'POST'))).toEqual({
      kind: 'skipped',
      reason: 'unknown_api',
    });
  });

  it('only POSTs to a known LLM API path are sampled; the call type defaults from the API', () => {
    const s = new Sampler({ ...base, rate: 1 });
    expect(s.decide(head({}, '/v1/chat/completions', 'GET')).kind).toBe('not_sampled');
    expect(s.decide(head({}, '/healthz')).kind).toBe('not_sampled');
    expect(s.decide(head({}, '/v1/messages'))).toMatchObject({ kind: 'sampled', callType: 'anthropic_messages' });
    expect(s.decide(head({}, '/v1/responses'))).toMatchObject({ kind: 'sampled', callType: 'openai_responses' });
    expect(s.decide(head({}, '/api/v1/chat/completions'))).toMatchObject({
      kind: 'sampled',
      callType: 'openrouter_chat',
    });
  });

  it('the first matching rule (path, host, headers) sets suite, call type, rate, traffic class and model filter', () => {
    const s = new Sampler({
      ...base,
      rules: [
        { name: 'no', path_prefix: '/v1/messages', rate: 1, suite: 'wrong' },
        {
          name: 'acme',
          host: 'router.local',
          headers: { 'x-tenant-id': 'acme' },
          rate: 1,
          suite: 'acme',
          call_type: 'chat',
          models: ['gpt-4o*'],
          traffic_class: 'synthetic',
        },
        { name: 'zero', rate: 0 },
      ],
    });
    expect(s.headerNames.has('x-tenant-id')).toBe(true);
    expect(s.decide(head({ 'x-tenant-id': 'acme' }))).toMatchObject({
      kind: 'sampled',
      suite: 'acme',
      callType: 'chat',
      models: ['gpt-4o*'],
      rule: 'acme',
      trafficClass: 'synthetic',
    });
    expect(s.decide(head({ 'x-tenant-id': 'other' })).kind).toBe('not_sampled');
  });

  it('random sampling draws from the injected source: u < rate is in', () => {
    let u = 0.29;
    const s = new Sampler({ ...base, rate: 0.3, random: () => u });
    expect(s.decide(head()).kind).toBe('sampled');
    u = 0.3;
    expect(s.decide(head()).kind).toBe('not_sampled');
  });

  it('sticky sampling: one key always gets one answer, about rate of keys are in, and a key in at 0.3 is in at 0.6', () => {
    const mk = (rate: number) =>
      new Sampler({
        ...base,
        rate,
        stickyHeader: 'x-conversation-id',
        stickySalt: 'salt-salt-salt-salt',
        random: () => 0,
      });
    const s3 = mk(0.3);
    const s6 = mk(0.6);
    let inCount = 0;
    for (let i = 0; i < 2000; i++) {
      const h = head({ 'x-conversation-id': `c${i}` });
      const a = s3.decide(h).kind;
      expect(s3.decide(h).kind).toBe(a);
      if (a === 'sampled') {
        inCount++;
        expect(s6.decide(h).kind).toBe('sampled');
      }
    }
    // binomial(2000, 0.3): mean 600, sd ≈ 20.5; ±5 sd
    expect(inCount).toBeGreaterThan(600 - 103);
    expect(inCount).toBeLessThan(600 + 103);
  });

  it('a sampled sticky decision carries the salted hash, never the key', () => {
    const s = new Sampler({ ...base, rate: 1, stickyHeader: 'x-tenant-id', stickySalt: 'another-salt-1234' });
    const d = s.decide(head({ 'x-tenant-id': 'tenant-secret-name' }));
    expect(d.kind).toBe('sampled');
    if (d.kind === 'sampled') {
      expect(d.stickyKeyHash).toMatch(/^[0-9a-f]{64}$/);
      expect(d.stickyKeyHash).not.toContain('tenant-secret-name');
    }
  });

  it('traffic class test/synthetic labels the capture; an unknown class skips it', () => {
    const s = new Sampler({ ...base, rate: 1 });
    expect(s.decide(head({ 'x-shadow-traffic-class': 'synthetic' }))).toMatchObject({ trafficClass: 'synthetic' });
    expect(s.decide(head({ 'x-shadow-traffic-class': 'TEST' }))).toMatchObject({ trafficClass: 'test' });
    expect(s.decide(head({ 'x-shadow-traffic-class': 'import-ish' }))).toEqual({
      kind: 'skipped',
      reason: 'bad_traffic_class',
    });
  });

  it('x-shadow-expect: one expectation or an array joins the configured ones; invalid JSON or shape skips', () => {
    const s = new Sampler({ ...base, rate: 1, expectations: [{ kind: 'must_not_include', value: ['As an AI'] }] });
    expect(s.decide(head({ 'x-shadow-expect': '{"kind":"numeric","value":18,"hard":true}' }))).toMatchObject({
      expectations: [
        { kind: 'must_not_include', value: ['As an AI'] },
        { kind: 'numeric', value: 18, hard: true },
      ],
    });
    expect(
      s.decide(head({ 'x-shadow-expect': '[{"kind":"exact","value":"yes"},{"kind":"regex","value":"^y"}]' })),
    ).toMatchObject({ expectations: [{}, { kind: 'exact' }, { kind: 'regex' }] });
    expect(s.decide(head({ 'x-shadow-expect': '{"kind":' }))).toEqual({ kind: 'skipped', reason: 'bad_expectation' });
    expect(s.decide(head({ 'x-shadow-expect': '{"kind":"numeric"}' }))).toEqual({
      kind: 'skipped',
      reason: 'bad_expectation',
    });
  });

  it('x-shadow-expect: a regex expectation RE2 cannot compile (backreference, lookaround, too large) skips', () => {
    const s = new Sampler({ ...base, rate: 1 });
    for (const value of ['(a)\\1', 'x(?=y)', '(?<!x)y', 'a{2,1000}', 'a'.repeat(1001)])
      expect(s.decide(head({ 'x-shadow-expect': JSON.stringify({ kind: 'regex', value }) })), value).toEqual({
        kind: 'skipped',
        reason: 'bad_expectation',
      });
    // one refused pattern in an array skips the capture, not just that expectation
    const two = JSON.stringify([
      { kind: 'exact', value: 'y' },
      { kind: 'regex', value: 'x(?!y)' },
    ]);
    expect(s.decide(head({ 'x-shadow-expect': two }))).toEqual({ kind: 'skipped', reason: 'bad_expectation' });
    // the catastrophic pattern of a backtracking engine is plain RE2: accepted
    const slow = { kind: 'regex', value: '^(?:.|\\n)*(?:.|\\n)*QQQ$' };
    expect(s.decide(head({ 'x-shadow-expect': JSON.stringify(slow) }))).toMatchObject({
      kind: 'sampled',
      expectations: [slow],
    });
  });

  it('retention consent comes from the header when present, else from config', () => {
    const s = new Sampler({ ...base, rate: 1, retentionConsent: true });
    expect(s.decide(head())).toMatchObject({ retentionConsent: true });
    expect(s.decide(head({ 'x-shadow-retention-consent': '0' }))).toMatchObject({ retentionConsent: false });
  });

  it('is idle (the proxy skips the decision unless an x-shadow-* header is present) exactly when every rate is 0', () => {
    expect(new Sampler({ ...base, rate: 0, optIn: false }).idle).toBe(true);
    expect(new Sampler({ ...base, rate: 0 }).idle).toBe(true);
    expect(new Sampler({ ...base, rate: 0.1 }).idle).toBe(false);
    expect(new Sampler({ ...base, rate: 0, rules: [{ rate: 0.1 }] }).idle).toBe(false);
    // idle still samples an opted-in request: the proxy calls decide() when x-shadow-* is present
    expect(new Sampler({ ...base, rate: 0 }).decide(head({ 'x-shadow-suite': 'x' })).kind).toBe('sampled');
  });
});

describe('modelMatches', () => {
  it('matches exact names and trailing-* prefixes; null filter matches all', () => {
    expect(modelMatches(null, null)).toBe(true);
    expect(modelMatches(['gpt-4o*'], 'gpt-4o-mini')).toBe(true);
    expect(modelMatches(['gpt-4o'], 'gpt-4o-mini')).toBe(false);
    expect(modelMatches(['claude-3'], null)).toBe(false);
  });
});
