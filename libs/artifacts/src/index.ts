// @shadowplane/artifacts: encrypted, purpose-bound retained outputs. Named exports only.
export { loadKeyring, keyringFrom, generateKey, putArtifact, sealArtifact, getArtifact } from './artifacts.js';
export type { Keyring, ArtifactBody, ArtifactMeta, SealedArtifact, ArtifactBucket } from './artifacts.js';
