#!/usr/bin/env node
// `npm run build` / `make build`: compiles the entry binaries to plain JavaScript in dist/ with
// esbuild, so roles start without transpiling TypeScript at run time.
//
//   dist/shadowplane.mjs     `shadowplane <role>` (exports run(argv)); each role is its own chunk,
//                            loaded only when that role runs
//   dist/shadowctl.mjs       `shadowctl` (exports main(argv))
//   dist/capture-worker.mjs  the sidecar's capture worker thread
//   dist/*-<hash>.mjs        shared chunks; every file has a .map next to it
//
// Workspace packages (@shadowplane/*) are bundled; npm packages stay external and load from the
// production node_modules (the same versions the lock file pins; no native or optional
// dependency needs special handling that way). Plain JavaScript (no plain `tsc` per workspace)
// because the workspaces export their .ts sources and import each other by those paths; esbuild
// follows them in about a second.
//
// Modules that locate files next to themselves (`new URL('../data/x.json', import.meta.url)`:
// the price catalogue, package.json versions, the demo data set, the stack root) keep meaning
// their source location: in each workspace module `import.meta.url` is rewritten to the URL of its
// source file, computed relative to the bundle at run time, so dist/ works wherever the tree is
// (repository checkout or /app in the image). The worker bootstraps listed in WORKERS are the
// exception: their URL is resolved against the bundle, which holds their compiled entry.
//
// Usage: node scripts/build.mjs [--outdir <dir>] [--quiet]
//   --outdir  where to write (default dist/ at the repository root, where the bins look). The
//             output finds the sources' data files by paths relative to itself: it may move only
//             together with the tree, or to a directory at the same depth below another copy of it
//             (the image's /app/dist).
// Exit codes: 0 built, 1 build failed, 64 bad argument.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Entry points: output name → source. */
const ENTRIES = {
  shadowplane: 'services/shadowplane/src/index.ts',
  shadowctl: 'services/cli/src/main.ts',
  'capture-worker': 'services/sidecar/src/capture-worker.ts',
};

/**
 * Worker bootstraps referenced by `new URL('./<name>.mjs', import.meta.url)`: in sources they load
 * the .ts through tsx; in the bundle the same URL names dist/<name>.mjs, compiled from ENTRIES.
 */
const WORKERS = { 'services/sidecar/src/processor.ts': ['capture-worker'] };

function parseArgs(argv) {
  const o = { outdir: join(ROOT, 'dist'), quiet: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--outdir' && argv[i + 1]) o.outdir = resolve(argv[++i]);
    else if (a === '--quiet') o.quiet = true;
    else {
      process.stderr.write(
        `build: unknown argument '${a}' (usage: node scripts/build.mjs [--outdir <dir>] [--quiet])\n`,
      );
      process.exit(64);
    }
  }
  // The output directory is emptied first: refuse one that holds anything but a previous build.
  if (existsSync(o.outdir) && readdirSync(o.outdir).some((f) => !/\.mjs(\.map)?$/.test(f))) {
    process.stderr.write(`build: ${o.outdir} holds files other than a build's *.mjs and *.mjs.map; not emptying it\n`);
    process.exit(64);
  }
  return o;
}

/** npm packages left to load from node_modules at run time (none need it today). */
const EXTERNAL = [];

const WORKER_URL = /new URL\(\s*'\.\/([\w-]+)\.mjs'\s*,\s*import\.meta\.url\s*\)/g;
const PLACEHOLDER = '__SHADOWPLANE_BUNDLE_URL__';

/** esbuild plugin: npm packages external, workspace sources bundled with their import.meta.url kept. */
function workspacePlugin(outdir) {
  return {
    name: 'shadowplane-workspace',
    setup(b) {
      // Bare specifiers other than @shadowplane/* (node: built-ins are external on platform node).
      if (EXTERNAL.length > 0) {
        b.onResolve({ filter: /^[^./]/ }, (args) => {
          const bare = args.path
            .split('/')
            .slice(0, args.path.startsWith('@') ? 2 : 1)
            .join('/');
          return EXTERNAL.includes(bare) ? { path: args.path, external: true } : undefined;
        });
      }
      b.onLoad({ filter: /\.(ts|mjs|js)$/ }, (args) => {
        if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
        const rel = relative(ROOT, args.path).split(sep).join('/');
        let src = readFileSync(args.path, 'utf8');
        const allowed = WORKERS[rel] ?? [];
        src = src.replace(WORKER_URL, (m, name) => {
          if (!allowed.includes(name)) {
            throw new Error(`${rel} loads ./${name}.mjs by URL; list it in WORKERS and ENTRIES of scripts/build.mjs`);
          }
          return m.replace('import.meta.url', PLACEHOLDER);
        });
        const fromOut = relative(outdir, args.path).split(sep).join('/');
        src = src
          .replaceAll('import.meta.url', `new URL(${JSON.stringify(fromOut)}, import.meta.url).href`)
          .replaceAll(PLACEHOLDER, 'import.meta.url');
        return { contents: src, loader: args.path.endsWith('.ts') ? 'ts' : 'js', resolveDir: dirname(args.path) };
      });
    },
  };
}

const opts = parseArgs(process.argv.slice(2));
const t0 = performance.now();
rmSync(opts.outdir, { recursive: true, force: true });
try {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([k, v]) => [k, join(ROOT, v)])),
    outdir: opts.outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    legalComments: 'none',
    // CommonJS dependencies call require() for Node built-ins; an ESM bundle has no require.
    banner: {
      js: "import { createRequire as __spCreateRequire } from 'node:module'; const require = __spCreateRequire(import.meta.url);",
    },
    logLevel: 'warning',
    metafile: true,
    plugins: [workspacePlugin(opts.outdir)],
  });
  for (const name of Object.keys(ENTRIES)) {
    if (!existsSync(join(opts.outdir, `${name}.mjs`))) throw new Error(`no ${name}.mjs in the output`);
  }
  if (!opts.quiet) {
    const outs = Object.entries(result.metafile.outputs).filter(([f]) => f.endsWith('.mjs'));
    const bytes = outs.reduce((s, [, o]) => s + o.bytes, 0);
    const inputs = Object.keys(result.metafile.inputs).length;
    process.stdout.write(
      `build: ${inputs} modules → ${outs.length} files, ${(bytes / 1024).toFixed(0)} KiB in ${relative(ROOT, opts.outdir)}/ (${Math.round(performance.now() - t0)} ms)\n`,
    );
  }
} catch (e) {
  process.stderr.write(`build: failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}
