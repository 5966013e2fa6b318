import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
  DiscardPolicy,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { Objm, setSha256Backend, type ObjectStore } from '@nats-io/obj';
import { natsNames, ShadowplaneError, type NatsNames } from '@shadowplane/contracts';

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
  /**
   * Replicas for every stream, KV bucket and object store {@link provision} creates or checks
   * (1–5; 3 on a 3-node JetStream cluster). Default: `SHADOWPLANE_NATS_REPLICAS` from the
   * environment, else 1 — so a role that does not pass it still honours the setting.
   */
  replicas?: number;
}

/**
 * Parses `SHADOWPLANE_NATS_REPLICAS` (an integer 1–5, JetStream's range; default 1).
 * @throws ShadowplaneError `config_invalid` naming the variable for anything else
 */
export function natsReplicasFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SHADOWPLANE_NATS_REPLICAS;
  if (raw === undefined || raw === '') return 1;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 5) {
    throw new ShadowplaneError(
      'config_invalid',
      `invalid configuration: SHADOWPLANE_NATS_REPLICAS: must be an integer 1-5, got ${JSON.stringify(raw)}`,
      {
        details: { issues: [{ key: 'SHADOWPLANE_NATS_REPLICAS', message: 'must be an integer 1-5' }] },
      },
    );
  }
  return n;
}

/** A NATS connection with JetStream handles and Shadowplane's names. */
export interface Bus {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly names: NatsNames;
  readonly kvm: Kvm;
  readonly objm: Objm;
  /** The version the server reported when this connection was made (`INFO.version`, e.g. `2.15.3`) */
  readonly serverVersion: string;
  /** Replicas {@link provision} uses for every stream, bucket and object store */
  readonly replicas: number;
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
  const replicas = opts.replicas ?? natsReplicasFromEnv();
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > 5)
    throw new RangeError(`replicas must be an integer 1-5, got ${replicas}`);
  const servers = opts.url
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const nc = await connect({
    servers,
    name: opts.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    timeout: opts.connectTimeoutMs ?? 10_000,
    noAsyncTraces: !(opts.asyncTraces ?? true),
  });
  // object-store digests through node:crypto, not nats.js's default pure-JS SHA-256 (browser-safe,
  // and ~2 % of a duplicator worker's CPU, which stores an artifact per provider call)
  setSha256Backend('native');
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
    serverVersion: nc.info?.version ?? '',
    replicas,
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
  /** replicas for every stream, bucket and object store (default `bus.replicas`) */
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
 * (idempotent: every role calls it at start). One that exists is left as it is, but its replica
 * count must equal the one asked for: a mismatch is refused, not silently kept, so a cluster
 * configured for R3 never runs its ledger on an R1 bucket.
 * Source: docs/architecture.md "State".
 * @returns the names of everything that now exists
 * @throws ShadowplaneError `nats_replicas_mismatch` naming the stream/bucket and both counts
 */
export async function provision(bus: Bus, o: ProvisionOptions = {}): Promise<Provisioned> {
  const storage = o.storage === 'memory' ? StorageType.Memory : StorageType.File;
  const replicas = o.replicas ?? bus.replicas;
  const n = bus.names;
  await ensureStream(bus.jsm, replicas, {
    name: n.streams.capture,
    subjects: [n.captureAll],
    retention: RetentionPolicy.Limits,
    storage,
    num_replicas: replicas,
    max_age: (o.captureMaxAgeMs ?? 7 * DAY_MS) * NS_PER_MS,
    duplicate_window: (o.duplicateWindowMs ?? 120_000) * NS_PER_MS,
    discard: DiscardPolicy.Old,
  });
  await ensureStream(bus.jsm, replicas, {
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
    [n.buckets.suites, 5],
  ] as const) {
    if (!(await existsWithReplicas(bus.jsm, `KV_${bucket}`, `KV bucket ${bucket}`, replicas)))
      await bus.kvm.create(bucket, { history, storage: kvStorage, replicas });
  }
  for (const [store, ttlMs] of [
    [n.buckets.artifacts, o.artifactTtlMs ?? 7 * DAY_MS],
    [n.captureBodies, o.captureMaxAgeMs ?? 7 * DAY_MS],
  ] as const) {
    if (!(await existsWithReplicas(bus.jsm, `OBJ_${store}`, `object store ${store}`, replicas)))
      await bus.objm.create(store, { storage: kvStorage, replicas, ttl: ttlMs * NS_PER_MS });
  }
  // frozen datasets are references, kept until deleted (no TTL): a run reports what has expired
  if (!(await existsWithReplicas(bus.jsm, `OBJ_${n.datasets}`, `object store ${n.datasets}`, replicas)))
    await bus.objm.create(n.datasets, { storage: kvStorage, replicas });
  return {
    streams: [n.streams.capture, n.streams.obs],
    buckets: [
      n.buckets.campaigns,
      n.buckets.budget,
      n.buckets.dispatch,
      n.buckets.reports,
      n.buckets.flags,
      n.buckets.suites,
    ],
    objectStores: [n.buckets.artifacts, n.captureBodies, n.datasets],
  };
}

/**
 * True when the JetStream stream behind a stream/bucket/store exists with `want` replicas, false
 * when it does not exist.
 * @throws ShadowplaneError `nats_replicas_mismatch` when it exists with another replica count
 */
async function existsWithReplicas(jsm: JetStreamManager, stream: string, what: string, want: number): Promise<boolean> {
  let have: number;
  try {
    have = (await jsm.streams.info(stream)).config.num_replicas || 1;
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
  if (have === want) return true;
  throw new ShadowplaneError(
    'nats_replicas_mismatch',
    `${what} exists with ${have} replica(s) but SHADOWPLANE_NATS_REPLICAS is ${want}: set SHADOWPLANE_NATS_REPLICAS=${have}, or change the stream ` +
      `(\`nats stream edit ${stream} --replicas ${want}\`) and start again`,
    { details: { stream, have, want } },
  );
}

async function ensureStream(
  jsm: JetStreamManager,
  replicas: number,
  cfg: Parameters<JetStreamManager['streams']['add']>[0] & { name: string },
): Promise<void> {
  if (await existsWithReplicas(jsm, cfg.name, `stream ${cfg.name}`, replicas)) return;
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
