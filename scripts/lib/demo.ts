import { randomBytes, createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import pLimit from 'p-limit';
import { canonicalJson, ObsMessage, TERMINAL_CAMPAIGN_STATES, type Observation } from '@shadowplane/contracts';
import { buildLedger, ledgerCsv } from '@shadowplane/reports';
import { startNatsServer } from '@shadowplane/testkit';
import { DEFAULT_SIM_CONFIG } from '@shadowplane/provider-sim';
import { DEMO_ACCURACY, DEMO_ANSWER_NOISE, demoModels, demoSpec } from './demo-config.js';
import { controlApi, progressLine, replayOne, runShadowctl, summariseDryRun, totalDispatched } from './demo-io.js';
import { ProcessGroup } from './processes.js';
import { demoTraffic } from './traffic.js';
import { walkLifecycle, type Lifecycle } from './lifecycle.js';

/** Knobs of one demo run. */
export interface DemoOptions {
  /** provider-sim seed; the same seed gives the same report hash */
  seed: number;
  /** GSM8K questions replayed (unique items of call type gsm8k) */
  gsm8k: number;
  /** chat prompts replayed (unique items of call type chat) */
  chat: number;
  /** every n-th GSM8K question is sent twice (0 = no duplicates) */
  dupEvery: number;
  /** the campaign's hard budget, USD */
  maxCostUsd: number;
  /** where report.json, run-record.json, report.html, bundle.json, observations.jsonl, calls/arms/hosts.csv and logs go */
  outDir: string;
  /** NATS to use instead of a private nats-server (names get a random prefix) */
  natsUrl?: string;
  /** concurrent client requests during the replay */
  concurrency: number;
  /** progress lines (default: stdout) */
  say?: (line: string) => void;
  /** give up after this many ms (default 240 000) */
  timeoutMs?: number;
  /**
   * the campaign's stopping rule (default sequential). A sequential report depends on the order
   * pairs arrived in, which differs between runs; `fixed` gives the same report id for the same seed.
   */
  stopping?: 'fixed' | 'sequential';
}

/** What a demo run produced. */
export interface DemoResult {
  campaignId: string;
  /** reproducible: the same seed and slice give the same report id */
  reportId: string;
  /** this run's record (campaign id/state, window, latency/TTFT percentiles): differs per run */
  runRecordId: string | null;
  state: string;
  spendUsd: number;
  /** of spendUsd, what the LLM judge was charged (evaluation cost, from the report's judge summary) */
  judgeSpendUsd: number | null;
  maxCostUsd: number;
  report: Record<string, unknown>;
  runRecord: Record<string, unknown> | null;
  /** exit code of `shadowctl verify` on the bundle */
  verifyExit: number;
  verifyOutput: string;
  requestsSent: number;
  requestsFailed: number;
  /** the bench loop walked after the live campaign (also written as lifecycle.json) */
  lifecycle: Lifecycle;
  pids: number[];
}

/**
 * Runs the whole pipeline locally: nats-server, provider-sim, sidecar, two duplicators, control
 * and verdict; launches a budget-capped campaign; replays real requests through the sidecar with
 * the official openai client; waits for the verdict; writes the report, its HTML and the evidence
 * bundle to `outDir`; verifies the bundle with shadowctl; stops everything it started.
 * @throws Error naming the step that failed (everything started is stopped first)
 */
export async function runDemo(o: DemoOptions): Promise<DemoResult> {
  const pidsSeen: number[] = [];
  const r = await runDemoInner(o, pidsSeen);
  // after everything was stopped: any process still alive is a leak
  return { ...r, pids: pidsSeen.filter(processAlive) };
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function runDemoInner(o: DemoOptions, pidsSeen: number[]): Promise<DemoResult> {
  const say = o.say ?? ((l: string) => process.stdout.write(`${l}\n`));
  mkdirSync(join(o.outDir, 'logs'), { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'shadowplane-demo-'));
  const group = new ProcessGroup(join(o.outDir, 'logs'));
  group.onStop(async () => rmSync(work, { recursive: true, force: true }));
  const deadline = Date.now() + (o.timeoutMs ?? 240_000);
  // Ctrl-C (or a TERM from a parent) stops everything this run started before exiting.
  // A terminal's Ctrl-C reaches the whole process group, sometimes twice (npx/tsx relay it):
  // the first signal starts the cleanup, repeats are ignored so it is never cut short.
  let interrupted = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    say(`\n${sig}: interrupted — stopping everything the demo started`);
    void group.stopAll().finally(() => process.exit(sig === 'SIGINT' ? 130 : 143));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    // NATS: a private server unless one is named; names isolated by a random prefix either way.
    let natsUrl = o.natsUrl;
    if (!natsUrl) {
      const nats = await startNatsServer();
      group.onStop(() => nats.stop());
      natsUrl = nats.url;
    }
    const prefix = `demo${randomBytes(4).toString('hex')}`;
    say(`▶ NATS ${natsUrl} (names prefixed ${prefix})`);

    // Secrets and allowlist, as an operator would mount them.
    const adminKey = `spk_${randomBytes(24).toString('hex')}`;
    const apiKeysFile = join(work, 'api-keys.yaml');
    writeFileSync(
      apiKeysFile,
      `- id: demo-operator\n  hash: "sha256:${createHash('sha256').update(adminKey).digest('hex')}"\n  scopes: [campaign:read, campaign:write, outcome:write, admin]\n`,
    );
    const artifactKeyFile = join(work, 'artifact.key');
    writeFileSync(artifactKeyFile, randomBytes(32).toString('base64'));
    writeFileSync(join(work, 'sim.key'), `sk-sim-${randomBytes(16).toString('hex')}`);
    const common = { SHADOWPLANE_NATS_URL: natsUrl, SHADOWPLANE_NATS_PREFIX: prefix, SHADOWPLANE_LOG_LEVEL: 'warn' };

    // the built-in tiers with per-call noise, sim-medium truly as good as the incumbent, plus
    // sim-judge, a judge of known behaviour (accuracy 0.9 against the sim's ground truth)
    const simConfigFile = join(work, 'sim.json');
    writeFileSync(simConfigFile, JSON.stringify({ ...DEFAULT_SIM_CONFIG, models: demoModels() }));
    const sim = await group.startRole(
      'provider-sim',
      'provider-sim',
      ['--listen', '127.0.0.1:0', '--seed', String(o.seed), '--config', simConfigFile],
      {},
    );
    const simUrl = String(sim.ready.url);
    say(
      `▶ provider-sim ${simUrl}: sim-large (incumbent, accuracy ${DEMO_ACCURACY['sim-large']}), sim-medium (${DEMO_ACCURACY['sim-medium']}), sim-small (${DEMO_ACCURACY['sim-small']}); candidates' per-call answer noise ${DEMO_ANSWER_NOISE}`,
    );
    const providersFile = join(work, 'providers.yaml');
    writeFileSync(
      providersFile,
      `providers:\n  - id: sim\n    base_url: ${simUrl}/v1\n    api: openai.chat\n    api_key_file: ${join(work, 'sim.key')}\n    family: sim\n  - id: simjudge\n    base_url: ${simUrl}/v1\n    api: openai.chat\n    api_key_file: ${join(work, 'sim.key')}\n    family: simjudge\n`,
    );

    const sidecar = await group.startRole(
      'sidecar',
      'sidecar',
      [
        '--listen',
        '127.0.0.1:0',
        '--ops-listen',
        '127.0.0.1:0',
        '--upstream',
        simUrl,
        '--nats',
        natsUrl,
        '--sample',
        '1',
        '--suite',
        'demo',
      ],
      {
        ...common,
        SHADOWPLANE_SIDECAR_PLACEMENT: 'egress',
        // the replay names each request's call type with x-shadow-call-type: an opt-in the operator must allow
        SHADOWPLANE_SIDECAR_OPT_IN: 'true',
      },
    );
    const sidecarUrl = String(sidecar.ready.url);
    say(`▶ sidecar ${sidecarUrl} → ${simUrl} (sampling 100%)`);

    const dupEnv = {
      ...common,
      SHADOWPLANE_PROVIDERS_FILE: providersFile,
      SHADOWPLANE_ARTIFACT_KEY_FILE: artifactKeyFile,
      SHADOWPLANE_DUPLICATOR_OPS_LISTEN: '127.0.0.1:0',
    };
    await group.startRole('duplicator-1', 'duplicator', [], { ...dupEnv, SHADOWPLANE_DUPLICATOR_WORKER_ID: 'demo-w1' });
    await group.startRole('duplicator-2', 'duplicator', [], { ...dupEnv, SHADOWPLANE_DUPLICATOR_WORKER_ID: 'demo-w2' });
    say('▶ duplicator workers demo-w1, demo-w2');
    await group.startRole('verdict', 'verdict', [], {
      ...common,
      SHADOWPLANE_ARTIFACT_KEY_FILE: artifactKeyFile,
      SHADOWPLANE_VERDICT_OPS_LISTEN: '127.0.0.1:0',
    });
    const control = await group.startRole('control', 'control', [], {
      ...common,
      SHADOWPLANE_CONTROL_LISTEN: '127.0.0.1:0',
      SHADOWPLANE_CONTROL_API_KEYS_FILE: apiKeysFile,
      SHADOWPLANE_PROVIDERS_FILE: providersFile,
      SHADOWPLANE_ARTIFACT_KEY_FILE: artifactKeyFile,
    });
    const controlUrl = String(control.ready.url);
    say(`▶ verdict service; control API ${controlUrl}`);

    const api = controlApi(controlUrl, adminKey);

    // The kill switch is off until an operator turns it on (fail closed).
    const flag = await api('PUT', '/v1/admin/flags/paid_dispatch', { enabled: true, reason: 'demo' });
    if (flag.status !== 200) throw new Error(`turning paid_dispatch on failed: ${flag.status} ${flag.text}`);

    const traffic = demoTraffic({ gsm8k: o.gsm8k, chat: o.chat, dupEvery: o.dupEvery });
    const spec = demoSpec(o);
    const dry = await api('POST', '/v1/campaigns', { ...spec, dry_run: true });
    if (dry.status !== 200) throw new Error(`dry run failed: ${dry.status} ${dry.text}`);
    say(`▶ dry run: ${summariseDryRun(dry.json)}`);
    const created = await api('POST', '/v1/campaigns', spec);
    if (created.status !== 201 && created.status !== 200)
      throw new Error(`campaign launch failed: ${created.status} ${created.text}`);
    const campaignId = String(created.json.campaign?.id ?? created.json.id);
    say(`▶ campaign ${campaignId} running, max_cost_usd ${o.maxCostUsd}`);

    // Replay real traffic through the sidecar with the official client, as a router would.
    const client = new OpenAI({
      baseURL: `${sidecarUrl}/v1`,
      apiKey: 'sk-demo-client-key-never-captured',
      maxRetries: 0,
      timeout: 60_000,
    });
    const limit = pLimit(o.concurrency);
    let sent = 0;
    let failed = 0;
    const replayStarted = Date.now();
    await Promise.all(
      traffic.map((r) =>
        limit(async () => {
          if (interrupted) return;
          try {
            await replayOne(client, r);
          } catch {
            failed++;
          }
          sent++;
          if (sent % 50 === 0 || sent === traffic.length)
            say(
              `  replayed ${sent}/${traffic.length} requests (${failed} failed) in ${((Date.now() - replayStarted) / 1000).toFixed(1)} s`,
            );
        }),
      ),
    );

    // Watch the campaign until the verdict is written.
    let last = '';
    let state = 'running';
    let view: any = null;
    let settledSince = 0;
    let lastDispatched = -1;
    let stopped = false;
    for (;;) {
      if (Date.now() > deadline) throw new Error(`the campaign did not finish in time (state ${state})`);
      const got = await api('GET', `/v1/campaigns/${campaignId}`);
      view = got.json;
      state = String(view?.campaign?.state ?? 'unknown');
      const line = progressLine(view);
      if (line !== last) say(`  ${line}`);
      last = line;
      const dispatched = totalDispatched(view);
      const reserved = Number(view?.spend?.reserved_usd ?? 0);
      // When the replay is over and dispatch has been idle for 5 s with nothing reserved, there is
      // no more traffic coming: stop the campaign so the verdict is written for what was captured.
      if (state === 'running' && dispatched === lastDispatched && reserved === 0 && dispatched > 0) {
        if (settledSince === 0) settledSince = Date.now();
        if (Date.now() - settledSince > 5000 && !stopped) {
          say('  no more traffic: stopping the campaign');
          await api('POST', `/v1/campaigns/${campaignId}/stop`);
          stopped = true;
        }
      } else {
        settledSince = 0;
      }
      lastDispatched = dispatched;
      if ((TERMINAL_CAMPAIGN_STATES as readonly string[]).includes(state)) {
        const rep = await api('GET', `/v1/campaigns/${campaignId}/report`);
        if (rep.status === 200 && rep.json && rep.json.provisional === false) break;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }

    const rep = await api('GET', `/v1/campaigns/${campaignId}/report`);
    const html = await api('GET', `/v1/campaigns/${campaignId}/report?format=html`);
    const bundle = await api('GET', `/v1/campaigns/${campaignId}/report?format=bundle`);
    // report.json: the report's canonical JSON (same evidence → same bytes, so two runs diff clean);
    // run-record.json: what this run measured (campaign id/state, window, latency/TTFT percentiles)
    writeFileSync(join(o.outDir, 'report.json'), `${canonicalJson(rep.json.report)}\n`);
    writeFileSync(join(o.outDir, 'run-record.json'), `${canonicalJson(rep.json.run_record ?? null)}\n`);
    writeFileSync(join(o.outDir, 'report.html'), html.text);
    writeFileSync(join(o.outDir, 'bundle.json'), bundle.text);
    // the OBS export and the call ledger tables beside the report (shadowplane ledger --csv --hosts)
    const exported = await api('GET', `/v1/campaigns/${campaignId}/observations`);
    if (exported.status !== 200) throw new Error(`observations export failed: ${exported.status}`);
    writeFileSync(join(o.outDir, 'observations.jsonl'), exported.text);
    const observations = exported.text
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => ObsMessage.parse(JSON.parse(l)))
      .filter((m): m is Observation => m.schema === 'shadow.observation/v1');
    const csv = ledgerCsv(buildLedger(observations));
    writeFileSync(join(o.outDir, 'calls.csv'), csv.calls);
    writeFileSync(join(o.outDir, 'arms.csv'), csv.arms);
    writeFileSync(join(o.outDir, 'hosts.csv'), csv.hosts);
    const verify = await runShadowctl(['verify', join(o.outDir, 'bundle.json')]);
    const spendUsd = Number(view?.spend?.settled_usd ?? NaN);
    // the bench loop on what the live campaign captured: freeze, re-freeze, frozen run, baseline, gated compare
    const lifecycle = await walkLifecycle({
      api,
      say,
      outDir: o.outDir,
      controlUrl,
      apiKey: adminKey,
      suite: 'demo',
      callType: 'gsm8k',
      incumbent: spec.incumbent,
      candidate: spec.candidates[1]!,
      changedCandidate: spec.candidates[0]!,
      margins: { noninferiority_pp: 5, min_savings: 0.2 },
      seed: o.seed,
      maxCostUsd: o.maxCostUsd,
      deadline: Date.now() + (o.timeoutMs ?? 240_000),
    });
    return {
      campaignId,
      reportId: String(rep.json.report_id),
      runRecordId: rep.json.run_record_id ?? null,
      state,
      spendUsd,
      judgeSpendUsd: typeof rep.json.report?.judge?.spend_usd === 'number' ? rep.json.report.judge.spend_usd : null,
      maxCostUsd: o.maxCostUsd,
      report: rep.json.report as Record<string, unknown>,
      runRecord: (rep.json.run_record ?? null) as Record<string, unknown> | null,
      verifyExit: verify.code,
      verifyOutput: verify.output,
      requestsSent: sent,
      requestsFailed: failed,
      lifecycle,
      pids: [],
    };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    pidsSeen.push(...group.pids());
    await group.stopAll();
  }
}
