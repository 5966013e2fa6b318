// The sidecar's own HTTP/1.1 framing (http1.ts, proxy.ts) over real loopback sockets: raw client
// bytes in, raw upstream bytes out, so every framing decision is visible.
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Agent } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import type { SidecarHandle } from '../src/index.js';
import { send, sleep, startTestSidecar, startUpstream, testConfig, waitFor, type TestUpstream } from './helpers.js';
import { RawClient, errorCode, hdr, parseResponses } from './raw-client.js';

const CRLFCRLF = Buffer.from('\r\n\r\n');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
// short drain so a stop() never waits on an exchange a failing test left stuck
const ENV = { SHADOWPLANE_SIDECAR_DRAIN_TIMEOUT_MS: '200', SHADOWPLANE_SIDECAR_FLUSH_TIMEOUT_MS: '200' };

// ---------------------------------------------------------------------------------------------
// raw upstream

interface RawConn {
  id: number;
  sock: Socket;
  chunks: Buffer[];
  requests: number;
  closed: boolean;
  /** a chunked request was seen: later bytes are only recorded */
  opaque: boolean;
}

interface RawReq {
  conn: RawConn;
  /** 0 for the first request on its connection */
  index: number;
  method: string;
  path: string;
  head: string;
  body: Buffer;
}

interface RawUpstream {
  url: string;
  conns: RawConn[];
  requests: RawReq[];
  /** bytes received on all connections */
  received(): number;
  close(): Promise<void>;
}

/** An upstream on `node:net` that parses request heads (Content-Length bodies) and lets `script` write any bytes back. */
async function startRawUpstream(script: (req: RawReq, sock: Socket) => void): Promise<RawUpstream> {
  const conns: RawConn[] = [];
  const requests: RawReq[] = [];
  const server: Server = createServer((sock) => {
    const c: RawConn = { id: conns.length, sock, chunks: [], requests: 0, closed: false, opaque: false };
    conns.push(c);
    let buf = Buffer.alloc(0);
    sock.on('error', () => undefined);
    sock.on('close', () => (c.closed = true));
    sock.on('data', (d: Buffer) => {
      c.chunks.push(d);
      if (c.opaque) return;
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const he = buf.indexOf(CRLFCRLF);
        if (he === -1) return;
        const head = buf.toString('latin1', 0, he);
        const cl = /\r\ncontent-length: *(\d+)/i.exec(head);
        const n = cl ? Number(cl[1]) : 0;
        if (buf.length < he + 4 + n) return;
        const [method = '', path = ''] = head.split(' ');
        const req: RawReq = {
          conn: c,
          index: c.requests++,
          method,
          path,
          head,
          body: buf.subarray(he + 4, he + 4 + n),
        };
        buf = buf.subarray(he + 4 + n);
        if (/\r\ntransfer-encoding:/i.test(head)) c.opaque = true;
        requests.push(req);
        script(req, sock);
        if (c.opaque) return;
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    conns,
    requests,
    received: () => conns.reduce((s, c) => s + c.chunks.reduce((t, b) => t + b.length, 0), 0),
    close: () =>
      new Promise<void>((r) => {
        for (const c of conns) c.sock.destroy();
        server.close(() => r());
      }),
  };
}

const FLOOD_HINTS = 512;
let floodFlushedAt = 0;
const ok = (sock: Socket, body: string, extra = '') =>
  sock.write(`HTTP/1.1 200 OK\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`);
const CLOSE_BODY = randomBytes(100 * 1024);
const PAD_LINE = `X-Pad: ${'p'.repeat(1014)}\r\n`; // 1 KiB

function rawScript(req: RawReq, sock: Socket): void {
  switch (req.path) {
    case '/garbage-status':
      sock.write('NOT HTTP AT ALL\r\nX: y\r\n\r\n');
      return;
    case '/garbage-close':
      sock.end('garbage\r\n');
      return;
    case '/switch':
      sock.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n');
      return;
    case '/huge-head':
      sock.write(`HTTP/1.1 200 OK\r\n${PAD_LINE.repeat(200)}content-length: 0\r\n\r\n`);
      return;
    case '/big-head-split':
      // 60 KiB without the blank line, then 20 KiB ending it: 80 KiB in all
      sock.write(`HTTP/1.1 200 OK\r\n${PAD_LINE.repeat(60)}`);
      setTimeout(() => sock.write(`${PAD_LINE.repeat(20)}content-length: 0\r\n\r\n`), 30);
      return;
    case '/cl-te':
      sock.write(
        'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n',
      );
      return;
    case '/close-delimited':
      sock.write('HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\n\r\n');
      sock.write(CLOSE_BODY.subarray(0, 60_000));
      setTimeout(() => sock.end(CLOSE_BODY.subarray(60_000)), 20);
      return;
    case '/http10':
      sock.end('HTTP/1.0 200 OK\r\ncontent-type: text/plain\r\n\r\nold-style body');
      return;
    case '/interim-flood': {
      // 16 MiB of 103s, then the answer once they are all flushed to the kernel
      const hint = `HTTP/1.1 103 Early Hints\r\nLink: <${'l'.repeat(32 * 1024)}>; rel=preload\r\n\r\n`;
      for (let i = 0; i < FLOOD_HINTS - 1; i++) sock.write(hint);
      sock.write(hint, () => {
        floodFlushedAt = performance.now();
        ok(sock, 'done');
      });
      return;
    }
    case '/interim-close':
      // the 1xx says the connection closes; the final answer does not repeat it
      sock.write('HTTP/1.1 103 Early Hints\r\nConnection: close\r\nLink: </a.css>\r\n\r\n');
      ok(sock, `conn=${req.conn.id}`);
      return;
    case '/early-hints':
      sock.write(
        'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\nConnection: x-hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=5\r\nLink: </f.woff2>; rel=preload\r\n\r\n',
      );
      setTimeout(() => ok(sock, 'final'), 10);
      return;
    case '/bad-chunk-head':
      sock.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhelloXX\r\n0\r\n\r\n');
      return;
    case '/bad-chunk-mid':
      sock.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n');
      setTimeout(() => sock.write('zz\r\n0\r\n\r\n'), 50);
      return;
    case '/ka-hint':
      ok(sock, 'ok', 'keep-alive: timeout=1\r\n');
      return;
    case '/stale-2':
      // a connection that served before "was closed while idle": it dies on the next request
      if (req.index > 0) sock.destroy();
      else ok(sock, `echo:${req.body.toString('latin1')}`);
      return;
    case '/resp-obs-fold':
      sock.write('HTTP/1.1 200 OK\r\nX: a\r\n b\r\ncontent-length: 0\r\n\r\n');
      return;
    case '/resp-two-lengths':
      sock.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nok!');
      return;
    case '/resp-te-gzip':
      sock.write('HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\nxxxx');
      return;
    case '/resp-bare-lf':
      sock.write('HTTP/1.1 200 OK\ncontent-length: 0\r\n\r\n');
      return;
    case '/resp-space-colon':
      sock.write('HTTP/1.1 200 OK\r\ncontent-length : 0\r\n\r\n');
      return;
    case '/resp-connection-cl':
      // removing the Content-Length the Connection header names would leave the body unframed
      sock.write('HTTP/1.1 200 OK\r\nConnection: Content-Length\r\ncontent-length: 2\r\n\r\nok');
      return;
    case '/resp-bad-interim':
      sock.write('HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\nBad Field: x\r\n\r\n');
      setTimeout(() => ok(sock, 'final'), 10);
      return;
    case '/no-reason':
      sock.write('HTTP/1.1 200\r\ncontent-length: 2\r\n\r\nok');
      return;
    case '/two-responses':
      // a second, unsolicited response in the same packet must never reach the next request
      sock.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nevil');
      return;
    case '/204-with-body':
      sock.write('HTTP/1.1 204 No Content\r\ncontent-length: 4\r\n\r\nevil');
      return;
    case '/upstream-close':
      sock.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok');
      return;
    case '/hold':
      return;
    default:
      ok(sock, `${req.method} ${req.path} conn=${req.conn.id}`);
  }
}

/** GETs `path`, reads nothing for `stallMs`, then reads in small steps; returns the body. */
async function readSlowly(
  baseUrl: string,
  path: string,
  size: number,
  stallMs: number,
): Promise<{ body: Buffer; stallEnd: number }> {
  const u = new URL(baseUrl);
  const sock = connect({ host: u.hostname, port: Number(u.port) });
  await once(sock, 'connect');
  sock.pause();
  sock.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  await sleep(stallMs);
  const stallEnd = performance.now();
  const chunks: Buffer[] = [];
  let total = 0;
  let bodyStart = -1;
  try {
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`only ${total} bytes arrived`)), 10_000);
      sock.on('error', reject);
      sock.on('close', () => reject(new Error(`closed after ${total} bytes`)));
      sock.on('data', (d: Buffer) => {
        chunks.push(d);
        total += d.length;
        if (bodyStart === -1) {
          const i = Buffer.concat(chunks).indexOf(CRLFCRLF);
          if (i !== -1) bodyStart = i + 4;
        }
        if (bodyStart !== -1 && total - bodyStart >= size) {
          clearTimeout(t);
          resolve();
          return;
        }
        if (chunks.length % 16 === 0) {
          sock.pause();
          setTimeout(() => sock.resume(), 2);
        }
      });
      sock.resume();
    });
  } finally {
    sock.destroy();
  }
  const [r] = parseResponses(Buffer.concat(chunks));
  expect(r!.status).toBe(200);
  return { body: r!.body, stallEnd };
}

/**
 * Lets a test observe an exception thrown out of a socket callback (which would kill the
 * sidecar process) without vitest reporting it as an unhandled error.
 */
async function catchingUncaught<T>(fn: (caught: Error[]) => Promise<T>): Promise<T> {
  const caught: Error[] = [];
  const saved = process.listeners('uncaughtException');
  process.removeAllListeners('uncaughtException');
  const mine = (e: Error) => caught.push(e);
  process.on('uncaughtException', mine);
  try {
    return await fn(caught);
  } finally {
    process.off('uncaughtException', mine);
    for (const l of saved) process.on('uncaughtException', l);
  }
}

// ---------------------------------------------------------------------------------------------

describe('sidecar HTTP/1.1 core over loopback', () => {
  let raw: RawUpstream;
  let rawSc: SidecarHandle;
  let node: TestUpstream;
  let nodeSc: SidecarHandle;
  const BIG = randomBytes(32 * 1024 * 1024);
  let bigFinishedAt = 0;

  beforeAll(async () => {
    raw = await startRawUpstream(rawScript);
    node = await startUpstream((req, res, inc) => {
      if (req.url === '/chunked-reply') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('part1 ');
        res.write('part2 ');
        return res.end('part3');
      }
      if (req.url === '/hold') return; // never answers
      if (req.url === '/stall-body') {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 10 });
        return res.write('abc');
      }
      if (req.url === '/big8') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 8 * 1024 * 1024 });
        return res.end(BIG.subarray(0, 8 * 1024 * 1024));
      }
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': BIG.length });
        res.on('finish', () => (bigFinishedAt = performance.now()));
        return res.end(BIG);
      }
      const body = `${req.method} ${req.url} ${req.body.toString('latin1')}`;
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
      // closes the connection right after each response, without saying so
      if (req.url.startsWith('/destroy-after')) return res.end(body, () => inc.socket.destroy());
      return res.end(body);
    });
    [rawSc, nodeSc] = await Promise.all([
      startTestSidecar(testConfig(raw.url, sharedNatsUrl(), randomPrefix('h1r'), [], ENV)),
      startTestSidecar(testConfig(node.url, sharedNatsUrl(), randomPrefix('h1n'), [], ENV)),
    ]);
  });

  afterAll(async () => {
    await Promise.all([rawSc?.stop(), nodeSc?.stop()]);
    await Promise.all([raw?.close(), node?.close()]);
  });

  describe('refused requests: an error answer, the connection closed, nothing forwarded', () => {
    /** Sends `bytes` on a fresh connection; expects one error answer, a close, and no upstream byte. */
    async function expectRefused(bytes: string, status = 400, code = 'malformed_http', waitMs = 3000): Promise<void> {
      const before = raw.received();
      const c = await RawClient.open(rawSc.url);
      try {
        c.write(bytes);
        await c.closedByServer(waitMs);
        const rs = parseResponses(c.data, { eof: true });
        expect(rs).toHaveLength(1);
        expect(rs[0]!.status).toBe(status);
        expect(errorCode(rs[0]!)).toBe(code);
        expect(hdr(rs[0]!, 'connection')).toEqual(['close']);
        await sleep(30);
        expect(raw.received()).toBe(before);
      } finally {
        c.destroy();
      }
    }

    it('a valid request on the same sidecar does reach the upstream (the recorder works)', async () => {
      const before = raw.received();
      const c = await RawClient.open(rawSc.url);
      c.write('GET /hello HTTP/1.1\r\nHost: x\r\n\r\n');
      const [r] = await c.responses(1);
      expect(r!.status).toBe(200);
      expect(r!.body.toString()).toMatch(/^GET \/hello conn=\d+$/);
      expect(raw.received()).toBeGreaterThan(before);
      c.destroy();
    });

    const SMUGGLED = 'GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n';
    it.each([
      [
        'Content-Length with Transfer-Encoding',
        `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`,
      ],
      [
        'Transfer-Encoding with Content-Length',
        `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n0\r\n\r\n${SMUGGLED}`,
      ],
      [
        'two different Content-Lengths',
        `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 40\r\n\r\nhello${SMUGGLED}`,
      ],
      [
        'a Content-Length list with different values',
        `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 40\r\n\r\nhello${SMUGGLED}`,
      ],
      ['a signed Content-Length', `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\nhello`],
      ['an empty Content-Length', `POST / HTTP/1.1\r\nHost: x\r\nContent-Length:\r\n\r\n`],
      [
        'Transfer-Encoding: chunked twice',
        `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      ],
      [
        'an empty Transfer-Encoding',
        `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\r\nContent-Length: 5\r\n\r\nhello`,
      ],
      ['Transfer-Encoding in HTTP/1.0', `POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`],
      [
        'obs-fold hiding a Transfer-Encoding',
        `POST / HTTP/1.1\r\nHost: x\r\nX: y\r\n Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello`,
      ],
      [
        'whitespace before the colon',
        `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\nContent-Length: 5\r\n\r\nhello`,
      ],
      [
        'a bare LF between field lines',
        `POST / HTTP/1.1\r\nHost: x\r\nX: y\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello`,
      ],
      ['a bare CR in a field value', `GET / HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n`],
      ['a NUL in a field value', `GET / HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n`],
      ['no Host in HTTP/1.1', `GET / HTTP/1.1\r\nX: y\r\n\r\n`],
      ['two Host fields', `GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n`],
      // removing the fields a Connection header names must not strip the framing: the body would
      // reach the upstream unframed and be read as a second request
      [
        'a Connection header naming Content-Length',
        `POST /public HTTP/1.1\r\nHost: x\r\nContent-Length: ${SMUGGLED.length}\r\nConnection: content-length\r\n\r\n${SMUGGLED}`,
      ],
      [
        'a Connection header naming Transfer-Encoding',
        `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive, Transfer-Encoding\r\n\r\n0\r\n\r\n`,
      ],
      ['a Connection header naming Host', `GET / HTTP/1.1\r\nHost: x\r\nConnection: host\r\n\r\n`],
      ['a space inside the request target', `GET /a b HTTP/1.1\r\nHost: x\r\n\r\n`],
      ['an authority-form target on GET', `GET example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n`],
      ['the HTTP/2 preface', `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`],
      ['HTTP/1.2', `GET / HTTP/1.2\r\nHost: x\r\n\r\n`],
      [
        'invalid chunk framing in the first write',
        `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX\r\n0\r\n\r\n${SMUGGLED}`,
      ],
      [
        'a bare LF closing a chunk',
        `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\n0\r\n\r\n${SMUGGLED}`,
      ],
      [
        'a chunk size of 16 hex digits',
        `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0000000000000005\r\nhello\r\n0\r\n\r\n`,
      ],
    ])('%s', async (_name, bytes) => {
      await expectRefused(bytes);
    });

    it('invalid chunk framing mid-body: 400, closed, and the upstream request is aborted before the bad bytes', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write('POST /hold HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n');
      expect(
        await waitFor(
          () => raw.requests.some((r) => r.path === '/hold' && Buffer.concat(r.conn.chunks).includes('hello\r\n')),
          3000,
        ),
      ).toBe(true);
      const up = raw.requests.findLast((r) => r.path === '/hold')!.conn;
      c.write(`zz\r\n0\r\n\r\n${SMUGGLED}`);
      await c.closedByServer();
      const [r] = parseResponses(c.data, { eof: true });
      expect(r!.status).toBe(400);
      expect(errorCode(r!)).toBe('malformed_http');
      expect(await waitFor(() => up.closed, 2000)).toBe(true);
      const seen = Buffer.concat(up.chunks).toString('latin1');
      expect(seen).not.toContain('zz');
      expect(seen).not.toContain('smuggled');
      c.destroy();
    });

    it('Transfer-Encoding with a coding other than chunked: 501 not_implemented, closed, nothing forwarded', async () => {
      await expectRefused(
        'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n',
        501,
        'not_implemented',
      );
    });

    it('chunked not the final coding: refused, closed, nothing forwarded', async () => {
      const before = raw.received();
      const c = await RawClient.open(rawSc.url);
      c.write(`POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n${SMUGGLED}`);
      await c.closedByServer();
      const rs = parseResponses(c.data, { eof: true });
      expect(rs).toHaveLength(1);
      expect(rs[0]!.status).toBeGreaterThanOrEqual(400);
      expect(raw.received()).toBe(before);
      c.destroy();
    });

    // RFC 9112 §6.3: chunked present but not final in a request → 400 and close
    it('chunked not the final coding is answered 400 malformed_http (RFC 9112 §6.3), not 501', async () => {
      await expectRefused('POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n');
    });

    it('a 17 KiB head in one write: 431 headers_too_large, closed', async () => {
      await expectRefused(
        `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
        431,
        'headers_too_large',
      );
    });

    it('a 17 KiB head that has not ended yet: 431 headers_too_large, closed', async () => {
      await expectRefused(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}`, 431, 'headers_too_large');
    });

    it('a head just under 16 KiB is proxied', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write(`GET /near-limit HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(16 * 1024 - 100)}\r\n\r\n`);
      const [r] = await c.responses(1);
      expect(r!.status).toBe(200);
      c.destroy();
    });

    it('Expect: something-else: 417 expectation_failed, closed, nothing forwarded', async () => {
      await expectRefused(
        'POST / HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nContent-Length: 5\r\n\r\nhello',
        417,
        'expectation_failed',
      );
    });

    // every Expect line counts, not only the last one
    it('an unsupported expectation on its own Expect line is refused like a single one', async () => {
      await expectRefused(
        'POST / HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello',
        417,
        'expectation_failed',
        500,
      );
    });

    it('CONNECT is refused, closed, nothing forwarded', async () => {
      const before = raw.received();
      const c = await RawClient.open(rawSc.url);
      c.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
      await c.closedByServer();
      expect(parseResponses(c.data, { eof: true })[0]!.status).toBeGreaterThanOrEqual(400);
      expect(raw.received()).toBe(before);
      c.destroy();
    });

    // CONNECT is refused by method before its authority-form target is looked at
    it('CONNECT with its authority-form target is answered 501 not_implemented', async () => {
      await expectRefused('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 501, 'not_implemented');
    });
  });

  describe('framing and keep-alive with a node:http upstream', () => {
    const PIPELINE =
      'GET /p1 HTTP/1.1\r\nHost: x\r\n\r\n' +
      'POST /p2 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello' +
      'POST /p3 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n3;ext=1\r\ncde\r\n0\r\nX-Trailer: t\r\n\r\n';
    const PIPELINE_BODIES = ['GET /p1 ', 'POST /p2 hello', 'POST /p3 abcde'];

    it('answers three pipelined requests sent in one write, in order, with the right bodies', async () => {
      const c = await RawClient.open(nodeSc.url);
      c.write(PIPELINE);
      const rs = await c.responses(3);
      expect(rs.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(rs.map((r) => r.body.toString('latin1'))).toEqual(PIPELINE_BODIES);
      expect(c.ended).toBe(false);
      // the connection is still usable afterwards
      c.write('GET /p4 HTTP/1.1\r\nHost: x\r\n\r\n');
      expect((await c.responses(4))[3]!.body.toString()).toBe('GET /p4 ');
      c.destroy();
    });

    it('answers the same pipeline in order when it arrives in 1–7-byte writes', async () => {
      let seed = 7;
      const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
      const bytes = Buffer.from(PIPELINE, 'latin1');
      const c = await RawClient.open(nodeSc.url);
      for (let i = 0; i < bytes.length;) {
        const n = 1 + (next() % 7);
        c.write(bytes.subarray(i, i + n));
        i += n;
        await new Promise((r) => setImmediate(r));
      }
      const rs = await c.responses(3);
      expect(rs.map((r) => r.body.toString('latin1'))).toEqual(PIPELINE_BODIES);
      c.destroy();
    });

    it('answers 20 pipelined requests (20 KiB, more than the 16 KiB stash) in order', async () => {
      const c = await RawClient.open(nodeSc.url);
      let all = '';
      for (let i = 0; i < 20; i++) all += `GET /n${i} HTTP/1.1\r\nHost: x\r\nX-Pad: ${'p'.repeat(1000)}\r\n\r\n`;
      c.write(all);
      const rs = await c.responses(20);
      expect(rs.map((r) => r.body.toString())).toEqual(Array.from({ length: 20 }, (_, i) => `GET /n${i} `));
      c.destroy();
    });

    it('does not wait for a body after a HEAD response: the pipelined GET after it is answered', async () => {
      const c = await RawClient.open(nodeSc.url);
      c.write('HEAD /h HTTP/1.1\r\nHost: x\r\n\r\nGET /after-head HTTP/1.1\r\nHost: x\r\n\r\n');
      const rs = await c.responses(2, ['HEAD', 'GET']);
      expect(rs[0]!.status).toBe(200);
      expect(rs[0]!.body.length).toBe(0);
      expect(rs[1]!.body.toString()).toBe('GET /after-head ');
      c.destroy();
    });

    it('HTTP/1.0 client, length-framed upstream answer: content-length kept, connection: close, connection closed', async () => {
      const c = await RawClient.open(nodeSc.url);
      c.write('POST /old HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc');
      await c.closedByServer();
      const [r] = parseResponses(c.data, { eof: true });
      expect(r!.status).toBe(200);
      expect(hdr(r!, 'content-length')).toEqual(['13']);
      expect(hdr(r!, 'connection')).toEqual(['close']);
      expect(r!.body.toString()).toBe('POST /old abc');
      c.destroy();
    });

    it('HTTP/1.0 client, chunked upstream answer: dechunked, close-delimited, connection closed', async () => {
      const c = await RawClient.open(nodeSc.url);
      c.write('GET /chunked-reply HTTP/1.0\r\n\r\n');
      await c.closedByServer();
      const [r] = parseResponses(c.data, { eof: true });
      expect(r!.status).toBe(200);
      expect(hdr(r!, 'transfer-encoding')).toEqual([]);
      expect(hdr(r!, 'content-length')).toEqual([]);
      expect(hdr(r!, 'connection')).toEqual(['close']);
      expect(r!.body.toString()).toBe('part1 part2 part3');
      c.destroy();
    });

    it('Expect: 100-continue gets "HTTP/1.1 100 Continue" before the body is sent, then the final answer', async () => {
      const c = await RawClient.open(nodeSc.url);
      c.write('POST /expect HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n');
      await c.until(() => c.text.length >= 25, 2000, '100 Continue');
      expect(c.text).toBe('HTTP/1.1 100 Continue\r\n\r\n');
      await sleep(50);
      expect(c.text).toBe('HTTP/1.1 100 Continue\r\n\r\n');
      c.write('hello');
      const rs = await c.responses(2);
      expect(rs.map((r) => r.status)).toEqual([100, 200]);
      expect(rs[1]!.body.toString()).toBe('POST /expect hello');
      c.destroy();
    });

    it('Expect: 100-continue on a request without a body gets no 100', async () => {
      const c = await RawClient.open(nodeSc.url);
      c.write('GET /expect-nobody HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n');
      const rs = await c.responses(1);
      expect(rs.map((r) => r.status)).toEqual([200]);
      c.destroy();
    });

    it('an upstream that closed its keep-alive connection while idle: the next request gets 200, not 502', async () => {
      const prev = node.server.keepAliveTimeout;
      node.server.keepAliveTimeout = 50;
      try {
        const c = await RawClient.open(nodeSc.url);
        c.write('GET /idle-1 HTTP/1.1\r\nHost: x\r\n\r\n');
        await c.responses(1);
        await sleep(200);
        c.write('POST /idle-2 HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody');
        const rs = await c.responses(2);
        expect(rs[1]!.status).toBe(200);
        expect(rs[1]!.body.toString()).toBe('POST /idle-2 body');
        c.destroy();
      } finally {
        node.server.keepAliveTimeout = prev;
      }
    });

    it('an upstream that drops each connection right after its response (no connection: close): 30 back-to-back requests all get 200', async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        for (let i = 0; i < 30; i++) {
          const r = await send(nodeSc.url, { path: `/destroy-after-${i}`, body: `b${i}`, agent });
          expect(r.status, `request ${i}`).toBe(200);
          expect(r.body.toString()).toBe(`POST /destroy-after-${i} b${i}`);
        }
      } finally {
        agent.destroy();
      }
    });

    // RFC 9110 §8.6 lets a recipient reject "5, 5" or repeated equal lines; llhttp and nginx do,
    // so the sidecar does too (the differential test against llhttp found the difference)
    it('repeated equal Content-Length lines and a list of equal values are refused with 400, nothing forwarded', async () => {
      for (const cl of ['Content-Length: 5\r\nContent-Length: 5', 'Content-Length: 5, 5']) {
        const c = await RawClient.open(nodeSc.url);
        c.write(`POST /dup HTTP/1.1\r\nHost: x\r\n${cl}\r\n\r\nhello`);
        const [r] = await c.responses(1, [], 2000).catch(() => parseResponses(c.data, { eof: true }));
        c.destroy();
        expect(r?.status).toBe(400);
      }
    });

    it('a client reading a 32 MiB body slowly receives it intact, and the upstream is held back meanwhile', async () => {
      bigFinishedAt = 0;
      const { body, stallEnd } = await readSlowly(nodeSc.url, '/big', BIG.length, 400);
      expect(body.length).toBe(BIG.length);
      expect(sha(body)).toBe(sha(BIG));
      // the upstream could not finish writing while the client read nothing
      expect(bigFinishedAt).toBeGreaterThan(stallEnd);
    });
  });

  describe('upstream responses', () => {
    it('a garbage status line: 502 upstream_invalid_response, and the client connection stays usable', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write('GET /garbage-status HTTP/1.1\r\nHost: x\r\n\r\n');
      const [r] = await c.responses(1);
      expect(r!.status).toBe(502);
      expect(errorCode(r!)).toBe('upstream_invalid_response');
      c.write('GET /after-garbage HTTP/1.1\r\nHost: x\r\n\r\n');
      const rs = await c.responses(2);
      expect(rs[1]!.status).toBe(200);
      expect(rs[1]!.body.toString()).toMatch(/^GET \/after-garbage /);
      c.destroy();
    });

    it.each([
      '/resp-obs-fold',
      '/resp-two-lengths',
      '/resp-te-gzip',
      '/resp-bare-lf',
      '/resp-space-colon',
      '/resp-connection-cl',
      '/resp-bad-interim',
    ])('an invalid upstream head (%s): 502 upstream_invalid_response', async (path) => {
      const c = await RawClient.open(rawSc.url);
      c.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
      const [r] = await c.responses(1);
      expect(r!.status).toBe(502);
      expect(errorCode(r!)).toBe('upstream_invalid_response');
      c.destroy();
    });

    it('a status line without a reason phrase reaches the client with the space RFC 9112 §4 requires', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write('GET /no-reason HTTP/1.1\r\nHost: x\r\n\r\n');
      const [r] = await c.responses(1);
      expect(r!.status).toBe(200);
      expect(c.text.startsWith('HTTP/1.1 200 \r\n')).toBe(true);
      c.destroy();
    });

    it('a request pipelined behind one answered 502 by the proxy is still answered, in order', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write('GET /garbage-status HTTP/1.1\r\nHost: x\r\n\r\nGET /behind-502 HTTP/1.1\r\nHost: x\r\n\r\n');
      const rs = await c.responses(2);
      expect(rs.map((r) => r.status)).toEqual([502, 200]);
      expect(rs[1]!.body.toString()).toMatch(/^GET \/behind-502 /);
      c.destroy();
    });

    it.each(['/two-responses', '/204-with-body'])(
      'bytes after the end of a response (%s) never reach the next request',
      async (path) => {
        const c = await RawClient.open(rawSc.url);
        c.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\nGET /after-extra HTTP/1.1\r\nHost: x\r\n\r\n`);
        const rs = await c.responses(2);
        expect(rs[0]!.status).toBe(path === '/two-responses' ? 200 : 204);
        expect(rs[0]!.body.toString()).toBe(path === '/two-responses' ? 'ok' : '');
        expect(rs[1]!.status).toBe(200);
        expect(rs[1]!.body.toString()).toMatch(/^GET \/after-extra /);
        await sleep(30);
        expect(c.text).not.toContain('evil');
        c.destroy();
      },
    );

    it('an upstream connection: close does not close the keep-alive client connection', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write('GET /upstream-close HTTP/1.1\r\nHost: x\r\n\r\n');
      const [r] = await c.responses(1);
      expect(r!.body.toString()).toBe('ok');
      expect(hdr(r!, 'connection')).toEqual([]);
      c.write('GET /after-upstream-close HTTP/1.1\r\nHost: x\r\n\r\n');
      expect((await c.responses(2))[1]!.body.toString()).toMatch(/^GET \/after-upstream-close /);
      expect(c.ended).toBe(false);
      c.destroy();
    });

    it('a garbage line then a close, before any blank line: 502 upstream_invalid_response as soon as the bytes are not HTTP', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write('GET /garbage-close HTTP/1.1\r\nHost: x\r\n\r\n');
      const [r] = await c.responses(1);
      expect(r!.status).toBe(502);
      expect(errorCode(r!)).toBe('upstream_invalid_response');
      c.destroy();
    });

    it('101 Switching Protocols that was not asked for: 502 upstream_invalid_response', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write('GET /switch HTTP/1.1\r\nHost: x\r\n\r\n');
      const [r] = await c.responses(1);
      expect(r!.status).toBe(502);
      expect(errorCode(r!)).toBe('upstream_invalid_response');
      c.destroy();
    });

    it('a 200 KiB response head: 502 upstream_invalid_response', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write('GET /huge-head HTTP/1.1\r\nHost: x\r\n\r\n');
      const [r] = await c.responses(1);
      expect(r!.status).toBe(502);
      expect(errorCode(r!)).toBe('upstream_invalid_response');
      c.destroy();
    });

    // the 64 KiB limit holds also when the blank line arrives in the read that crosses it
    it('an 80 KiB response head whose blank line comes in the last read is refused too (64 KiB limit)', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write('GET /big-head-split HTTP/1.1\r\nHost: x\r\n\r\n');
      const [r] = await c.responses(1);
      c.destroy();
      expect(r!.status).toBe(502);
    });

    it('content-length with transfer-encoding: chunked is relayed chunked without content-length; the next request on the connection works', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write('GET /cl-te HTTP/1.1\r\nHost: x\r\n\r\n');
      const [r] = await c.responses(1);
      expect(r!.status).toBe(200);
      expect(hdr(r!, 'content-length')).toEqual([]);
      expect(hdr(r!, 'transfer-encoding')).toEqual(['chunked']);
      expect(r!.body.toString()).toBe('hello world');
      expect(c.text).toContain('\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n');
      c.write('GET /after-cl-te HTTP/1.1\r\nHost: x\r\n\r\n');
      expect((await c.responses(2))[1]!.body.toString()).toMatch(/^GET \/after-cl-te /);
      c.destroy();
    });

    it('a close-delimited HTTP/1.1 response reaches the client whole, with connection: close, and the connection closes', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write('GET /close-delimited HTTP/1.1\r\nHost: x\r\n\r\n');
      await c.closedByServer();
      const [r] = parseResponses(c.data, { eof: true });
      expect(r!.status).toBe(200);
      expect(hdr(r!, 'connection')).toEqual(['close']);
      expect(hdr(r!, 'content-length')).toEqual([]);
      expect(hdr(r!, 'transfer-encoding')).toEqual([]);
      expect(sha(r!.body)).toBe(sha(CLOSE_BODY));
      c.destroy();
    });

    it('an HTTP/1.0 upstream response without a length reaches the client whole and the connection closes', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write('GET /http10 HTTP/1.1\r\nHost: x\r\n\r\n');
      await c.closedByServer();
      const [r] = parseResponses(c.data, { eof: true });
      expect(r!.status).toBe(200);
      expect(r!.body.toString()).toBe('old-style body');
      c.destroy();
    });

    it('an interim 103 is relayed without its hop-by-hop fields, an unasked 100 is not; the final response follows', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write('GET /early-hints HTTP/1.1\r\nHost: x\r\n\r\n');
      const rs = await c.responses(2);
      expect(rs.map((r) => r.status)).toEqual([103, 200]);
      expect(rs[0]!.headers).toEqual([
        ['link', '</s.css>; rel=preload'],
        ['link', '</f.woff2>; rel=preload'],
      ]);
      expect(rs[1]!.body.toString()).toBe('final');
      c.destroy();
    });

    it('relayed interim responses are held back by a client that does not read (no unbounded buffering)', async () => {
      floodFlushedAt = 0;
      const u = new URL(rawSc.url);
      const sock = connect({ host: u.hostname, port: Number(u.port) });
      await once(sock, 'connect');
      sock.pause();
      sock.write('GET /interim-flood HTTP/1.1\r\nHost: x\r\n\r\n');
      await sleep(400);
      const stallEnd = performance.now();
      const chunks: Buffer[] = [];
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('the final response did not arrive')), 10_000);
        sock.on('data', (d: Buffer) => {
          chunks.push(d);
          if (d.includes('done')) {
            clearTimeout(t);
            resolve();
          }
        });
        sock.resume();
      });
      // the upstream could not flush its 1xx responses while the client read nothing
      expect(floodFlushedAt).toBeGreaterThan(stallEnd);
      const rs = parseResponses(Buffer.concat(chunks));
      expect(rs.length).toBe(FLOOD_HINTS + 1);
      expect(rs.slice(0, -1).every((r) => r.status === 103)).toBe(true);
      expect(rs.at(-1)!.body.toString()).toBe('done');
      sock.destroy();
    });

    it('a Connection: close on a 1xx keeps that upstream connection from reuse', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write('GET /interim-close HTTP/1.1\r\nHost: x\r\n\r\n');
      const rs = await c.responses(2);
      expect(rs.map((r) => r.status)).toEqual([103, 200]);
      expect(hdr(rs[0]!, 'connection')).toEqual([]);
      const connOf = (body: Buffer) => /conn=(\d+)/.exec(body.toString())![1];
      c.write('GET /after-interim-close HTTP/1.1\r\nHost: x\r\n\r\n');
      const rs2 = await c.responses(3);
      expect(rs2[2]!.status).toBe(200);
      expect(connOf(rs2[2]!.body)).not.toBe(connOf(rs[1]!.body));
      c.destroy();
    });

    it('an HTTP/1.0 client gets no interim response, only the final one', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write('GET /early-hints HTTP/1.0\r\nHost: x\r\n\r\n');
      await c.closedByServer();
      const rs = parseResponses(c.data, { eof: true });
      expect(rs.map((r) => r.status)).toEqual([200]);
      expect(rs[0]!.body.toString()).toBe('final');
      c.destroy();
    });

    it('a reused upstream connection that dies on the next request: an idempotent PUT is replayed on a fresh one and the client gets 200', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write('GET /stale-1 HTTP/1.1\r\nHost: x\r\n\r\n');
      await c.responses(1);
      const before = raw.requests.length;
      c.write('PUT /stale-2 HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\npayload');
      const rs = await c.responses(2);
      expect(rs[1]!.status).toBe(200);
      expect(rs[1]!.body.toString()).toBe('echo:payload');
      const tries = raw.requests.slice(before).filter((r) => r.path === '/stale-2');
      expect(tries.map((r) => r.index > 0)).toEqual([true, false]);
      expect(tries.map((r) => r.body.toString())).toEqual(['payload', 'payload']);
      c.destroy();
    });

    it('a POST on such a connection is not replayed (it may have been acted on and billed; RFC 9110 §9.2.2): 502 upstream_unavailable after one attempt', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write('GET /stale-1 HTTP/1.1\r\nHost: x\r\n\r\n');
      await c.responses(1);
      const before = raw.requests.length;
      c.write('POST /stale-2 HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\npayload');
      const rs = await c.responses(2);
      expect(rs[1]!.status).toBe(502);
      expect(errorCode(rs[1]!)).toBe('upstream_unavailable');
      expect(raw.requests.slice(before).filter((r) => r.path === '/stale-2')).toHaveLength(1);
      c.destroy();
    });

    it('a PUT with a body over 64 KiB (not kept for replay): 502 upstream_unavailable', async () => {
      const c = await RawClient.open(rawSc.url);
      c.write('GET /stale-1 HTTP/1.1\r\nHost: x\r\n\r\n');
      await c.responses(1);
      const big = 'b'.repeat(100 * 1024);
      c.write(`PUT /stale-2 HTTP/1.1\r\nHost: x\r\nContent-Length: ${big.length}\r\n\r\n${big}`);
      const rs = await c.responses(2);
      expect(rs[1]!.status).toBe(502);
      expect(errorCode(rs[1]!)).toBe('upstream_unavailable');
      c.destroy();
    });

    // the upstream's Keep-Alive timeout hint (minus 1 s) bounds reuse at acquire time, not only at
    // the next sweep: a POST on a connection the upstream is closing could not be replayed
    it('an idle upstream connection past its keep-alive deadline is not reused (upstream announced timeout=1)', async () => {
      const c = await RawClient.open(rawSc.url);
      const pairs: [number, number][] = [];
      for (let i = 0; i < 3; i++) {
        c.write('GET /ka-hint HTTP/1.1\r\nHost: x\r\n\r\n');
        await c.responses(2 * i + 1);
        const first = raw.requests.findLast((r) => r.path === '/ka-hint')!.conn.id;
        c.write('GET /after-ka-hint HTTP/1.1\r\nHost: x\r\n\r\n');
        await c.responses(2 * i + 2);
        pairs.push([first, raw.requests.findLast((r) => r.path === '/after-ka-hint')!.conn.id]);
      }
      c.destroy();
      for (const [first, next] of pairs) expect(next).not.toBe(first);
    });

    // broken chunked framing from the upstream costs one exchange (502 before anything was sent,
    // else a cut), never an exception out of a socket callback
    it('malformed chunked framing in the first upstream body bytes gives a 502, not an uncaught exception', async () => {
      await catchingUncaught(async (caught) => {
        const c = await RawClient.open(rawSc.url);
        c.write('GET /bad-chunk-head HTTP/1.1\r\nHost: x\r\n\r\n');
        await waitFor(() => c.ended || caught.length > 0 || parseResponses(c.data).length > 0, 2000);
        c.destroy();
        await sleep(20);
        expect(caught.map((e) => e.message)).toEqual([]);
        expect(parseResponses(c.data, { eof: true })[0]?.status).toBe(502);
      });
    });

    it('malformed chunked framing mid-body cuts the client connection, not the process', async () => {
      await catchingUncaught(async (caught) => {
        const c = await RawClient.open(rawSc.url);
        c.write('GET /bad-chunk-mid HTTP/1.1\r\nHost: x\r\n\r\n');
        await c.until(() => c.text.includes('hello'), 2000);
        await waitFor(() => c.closed || caught.length > 0, 2000);
        const wasCut = c.closed;
        c.destroy();
        await sleep(20);
        expect(caught.map((e) => e.message)).toEqual([]);
        expect(wasCut).toBe(true);
      });
    });
  });

  describe('timeouts (keep-alive 400 ms, upstream headers and body timeouts 300 ms on this sidecar)', () => {
    let sc: SidecarHandle;
    type Conn = { deadline: number; sock: Socket };
    /** The proxy's record of the client connection `c` (its deadline is what the sweep checks). */
    const connOf = (c: RawClient): Conn => {
      const all = [...(sc.proxy as unknown as { clients: Set<Conn> }).clients];
      return all.find((x) => x.sock.remotePort === c.sock.localPort)!;
    };

    beforeAll(async () => {
      sc = await startTestSidecar(
        testConfig(node.url, sharedNatsUrl(), randomPrefix('h1t'), [], {
          ...ENV,
          SHADOWPLANE_SIDECAR_KEEPALIVE_TIMEOUT_MS: '400',
          SHADOWPLANE_SIDECAR_HEADERS_TIMEOUT_MS: '300',
          SHADOWPLANE_SIDECAR_BODY_TIMEOUT_MS: '300',
        }),
      );
    });
    afterAll(async () => sc?.stop());

    it('an idle keep-alive client connection is closed after the keep-alive timeout', async () => {
      const c = await RawClient.open(sc.url);
      // timed from before the request: the server's idle timer starts after it wrote the response,
      // which a loaded machine may deliver to this client late
      const t = performance.now();
      c.write('GET /ka HTTP/1.1\r\nHost: x\r\n\r\n');
      await c.responses(1, [], 10_000);
      await c.closedByServer(10_000);
      expect(performance.now() - t).toBeGreaterThanOrEqual(350);
      c.destroy();
    });

    it('a connection that never sends a byte is closed after the keep-alive timeout', async () => {
      const c = await RawClient.open(sc.url);
      await c.closedByServer(10_000);
      expect(c.data.length).toBe(0);
      c.destroy();
    });

    // CLIENT_HEADERS_TIMEOUT_MS is a 60 s constant: the test checks the deadline it sets, then
    // moves it near instead of waiting a minute.
    it('a trickled head keeps the deadline set by its first byte (bytes do not extend it) and gets 408 when it passes', async () => {
      const c = await RawClient.open(sc.url);
      c.write('GET / HTTP/1.1\r\nHost: x\r\nX: ');
      await sleep(30);
      const conn = connOf(c);
      const d0 = conn.deadline;
      expect(d0 - performance.now()).toBeGreaterThan(59_000);
      expect(d0 - performance.now()).toBeLessThanOrEqual(60_000);
      for (let i = 0; i < 5; i++) {
        c.write('a');
        await sleep(30);
      }
      expect(conn.deadline).toBe(d0);
      // as if the minute had passed: the trickling goes on, the sweep answers 408
      conn.deadline = performance.now() + 100;
      for (let i = 0; i < 40 && !c.ended; i++) {
        c.write('a');
        await sleep(25);
      }
      await c.closedByServer(10_000);
      const [r] = parseResponses(c.data, { eof: true });
      expect(r!.status).toBe(408);
      expect(errorCode(r!)).toBe('request_timeout');
      c.destroy();
    });

    it('an upstream that never answers: 504 upstream_timeout after the headers timeout', async () => {
      const c = await RawClient.open(sc.url);
      const t = performance.now();
      c.write('GET /hold HTTP/1.1\r\nHost: x\r\n\r\n');
      const [r] = await c.responses(1, [], 10_000);
      expect(performance.now() - t).toBeGreaterThanOrEqual(280);
      expect(r!.status).toBe(504);
      expect(errorCode(r!)).toBe('upstream_timeout');
      c.destroy();
    });

    it('an upstream that stops mid-body: the client connection is cut after the body timeout, never ended cleanly', async () => {
      const c = await RawClient.open(sc.url);
      c.write('GET /stall-body HTTP/1.1\r\nHost: x\r\n\r\n');
      await c.until(() => c.text.endsWith('abc'), 10_000, 'the first body bytes');
      await c.until(() => c.closed, 10_000, 'the cut');
      expect(parseResponses(c.data, { eof: false })).toHaveLength(0);
      c.destroy();
    });

    it('a client that reads nothing for longer than the body timeout is cut (it must not pin an upstream connection); one that stalls for less gets the body whole', async () => {
      await expect(readSlowly(sc.url, '/big8', 8 * 1024 * 1024, 800)).rejects.toThrow(/closed after|bytes arrived/);
      const { body } = await readSlowly(sc.url, '/big8', 8 * 1024 * 1024, 100);
      expect(sha(body)).toBe(sha(BIG.subarray(0, 8 * 1024 * 1024)));
    });
  });

  describe('drain (SIGTERM)', () => {
    it('an idle keep-alive connection still delivers a request sent just after the drain began: served with connection: close, not reset', async () => {
      const sc = await startTestSidecar(
        testConfig(node.url, sharedNatsUrl(), randomPrefix('h1d'), [], {
          SHADOWPLANE_SIDECAR_DRAIN_TIMEOUT_MS: '3000',
          SHADOWPLANE_SIDECAR_DRAIN_IDLE_GRACE_MS: '600',
          SHADOWPLANE_SIDECAR_FLUSH_TIMEOUT_MS: '200',
        }),
      );
      const c = await RawClient.open(sc.url);
      c.write('GET /before HTTP/1.1\r\nHost: x\r\n\r\n');
      await c.responses(1);
      const stopped = sc.stop();
      await sleep(150);
      // the client has not seen the drain: to it the connection is an idle keep-alive one
      c.write('GET /during HTTP/1.1\r\nHost: x\r\n\r\n');
      const [, r] = await c.responses(2);
      expect(r!.status).toBe(200);
      expect(hdr(r!, 'connection')).toEqual(['close']);
      await c.closedByServer();
      await stopped;
      c.destroy();
    });

    it('an idle connection that sends nothing is closed after the grace, and the drain then ends', async () => {
      const sc = await startTestSidecar(
        testConfig(node.url, sharedNatsUrl(), randomPrefix('h1d'), [], {
          SHADOWPLANE_SIDECAR_DRAIN_TIMEOUT_MS: '5000',
          SHADOWPLANE_SIDECAR_DRAIN_IDLE_GRACE_MS: '300',
          SHADOWPLANE_SIDECAR_FLUSH_TIMEOUT_MS: '200',
        }),
      );
      const c = await RawClient.open(sc.url);
      c.write('GET /idle HTTP/1.1\r\nHost: x\r\n\r\n');
      await c.responses(1);
      const t = performance.now();
      await sc.stop();
      const took = performance.now() - t;
      expect(c.ended || c.closed).toBe(true);
      expect(took).toBeGreaterThanOrEqual(250);
      expect(took).toBeLessThan(3000);
      c.destroy();
    });
  });
});
