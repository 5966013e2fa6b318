import { createInbox, headers, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';

/** Outcome of one JetStream publish. */
export type AckResult = { ok: true } | { ok: false; timeout: boolean; error: string };

/**
 * JetStream publishes whose acknowledgements come back on one shared reply subscription.
 *
 * A JetStream publish is a core NATS publish with a reply subject; the stream answers there with
 * a PubAck (`{"stream":…,"seq":…}`, or `{"error":{…}}`), and the server answers a 503 status when no
 * stream takes the subject (JetStream's publish protocol). `JetStreamClient.publish` makes each
 * publish a request of its own: a request object, a timer, a promise chain and, when the ack
 * arrives, an Error built only to be discarded (its stack capture walks optimised frames). Per
 * capture that was about as much CPU as building the envelope (profiled at 100% sampling). Here
 * every publish shares one reply wildcard subscription and one expiry timer; the message and its
 * `Nats-Msg-Id` header are the same as the client library sends.
 */
export class JetStreamAcks {
  private readonly prefix: string;
  private readonly sub: Subscription;
  /** token → waiter; insertion order is deadline order (one timeout for all) */
  private readonly pending = new Map<string, { resolve: (r: AckResult) => void; deadline: number }>();
  private seq = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  /**
   * @param nc a connected NATS connection (headers support is on by default)
   * @param timeoutMs how long to wait for each ack, ms
   */
  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs: number,
  ) {
    const inbox = createInbox();
    this.prefix = `${inbox}.`;
    this.sub = nc.subscribe(`${inbox}.*`, { callback: (err, msg) => this.onAck(err, msg) });
  }

  /** Acks awaited. */
  get inflight(): number {
    return this.pending.size;
  }

  /**
   * Publishes `data` to `subject` with header `Nats-Msg-Id: msgId` and resolves with the stream's
   * answer, a timeout after `timeoutMs`, or the error the connection threw. Never rejects.
   */
  publish(subject: string, data: Uint8Array, msgId: string): Promise<AckResult> {
    if (this.closed) return Promise.resolve({ ok: false, timeout: false, error: 'publisher closed' });
    const token = (this.seq++).toString(36);
    const h = headers();
    h.set('Nats-Msg-Id', msgId);
    return new Promise<AckResult>((resolve) => {
      this.pending.set(token, { resolve, deadline: Date.now() + this.timeoutMs });
      try {
        this.nc.publish(subject, data, { reply: this.prefix + token, headers: h });
      } catch (err) {
        this.pending.delete(token);
        resolve({ ok: false, timeout: false, error: err instanceof Error ? err.message : String(err) });
        return;
      }
      if (this.timer === null)
        this.timer = setInterval(() => this.expire(), Math.max(10, Math.min(250, this.timeoutMs / 4))).unref();
    });
  }

  private onAck(err: Error | null, msg: Msg): void {
    if (err !== null || msg === undefined) return; // the subscription ended: close() answers the waiters
    const token = msg.subject.slice(this.prefix.length);
    const p = this.pending.get(token);
    if (p === undefined) return; // an ack after its timeout
    this.pending.delete(token);
    p.resolve(readAck(msg));
  }

  private expire(): void {
    const now = Date.now();
    for (const [token, p] of this.pending) {
      if (p.deadline > now) break;
      this.pending.delete(token);
      p.resolve({ ok: false, timeout: true, error: `no ack within ${this.timeoutMs} ms` });
    }
    if (this.pending.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  /**
   * Stops listening. Waiters still pending resolve as timeouts: their messages were sent, and the
   * stream may yet store them — an unknown, not a refusal.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    try {
      this.sub.unsubscribe();
    } catch {
      // the connection is already closed
    }
    for (const [, p] of this.pending)
      p.resolve({ ok: false, timeout: true, error: 'no ack before the publisher closed' });
    this.pending.clear();
  }
}

/** Reads a PubAck message (or the server's 503 when no stream takes the subject). */
export function readAck(msg: Pick<Msg, 'headers' | 'data' | 'json'>): AckResult {
  const h = msg.headers;
  if (h !== undefined && h.hasError) {
    return {
      ok: false,
      timeout: false,
      error: h.code === 503 ? 'no stream takes this subject (503 no responders)' : `status ${h.status}`,
    };
  }
  let a: { stream?: unknown; error?: { description?: unknown; err_code?: unknown; code?: unknown } };
  try {
    a = msg.json();
  } catch {
    return { ok: false, timeout: false, error: 'an ack that is not JSON' };
  }
  if (a !== null && typeof a === 'object' && a.error !== undefined) {
    const e = a.error;
    return {
      ok: false,
      timeout: false,
      error: `${String(e?.description ?? 'JetStream error')} (err_code ${String(e?.err_code ?? e?.code ?? '?')})`,
    };
  }
  if (a === null || typeof a !== 'object' || typeof a.stream !== 'string' || a.stream === '')
    return { ok: false, timeout: false, error: 'an ack without a stream' };
  return { ok: true };
}
