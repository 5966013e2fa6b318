/**
 * Self-contained HTML rendering of a report for a reader who opens only the page (finance, audit):
 * a header with campaign, window, pinned margins and α, the budget cap and what the evaluation
 * spent against it (arms and judge apart); verdicts in words with every savings figure labelled by
 * its basis and as a projection; a monthly projection at the volume the campaign observed; a
 * concurrency warning; the cost–quality frontier (intervals on every arm, the margin drawn, a
 * legend, ticked axes); quality by context size; the arm and comparison tables; a glossary.
 * No scripts, no external resources, no raw JSON.
 */
import type { CallTypeReport, CampaignSpec, Report, RunArmTimes, RunRecord } from '@shadowplane/contracts';
import { contextChart, frontierChart, type RenderBundle } from './html-charts.js';
import {
  counts,
  duration,
  esc,
  num,
  pct,
  PROJECTION_DAYS,
  SHORT_WINDOW_HOURS,
  SKEW_WARNING_MS,
  usd,
} from './html-format.js';
import { GLOSSARY } from './html-glossary.js';
import { armRow, cmpRow, projectionRows, verdictLine } from './html-tables.js';

export type { RenderBundle } from './html-charts.js';
export { niceTicks, PROJECTION_DAYS, SKEW_WARNING_MS, usd } from './html-format.js';

/** Options of {@link renderReportHtml}. */
export interface RenderOptions {
  /** the evidence bundle of the same fold: enables the incumbent's whiskers and the quality-by-context-size chart */
  bundle?: RenderBundle | null;
}

/** The pinned spec of a report, or null (reports always carry it; older ones may not). */
function specOf(report: Report): CampaignSpec | null {
  const s = report.spec as CampaignSpec | undefined;
  return s && typeof s === 'object' && 'max_cost_usd' in s ? s : null;
}

/** Hours between the window's first start and last end (run record first, else the report); null when unknown or empty. */
function windowHours(run: RunRecord | null, report: Report): number | null {
  const w = run?.window ?? report.window;
  if (!w?.first_started_at || !w.last_ended_at) return null;
  const ms = Date.parse(w.last_ended_at) - Date.parse(w.first_started_at);
  return Number.isFinite(ms) && ms > 0 ? ms / 3_600_000 : null;
}

/**
 * Renders a report and the run record of the run that produced it as one self-contained HTML page
 * (inline CSS and SVG, no scripts).
 * Header `dl.summary` holds one `dd[data-field]` per figure, with the raw value in `data-value`
 * (USD as a decimal, shares as fractions): `campaign`, `name`, `state`, `window`, `margin_pp`,
 * `min_savings`, `alpha`, `max_cost_usd`, `spend_arms_usd`, `spend_share_of_cap`, `spend_judge_usd`.
 * Both ids are in `code.report-id` and `code.run-record-id`. `div.warning.concurrency` appears when
 * any arm's p90 start skew (run record) exceeds {@link SKEW_WARNING_MS}. Each measurable arm is an SVG
 * `circle.arm-marker[data-arm]` on `svg.frontier-chart`; arms not drawn and dominated arms are listed
 * in `ul.beside > li[data-arm]` with why. `table.projection` holds the monthly projection,
 * `svg.context-chart` quality by context size (needs `opts.bundle`), `dl.glossary` the terms.
 */
export function renderReportHtml(report: Report, runRecord?: RunRecord | null, opts: RenderOptions = {}): string {
  const cts = (report.call_types ?? []) as CallTypeReport[];
  const run = runRecord ?? null;
  const bundle = opts.bundle ?? null;
  const spec = specOf(report);
  const timesOf = (ct: string, arm: string): RunArmTimes | undefined =>
    run?.call_types.find((c) => c.call_type === ct)?.arms.find((a) => a.arm_id === arm);
  const campaignId = run?.campaign_id ?? report.campaign_id ?? '—';
  const state = run ? run.campaign_state : (report.campaign_state ?? null);
  const win = run?.window ?? report.window;
  const hours = windowHours(run, report);

  // budget and spend
  const cap = spec?.max_cost_usd ?? null;
  const spend = run?.spend ?? null;
  const armsUsd = spend ? spend.arms_micro_usd / 1e6 : null;
  const judgeUsd = spend ? spend.judge_micro_usd / 1e6 : null;
  const byArm = spend
    ? Object.entries(spend.by_arm)
        .map(([k, v]) => `${esc(k.endsWith(':aa') ? `${k.slice(0, -3)} (A-A second calls)` : k)} ${usd(v / 1e6)}`)
        .join(' · ')
    : '';
  const judge = report.judge;
  const judgeText = !spend
    ? 'not recorded (run record written before spend was recorded)'
    : judge
      ? `${usd(judgeUsd)} evaluation cost for ${judge.calls} calls to ${esc(judge.provider)}/${esc(judge.model)} (not in any arm's cost)`
      : `${usd(judgeUsd)} (no LLM judge is configured)`;
  const dd = (field: string, value: string | number | null, html: string) =>
    `<dt>${esc(field.replace(/_/g, ' '))}</dt><dd data-field="${field}"${value === null ? '' : ` data-value="${esc(value)}"`}>${html}</dd>`;

  // concurrency
  const skewed = (run?.call_types ?? []).flatMap((c) =>
    c.arms
      .filter((a) => a.start_skew_ms.p90 !== null && a.start_skew_ms.p90 > SKEW_WARNING_MS)
      .map((a) => ({ ct: c.call_type, a })),
  );
  const concurrency = !run
    ? `<p class="note concurrency">Start skew was not recorded (no run record): whether arms ran concurrently is unknown.</p>`
    : skewed.length
      ? `<div class="warning concurrency" role="alert"><strong>Arms did not all run concurrently.</strong> p90 start skew above ${SKEW_WARNING_MS} ms: ${skewed.map(({ ct, a }) => `${esc(ct)}/${esc(a.arm_id)} ${num(a.start_skew_ms.p90)} ms`).join(', ')}. A late arm (often one held by its rate limit) met the provider at a different moment than the incumbent; treat latency comparisons, and quality on time-sensitive prompts, with care.</div>`
      : `<p class="note concurrency">Arms ran concurrently: every arm's p90 start skew is at most ${SKEW_WARNING_MS} ms.</p>`;

  const sections = cts.map(
    (ct) => `<section class="call-type" data-call-type="${esc(ct.call_type)}">
<h2>Call type ${esc(ct.call_type)}</h2>
<p>${ct.dataset_card.unique_items} unique items, total weight ${ct.dataset_card.total_weight} (duplicates included), ${ct.dataset_card.near_duplicate_clusters} near-duplicate clusters (SimHash Hamming ≤ ${ct.dataset_card.near_duplicate_threshold}); excluded ${ct.dataset_card.exclusions.length}: ${counts(ct.dataset_card.exclusion_counts)}. Dataset <code>${esc(ct.dataset_card.dataset_hash.slice(0, 16))}…</code></p>
<div class="chart-row" style="display:flex;gap:24px;align-items:flex-start;flex-wrap:wrap">
${frontierChart(ct, spec, bundle)}
<div><h3>Not drawn / dominated</h3><ul class="beside">${ct.frontier.beside.map((b) => `<li data-arm="${esc(b.arm_id)}">${esc(b.arm_id)} — ${esc(b.why)}</li>`).join('') || '<li class="none">none</li>'}</ul></div>
</div>
<h3>Quality by context size</h3>
${contextChart(ct, bundle)}
<h3>Arms</h3>
<table class="arms"><thead><tr><th>arm</th><th>role</th><th>model</th><th>status</th><th>ok/total</th><th>error share (95% Wilson)</th><th>$/request (basis)</th><th>$/task</th><th>mean tokens (billed units)</th><th>latency p50/p90 ms (run)</th><th>TTFT p50/p90 ms (run)</th><th>start skew p50/p90 ms (run)</th><th>cache-hit share</th><th>quality</th></tr></thead>
<tbody>${ct.arms.map((a) => armRow(a, timesOf(ct.call_type, a.arm_id), spec)).join('\n')}</tbody></table>
<h3>Comparisons with ${esc(ct.arms.find((a) => a.role === 'incumbent')?.arm_id ?? '')}</h3>
<table class="comparisons"><thead><tr><th>candidate</th><th>state</th><th>decision</th><th>quality difference</th><th>cost savings (projection)</th><th>level</th><th>trust</th><th>pairs</th><th>MDE</th><th>remediation / reasons</th></tr></thead>
<tbody>${ct.comparisons.map(cmpRow).join('\n')}</tbody></table>
</section>`,
  );
  const projRows = projectionRows(cts, spec, hours);
  const shortWindow = hours !== null && hours < SHORT_WINDOW_HOURS;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Shadowplane report ${esc(campaignId)}</title>
<style>body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1500px}table{border-collapse:collapse;font-size:12px;margin-bottom:16px}td,th{border:1px solid #ddd;padding:4px 6px;vertical-align:top;text-align:left}.basis{color:#666;font-size:11px}.provisional{color:#b00;font-weight:bold}.verdict li{margin:4px 0}dl.summary{display:grid;grid-template-columns:max-content auto;gap:4px 16px;font-size:14px}dl.summary dt{font-weight:600;color:#555}dl.summary dd{margin:0}.warning{background:#fff4e5;border:1px solid #e0a040;padding:8px 12px;margin:12px 0}.note{color:#555}figure{margin:0}figcaption{font-size:11px;color:#555;max-width:800px}dl.glossary dt{font-weight:600;margin-top:6px}dl.glossary dd{margin-left:16px;font-size:13px}</style></head>
<body>
<h1>Shadowplane report — campaign ${esc(campaignId)}</h1>
<p>${report.provisional ? '<span class="provisional">PROVISIONAL — the campaign is still running; figures will change</span> · ' : ''}report <code class="report-id">${esc(report.report_id ?? '')}</code> (reproducible: the same evidence gives the same id) · run record <code class="run-record-id">${esc(run?.run_record_id ?? '—')}</code> (this run: campaign, state, window, times)</p>
<section class="summary"><h2>Summary</h2>
<dl class="summary">
${dd('campaign', campaignId, esc(campaignId))}
${dd('name', spec?.name ?? null, esc(spec?.name ?? '—'))}
${dd('state', state ?? null, `${esc(state ?? 'n/a')} · run ${esc(report.run_index ?? 1)} of this comparison`)}
${dd('window', hours === null ? null : hours, `${esc(win?.first_started_at ?? '—')} → ${esc(win?.last_ended_at ?? '—')} (${duration(hours)})${run ? ` · ${run.counts.messages_in} messages in, ${run.counts.superseded_observations} superseded observations` : ''}`)}
${dd('margin_pp', spec?.margins.noninferiority_pp ?? null, spec ? `${esc(spec.margins.noninferiority_pp)} pp of quality (non-inferiority margin, pinned at launch)` : '—')}
${dd('min_savings', spec?.margins.min_savings ?? null, spec ? `${pct(spec.margins.min_savings, 0)} (the savings lower bound a pass needs)` : '—')}
${dd('alpha', spec?.alpha ?? null, spec ? `α = ${esc(spec.alpha)} one-sided, shared by ${spec.candidates.length} candidate${spec.candidates.length === 1 ? '' : 's'} (α/K each)` : '—')}
${dd('max_cost_usd', cap, cap === null ? '—' : `${usd(cap)} hard budget cap for the evaluation`)}
${dd('spend_arms_usd', armsUsd, armsUsd === null ? 'not recorded (run record written before spend was recorded)' : `${usd(armsUsd)} charged for arm calls${byArm ? ` <span class="basis">(${byArm})</span>` : ''}`)}
${dd('spend_share_of_cap', armsUsd !== null && cap ? armsUsd / cap : null, armsUsd !== null && cap ? `${pct(armsUsd / cap)} of the cap spent on arm calls` : '—')}
${dd('spend_judge_usd', judgeUsd, judgeText)}
</dl>
<p class="note">Evaluation spend is what the campaign's budget ledger charged for the shadow calls in this report (calls lost in flight are charged their upper bound by the ledger and may not appear here). It is the cost of running the evaluation, not of production traffic.</p>
${concurrency}
</section>
<h2>Verdict</h2>
<ul class="verdict">${cts.flatMap((ct) => ct.comparisons.map((c) => verdictLine(ct, c, spec))).join('')}</ul>
<section class="projection-section"><h2>Monthly projection (not realized savings)</h2>
<p class="note">Requests the campaign observed in its ${duration(hours)} window, scaled to ${PROJECTION_DAYS} days, priced at the incumbent's mean cost per request; the savings interval is the comparison's, applied to that cost. The sidecar's own sampling rate is not recorded in the report: if it samples a share of production, divide the volume by that share. ${shortWindow ? `<strong>Extrapolated from a short window (under ${SHORT_WINDOW_HOURS} h): a month's volume and traffic mix may differ.</strong>` : ''}</p>
<table class="projection"><thead><tr><th>call type</th><th>candidate</th><th>requests observed</th><th>projected requests / ${PROJECTION_DAYS} days</th><th>projected incumbent cost / ${PROJECTION_DAYS} days</th><th>projected savings / ${PROJECTION_DAYS} days [interval]</th></tr></thead>
<tbody>${projRows.join('\n') || '<tr><td colspan="6">no comparison</td></tr>'}</tbody></table>
</section>
${sections.join('\n')}
<section class="glossary-section"><h2>Glossary</h2><dl class="glossary">${GLOSSARY.map(([t, d]) => `<dt id="term-${esc(t.split(' ')[0]!.toLowerCase())}">${esc(t)}</dt><dd>${esc(d)}</dd>`).join('')}</dl></section>
</body></html>
`;
}
