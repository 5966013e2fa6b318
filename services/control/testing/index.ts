// Test support for anything that needs a real control API in-process (control's own tests and
// shadowctl's): an app on a private NATS prefix with seeded keys, reports and progress.
export { KEYS, KEY_ENTRIES, PROVIDERS, validSpec, auth, LogSink, fixture, tempFile } from './helpers.js';
export type { Fixture } from './helpers.js';
export { seedProgress, comparison, seedReport } from './seed.js';
