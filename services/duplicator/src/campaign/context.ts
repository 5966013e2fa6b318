import type { KV } from '@nats-io/kv';
import type { ObjectStore } from '@nats-io/obj';
import type { Dispatcher } from 'undici';
import type { Logger } from 'pino';
import type { JsonKv, Bus } from '@shadowplane/bus';
import type { Campaign, ProviderEntry } from '@shadowplane/contracts';
import type { BudgetLedgerClient } from '@shadowplane/budget';
import type { Keyring } from '@shadowplane/artifacts';
import type { PaidDispatchGate, WorkerLeases } from '../liveness.js';
import type { DuplicatorMetrics } from '../metrics.js';

/** Everything a campaign runner shares with the rest of the worker. */
export interface RunnerContext {
  bus: Bus;
  log: Logger;
  metrics: DuplicatorMetrics;
  workerId: string;
  itemConcurrency: number;
  ackWaitMs: number;
  rateWindowMs: number;
  retryBaseMs: number;
  redisUrl: string | undefined;
  dispatchKv: KV;
  campaigns: JsonKv<typeof Campaign>;
  ledger: BudgetLedgerClient;
  artifacts: ObjectStore;
  captureBodies: ObjectStore;
  keyring: Keyring;
  providers: ReadonlyMap<string, { entry: ProviderEntry; apiKey: string | null }>;
  gate: PaidDispatchGate;
  leases: WorkerLeases;
  http: Dispatcher;
}
