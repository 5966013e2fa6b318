// The real binary: `shadowplane sidecar` as a child process.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import { send, sleep, startUpstream } from './helpers.js';

const BIN = fileURLToPath(new URL('../../shadowplane/bin/shadowplane.mjs', import.meta.url));

function run(args: string[], env: Record<string, string> = {}): { child: ChildProcess; stdout: () => string; stderr: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, 'sidecar', ...args], { env: { ...process.env, SHADOWPLANE_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, stdout: () => out, stderr: () => err, exit };
}

describe('shadowplane sidecar (binary)', () => {
  it('bad configuration exits 78 naming the key', async () => {
    const p = run(['--upstream', 'http://127.0.0.1:1', '--sample', '7']);
    expect(await p.exit).toBe(78);
    expect(p.stderr()).toContain('SHADOWPLANE_SIDECAR_SAMPLE');
  });

  it('prints the listening line, proxies, and on SIGTERM finishes the in-flight stream before exiting 0', async () => {
    const up = await startUpstream(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 6; i++) {
        res.write(`data: {"i":${i}}\n\n`);
        await sleep(100);
      }
      res.end('data: [DONE]\n\n');
    });
    const p = run(['--listen', '127.0.0.1:0', '--ops-listen', '127.0.0.1:0', '--upstream', up.url, '--nats', sharedNatsUrl(), '--prefix', randomPrefix('scm'), '--sample', '1']);
    try {
      const deadline = Date.now() + 30_000;
      while (!p.stdout().includes('\n') && Date.now() < deadline) await sleep(50);
      const line = JSON.parse(p.stdout().split('\n')[0]!) as { event: string; role: string; url: string; ops_url: string };
      expect(line).toMatchObject({ event: 'listening', role: 'sidecar' });
      expect((await fetch(`${line.ops_url}/readyz`)).status).toBe(200);
      const inflight = send(line.url, { path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: '{"model":"m","stream":true,"messages":[]}' });
      await sleep(150);
      p.child.kill('SIGTERM');
      const r = await inflight;
      expect(r.status).toBe(200);
      expect(r.complete).toBe(true);
      expect(r.body.toString()).toContain('data: [DONE]');
      expect(await p.exit).toBe(0);
    } finally {
      if (p.child.exitCode === null) p.child.kill('SIGKILL');
      await up.close();
    }
  });
});
