// Test fixture for the control API: a real bus under a random prefix, real KV buckets, real keys.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { connectBus, openKv, provision, type Bus } from '@shadowplane/bus';
import { FLAG_PAID_DISPATCH, type ProviderEntry } from '@shadowplane/contracts';
import * as reportsLib from '@shadowplane/reports';
import { createLogger, createMetricsRegistry } from '@shadowplane/telemetry';
import { randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import { buildControlApp, hashApiKey, type ApiKeyEntry, type ReportsPort } from '../src/index.js';

/** One API key per scope, one with every scope, and one with no useful scope for any route here. */
export const KEYS = {
  read: 'sp_test_read_0123456789abcdef0123456789',
  write: 'sp_test_write_0123456789abcdef012345678',
  outcome: 'sp_test_outcome_0123456789abcdef0123456',
  admin: 'sp_test_admin_0123456789abcdef012345678',
  all: 'sp_test_all_0123456789abcdef0123456789ab',
  allButRead: 'sp_test_allbut_read_0123456789abcdef0123',
  allButWrite: 'sp_test_allbut_write_0123456789abcdef012',
  allButOutcome: 'sp_test_allbut_outcome_0123456789abcdef0',
  allButAdmin: 'sp_test_allbut_admin_0123456789abcdef012',
} as const;

export const KEY_ENTRIES: ApiKeyEntry[] = [
  { id: 'reader', hash: hashApiKey(KEYS.read), scopes: ['campaign:read'] },
  { id: 'writer', hash: hashApiKey(KEYS.write), scopes: ['campaign:write'] },
  { id: 'outcomes', hash: hashApiKey(KEYS.outcome), scopes: ['outcome:write'] },
  { id: 'admin', hash: hashApiKey(KEYS.admin), scopes: ['admin'] },
  { id: 'ops', hash: hashApiKey(KEYS.all), scopes: ['campaign:read', 'campaign:write', 'outcome:write', 'admin'] },
  { id: 'all-but-read', hash: hashApiKey(KEYS.allButRead), scopes: ['campaign:write', 'outcome:write', 'admin'] },
  { id: 'all-but-write', hash: hashApiKey(KEYS.allButWrite), scopes: ['campaign:read', 'outcome:write', 'admin'] },
  { id: 'all-but-outcome', hash: hashApiKey(KEYS.allButOutcome), scopes: ['campaign:read', 'campaign:write', 'admin'] },
  {
    id: 'all-but-admin',
    hash: hashApiKey(KEYS.allButAdmin),
    scopes: ['campaign:read', 'campaign:write', 'outcome:write'],
  },
];

export const PROVIDERS: ProviderEntry[] = [
  { id: 'sim-openai', base_url: 'http://127.0.0.1:9/v1', api: 'openai.chat' },
  { id: 'sim-anthropic', base_url: 'http://127.0.0.1:9/v1', api: 'anthropic.messages' },
];

/** A valid spec: sim-large incumbent, sim-medium candidate, rate cards from the provider-sim defaults. */
export function validSpec(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'gsm8k tiers',
    suite: 'gsm8k',
    call_types: ['solve'],
    incumbent: {
      id: 'large',
      provider: 'sim-openai',
      model: 'sim-large',
      rate_card: { input: 2.5, cached_input: 1.25, output: 10 },
      max_output_tokens: 512,
    },
    candidates: [
      {
        id: 'medium',
        provider: 'sim-openai',
        model: 'sim-medium',
        rate_card: { input: 0.4, cached_input: 0.1, output: 1.6 },
        max_output_tokens: 512,
      },
    ],
    max_items: 200,
    max_cost_usd: 12.5,
    ...over,
  };
}

export const auth = (key: string) => ({ authorization: `Bearer ${key}` });

/** Collects log lines in memory so tests can assert on them (and that no key leaks). */
export class LogSink extends Writable {
  lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    cb();
  }
}

export interface Fixture {
  bus: Bus;
  app: FastifyInstance;
  logs: LogSink;
  setFlag(enabled: boolean): Promise<void>;
  /** every key and revision of the campaigns, budget and flags buckets, and the OBS message count */
  snapshot(): Promise<unknown>;
  close(): Promise<void>;
}

/** Builds the app over a fresh random prefix on the shared nats-server. */
export async function fixture(
  opts: {
    bodyLimitBytes?: number;
    flag?: boolean;
    providers?: ProviderEntry[];
    prefix?: string;
    reportRequestTimeoutMs?: number;
  } = {},
): Promise<Fixture> {
  const bus = await connectBus({
    url: sharedNatsUrl(),
    name: 'control-test',
    prefix: opts.prefix ?? randomPrefix('ctl'),
  });
  await provision(bus, { storage: 'memory' });
  const logs = new LogSink();
  const logger = createLogger({ service: 'control', version: 'test', level: 'info', destination: logs });
  const app = await buildControlApp({
    bus,
    providers: opts.providers ?? PROVIDERS,
    apiKeys: KEY_ENTRIES,
    reports: reportsLib satisfies ReportsPort,
    logger,
    registry: createMetricsRegistry({ defaultMetrics: false }),
    ...(opts.bodyLimitBytes === undefined ? {} : { bodyLimitBytes: opts.bodyLimitBytes }),
    reportRequestTimeoutMs: opts.reportRequestTimeoutMs ?? 500,
  });
  await app.ready();
  const flags = await openKv(bus, bus.names.buckets.flags);
  const setFlag = async (enabled: boolean) => {
    await flags.put(
      FLAG_PAID_DISPATCH,
      JSON.stringify({ enabled, updated_at: new Date().toISOString(), updated_by: 'test' }),
    );
  };
  if (opts.flag !== undefined) await setFlag(opts.flag);
  const snapshot = async () => {
    const out: Record<string, unknown> = {};
    for (const b of [bus.names.buckets.campaigns, bus.names.buckets.budget, bus.names.buckets.flags]) {
      const kv = await openKv(bus, b);
      const st = await kv.status();
      const entries: Record<string, number> = {};
      for await (const k of await kv.keys()) entries[k] = (await kv.get(k))?.revision ?? -1;
      out[b] = { values: st.values, entries };
    }
    out['obs'] = (await bus.jsm.streams.info(bus.names.streams.obs)).state.messages;
    return out;
  };
  return {
    bus,
    app,
    logs,
    setFlag,
    snapshot,
    async close() {
      await app.close();
      await bus.close();
    },
  };
}

/** Writes a temp file and returns its path. */
export function tempFile(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'shadowplane-control-'));
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}
