// @shadowplane/bus: NATS connection, idempotent provisioning and typed KV. Named exports only.
export { connectBus, provision, openKv, openObjectStore, natsReplicasFromEnv } from './bus.js';
export type { Bus, BusOptions, ProvisionOptions, Provisioned } from './bus.js';
export { JsonKv, isCasConflict } from './json-kv.js';
export { putNewBlob } from './new-blob.js';
export type { NewBlobInfo } from './new-blob.js';
export type { JsonKvOptions, Versioned } from './json-kv.js';
export { assertCasSafeServer, compareVersions, watchCasSafeServer, CAS_SAFE_NATS_VERSION } from './server-version.js';
