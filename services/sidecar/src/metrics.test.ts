import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SidecarMetrics } from './metrics.js';

/** The value of one sample line (`name{labels} value`) in the exposition text. */
function sample(text: string, line: string): number {
  const l = text.split('\n').find((x) => x.startsWith(`${line} `));
  return l === undefined ? NaN : Number(l.slice(line.length + 1));
}

describe('SidecarMetrics', () => {
  it('hands added-latency values to the histogram at scrape time, and in batches before that', async () => {
    const registry = new Registry();
    const m = new SidecarMetrics(registry);
    m.added(0.00004);
    m.added(0.0004);
    m.added(0.2);
    let text = await registry.metrics();
    expect(sample(text, 'shadowplane_sidecar_added_latency_seconds_count')).toBe(3);
    expect(sample(text, 'shadowplane_sidecar_added_latency_seconds_sum')).toBeCloseTo(0.20044, 10);
    expect(sample(text, 'shadowplane_sidecar_added_latency_seconds_bucket{le="0.00005"}')).toBe(1);
    expect(sample(text, 'shadowplane_sidecar_added_latency_seconds_bucket{le="0.0005"}')).toBe(2);
    expect(sample(text, 'shadowplane_sidecar_added_latency_seconds_bucket{le="+Inf"}')).toBe(3);
    // more values than one batch holds between two scrapes: none is lost or counted twice
    for (let i = 0; i < 2500; i++) m.added(0.0001);
    text = await registry.metrics();
    expect(sample(text, 'shadowplane_sidecar_added_latency_seconds_count')).toBe(2503);
    expect(sample(text, 'shadowplane_sidecar_added_latency_seconds_bucket{le="0.0001"}')).toBe(2501);
  });

  it('counts requests and captures as numbers that reach prom-client at scrape time', async () => {
    const registry = new Registry();
    const m = new SidecarMetrics(registry);
    m.request('ok');
    m.request('ok');
    m.request('upstream_error');
    m.capture('not_sampled');
    m.capture('dropped', 'queue_full');
    const text = await registry.metrics();
    expect(sample(text, 'shadowplane_sidecar_requests_total{outcome="ok"}')).toBe(2);
    expect(sample(text, 'shadowplane_sidecar_requests_total{outcome="upstream_error"}')).toBe(1);
    expect(sample(text, 'shadowplane_sidecar_requests_total{outcome="no_route"}')).toBe(0);
    expect(sample(text, 'shadowplane_sidecar_captures_total{outcome="not_sampled",reason=""}')).toBe(1);
    expect(sample(text, 'shadowplane_sidecar_captures_total{outcome="dropped",reason="queue_full"}')).toBe(1);
  });
});
