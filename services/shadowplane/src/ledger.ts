/**
 * `shadowplane ledger <obs.jsonl> [--hosts] [--csv] [--out DIR]`: the call ledger and the arm
 * comparison of an exported observations file (`GET /v1/campaigns/{id}/observations`, or
 * `shadowctl campaign observations`), offline.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { EX_USAGE, parseArgs } from './cli-args.js';
import { ObsMessage, type Observation } from '@shadowplane/contracts';
import {
  buildLedger,
  ledgerCsv,
  type ArmRollup,
  type CallRow,
  type HostRollup,
  type Ledger,
} from '@shadowplane/reports';

const EX_DATAERR = 65;
const EX_NOINPUT = 66;

const dash = (v: unknown) => (v === null || v === undefined ? '—' : String(v));
const f = (x: number | null, d: number) => (x === null ? '—' : x.toFixed(d));
const pc = (x: number | null) => (x === null ? '—' : `${(x * 100).toFixed(1)}%`);
const money = (x: number | null) => (x === null ? '—' : `$${x < 0.01 && x > 0 ? x.toPrecision(4) : x.toFixed(4)}`);

/** A fixed-width text table: header, a rule, rows; every cell already a string. */
function textTable(head: string[], rows: string[][]): string {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(w[i]!))
      .join('  ')
      .trimEnd();
  return [line(head), w.map((n) => '-'.repeat(n)).join('  '), ...rows.map(line)].join('\n');
}

function armsText(arms: ArmRollup[]): string {
  return textTable(
    [
      'arm',
      'role',
      'route',
      'calls',
      'never completed [95% Wilson]',
      'abandoned',
      'cost (basis)',
      '$/prompt token',
      'cache hits',
      'p50/p90 ms',
      'upstreams',
      'z vs incumbent',
      'p (Holm)',
    ],
    arms.map((a) => [
      a.arm_id,
      a.role,
      a.route,
      String(a.calls),
      `${a.never_completed} = ${pc(a.never_completed_share)} [${pc(a.never_completed_lower)}, ${pc(a.never_completed_upper)}]`,
      String(a.abandoned),
      `${money(a.cost_usd)} (${a.cost_basis ?? 'unpriced'}; ${a.cost_priced_calls} priced, ${a.cost_other_basis} other basis, ${a.cost_unpriced} unpriced)`,
      a.cost_per_prompt_token_usd === null ? '—' : `$${a.cost_per_prompt_token_usd.toPrecision(3)}`,
      pc(a.cache_hit_share),
      `${f(a.latency_p50_ms, 0)}/${f(a.latency_p90_ms, 0)}`,
      String(a.distinct_upstreams),
      f(a.z_vs_incumbent, 2),
      a.p_holm === null ? '—' : a.p_holm.toPrecision(3),
    ]),
  );
}

function callsText(calls: CallRow[]): string {
  return textTable(
    [
      'started_at',
      'call type',
      'item',
      'arm',
      'route',
      'upstream',
      'pin',
      'status',
      'error',
      'ms',
      'prompt',
      'completion',
      'cached',
      'reasoning',
      'cost (basis)',
      'abandoned',
    ],
    calls.map((c) => [
      c.started_at,
      c.call_type,
      c.item_hash.slice(0, 12),
      c.role === 'incumbent_aa' ? `${c.arm_id} (A-A)` : c.arm_id,
      c.route,
      dash(c.upstream),
      dash(c.pin_honored),
      c.http_status === null ? c.status : `${c.status} ${c.http_status}`,
      dash(c.error_class),
      dash(c.latency_ms),
      dash(c.prompt_tokens),
      dash(c.completion_tokens),
      dash(c.cached_tokens),
      dash(c.reasoning_tokens),
      c.cost_usd === null ? `— (${c.cost_basis ?? 'unpriced'})` : `${money(c.cost_usd)} (${c.cost_basis})`,
      c.abandoned ? 'yes' : 'no',
    ]),
  );
}

function hostsText(hosts: HostRollup[]): string {
  return textTable(
    ['arm', 'role', 'upstream', 'calls', 'never completed', 'pin honoured yes/no/unknown', 'p50 ms'],
    hosts.map((h) => [
      h.arm_id,
      h.role,
      dash(h.upstream),
      String(h.calls),
      `${h.never_completed} = ${pc(h.never_completed_share)}`,
      `${h.pin_honored_true}/${h.pin_honored_false}/${h.pin_honored_null}`,
      f(h.latency_p50_ms, 0),
    ]),
  );
}

function concurrencyText(l: Ledger): string {
  if (!l.concurrency.sequential)
    return `Arms ran concurrently (every arm's calls overlap the incumbent's, median start skew ≤ ${l.concurrency.skew_bound_ms} ms).`;
  return `WARNING: arms ran sequentially rather than concurrently — ${l.concurrency.arms.map((a) => `${a.arm_id}: ${a.why}`).join('; ')}. Differences between arms may reflect when they ran, not what they are.`;
}

/**
 * Reads an OBS export (one JSON message per line; item events and outcomes are skipped).
 * @throws Error with `exitCode` 66 when the file cannot be read, 65 on a line that is not an OBS message
 */
export function readObservations(file: string): Observation[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw Object.assign(new Error(`cannot read ${file}: ${(e as Error).message}`), { exitCode: EX_NOINPUT });
  }
  const out: Observation[] = [];
  text.split('\n').forEach((raw, i) => {
    const l = raw.trim();
    if (!l) return;
    let j: unknown;
    try {
      j = JSON.parse(l);
    } catch (e) {
      throw Object.assign(new Error(`${file}:${i + 1}: not JSON: ${(e as Error).message}`), { exitCode: EX_DATAERR });
    }
    const r = ObsMessage.safeParse(j);
    if (!r.success)
      throw Object.assign(
        new Error(
          `${file}:${i + 1}: not an OBS message: ${r.error.issues
            .slice(0, 3)
            .map((x) => `${x.path.join('.')}: ${x.message}`)
            .join('; ')}`,
        ),
        { exitCode: EX_DATAERR },
      );
    if (r.data.schema === 'shadow.observation/v1') out.push(r.data);
  });
  return out;
}

/**
 * Entry point. Text mode prints the concurrency check, the per-arm rollup, the per-upstream table
 * (with `--hosts`) and the call ledger to stdout. `--csv` writes `calls.csv`, `arms.csv` (and
 * `hosts.csv` with `--hosts`) into `--out` (default: the current directory) and prints their paths.
 * Exit codes: 0 ok, 64 usage, 65 bad data (a line that is not an OBS message, or no observation), 66 file missing.
 */
export async function main(argv: string[]): Promise<number> {
  const program = new Command('shadowplane ledger')
    .description('the call ledger and per-arm comparison of an exported observations file')
    .argument('<obs-file>', 'exported observations, one OBS message per line (JSON Lines)')
    .option('--hosts', 'also break calls down by arm and echoed upstream (pin honoured counts)', false)
    .option('--csv', 'write the tables as CSV files (calls.csv, arms.csv, hosts.csv) instead of printing them', false)
    .option('--out <dir>', 'directory for --csv files (default: the current directory)');
  const parsed = parseArgs(program, argv);
  if (parsed !== null) return parsed;
  const o = program.opts<{ hosts: boolean; csv: boolean; out?: string }>();
  if (o.out !== undefined && !o.csv) {
    process.stderr.write('shadowplane ledger: --out names where --csv files go; pass --csv too\n');
    return EX_USAGE;
  }
  let obs: Observation[];
  try {
    obs = readObservations(program.args[0]!);
  } catch (e) {
    process.stderr.write(`shadowplane ledger: ${(e as Error).message}\n`);
    return (e as { exitCode?: number }).exitCode ?? EX_DATAERR;
  }
  if (obs.length === 0) {
    process.stderr.write(`shadowplane ledger: ${program.args[0]} holds no observation\n`);
    return EX_DATAERR;
  }
  const l = buildLedger(obs);
  if (o.csv) {
    const dir = o.out ?? '.';
    mkdirSync(dir, { recursive: true });
    const csv = ledgerCsv(l);
    const files: [string, string][] = [
      ['calls.csv', csv.calls],
      ['arms.csv', csv.arms],
      ...(o.hosts ? ([['hosts.csv', csv.hosts]] as [string, string][]) : []),
    ];
    for (const [name, text] of files) writeFileSync(join(dir, name), text);
    process.stdout.write(`${files.map(([n]) => join(dir, n)).join('\n')}\n`);
    process.stderr.write(`${concurrencyText(l)}\n`);
    return 0;
  }
  const parts = [
    concurrencyText(l),
    `Arms (${obs.length} calls; never completed = status error; z-test of each arm's never-completed share against the incumbent's, Holm-corrected):\n${armsText(l.arms)}`,
  ];
  if (o.hosts) parts.push(`By upstream:\n${hostsText(l.hosts)}`);
  parts.push(`Calls (null = not reported, shown as —; never 0):\n${callsText(l.calls)}`);
  process.stdout.write(`${parts.join('\n\n')}\n`);
  return 0;
}
