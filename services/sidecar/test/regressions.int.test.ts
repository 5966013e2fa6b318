// Regression tests for four defects a fault-injection pass found in proxy.ts (commit e739896), each
// over real loopback sockets: a raw client in front of the sidecar, a scripted node:net upstream
// behind it.
//  1. reading paused for the upstream stayed paused after a 502/504 or an early answer
//  2. requests queued for a pool connection waited forever (now: 504 after the connect timeout)
//  3. a connection closed after its answer stayed open while the client kept its side open
//  4. an early answer (request body still arriving) did not say `connection: close`
import { connect, createServer, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import type { SidecarHandle } from '../src/index.js';
import { sleep, startTestSidecar, testConfig, waitFor } from './helpers.js';
import { RawClient, errorCode, hdr, parseResponses } from './raw-client.js';

const CRLFCRLF = Buffer.from('\r\n\r\n');
// short drain so a stop() never waits on an exchange a failing test left stuck
const ENV = { SHADOWPLANE_SIDECAR_DRAIN_TIMEOUT_MS: '200', SHADOWPLANE_SIDECAR_FLUSH_TIMEOUT_MS: '200' };
/** proxy.ts PENDING_MAX_BYTES: request bytes buffered while waiting for a connection before the client is paused */
const PENDING_MAX_BYTES = 1024 * 1024;
/** A body the upstream's socket buffers cannot take while it reads nothing (loopback takes ~4 MB). */
const HUGE = 16 * 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// scripted upstream

interface UpReq {
  /** connection number, in accept order */
  conn: number;
  method: string;
  path: string;
  sock: Socket;
}

/**
 * What the upstream does with a request once its head arrived:
 * - `answer`: 200 with body `METHOD path` once the (content-length) body was read
 * - `early`: the same answer at once, before reading the body
 * - `hold`: nothing (the test answers or resets through `held`); the body is read
 * - `stall`: stop reading the connection (backpressure on the sender) and hold
 */
type Action = 'answer' | 'early' | 'hold' | 'stall';

interface ScriptedUpstream {
  url: string;
  port: number;
  requests: UpReq[];
  held: UpReq[];
  /** Stops accepting connections (the port then refuses); open ones stay. */
  stopListening(): Promise<void>;
  /** Accepts again on the same port. */
  listenAgain(): Promise<void>;
  close(): Promise<void>;
}

const answerFor = (r: UpReq) => {
  const body = `${r.method} ${r.path}`;
  r.sock.write(`HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
};

/** An HTTP/1.1 upstream on node:net (keep-alive, content-length bodies) that lets `script` pick each request's fate. */
async function startScriptedUpstream(script: (r: UpReq) => Action): Promise<ScriptedUpstream> {
  const requests: UpReq[] = [];
  const held: UpReq[] = [];
  const socks = new Set<Socket>();
  let conns = 0;
  const onConnection = (sock: Socket) => {
    const conn = conns++;
    socks.add(sock);
    sock.on('close', () => socks.delete(sock));
    sock.on('error', () => undefined);
    let buf: Buffer = Buffer.alloc(0);
    let bodyLeft = 0;
    let answerAtEnd: UpReq | null = null;
    sock.on('data', (d: Buffer) => {
      buf = buf.length === 0 ? d : Buffer.concat([buf, d]);
      for (;;) {
        if (bodyLeft > 0) {
          const take = Math.min(bodyLeft, buf.length);
          bodyLeft -= take;
          buf = buf.subarray(take);
          if (bodyLeft > 0) return;
        }
        if (answerAtEnd !== null) {
          answerFor(answerAtEnd);
          answerAtEnd = null;
        }
        const he = buf.indexOf(CRLFCRLF);
        if (he === -1) return;
        const head = buf.toString('latin1', 0, he);
        buf = buf.subarray(he + 4);
        const [method = '', path = ''] = head.split(' ');
        const cl = /\r\ncontent-length: *(\d+)/i.exec(head);
        bodyLeft = cl ? Number(cl[1]) : 0;
        const r: UpReq = { conn, method, path, sock };
        requests.push(r);
        const action = script(r);
        if (action === 'answer') answerAtEnd = r;
        else if (action === 'early') answerFor(r);
        else {
          held.push(r);
          if (action === 'stall') {
            sock.pause();
            return;
          }
        }
      }
    });
  };
  let server: Server = createServer(onConnection);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    held,
    stopListening: async () => {
      // not waiting for close(): that waits for the open connections too
      server.close();
      await new Promise((r) => setImmediate(r));
    },
    listenAgain: async () => {
      server = createServer(onConnection);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve());
      });
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of socks) s.destroy();
        if (!server.listening) return r();
        server.close(() => r());
      }),
  };
}

/** The script for these tests: the path says what the upstream does. */
function byPath(r: UpReq): Action {
  if (r.path.startsWith('/hold')) return 'hold';
  if (r.path.startsWith('/stall')) return 'stall';
  if (r.path.startsWith('/early')) return 'early';
  return 'answer';
}

type ProxyConn = { sock: Socket };
/** The proxy's socket for the client `c` (to check a precondition: reading is paused). */
function proxySideOf(sc: SidecarHandle, c: RawClient): Socket | undefined {
  const all = [...(sc.proxy as unknown as { clients: Set<ProxyConn> }).clients];
  return all.find((x) => x.sock.remotePort === c.sock.localPort)?.sock;
}

const isPausedAtProxy = (sc: SidecarHandle, c: RawClient): boolean => proxySideOf(sc, c)?.isPaused() === true;

/** A POST whose body is exactly one byte more than the proxy buffers while waiting for a connection. */
function pendingOverflowRequest(path: string): Buffer {
  const n = PENDING_MAX_BYTES + 1;
  // paused at the byte that crosses the limit, which is the last one: the whole request was read
  return Buffer.concat([
    Buffer.from(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: ${n}\r\n\r\n`, 'latin1'),
    Buffer.alloc(n, 0x61),
  ]);
}

// ---------------------------------------------------------------------------------------------

describe('proxy.ts fault-injection regressions (e739896)', () => {
  let up: ScriptedUpstream;
  let sc: SidecarHandle;
  /** one upstream connection, 300 ms connect timeout (queued requests time out after it) */
  let poolUp: ScriptedUpstream;
  let poolSc: SidecarHandle;

  beforeAll(async () => {
    [up, poolUp] = await Promise.all([startScriptedUpstream(byPath), startScriptedUpstream(byPath)]);
    [sc, poolSc] = await Promise.all([
      // a 2 s keep-alive timeout makes the sweep run every 500 ms (a quarter of the shortest timeout)
      startTestSidecar(
        testConfig(up.url, sharedNatsUrl(), randomPrefix('reg'), [], {
          ...ENV,
          SHADOWPLANE_SIDECAR_KEEPALIVE_TIMEOUT_MS: '2000',
        }),
      ),
      startTestSidecar(
        testConfig(poolUp.url, sharedNatsUrl(), randomPrefix('regp'), [], {
          ...ENV,
          SHADOWPLANE_SIDECAR_UPSTREAM_CONNECTIONS: '1',
          SHADOWPLANE_SIDECAR_CONNECT_TIMEOUT_MS: '300',
        }),
      ),
    ]);
  });

  afterAll(async () => {
    await Promise.all([sc?.stop(), poolSc?.stop()]);
    await Promise.all([up?.close(), poolUp?.close()]);
  });

  /** Holds poolSc's only upstream connection with a request the upstream does not answer; returns its client. */
  async function occupyPool(): Promise<{ client: RawClient; req: UpReq }> {
    const before = poolUp.held.length;
    const client = await RawClient.open(poolSc.url);
    client.write('GET /hold-pool HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await waitFor(() => poolUp.held.length > before, 2000)).toBe(true);
    return { client, req: poolUp.held[poolUp.held.length - 1]! };
  }

  describe('1. a client paused for the upstream is read again when its exchange ends', () => {
    it('paused behind upstream backpressure, then a 502 (the upstream refuses): the keep-alive connection serves its next request', async () => {
      // its own upstream and sidecar: the upstream's port is closed for a moment
      const rup = await startScriptedUpstream(byPath);
      const rsc = await startTestSidecar(
        testConfig(rup.url, sharedNatsUrl(), randomPrefix('regr'), [], {
          ...ENV,
          SHADOWPLANE_SIDECAR_UPSTREAM_CONNECTIONS: '1',
        }),
      );
      const clients: RawClient[] = [];
      try {
        // the pool's only connection is taken
        const a = await RawClient.open(rsc.url);
        clients.push(a);
        a.write('GET /hold-a HTTP/1.1\r\nHost: x\r\n\r\n');
        expect(await waitFor(() => rup.held.length === 1, 2000)).toBe(true);
        // B waits for a connection with its whole request read; the proxy paused its reading
        const b = await RawClient.open(rsc.url);
        clients.push(b);
        b.write(pendingOverflowRequest('/upload-b'));
        expect(await waitFor(() => isPausedAtProxy(rsc, b), 2000), 'reading B is paused').toBe(true);
        // the upstream goes away: A's connection closes, B gets a fresh one that has not taken its
        // 1 MiB (still connecting: backpressure) when the connect is refused → 502 for B. (A
        // connected loopback socket would take the 1 MiB at once, and its drain would resume B
        // before any reset arrived: the refusal is what keeps the backpressure until the 502.)
        await rup.stopListening();
        rup.held[0]!.sock.destroy();
        const [r] = await b.responses(1);
        expect(r!.status).toBe(502);
        expect(errorCode(r!)).toBe('upstream_unavailable');
        // the whole request was read, so the connection is kept
        expect(hdr(r!, 'connection')).toEqual([]);
        expect(b.ended).toBe(false);
        // the upstream is back; the next request on B's connection must be read and served
        await rup.listenAgain();
        b.write('GET /after-502 HTTP/1.1\r\nHost: x\r\n\r\n');
        const rs = await b.responses(2, [], 2000);
        expect(rs[1]!.status).toBe(200);
        expect(rs[1]!.body.toString()).toBe('GET /after-502');
      } finally {
        for (const c of clients) c.destroy();
        await rsc.stop();
        await rup.close();
      }
    });

    it('paused while queued for a connection, then a 504: the keep-alive connection serves its next request', async () => {
      const held = await occupyPool();
      const b = await RawClient.open(poolSc.url);
      try {
        b.write(pendingOverflowRequest('/upload-queued'));
        expect(await waitFor(() => isPausedAtProxy(poolSc, b), 2000), 'reading B is paused').toBe(true);
        const [r] = await b.responses(1);
        expect(r!.status).toBe(504);
        expect(errorCode(r!)).toBe('upstream_timeout');
        expect(hdr(r!, 'connection')).toEqual([]);
        // free the pool's connection, then use B's connection again
        held.req.sock.write('HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nheld');
        await held.client.responses(1);
        b.write('GET /after-504 HTTP/1.1\r\nHost: x\r\n\r\n');
        const rs = await b.responses(2, [], 2000);
        expect(rs[1]!.status).toBe(200);
        expect(rs[1]!.body.toString()).toBe('GET /after-504');
      } finally {
        b.destroy();
        held.client.destroy();
        held.req.sock.destroy();
      }
    });

    it.each([
      ['answers early', (r: UpReq) => r.sock.write('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nearly'), 200],
      ['resets', (r: UpReq) => r.sock.resetAndDestroy(), 502],
    ] as const)(
      'paused mid-upload (the upstream reads nothing), then the upstream %s: the answer and the close reach the client at once',
      async (_name, act, status) => {
        const c = await RawClient.open(sc.url);
        try {
          const before = up.held.length;
          c.write(`POST /stall-upload HTTP/1.1\r\nHost: x\r\nContent-Length: ${HUGE}\r\n\r\n`);
          c.write(Buffer.alloc(HUGE, 0x62));
          expect(
            await waitFor(() => up.held.length > before && isPausedAtProxy(sc, c), 3000),
            'reading the client is paused',
          ).toBe(true);
          const t = performance.now();
          act(up.held[up.held.length - 1]!);
          const [r] = await c.responses(1, [], 2000);
          expect(r!.status).toBe(status);
          expect(hdr(r!, 'connection')).toEqual(['close']);
          await c.until(() => c.ended, 1000, 'the server to end the connection');
          expect(c.endedAt - t).toBeLessThan(1000);
        } finally {
          c.destroy();
        }
      },
    );
  });

  describe('2. requests queued for a pool connection time out', () => {
    it('with the pool full of held connections, queued requests get 504 upstream_timeout after the 300 ms connect timeout', async () => {
      const held = await occupyPool();
      const seenBefore = poolUp.requests.length;
      const queued = await Promise.all([RawClient.open(poolSc.url), RawClient.open(poolSc.url)]);
      try {
        const t = performance.now();
        queued.forEach((c, i) => c.write(`GET /queued-${i} HTTP/1.1\r\nHost: x\r\n\r\n`));
        const answers = await Promise.all(
          queued.map(async (c) => ({ r: (await c.responses(1, [], 3000))[0]!, at: performance.now() - t })),
        );
        for (const { r, at } of answers) {
          expect(r.status).toBe(504);
          expect(errorCode(r)).toBe('upstream_timeout');
          // the connect timeout (300 ms) plus up to one sweep period (75 ms), with slack for a busy machine
          expect(at).toBeGreaterThanOrEqual(280);
          expect(at).toBeLessThan(2000);
        }
        // they never reached the upstream, and the held request was not timed out meanwhile
        expect(poolUp.requests.length).toBe(seenBefore);
        expect(held.client.data.length).toBe(0);
      } finally {
        for (const c of queued) c.destroy();
        held.client.destroy();
        held.req.sock.destroy();
      }
    });
  });

  describe('3. a connection closed after its answer does not outlive the client keeping its side open', () => {
    /** Writes a byte every 100 ms until the socket closes: the proxy's destroy shows up as a reset. */
    function probeUntilClosed(c: RawClient): void {
      const tick = () => {
        if (c.closed || c.sock.destroyed) return;
        c.sock.write('x');
        setTimeout(tick, 100);
      };
      tick();
    }

    it('Connection: close and HTTP/1.0 sockets are gone about 5 s after the proxy ended them; an upload cut short by an early answer is drained so its client closes at once', async () => {
      const close = await RawClient.open(sc.url, true);
      const http10 = await RawClient.open(sc.url, true);
      const stuck = await RawClient.open(sc.url);
      const all = [close, http10, stuck];
      try {
        close.write('GET /conn-close HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
        http10.write('GET /http10 HTTP/1.0\r\n\r\n');
        // the third client's own FIN waits behind an upload the proxy stopped reading
        const before = up.held.length;
        stuck.write(`POST /stall-stuck HTTP/1.1\r\nHost: x\r\nContent-Length: ${HUGE}\r\n\r\n`);
        stuck.write(Buffer.alloc(HUGE, 0x63));
        expect(
          await waitFor(() => up.held.length > before && isPausedAtProxy(sc, stuck), 3000),
          'reading the uploader is paused',
        ).toBe(true);
        up.held[up.held.length - 1]!.sock.write('HTTP/1.1 413 Content Too Large\r\ncontent-length: 0\r\n\r\n');

        for (const c of all) {
          await c.until(() => c.ended, 2000, 'the server to end the connection');
          expect(parseResponses(c.data, { eof: true })[0]?.status).toBe(c === stuck ? 413 : 200);
        }
        expect(close.closed || http10.closed).toBe(false);
        probeUntilClosed(close);
        probeUntilClosed(http10);
        // ended at once; destroyed by the sweep 5 s later (it runs every 500 ms here)
        await Promise.all(all.map((c) => c.until(() => c.closed, 8000, 'the proxy to drop the connection')));
        for (const c of [close, http10]) {
          const lingered = c.closedAt - c.endedAt;
          expect(lingered).toBeGreaterThanOrEqual(4500);
          expect(lingered).toBeLessThan(7000);
        }
        // the rest of the upload is read and dropped after the answer, so the uploader's own close
        // gets through at once instead of waiting for the 5 s destroy
        expect(stuck.closedAt - stuck.endedAt).toBeLessThan(2000);
      } finally {
        for (const c of all) c.destroy();
      }
    }, 15_000);
  });

  describe('4. an early upstream answer', () => {
    it('an answer complete before the request body was sent is relayed with connection: close, then the connection closes', async () => {
      const c = await RawClient.open(sc.url);
      try {
        const before = up.requests.length;
        // 10 of 1000 body bytes; the upstream answers on the head
        c.write('POST /early-answer HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n0123456789');
        const [r] = await c.responses(1, [], 2000);
        expect(up.requests.length).toBe(before + 1);
        expect(r!.status).toBe(200);
        expect(r!.body.toString()).toBe('POST /early-answer');
        expect(hdr(r!, 'connection')).toEqual(['close']);
        await c.until(() => c.ended, 2000, 'the server to end the connection');
        // what the client sends next is not read as a request
        c.write(`${'z'.repeat(990)}GET /after-early HTTP/1.1\r\nHost: x\r\n\r\n`);
        await sleep(50);
        expect(up.requests.slice(before).map((x) => x.path)).toEqual(['/early-answer']);
      } finally {
        c.destroy();
      }
    });
  });
});
