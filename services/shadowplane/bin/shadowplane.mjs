#!/usr/bin/env node
// Entry binary: `shadowplane <role> [args]`.
// Runs the compiled build (dist/shadowplane.mjs at the repository or image root, from `make build`)
// when it exists; otherwise the TypeScript sources through tsx, saying so once on stderr.
// SHADOWPLANE_RUN_FROM=dist|src forces one (dist: exit 78 when it is not built); tests and
// `make demo` set src so they always run the sources being edited.
import { existsSync } from 'node:fs';

const from = process.env.SHADOWPLANE_RUN_FROM || 'auto';
const dist = new URL('../../../dist/shadowplane.mjs', import.meta.url);
if (from !== 'auto' && from !== 'dist' && from !== 'src') {
  process.stderr.write(`shadowplane: SHADOWPLANE_RUN_FROM must be dist, src or unset (got '${from}')\n`);
  process.exit(78);
}
let mod;
if (from === 'dist' || (from === 'auto' && existsSync(dist))) {
  if (!existsSync(dist)) {
    process.stderr.write(
      'shadowplane: SHADOWPLANE_RUN_FROM=dist but dist/shadowplane.mjs is not built (run `make build`)\n',
    );
    process.exit(78);
  }
  // Stack traces name the TypeScript sources (dist/*.mjs.map).
  process.setSourceMapsEnabled(true);
  mod = await import(dist.href);
} else {
  if (from === 'auto') {
    process.stderr.write(
      'shadowplane: no build in dist/; running the TypeScript sources through tsx (`make build` compiles)\n',
    );
    // Roles this process starts (`shadowplane up`) inherit the choice without repeating the notice.
    process.env.SHADOWPLANE_RUN_FROM = 'src';
  }
  const { register } = await import('tsx/esm/api');
  register();
  mod = await import('../src/index.ts');
}
process.exitCode = await mod.run(process.argv.slice(2));
