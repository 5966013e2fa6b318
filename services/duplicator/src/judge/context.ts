// What a campaign's judge works with: the worker's part it needs, the judge's own setup, and
// the shapes it exchanges with the campaign runner.
import type { Logger } from 'pino';
import type { KV } from '@nats-io/kv';
import type { ObjectStore } from '@nats-io/obj';
import type { Dispatcher } from 'undici';
import type { JsonKv, Bus } from '@shadowplane/bus';
import type { ArmRole, Campaign, LlmJudgeSpec, ProviderEntry } from '@shadowplane/contracts';
import type { BudgetLedgerClient } from '@shadowplane/budget';
import type { ArmLimiter } from '@shadowplane/ratelimit';
import type { Keyring } from '@shadowplane/artifacts';
import type { JudgeMetrics } from '../judge-metrics.js';
import type { JudgeCallRecord } from '../judge-record.js';

/** What the judge runner needs from the worker (a subset of the campaign runner's context). */
export interface JudgeContext {
  bus: Bus;
  log: Logger;
  ledger: BudgetLedgerClient;
  artifacts: ObjectStore;
  keyring: Keyring;
  providers: ReadonlyMap<string, { entry: ProviderEntry; apiKey: string | null }>;
  http: Dispatcher;
  rateWindowMs: number;
  redisUrl: string | undefined;
  /** the paid_dispatch kill switch, checked immediately before every judge call */
  gateEnabled: () => boolean;
  /** the worker's metrics (the judge's part: judge-metrics.ts); absent in tests that do not read them */
  metrics?: { judge: JudgeMetrics };
  /** `shadow_dispatch`: one record per judge call (judge-record.ts) */
  dispatchKv: KV;
  /** this worker's id, written into the judge call records it creates */
  workerId: string;
  /** liveness of the worker that holds a judge call in flight (liveness.ts WorkerLeases) */
  leases: { alive(workerId: string): Promise<boolean>; readonly ttlMs: number };
}

/** How {@link JudgeRunner.judgeItem} may proceed for one item. */
export interface JudgeRunOptions {
  /**
   * false: no new judge call is made (the campaign is no longer running); recorded calls are
   * still reused and calls lost in flight recovered, and a call never made gets `notRunReason`.
   * Default true.
   */
  newCalls?: boolean;
  /** null reason of a judge call not made because `newCalls` is false */
  notRunReason?: string;
}

/** One settled arm of an item, as the judge sees it. */
export interface JudgedArm {
  armId: string;
  role: ArmRole;
  /** provider id of the arm (its family comes from the allowlist) */
  provider: string;
  /** the arm's output text, or null when the call failed (nothing to judge) */
  outputText: string | null;
  /**
   * set when the arm succeeded but its output could not be read back (an earlier processing's
   * artifact is gone): the arm gets a null verdict with this reason instead of none
   */
  unavailableReason?: string;
}

/** One campaign's judge as its modules share it (built once by `JudgeRunner.forCampaign`). */
export interface JudgeSetup {
  ctx: JudgeContext;
  campaign: Campaign;
  /** the campaign's `llm_judge` scorer, its rate card known to be set */
  spec: LlmJudgeSpec & { rate_card: NonNullable<LlmJudgeSpec['rate_card']> };
  /** the judge's provider (allowlist entry) and API key */
  provider: ProviderEntry;
  apiKey: string | null;
  /** the judge provider's family (same-family rule) */
  family: string;
  /** the judge's own rate limiter `<campaign>.judge` */
  limiter: ArmLimiter;
  /** the judge call records in `shadow_dispatch` (judge-record.ts) */
  records: JsonKv<typeof JudgeCallRecord>;
}

/** Family of a provider id: the allowlist's `family`, else the id itself. */
export function familyOf(providers: JudgeContext['providers'], id: string): string {
  return providers.get(id)?.entry.family ?? id;
}
