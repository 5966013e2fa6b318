/**
 * Self-contained HTML rendering of a report: verdict in words, cost–quality frontier chart
 * (inline SVG, interval whiskers), per-arm table with every cost labeled by its basis, and the
 * comparisons with their remediations. No scripts, no external resources.
 */
import type { ArmView, CallTypeReport, Comparison, FrontierPoint, Percentiles, Report, RunArmTimes, RunRecord } from '@shadowplane/contracts';

const esc = (s: unknown): string => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
// Plain decimals, never exponent notation: finance readers compare these by eye. Small amounts
// keep four significant digits (e.g. $0.00004039).
const usd = (x: number | null | undefined): string =>
  x === null || x === undefined ? '—' : `$${x === 0 || Math.abs(x) >= 0.01 ? x.toFixed(4) : x.toFixed(Math.min(12, 3 - Math.floor(Math.log10(Math.abs(x)))))}`;
const pct = (x: number | null | undefined, d = 1): string => (x === null || x === undefined ? '—' : `${(x * 100).toFixed(d)}%`);
const num = (x: number | null | undefined, d = 0): string => (x === null || x === undefined ? '—' : x.toFixed(d));
const BASIS_LABEL: Record<string, string> = { provider_reported: 'provider-reported (measured)', rate_card: 'rate card (derived)', estimate: 'estimate (chars÷4; never ranks)' };
const basisLabel = (b: string | null): string => (b === null ? 'unpriced' : (BASIS_LABEL[b] ?? b));

/** Chart geometry (px). The plot origin is (LEFT, TOP + H); no marker is ever placed there. */
const W = 560;
const H = 320;
const LEFT = 70;
const TOP = 20;

function chart(ct: CallTypeReport): string {
  const pts = ct.frontier.points;
  if (pts.length === 0) return `<p class="no-chart">No arm is measurable on this call type; nothing is drawn.</p>`;
  const xs = pts.flatMap((p) => [p.cost_usd, ...(p.cost_interval ?? [])]);
  const ys = pts.flatMap((p) => [p.quality, ...(p.quality_interval ?? [])]);
  const range = (v: number[]) => {
    const lo = Math.min(...v);
    const hi = Math.max(...v);
    const pad = Math.max((hi - lo) * 0.15, Math.abs(hi) * 0.1, 1e-9);
    return [lo - pad, hi + pad] as const;
  };
  const [x0, x1] = range(xs);
  const [y0, y1] = range(ys);
  const sx = (x: number) => LEFT + ((x - x0) / (x1 - x0)) * W;
  const sy = (y: number) => TOP + H - ((y - y0) / (y1 - y0)) * H;
  const marker = (p: FrontierPoint) => {
    const cx = sx(p.cost_usd).toFixed(1);
    const cy = sy(p.quality).toFixed(1);
    const wh: string[] = [];
    if (p.cost_interval) wh.push(`<line class="whisker" x1="${sx(p.cost_interval[0]).toFixed(1)}" x2="${sx(p.cost_interval[1]).toFixed(1)}" y1="${cy}" y2="${cy}" stroke="#555"/>`);
    if (p.quality_interval) wh.push(`<line class="whisker" x1="${cx}" x2="${cx}" y1="${sy(p.quality_interval[0]).toFixed(1)}" y2="${sy(p.quality_interval[1]).toFixed(1)}" stroke="#555"/>`);
    const fill = p.on_frontier ? '#1f77b4' : '#bbb';
    return `${wh.join('')}<circle class="arm-marker" data-arm="${esc(p.arm_id)}" cx="${cx}" cy="${cy}" r="6" fill="${fill}"/><text x="${(+cx + 9).toFixed(1)}" y="${(+cy - 8).toFixed(1)}" font-size="12">${esc(p.arm_id)}</text>`;
  };
  const frontier = pts.filter((p) => p.on_frontier).sort((a, b) => a.cost_usd - b.cost_usd);
  const line = frontier.length > 1 ? `<polyline class="frontier" fill="none" stroke="#1f77b4" stroke-dasharray="4 3" points="${frontier.map((p) => `${sx(p.cost_usd).toFixed(1)},${sy(p.quality).toFixed(1)}`).join(' ')}"/>` : '';
  // ticks at the data extremes (the padded axis ends would show meaningless values such as a negative cost)
  const xt = [...new Set([Math.min(...xs), Math.max(...xs)])];
  const yt = [...new Set([Math.min(...ys), Math.max(...ys)])];
  const ticks = [
    ...xt.map((xv) => `<line x1="${sx(xv).toFixed(1)}" x2="${sx(xv).toFixed(1)}" y1="${TOP + H}" y2="${TOP + H + 4}" stroke="#333"/><text x="${sx(xv).toFixed(1)}" y="${TOP + H + 16}" font-size="10" text-anchor="middle">${esc(usd(xv))}</text>`),
    ...yt.map((yv) => `<line x1="${LEFT - 4}" x2="${LEFT}" y1="${sy(yv).toFixed(1)}" y2="${sy(yv).toFixed(1)}" stroke="#333"/><text x="${LEFT - 6}" y="${(sy(yv) + 3).toFixed(1)}" font-size="10" text-anchor="end">${esc(pct(yv))}</text>`),
  ];
  return `<svg class="frontier-chart" data-call-type="${esc(ct.call_type)}" data-origin-x="${LEFT}" data-origin-y="${TOP + H}" xmlns="http://www.w3.org/2000/svg" width="${LEFT + W + 120}" height="${TOP + H + 40}" role="img" aria-label="cost vs quality frontier">
<rect x="${LEFT}" y="${TOP}" width="${W}" height="${H}" fill="#fafafa" stroke="#ccc"/>
<line x1="${LEFT}" y1="${TOP + H}" x2="${LEFT + W}" y2="${TOP + H}" stroke="#333"/><line x1="${LEFT}" y1="${TOP}" x2="${LEFT}" y2="${TOP + H}" stroke="#333"/>
${ticks.join('')}
<text x="${LEFT + W / 2}" y="${TOP + H + 34}" font-size="12" text-anchor="middle">mean cost per request (${esc(basisLabel(ct.basis))})</text>
<text x="14" y="${TOP + H / 2}" font-size="12" transform="rotate(-90 14 ${TOP + H / 2})" text-anchor="middle">mean quality</text>
${line}${pts.map(marker).join('\n')}
</svg>`;
}

/** p50 / p90 of a measured time, or — when not measured (no run record, or no ok observation). */
const p5090 = (p: Percentiles | undefined): string => (p ? `${num(p.p50)} / ${num(p.p90)}` : '—');

function armRow(a: ArmView, times: RunArmTimes | undefined): string {
  const t = a.tokens;
  // times come from the run record; reports written before run records carry them inline
  const lat = times?.latency_ms ?? a.latency_ms;
  const ttft = times?.ttft_ms ?? a.ttft_ms;
  return `<tr data-arm="${esc(a.arm_id)}"><td>${esc(a.arm_id)}</td><td>${esc(a.role)}</td><td>${esc(a.provider)}/${esc(a.model)}</td><td>${esc(a.status)}</td>
<td>${a.observations.ok}/${a.observations.total} (abandoned ${a.observations.abandoned})</td>
<td>${pct(a.error_share.share)} [${pct(a.error_share.lower)}, ${pct(a.error_share.upper)}]</td>
<td>${usd(a.cost.per_request_mean_usd)} <span class="basis">${esc(basisLabel(a.cost.basis))}</span> (n=${a.cost.n_priced}, other basis ${a.cost.n_other_basis}, unpriced ${a.cost.n_unpriced})</td>
<td>${a.cost.per_task_usd === null ? '— (no outcome closes a task)' : `${usd(a.cost.per_task_usd)} <span class="basis">${esc(basisLabel(a.cost.basis))}</span>`}</td>
<td>in ${num(t.input_uncached.mean, 1)} · cache read ${num(t.cache_read.mean, 1)} · cache write ${num(t.cache_write.mean, 1)} · out ${num(t.output.mean, 1)} · reasoning ${num(t.reasoning.mean, 1)}</td>
<td class="latency">${p5090(lat)}</td><td class="ttft">${p5090(ttft)}</td><td class="skew">${p5090(times?.start_skew_ms)}</td>
<td>${pct(a.cache_hit_share.share)}</td><td>${a.quality.mean === null ? 'unscored' : pct(a.quality.mean)} (scored ${a.quality.n_scored}, unscored ${a.quality.n_unscored})</td></tr>`;
}

function cmpRow(c: Comparison): string {
  const s = c.stats;
  const iv = (v: { point: number; lower: number; upper: number } | null | undefined, f: (x: number) => string) => (v ? `${f(v.point)} [${f(v.lower)}, ${f(v.upper)}]` : '—');
  const state = c.state === 'CANNOT_MEASURE' ? `CANNOT_MEASURE{${esc(c.cannot_measure?.reason)}${c.insufficient ? `: have ${c.insufficient.have}, need ${c.insufficient.need}` : ''}}` : c.state;
  return `<tr data-candidate="${esc(c.candidate_arm_id)}"><td>${esc(c.candidate_arm_id)}</td><td class="state">${state}</td><td>${esc(c.decision ?? '—')}</td>
<td>${iv(s?.quality_delta, (x) => `${(x * 100).toFixed(2)}pp`)}</td><td>${iv(s?.cost_savings, (x) => pct(x))} <span class="basis">${esc(basisLabel(c.basis))}</span></td>
<td>${s ? `${pct(s.level)} (α/K/run ${s.alpha_one_sided_adjusted.toPrecision(3)}, B=${s.resamples}, seed ${s.seed})` : '—'}</td>
<td>${esc(c.trust_class ?? '—')}</td><td>${c.pairs.items} items / ${c.pairs.clusters} clusters; excluded ${esc(JSON.stringify(c.pairs.excluded))}</td>
<td>${c.power_plan?.mde_pp == null ? '—' : `${c.power_plan.mde_pp.toFixed(2)}pp (${c.power_plan.sd_source})`}</td>
<td>${c.remediation.map((r) => `<div class="remediation" data-code="${esc(r.code)}">${esc(r.text)}</div>`).join('')}${c.decision_reasons.map((r) => `<div class="reason">${esc(r)}</div>`).join('')}${c.judge_refused ? `<div class="judge-refused">${esc(c.judge_refused)}</div>` : ''}</td></tr>`;
}

/**
 * Renders a report and the run record of the run that produced it as one self-contained HTML page
 * (inline CSS and SVG, no scripts). The header names both ids (`code.report-id`,
 * `code.run-record-id`); campaign id, state and window come from the run record (or, for reports
 * written before run records, from the report); the arm table's latency, TTFT and start-skew
 * columns come from the run record ('—' without one).
 * Each measurable arm is an SVG `circle.arm-marker[data-arm]` on the chart; arms not drawn
 * (insufficient, unpriced, estimate-only, unscored, missing) and dominated arms are listed in
 * `ul.beside > li[data-arm]` next to the chart, with why. Axes are padded so no marker sits at
 * the plot origin.
 */
export function renderReportHtml(report: Report, runRecord?: RunRecord | null): string {
  const cts = (report.call_types ?? []) as CallTypeReport[];
  const run = runRecord ?? null;
  const timesOf = (ct: string, arm: string): RunArmTimes | undefined => run?.call_types.find((c) => c.call_type === ct)?.arms.find((a) => a.arm_id === arm);
  const campaignId = run?.campaign_id ?? report.campaign_id ?? '—';
  const state = run ? run.campaign_state : (report.campaign_state ?? null);
  const win = run?.window ?? report.window;
  const sections = cts.map(
    (ct) => `<section class="call-type" data-call-type="${esc(ct.call_type)}">
<h2>Call type ${esc(ct.call_type)}</h2>
<p>${ct.dataset_card.unique_items} unique items, total weight ${ct.dataset_card.total_weight}, ${ct.dataset_card.near_duplicate_clusters} near-duplicate clusters (SimHash Hamming ≤ ${ct.dataset_card.near_duplicate_threshold}), ${ct.dataset_card.exclusions.length} excluded ${esc(JSON.stringify(ct.dataset_card.exclusion_counts ?? {}))}. Dataset ${esc(ct.dataset_card.dataset_hash.slice(0, 16))}…</p>
<div class="chart-row" style="display:flex;gap:24px;align-items:flex-start">
${chart(ct)}
<div><h3>Not drawn / dominated</h3><ul class="beside">${ct.frontier.beside.map((b) => `<li data-arm="${esc(b.arm_id)}">${esc(b.arm_id)} — ${esc(b.why)}</li>`).join('') || '<li class="none">none</li>'}</ul></div>
</div>
<h3>Arms</h3>
<table class="arms"><thead><tr><th>arm</th><th>role</th><th>model</th><th>status</th><th>ok/total</th><th>error share (95% Wilson)</th><th>$/request (basis)</th><th>$/task</th><th>mean tokens (billed units)</th><th>latency p50/p90 ms (run)</th><th>TTFT p50/p90 ms (run)</th><th>start skew p50/p90 ms (run)</th><th>cache-hit share</th><th>quality</th></tr></thead>
<tbody>${ct.arms.map((a) => armRow(a, timesOf(ct.call_type, a.arm_id))).join('\n')}</tbody></table>
<h3>Comparisons with ${esc(cts.length ? ct.arms[0]?.arm_id : '')}</h3>
<table class="comparisons"><thead><tr><th>candidate</th><th>state</th><th>decision</th><th>quality delta</th><th>cost savings</th><th>level</th><th>trust</th><th>pairs</th><th>MDE</th><th>remediation / reasons</th></tr></thead>
<tbody>${ct.comparisons.map(cmpRow).join('\n')}</tbody></table>
</section>`,
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Shadowplane report ${esc(campaignId)}</title>
<style>body{font-family:system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;font-size:12px;margin-bottom:16px}td,th{border:1px solid #ddd;padding:4px 6px;vertical-align:top}.basis{color:#666;font-size:11px}.provisional{color:#b00;font-weight:bold}.verdict li{margin:4px 0}</style></head>
<body>
<h1>Shadowplane report — campaign ${esc(campaignId)}</h1>
<p>${report.provisional ? '<span class="provisional">PROVISIONAL</span> · ' : ''}report <code class="report-id">${esc(report.report_id ?? '')}</code> (reproducible: the same evidence gives the same id) · run record <code class="run-record-id">${esc(run?.run_record_id ?? '—')}</code> (this run: campaign, state, window, times)</p>
<p class="run">state ${esc(state ?? 'n/a')} · run ${esc(report.run_index ?? 1)} · window ${esc(win?.first_started_at ?? '—')} → ${esc(win?.last_ended_at ?? '—')}${run ? ` · ${run.counts.messages_in} messages in, ${run.counts.superseded_observations} superseded observations` : ''}</p>
<h2>Verdict</h2>
<ul class="verdict">${(report.verdict_text ?? []).map((t) => `<li>${esc(t)}</li>`).join('')}</ul>
${sections.join('\n')}
</body></html>
`;
}
