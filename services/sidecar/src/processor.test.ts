// CaptureProcessor batching: small captures wait for company up to batchMs (or until 16 wait), at
// most 4 are built per event-loop turn, and flush() builds whatever waits (shutdown).
import type { Worker } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createLogger, createMetricsRegistry } from '@shadowplane/telemetry';
import { SidecarMetrics } from './metrics.js';
import { CaptureProcessor } from './processor.js';
import type { CaptureInput } from './capture-protocol.js';

function input(i: number): CaptureInput {
  const body = Buffer.from(
    JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `question ${i}` }] }),
  );
  return {
    decision: {
      kind: 'sampled',
      api: 'openai.chat',
      suite: 's',
      callType: 'c',
      trafficClass: 'production',
      expectations: [],
      retentionConsent: false,
      stickyKeyHash: null,
      models: null,
      rule: null,
    },
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
    maxDecodeRatio: 100,
    cpuBudgetMs: 10_000,
    secretFieldNames: [],
    bodyStore: 'b',
  };
}

function processor(batchMs: number): { p: CaptureProcessor; metrics: SidecarMetrics } {
  const metrics = new SidecarMetrics(createMetricsRegistry({ defaultMetrics: false }));
  return {
    p: new CaptureProcessor(
      64 * 1024,
      createLogger({ service: 'test', version: '0', level: 'silent' }),
      metrics,
      batchMs,
    ),
    metrics,
  };
}

const turn = () => new Promise<void>((r) => setImmediate(r));

describe('CaptureProcessor batching', () => {
  it('a lone capture waits for the batch window, then is built', async () => {
    // a window far longer than two event-loop turns take on a loaded machine (40 ms was not)
    const { p } = processor(400);
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
    expect(performance.now() - t0).toBeGreaterThanOrEqual(395);
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

describe('CaptureProcessor budgets', () => {
  const gz = (s: string) => gzipSync(Buffer.from(s));
  const withBody = (body: Buffer, over: Partial<CaptureInput> = {}): CaptureInput => ({
    ...input(0),
    requestChunks: [body],
    requestBytes: body.length,
    ...over,
  });
  const where = async (m: SidecarMetrics, w: string) =>
    (await m.builds.get()).values.find((v) => v.labels.where === w)?.value ?? 0;

  it('the decoded size decides inline or worker: a gzip body of a few KB that inflates to 10 MB is never inflated on the event loop, and is too_large', async () => {
    const { p, metrics } = processor(0);
    const bomb = gz(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'a'.repeat(10 << 20) }] }));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const r = await p.process(withBody(bomb, { contentEncoding: 'gzip', maxBodyBytes: 32 << 20 }));
    expect(r).toMatchObject({ kind: 'excluded', reason: 'too_large' }); // over the 100:1 ratio
    expect(await where(metrics, 'inline')).toBe(0);
    expect(await where(metrics, 'worker')).toBe(1);
    await p.close();
  });

  it('a small gzip body is decoded once and built inline', async () => {
    const { p, metrics } = processor(0);
    const r = await p.process(
      withBody(gz(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })), {
        contentEncoding: 'gzip',
      }),
    );
    expect(r.kind).toBe('envelope');
    expect(await where(metrics, 'inline')).toBe(1);
    expect(await where(metrics, 'worker')).toBe(0);
    await p.close();
  });

  it('an inline build that meets a long string hands the capture to the worker, which builds it', async () => {
    const { p, metrics } = processor(0);
    const body = Buffer.from(
      JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'password: x '.repeat(1000) }] }),
    );
    expect(body.length).toBeLessThan(64 * 1024);
    const r = await p.process(withBody(body));
    expect(r.kind).toBe('envelope');
    expect(await where(metrics, 'inline')).toBe(1);
    expect(await where(metrics, 'worker')).toBe(1);
    await p.close();
  });

  it('over the CPU budget on the worker, the capture is dropped as cpu_budget', async () => {
    const { p } = processor(0);
    const body = Buffer.from(
      JSON.stringify({
        model: 'm',
        messages: Array.from({ length: 400 }, () => ({ role: 'user', content: `mail a@b.io ${'1 '.repeat(2000)}` })),
      }),
    );
    const r = await p.process(withBody(body, { cpuBudgetMs: 1, maxBodyBytes: 8 << 20 }));
    expect(r).toMatchObject({ kind: 'excluded', reason: 'cpu_budget' });
    await p.close();
  });

  it('a build past the hard timeout is stopped by terminating the worker (cpu_budget), and the next capture gets a new worker', async () => {
    const metrics = new SidecarMetrics(createMetricsRegistry({ defaultMetrics: false }));
    const p = new CaptureProcessor(1024, createLogger({ service: 'test', version: '0', level: 'silent' }), metrics, 0, {
      memoryMb: 512,
      hardTimeoutMs: 1,
    });
    const big = Buffer.from(
      JSON.stringify({
        model: 'm',
        messages: Array.from({ length: 2000 }, (_, i) => ({ role: 'user', content: `q ${i} ${'x'.repeat(2000)}` })),
      }),
    );
    // within the size limit, so the build runs long enough for the backstop (armed when it begins)
    const r = await p.process(withBody(big, { maxBodyBytes: 8 << 20 }));
    expect(r).toMatchObject({ kind: 'excluded', reason: 'cpu_budget' });
    await p.close();
  });

  it('a body that exhausts the worker heap is dropped as memory_budget', async () => {
    const metrics = new SidecarMetrics(createMetricsRegistry({ defaultMetrics: false }));
    const p = new CaptureProcessor(1024, createLogger({ service: 'test', version: '0', level: 'silent' }), metrics, 0, {
      memoryMb: 32,
      hardTimeoutMs: 60_000,
    });
    // ~6 MB of tiny objects: far more heap than 32 MiB once parsed
    const big = Buffer.from(`{"model":"m","messages":[${Array.from({ length: 800_000 }, () => '{"a":1}').join(',')}]}`);
    const r = await p.process(withBody(big, { maxBodyBytes: 64 << 20 }));
    expect(r).toMatchObject({ kind: 'excluded', reason: 'memory_budget' });
    await p.close();
  });

  it('terminating the worker loses only what was queued to it, each as worker_lost (bounded by the queue cap), and the next capture gets a new worker', async () => {
    const metrics = new SidecarMetrics(createMetricsRegistry({ defaultMetrics: false }));
    const p = new CaptureProcessor(1024, createLogger({ service: 'test', version: '0', level: 'silent' }), metrics, 0, {
      memoryMb: 512,
      hardTimeoutMs: 60_000,
      queueMax: 4,
    });
    const body = (i: number) =>
      withBody(
        Buffer.from(
          JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `q ${i} ${'x'.repeat(4000)}` }] }),
        ),
      );
    const queued = Array.from({ length: 4 }, (_, i) => p.process(body(i)));
    // the fifth finds the worker's queue full: dropped at once, not held
    expect(await p.process(body(4))).toMatchObject({ kind: 'excluded', reason: 'worker_queue_full' });
    await (p as unknown as { worker: Worker }).worker.terminate();
    const rs = await Promise.all(queued);
    expect(rs[0]).toMatchObject({ kind: 'excluded', reason: 'worker_error' }); // the build it was running
    for (const r of rs.slice(1)) expect(r).toMatchObject({ kind: 'excluded', reason: 'worker_lost' });
    expect((await p.process(body(5))).kind).toBe('envelope');
    await p.close();
  });
});
