// The "no tracing code" baseline the tracing benchmarks compare the shipped sidecar with.
import { execFileSync, execSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from './procs.js';

/**
 * A copy of this commit's tree (`git archive HEAD`) with the sidecar's tracing code cut out: main.ts
 * never starts tracing and the sampler's tracing flag is the constant false. node_modules is shared
 * by hard links (workspace links are relative, so they resolve inside the copy). Returns the copy's
 * directory; the caller removes it. Throws when either cut no longer matches the source (the bench
 * must then be updated, not silently compare two equal builds).
 */
export function noTracingTree(): string {
  const dir = mkdtempSync(join(tmpdir(), 'shadowplane-bench-notrace-'));
  execSync(`git archive HEAD | tar -x -C ${JSON.stringify(dir)}`, {
    cwd: REPO,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  execFileSync('cp', ['-al', join(REPO, 'node_modules'), join(dir, 'node_modules')]);
  const cut = (rel: string, from: string, to: string) => {
    const p = join(dir, rel);
    const s = readFileSync(p, 'utf8');
    if (!s.includes(from)) throw new Error(`${rel} no longer contains ${JSON.stringify(from)}: update the bench`);
    writeFileSync(p, s.replace(from, to));
  };
  cut(
    'services/sidecar/src/main.ts',
    'const tracing = startTracing({',
    'const tracing = { shutdown: async () => {} } ?? startTracing({',
  );
  cut('services/sidecar/src/sampling.ts', 'o.traceContext ?? tracingEnabled()', 'false');
  return dir;
}
