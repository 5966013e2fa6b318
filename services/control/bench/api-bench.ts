// Control API throughput/latency, run on purpose (`make bench-control`), never in `vitest run`.
// A private nats-server, the real app on loopback, autocannon (10 connections). Arms are run in
// interleaved rounds so machine noise hits every arm alike; the table gives the median over rounds
// and each arm's ratio to the GET /healthz baseline measured in the same run.
import { cpus } from 'node:os';
import autocannon from 'autocannon';
import pino from 'pino';
import { connectBus, provision, openKv } from '@shadowplane/bus';
import { FLAG_PAID_DISPATCH } from '@shadowplane/contracts';
import * as reportsLib from '@shadowplane/reports';
import { createMetricsRegistry } from '@shadowplane/telemetry';
import { startNatsServer } from '@shadowplane/testkit';
import { buildControlApp, hashApiKey } from '../src/index.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 3);
const KEY = 'sp_bench_key_0000000000000000000000000000';

const nats = await startNatsServer();
const bus = await connectBus({ url: nats.url, name: 'ctl-bench', prefix: 'bench' });
await provision(bus, { storage: 'memory' });
await (
  await openKv(bus, bus.names.buckets.flags)
).put(FLAG_PAID_DISPATCH, JSON.stringify({ enabled: true, updated_at: new Date().toISOString(), updated_by: 'bench' }));
const app = await buildControlApp({
  bus,
  providers: [{ id: 'sim-openai', base_url: 'http://127.0.0.1:9/v1', api: 'openai.chat' }],
  apiKeys: [
    { id: 'bench', hash: hashApiKey(KEY), scopes: ['campaign:read', 'campaign:write', 'outcome:write', 'admin'] },
  ],
  reports: reportsLib,
  logger: pino({ level: 'silent' }),
  registry: createMetricsRegistry({ defaultMetrics: false }),
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });
const spec = {
  name: 'bench',
  suite: 'bench',
  call_types: ['a'],
  incumbent: { id: 'large', provider: 'sim-openai', model: 'sim-large', rate_card: { input: 2.5, output: 10 } },
  candidates: [{ id: 'medium', provider: 'sim-openai', model: 'sim-medium', rate_card: { input: 0.4, output: 1.6 } }],
  max_cost_usd: 5,
};
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
const launched = await app.inject({ method: 'POST', url: '/v1/campaigns', headers, payload: spec });
const id = launched.json().campaign.id as string;

let n = 0;
const arms: { name: string; opts: autocannon.Options }[] = [
  { name: 'GET /healthz (baseline)', opts: { url: `${url}/healthz` } },
  { name: 'GET /v1/campaigns/{id}', opts: { url: `${url}/v1/campaigns/${id}`, headers } },
  {
    name: 'POST /v1/campaigns dry_run',
    opts: { url: `${url}/v1/campaigns?dry_run=true`, method: 'POST', headers, body: JSON.stringify(spec) },
  },
  {
    name: 'POST /v1/outcomes',
    opts: {
      url: `${url}/v1/outcomes`,
      method: 'POST',
      headers,
      requests: [
        {
          setupRequest: (req) => ({
            ...req,
            body: JSON.stringify({
              campaign_id: id,
              item_hash: 'a'.repeat(64),
              result: 'score',
              score: 0.5,
              source: `bench-${n++}`,
            }),
          }),
        },
      ],
    },
  },
  { name: 'GET /v1/campaigns/{id} no key (401)', opts: { url: `${url}/v1/campaigns/${id}` } },
];

const results = new Map<string, { rps: number[]; p50: number[]; p99: number[]; non2xx: number }>();
for (let r = 0; r < ROUNDS; r++) {
  for (const a of arms) {
    const res = await autocannon({ connections: 10, duration: DURATION_S, ...a.opts });
    const e = results.get(a.name) ?? { rps: [], p50: [], p99: [], non2xx: 0 };
    e.rps.push(res.requests.average);
    e.p50.push(res.latency.p50);
    e.p99.push(res.latency.p99);
    e.non2xx += res.non2xx;
    results.set(a.name, e);
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const base = med(results.get(arms[0]!.name)!.rps);
const rows = [...results].map(([name, e]) => ({
  arm: name,
  'req/s (median)': Math.round(med(e.rps)),
  'req/s min–max': `${Math.round(Math.min(...e.rps))}–${Math.round(Math.max(...e.rps))}`,
  'p50 ms': med(e.p50),
  'p99 ms': med(e.p99),
  'vs baseline': (med(e.rps) / base).toFixed(3),
  'non-2xx': e.non2xx,
}));
process.stdout.write(
  `control API bench: node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ${ROUNDS} interleaved rounds × ${DURATION_S} s, 10 connections\n`,
);
console.table(rows);
await app.close();
await bus.close();
await nats.stop();
