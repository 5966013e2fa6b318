import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ObjectStore } from '@nats-io/obj';
import { putNewBlob, type Bus } from '@shadowplane/bus';
import { z } from 'zod';
import { ShadowplaneError, sha256Hex } from '@shadowplane/contracts';

/** AES-256-GCM keys by key id; `activeKid` encrypts, any listed key decrypts. */
export interface Keyring {
  readonly activeKid: string;
  readonly keys: ReadonlyMap<string, Buffer>;
}

const KeyFile = z.object({ active: z.string().min(1), keys: z.record(z.string(), z.string()) }).strict();

/**
 * Builds a keyring from a mounted secret.
 * Accepted forms (first found wins):
 * - `SHADOWPLANE_ARTIFACT_KEYS_FILE`: JSON `{"active":"k2","keys":{"k1":"<base64>","k2":"<base64>"}}`
 * - `SHADOWPLANE_ARTIFACT_KEY_FILE`: a file holding one base64 key (kid `default`)
 * - `SHADOWPLANE_ARTIFACT_KEY`: one base64 key in the environment (kid `default`; dev only)
 * Every key must decode to exactly 32 bytes.
 * @throws ShadowplaneError config_invalid naming the variable when absent or malformed
 */
export function loadKeyring(env: NodeJS.ProcessEnv = process.env): Keyring {
  if (env.SHADOWPLANE_ARTIFACT_KEYS_FILE) {
    const parsed = KeyFile.safeParse(JSON.parse(readFileSync(env.SHADOWPLANE_ARTIFACT_KEYS_FILE, 'utf8')));
    if (!parsed.success)
      throw new ShadowplaneError(
        'config_invalid',
        'SHADOWPLANE_ARTIFACT_KEYS_FILE: expected {"active":kid,"keys":{kid:base64}}',
      );
    return keyringFrom(parsed.data.active, parsed.data.keys, 'SHADOWPLANE_ARTIFACT_KEYS_FILE');
  }
  const one = env.SHADOWPLANE_ARTIFACT_KEY_FILE
    ? readFileSync(env.SHADOWPLANE_ARTIFACT_KEY_FILE, 'utf8').trim()
    : env.SHADOWPLANE_ARTIFACT_KEY;
  const from = env.SHADOWPLANE_ARTIFACT_KEY_FILE ? 'SHADOWPLANE_ARTIFACT_KEY_FILE' : 'SHADOWPLANE_ARTIFACT_KEY';
  if (!one)
    throw new ShadowplaneError(
      'config_invalid',
      'no artifact key: set SHADOWPLANE_ARTIFACT_KEYS_FILE, SHADOWPLANE_ARTIFACT_KEY_FILE or SHADOWPLANE_ARTIFACT_KEY',
      { details: { key: from } },
    );
  return keyringFrom('default', { default: one }, from);
}

/**
 * Builds a keyring from base64 keys.
 * @throws ShadowplaneError config_invalid when a key is not 32 bytes or the active kid is missing
 */
export function keyringFrom(activeKid: string, keys: Record<string, string>, source = 'keyring'): Keyring {
  const map = new Map<string, Buffer>();
  for (const [kid, b64] of Object.entries(keys)) {
    const k = Buffer.from(b64, 'base64');
    if (k.length !== 32)
      throw new ShadowplaneError(
        'config_invalid',
        `${source}: key ${kid} must be 32 bytes of base64 (got ${k.length})`,
        { details: { key: source } },
      );
    map.set(kid, k);
  }
  if (!map.has(activeKid))
    throw new ShadowplaneError('config_invalid', `${source}: active key ${activeKid} is not in keys`, {
      details: { key: source },
    });
  return { activeKid, keys: map };
}

/** A fresh random 32-byte key as base64 (for dev setups, tests and the demo). */
export function generateKey(): string {
  return randomBytes(32).toString('base64');
}

/** What an artifact holds: the exact output of one arm call. */
export interface ArtifactBody {
  output_text: string;
  tool_calls: { name: string; arguments: string }[];
  /** the raw response body as received (JSON text or SSE text), when kept */
  response_raw?: string;
}

/** Purpose binding and retention recorded with every artifact. */
export interface ArtifactMeta {
  campaign_id: string;
  arm_id: string;
  item_hash: string;
  /** why it is kept, from the campaign's retention spec */
  purpose: string;
  /** retention in days from now; reads after expiry are refused */
  ttl_days: number;
}

const Envelope = z.object({
  v: z.literal(1),
  alg: z.literal('AES-256-GCM'),
  kid: z.string(),
  iv: z.string(),
  tag: z.string(),
  ct: z.string(),
  aad: z.object({
    campaign_id: z.string(),
    arm_id: z.string(),
    item_hash: z.string(),
    purpose: z.string(),
    expires_at: z.string(),
  }),
});

/** An artifact sealed for the object store: its name (sha256 of `bytes`), the bytes to put, and its `art:` ref. */
export interface SealedArtifact {
  name: string;
  bytes: Uint8Array;
  ref: string;
}

/**
 * Encrypts an artifact without storing it (synchronous, no I/O): AES-256-GCM under the keyring's
 * active key, the purpose binding (campaign, arm, item, purpose, expiry = now + ttl_days) as the
 * additional authenticated data, so it cannot be altered without failing decryption. The name is
 * the sha256 of the sealed bytes (content-addressed). {@link putArtifact} = seal + put; a writer
 * that must know the ref before the put (the sidecar, which seals on its capture worker thread and
 * puts from its publisher) seals here and puts `bytes` under `name` itself.
 */
export function sealArtifact(
  keyring: Keyring,
  body: ArtifactBody,
  meta: ArtifactMeta,
  now = new Date(),
): SealedArtifact {
  const key = keyring.keys.get(keyring.activeKid)!;
  const iv = randomBytes(12);
  const aad = {
    campaign_id: meta.campaign_id,
    arm_id: meta.arm_id,
    item_hash: meta.item_hash,
    purpose: meta.purpose,
    expires_at: new Date(now.getTime() + meta.ttl_days * 86_400_000).toISOString(),
  };
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(JSON.stringify(aad)));
  const ct = Buffer.concat([cipher.update(JSON.stringify(body), 'utf8'), cipher.final()]);
  const stored = JSON.stringify({
    v: 1,
    alg: 'AES-256-GCM',
    kid: keyring.activeKid,
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    ct: ct.toString('base64'),
    aad,
  });
  const name = sha256Hex(stored);
  return { name, bytes: new TextEncoder().encode(stored), ref: `art:${name}` };
}

/** The object-store bucket artifacts are written to, and the connection that writes them. */
export interface ArtifactBucket {
  bus: Bus;
  /** the object store's bucket name (`bus.names.buckets.artifacts`) */
  bucket: string;
}

/**
 * Encrypts and stores an artifact in the object store ({@link sealArtifact}, then a put under its
 * content address). The sealed bytes embed a random IV, so the name is new to the bucket and the
 * object is written without looking for an earlier one of its name (putNewBlob, libs/bus).
 * @returns artifact_ref `art:<sha256>`
 */
export async function putArtifact(
  to: ArtifactBucket,
  keyring: Keyring,
  body: ArtifactBody,
  meta: ArtifactMeta,
  now = new Date(),
): Promise<string> {
  const sealed = sealArtifact(keyring, body, meta, now);
  await putNewBlob(
    to.bus,
    to.bucket,
    { name: sealed.name, description: `${meta.campaign_id}/${meta.arm_id}` },
    sealed.bytes,
  );
  return sealed.ref;
}

/**
 * Reads and decrypts an artifact.
 * @throws ShadowplaneError not_found when absent or expired; internal when the key id is unknown
 *   or authentication fails (tampered bytes)
 */
export async function getArtifact(
  store: ObjectStore,
  keyring: Keyring,
  ref: string,
  now = new Date(),
): Promise<ArtifactBody & { meta: z.infer<typeof Envelope>['aad'] }> {
  if (!ref.startsWith('art:')) throw new ShadowplaneError('invalid_request', `not an artifact ref: ${ref}`);
  const bytes = await store.getBlob(ref.slice(4));
  if (!bytes) throw new ShadowplaneError('not_found', `artifact ${ref} not found`);
  const env = Envelope.parse(JSON.parse(new TextDecoder().decode(bytes)));
  if (new Date(env.aad.expires_at).getTime() <= now.getTime())
    throw new ShadowplaneError('not_found', `artifact ${ref} expired at ${env.aad.expires_at}`);
  const key = keyring.keys.get(env.kid);
  if (!key) throw new ShadowplaneError('internal', `artifact ${ref} was encrypted with unknown key id ${env.kid}`);
  try {
    const d = createDecipheriv('aes-256-gcm', key, Buffer.from(env.iv, 'base64'));
    d.setAAD(Buffer.from(JSON.stringify(env.aad)));
    d.setAuthTag(Buffer.from(env.tag, 'base64'));
    const pt = Buffer.concat([d.update(Buffer.from(env.ct, 'base64')), d.final()]).toString('utf8');
    return { ...(JSON.parse(pt) as ArtifactBody), meta: env.aad };
  } catch (e) {
    throw new ShadowplaneError('internal', `artifact ${ref} failed authentication`, { cause: e });
  }
}
