import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import { hashApiKey } from '../src/index.js';
import { PROVIDERS, tempFile } from '../testing/helpers.js';

const BIN = fileURLToPath(new URL('../../shadowplane/bin/shadowplane.mjs', import.meta.url));

describe('shadowplane control (the process)', () => {
  it('exits 78 naming the offending variable when configuration is bad', { timeout: 150_000 }, () => {
    const r = spawnSync(process.execPath, [BIN, 'control'], {
      env: {
        PATH: process.env.PATH,
        SHADOWPLANE_PROVIDERS_FILE: tempFile('p.yaml', toYaml(PROVIDERS)),
        SHADOWPLANE_CONTROL_LISTEN: 'not-a-port',
      },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status).toBe(78);
    expect(r.stderr).toMatch(/SHADOWPLANE_CONTROL_LISTEN/);
    expect(r.stderr).toMatch(/SHADOWPLANE_CONTROL_API_KEYS_FILE/);
  });

  it('prints one listening line, serves, and drains on SIGTERM with exit 0', { timeout: 150_000 }, async () => {
    const key = 'sp_main_test_key_000000000000000000000000';
    const child = spawn(process.execPath, [BIN, 'control'], {
      env: {
        PATH: process.env.PATH,
        SHADOWPLANE_NATS_URL: sharedNatsUrl(),
        SHADOWPLANE_NATS_PREFIX: randomPrefix('ctlmain'),
        SHADOWPLANE_CONTROL_STORAGE: 'memory',
        SHADOWPLANE_CONTROL_LISTEN: '127.0.0.1:0',
        SHADOWPLANE_PROVIDERS_FILE: tempFile('p.yaml', toYaml(PROVIDERS)),
        SHADOWPLANE_CONTROL_API_KEYS_FILE: tempFile(
          'k.yaml',
          toYaml({ keys: [{ id: 'ci', hash: hashApiKey(key), scopes: ['campaign:read'] }] }),
        ),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const first = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', () => reject(new Error(`exited early: ${stderr}`)));
    });
    const ev = JSON.parse(first) as { event: string; role: string; url: string };
    expect(ev).toMatchObject({
      event: 'listening',
      role: 'control',
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    });
    expect((await fetch(`${ev.url}/readyz`)).status).toBe(200);
    const list = await fetch(`${ev.url}/v1/campaigns`, { headers: { authorization: `Bearer ${key}` } });
    expect([list.status, await list.json()]).toEqual([200, { campaigns: [] }]);
    const metrics = await (await fetch(`${ev.url}/metrics`)).text();
    expect(metrics).toMatch(
      /shadowplane_control_http_requests_total\{method="GET",route="\/v1\/campaigns",status="2xx",role="control"\} 1/,
    );
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).not.toContain(key);
  });
});
