// The compiled build works: scripts/build.mjs into a temp tree, then the entry binaries (copies of
// the real bins, which look for ../../../dist/) run it with SHADOWPLANE_RUN_FROM=dist: --help of
// both, and a sidecar that starts listening and drains on SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedNatsUrl } from '@shadowplane/testkit';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** generous: the build and a start take seconds on a loaded 2-core machine */
const DEADLINE_MS = 120_000;

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

function run(bin: string, args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: ROOT,
    env: { ...process.env, SHADOWPLANE_RUN_FROM: 'dist', SHADOWPLANE_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, stdout: () => out, stderr: () => err, exit };
}

/** A tree with the bins (and their loader) at their places and `dist/` built from this checkout. */
function binsIn(tree: string): { shadowplane: string; shadowctl: string } {
  const shadowplane = join(tree, 'services/shadowplane/bin/shadowplane.mjs');
  const shadowctl = join(tree, 'services/cli/bin/shadowctl.mjs');
  mkdirSync(join(tree, 'services/shadowplane/bin'), { recursive: true });
  mkdirSync(join(tree, 'services/cli/bin'), { recursive: true });
  copyFileSync(join(ROOT, 'services/shadowplane/bin/shadowplane.mjs'), shadowplane);
  copyFileSync(join(ROOT, 'services/cli/bin/shadowctl.mjs'), shadowctl);
  // the loader both bins import by path (dist or sources)
  mkdirSync(join(tree, 'libs/stack/bin'), { recursive: true });
  copyFileSync(join(ROOT, 'libs/stack/bin/entry.mjs'), join(tree, 'libs/stack/bin/entry.mjs'));
  return { shadowplane, shadowctl };
}

describe('compiled build (scripts/build.mjs)', () => {
  let tree = '';
  let bins = { shadowplane: '', shadowctl: '' };

  beforeAll(async () => {
    tree = mkdtempSync(join(tmpdir(), 'shadowplane-build-'));
    bins = binsIn(tree);
    const b = run(join(ROOT, 'scripts/build.mjs'), ['--outdir', join(tree, 'dist'), '--quiet']);
    expect(await b.exit, b.stderr()).toBe(0);
  }, DEADLINE_MS);

  afterAll(() => {
    if (tree) rmSync(tree, { recursive: true, force: true });
  });

  it('writes the entries and their source maps, none of which loads tsx', () => {
    const files = readdirSync(join(tree, 'dist'));
    for (const f of ['shadowplane.mjs', 'shadowctl.mjs', 'capture-worker.mjs', 'shadowplane.mjs.map']) {
      expect(files).toContain(f);
    }
    for (const f of files.filter((n) => n.endsWith('.mjs'))) {
      expect(readFileSync(join(tree, 'dist', f), 'utf8'), f).not.toContain('tsx/esm');
    }
  });

  it('shadowplane --help and shadowctl --help run from dist/', async () => {
    const sp = run(bins.shadowplane, ['--help']);
    expect(await sp.exit, sp.stderr()).toBe(0);
    for (const role of ['sidecar', 'duplicator', 'verdict', 'control', 'provider-sim', 'up', 'usage', 'ledger']) {
      expect(sp.stdout()).toContain(`  ${role} `);
    }
    expect(sp.stderr()).toBe('');
    const ctl = run(bins.shadowctl, ['--help']);
    expect(await ctl.exit, ctl.stderr()).toBe(0);
    expect(ctl.stdout()).toContain('Usage: shadowctl');
  });

  it(
    'the compiled sidecar starts listening and exits 0 on SIGTERM',
    async () => {
      const p = run(bins.shadowplane, [
        'sidecar',
        '--listen',
        '127.0.0.1:0',
        '--ops-listen',
        '127.0.0.1:0',
        '--upstream',
        'http://127.0.0.1:1',
        '--nats',
        sharedNatsUrl(),
      ]);
      const line = await new Promise<{ event: string; role: string; ops_url: string }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listening line:\n${p.stderr()}`)), DEADLINE_MS);
        const check = () => {
          const first = p.stdout().split('\n')[0];
          if (p.stdout().includes('\n') && first) {
            clearTimeout(timer);
            resolve(JSON.parse(first) as { event: string; role: string; ops_url: string });
          }
        };
        p.child.stdout!.on('data', check);
        void p.exit.then(() => reject(new Error(`exited before listening:\n${p.stderr()}`)));
      });
      expect(line).toMatchObject({ event: 'listening', role: 'sidecar' });
      expect((await fetch(`${line.ops_url}/healthz`)).status).toBe(200);
      p.child.kill('SIGTERM');
      expect(await p.exit, p.stderr()).toBe(0);
    },
    DEADLINE_MS,
  );

  it('SHADOWPLANE_RUN_FROM=dist without a build, or an unknown value, exits 78 naming it', async () => {
    const bare = mkdtempSync(join(tmpdir(), 'shadowplane-nobuild-'));
    try {
      const nb = binsIn(bare);
      const p = run(nb.shadowplane, ['--help']);
      expect(await p.exit).toBe(78);
      expect(p.stderr()).toContain('SHADOWPLANE_RUN_FROM=dist');
      const c = run(nb.shadowctl, ['--help']);
      expect(await c.exit).toBe(78);
      const bad = run(bins.shadowplane, ['--help'], { SHADOWPLANE_RUN_FROM: 'compiled' });
      expect(await bad.exit).toBe(78);
      expect(bad.stderr()).toContain('SHADOWPLANE_RUN_FROM');
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });
});
