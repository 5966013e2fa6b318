// Test harness for the duplicator: a real nats-server (shared or private), a real provider-sim,
// real envelopes on CAPTURE, workers in-process or as child processes of the real binary.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { connectBus, openKv, provision, JsonKv, type Bus } from '@shadowplane/bus';
import {
  BudgetLedger,
  Campaign,
  CampaignSpec,
  DispatchState,
  FLAG_PAID_DISPATCH,
  ObsMessage,
  contentHash,
  type CampaignSpecInput,
  type Envelope,
} from '@shadowplane/contracts';
import { generateKey } from '@shadowplane/artifacts';
import { newLedger } from '@shadowplane/budget';
import { chatEnvelope, randomPrefix } from '@shadowplane/testkit';
import { startProviderSim, type ProviderSim, type SimConfigInput } from '@shadowplane/provider-sim';
import { startDuplicator, type DuplicatorConfig, type DuplicatorHandle } from '../src/index.js';
import pino from 'pino';

export const REPO = resolve(import.meta.dirname, '../../..');
export const BIN = join(REPO, 'services/shadowplane/bin/shadowplane.mjs');

/** GSM8K questions from the repo's examples, as chat prompts. */
export function gsm8kQuestions(n: number): string[] {
  const lines = readFileSync(join(REPO, 'examples/data/gsm8k-test.jsonl'), 'utf8').split('\n').filter(Boolean);
  return lines.slice(0, n).map((l: string) => (JSON.parse(l) as { question: string }).question);
}

/** Sim models with latency scaled for tests. */
export function simConfig(over: Partial<SimConfigInput> & { models?: SimConfigInput['models'] } = {}): SimConfigInput {
  const m = (
    accuracy: number,
    prices: { input: number; cached_input: number; output: number },
    ttft: number,
    extra: object = {},
  ) => ({
    accuracy,
    prices,
    latency: { ttft_ms: { median: ttft, sigma: 0.4 }, output_tokens_per_s: 20_000, jitter: 0.2 },
    output_length: { median: 60, sigma: 0.4, min: 4, max: 200 },
    ...extra,
  });
  return {
    models: {
      'sim-large': m(0.92, { input: 2.5, cached_input: 1.25, output: 10 }, 6, {
        openrouter: { providers: ['SimCloud', 'SimEdge'] },
      }),
      'sim-medium': m(0.9, { input: 0.4, cached_input: 0.1, output: 1.6 }, 4, {
        openrouter: { providers: ['SimCloud', 'SimEdge'] },
      }),
      'sim-small': m(0.55, { input: 0.1, cached_input: 0.025, output: 0.4 }, 3, {
        openrouter: { providers: ['SimEdge'] },
      }),
    },
    seed: 7,
    ...over,
  } as SimConfigInput;
}

export interface Rig {
  bus: Bus;
  prefix: string;
  sim: ProviderSim;
  providersFile: string;
  artifactKey: string;
  natsUrl: string;
  close(): Promise<void>;
}

/** Starts a sim, connects a bus under a fresh prefix, provisions (memory, R1 unless told), writes the allowlist, turns paid_dispatch on. */
export async function startRig(
  natsUrl: string,
  sim: SimConfigInput,
  opts: { replicas?: number; storage?: 'memory' | 'file'; knownAnswers?: boolean } = {},
): Promise<Rig> {
  const prefix = randomPrefix('dup');
  const bus = await connectBus({ url: natsUrl, name: 'dup-test', prefix, replicas: opts.replicas ?? 1 });
  await provision(bus, { storage: opts.storage ?? 'memory' });
  // knownAnswers: the sim's GSM8K answer key, so tiers differ in correctness at their accuracies
  const s = await startProviderSim({ config: sim, ...(opts.knownAnswers === true ? {} : { datasetPath: '' }) });
  const dir = mkdtempSync(join(tmpdir(), 'dup-test-'));
  const providersFile = join(dir, 'providers.yaml');
  writeFileSync(
    providersFile,
    JSON.stringify({
      providers: [
        { id: 'simopenai', base_url: `${s.url}/v1`, api: 'openai.chat', api_key_env: 'SIM_KEY' },
        { id: 'simanthropic', base_url: `${s.url}/v1`, api: 'anthropic.messages', api_key_env: 'SIM_KEY' },
        { id: 'simrouter', base_url: `${s.url}/api/v1`, api: 'openrouter.chat', api_key_env: 'SIM_KEY' },
      ],
    }),
  );
  await setPaidDispatch(bus, true);
  return {
    bus,
    prefix,
    sim: s,
    providersFile,
    artifactKey: generateKey(),
    natsUrl,
    async close() {
      await s.close();
      await bus.close();
    },
  };
}

export async function setPaidDispatch(bus: Bus, enabled: boolean): Promise<void> {
  const kv = await openKv(bus, bus.names.buckets.flags);
  await kv.put(
    FLAG_PAID_DISPATCH,
    JSON.stringify({ enabled, updated_at: new Date().toISOString(), updated_by: 'test' }),
  );
}

/** Writes a running campaign (as control would) and its ledger; returns its id. */
export async function launchCampaign(bus: Bus, input: CampaignSpecInput): Promise<{ id: string; spec: CampaignSpec }> {
  const spec = CampaignSpec.parse(input);
  const id = `cmp_${randomBytes(8).toString('hex')}`;
  const now = new Date(Date.now() - 1000).toISOString();
  const c: Campaign = {
    schema: 'shadow.campaign/v1',
    id,
    spec,
    spec_hash: contentHash(spec),
    comparison_key: contentHash({ a: id }),
    run_index: 1,
    state: 'running',
    state_reason: null,
    created_at: now,
    updated_at: now,
  };
  await new JsonKv(await openKv(bus, bus.names.buckets.budget), BudgetLedger).put(id, newLedger(spec.max_cost_usd));
  await new JsonKv(await openKv(bus, bus.names.buckets.campaigns), Campaign).put(id, c);
  return { id, spec };
}

/** A chat-completions envelope for a prompt (the shared test kit's). */
export { chatEnvelope };

export async function publishEnvelopes(bus: Bus, envs: Envelope[]): Promise<void> {
  for (const e of envs)
    await bus.js.publish(bus.names.captureSubject(e.suite, e.call_type), JSON.stringify(e), { msgID: e.envelope_id });
}

/** Every message on the OBS stream for a campaign (ordered; an ordered consumer over the test's own OBS stream). */
export async function readObs(bus: Bus, campaignId: string): Promise<ObsMessage[]> {
  const info = await bus.jsm.streams.info(bus.names.streams.obs);
  const total = info.state.messages;
  const out: ObsMessage[] = [];
  if (total === 0) return out;
  const c = await bus.js.consumers.get(bus.names.streams.obs);
  let seen = 0;
  while (seen < total) {
    const batch = await c.fetch({ max_messages: 1000, expires: 2000 });
    let got = 0;
    for await (const m of batch) {
      got++;
      seen++;
      const v = ObsMessage.parse(m.json());
      if (v.campaign_id === campaignId) out.push(v);
    }
    if (got === 0) break;
  }
  return out;
}

/** All dispatch-state arm records of a campaign (key → state). */
export async function readArmStates(bus: Bus, campaignId: string): Promise<Map<string, DispatchState>> {
  const kv = await openKv(bus, bus.names.buckets.dispatch);
  const out = new Map<string, DispatchState>();
  const keys = await kv.keys(`${campaignId}.>`);
  for await (const k of keys) {
    if (k.split('.').length !== 3 || k.includes('._n.')) continue;
    const e = await kv.get(k);
    if (!e || e.operation !== 'PUT') continue;
    const v = e.json() as { kind?: string };
    if (v.kind === 'item') continue;
    out.set(k, DispatchState.parse(v));
  }
  return out;
}

export async function ledger(bus: Bus, id: string): Promise<BudgetLedger | null> {
  const v = await new JsonKv(await openKv(bus, bus.names.buckets.budget), BudgetLedger).get(id);
  return v?.value ?? null;
}

export async function campaignState(bus: Bus, id: string): Promise<Campaign | null> {
  const v = await new JsonKv(await openKv(bus, bus.names.buckets.campaigns), Campaign).get(id);
  return v?.value ?? null;
}

/** Worker config for tests (scaled-down timers). */
export function workerConfig(rig: Rig, over: Partial<DuplicatorConfig> = {}): DuplicatorConfig {
  return {
    natsUrl: rig.natsUrl,
    natsPrefix: rig.prefix,
    logLevel: 'warn',
    providersFile: rig.providersFile,
    redisUrl: undefined,
    workerId: `w-${randomBytes(3).toString('hex')}`,
    opsHost: '127.0.0.1',
    opsPort: 0,
    itemConcurrency: 8,
    ackWaitMs: 3000,
    leaseTtlMs: 1500,
    rateWindowMs: 60_000,
    retryBaseMs: 20,
    flagPollMs: 200,
    provision: false,
    storage: 'memory',
    ...over,
  };
}

/** Starts an in-process worker. */
export function startWorker(rig: Rig, over: Partial<DuplicatorConfig> = {}): Promise<DuplicatorHandle> {
  return startDuplicator(workerConfig(rig, over), {
    env: { SIM_KEY: 'sk-sim-test', SHADOWPLANE_ARTIFACT_KEY: rig.artifactKey },
    logger: pino({ level: 'warn' }, pino.destination(2)),
  });
}

/**
 * A worker child process (the real binary, `nodeArgs` before it on the node command line);
 * resolves when it printed its listening line. `checkout` is the repository whose binary runs
 * (default this one; a benchmark passes a baseline checkout to compare builds in one run).
 */
export async function spawnWorker(
  rig: Rig,
  over: Record<string, string> = {},
  nodeArgs: string[] = [],
  checkout: string = REPO,
): Promise<{ child: ChildProcess; workerId: string }> {
  const workerId = `p-${randomBytes(3).toString('hex')}`;
  const env = {
    ...process.env,
    SHADOWPLANE_NATS_URL: rig.natsUrl,
    SHADOWPLANE_NATS_PREFIX: rig.prefix,
    SHADOWPLANE_LOG_LEVEL: 'warn',
    SHADOWPLANE_PROVIDERS_FILE: rig.providersFile,
    SHADOWPLANE_ARTIFACT_KEY: rig.artifactKey,
    SHADOWPLANE_DUPLICATOR_WORKER_ID: workerId,
    SHADOWPLANE_DUPLICATOR_OPS_LISTEN: '127.0.0.1:0',
    SHADOWPLANE_DUPLICATOR_ACK_WAIT_MS: '3000',
    SHADOWPLANE_DUPLICATOR_LEASE_TTL_MS: '1500',
    SHADOWPLANE_DUPLICATOR_RETRY_BASE_MS: '20',
    SHADOWPLANE_DUPLICATOR_FLAG_POLL_MS: '200',
    SHADOWPLANE_DUPLICATOR_PROVISION: 'false',
    SIM_KEY: 'sk-sim-test',
    ...over,
  };
  const child = spawn(
    process.execPath,
    [...nodeArgs, join(checkout, 'services/shadowplane/bin/shadowplane.mjs'), 'duplicator'],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: checkout,
    },
  );
  child.stderr!.on('data', (d: Buffer) => {
    if (process.env.DUP_TEST_VERBOSE) process.stderr.write(d);
  });
  await new Promise<void>((resolveP, reject) => {
    const t = setTimeout(() => reject(new Error('worker did not start within 120 s')), 120_000);
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (l) => {
      if (l.includes('"listening"')) {
        clearTimeout(t);
        resolveP();
      }
    });
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
  });
  return { child, workerId };
}

/** A sim rate card in USD per million tokens, cached input at half the input price. */
export const simCard = (input: number, output: number) => ({ input, cached_input: input / 2, output });

/**
 * The incumbent and candidate of the crash, recovery and cluster tests: `large` (sim-large on
 * simopenai, $2.5/$10 per M) against `medium` (sim-medium, $0.4/$1.6 per M), 100 output tokens each.
 * @param o.limits per-arm limits for both arms (absent: the defaults)
 * @param o.candidateProvider the candidate's provider (default simanthropic, a second wire API)
 */
export function largeMediumArms(
  o: { limits?: CampaignSpecInput['incumbent']['limits']; candidateProvider?: string } = {},
): Pick<CampaignSpecInput, 'incumbent' | 'candidates'> {
  const arm = (id: string, provider: string, model: string, card: { input: number; output: number }) => ({
    id,
    provider,
    model,
    rate_card: simCard(card.input, card.output),
    max_output_tokens: 100,
    ...(o.limits ? { limits: o.limits } : {}),
  });
  return {
    incumbent: arm('large', 'simopenai', 'sim-large', { input: 2.5, output: 10 }),
    candidates: [arm('medium', o.candidateProvider ?? 'simanthropic', 'sim-medium', { input: 0.4, output: 1.6 })],
  };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Polls `fn` until it returns a truthy value or `timeoutMs` passes (then throws with `what`). A
 * poll that throws counts as "not yet": a KV read can time out while the shared nats-server is
 * busy, which says nothing about what is awaited; the last such error is in the timeout message.
 */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | null | undefined | false>,
  timeoutMs = 30_000,
  everyMs = 100,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > end)
      throw new Error(
        `timed out waiting for ${what}${lastError ? ` (last poll failed: ${(lastError as Error).message})` : ''}`,
      );
    await sleep(everyMs);
  }
}
