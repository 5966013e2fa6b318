import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { connectBus, provision, type Bus } from '@shadowplane/bus';
import * as reportsLib from '@shadowplane/reports';
import { createMetricsRegistry } from '@shadowplane/telemetry';
import { startNatsServer, type NatsServerHandle } from '@shadowplane/testkit';
import type { FastifyInstance } from 'fastify';
import { buildControlApp } from '../src/index.js';
import { auth, KEY_ENTRIES, KEYS, PROVIDERS, validSpec } from '../testing/helpers.js';

// A private nats-server is stopped under the running API and started again on the same port.
describe('control API when NATS goes away', () => {
  let nats: NatsServerHandle;
  let bus: Bus;
  let app: FastifyInstance;
  beforeAll(async () => {
    nats = await startNatsServer();
    bus = await connectBus({ url: nats.url, name: 'ctl-down', prefix: 'down' });
    await provision(bus, { storage: 'file' });
    app = await buildControlApp({
      bus,
      providers: PROVIDERS,
      apiKeys: KEY_ENTRIES,
      reports: reportsLib,
      logger: pino({ level: 'silent' }),
      registry: createMetricsRegistry({ defaultMetrics: false }),
    });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await bus.close();
    await nats.stop();
    rmSync(nats.storeDir, { recursive: true, force: true }); // a restarted server keeps a store it did not create
  });

  it(
    'answers /readyz 503 and API calls 503 dependency_unavailable while NATS is down, and recovers when it is back',
    { timeout: 90_000 },
    async () => {
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      await nats.stop({ keepStore: true });
      const deadline = Date.now() + 10_000;
      while ((await app.inject({ method: 'GET', url: '/readyz' })).statusCode !== 503 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      expect((await app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'not_ready' });
      const down = await app.inject({
        method: 'POST',
        url: '/v1/campaigns',
        headers: { ...auth(KEYS.write), 'content-type': 'application/json' },
        payload: validSpec(),
      });
      expect([down.statusCode, down.json().error.code]).toEqual([503, 'dependency_unavailable']);
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200); // alive, just not ready

      nats = await startNatsServer({ port: nats.port, storeDir: nats.storeDir });
      const back = Date.now() + 20_000;
      while ((await app.inject({ method: 'GET', url: '/readyz' })).statusCode !== 200 && Date.now() < back)
        await new Promise((r) => setTimeout(r, 200));
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      const list = await app.inject({ method: 'GET', url: '/v1/campaigns', headers: auth(KEYS.read) });
      expect([list.statusCode, list.json()]).toEqual([200, { campaigns: [] }]);
    },
  );
});
