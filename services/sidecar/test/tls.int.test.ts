// An https:// upstream (the egress placement in front of a provider): the real binary, a TLS
// server with a self-signed certificate trusted through NODE_EXTRA_CA_CERTS, verification on.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import { send, sha, sleep } from './helpers.js';

const BIN = fileURLToPath(new URL('../../shadowplane/bin/shadowplane.mjs', import.meta.url));
const CERT = fileURLToPath(new URL('./fixtures/tls/upstream.crt', import.meta.url));
const KEY = fileURLToPath(new URL('./fixtures/tls/upstream.key', import.meta.url));
const REPLY = Buffer.from(
  JSON.stringify({
    id: 'x',
    model: 'm',
    choices: [{ message: { role: 'assistant', content: '4' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 5, completion_tokens: 1 },
  }),
);

interface Running {
  child: ChildProcess;
  url: string;
}

async function startSidecar(upstream: string, env: Record<string, string>): Promise<Running> {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'sidecar',
      '--listen',
      '127.0.0.1:0',
      '--ops-listen',
      '127.0.0.1:0',
      '--upstream',
      upstream,
      '--nats',
      sharedNatsUrl(),
      '--prefix',
      randomPrefix('sctls'),
      '--sample',
      '1',
    ],
    {
      env: { ...process.env, SHADOWPLANE_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 30_000;
  while (!out.includes('\n')) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`sidecar did not start: ${out}`);
    await sleep(50);
  }
  return { child, url: (JSON.parse(out.split('\n')[0]!) as { url: string }).url };
}

async function stop(r: Running | undefined): Promise<void> {
  if (!r || r.child.exitCode !== null) return;
  const exited = new Promise((x) => r.child.once('exit', x));
  r.child.kill('SIGTERM');
  await exited;
}

describe('sidecar to an https upstream', () => {
  let server: Server;
  let upstream: string;
  let tlsConnections = 0;
  const seen: { host: string | undefined; body: Buffer }[] = [];
  let trusted: Running;
  let untrusted: Running;

  beforeAll(async () => {
    server = createServer(
      { key: readFileSync(KEY), cert: readFileSync(CERT), keepAliveTimeout: 10_000 },
      (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks);
          seen.push({ host: req.headers.host, body });
          if (body.includes('"stream":true')) {
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            res.write('data: {"i":0}\n\n');
            setTimeout(() => res.end('data: [DONE]\n\n'), 20);
            return;
          }
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(REPLY);
        });
      },
    );
    server.on('secureConnection', () => tlsConnections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    upstream = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    trusted = await startSidecar(upstream, { NODE_EXTRA_CA_CERTS: CERT });
    untrusted = await startSidecar(upstream, {});
  });

  afterAll(async () => {
    await stop(trusted);
    await stop(untrusted);
    server?.close();
  });

  it('relays JSON and SSE over TLS byte for byte, with the upstream host, on one kept-alive TLS connection', async () => {
    const body = Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'What is 2+2?' }] }));
    const before = tlsConnections;
    const a = await send(trusted.url, {
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const b = await send(trusted.url, {
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"m","stream":true,"messages":[]}',
    });
    expect(a.status).toBe(200);
    expect(sha(a.body)).toBe(sha(REPLY));
    expect(sha(seen.at(-2)!.body)).toBe(sha(body));
    expect(seen.at(-2)!.host).toBe(new URL(upstream).host);
    expect(b.complete).toBe(true);
    expect(b.body.toString()).toBe('data: {"i":0}\n\ndata: [DONE]\n\n');
    expect(tlsConnections - before).toBe(1);
  });

  it('verifies the certificate: an upstream it does not trust is a 502, and nothing is sent to it', async () => {
    const count = seen.length;
    const r = await send(untrusted.url, {
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"m","messages":[]}',
    });
    expect(r.status).toBe(502);
    expect(JSON.parse(r.body.toString()).error.code).toBe('upstream_unavailable');
    expect(seen.length).toBe(count);
  });
});
