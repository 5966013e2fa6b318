// CaptureProcessor batching: small captures wait for company up to batchMs (or until 16 wait), at
// most 4 are built per event-loop turn, and flush() builds whatever waits (shutdown).
import { describe, expect, it } from 'vitest';
import { createLogger, createMetricsRegistry } from '@shadowplane/telemetry';
import { SidecarMetrics } from './metrics.js';
import { CaptureProcessor } from './processor.js';
import type { CaptureInput } from './capture.js';

function input(i: number): CaptureInput {
  const body = Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `question ${i}` }] }));
  return {
    decision: { kind: 'sampled', api: 'openai.chat', suite: 's', callType: 'c', trafficClass: 'production', expectations: [], retentionConsent: false, stickyKeyHash: null, models: null, rule: null },
    method: 'POST',
    path: '/v1/chat/completions',
    contentType: 'application/json',
    contentEncoding: null,
    requestChunks: [body],
    requestBytes: body.length,
    response: null,
    startMs: 0,
    endMs: 1,
    placement: 'egress',
    sidecarId: 'unit',
    inlineMaxBytes: 65536,
    maxBodyBytes: 1 << 20,
    bodyStore: 'b',
  };
}

function processor(batchMs: number): { p: CaptureProcessor; metrics: SidecarMetrics } {
  const metrics = new SidecarMetrics(createMetricsRegistry({ defaultMetrics: false }));
  return { p: new CaptureProcessor(64 * 1024, createLogger({ service: 'test', version: '0', level: 'silent' }), metrics, batchMs), metrics };
}

const turn = () => new Promise<void>((r) => setImmediate(r));

describe('CaptureProcessor batching', () => {
  it('a lone capture waits for the batch window, then is built', async () => {
    const { p } = processor(40);
    let done = false;
    const t0 = performance.now();
    const r = p.process(input(1)).then((x) => {
      done = true;
      return x;
    });
    await turn();
    await turn();
    expect(done).toBe(false);
    const built = await r;
    expect(performance.now() - t0).toBeGreaterThanOrEqual(35);
    expect(built.kind).toBe('envelope');
    await p.close();
  });

  it('40 captures at once: built 4 per event-loop turn without waiting for the window', async () => {
    const { p } = processor(10_000);
    const doneAt: number[] = [];
    let turns = 0;
    const all = Array.from({ length: 40 }, (_, i) => p.process(input(i)).then((x) => (doneAt.push(turns), x)));
    // a self-rearming immediate counts event-loop iterations
    let counting = true;
    const tick = () => {
      turns++;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    const t0 = performance.now();
    const results = await Promise.all(all);
    counting = false;
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(results.every((x) => x.kind === 'envelope')).toBe(true);
    // ten turns of 4, none of them waited 10 s for the window
    const perTurn = new Map<number, number>();
    for (const t of doneAt) perTurn.set(t, (perTurn.get(t) ?? 0) + 1);
    expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(4);
    expect(perTurn.size).toBeGreaterThanOrEqual(10);
    await p.close();
  });

  it('flush() builds what waits at once (shutdown), and each envelope keeps its own id', async () => {
    const { p, metrics } = processor(60_000);
    const pending = [p.process(input(1)), p.process(input(2)), p.process(input(3))];
    await p.flush();
    const built = await Promise.all(pending);
    const ids = built.map((b) => (b.kind === 'envelope' ? b.envelopeId : null));
    expect(ids.every((x) => x !== null)).toBe(true);
    expect(new Set(ids).size).toBe(3);
    expect((await metrics.builds.get()).values.find((v) => v.labels.where === 'inline')?.value).toBe(3);
    await p.close();
  });

  it('batchMs 0 builds in the next turn', async () => {
    const { p } = processor(0);
    const r = await p.process(input(1));
    expect(r.kind).toBe('envelope');
    await p.close();
  });
});
