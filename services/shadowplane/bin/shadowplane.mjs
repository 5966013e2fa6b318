#!/usr/bin/env node
// Entry binary: `shadowplane <role> [args]`.
// Runs the compiled build (dist/shadowplane.mjs, from `make build`) when it exists, else the
// TypeScript sources through tsx; SHADOWPLANE_RUN_FROM=dist|src forces one (libs/stack/bin/entry.mjs).
// Tests and `make demo` set src so they always run the sources being edited.
// The loader is imported by path: nothing but plain JavaScript can load before tsx is registered.
import { loadEntry } from '../../../libs/stack/bin/entry.mjs';

const mod = await loadEntry('shadowplane', async () => {
  const { register } = await import('tsx/esm/api');
  register();
  return import('../src/index.ts');
});
process.exitCode = await mod.run(process.argv.slice(2));
