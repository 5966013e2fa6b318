import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import { connectBus, openObjectStore, provision, putNewBlob, type Bus } from './index.js';

describe('putNewBlob', () => {
  let bus: Bus;
  beforeAll(async () => {
    bus = await connectBus({ url: sharedNatsUrl(), name: 'new-blob-test', prefix: randomPrefix('blob') });
    await provision(bus, { storage: 'memory' });
  });
  afterAll(async () => bus.close());

  it('writes an object nats.js reads back whole: bytes, info, digest, listing', async () => {
    const bucket = bus.names.buckets.artifacts;
    const store = await openObjectStore(bus, bucket);
    const data = new TextEncoder().encode('{"hello":"wörld"}');
    const put = await putNewBlob(bus, bucket, { name: 'a/b c', description: 'c1/a1' }, data);
    expect(put).toMatchObject({ size: data.byteLength, chunks: 1 });
    expect(Buffer.from((await store.getBlob('a/b c'))!)).toEqual(Buffer.from(data));
    const info = (await store.info('a/b c'))!;
    expect(info).toMatchObject({
      name: 'a/b c',
      description: 'c1/a1',
      size: data.byteLength,
      chunks: 1,
      deleted: false,
    });
    // the digest nats.js's own put records: SHA-256 of the bytes, base64url with padding
    const sha = createHash('sha256').update(data).digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
    expect(info.digest).toBe(`SHA-256=${sha}`);
    expect((await store.list()).map((o) => o.name)).toContain('a/b c');
  });

  it('splits an object larger than a chunk, and nats.js reassembles and verifies it', async () => {
    const bucket = bus.names.buckets.artifacts;
    const store = await openObjectStore(bus, bucket);
    const data = randomBytes(300 * 1024);
    const put = await putNewBlob(bus, bucket, { name: 'big' }, data);
    expect(put.chunks).toBe(3);
    expect(Buffer.from((await store.getBlob('big'))!).equals(data)).toBe(true);
    expect(await store.info('big')).toMatchObject({ size: data.byteLength, chunks: 3 });
  });

  it('writes an empty object, and one nats.js deletes like its own', async () => {
    const bucket = bus.names.buckets.artifacts;
    const store = await openObjectStore(bus, bucket);
    await putNewBlob(bus, bucket, { name: 'empty' }, new Uint8Array(0));
    expect((await store.getBlob('empty'))!.byteLength).toBe(0);
    await putNewBlob(bus, bucket, { name: 'gone' }, new Uint8Array([1, 2, 3]));
    await store.delete('gone');
    expect(await store.getBlob('gone')).toBeNull();
  });

  it('refuses an empty name and a bucket that does not exist', async () => {
    await expect(putNewBlob(bus, bus.names.buckets.artifacts, { name: '' }, new Uint8Array(1))).rejects.toThrow(
      /name cannot be empty/,
    );
    await expect(putNewBlob(bus, 'no_such_bucket_x', { name: 'n' }, new Uint8Array(1))).rejects.toThrow();
  });
});
