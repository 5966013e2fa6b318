import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import { connectBus, provision, openObjectStore, type Bus } from '@shadowplane/bus';
import { generateKey, getArtifact, keyringFrom, putArtifact } from './index.js';

describe('artifacts', () => {
  let bus: Bus;
  beforeAll(async () => {
    bus = await connectBus({ url: sharedNatsUrl(), name: 'artifacts-test', prefix: randomPrefix('art') });
    await provision(bus, { storage: 'memory' });
  });
  afterAll(async () => bus.close());
  const meta = {
    campaign_id: 'c1',
    arm_id: 'a1',
    item_hash: 'f'.repeat(64),
    purpose: 'shadow-evaluation',
    ttl_days: 7,
  };

  it('round-trips an output, and the stored bytes hold no plaintext', async () => {
    const store = await openObjectStore(bus, bus.names.buckets.artifacts);
    const to = { bus, bucket: bus.names.buckets.artifacts };
    const kr = keyringFrom('k1', { k1: generateKey() });
    const ref = await putArtifact(to, kr, { output_text: 'The answer is 42 ✓', tool_calls: [] }, meta);
    expect(ref).toMatch(/^art:[0-9a-f]{64}$/);
    const raw = new TextDecoder().decode((await store.getBlob(ref.slice(4)))!);
    expect(raw).not.toContain('answer is 42');
    const got = await getArtifact(store, kr, ref);
    expect(got.output_text).toBe('The answer is 42 ✓');
    expect(got.meta.purpose).toBe('shadow-evaluation');
  });

  it('decrypts with a rotated keyring that still lists the old key id', async () => {
    const store = await openObjectStore(bus, bus.names.buckets.artifacts);
    const to = { bus, bucket: bus.names.buckets.artifacts };
    const k1 = generateKey();
    const ref = await putArtifact(to, keyringFrom('k1', { k1 }), { output_text: 'x', tool_calls: [] }, meta);
    const rotated = keyringFrom('k2', { k1, k2: generateKey() });
    expect((await getArtifact(store, rotated, ref)).output_text).toBe('x');
  });

  it('refuses the wrong key, and an expired artifact', async () => {
    const store = await openObjectStore(bus, bus.names.buckets.artifacts);
    const to = { bus, bucket: bus.names.buckets.artifacts };
    const kr = keyringFrom('k1', { k1: generateKey() });
    const ref = await putArtifact(to, kr, { output_text: 'y', tool_calls: [] }, meta);
    await expect(getArtifact(store, keyringFrom('k1', { k1: generateKey() }), ref)).rejects.toMatchObject({
      code: 'internal',
    });
    const later = new Date(Date.now() + 8 * 86_400_000);
    await expect(getArtifact(store, kr, ref, later)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('rejects keys that are not 32 bytes', () => {
    expect(() => keyringFrom('k', { k: Buffer.alloc(16).toString('base64') })).toThrow(/32 bytes/);
  });
});
