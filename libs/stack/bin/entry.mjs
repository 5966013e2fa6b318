// The start of every Shadowplane binary (services/*/bin/*.mjs): choose between the compiled build
// and the TypeScript sources, before anything else loads. Plain JavaScript, imported by relative
// path, so it runs from a fresh clone (no build, no tsx yet) as well as from the image.
import { existsSync } from 'node:fs';

/**
 * Loads the entry module of binary `name`: the compiled build `dist/<name>.mjs` at the repository
 * (or image) root when it exists, with source maps on so stack traces name the TypeScript sources;
 * otherwise `sources()` (which registers tsx and imports the TypeScript entry), saying so once on
 * stderr and setting SHADOWPLANE_RUN_FROM=src so processes it starts inherit the choice quietly.
 * SHADOWPLANE_RUN_FROM=dist|src forces one. Exits 78 (EX_CONFIG) when SHADOWPLANE_RUN_FROM is
 * anything else, or is dist and the build is missing.
 * @param {string} name binary name, as in messages and dist/ (`shadowctl`, `shadowplane`)
 * @param {() => Promise<Record<string, unknown>>} sources imports the TypeScript entry through tsx
 * @returns {Promise<Record<string, unknown>>} the entry module's namespace
 */
export async function loadEntry(name, sources) {
  const from = process.env.SHADOWPLANE_RUN_FROM || 'auto';
  const dist = new URL(`../../../dist/${name}.mjs`, import.meta.url);
  if (from !== 'auto' && from !== 'dist' && from !== 'src') {
    process.stderr.write(`${name}: SHADOWPLANE_RUN_FROM must be dist, src or unset (got '${from}')\n`);
    process.exit(78);
  }
  if (from === 'dist' || (from === 'auto' && existsSync(dist))) {
    if (!existsSync(dist)) {
      process.stderr.write(
        `${name}: SHADOWPLANE_RUN_FROM=dist but dist/${name}.mjs is not built (run \`make build\`)\n`,
      );
      process.exit(78);
    }
    process.setSourceMapsEnabled(true);
    return import(dist.href);
  }
  if (from === 'auto') {
    process.stderr.write(
      `${name}: no build in dist/; running the TypeScript sources through tsx (\`make build\` compiles)\n`,
    );
    process.env.SHADOWPLANE_RUN_FROM = 'src';
  }
  return sources();
}
