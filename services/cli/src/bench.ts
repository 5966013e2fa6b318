import { CampaignStatus, ReportView } from '@shadowplane/contracts';
import { checkView, type ControlClient } from './client.js';
import { CliError, EXIT } from './exit-codes.js';
import type { GateResult } from './gate.js';

/** The report fields the JUnit writer reads (the `shadow.report/v1` contract satisfies it). */
interface ReportLike {
  report_id?: string;
  spec?: { margins?: { noninferiority_pp?: number; min_savings?: number } };
  call_types?: {
    call_type: string;
    comparisons?: {
      candidate_arm_id: string;
      state: string;
      decision: 'pass' | 'fail' | 'inconclusive' | null;
      decision_reasons?: string[];
      cannot_measure?: { reason: string; detail: string } | null;
      pairs?: { items: number; clusters: number; excluded?: Record<string, number> };
      stats?: {
        quality_delta: { point: number; lower: number; upper: number };
        cost_savings: { point: number; lower: number; upper: number } | null;
        level: number;
        margin_pp: number;
        min_savings: number;
      } | null;
    }[];
  }[];
}

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
const pp = (x: number) => `${(x * 100).toFixed(2)}pp`;
const frac = (x: number) => `${(x * 100).toFixed(2)}%`;

interface Case {
  classname: string;
  name: string;
  failure: string | null;
}

/**
 * JUnit XML for a gated compare report: one `<testsuite>` per call type, and per candidate three
 * `<testcase>`s — `decision` (passes only when the decision is pass on a final report, exactly as
 * the gate), `quality_noninferiority` (lower end of the quality-delta interval above −margin) and
 * `cost_savings` (lower end of the savings interval at least min_savings). A failure message
 * names the interval, its level and the margin, or why the comparison could not be measured.
 * `provisional` fails every decision case. Shape: report JSON + gate + provisional → XML text.
 */
export function junitXml(report: unknown, gate: GateResult, provisional: boolean): string {
  const r = report as ReportLike;
  const suites: { name: string; cases: Case[] }[] = [];
  for (const ct of r.call_types ?? []) {
    const cases: Case[] = [];
    for (const c of ct.comparisons ?? []) {
      const cls = `shadowplane.${ct.call_type}.${c.candidate_arm_id}`;
      const st = c.stats ?? null;
      const why = c.cannot_measure
        ? `not measured (${c.state}): ${c.cannot_measure.reason}: ${c.cannot_measure.detail}`
        : `not measured (${c.state})`;
      const excluded = Object.entries(c.pairs?.excluded ?? {})
        .map(([k, n]) => `${k} ${n}`)
        .join(', ');
      const pairs = c.pairs
        ? `; ${c.pairs.items} pairs in ${c.pairs.clusters} clusters${excluded ? `, excluded: ${excluded}` : ''}`
        : '';
      cases.push({
        classname: cls,
        name: 'decision',
        failure: provisional
          ? 'the report is provisional'
          : c.decision === 'pass'
            ? null
            : `${c.decision ?? why}: ${(c.decision_reasons ?? []).join('; ') || why}${pairs}`,
      });
      if (!st) {
        cases.push({ classname: cls, name: 'quality_noninferiority', failure: why + pairs });
        cases.push({ classname: cls, name: 'cost_savings', failure: why + pairs });
        continue;
      }
      const q = st.quality_delta;
      const level = `${(st.level * 100).toFixed(2)}%`;
      cases.push({
        classname: cls,
        name: 'quality_noninferiority',
        failure:
          q.lower > -st.margin_pp / 100
            ? null
            : `quality delta ${pp(q.point)}, ${level} interval [${pp(q.lower)}, ${pp(q.upper)}]: ${q.upper < -st.margin_pp / 100 ? 'upper end below' : 'lower end not above'} the margin -${st.margin_pp}pp${pairs}`,
      });
      const s = st.cost_savings;
      cases.push({
        classname: cls,
        name: 'cost_savings',
        failure:
          s === null
            ? `cost savings unmeasurable${pairs}`
            : s.lower >= st.min_savings
              ? null
              : `cost savings ${frac(s.point)}, ${level} interval [${frac(s.lower)}, ${frac(s.upper)}]: lower end below min_savings ${frac(st.min_savings)}${pairs}`,
      });
    }
    suites.push({ name: `shadowplane.${ct.call_type}`, cases });
  }
  if (suites.length === 0 || suites.every((s) => s.cases.length === 0))
    suites.push({ name: 'shadowplane', cases: [{ classname: 'shadowplane', name: 'gate', failure: gate.reason }] });
  const total = suites.reduce((a, s) => a + s.cases.length, 0);
  const failures = suites.reduce((a, s) => a + s.cases.filter((c) => c.failure !== null).length, 0);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="shadowplane bench" tests="${total}" failures="${failures}" errors="0">`,
  ];
  for (const s of suites) {
    const f = s.cases.filter((c) => c.failure !== null).length;
    lines.push(`  <testsuite name="${esc(s.name)}" tests="${s.cases.length}" failures="${f}" errors="0">`);
    if (r.report_id)
      lines.push(`    <properties><property name="report_id" value="${esc(r.report_id)}"/></properties>`);
    for (const c of s.cases) {
      const open = `    <testcase classname="${esc(c.classname)}" name="${esc(c.name)}"`;
      if (c.failure === null) lines.push(`${open}/>`);
      else
        lines.push(
          `${open}>`,
          `      <failure message="${esc(c.failure)}" type="gate">${esc(c.failure)}</failure>`,
          '    </testcase>',
        );
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>', '');
  return lines.join('\n');
}

/** Options of {@link benchRun}. */
export interface BenchRunOptions {
  suite: string;
  budgetUsd: number;
  /** `cmp_…` or `<suite>:main` */
  baseline: string;
  /** the current config: a CampaignSpec mapping (candidates, scorers, margins, …) without incumbent */
  spec: Record<string, unknown>;
  pollMs: number;
  timeoutS: number;
  /** progress lines (stderr) */
  say: (line: string) => void;
}

/** What {@link benchRun} produced. */
export interface BenchRunResult {
  campaign_id: string;
  report_id: string;
  run_record_id: string | null;
  provisional: boolean;
  report: unknown;
  state: string;
}

/**
 * Launches a compare run of the current config against a baseline (`POST /v1/campaigns` with
 * `compare.baseline`, `suite` and `max_cost_usd` from the options over the spec file's fields),
 * then polls until the campaign is terminal and its final report is written.
 * @throws CliError from the client (400 → 65, 404 baseline_not_found → 1, 409 → 1, 503 → 69, …);
 *   CliError 69 when no final report appears within `timeoutS`
 */
export async function benchRun(client: ControlClient, o: BenchRunOptions): Promise<BenchRunResult> {
  const body = {
    name: `bench ${o.suite} vs ${o.baseline}`,
    ...o.spec,
    suite: o.suite,
    max_cost_usd: o.budgetUsd,
    compare: { baseline: o.baseline },
  };
  const launched = await client.post(CampaignStatus, '/v1/campaigns', body);
  const id = launched.campaign.id;
  o.say(`bench: compare run ${id} (run ${launched.campaign.run_index}) against ${o.baseline}`);
  const deadline = Date.now() + o.timeoutS * 1000;
  let lastState = '';
  for (;;) {
    const s = await client.get(CampaignStatus, `/v1/campaigns/${encodeURIComponent(id)}`);
    if (s.campaign.state !== lastState) {
      lastState = s.campaign.state;
      o.say(`bench: ${id} ${lastState}`);
    }
    if (s.terminal) {
      const r = await client.request(
        'GET',
        `/v1/campaigns/${encodeURIComponent(id)}/report?format=json`,
        undefined,
        [404],
      );
      if (r.status === 200) {
        const j = checkView(ReportView, r.json(), `GET /v1/campaigns/${id}/report`);
        if (!j.provisional)
          return {
            campaign_id: id,
            report_id: j.report_id,
            run_record_id: j.run_record_id,
            provisional: false,
            report: j.report,
            state: s.campaign.state,
          };
      }
    }
    if (Date.now() > deadline)
      throw new CliError(
        EXIT.unavailable,
        `bench: no final report for ${id} within ${o.timeoutS} s (state ${lastState})`,
      );
    await new Promise((res) => setTimeout(res, o.pollMs));
  }
}
