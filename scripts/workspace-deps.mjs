// Declares each workspace's dependencies from what its files import, so every package.json says
// what its package needs (ESLint's import-x/no-extraneous-dependencies then holds it to that).
//
// Usage: node scripts/workspace-deps.mjs [--write]
//   without --write: prints what would change and exits 1 if anything would.
// Rules: a bare import from a source file is a dependency; one only from tests, test helpers or
// benches is a devDependency. Versions are the root package.json's ranges; sibling workspaces
// are "*" (npm links them). `node:` built-ins and relative paths are not packages.
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { builtinModules } from 'node:module';

const ROOT = new URL('..', import.meta.url).pathname;
const rootPkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const rootRanges = { ...rootPkg.dependencies, ...rootPkg.devDependencies };
const write = process.argv.includes('--write');

const workspaces = ['libs', 'services'].flatMap((d) =>
  readdirSync(join(ROOT, d))
    .map((n) => join(ROOT, d, n))
    .filter((p) => statSync(join(p, 'package.json'), { throwIfNoEntry: false })),
);
const names = new Set(workspaces.map((w) => JSON.parse(readFileSync(join(w, 'package.json'), 'utf8')).name));

/** Every .ts/.mjs file below dir, skipping node_modules. */
function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === 'node_modules' || e.name === 'dist') return [];
    const p = join(dir, e.name);
    return e.isDirectory() ? files(p) : /\.(ts|mjs|js)$/.test(e.name) ? [p] : [];
  });
}

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`), or null. */
function packageOf(spec) {
  if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:')) return null;
  const parts = spec.split('/');
  const name = spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return builtinModules.includes(name) ? null : name;
}

const IMPORT =
  /(?:^|[\s;])(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s+['"]([^'"]+)['"]/gm;
const isDevFile = (rel) => /(^|\/)(test|bench)\//.test(rel) || /\.test\.ts$/.test(rel);

let changed = 0;
for (const ws of workspaces) {
  const pkgPath = join(ws, 'package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
  const deps = new Set();
  const dev = new Set();
  for (const f of files(ws)) {
    const rel = relative(ws, f);
    for (const m of readFileSync(f, 'utf8').matchAll(IMPORT)) {
      const name = packageOf(m[1] ?? m[2] ?? m[3]);
      if (!name || name === pkg.name) continue;
      (isDevFile(rel) ? dev : deps).add(name);
    }
  }
  for (const d of deps) dev.delete(d);
  const range = (n) => {
    if (names.has(n)) return '*';
    if (rootRanges[n]) return rootRanges[n];
    throw new Error(`${relative(ROOT, ws)} imports ${n}, which the root package.json does not declare`);
  };
  const next = (set) => (set.size ? Object.fromEntries([...set].sort().map((n) => [n, range(n)])) : undefined);
  const want = { dependencies: next(deps), devDependencies: next(dev) };
  for (const key of ['dependencies', 'devDependencies']) {
    if (JSON.stringify(pkg[key]) === JSON.stringify(want[key])) continue;
    changed++;
    console.log(`${relative(ROOT, pkgPath)}: ${key} → ${JSON.stringify(want[key] ?? null)}`);
    if (want[key]) pkg[key] = want[key];
    else delete pkg[key];
  }
  if (write) writeFileSync(pkgPath, `${JSON.stringify(pkg, null, 2)}\n`);
}
if (changed && !write) {
  console.error(`${changed} declaration(s) out of date: run node scripts/workspace-deps.mjs --write, then npm install`);
  process.exit(1);
}
