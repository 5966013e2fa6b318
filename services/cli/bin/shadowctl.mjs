#!/usr/bin/env node
// `shadowctl`: the operator CLI over the control API.
// Runs the compiled build (dist/shadowctl.mjs at the repository or image root, from `make build`)
// when it exists; otherwise the TypeScript sources through tsx, saying so once on stderr.
// SHADOWPLANE_RUN_FROM=dist|src forces one (dist: exit 78 when it is not built).
import { existsSync } from 'node:fs';

const from = process.env.SHADOWPLANE_RUN_FROM || 'auto';
const dist = new URL('../../../dist/shadowctl.mjs', import.meta.url);
if (from !== 'auto' && from !== 'dist' && from !== 'src') {
  process.stderr.write(`shadowctl: SHADOWPLANE_RUN_FROM must be dist, src or unset (got '${from}')\n`);
  process.exit(78);
}
let mod;
if (from === 'dist' || (from === 'auto' && existsSync(dist))) {
  if (!existsSync(dist)) {
    process.stderr.write(
      'shadowctl: SHADOWPLANE_RUN_FROM=dist but dist/shadowctl.mjs is not built (run `make build`)\n',
    );
    process.exit(78);
  }
  // Stack traces name the TypeScript sources (dist/*.mjs.map).
  process.setSourceMapsEnabled(true);
  mod = await import(dist.href);
} else {
  if (from === 'auto') {
    process.stderr.write(
      'shadowctl: no build in dist/; running the TypeScript sources through tsx (`make build` compiles)\n',
    );
    process.env.SHADOWPLANE_RUN_FROM = 'src';
  }
  const { register } = await import('tsx/esm/api');
  register();
  mod = await import('../src/main.ts');
}
process.exitCode = await mod.main(process.argv.slice(2));
