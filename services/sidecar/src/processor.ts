import { Worker } from 'node:worker_threads';
import type { Keyring } from '@shadowplane/artifacts';
import type { Logger } from '@shadowplane/telemetry';
import type { SidecarMetrics } from './metrics.js';
import { decodeBounded } from './body-decode.js';
import { buildEnvelope, buildEnvelopeInline } from './capture.js';
import {
  toPublishable,
  type CaptureInput,
  type ProcessResult,
  type WorkerReply,
  type WorkerRequest,
} from './capture-protocol.js';

/** A batch this large is built without waiting for the window to end. */
const BATCH_MAX = 16;
/**
 * Most small captures built in one event-loop turn: about 0.1–0.2 ms each on this VM's cores
 * (callgrind: ~0.4 M instructions for a 1 KB chat exchange), so a turn holds the proxy's event
 * loop for well under a millisecond; the rest of a batch follows in the next turns, back to back.
 */
const TURN_MAX = 4;
/**
 * Most captures handed to the worker thread and not yet built. Bounds what a worker failure can
 * lose (the captures queued behind the build that failed) and the memory they hold; over it a
 * capture is dropped (`worker_queue_full`).
 */
const WORKER_QUEUE_MAX = 32;

/**
 * Runs {@link buildEnvelope} off the hot path. Small captures (request body *decoded* + response
 * bytes ≤ `offloadBytes`: a compressed body is inflated here at most to that size, so a 29 KB
 * gzip bomb goes to the worker, not the loop) are built on the event loop in batches, each within
 * an inline budget ({@link buildEnvelopeInline}: over it, it moves to the worker): the first one waits up to `batchMs`
 * for company (or until {@link BATCH_MAX} wait), then they are built {@link TURN_MAX} per
 * event-loop turn, turn after turn, so proxied traffic is never held up for long. At a few captures a second each build otherwise ran with cold caches and paid a
 * NATS write and an ack wake-up of its own — about 0.6 ms of CPU per capture on a 2 GHz VM core
 * against ~0.15 ms batched (loadtests/sidecar-bench.ts). Larger captures go to one worker
 * thread, so parsing and redacting megabytes never stalls proxied traffic. Teed chunks are
 * concatenated and their memory transferred to the worker (no copy on the way back either). At
 * most {@link WORKER_QUEUE_MAX} wait for the worker. When the worker dies (killed over a budget,
 * out of heap, crashed) the build it ran is dropped for its reason and the ones queued behind it
 * — their bytes were transferred to it — are dropped as `worker_lost`, counted and logged with
 * their number; the next capture starts a fresh worker.
 */
export class CaptureProcessor {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, (r: ProcessResult) => void>();
  private batch: { input: CaptureInput; resolve: (r: ProcessResult) => void }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;

  /** the job the worker is running (it takes them in order): its id and when it started */
  private running: { id: number; since: number } | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  /** why the worker was stopped on purpose (its exit then names the reason of the job it ran) */
  private killedFor: 'cpu_budget' | null = null;

  /**
   * @param offloadBytes captures with more teed bytes (request decoded) go to the worker thread
   * @param batchMs most ms a small capture waits for others before the batch is built (0 = next turn)
   * @param worker the worker's heap limit (MiB), the wall-clock ms after which a build still
   *   running is stopped by terminating the worker (the build's own CPU budget plus a margin:
   *   the backstop for work the budget does not meter, e.g. JSON.parse of a huge body), and the
   *   most captures queued to it (default {@link WORKER_QUEUE_MAX})
   * @param keyring the artifact keyring for served-output retention (handed to the worker once);
   *   captures that retain their served output are always built on the worker
   */
  constructor(
    private readonly offloadBytes: number,
    private readonly log: Logger,
    private readonly metrics: SidecarMetrics,
    private readonly batchMs = 0,
    private readonly worker_: { memoryMb: number; hardTimeoutMs: number; queueMax?: number } = {
      memoryMb: 512,
      hardTimeoutMs: 10_000,
    },
    private readonly keyring: Keyring | null = null,
  ) {}

  /** Builds one envelope; never rejects. */
  process(input: CaptureInput): Promise<ProcessResult> {
    const respBytes = input.response?.chunks.reduce((n, c) => n + c.byteLength, 0) ?? 0;
    // redacting and sealing a served output is worker work, whatever the size
    if (input.retainServed) return this.offload(input);
    if (respBytes <= this.offloadBytes && this.compressedResponse(input) === false) {
      let reqBytes = input.requestBytes;
      if (input.contentEncoding !== null && reqBytes + respBytes <= this.offloadBytes) {
        // the decoded size decides: inflate at most what an inline build may hold
        const raw =
          input.requestChunks.length === 1
            ? input.requestChunks[0]!
            : Buffer.concat(input.requestChunks, input.requestBytes);
        const d = decodeBounded(
          raw,
          input.contentEncoding,
          Math.min(this.offloadBytes - respBytes, input.maxBodyBytes),
          input.maxDecodeRatio,
        );
        if (d.kind === 'ok') {
          input.decodedBody = d.bytes;
          reqBytes = d.bytes.byteLength;
        } else if (d.kind === 'bad') return Promise.resolve({ kind: 'excluded', reason: 'bad_body_encoding' });
        else reqBytes = Infinity; // larger decoded: the worker decodes it within the real limits
      }
      if (reqBytes + respBytes <= this.offloadBytes) {
        this.metrics.builds.inc({ where: 'inline' });
        return new Promise((resolve) => {
          this.batch.push({ input, resolve });
          this.schedule();
        });
      }
    }
    return this.offload(input);
  }

  /** A compressed response is decoded for the served summary: its decoded size is unknown here, so it is built on the worker. */
  private compressedResponse(input: CaptureInput): boolean {
    const enc = input.response?.headers.find(([k]) => k.toLowerCase() === 'content-encoding')?.[1];
    return enc !== undefined && enc.trim().toLowerCase() !== 'identity';
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
    for (const j of jobs) {
      const r = buildEnvelopeInline(j.input);
      if (r.kind === 'offload') {
        // over the inline budget: build it on the worker, with the full budget
        void this.offload(j.input).then(j.resolve);
      } else j.resolve(toPublishable(r));
    }
    // the rest (already due) in the next turn, so one batch never holds the event loop for long
    if (this.batch.length > 0) this.schedule(true);
  }

  private offload(input: CaptureInput): Promise<ProcessResult> {
    let w: Worker;
    try {
      w = this.ensureWorker();
    } catch (err) {
      this.log.warn(
        { err: { message: (err as Error).message } },
        'capture worker unavailable; building on the event loop',
      );
      return new Promise((resolve) => setImmediate(() => resolve(toPublishable(buildEnvelope(input, this.keyring)))));
    }
    if (this.pending.size >= (this.worker_.queueMax ?? WORKER_QUEUE_MAX))
      return Promise.resolve({ kind: 'excluded', reason: 'worker_queue_full' });
    this.metrics.builds.inc({ where: 'worker' });
    const id = this.nextId++;
    const req = Buffer.concat(input.requestChunks, input.requestBytes);
    const transfer: ArrayBuffer[] = [];
    if (req.byteOffset === 0 && req.byteLength === req.buffer.byteLength) transfer.push(req.buffer as ArrayBuffer);
    const msg: WorkerRequest = { id, input: { ...input, requestChunks: [req], decodedBody: null } };
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      try {
        w.postMessage(msg, transfer);
        if (this.running === null) this.startedNext();
      } catch (err) {
        this.pending.delete(id);
        resolve({ kind: 'excluded', reason: 'worker_error', detail: (err as Error).message });
      }
    });
  }

  /**
   * The worker takes jobs in order: the oldest pending one is running (its hard timeout armed
   * when the worker says it began, {@link armWatchdog}). A build past the hard timeout is stopped by terminating the worker: that capture is dropped as
   * `cpu_budget`, the others it held as `worker_error`, and the next capture starts a new worker.
   */
  private startedNext(): void {
    const first = this.pending.keys().next();
    this.running = first.done === true ? null : { id: first.value, since: performance.now() };
    if (this.watchdog !== null) clearTimeout(this.watchdog);
    this.watchdog = null;
  }

  /** The worker began building `id`: the hard timeout runs from now (a worker still starting up is not timed). */
  private armWatchdog(id: number): void {
    if (this.running?.id !== id) return;
    this.running.since = performance.now();
    if (this.watchdog !== null) clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => {
      this.watchdog = null;
      if (this.running?.id !== id || this.worker === null) return;
      this.killedFor = 'cpu_budget';
      void this.worker.terminate();
    }, this.worker_.hardTimeoutMs);
    this.watchdog.unref();
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    // the heap limit is the capture's memory budget: a body that parses into more kills only the worker
    const w = new Worker(new URL('./capture-worker.mjs', import.meta.url), {
      name: 'shadowplane-capture',
      resourceLimits: { maxOldGenerationSizeMb: this.worker_.memoryMb },
      workerData: { keyring: this.keyring },
    });
    w.unref();
    w.on('message', (m: WorkerReply) => {
      if ('started' in m) return this.armWatchdog(m.started);
      const r = m.result;
      if (r.kind === 'envelope' && r.body)
        r.body.bytes = Buffer.from(r.body.bytes.buffer, r.body.bytes.byteOffset, r.body.bytes.byteLength);
      if (r.kind === 'envelope' && r.served?.kind === 'sealed')
        r.served.bytes = Buffer.from(r.served.bytes.buffer, r.served.bytes.byteOffset, r.served.bytes.byteLength);
      this.pending.get(m.id)?.(r);
      this.pending.delete(m.id);
      this.startedNext();
    });
    let oom = false;
    const fail = (why: string) => {
      if (this.worker === w) this.worker = null;
      // the job it was running pays for the failure; the ones queued behind it are lost with it
      const running = this.running?.id;
      const culprit: 'cpu_budget' | 'memory_budget' | 'worker_error' =
        this.killedFor ?? (oom ? 'memory_budget' : 'worker_error');
      const lost = [...this.pending.keys()].filter((id) => id !== running).length;
      if (this.pending.size > 0)
        this.log.warn(
          { reason: culprit, lost, limit: this.worker_.queueMax ?? WORKER_QUEUE_MAX },
          'capture worker stopped: its build dropped, the captures queued to it lost (worker_lost)',
        );
      for (const [id, resolve] of this.pending)
        resolve(
          id === running
            ? { kind: 'excluded', reason: culprit, detail: why }
            : { kind: 'excluded', reason: 'worker_lost', detail: why },
        );
      this.pending.clear();
      this.killedFor = null;
      this.startedNext();
    };
    w.on('error', (err) => {
      oom = (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY';
      this.log.warn({ err: { message: err.message } }, 'capture worker failed');
      fail(err.message);
    });
    w.on('exit', (code) => fail(`worker exited with ${code}`));
    this.worker = w;
    return w;
  }

  /** Builds what waits, then stops the worker (captures still on it resolve as `worker_error` / `worker_lost`). */
  async close(): Promise<void> {
    await this.flush();
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }
}
