import { rmSync } from 'node:fs';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager, StorageType } from '@nats-io/jetstream';
import { freePort } from './ports.js';
import { startNatsServer, type NatsServerHandle } from '@shadowplane/stack';

/** A JetStream cluster of nats-servers on loopback, started for a test. */
export interface NatsClusterHandle {
  /** the members; a restarted member's handle replaces the old one at the same index */
  readonly nodes: readonly NatsServerHandle[];
  /** every member's client URL, comma-separated (what `SHADOWPLANE_NATS_URL` takes) */
  readonly url: string;
  /** index of the member named `serverName` (as JetStream names a stream's leader), or -1 */
  indexOf(serverName: string): number;
  /** SIGKILL member `i`, keeping its store (a crash) */
  kill(i: number): Promise<void>;
  /** starts member `i` again on its client port, route port, name and store */
  restart(i: number): Promise<void>;
  /** stops every member and removes their stores */
  stop(): Promise<void>;
}

/**
 * Starts `size` nats-servers (default 3) with JetStream, routed to each other on 127.0.0.1, and
 * waits until the cluster can place a stream with `size` replicas (a meta leader is elected and
 * every peer is current).
 *
 * Route ports are chosen up front (every member's routes must name them at start); should one be
 * taken between choosing and binding, that member exits and the whole start is retried with new
 * ports (3 attempts).
 * @throws Error when the cluster does not start or become ready within 60 s
 */
export async function startNatsCluster(opts: { size?: number } = {}): Promise<NatsClusterHandle> {
  const size = opts.size ?? 3;
  let lastErr: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const routePorts = await Promise.all(Array.from({ length: size }, () => freePort()));
    const routes = routePorts.map((p) => `nats://127.0.0.1:${p}`);
    const clusterName = `sp-test-${process.pid}-${attempt}`;
    const member = (i: number) => ({ serverName: `n${i + 1}`, clusterName, routePort: routePorts[i]!, routes });
    const started = await Promise.allSettled(routePorts.map((_, i) => startNatsServer({ cluster: member(i) })));
    const nodes = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    if (nodes.length < size) {
      lastErr = started.find((r) => r.status === 'rejected')?.reason;
      await Promise.all(nodes.map((n) => n.stop()));
      continue;
    }
    const ports = nodes.map((n) => n.port);
    const stores = nodes.map((n) => n.storeDir);
    const handle: NatsClusterHandle = {
      nodes,
      url: ports.map((p) => `nats://127.0.0.1:${p}`).join(','),
      indexOf: (name) => nodes.findIndex((n) => n.serverName === name),
      kill: (i) => nodes[i]!.kill(),
      async restart(i) {
        await nodes[i]!.kill();
        nodes[i] = await startNatsServer({ port: ports[i]!, storeDir: stores[i]!, cluster: member(i) });
      },
      async stop() {
        await Promise.all(nodes.map((n) => n.stop({ keepStore: true })));
        for (const d of stores) rmSync(d, { recursive: true, force: true });
      },
    };
    try {
      await waitForReplicatedStreams(handle.url, size);
    } catch (e) {
      await handle.stop();
      throw e;
    }
    return handle;
  }
  throw new Error(`nats cluster did not start: ${String((lastErr as Error)?.message ?? lastErr)}`);
}

/** Polls until a memory stream with `replicas` replicas can be created (then deletes it). */
async function waitForReplicatedStreams(url: string, replicas: number): Promise<void> {
  const nc = await connect({ servers: url.split(','), maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  try {
    const jsm = await jetstreamManager(nc, { checkAPI: false });
    const name = `sp_cluster_probe_${process.pid}`;
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await jsm.streams.add({
          name,
          subjects: [`sp.cluster.probe.${process.pid}`],
          storage: StorageType.Memory,
          num_replicas: replicas,
        });
        await jsm.streams.delete(name);
        return;
      } catch (e) {
        if (Date.now() > deadline) throw new Error(`nats cluster not ready within 60 s: ${(e as Error).message}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  } finally {
    await nc.close();
  }
}
