// `shadowplane ledger` as a real subprocess over an exported observations file.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ObsMessage } from '@shadowplane/contracts';
import { synthEvent, synthObservation } from '@shadowplane/testkit';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = `${ROOT}services/shadowplane/bin/shadowplane.mjs`;
const CID = 'cmp_ledgercli01';

async function ledger(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, 'ledger', ...args], { cwd: ROOT, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

describe('shadowplane ledger (subprocess)', () => {
  let dir: string;
  let file: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ledger-'));
    file = join(dir, 'obs.jsonl');
    const msgs: ObsMessage[] = [];
    for (let i = 0; i < 10; i++) {
      msgs.push(synthObservation(CID, i, 'inc', 'incumbent'));
      msgs.push(
        synthObservation(CID, i, 'cand', 'candidate', i < 3 ? { status: 'error', error_class: 'rate_limited' } : {}),
      );
    }
    msgs.push(synthEvent(CID, 3, 'duplicate', null)); // item events are not calls: skipped
    writeFileSync(file, msgs.map((m) => JSON.stringify(m)).join('\n'));
  });

  it('prints the arm rollup and one ledger row per call', async () => {
    const r = await ledger([file, '--hosts']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Arms (20 calls');
    expect(r.stdout).toMatch(/cand\s+candidate\s+sim\/model-cand\s+10\s+3 = 30\.0%/);
    expect(r.stdout).toContain('By upstream:');
    expect(r.stdout.match(/rate_limited/g)).toHaveLength(3);
    expect(r.stdout).toContain('Arms ran concurrently');
  });

  it('writes calls.csv, arms.csv and hosts.csv with --csv --out', async () => {
    const out = join(dir, 'csv');
    const r = await ledger([file, '--csv', '--hosts', '--out', out]);
    expect(r.code).toBe(0);
    for (const f of ['calls.csv', 'arms.csv', 'hosts.csv']) expect(existsSync(join(out, f))).toBe(true);
    expect(readFileSync(join(out, 'calls.csv'), 'utf8').trim().split('\n')).toHaveLength(21);
    expect(readFileSync(join(out, 'arms.csv'), 'utf8').trim().split('\n')).toHaveLength(3);
  });

  it('refuses a missing file (66), a line that is not an OBS message (65) and --out without --csv (64)', async () => {
    expect((await ledger([join(dir, 'nope.jsonl')])).code).toBe(66);
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"schema":"nope"}\n');
    const r = await ledger([bad]);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain('bad.jsonl:1: not an OBS message');
    expect((await ledger([file, '--out', dir])).code).toBe(64);
  });
});
