// One help style across the roles and shadowctl: the same layout (Usage, Options with -h/--help,
// the exit codes), the same exit code for a bad flag (64, the flag named on stderr), 0 for --help.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_CODES_LINE, EXIT_USAGE } from '@shadowplane/config';
import { REPO_ROOT } from '../scripts/lib/processes.js';

const SP = join(REPO_ROOT, 'services', 'shadowplane', 'bin', 'shadowplane.mjs');
const CTL = join(REPO_ROOT, 'services', 'cli', 'bin', 'shadowctl.mjs');
const run = (args: string[]) =>
  spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } });

describe('help and usage errors', () => {
  for (const role of ['sidecar', 'duplicator', 'control', 'verdict', 'provider-sim']) {
    it(`shadowplane ${role}`, () => {
      for (const flag of ['--help', '-h']) {
        const h = run([SP, role, flag]);
        expect(h.status, h.stderr).toBe(0);
        expect(h.stdout.startsWith(`Usage: shadowplane ${role}`)).toBe(true);
        expect(h.stdout).toMatch(/\nOptions:\n(?:.*\n)*? {2}-h, --help +display help for command\n/);
        expect(h.stdout.trimEnd().endsWith(EXIT_CODES_LINE)).toBe(true);
      }
      const bad = run([SP, role, '--no-such-flag']);
      expect(bad.status).toBe(EXIT_USAGE);
      expect(bad.stderr).toContain('--no-such-flag');
      expect(bad.stderr).toContain(`Usage: shadowplane ${role}`);
    }, 120_000);
  }

  it('shadowplane itself', () => {
    const h = run([SP, '--help']);
    expect(h.status).toBe(0);
    expect(h.stdout.startsWith('Usage: shadowplane <role>')).toBe(true);
    expect(h.stdout.trimEnd().endsWith(EXIT_CODES_LINE)).toBe(true);
    const bad = run([SP, 'no-such-role']);
    expect(bad.status).toBe(EXIT_USAGE);
    expect(bad.stderr).toContain("unknown role 'no-such-role'");
  }, 120_000);

  it('shadowctl', () => {
    const h = run([CTL, '--help']);
    expect(h.status).toBe(0);
    expect(h.stdout.startsWith('Usage: shadowctl')).toBe(true);
    expect(h.stdout).toMatch(/\nOptions:\n(?:.*\n)*? {2}-h, --help +display help for command\n/);
    expect(h.stdout).toMatch(/\nExit codes: 0 done, 1 error, .*64 bad flag or argument/);
    const bad = run([CTL, '--no-such-flag']);
    expect(bad.status).toBe(EXIT_USAGE);
    expect(bad.stderr).toContain('--no-such-flag');
  }, 120_000);
});
