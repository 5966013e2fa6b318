import { Worker } from 'node:worker_threads';
import type { Logger } from '@shadowplane/telemetry';
import type { SidecarMetrics } from './metrics.js';
import { buildEnvelope, toPublishable, type CaptureInput, type ProcessResult } from './capture.js';

/**
 * Runs {@link buildEnvelope} off the hot path. Small captures (request + response bytes ≤
 * `offloadBytes`) are built on the event loop in a later turn (setImmediate) — a 1 KB chat
 * request costs ~0.1–0.2 ms; larger ones go to one worker thread, so parsing and redacting
 * megabytes never stalls proxied traffic. Teed chunks are concatenated and their memory
 * transferred to the worker (no copy on the way back either). A worker crash excludes its
 * in-flight captures (`worker_error`) and the next capture starts a fresh worker.
 */
export class CaptureProcessor {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, (r: ProcessResult) => void>();

  constructor(
    private readonly offloadBytes: number,
    private readonly log: Logger,
    private readonly metrics: SidecarMetrics,
  ) {}

  /** Builds one envelope; never rejects. */
  process(input: CaptureInput): Promise<ProcessResult> {
    const respBytes = input.response?.chunks.reduce((n, c) => n + c.byteLength, 0) ?? 0;
    if (input.requestBytes + respBytes <= this.offloadBytes) {
      this.metrics.builds.inc({ where: 'inline' });
      return new Promise((resolve) => setImmediate(() => resolve(toPublishable(buildEnvelope(input)))));
    }
    return this.offload(input);
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

  /** Stops the worker (pending captures resolve as `worker_error`). */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }
}
