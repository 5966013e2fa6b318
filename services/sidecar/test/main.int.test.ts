// The real binary: `shadowplane sidecar` as a child process.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freezeProcess, randomPrefix, sharedNatsUrl, thawProcess } from '@shadowplane/testkit';
import { send, sleep, startUpstream } from './helpers.js';

const BIN = fileURLToPath(new URL('../../shadowplane/bin/shadowplane.mjs', import.meta.url));

function run(
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; stdout: () => string; stderr: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, 'sidecar', ...args], {
    env: { ...process.env, SHADOWPLANE_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
    const p = run([
      '--listen',
      '127.0.0.1:0',
      '--ops-listen',
      '127.0.0.1:0',
      '--upstream',
      up.url,
      '--nats',
      sharedNatsUrl(),
      '--prefix',
      randomPrefix('scm'),
      '--sample',
      '1',
    ]);
    try {
      const deadline = Date.now() + 30_000;
      while (!p.stdout().includes('\n') && Date.now() < deadline) await sleep(50);
      const line = JSON.parse(p.stdout().split('\n')[0]!) as {
        event: string;
        role: string;
        url: string;
        ops_url: string;
      };
      expect(line).toMatchObject({ event: 'listening', role: 'sidecar' });
      expect((await fetch(`${line.ops_url}/readyz`)).status).toBe(200);
      const inflight = send(line.url, {
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json' },
        body: '{"model":"m","stream":true,"messages":[]}',
      });
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

  // A router that opens many connections at once (a deploy, a scale-up) while the sidecar's event
  // loop is busy fills the listener's accept queue; past it the kernel drops handshakes, and each
  // waits ~1 s for a retransmit. The sidecar is frozen here so that nothing is accepted at all and
  // the queue alone decides how many handshakes complete. The kernel caps every backlog at
  // net.core.somaxconn (4096 on current kernels) and admits backlog + 1 (sk_acceptq_is_full is
  // "more than the backlog"); a few more may complete when their SYNs were taken before the queue
  // filled, so the 511 case asserts a range.
  const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));
  it.each([
    { label: 'the default, 4096', backlog: undefined, atLeast: Math.min(1000, Math.min(4096, somaxconn) + 1) },
    { label: "Node's default, 511", backlog: '511', atLeast: Math.min(512, somaxconn + 1) },
  ])(
    'with its event loop frozen, 1,000 connections complete their handshakes as the accept backlog allows ($label)',
    async ({ backlog, atLeast }) => {
      const up = await startUpstream((_req, res) => res.end('ok'));
      const p = run(
        [
          '--listen',
          '127.0.0.1:0',
          '--ops-listen',
          '127.0.0.1:0',
          '--upstream',
          up.url,
          '--nats',
          sharedNatsUrl(),
          '--prefix',
          randomPrefix('scb'),
          '--sample',
          '0',
        ],
        backlog ? { SHADOWPLANE_SIDECAR_LISTEN_BACKLOG: backlog } : {},
      );
      const socks: Socket[] = [];
      try {
        const deadline = Date.now() + 30_000;
        while (!p.stdout().includes('\n') && Date.now() < deadline) await sleep(50);
        const { url } = JSON.parse(p.stdout().split('\n')[0]!) as { url: string };
        const port = Number(new URL(url).port);
        await freezeProcess(p.child);
        let connected = 0;
        for (let i = 0; i < 1000; i++) {
          const s = connect({ host: '127.0.0.1', port });
          s.on('error', () => undefined);
          s.once('connect', () => connected++);
          socks.push(s);
        }
        // the handshakes the queue holds complete at once; wait for them (however loaded the
        // machine), then a little longer for any that should not
        const until = Date.now() + 10_000;
        while (connected < atLeast && Date.now() < until) await sleep(20);
        await sleep(300);
        if (atLeast >= 1000) expect(connected).toBe(1000);
        else {
          expect(connected).toBeGreaterThanOrEqual(atLeast);
          expect(connected).toBeLessThan(1000);
        }
        thawProcess(p.child);
        // once running again, the sidecar serves on a fresh connection
        expect((await send(url, { path: '/health-check', headers: {} })).status).toBe(200);
      } finally {
        for (const s of socks) s.destroy();
        thawProcess(p.child);
        p.child.kill('SIGKILL');
        await up.close();
      }
    },
  );
});
