import { describe, expect, it } from 'vitest';
import { Sampler, type RequestHead, type SamplerOptions } from './sampling.js';

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

const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('Sampler trace context', () => {
  it('carries a valid traceparent and its tracestate into a sampled decision when it reads trace context', () => {
    const s = new Sampler({ ...base, rate: 1, traceContext: true });
    expect(s.headerNames.has('traceparent')).toBe(true);
    expect(s.decide(head({ traceparent: TP, tracestate: 'router=1' }))).toMatchObject({
      kind: 'sampled',
      traceContext: { traceparent: TP, tracestate: 'router=1' },
    });
    const bad = s.decide(head({ traceparent: '00-xyz-1-01' }));
    expect(bad.kind).toBe('sampled');
    expect(bad).not.toHaveProperty('traceContext');
  });

  it('does not even ask for the trace headers when tracing is off, so the hot path reads no extra header', () => {
    const s = new Sampler({ ...base, rate: 1, traceContext: false });
    expect(s.headerNames.has('traceparent')).toBe(false);
    expect(s.headerNames.has('tracestate')).toBe(false);
    expect(s.decide(head({ traceparent: TP }))).not.toHaveProperty('traceContext');
  });

  it('gives each sampled request its own trace context, none to a request without one', () => {
    const s = new Sampler({ ...base, rate: 1, traceContext: true });
    const tps = Array.from({ length: 5 }, (_, i) => `00-${String(i + 1).repeat(32)}-${String(i + 1).repeat(16)}-01`);
    const decisions = tps.map((tp) => s.decide(head({ traceparent: tp })));
    expect(decisions.map((d) => d.kind === 'sampled' && d.traceContext?.traceparent)).toEqual(tps);
    expect(s.decide(head({}))).not.toHaveProperty('traceContext');
    expect(decisions.map((d) => d.kind === 'sampled' && d.traceContext?.traceparent)).toEqual(tps);
  });
});
