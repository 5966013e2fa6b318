// One regression test per attack class of the security review (the sidecar issue on stalls,
// exhaustion and leaks), each over real loopback sockets and a real nats-server:
//  - a crafted body cannot make capture work run on the proxy's event loop for long
//  - secrets under member names, Basic credentials and URL userinfo never reach NATS
//  - a client header cannot force a capture the operator did not allow
//  - a trickling body cannot hold an upstream connection past the client deadlines
//  - a client that pipelines without reading cannot make the proxy buffer without bound
//  - Proxy-Authorization / Proxy-Authenticate stay on their hop; Keep-Alive says the idle timeout;
//    the sidecar's own error bodies are as long as their content-length says
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliverPolicy } from '@nats-io/jetstream';
import { connectBus, type Bus } from '@shadowplane/bus';
import { randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import type { SidecarHandle } from '../src/index.js';
import {
  metricValue,
  send,
  startTestSidecar,
  startUpstream,
  testConfig,
  waitFor,
  type TestUpstream,
} from './helpers.js';
import { RawClient, errorCode, hdr } from './raw-client.js';

const LLM = '/v1/chat/completions';
const ENV = {
  SHADOWPLANE_SIDECAR_DRAIN_TIMEOUT_MS: '200',
  SHADOWPLANE_SIDECAR_FLUSH_TIMEOUT_MS: '500',
  SHADOWPLANE_SIDECAR_CAPTURE_BATCH_MS: '0',
};
const CHAT = JSON.stringify({
  id: 'c',
  object: 'chat.completion',
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

let up: TestUpstream;
beforeAll(async () => {
  up = await startUpstream((req, res) => {
    if (req.url.startsWith('/big')) {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(32 * 1024) });
      return res.end(Buffer.alloc(32 * 1024, 0x61));
    }
    res.writeHead(200, { 'content-type': 'application/json', 'proxy-authenticate': 'Basic realm="upstream"' });
    res.end(CHAT);
  });
});
afterAll(async () => {
  await up?.close();
});

describe('capture work and secrets', () => {
  let sc: SidecarHandle;
  let bus: Bus;
  const prefix = randomPrefix('sca');
  beforeAll(async () => {
    // the redaction budget is wall time on the worker: generous here, so a loaded machine cannot turn
    // these builds into cpu_budget drops (the budget has its own tests in processor.test.ts)
    sc = await startTestSidecar(
      testConfig(up.url, sharedNatsUrl(), prefix, ['--sample', '1'], {
        ...ENV,
        SHADOWPLANE_SIDECAR_CAPTURE_CPU_BUDGET_MS: '60000',
      }),
    );
    bus = await connectBus({ url: sharedNatsUrl(), name: 'sidecar-attacks-test', prefix });
    expect(await waitFor(() => sc.publisher.isConnected, 10_000)).toBe(true);
  });
  afterAll(async () => {
    await sc?.stop();
    await bus?.close();
  });

  it('a 60 KB body crafted against the email pattern is built off the event loop and the request is answered as usual', async () => {
    const crafted = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `${'a'.repeat(60_000)}@` }] });
    const before = await metricValue(sc, 'shadowplane_sidecar_capture_builds_total', { where: 'worker' });
    const r = await send(sc.url, {
      method: 'POST',
      path: LLM,
      headers: { 'content-type': 'application/json' },
      body: crafted,
    });
    expect(r.status).toBe(200);
    // the inline build gave it up at its first long string; the worker built it (linear-time rules)
    // generous deadlines: a worker build on a loaded machine can take seconds, and waitFor returns on the signal
    expect(
      await waitFor(
        async () =>
          (await metricValue(sc, 'shadowplane_sidecar_capture_builds_total', { where: 'worker' })) === before + 1,
        40_000,
      ),
    ).toBe(true);
    expect(
      await waitFor(
        async () => (await metricValue(sc, 'shadowplane_sidecar_captures_total', { outcome: 'published' })) >= 1,
        40_000,
      ),
    ).toBe(true);
  });

  it('secrets under member names, Basic credentials and URL userinfo are not in the published bytes', async () => {
    const secrets = ['k3y-abcdef-123456', 'hunter2-pass', 'cs-0987654321', 'dXNlcjpzM2NyM3Q=', 'pa55w0rd'];
    const body = {
      model: 'm',
      messages: [{ role: 'user', content: 'connect to postgres://admin:pa55w0rd@db.internal/x' }],
      metadata: {
        api_key: secrets[0],
        password: secrets[1],
        client_secret: secrets[2],
        authorization: `Basic ${secrets[3]}`,
      },
    };
    const r = await send(sc.url, {
      method: 'POST',
      path: `${LLM}?secret`,
      headers: { 'content-type': 'application/json', 'x-request-tag': 'secrets' },
      body: JSON.stringify(body),
    });
    expect(r.status).toBe(200);
    let raw = '';
    expect(
      await waitFor(async () => {
        const c = await bus.js.consumers.get(bus.names.streams.capture, { deliver_policy: DeliverPolicy.All });
        const info = await bus.jsm.streams.info(bus.names.streams.capture);
        for (let i = 0; i < info.state.messages; i++) {
          const m = await c.next({ expires: 1000 });
          if (m && m.string().includes('metadata')) raw = m.string();
        }
        return raw !== '';
      }, 10_000),
    ).toBe(true);
    for (const s of secrets) expect(raw).not.toContain(s);
    expect(raw).toContain('<SECRET>');
    expect(raw).toContain('postgres://<CREDENTIALS>@db.internal');
  });
});

describe('sampling is the operator’s', () => {
  it('with --sample 0 an x-shadow-suite header captures nothing unless opt-in is turned on', async () => {
    const off = await startTestSidecar(
      testConfig(up.url, sharedNatsUrl(), randomPrefix('sco'), ['--sample', '0'], ENV),
    );
    const on = await startTestSidecar(
      testConfig(up.url, sharedNatsUrl(), randomPrefix('sco'), ['--sample', '0'], {
        ...ENV,
        SHADOWPLANE_SIDECAR_OPT_IN: 'true',
      }),
    );
    try {
      const req = {
        method: 'POST',
        path: LLM,
        headers: { 'content-type': 'application/json', 'x-shadow-suite': 'forced' },
        body: '{"model":"m"}',
      };
      expect((await send(off.url, req)).headers['x-shadow-capture']).toBe('not_sampled');
      expect((await send(on.url, req)).headers['x-shadow-capture']).toBe('queued');
      expect(await metricValue(off, 'shadowplane_sidecar_captures_total', { outcome: 'queued' })).toBe(0);
    } finally {
      await off.stop();
      await on.stop();
    }
  });
});

describe('deadlines and backpressure', () => {
  it('a client whose body stops arriving gets 408 after the body timeout and frees the only upstream connection for the next client', async () => {
    const sc = await startTestSidecar(
      testConfig(up.url, sharedNatsUrl(), randomPrefix('scd'), [], {
        ...ENV,
        SHADOWPLANE_SIDECAR_UPSTREAM_CONNECTIONS: '1',
        SHADOWPLANE_SIDECAR_CLIENT_BODY_TIMEOUT_MS: '400',
      }),
    );
    const a = await RawClient.open(sc.url);
    try {
      a.write(`POST /slow HTTP/1.1\r\nhost: x\r\ncontent-length: 10\r\n\r\nx`);
      // b queues behind a for the one connection; it is served once a's deadline frees it
      const b = send(sc.url, { path: '/after' });
      const [ra] = await a.responses(1, [], 5000);
      expect(ra!.status).toBe(408);
      expect(errorCode(ra!)).toBe('request_timeout');
      expect((await b).status).toBe(200);
      expect(await metricValue(sc, 'shadowplane_sidecar_requests_total', { outcome: 'client_timeout' })).toBe(1);
    } finally {
      a.destroy();
      await sc.stop();
    }
  });

  it('a client trickling a byte at a time within the idle timeout is cut at the total request deadline', async () => {
    const sc = await startTestSidecar(
      testConfig(up.url, sharedNatsUrl(), randomPrefix('scd'), [], {
        ...ENV,
        SHADOWPLANE_SIDECAR_CLIENT_BODY_TIMEOUT_MS: '5000',
        SHADOWPLANE_SIDECAR_REQUEST_TIMEOUT_MS: '600',
      }),
    );
    const a = await RawClient.open(sc.url);
    let sent = 0;
    const drip = setInterval(() => {
      if (sent++ < 100) a.write('x');
    }, 50);
    try {
      a.write(`POST /drip HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n`);
      const [r] = await a.responses(1, [], 5000);
      expect(r!.status).toBe(408);
      // cut well before the body could have finished (100 bytes at 20 per second = 5 s)
      expect(sent).toBeLessThan(100);
    } finally {
      clearInterval(drip);
      a.destroy();
      await sc.stop();
    }
  });

  it('a client that pipelines 2,000 GETs and reads nothing is not read further once 64 KiB of answers wait; it gets every answer once it reads', async () => {
    const sc = await startTestSidecar(
      testConfig(up.url, sharedNatsUrl(), randomPrefix('scd'), [], {
        ...ENV,
        SHADOWPLANE_SIDECAR_PIPELINE_MAX_UNREAD_BYTES: String(64 * 1024),
      }),
    );
    const a = await RawClient.open(sc.url);
    try {
      a.sock.pause();
      const seen0 = up.seen.length;
      const N = 2000;
      a.write('GET /big HTTP/1.1\r\nhost: x\r\n\r\n'.repeat(N));
      // the upstream count stops growing while nothing is read (two equal polls 300 ms apart)
      let last = -1;
      expect(
        await waitFor(
          () => {
            const n = up.seen.length - seen0;
            const still = n > 0 && n === last;
            last = n;
            return still;
          },
          20_000,
          300,
        ),
      ).toBe(true);
      // 32 KiB answers: what the kernel's socket buffers hold plus the 64 KiB bound, far from all
      expect(up.seen.length - seen0).toBeLessThan(N / 4);
      // reading again, it gets all of them (counted from the bytes: 2,000 × 32 KiB bodies)
      let bytes = 0;
      a.sock.on('data', (d: Buffer) => (bytes += d.length));
      a.sock.resume();
      expect(await waitFor(() => bytes >= N * 32 * 1024, 120_000, 50)).toBe(true);
      expect(await waitFor(() => up.seen.length - seen0 === N, 30_000)).toBe(true);
      // the byte count includes the heads, so the last answers may still be on their way: wait for them
      const answers = () => a.text.split('HTTP/1.1 200 ').length - 1;
      expect(await waitFor(() => answers() === N, 30_000, 250)).toBe(true);
    } finally {
      a.destroy();
      await sc.stop();
    }
  });
});

describe('headers', () => {
  let sc: SidecarHandle;
  beforeAll(async () => {
    sc = await startTestSidecar(
      testConfig(up.url, sharedNatsUrl(), randomPrefix('sch'), [], {
        ...ENV,
        SHADOWPLANE_SIDECAR_KEEPALIVE_TIMEOUT_MS: '42500',
      }),
    );
  });
  afterAll(async () => {
    await sc?.stop();
  });

  it('Proxy-Authorization is not forwarded, Proxy-Authenticate is not relayed, and Keep-Alive names the idle timeout', async () => {
    const c = await RawClient.open(sc.url);
    try {
      c.write(
        'GET /pa HTTP/1.1\r\nhost: x\r\nProxy-Authorization: Basic c2VjcmV0OnNlY3JldA==\r\nproxy-authorization: Bearer abc\r\n\r\n',
      );
      const [r] = await c.responses(1);
      expect(r!.status).toBe(200);
      const seen = up.seen.find((s) => s.url === '/pa')!;
      expect(seen.headers['proxy-authorization']).toBeUndefined();
      expect(hdr(r!, 'proxy-authenticate')).toEqual([]);
      expect(hdr(r!, 'keep-alive')).toEqual(['timeout=42']);
    } finally {
      c.destroy();
    }
  });

  it("the sidecar's own error answers declare their length in bytes (a non-ASCII message included); answers that keep the connection carry the Keep-Alive hint", async () => {
    const c = await RawClient.open(sc.url);
    try {
      c.write(Buffer.concat([Buffer.from('GET / HTTP/1.'), Buffer.from([0xe9]), Buffer.from('\r\nhost: x\r\n\r\n')]));
      await c.closedByServer();
      const raw = c.data;
      const he = raw.indexOf('\r\n\r\n');
      const cl = Number(/content-length: (\d+)/.exec(raw.toString('latin1', 0, he))![1]);
      const body = raw.subarray(he + 4);
      expect(body.length).toBe(cl);
      expect((JSON.parse(body.toString('utf8')) as { error: { message: string } }).error.message).toContain('é');
      // an answer that keeps its connection says how long it stays open
      const d = await RawClient.open(sc.url);
      d.write('GET /nothing HTTP/1.1\r\nhost: x\r\n\r\n');
      const [r404] = await d.responses(1);
      expect(r404!.status).toBe(200);
      expect(hdr(r404!, 'keep-alive')).toEqual(['timeout=42']);
      d.destroy();
    } finally {
      c.destroy();
    }
  });
});
