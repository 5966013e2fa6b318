import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { FlagView, OutcomeAccepted, ReportView } from '@shadowplane/contracts';
import { checkView, ControlClient } from './client.js';
import { CliError, EXIT } from './exit-codes.js';
import { evaluateGate } from './gate.js';
import { generateKey, hashKey, keysFileYaml, KEY_SCOPES } from './keys.js';
import { registerSuiteCommands } from './suite.js';
import { registerCampaignCommands } from './campaign-commands.js';
import { baseUrl, id, intOption, parseDoc, readInput, writeOutput } from './cli-io.js';

interface GlobalOpts {
  url: string;
  apiKey?: string;
  json: boolean;
  timeoutMs: string;
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

  registerCampaignCommands(p, client, print, state, out, () => g().json);
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
        const r = await c.get(ReportView, `/v1/campaigns/${id(cid)}/report?format=json${q}`);
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
        const r = await client().post(OutcomeAccepted, '/v1/outcomes', body);
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
      let r: FlagView;
      if (value === undefined) r = await c.get(FlagView, '/v1/admin/flags/paid_dispatch');
      else {
        if (value !== 'on' && value !== 'off')
          throw new CliError(EXIT.usage, `flags paid-dispatch: expected on or off, got ${value}`);
        const put = await c.request('PUT', '/v1/admin/flags/paid_dispatch', {
          enabled: value === 'on',
          ...(o.reason ? { reason: o.reason } : {}),
        });
        r = checkView(FlagView, put.json(), 'PUT /v1/admin/flags/paid_dispatch');
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
