import { readFileSync, writeFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { parse as parseYaml } from 'yaml';
import { ControlClient } from './client.js';
import { CliError, EXIT } from './exit-codes.js';
import { evaluateGate } from './gate.js';
import { watchCampaign } from './watch.js';
import { generateKey, hashKey, keysFileYaml, KEY_SCOPES } from './keys.js';
import { registerSuiteCommands } from './suite.js';

interface GlobalOpts {
  url: string;
  apiKey?: string;
  json: boolean;
  timeoutMs: string;
}

function readInput(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new CliError(
      EXIT.noInput,
      `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}

function writeOutput(path: string, text: string): void {
  try {
    writeFileSync(path, text);
  } catch (e) {
    throw new CliError(
      EXIT.cantCreate,
      `cannot write ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}

function parseDoc(path: string): unknown {
  const text = readInput(path);
  try {
    return parseYaml(text);
  } catch (e) {
    throw new CliError(EXIT.dataError, `${path} is not valid YAML/JSON: ${(e as Error).message}`);
  }
}

const id = (s: string) => encodeURIComponent(s);

/** A whole-number option at least `min`, or a usage error (64) naming the option. */
function intOption(name: string, v: string, min: number): number {
  const n = /^\d{1,12}$/.test(v.trim()) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min)
    throw new CliError(EXIT.usage, `${name} must be a whole number ≥ ${min}, got '${v}'`);
  return n;
}

/** The control API base URL: http(s) only, or a usage error (64) naming --url. */
function baseUrl(v: string): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new CliError(EXIT.usage, `--url (SHADOWPLANE_URL) must be an http(s) URL, got '${v}'`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new CliError(EXIT.usage, `--url (SHADOWPLANE_URL) must be an http(s) URL, got '${v}'`);
  return v;
}

/**
 * Builds the shadowctl command tree. `print` writes results (JSON with --json, text otherwise);
 * actions set `state.code` for their exit code.
 */
function program(state: { code: number }, out: NodeJS.WriteStream, err: NodeJS.WriteStream): Command {
  const p = new Command('shadowctl')
    .description('Operator CLI over the Shadowplane control API')
    .addOption(
      new Option('--url <url>', 'control API base URL').env('SHADOWPLANE_URL').default('http://127.0.0.1:8090'),
    )
    .addOption(
      new Option('--api-key <key>', 'bearer API key (prefer the env var; never printed)').env('SHADOWPLANE_API_KEY'),
    )
    .option('--json', 'machine-readable JSON output', false)
    .option('--timeout-ms <ms>', 'per-request timeout, ms', '30000')
    .showHelpAfterError()
    .configureOutput({ writeOut: (s) => out.write(s), writeErr: (s) => err.write(s) })
    .addHelpText(
      'after',
      `\nExit codes: ${EXIT.ok} done, ${EXIT.error} error, ${EXIT.gateFailed} --gate failed or bundle problems, ${EXIT.usage} bad flag or argument,\n${EXIT.dataError} request refused as invalid, ${EXIT.noInput} input unreadable, ${EXIT.unavailable} control API unreachable or 503,\n${EXIT.cantCreate} output unwritable, ${EXIT.noPermission} key missing, unknown or without the scope (services/cli/README.md).`,
    )
    .exitOverride();
  const g = () => p.opts<GlobalOpts>();
  const client = () => {
    const o = g();
    return new ControlClient({
      url: baseUrl(o.url),
      apiKey: o.apiKey,
      timeoutMs: intOption('--timeout-ms', o.timeoutMs, 1),
    });
  };
  const print = (value: unknown, text: () => string) =>
    out.write(g().json ? `${JSON.stringify(value)}\n` : `${text()}\n`);

  const campaign = p
    .command('campaign')
    .description('launch, list, watch, pause, resume and stop campaigns')
    .exitOverride();
  campaign
    .command('create')
    .description('launch a campaign from a spec file (YAML or JSON), or plan it with --dry-run')
    .requiredOption('-f, --file <spec>', 'campaign spec, YAML or JSON')
    .option('--dry-run', 'estimate cost, power plan and dispositions; nothing is written', false)
    .option('--require-power', 'refuse if a call type cannot reach the margin at max_items', false)
    .action(async (o: { file: string; dryRun: boolean; requirePower: boolean }) => {
      const spec = parseDoc(o.file);
      if (spec === null || typeof spec !== 'object' || Array.isArray(spec))
        throw new CliError(EXIT.dataError, `${o.file} must hold a mapping (the campaign spec)`);
      const body = {
        ...(spec as Record<string, unknown>),
        ...(o.dryRun ? { dry_run: true } : {}),
        ...(o.requirePower ? { require_power: true } : {}),
      };
      const r = await client().post<Record<string, unknown>>('/v1/campaigns', body);
      if (o.dryRun) {
        const d = r as {
          would_launch: boolean;
          estimate: { worst_case_total_usd: number | null; max_cost_usd: number; items_affordable: number | null };
          dispositions: { call_type: string; disposition: string; reasons: string[]; warnings: string[] }[];
          power: {
            call_type: string;
            mde_pp: number | null;
            margin_pp: number;
            powered: boolean;
            design_effect?: number;
            design_effect_source?: string;
          }[];
          stopping?: {
            call_type: string;
            rule: string;
            worst_case_usd: number | null;
            sequential: { scenarios: { scenario: string; expected_items: number; expected_usd: number | null }[] };
            worst_case_items: number;
          }[];
        };
        const usd = (x: number | null): string => (x === null ? 'unknown' : `$${x.toFixed(4)}`);
        print(r, () =>
          [
            `dry run: ${d.would_launch ? 'would launch' : 'would NOT launch'}`,
            `worst case ${d.estimate.worst_case_total_usd === null ? 'unknown (an arm has no rate card)' : `$${d.estimate.worst_case_total_usd.toFixed(4)}`} (estimate) for budget $${d.estimate.max_cost_usd}; items affordable per call type: ${d.estimate.items_affordable ?? 'unknown'}`,
            ...d.power.map(
              (x) =>
                `power ${x.call_type}: MDE ${x.mde_pp === null ? 'n/a' : `${x.mde_pp.toFixed(2)} pp`} vs margin ${x.margin_pp} pp → ${x.powered ? 'powered' : 'underpowered'}${x.design_effect_source ? ` (prior sd, design effect ${x.design_effect ?? 1} from ${x.design_effect_source})` : ''}`,
            ),
            ...(d.stopping ?? []).map(
              (x) =>
                `spend ${x.call_type} (${x.rule}): fixed pays ${x.worst_case_items} items, ${usd(x.worst_case_usd)} (worst case of both rules); sequential expected (simulated) ${x.sequential.scenarios.map((sc) => `${sc.scenario} ${sc.expected_items} items ${usd(sc.expected_usd)}`).join(', ')}`,
            ),
            ...d.dispositions.map(
              (x) =>
                `${x.call_type}: ${x.disposition}${x.reasons.length ? ` (${x.reasons.join(', ')})` : ''}${x.warnings.length ? ` warnings: ${x.warnings.join(', ')}` : ''}`,
            ),
          ].join('\n'),
        );
      } else {
        const c = (r as { campaign: { id: string; run_index: number; state: string } }).campaign;
        print(r, () => `${c.id} ${c.state} (run ${c.run_index}); watch with: shadowctl campaign watch ${c.id}`);
      }
    });
  campaign
    .command('list')
    .description('list campaigns, newest first')
    .option('--state <state>', 'only campaigns in this state')
    .action(async (o: { state?: string }) => {
      const r = await client().get<{
        campaigns: {
          id: string;
          name: string;
          state: string;
          run_index: number;
          created_at: string;
          spend: { settled_usd: number; limit_usd: number } | null;
        }[];
      }>(`/v1/campaigns${o.state ? `?state=${id(o.state)}` : ''}`);
      print(r, () =>
        r.campaigns.length
          ? r.campaigns
              .map(
                (c) =>
                  `${c.id}  ${c.state.padEnd(16)} run ${c.run_index}  ${c.spend ? `$${c.spend.settled_usd.toFixed(4)}/$${c.spend.limit_usd}` : 'no ledger'}  ${c.created_at}  ${c.name}`,
              )
              .join('\n')
          : 'no campaigns',
      );
    });
  campaign
    .command('get <id>')
    .description('state, progress, spend and per-arm counts of a campaign')
    .action(async (cid: string) => {
      const r = await client().get<{
        campaign: { id: string; state: string; spec: { name: string } };
        spend: { settled_usd: number; reserved_usd: number; limit_usd: number } | null;
        call_types: { call_type: string; items_dispatched: number; items_target: number; items_seen: number }[];
        arms: { arm_id: string; calls_ok: number; calls_error: Record<string, number>; abandoned: number }[];
      }>(`/v1/campaigns/${id(cid)}`);
      print(r, () =>
        [
          `${r.campaign.id} ${r.campaign.state}  ${r.campaign.spec.name}`,
          `spend: ${r.spend ? `$${r.spend.settled_usd} settled + $${r.spend.reserved_usd} reserved of $${r.spend.limit_usd}` : 'no ledger'}`,
          ...r.call_types.map(
            (c) => `${c.call_type}: ${c.items_dispatched}/${c.items_target} dispatched, ${c.items_seen} seen`,
          ),
          ...r.arms.map(
            (a) =>
              `${a.arm_id}: ok ${a.calls_ok}, errors ${Object.values(a.calls_error).reduce((x, y) => x + y, 0)}, abandoned ${a.abandoned}`,
          ),
        ].join('\n'),
      );
    });
  campaign
    .command('watch <id>')
    .description('live progress until the campaign ends and its final report is written')
    .option('--interval-ms <ms>', 'poll period, ms', '1000')
    .option('--report-timeout-s <s>', 'after the end, how long to wait for the report, s', '300')
    .action(async (cid: string, o: { intervalMs: string; reportTimeoutS: string }) => {
      const intervalMs = intOption('--interval-ms', o.intervalMs, 10);
      const reportTimeoutS = intOption('--report-timeout-s', o.reportTimeoutS, 0);
      state.code = await watchCampaign(client(), cid, { intervalMs, reportTimeoutS, json: g().json, out });
    });
  for (const action of ['pause', 'resume', 'stop'] as const) {
    campaign
      .command(`${action} <id>`)
      .description(`${action} a campaign`)
      .action(async (cid: string) => {
        const r = await client().post<{ campaign: { id: string; state: string } }>(
          `/v1/campaigns/${id(cid)}/${action}`,
        );
        print(r, () => `${r.campaign.id} ${r.campaign.state}`);
      });
  }

  registerSuiteCommands(p, client, print);

  p.command('report <id>')
    .description('print a campaign report; write its HTML or evidence bundle; --gate for CI')
    .option('--html <file>', 'write the HTML report to a file')
    .option('--bundle <file>', 'write the evidence bundle (JSON) to a file')
    .option('--provisional', 'ask the verdict service for a provisional report first', false)
    .option('--gate', 'exit 0 only if every comparison passed on a final report; 2 otherwise', false)
    .option('--candidate <arm>', 'with --gate: only gate this candidate arm')
    .action(
      async (
        cid: string,
        o: { html?: string; bundle?: string; provisional: boolean; gate: boolean; candidate?: string },
      ) => {
        const c = client();
        const q = o.provisional ? '&provisional=true' : '';
        const r = await c.get<{
          report_id: string;
          provisional: boolean;
          report: { verdict_text?: string[] };
          run_record_id?: string | null;
          run_record?: {
            campaign_id?: string;
            campaign_state?: string | null;
            window?: { first_started_at: string | null; last_ended_at: string | null };
          } | null;
        }>(`/v1/campaigns/${id(cid)}/report?format=json${q}`);
        const run = r.run_record ?? null;
        if (o.html) writeOutput(o.html, (await c.request('GET', `/v1/campaigns/${id(cid)}/report?format=html`)).text);
        if (o.bundle)
          writeOutput(o.bundle, (await c.request('GET', `/v1/campaigns/${id(cid)}/report?format=bundle`)).text);
        const gate = o.gate ? evaluateGate(r.report, r.provisional, o.candidate) : null;
        print(gate ? { ...r, gate } : r, () =>
          [
            `report ${r.report_id}${r.provisional ? ' (provisional)' : ''}`,
            ...(r.run_record_id && run
              ? [
                  `run record ${r.run_record_id}: campaign ${run.campaign_id ?? '?'} ${run.campaign_state ?? ''}, window ${run.window?.first_started_at ?? '—'} → ${run.window?.last_ended_at ?? '—'}`,
                ]
              : []),
            ...(r.report.verdict_text ?? []),
            ...(o.html ? [`html written to ${o.html}`] : []),
            ...(o.bundle ? [`bundle written to ${o.bundle}`] : []),
            ...(gate ? [`gate: ${gate.pass ? 'PASS' : 'FAIL'} — ${gate.reason}`] : []),
          ].join('\n'),
        );
        if (gate && !gate.pass) state.code = EXIT.gateFailed;
      },
    );

  p.command('bench')
    .description('the bench loop: compare the current config against a baseline run, gate CI on it')
    .command('run <suite>')
    .description('launch a compare run against --baseline, wait for its final report; --gate for CI')
    .requiredOption('--budget <usd>', 'hard budget of the compare run, USD (max_cost_usd)')
    .option('--baseline <ref>', "baseline run: a campaign id (cmp_…) or '<suite>:main' (default: <suite>:main)")
    .option('-f, --spec <file>', 'the current config: a CampaignSpec YAML/JSON with candidates (incumbent omitted)')
    .option('--gate', 'exit 0 only if the compare passed on its final report; 2 on fail or inconclusive', false)
    .option('--junit <file>', 'write a JUnit XML report (one testcase per candidate and metric)')
    .option('--poll-ms <ms>', 'status poll period, ms', '2000')
    .option('--wait-s <s>', 'how long to wait for the final report, s', '1800')
    .action(
      async (
        suite: string,
        o: {
          budget: string;
          baseline?: string;
          spec?: string;
          gate: boolean;
          junit?: string;
          pollMs: string;
          waitS: string;
        },
      ) => {
        const budget = o.budget.trim() === '' ? NaN : Number(o.budget);
        if (!Number.isFinite(budget) || budget <= 0)
          throw new CliError(EXIT.usage, `--budget must be a positive number of USD, got '${o.budget}'`);
        const spec = o.spec ? parseDoc(o.spec) : {};
        if (spec === null || typeof spec !== 'object' || Array.isArray(spec))
          throw new CliError(EXIT.dataError, `${o.spec} must hold a mapping (the campaign spec)`);
        const { benchRun, junitXml } = await import('./bench.js');
        const r = await benchRun(client(), {
          suite,
          budgetUsd: budget,
          baseline: o.baseline ?? `${suite}:main`,
          spec: spec as Record<string, unknown>,
          pollMs: intOption('--poll-ms', o.pollMs, 10),
          timeoutS: intOption('--wait-s', o.waitS, 1),
          say: (l) => err.write(`${l}\n`),
        });
        const gate = evaluateGate(r.report, r.provisional);
        if (o.junit) writeOutput(o.junit, junitXml(r.report, gate, r.provisional));
        const verdict = (r.report as { verdict_text?: string[] }).verdict_text ?? [];
        print({ ...r, gate: o.gate ? gate : undefined, gate_exit_code: gate.pass ? EXIT.ok : EXIT.gateFailed }, () =>
          [
            `compare run ${r.campaign_id} ${r.state}; report ${r.report_id}`,
            ...verdict,
            ...(o.junit ? [`junit written to ${o.junit}`] : []),
            ...(o.gate ? [`gate: ${gate.pass ? 'PASS' : 'FAIL'} — ${gate.reason}`] : []),
          ].join('\n'),
        );
        if (o.gate && !gate.pass) state.code = EXIT.gateFailed;
      },
    );

  p.command('verify <bundle>')
    .description('verify an evidence bundle offline: recompute its statistics and hashes')
    .action(async (file: string) => {
      const text = readInput(file);
      let bundle: unknown;
      try {
        bundle = JSON.parse(text);
      } catch (e) {
        throw new CliError(EXIT.dataError, `${file} is not JSON: ${(e as Error).message}`);
      }
      // loaded on demand: the fold and bootstrap code is only needed here, and shadowctl should start fast
      const { verifyBundle } = await import('@shadowplane/evidence');
      const v = verifyBundle(bundle);
      print(v, () =>
        v.ok
          ? `${file}: OK — every recomputed value matches`
          : [
              `${file}: ${v.problems.length} problem(s)`,
              ...v.problems.map(
                (x) =>
                  `  ${x.path}: ${x.message} (expected ${JSON.stringify(x.expected)}, got ${JSON.stringify(x.actual)})`,
              ),
            ].join('\n'),
      );
      if (!v.ok) state.code = EXIT.gateFailed;
    });

  p.command('outcome')
    .description('first-party outcomes')
    .command('add')
    .description('record a first-party outcome for an envelope or an item')
    .addOption(new Option('--result <result>', 'outcome').choices(['pass', 'fail', 'score']).makeOptionMandatory())
    .requiredOption('--source <source>', 'who says so, e.g. ci:unit-tests')
    .option('--score <x>', 'score in [0, 1] (required with --result score)')
    .option('--campaign <id>', 'campaign id')
    .option('--item-hash <hash>', 'item hash (64 hex)')
    .option('--envelope-id <uuid>', 'envelope id')
    .option('--arm <id>', 'arm id')
    .option('--closes-task', 'this outcome closes the task (counts for cost per task)', false)
    .option('--at <iso>', 'when it happened (ISO 8601)')
    .action(
      async (o: {
        result: string;
        source: string;
        score?: string;
        campaign?: string;
        itemHash?: string;
        envelopeId?: string;
        arm?: string;
        closesTask: boolean;
        at?: string;
      }) => {
        const body: Record<string, unknown> = { result: o.result, source: o.source, closes_task: o.closesTask };
        if (o.score !== undefined) {
          const x = o.score.trim() === '' ? NaN : Number(o.score);
          if (!Number.isFinite(x))
            throw new CliError(EXIT.usage, `--score must be a number in [0, 1], got '${o.score}'`);
          body['score'] = x;
        }
        if (o.campaign) body['campaign_id'] = o.campaign;
        if (o.itemHash) body['item_hash'] = o.itemHash;
        if (o.envelopeId) body['envelope_id'] = o.envelopeId;
        if (o.arm) body['arm_id'] = o.arm;
        if (o.at) body['at'] = o.at;
        const r = await client().post<{ outcome_id: string; duplicate: boolean }>('/v1/outcomes', body);
        print(r, () => `outcome ${r.outcome_id}${r.duplicate ? ' (already recorded)' : ' recorded'}`);
      },
    );

  p.command('flags')
    .description('operator flags')
    .command('paid-dispatch [value]')
    .description('show, or turn on/off, the paid_dispatch kill switch')
    .option('--reason <text>', 'why (kept with the flag)')
    .action(async (value: string | undefined, o: { reason?: string }) => {
      const c = client();
      let r: {
        enabled: boolean;
        state: string;
        flag: { updated_by: string; updated_at: string; reason?: string } | null;
      };
      if (value === undefined) r = await c.get('/v1/admin/flags/paid_dispatch');
      else {
        if (value !== 'on' && value !== 'off')
          throw new CliError(EXIT.usage, `flags paid-dispatch: expected on or off, got ${value}`);
        r = (
          await c.request('PUT', '/v1/admin/flags/paid_dispatch', {
            enabled: value === 'on',
            ...(o.reason ? { reason: o.reason } : {}),
          })
        ).json();
      }
      print(
        r,
        () =>
          `paid_dispatch ${r.state}${r.flag ? ` (by ${r.flag.updated_by} at ${r.flag.updated_at}${r.flag.reason ? `: ${r.flag.reason}` : ''})` : ''}`,
      );
    });

  const keys = p.command('keys').description('API keys for the control API keys file');
  keys
    .command('hash [key]')
    .description('print the sha256:<hex> hash of a key (read from stdin when not given)')
    .action(async (key: string | undefined) => {
      const k = key ?? readFileSync(0, 'utf8').trim();
      if (!k) throw new CliError(EXIT.usage, 'keys hash: no key given');
      print({ hash: hashKey(k) }, () => hashKey(k));
    });
  keys
    .command('new')
    .description(
      'generate a random key and print it with its hash (store the key as a secret, the hash in the keys file)',
    )
    .option('--id <id>', 'key id for the keys file line', 'ops')
    .option('--scopes <list>', `comma-separated scopes (${KEY_SCOPES.join(', ')})`, 'campaign:read')
    .action(async (o: { id: string; scopes: string }) => {
      if (!/^[A-Za-z0-9_.-]{1,64}$/.test(o.id))
        throw new CliError(EXIT.usage, `keys new: --id must be 1–64 of [A-Za-z0-9_.-], got '${o.id}'`);
      const scopes = [
        ...new Set(
          o.scopes
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        ),
      ];
      const unknown = scopes.filter((s) => !(KEY_SCOPES as readonly string[]).includes(s));
      if (unknown.length || scopes.length === 0)
        throw new CliError(EXIT.usage, `keys new: --scopes takes ${KEY_SCOPES.join(', ')}; got '${o.scopes}'`);
      const k = generateKey();
      const entry = { id: o.id, hash: hashKey(k), scopes };
      // the keys file (SHADOWPLANE_CONTROL_API_KEYS_FILE) is a YAML list: print a list item to append
      print({ key: k, entry, keys_file_yaml: keysFileYaml([entry]) }, () =>
        [
          `key: ${k}`,
          '(store the key as a secret; it is not shown again)',
          '',
          `# append to the keys file (SHADOWPLANE_CONTROL_API_KEYS_FILE), a YAML list:`,
          keysFileYaml([entry]).trimEnd(),
        ].join('\n'),
      );
    });
  return p;
}

/**
 * Entry point of shadowctl. Exit codes: see services/cli/README.md and exit-codes.ts.
 * @param argv arguments after the binary name
 */
export async function main(
  argv: string[],
  io: { out?: NodeJS.WriteStream; err?: NodeJS.WriteStream } = {},
): Promise<number> {
  const out = io.out ?? process.stdout;
  const err = io.err ?? process.stderr;
  const state = { code: EXIT.ok as number };
  const p = program(state, out, err);
  try {
    await p.parseAsync(argv, { from: 'user' });
    return state.code;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.help' || e.code === 'commander.version')
        return EXIT.ok;
      return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (e instanceof CliError) {
      const json = argv.includes('--json');
      err.write(
        json
          ? `${JSON.stringify({ error: { exit_code: e.exitCode, message: e.message, body: e.body ?? null } })}\n`
          : `shadowctl: ${e.message}\n`,
      );
      return e.exitCode;
    }
    err.write(`shadowctl: ${(e as Error).stack ?? String(e)}\n`);
    return EXIT.error;
  }
}
