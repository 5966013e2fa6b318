import type { ObjectStore } from '@nats-io/obj';
import { openObjectStore, provision, type Bus } from '@shadowplane/bus';
import type { Logger } from '@shadowplane/telemetry';
import { JetStreamAcks } from './js-acks.js';
import type { SidecarMetrics } from './metrics.js';
import { withoutArtifactRef } from './served-retention.js';

/** Why an accepted capture never reached JetStream (metric label values). */
export type DropReason =
  'queue_full' | 'nats_down' | 'publish_timeout' | 'publish_error' | 'object_store_error' | 'shutdown';

/** One envelope waiting to be published. */
export interface PublishJob {
  subject: string;
  /** envelope JSON */
  data: Uint8Array;
  /** Nats-Msg-Id (= envelope_id) */
  msgId: string;
  /** body for the object store, when too large to go inline */
  body: { store: string; name: string; bytes: Buffer } | null;
  /**
   * the sealed served output for the artifact store (the envelope names it in
   * `served.artifact_ref`); when its put fails the envelope is published with `artifact_ref` null
   */
  served?: { store: string; name: string; bytes: Buffer } | null;
  /** bytes this job holds against the capture byte budget (released when it is done) */
  heldBytes: number;
  /** a skip marker (skip-marker.ts), counted apart from captures */
  marker?: true;
}

/** Options for {@link CapturePublisher}. */
export interface PublisherOptions {
  /** most jobs queued (not counting those in flight) */
  queueMax: number;
  /** most bytes held by captures in flight: teed bodies plus queued envelopes */
  maxBytes: number;
  /** publish and object-store put timeout, ms */
  timeoutMs: number;
  /** publishes in flight at once */
  concurrency: number;
  /** provision streams and stores when the connection comes up */
  provision: boolean;
}

/**
 * The bounded, non-blocking path from a finished capture to JetStream. Nothing here is awaited by
 * the request path: `enqueue` returns at once and a full queue drops the capture (counted by
 * reason). While NATS is down, jobs wait in the queue (bounded) and drain when it reconnects;
 * what does not fit is dropped as `nats_down`. Each publish uses `Nats-Msg-Id` = envelope_id so a
 * retried publish is de-duplicated by the stream, and times out after `timeoutMs`. Bodies too
 * large for a message are put in the object store first; the envelope is published only when the
 * body is stored.
 *
 * Memory: teed request/response bytes and queued envelopes count against one byte budget
 * (`tryHold`/`release`), so a burst of large bodies cannot grow the heap without bound.
 */
export class CapturePublisher {
  private bus: Bus | null = null;
  private acks: JetStreamAcks | null = null;
  private connected = false;
  private provisioned = false;
  private readonly queue: PublishJob[] = [];
  private qHead = 0;
  private inflight = 0;
  private heldBytes = 0;
  private closing = false;
  private readonly stores = new Map<string, Promise<ObjectStore>>();
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly o: PublisherOptions,
    private readonly metrics: SidecarMetrics,
    private readonly log: Logger,
  ) {}

  /** True while the NATS connection is up. */
  get isConnected(): boolean {
    return this.connected;
  }

  /** Jobs waiting (not in flight). */
  get depth(): number {
    return this.queue.length - this.qHead;
  }

  /**
   * Hands the publisher a connected bus (called once, when the background connect succeeds);
   * follows its status from then on and provisions the shared streams, buckets and stores.
   */
  attach(bus: Bus): void {
    this.bus = bus;
    this.acks = new JetStreamAcks(bus.nc, this.o.timeoutMs);
    this.setConnected(true);
    void this.followStatus(bus);
    if (this.o.provision) void this.provisionLoop(bus);
    else {
      this.provisioned = true;
      this.pump();
    }
  }

  private async provisionLoop(bus: Bus): Promise<void> {
    for (let attempt = 0; !this.closing; attempt++) {
      try {
        const ensured = await provision(bus);
        this.log.info(ensured, 'provisioned (created what was missing)');
        break;
      } catch (err) {
        this.log.warn({ err, attempt }, 'provision failed; retrying');
        await new Promise((r) => setTimeout(r, Math.min(30_000, 500 * 2 ** Math.min(attempt, 6))).unref());
      }
    }
    this.provisioned = true;
    this.pump();
  }

  private async followStatus(bus: Bus): Promise<void> {
    try {
      for await (const s of bus.nc.status()) {
        if (s.type === 'disconnect') this.setConnected(false);
        else if (s.type === 'reconnect') {
          this.setConnected(true);
          // the server may have come back with an empty store (a restarted pod without its
          // volume): provisioning is idempotent, so it runs again rather than every publish
          // failing with 503 until the sidecar restarts
          if (this.o.provision) {
            provision(bus).then(
              (ensured) => this.log.info(ensured, 're-provisioned after reconnect (created what was missing)'),
              (err: unknown) => this.log.warn({ err: errSummary(err) }, 're-provision after reconnect failed'),
            );
          }
          this.pump();
        } else if (s.type === 'close') break;
      }
    } catch {
      /* connection closed */
    }
    this.setConnected(false);
  }

  private setConnected(v: boolean): void {
    if (this.connected !== v) this.log.info({ connected: v }, v ? 'nats connected' : 'nats disconnected');
    this.connected = v;
    this.metrics.natsConnected.set(v ? 1 : 0);
  }

  /**
   * Reserves `bytes` of the capture byte budget for a tee. Returns false (reserve nothing) when
   * the budget would be exceeded; the caller then gives up the capture (`queue_full`).
   */
  tryHold(bytes: number): boolean {
    if (this.heldBytes + bytes > this.o.maxBytes) return false;
    this.heldBytes += bytes;
    this.metrics.queueBytes.set(this.heldBytes);
    return true;
  }

  /** Returns bytes reserved with {@link tryHold}. */
  release(bytes: number): void {
    this.heldBytes = Math.max(0, this.heldBytes - bytes);
    this.metrics.queueBytes.set(this.heldBytes);
  }

  /** Queues a job, or drops it (counted) when the queue is full or closing. Never throws, never waits. */
  enqueue(job: PublishJob): void {
    if (this.closing) return this.drop(job, 'shutdown');
    if (this.depth >= this.o.queueMax) return this.drop(job, this.connected ? 'queue_full' : 'nats_down');
    this.queue.push(job);
    this.metrics.queueDepth.set(this.depth);
    this.pump();
  }

  /**
   * Queues a skip marker (skip-marker.ts) under the same byte budget and queue bound as envelopes;
   * never blocks, a marker that does not fit is dropped and counted.
   */
  enqueueMarker(m: { subject: string; data: Uint8Array; msgId: string }): void {
    if (!this.tryHold(m.data.byteLength)) {
      this.metrics.skipMarkers.inc({ outcome: 'dropped' });
      return;
    }
    this.enqueue({ ...m, body: null, heldBytes: m.data.byteLength, marker: true });
  }

  private drop(job: PublishJob, reason: DropReason): void {
    if (job.marker) this.metrics.skipMarkers.inc({ outcome: 'dropped' });
    else this.metrics.capture('dropped', reason);
    this.release(job.heldBytes);
  }

  private pump(): void {
    while (
      this.connected &&
      this.provisioned &&
      this.bus !== null &&
      this.inflight < this.o.concurrency &&
      this.depth > 0
    ) {
      const job = this.queue[this.qHead]!;
      this.queue[this.qHead] = undefined as unknown as PublishJob;
      this.qHead++;
      if (this.qHead > 1024 && this.qHead * 2 > this.queue.length) {
        this.queue.splice(0, this.qHead);
        this.qHead = 0;
      }
      this.metrics.queueDepth.set(this.depth);
      this.inflight++;
      void this.publish(this.bus, job).finally(() => {
        this.inflight--;
        this.release(job.heldBytes);
        this.pump();
        if (this.inflight === 0 && this.depth === 0) this.wakeIdle();
      });
    }
    if (this.inflight === 0 && this.depth === 0) this.wakeIdle();
  }

  private async publish(bus: Bus, job: PublishJob): Promise<void> {
    if (job.body !== null) {
      try {
        const store = await withTimeout(this.store(bus, job.body.store), this.o.timeoutMs);
        await withTimeout(store.putBlob({ name: job.body.name }, job.body.bytes), this.o.timeoutMs);
      } catch (err) {
        this.stores.delete(job.body.store);
        this.log.warn({ err: errSummary(err) }, 'capture body put failed');
        this.metrics.capture('dropped', 'object_store_error');
        return;
      }
    }
    if (job.served) {
      try {
        const store = await withTimeout(this.store(bus, job.served.store), this.o.timeoutMs);
        await withTimeout(store.putBlob({ name: job.served.name }, job.served.bytes), this.o.timeoutMs);
        this.metrics.servedRetention.inc({ outcome: 'retained', reason: '' });
      } catch (err) {
        this.stores.delete(job.served.store);
        this.log.warn({ err: errSummary(err) }, 'served output put failed; published with artifact_ref null');
        this.metrics.servedRetention.inc({ outcome: 'failed', reason: 'object_store_error' });
        job.data = withoutArtifactRef(job.data, job.served.name);
      }
    }
    const r = await this.acks!.publish(job.subject, job.data, job.msgId);
    if (job.marker) {
      this.metrics.skipMarkers.inc({ outcome: r.ok ? 'published' : 'dropped' });
      return;
    }
    if (r.ok) {
      this.metrics.capture('published');
      this.metrics.lastPublish.set(Date.now() / 1000);
    } else {
      this.metrics.capture('dropped', r.timeout ? 'publish_timeout' : 'publish_error');
      this.log.warn({ err: { message: r.error } }, 'capture publish failed');
    }
  }

  private store(bus: Bus, name: string): Promise<ObjectStore> {
    let p = this.stores.get(name);
    if (!p) {
      p = openObjectStore(bus, name);
      p.catch(() => this.stores.delete(name));
      this.stores.set(name, p);
    }
    return p;
  }

  private wakeIdle(): void {
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const f of w) f();
  }

  /**
   * Stops accepting jobs and, while NATS is connected, waits up to `timeoutMs` for the queue to
   * drain; what is left is dropped as `shutdown`, and publishes still awaiting an ack count as
   * `publish_error`. Does not close the bus.
   */
  async flush(timeoutMs: number): Promise<void> {
    this.closing = true;
    // waiting only helps while connected; a down NATS will not take the queue in time
    if (this.connected && (this.inflight > 0 || this.depth > 0)) {
      await Promise.race([
        new Promise<void>((r) => this.idleWaiters.push(r)),
        new Promise<void>((r) => setTimeout(r, timeoutMs).unref()),
      ]);
    }
    while (this.depth > 0) {
      const job = this.queue[this.qHead]!;
      this.qHead++;
      this.drop(job, 'shutdown');
    }
    this.queue.length = 0;
    this.qHead = 0;
    this.metrics.queueDepth.set(0);
    this.acks?.close();
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(Object.assign(new Error(`timed out after ${ms} ms`), { code: 'TIMEOUT' })), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

function errSummary(err: unknown): { message: string; name?: string } {
  return err instanceof Error ? { name: err.name, message: err.message } : { message: String(err) };
}
