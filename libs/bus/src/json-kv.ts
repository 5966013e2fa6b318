import type { KV, KvEntry } from '@nats-io/kv';
import type { z } from 'zod';

/** A value read from KV with the revision needed for compare-and-set. */
export interface Versioned<T> {
  value: T;
  revision: number;
}

/** Options of {@link JsonKv}. */
export interface JsonKvOptions {
  /**
   * Validate values before writing them (default true). Pass false only where every write is
   * this process's own typed code building values from values it read (and so validated) — the
   * duplicator's dispatch records, written several times per item. Reads are validated always:
   * a value read may come from another process or version.
   */
  validateWrites?: boolean;
}

/**
 * A KV bucket holding JSON values validated by a zod schema on every read and, unless
 * `validateWrites` is false, every write. Reads of deleted/purged keys return null.
 */
export class JsonKv<S extends z.ZodType> {
  /** per key: calls of {@link mutateTogether} waiting for the next group commit */
  private readonly groups = new Map<string, Group<z.infer<S>>>();
  private readonly validateWrites: boolean;

  constructor(
    readonly kv: KV,
    readonly schema: S,
    opts: JsonKvOptions = {},
  ) {
    this.validateWrites = opts.validateWrites ?? true;
  }

  /** The JSON text written for `value` (validated first unless writes are trusted). */
  private encode(value: z.infer<S>): string {
    return JSON.stringify(this.validateWrites ? this.schema.parse(value) : value);
  }

  /**
   * Reads and validates a key.
   * @returns the value and revision, or null when absent or deleted
   * @throws ZodError when the stored value does not match the schema
   */
  async get(key: string): Promise<Versioned<z.infer<S>> | null> {
    const e = await this.kv.get(key);
    return e ? this.decode(e) : null;
  }

  /** Decodes an entry (null for DEL/PURGE markers). */
  decode(e: KvEntry): Versioned<z.infer<S>> | null {
    if (e.operation !== 'PUT' || e.length === 0) return null;
    return { value: this.schema.parse(e.json()) as z.infer<S>, revision: e.revision };
  }

  /** Unconditional write; returns the new revision. */
  async put(key: string, value: z.infer<S>): Promise<number> {
    return this.kv.put(key, this.encode(value));
  }

  /**
   * Creates the key only if absent; returns the revision, or null when it already existed.
   * @throws on connection errors
   */
  async create(key: string, value: z.infer<S>): Promise<number | null> {
    try {
      return await this.kv.create(key, this.encode(value));
    } catch (e) {
      if (isCasConflict(e)) return null;
      throw e;
    }
  }

  /** Writes only if the key is still at `revision`; returns the new revision, or null on conflict. */
  async update(key: string, value: z.infer<S>, revision: number): Promise<number | null> {
    try {
      return await this.kv.update(key, this.encode(value), revision);
    } catch (e) {
      if (isCasConflict(e)) return null;
      throw e;
    }
  }

  /**
   * Read-modify-write with compare-and-set, retried on conflict.
   * `fn` gets the current value (null when absent) and returns the next value, or `undefined` to
   * leave the key unchanged. Returns what was written (or the unchanged current value).
   * @throws Error('cas_retries_exhausted') after `maxAttempts` conflicting attempts (default 200)
   */
  async mutate(
    key: string,
    fn: (current: z.infer<S> | null) => z.infer<S> | undefined,
    maxAttempts = 200,
  ): Promise<{ value: z.infer<S> | null; revision: number | null; changed: boolean }> {
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const cur = await this.get(key);
      const next = fn(cur ? cur.value : null);
      if (next === undefined)
        return { value: cur ? cur.value : null, revision: cur ? cur.revision : null, changed: false };
      const rev = cur ? await this.update(key, next, cur.revision) : await this.create(key, next);
      if (rev !== null) return { value: next, revision: rev, changed: true };
      // conflict: jittered pause so contending writers spread out
      await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 + attempt * 2)));
    }
    throw new Error('cas_retries_exhausted');
  }

  /**
   * {@link mutate} with group commit: calls on one key that arrive while this instance has a
   * write of that key in flight wait for it, then are applied in arrival order to one read of
   * the key and written in one CAS — the result of applying them one by one, with one read and
   * one write for the batch instead of one each (and no CAS conflicts between them). On a
   * conflict with another writer the whole batch is re-read and re-applied, so `fn` may run more
   * than once, as with mutate. Each call resolves to the value after its own `fn` (`changed`
   * false when it returned `undefined`) and the revision the batch wrote or read.
   * @throws Error('cas_retries_exhausted') after `maxAttempts` conflicting attempts (default 200),
   *   or what an `fn` threw: every call of the batch then rejects
   */
  mutateTogether(
    key: string,
    fn: (current: z.infer<S> | null) => z.infer<S> | undefined,
    maxAttempts = 200,
  ): Promise<{ value: z.infer<S> | null; revision: number | null; changed: boolean }> {
    return new Promise((resolve, reject) => {
      let q = this.groups.get(key);
      if (!q) {
        q = { pending: [], running: false };
        this.groups.set(key, q);
      }
      q.pending.push({ fn, resolve, reject });
      if (!q.running) void this.drainGroup(key, q, maxAttempts);
    });
  }

  private async drainGroup(key: string, q: Group<z.infer<S>>, maxAttempts: number): Promise<void> {
    q.running = true;
    // one macrotask turn lets the calls of concurrently running tasks join the batch
    await new Promise((r) => setImmediate(r));
    while (q.pending.length > 0) {
      const batch = q.pending.splice(0, q.pending.length);
      try {
        let outs: { value: z.infer<S> | null; changed: boolean }[] = [];
        let revision: number | null = null;
        const r = await this.mutate(
          key,
          (cur) => {
            // every attempt re-applies the whole batch to what it read
            outs = [];
            let v = cur;
            let changed = false;
            for (const b of batch) {
              const next = b.fn(v);
              if (next !== undefined) {
                v = next;
                changed = true;
              }
              outs.push({ value: v, changed: next !== undefined });
            }
            return changed ? (v as z.infer<S>) : undefined;
          },
          maxAttempts,
        );
        revision = r.revision;
        batch.forEach((b, i) => b.resolve({ ...outs[i]!, revision }));
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    q.running = false;
    if (q.pending.length === 0) this.groups.delete(key);
    else void this.drainGroup(key, q, maxAttempts);
  }
}

/** Calls of {@link JsonKv.mutateTogether} on one key waiting for the next group commit. */
interface Group<T> {
  pending: {
    fn: (current: T | null) => T | undefined;
    resolve: (r: { value: T | null; revision: number | null; changed: boolean }) => void;
    reject: (e: unknown) => void;
  }[];
  running: boolean;
}

/** True for the JetStream errors a lost compare-and-set race produces. */
export function isCasConflict(e: unknown): boolean {
  const msg = String((e as Error)?.message ?? e);
  return /wrong last sequence|key exists|10071|10164/i.test(msg);
}
