import { Worker } from 'node:worker_threads';
import type { Logger } from '@shadowplane/telemetry';
import type { SidecarMetrics } from './metrics.js';
import { buildEnvelope, toPublishable, type CaptureInput, type ProcessResult } from './capture.js';

/** A batch this large is built without waiting for the window to end. */
const BATCH_MAX = 16;
/**
 * Most small captures built in one event-loop turn: about 0.1–0.2 ms each on this VM's cores
 * (callgrind: ~0.4 M instructions for a 1 KB chat exchange), so a turn holds the proxy's event
 * loop for well under a millisecond; the rest of a batch follows in the next turns, back to back.
 */
const TURN_MAX = 4;

/**
 * Runs {@link buildEnvelope} off the hot path. Small captures (request + response bytes ≤
 * `offloadBytes`) are built on the event loop in batches: the first one waits up to `batchMs`
 * for company (or until {@link BATCH_MAX} wait), then they are built {@link TURN_MAX} per
 * event-loop turn, turn after turn, so proxied traffic is never held up for long. At a few captures a second each build otherwise ran with cold caches and paid a
 * NATS write and an ack wake-up of its own — about 0.6 ms of CPU per capture on a 2 GHz VM core
 * against ~0.15 ms batched (loadtests/sidecar-bench.ts). Larger captures go to one worker
 * thread, so parsing and redacting megabytes never stalls proxied traffic. Teed chunks are
 * concatenated and their memory transferred to the worker (no copy on the way back either). A
 * worker crash excludes its in-flight captures (`worker_error`) and the next capture starts a
 * fresh worker.
 */
export class CaptureProcessor {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, (r: ProcessResult) => void>();
  private batch: { input: CaptureInput; resolve: (r: ProcessResult) => void }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;

  /**
   * @param offloadBytes captures with more teed bytes go to the worker thread
   * @param batchMs most ms a small capture waits for others before the batch is built (0 = next turn)
   */
  constructor(
    private readonly offloadBytes: number,
    private readonly log: Logger,
    private readonly metrics: SidecarMetrics,
    private readonly batchMs = 0,
  ) {}

  /** Builds one envelope; never rejects. */
  process(input: CaptureInput): Promise<ProcessResult> {
    const respBytes = input.response?.chunks.reduce((n, c) => n + c.byteLength, 0) ?? 0;
    if (input.requestBytes + respBytes <= this.offloadBytes) {
      this.metrics.builds.inc({ where: 'inline' });
      return new Promise((resolve) => {
        this.batch.push({ input, resolve });
        this.schedule();
      });
    }
    return this.offload(input);
  }

  /**
   * Shutdown: builds every waiting small capture now, in turns of at most {@link TURN_MAX}, then
   * waits up to `timeoutMs` for the builds in flight on the worker thread (large captures), so
   * that {@link close} does not cut them off.
   */
  async flush(timeoutMs = 0): Promise<void> {
    while (this.batch.length > 0) {
      this.runBatch();
      await new Promise((r) => setImmediate(r));
    }
    const until = performance.now() + timeoutMs;
    while (this.pending.size > 0 && performance.now() < until) await new Promise((r) => setTimeout(r, 10));
  }

  /** Arms the next build: a turn away when a batch is full (or `now`), else the window timer. */
  private schedule(now = false): void {
    if (this.immediate !== null) return;
    if (now || this.batch.length >= BATCH_MAX || this.batchMs === 0) {
      if (this.timer !== null) {
        clearTimeout(this.timer);
        this.timer = null;
      }
      this.immediate = setImmediate(() => {
        this.immediate = null;
        this.runBatch();
      });
      return;
    }
    if (this.timer === null) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.runBatch();
      }, this.batchMs);
    }
  }

  private runBatch(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const jobs = this.batch.length <= TURN_MAX ? this.batch : this.batch.slice(0, TURN_MAX);
    this.batch = this.batch.length <= TURN_MAX ? [] : this.batch.slice(TURN_MAX);
    for (const j of jobs) j.resolve(toPublishable(buildEnvelope(j.input)));
    // the rest (already due) in the next turn, so one batch never holds the event loop for long
    if (this.batch.length > 0) this.schedule(true);
  }

  private offload(input: CaptureInput): Promise<ProcessResult> {
    let w: Worker;
    try {
      w = this.ensureWorker();
    } catch (err) {
      this.log.warn({ err: { message: (err as Error).message } }, 'capture worker unavailable; building on the event loop');
      return new Promise((resolve) => setImmediate(() => resolve(toPublishable(buildEnvelope(input)))));
    }
    this.metrics.builds.inc({ where: 'worker' });
    const id = this.nextId++;
    const req = Buffer.concat(input.requestChunks, input.requestBytes);
    const transfer: ArrayBuffer[] = [];
    if (req.byteOffset === 0 && req.byteLength === req.buffer.byteLength) transfer.push(req.buffer as ArrayBuffer);
    const msg = { id, input: { ...input, requestChunks: [req] } };
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      try {
        w.postMessage(msg, transfer);
      } catch (err) {
        this.pending.delete(id);
        resolve({ kind: 'excluded', reason: 'worker_error', detail: (err as Error).message });
      }
    });
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(new URL('./capture-worker.mjs', import.meta.url), { name: 'shadowplane-capture' });
    w.unref();
    w.on('message', (m: { id: number; result: ProcessResult }) => {
      const r = m.result;
      if (r.kind === 'envelope' && r.body) r.body.bytes = Buffer.from(r.body.bytes.buffer, r.body.bytes.byteOffset, r.body.bytes.byteLength);
      this.pending.get(m.id)?.(r);
      this.pending.delete(m.id);
    });
    const fail = (why: string) => {
      if (this.worker === w) this.worker = null;
      for (const [, resolve] of this.pending) resolve({ kind: 'excluded', reason: 'worker_error', detail: why });
      this.pending.clear();
    };
    w.on('error', (err) => {
      this.log.warn({ err: { message: err.message } }, 'capture worker failed');
      fail(err.message);
    });
    w.on('exit', (code) => fail(`worker exited with ${code}`));
    this.worker = w;
    return w;
  }

  /** Builds what waits, then stops the worker (pending worker captures resolve as `worker_error`). */
  async close(): Promise<void> {
    await this.flush();
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }
}
