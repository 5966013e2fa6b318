#!/usr/bin/env node
// `shadowctl`: the operator CLI over the control API.
// Runs the compiled build (dist/shadowctl.mjs, from `make build`) when it exists, else the
// TypeScript sources through tsx; SHADOWPLANE_RUN_FROM=dist|src forces one (libs/stack/bin/entry.mjs).
// The loader is imported by path: nothing but plain JavaScript can load before tsx is registered.
import { loadEntry } from '../../../libs/stack/bin/entry.mjs';

const mod = await loadEntry('shadowctl', async () => {
  const { register } = await import('tsx/esm/api');
  register();
  return import('../src/main.ts');
});
process.exitCode = await mod.main(process.argv.slice(2));
