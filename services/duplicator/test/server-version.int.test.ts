import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateKey } from '@shadowplane/artifacts';
import { startFakeNatsInfo, startNatsServer } from '@shadowplane/testkit';
import { BIN, REPO, simConfig, spawnWorker, startRig } from './harness.js';

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

// After start: a worker that reconnects to a real 2.9 server (Debian's, where installed) stops too.
const OLD = ['/usr/sbin/nats-server', '/usr/bin/nats-server'].find((p) => existsSync(p));

describe('server version after a reconnect', () => {
  it.skipIf(OLD === undefined)(
    'a worker reconnected to nats-server 2.9 exits 78 naming the version',
    async () => {
      const nats = await startNatsServer();
      const rig = await startRig(nats.url, simConfig());
      const { child } = await spawnWorker(rig);
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      await nats.stop();
      const dir = mkdtempSync(join(tmpdir(), 'shadowplane-old-nats-'));
      const old = spawn(OLD!, ['-a', '127.0.0.1', '-p', String(nats.port), '-js', '-sd', dir], { stdio: 'ignore' });
      try {
        const code = await Promise.race([
          exited,
          new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 90_000)),
        ]);
        expect(code).toBe(78);
        expect(stderr).toMatch(/nats-server v?2\.9\.\d+ is older than 2\.10\.0/);
      } finally {
        child.kill('SIGKILL');
        await rig.close().catch(() => undefined);
        old.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
      }
    },
    180_000,
  );
});
