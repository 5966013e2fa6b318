import cliProgress from 'cli-progress';
import { CampaignStatus, REPORT_ID_HEADER, ReportView, type SequentialSummary } from '@shadowplane/contracts';
import { checkView, type ControlClient } from './client.js';
import { CliError, EXIT } from './exit-codes.js';

/** Options of {@link watchCampaign}. */
export interface WatchOptions {
  /** poll period, ms (default 1000) */
  intervalMs: number;
  /** after the campaign is terminal, how long to wait for the final report, s (default 300) */
  reportTimeoutS: number;
  /** print one JSON line per poll instead of drawing bars */
  json: boolean;
  /** output stream (default process.stdout) */
  out?: NodeJS.WriteStream;
}

const usd = (micro: number) => `$${(micro / 1e6).toFixed(micro < 10_000_000 ? 4 : 2)}`;
const errText = (e: Record<string, number>) => {
  const parts = Object.entries(e).filter(([, n]) => n > 0);
  const total = parts.reduce((s, [, n]) => s + n, 0);
  return parts.length ? `${total} (${parts.map(([k, n]) => `${k} ${n}`).join(', ')})` : '0';
};

async function finalReport(client: ControlClient, id: string): Promise<{ reportId: string } | null> {
  const r = await client.request('GET', `/v1/campaigns/${encodeURIComponent(id)}/report`, undefined, [404]);
  if (r.status === 404) return null;
  if (r.headers.get('x-shadow-report-provisional') === 'true') return null;
  return {
    reportId:
      r.headers.get(REPORT_ID_HEADER) ?? checkView(ReportView, r.json(), `GET /v1/campaigns/${id}/report`).report_id,
  };
}

/** The part of a report that {@link sequentialLines} reads (contracts Report, SequentialSummary). */
interface SequentialWire {
  call_types?:
    | {
        call_type: string;
        comparisons: {
          candidate_arm_id: string;
          sequential?:
            | Pick<
                SequentialSummary,
                | 'looks'
                | 'decision'
                | 'settled_look'
                | 'items_used'
                | 'quality_delta'
                | 'cost_savings'
                | 'planned_looks'
              >
            | null
            | undefined;
        }[];
      }[]
    | undefined;
}

/**
 * Each candidate's running confidence-sequence bounds (group_sequential: the last planned look's
 * interval at its boundary) and, once settled, the look and items it settled at, one line per call
 * type × candidate, from a (provisional or final) report of a `stopping: sequential` or
 * `group_sequential` campaign. ±100 pp is a side the sequence has not bet on yet.
 */
export function sequentialLines(report: SequentialWire): string[] {
  const pp = (x: number) => `${(100 * x).toFixed(1)}`;
  const out: string[] = [];
  for (const ct of report.call_types ?? [])
    for (const c of ct.comparisons) {
      const q = c.sequential;
      if (!q) {
        out.push(`sequential ${ct.call_type}/${c.candidate_arm_id}: no look yet (too few pairs)`);
        continue;
      }
      const sv = q.cost_savings ? `  savings [${pp(q.cost_savings.lower)}, ${pp(q.cost_savings.upper)}]%` : '';
      const when =
        q.settled_look === null
          ? `open after ${q.looks}${q.planned_looks ? ` of ${q.planned_looks.length} planned` : ''} looks (${q.items_used} items)`
          : `settled ${q.decision} at look ${q.settled_look} (${q.items_used} items)`;
      out.push(
        `sequential ${ct.call_type}/${c.candidate_arm_id}: quality [${pp(q.quality_delta.lower)}, ${pp(q.quality_delta.upper)}]pp${sv}; ${when}`,
      );
    }
  return out;
}

/** Latest report of a campaign, provisional or final, for its sequential lines (null on 404). */
async function latestSequential(client: ControlClient, id: string): Promise<string[] | null> {
  const r = await client.request('GET', `/v1/campaigns/${encodeURIComponent(id)}/report`, undefined, [404]);
  if (r.status === 404) return null;
  return sequentialLines(checkView(ReportView, r.json(), `GET /v1/campaigns/${id}/report`).report);
}

/**
 * The campaign status as plain text lines, one per thing that changes on its own: the state, each
 * call type's items, the spend, each arm. Without a TTY, watch prints a line only when it changed.
 */
export function plainLines(s: CampaignStatus, reportId: string | null): string[] {
  const lines = [
    `${s.campaign.id} (${s.campaign.spec.name}): state ${s.campaign.state}${s.campaign.state_reason ? ` — ${s.campaign.state_reason}` : ''}; report ${reportId ?? (s.terminal ? 'waiting for the verdict service' : 'not yet')}`,
  ];
  for (const ct of s.call_types) {
    const excluded = Object.values(ct.items_excluded).reduce((a, b) => a + b, 0);
    lines.push(
      `${ct.call_type}: ${ct.items_dispatched}/${ct.items_target} items  seen ${ct.items_seen}  unique ${ct.items_unique}  dups ${ct.duplicates}  excluded ${excluded}`,
    );
  }
  lines.push(
    s.spend
      ? `spend: ${usd(s.spend.settled_micro_usd)} settled + ${usd(s.spend.reserved_micro_usd)} reserved of ${usd(s.spend.limit_micro_usd)}`
      : 'spend: no ledger',
  );
  for (const a of s.arms)
    lines.push(
      `arm ${a.arm_id}${a.role === 'incumbent' ? ' (incumbent)' : ''}: ok ${a.calls_ok}  errors ${errText(a.calls_error)}  abandoned ${a.abandoned}`,
    );
  return lines;
}

/**
 * Polls a campaign and draws live progress (cli-progress): one bar per call type (items
 * dispatched of the target), a spend bar (settled + reserved vs the limit), one line per arm
 * (ok, errors by class, abandoned). When `out` is not a TTY (and not --json) it prints plain
 * lines instead, each only when it changed ({@link plainLines}). Returns when the campaign is terminal and its final
 * (non-provisional) report is written.
 * @returns exit code 0; 69 when no final report appears within `reportTimeoutS` after the end
 * @throws CliError from the client (401/403/404/connection)
 */
export async function watchCampaign(client: ControlClient, id: string, o: WatchOptions): Promise<number> {
  const out = o.out ?? process.stdout;
  const path = `/v1/campaigns/${encodeURIComponent(id)}`;
  let multi: cliProgress.MultiBar | null = null;
  let header: cliProgress.SingleBar | null = null;
  let spendBar: cliProgress.SingleBar | null = null;
  const ctBars = new Map<string, cliProgress.SingleBar>();
  const armBars = new Map<string, cliProgress.SingleBar>();
  let terminalSince: number | null = null;
  let reportId: string | null = null;
  let last: CampaignStatus | null = null;
  let printed: string[] = [];
  // sequential campaigns: the running intervals come from the latest report, which costs the
  // verdict service a fold, so it is asked at most every 10 s (and once more at the end)
  let seq: string[] = [];
  let seqAt = 0;
  try {
    for (;;) {
      const s = await client.get(CampaignStatus, path);
      last = s;
      if (s.terminal) {
        terminalSince ??= Date.now();
        const rep = await finalReport(client, id);
        if (rep) reportId = rep.reportId;
      }
      const seqRule = s.campaign.spec.stopping === 'sequential' || s.campaign.spec.stopping === 'group_sequential';
      if (seqRule && (reportId !== null || Date.now() - seqAt >= 10_000)) {
        seqAt = Date.now();
        seq = (await latestSequential(client, id)) ?? seq;
      }
      if (!o.json && !out.isTTY) {
        // not a terminal (a pipe, a log file, CI): no bars redrawn on every poll — only the lines that changed
        const now = [...plainLines(s, reportId), ...seq];
        const changed = now.filter((l, i) => l !== printed[i]);
        if (changed.length) out.write(`${changed.join('\n')}\n`);
        printed = now;
      } else if (o.json) {
        out.write(
          `${JSON.stringify({ event: 'progress', at: new Date().toISOString(), state: s.campaign.state, terminal: s.terminal, report_id: reportId, spend: s.spend, call_types: s.call_types, arms: s.arms, ...(seq.length ? { sequential: seq } : {}) })}\n`,
        );
      } else {
        if (!multi) {
          multi = new cliProgress.MultiBar(
            {
              stream: out,
              clearOnComplete: false,
              hideCursor: true,
              barsize: 30,
              noTTYOutput: !out.isTTY,
              notTTYSchedule: 1000,
              forceRedraw: true,
              autopadding: true,
              format: '{name} |{bar}| {value}/{total}',
            },
            cliProgress.Presets.shades_classic,
          );
          header = multi.create(1, 0, {}, { format: '{name}  state: {state}  report: {report}' });
          for (const ct of s.call_types)
            ctBars.set(
              ct.call_type,
              multi.create(
                ct.items_target,
                0,
                {},
                {
                  format:
                    '{name} |{bar}| {value}/{total} items  seen {seen}  unique {unique}  dups {dups}  excluded {excluded}',
                },
              ),
            );
          spendBar = multi.create(
            s.spend?.limit_micro_usd ?? 1,
            0,
            {},
            { format: '{name} |{bar}| {settled} settled + {reserved} reserved of {limit}' },
          );
          for (const a of s.arms)
            armBars.set(
              a.arm_id,
              multi.create(1, 0, {}, { format: '{name}  ok {ok}  errors {errors}  abandoned {abandoned}' }),
            );
        }
        header!.update(0, {
          name: `${s.campaign.id} (${s.campaign.spec.name})`,
          state: s.campaign.state + (s.campaign.state_reason ? ` — ${s.campaign.state_reason}` : ''),
          report: reportId ?? (s.terminal ? 'waiting for the verdict service' : 'not yet'),
        });
        for (const ct of s.call_types) {
          const excluded = Object.values(ct.items_excluded).reduce((a, b) => a + b, 0);
          ctBars.get(ct.call_type)?.update(ct.items_dispatched, {
            name: ct.call_type.padEnd(12),
            seen: ct.items_seen,
            unique: ct.items_unique,
            dups: ct.duplicates,
            excluded,
          });
        }
        if (s.spend) {
          spendBar!.setTotal(Math.max(1, s.spend.limit_micro_usd));
          spendBar!.update(s.spend.settled_micro_usd + s.spend.reserved_micro_usd, {
            name: 'spend'.padEnd(12),
            settled: usd(s.spend.settled_micro_usd),
            reserved: usd(s.spend.reserved_micro_usd),
            limit: usd(s.spend.limit_micro_usd),
          });
        } else spendBar!.update(0, { name: 'spend'.padEnd(12), settled: '?', reserved: '?', limit: 'no ledger' });
        for (const a of s.arms)
          armBars.get(a.arm_id)?.update(0, {
            name: `${a.role === 'incumbent' ? '*' : ' '} ${a.arm_id}`.padEnd(12),
            ok: a.calls_ok,
            errors: errText(a.calls_error),
            abandoned: a.abandoned,
          });
      }
      if (s.terminal && reportId) break;
      if (terminalSince !== null && Date.now() - terminalSince > o.reportTimeoutS * 1000) {
        throw new CliError(
          EXIT.unavailable,
          `campaign ${id} is ${s.campaign.state} but no final report appeared within ${o.reportTimeoutS} s (is the verdict service running?)`,
        );
      }
      await new Promise((r) => setTimeout(r, o.intervalMs));
    }
  } finally {
    multi?.stop();
  }
  if (!o.json && out.isTTY && seq.length) out.write(`${seq.join('\n')}\n`);
  if (o.json) out.write(`${JSON.stringify({ event: 'done', state: last?.campaign.state, report_id: reportId })}\n`);
  else out.write(`campaign ${id} ${last?.campaign.state}; report ${reportId} (shadowctl report ${id})\n`);
  return EXIT.ok;
}
