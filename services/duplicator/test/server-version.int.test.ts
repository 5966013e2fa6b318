import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateKey } from '@shadowplane/artifacts';
import { startFakeNatsInfo } from '@shadowplane/testkit';
import { BIN, REPO } from './harness.js';

// A 2.9.x server cannot be relied on to exist here, so a listener that reports that version in
// its INFO stands in for it; the worker is the real binary.
describe('duplicator on a nats-server with the replicated-bucket CAS race', () => {
  it('refuses to start (exit 78), naming the version and the fix', async () => {
    const fake = await startFakeNatsInfo('2.9.10');
    try {
      const dir = mkdtempSync(join(tmpdir(), 'dup-ver-'));
      const providersFile = join(dir, 'providers.json');
      writeFileSync(
        providersFile,
        JSON.stringify({ providers: [{ id: 'sim', base_url: 'http://127.0.0.1:9/v1', api: 'openai.chat' }] }),
      );
      const child = spawn(process.execPath, [BIN, 'duplicator'], {
        cwd: REPO,
        env: {
          ...process.env,
          SHADOWPLANE_NATS_URL: fake.url,
          SHADOWPLANE_PROVIDERS_FILE: providersFile,
          SHADOWPLANE_DUPLICATOR_OPS_LISTEN: '127.0.0.1:0',
          SHADOWPLANE_LOG_LEVEL: 'warn',
          SHADOWPLANE_ARTIFACT_KEY: generateKey(),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      let stdout = '';
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
      expect(code).toBe(78);
      expect(stdout).not.toContain('listening');
      expect(stderr).toContain('nats-server 2.9.10 is older than 2.10.0');
      expect(stderr).toContain('make nats-server');
    } finally {
      await fake.close();
    }
  }, 60_000);
});
