import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, RetentionPolicy, StorageType, DiscardPolicy } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { natsNames, type NatsNames } from '@shadowplane/contracts';

const NS_PER_MS = 1_000_000;
const DAY_MS = 86_400_000;

/** Options for {@link connectBus}. */
export interface BusOptions {
  /** NATS URL(s), e.g. `nats://127.0.0.1:4222` (comma-separated for a cluster) */
  url: string;
  /** connection name shown in NATS monitoring, e.g. `shadowplane-sidecar` */
  name: string;
  /** isolation prefix for every stream/bucket/subject name (default '' = standard names) */
  prefix?: string;
  /**
   * ms to wait for the first connection (default 10,000). nats.js resolves `connect()` only once
   * connected, so a role that must serve while NATS is down (the sidecar) retries connectBus in
   * its own cancellable loop; after the first connection the client reconnects by itself.
   */
  connectTimeoutMs?: number;
  /**
   * Capture a stack trace at every request/publish so a later failure points at its caller
   * (nats.js `noAsyncTraces: false`; default true). Each trace is an Error built up front: for
   * the sidecar, which publishes per sampled request on the hot path, that was the largest
   * single cost of a capture, so it turns them off.
   */
  asyncTraces?: boolean;
}

/** A NATS connection with JetStream handles and Shadowplane's names. */
export interface Bus {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly names: NatsNames;
  readonly kvm: Kvm;
  readonly objm: Objm;
  /**
   * Drains and closes the connection. Safe to call twice. The drain waits for the server, so a
   * frozen server would hold it for minutes; after `timeoutMs` (default 5,000) the connection is
   * closed without waiting.
   */
  close(timeoutMs?: number): Promise<void>;
}

/**
 * Connects to NATS (reconnecting forever after the first connection) and returns JetStream
 * handles plus the name set.
 * @throws Error when the first connection fails within `connectTimeoutMs`
 */
export async function connectBus(opts: BusOptions): Promise<Bus> {
  const servers = opts.url.split(',').map((s) => s.trim()).filter(Boolean);
  const nc = await connect({
    servers,
    name: opts.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    timeout: opts.connectTimeoutMs ?? 10_000,
    noAsyncTraces: !(opts.asyncTraces ?? true),
  });
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  let closed = false;
  return {
    nc,
    js,
    jsm,
    names: natsNames(opts.prefix ?? ''),
    kvm: new Kvm(js),
    objm: new Objm(js),
    async close(timeoutMs = 5000) {
      if (closed) return;
      closed = true;
      let timer: NodeJS.Timeout | undefined;
      const drained = await Promise.race([
        nc.drain().then(
          () => true,
          () => false,
        ),
        new Promise<false>((r) => {
          timer = setTimeout(() => r(false), timeoutMs);
        }),
      ]);
      clearTimeout(timer);
      if (!drained) {
        // the connection closes without a goodbye; close() itself must not wait on the server either
        await Promise.race([nc.close().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
      }
    },
  };
}

/** Retention and size settings for provisioning; every field has a documented default. */
export interface ProvisionOptions {
  /** CAPTURE max age in ms (default 7 days) */
  captureMaxAgeMs?: number;
  /** OBS max age in ms (default 90 days) */
  obsMaxAgeMs?: number;
  /** JetStream duplicate window in ms for Nats-Msg-Id de-duplication (default 2 min) */
  duplicateWindowMs?: number;
  /** artifact retention (object store TTL) in ms (default 7 days) */
  artifactTtlMs?: number;
  /** storage for every stream and bucket (default file) */
  storage?: 'file' | 'memory';
  /** replicas for every stream and bucket (default 1; 3 in a JetStream cluster) */
  replicas?: number;
}

/** The names {@link provision} made sure of, for a role's startup log. */
export interface Provisioned {
  streams: string[];
  buckets: string[];
  objectStores: string[];
}

/**
 * Creates every stream, KV bucket and object store Shadowplane uses, tolerating existing ones
 * (idempotent: every role calls it at start). Streams that exist are left as they are.
 * Source: DESIGN.md "State: NATS is the one stateful engine".
 * @returns the names of everything that now exists
 */
export async function provision(bus: Bus, o: ProvisionOptions = {}): Promise<Provisioned> {
  const storage = o.storage === 'memory' ? StorageType.Memory : StorageType.File;
  const replicas = o.replicas ?? 1;
  const n = bus.names;
  await ensureStream(bus.jsm, {
    name: n.streams.capture,
    subjects: [n.captureAll],
    retention: RetentionPolicy.Limits,
    storage,
    num_replicas: replicas,
    max_age: (o.captureMaxAgeMs ?? 7 * DAY_MS) * NS_PER_MS,
    duplicate_window: (o.duplicateWindowMs ?? 120_000) * NS_PER_MS,
    discard: DiscardPolicy.Old,
  });
  await ensureStream(bus.jsm, {
    name: n.streams.obs,
    subjects: [n.obsAll],
    retention: RetentionPolicy.Limits,
    storage,
    num_replicas: replicas,
    max_age: (o.obsMaxAgeMs ?? 90 * DAY_MS) * NS_PER_MS,
    duplicate_window: (o.duplicateWindowMs ?? 120_000) * NS_PER_MS,
    discard: DiscardPolicy.Old,
  });
  const kvStorage = storage;
  for (const [bucket, history] of [
    [n.buckets.campaigns, 5],
    [n.buckets.budget, 1],
    [n.buckets.dispatch, 1],
    [n.buckets.reports, 1],
    [n.buckets.flags, 5],
  ] as const) {
    await bus.kvm.create(bucket, { history, storage: kvStorage, replicas });
  }
  await bus.objm.create(n.buckets.artifacts, { storage: kvStorage, replicas, ttl: (o.artifactTtlMs ?? 7 * DAY_MS) * NS_PER_MS });
  await bus.objm.create(n.captureBodies, { storage: kvStorage, replicas, ttl: (o.captureMaxAgeMs ?? 7 * DAY_MS) * NS_PER_MS });
  return {
    streams: [n.streams.capture, n.streams.obs],
    buckets: [n.buckets.campaigns, n.buckets.budget, n.buckets.dispatch, n.buckets.reports, n.buckets.flags],
    objectStores: [n.buckets.artifacts, n.captureBodies],
  };
}

async function ensureStream(jsm: JetStreamManager, cfg: Parameters<JetStreamManager['streams']['add']>[0] & { name: string }): Promise<void> {
  try {
    await jsm.streams.info(cfg.name);
    return;
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  try {
    await jsm.streams.add(cfg);
  } catch (e) {
    // another role created it between our info and add
    if (!/already in use|exists/i.test(String((e as Error).message))) throw e;
  }
}

function isNotFound(e: unknown): boolean {
  const msg = String((e as Error)?.message ?? e);
  return /not found/i.test(msg);
}

/** Opens a KV bucket by name (provision first). */
export function openKv(bus: Bus, bucket: string): Promise<KV> {
  return bus.kvm.open(bucket);
}

/** Opens an object store by name (provision first). */
export function openObjectStore(bus: Bus, name: string): Promise<ObjectStore> {
  return bus.objm.open(name);
}
