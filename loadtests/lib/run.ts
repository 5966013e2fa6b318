// The start and end every benchmark runner shares: run main and exit with its code, and tear down
// what it started.
import { rmSync } from 'node:fs';
import { closePools } from './harness.js';
import type { Proc } from './procs.js';

/**
 * Stops the processes in `started` (last started first), closes the harness's client pools and
 * removes the temporary directories in `dirs`. Never throws for a directory already gone.
 */
export async function tearDown(started: Proc[], dirs: string[] = []): Promise<void> {
  await closePools();
  for (const p of [...started].reverse()) await p.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}

/** Runs a runner's `main` and exits with its code; a thrown error prints `<name> failed: <stack>` and exits 1. */
export function runMain(name: string, main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${name} failed: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
