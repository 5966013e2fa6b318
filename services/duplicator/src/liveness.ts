import type { KV } from '@nats-io/kv';
import { FLAG_PAID_DISPATCH, PaidDispatchFlag } from '@shadowplane/contracts';

/**
 * The `paid_dispatch` kill switch as this worker sees it. Off unless the flag's value parses
 * and says `enabled: true`: absent, deleted, unparsable or unreadable all mean off (fail closed).
 * Kept current by a KV watch plus a re-read every `pollMs` (so a lost watch cannot keep it on).
 */
export class PaidDispatchGate {
  private on = false;
  private timer: NodeJS.Timeout | undefined;
  private stopWatch: (() => void) | undefined;
  private closed = false;

  constructor(
    private readonly kv: KV,
    private readonly pollMs: number,
    private readonly onChange: (enabled: boolean) => void = () => undefined,
  ) {}

  /** Reads the flag once, then watches it. */
  async start(): Promise<void> {
    await this.refresh();
    const it = await this.kv.watch({ key: FLAG_PAID_DISPATCH });
    this.stopWatch = () => it.stop();
    void (async () => {
      try {
        for await (const e of it) this.set(e.operation === 'PUT' ? decode(() => e.json()) : false);
      } catch {
        this.set(false);
      }
    })();
    this.timer = setInterval(() => void this.refresh(), this.pollMs);
    this.timer.unref();
  }

  private async refresh(): Promise<void> {
    if (this.closed) return;
    try {
      const e = await this.kv.get(FLAG_PAID_DISPATCH);
      this.set(e && e.operation === 'PUT' ? decode(() => e.json()) : false);
    } catch {
      this.set(false);
    }
  }

  private set(v: boolean): void {
    if (v !== this.on) {
      this.on = v;
      this.onChange(v);
    }
  }

  /** True only while the flag is known to be on. Checked immediately before every provider call. */
  enabled(): boolean {
    return this.on && !this.closed;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.stopWatch?.();
  }
}

function decode(read: () => unknown): boolean {
  try {
    const r = PaidDispatchFlag.safeParse(read());
    return r.success && r.data.enabled;
  } catch {
    return false;
  }
}

/** KV key of a worker's lease in the dispatch bucket. */
export const leaseKey = (workerId: string) => `_workers.${workerId}`;

/**
 * Worker leases: each worker re-writes `_workers.<id>` in the `shadow_dispatch` bucket every
 * ttl/4; a worker whose lease entry is older than `ttlMs` (by the NATS server's timestamp on the
 * entry, compared with this host's clock) or absent is dead. A survivor that finds a dead
 * worker's `invoking` arm on a redelivered item marks it `lost` and charges its upper bound —
 * the provider may have been called, so it is never called again (docs/architecture.md rule 9).
 * A live owner's arms are left alone (the item is redelivered later).
 */
export class WorkerLeases {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly kv: KV,
    readonly workerId: string,
    readonly ttlMs: number,
  ) {}

  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat().catch(() => undefined), Math.max(50, Math.floor(this.ttlMs / 4)));
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    await this.kv.put(
      leaseKey(this.workerId),
      JSON.stringify({ worker_id: this.workerId, pid: process.pid, at: new Date().toISOString() }),
    );
  }

  /** True when `workerId` is this worker or its lease is fresh. Read errors count as alive (retry later, never double-invoke). */
  async alive(workerId: string): Promise<boolean> {
    if (workerId === this.workerId) return true;
    try {
      const e = await this.kv.get(leaseKey(workerId));
      if (!e || e.operation !== 'PUT') return false;
      return Date.now() - e.created.getTime() < this.ttlMs;
    } catch {
      return true;
    }
  }

  /** Stops heart-beating and removes the lease (a graceful exit). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.kv.delete(leaseKey(this.workerId)).catch(() => undefined);
  }
}
