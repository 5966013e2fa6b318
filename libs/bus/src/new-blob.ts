// Writes an object that is new to its bucket in the object-store layout nats.js reads (NATS
// ADR-20: chunks on `$O.<bucket>.C.<nuid>`, then a rolled-up info record on
// `$O.<bucket>.M.<base64url(name)>`), without the lookup of an existing object that nats.js's
// put makes first (to purge that object's chunks once replaced) — a NATS round trip per object
// that a name never written before does not need.
import { createHash } from 'node:crypto';
import { headers, nuid } from '@nats-io/transport-node';
import { JsHeaders } from '@nats-io/jetstream';
import type { Bus } from './bus.js';

/** Largest chunk written (nats.js's default `max_chunk_size`), capped by the server's max_payload. */
const MAX_CHUNK = 128 * 1024;

/** `base64url` with `=` padding, as ADR-20 encodes object names and digests. */
function base64UrlPadded(b: Buffer): string {
  return b.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

/** What {@link putNewBlob} stored: the object-store info record's size and chunk count. */
export interface NewBlobInfo {
  size: number;
  chunks: number;
  /** `SHA-256=<base64url>` of the bytes */
  digest: string;
}

/**
 * Stores `data` as object `name` of object-store bucket `bucket`, for a name no object of the
 * bucket has had — e.g. a content address over bytes that embed a random IV. Readable through
 * nats.js's ObjectStore (get, getBlob, info, list, delete) like any object it wrote. Chunks are
 * acknowledged before the info record is written, so a reader never finds an info record whose
 * chunks are missing; a failed chunk write purges the chunks written so far and rethrows.
 * Writing a name that exists replaces its info record and leaves the old chunks in the stream
 * (nats.js's put would purge them): the bytes stay reachable only through the new record.
 * @throws the JetStream publish error (e.g. no such bucket, timeout)
 */
export async function putNewBlob(
  bus: Bus,
  bucket: string,
  meta: { name: string; description?: string },
  data: Uint8Array,
): Promise<NewBlobInfo> {
  if (!meta.name) throw new Error('object name cannot be empty');
  const maxPayload = bus.nc.info?.max_payload ?? MAX_CHUNK;
  const chunk = Math.min(MAX_CHUNK, maxPayload);
  const id = nuid.next();
  const chunkSubj = `$O.${bucket}.C.${id}`;
  let chunks = 0;
  try {
    for (let at = 0; at < data.byteLength; at += chunk) {
      await bus.js.publish(chunkSubj, data.subarray(at, Math.min(at + chunk, data.byteLength)));
      chunks++;
    }
  } catch (e) {
    // a publish that failed may still have been stored: purge whatever landed
    await bus.jsm.streams.purge(`OBJ_${bucket}`, { filter: chunkSubj }).catch(() => undefined);
    throw e;
  }
  const digest = `SHA-256=${base64UrlPadded(createHash('sha256').update(data).digest())}`;
  const info = {
    name: meta.name,
    description: meta.description ?? '',
    options: { max_chunk_size: chunk },
    bucket,
    nuid: id,
    size: data.byteLength,
    chunks,
    mtime: new Date().toISOString(),
    digest,
    deleted: false,
  };
  const h = headers();
  h.set(JsHeaders.RollupHdr, JsHeaders.RollupValueSubject);
  // a failed info write leaves the chunks: it may have been stored all the same (a lost ack), and
  // purging them would then leave an object without its bytes; unreferenced chunks age out
  await bus.js.publish(`$O.${bucket}.M.${base64UrlPadded(Buffer.from(meta.name))}`, JSON.stringify(info), {
    headers: h,
  });
  return { size: data.byteLength, chunks, digest };
}
