import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageType } from '@nats-io/jetstream';
import { randomPrefix, startNatsCluster, type NatsClusterHandle } from '@shadowplane/testkit';
import { connectBus, provision, type Bus } from './index.js';

// Provisioning on a real 3-node JetStream cluster: R3 everywhere, and a mismatch refused.
describe('provision on a 3-node cluster', () => {
  let cluster: NatsClusterHandle;
  const buses: Bus[] = [];
  beforeAll(async () => {
    cluster = await startNatsCluster({ size: 3 });
  }, 90_000);
  afterAll(async () => {
    await Promise.all(buses.map((b) => b.close()));
    await cluster?.stop();
  });
  const open = async (prefix: string, replicas: number) => {
    const b = await connectBus({ url: cluster.url, name: 'bus-cluster-test', prefix, replicas });
    buses.push(b);
    return b;
  };

  it('creates every stream, KV bucket and object store with SHADOWPLANE_NATS_REPLICAS replicas', async () => {
    const bus = await open(randomPrefix('r3'), 3);
    expect(bus.serverVersion).toMatch(/^\d+\.\d+\.\d+/);
    const made = await provision(bus, { storage: 'memory' });
    const streams = [
      ...made.streams,
      ...made.buckets.map((b) => `KV_${b}`),
      ...made.objectStores.map((o) => `OBJ_${o}`),
    ];
    // CAPTURE, OBS; 7 KV buckets (campaigns … suites); capture bodies, report docs, datasets
    expect(streams).toHaveLength(11);
    for (const s of streams) {
      const info = await bus.jsm.streams.info(s);
      expect({ s, replicas: info.config.num_replicas }).toEqual({ s, replicas: 3 });
      expect(info.cluster?.replicas?.length).toBe(2); // two followers beside the leader
    }
    await provision(bus, { storage: 'memory' }); // again: a no-op
  });

  it('refuses to start on existing streams or buckets with another replica count, naming them', async () => {
    const prefix = randomPrefix('mix');
    const r3 = await open(prefix, 3);
    await provision(r3, { storage: 'memory' });
    const r1 = await open(prefix, 1);
    await expect(provision(r1, { storage: 'memory' })).rejects.toMatchObject({
      code: 'nats_replicas_mismatch',
      message: expect.stringMatching(/stream \S*CAPTURE exists with 3 replica\(s\) but SHADOWPLANE_NATS_REPLICAS is 1/),
    });
    // a bucket left at R1 from an earlier single-replica install is refused too
    const prefix2 = randomPrefix('kv1');
    const old = await open(prefix2, 1);
    await old.kvm.create(old.names.buckets.budget, { history: 1, storage: StorageType.Memory, replicas: 1 });
    const now = await open(prefix2, 3);
    await expect(provision(now, { storage: 'memory' })).rejects.toMatchObject({
      code: 'nats_replicas_mismatch',
      message: expect.stringContaining(
        `KV bucket ${now.names.buckets.budget} exists with 1 replica(s) but SHADOWPLANE_NATS_REPLICAS is 3`,
      ),
    });
  });
});
