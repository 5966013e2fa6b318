// @shadowplane/artifacts: encrypted, purpose-bound retained outputs. Named exports only.
export { loadKeyring, keyringFrom, generateKey, putArtifact, getArtifact } from './artifacts.js';
export type { Keyring, ArtifactBody, ArtifactMeta } from './artifacts.js';
