// `shadowplane up` as a real process: the whole stack from examples/config on free ports.
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = `${ROOT}services/shadowplane/bin/shadowplane.mjs`;

function up(args: string[]) {
  const child = spawn(process.execPath, [BIN, 'up', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const until = (s: string, timeoutMs: number) =>
    new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no '${s}' within ${timeoutMs} ms:\n${out}\n${err}`)), timeoutMs);
      const check = () => {
        if (out.includes(s)) {
          clearTimeout(t);
          resolve();
        }
      };
      child.stdout.on('data', check);
      void exited.then(() => {
        clearTimeout(t);
        if (!out.includes(s)) reject(new Error(`exited before '${s}':\n${out}\n${err}`));
      });
      check();
    });
  return { child, exited, until, out: () => out, err: () => err };
}

describe('shadowplane up', () => {
  it(
    'starts NATS, provider-sim and every role from examples/config, launches its campaign, prints exports and a ready line, and drains on SIGTERM',
    { timeout: 240_000 },
    async () => {
      const p = up(['--ephemeral', '--config', join(ROOT, 'examples', 'config')]);
      await p.until('shadowplane up: ready', 180_000);
      const url = /^export SHADOWPLANE_URL=(\S+)$/m.exec(p.out())![1]!;
      const key = /^export SHADOWPLANE_API_KEY=(\S+)$/m.exec(p.out())![1]!;
      const sidecar = /^sidecar\s+(\S+)/m.exec(p.out())![1]!;
      // shadowctl's view of the stack: the folder's campaign, running
      const list = (await (
        await fetch(`${url}/v1/campaigns`, { headers: { authorization: `Bearer ${key}` } })
      ).json()) as { campaigns: { name: string; state: string }[] };
      expect(list.campaigns.map((c) => [c.name, c.state])).toEqual([['gsm8k tier check', 'running']]);
      // traffic through the sidecar reaches provider-sim and is captured
      const res = await fetch(`${sidecar}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: 'Bearer sk-client',
          'x-shadow-call-type': 'chat',
        },
        body: JSON.stringify({ model: 'sim-large', messages: [{ role: 'user', content: 'hello' }] }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-shadow-capture')).toBe('queued');
      await res.text();

      p.child.kill('SIGTERM');
      expect(await p.exited).toBe(0);
      expect(p.out()).toContain('shadowplane up: stopped');
      await expect(fetch(`${url}/healthz`)).rejects.toThrow(); // control is gone
      await expect(fetch(`${sidecar}/`)).rejects.toThrow(); // and the sidecar
    },
  );

  it('refuses a config folder with a bad providers file (78), naming the field, and starts nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'up-cfg-'));
    cpSync(join(ROOT, 'examples', 'config'), dir, { recursive: true });
    writeFileSync(
      join(dir, 'providers.yaml'),
      'providers:\n  - id: sim\n    base_url: not-a-url\n    api: openai.chat\n',
    );
    const p = up(['--ephemeral', '--config', dir]);
    expect(await p.exited).toBe(78);
    expect(p.err()).toContain('SHADOWPLANE_PROVIDERS_FILE[0.base_url]');
    expect(p.out()).not.toContain('nats ');
  });
});
