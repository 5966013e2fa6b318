/**
 * Self-contained HTML rendering of a report for a reader who opens only the page (finance, audit):
 * a header with campaign, window, pinned margins and α, the budget cap and what the evaluation
 * spent against it (arms and judge apart); verdicts in words with every savings figure labelled by
 * its basis and as a projection; a monthly projection at the volume the campaign observed; a
 * concurrency warning; the cost–quality frontier (intervals on every arm, the margin drawn, a
 * legend, ticked axes); quality by context size; the arm and comparison tables; a glossary.
 * No scripts, no external resources, no raw JSON.
 */
import type {
  ArmView,
  CallTypeReport,
  CampaignSpec,
  Comparison,
  FrontierPoint,
  Percentiles,
  Report,
  RunArmTimes,
  RunRecord,
} from '@shadowplane/contracts';

/** Start skew (ms, p90 over an arm's calls) above which the report warns that arms did not run concurrently. */
export const SKEW_WARNING_MS = 500;
/** Days in the projected month. */
export const PROJECTION_DAYS = 30;
/** Below this many hours of observation window the projection says it extrapolates from a short window. */
const SHORT_WINDOW_HOURS = 24;

/** The parts of an evidence bundle the renderer reads (libs/evidence `BundleParts`); all optional. */
export interface RenderBundle {
  parts?: {
    cost_evidence?: {
      call_type: string;
      arm_id: string;
      obs_id: string;
      item_hash: string;
      basis: string | null;
      usd: number | null;
      on_basis: boolean;
      input_tokens: number | null;
    }[];
    paired?: {
      call_type: string;
      candidate_arm_id: string;
      rows: { item_hash: string; q_inc: number; q_cand: number; obs_inc: string; obs_cand: string }[];
    }[];
  };
}

/** Options of {@link renderReportHtml}. */
export interface RenderOptions {
  /** the evidence bundle of the same fold: enables the incumbent's whiskers and the quality-by-context-size chart */
  bundle?: RenderBundle | null;
}

const esc = (s: unknown): string =>
  String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
/**
 * A USD amount as a finance reader compares it by eye: plain decimals, never exponent notation.
 * ≥ $1: two decimals with thousands separators ($1,234.50); ≥ $0.01: four decimals; smaller
 * amounts four significant digits ($0.00004039); null/undefined/non-finite: '—'.
 */
export function usd(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '—';
  const sign = x < 0 ? '−' : '';
  const a = Math.abs(x);
  if (a === 0) return '$0.00';
  if (a >= 1) return `${sign}$${a.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  if (a >= 0.01) return `${sign}$${a.toFixed(4)}`;
  return `${sign}$${a.toFixed(Math.min(12, 3 - Math.floor(Math.log10(a))))}`;
}
const pct = (x: number | null | undefined, d = 1): string =>
  x === null || x === undefined ? '—' : `${(x * 100).toFixed(d)}%`;
const num = (x: number | null | undefined, d = 0): string => (x === null || x === undefined ? '—' : x.toFixed(d));
const BASIS_LABEL: Record<string, string> = {
  provider_reported: 'provider-reported (measured)',
  rate_card: 'rate card (derived)',
  estimate: 'estimate (chars÷4; never ranks)',
};
const basisLabel = (b: string | null | undefined): string =>
  b === null || b === undefined ? 'unpriced' : (BASIS_LABEL[b] ?? b);
/** `reason: n, …` or `none` — never a JSON object on the page. */
const counts = (r: Record<string, number> | undefined): string => {
  const e = Object.entries(r ?? {});
  return e.length ? e.map(([k, v]) => `${esc(k)}: ${v}`).join(', ') : 'none';
};
const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf', '#7f7f7f'];

/**
 * "Nice" axis ticks (steps of 1, 2 or 5 × 10^k) covering [lo, hi], about `n` of them.
 * Source: the usual nice-number rule (Heckbert, "Nice numbers for graph labels", Graphics Gems, 1990).
 */
export function niceTicks(lo: number, hi: number, n = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / Math.max(1, n - 1);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  const step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
    out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

/** The pinned spec of a report, or null (reports always carry it; older ones may not). */
function specOf(report: Report): CampaignSpec | null {
  const s = report.spec as CampaignSpec | undefined;
  return s && typeof s === 'object' && 'max_cost_usd' in s ? s : null;
}

/** Normal-approximation 95% interval of a mean centred on `centre`: ±1.96·sd/√n (null when n < 2). */
function meanInterval(centre: number, values: number[], n: number): [number, number] | null {
  if (values.length < 2 || n < 2) return null;
  const m = values.reduce((a, b) => a + b, 0) / values.length;
  const sd = Math.sqrt(values.reduce((a, b) => a + (b - m) ** 2, 0) / (values.length - 1));
  const half = 1.96 * (sd / Math.sqrt(n));
  return [centre - half, centre + half];
}

/** Chart geometry (px). The plot origin is (LEFT, TOP + H); no marker is ever placed there. */
const W = 560;
const H = 320;
const LEFT = 80;
const TOP = 20;

function frontierChart(ct: CallTypeReport, spec: CampaignSpec | null, bundle: RenderBundle | null): string {
  const incId = ct.arms.find((a) => a.role === 'incumbent')?.arm_id;
  // the incumbent is the reference: the report gives it no bootstrap interval; with the bundle its
  // whiskers are the 95% normal-approximation interval of its own mean cost and quality
  const incWhiskers = (p: FrontierPoint): { ci: [number, number] | null; qi: [number, number] | null } => {
    const arm = ct.arms.find((a) => a.arm_id === p.arm_id);
    const ev =
      bundle?.parts?.cost_evidence?.filter(
        (r) => r.call_type === ct.call_type && r.arm_id === p.arm_id && r.on_basis && r.usd !== null,
      ) ?? [];
    const qs = new Map<string, number>();
    for (const pr of bundle?.parts?.paired?.filter((x) => x.call_type === ct.call_type) ?? [])
      for (const r of pr.rows) qs.set(r.item_hash, r.q_inc);
    return {
      ci: meanInterval(
        p.cost_usd,
        ev.map((r) => r.usd!),
        arm?.cost.n_priced ?? 0,
      ),
      qi: meanInterval(p.quality, [...qs.values()], arm?.quality.n_scored ?? 0),
    };
  };
  const pts = ct.frontier.points.map((p) =>
    p.arm_id === incId && p.cost_interval === null && p.quality_interval === null
      ? {
          ...p,
          ...(() => {
            const w = incWhiskers(p);
            return { cost_interval: w.ci, quality_interval: w.qi };
          })(),
        }
      : p,
  );
  if (pts.length === 0) return `<p class="no-chart">No arm is measurable on this call type; nothing is drawn.</p>`;
  const incPoint = pts.find((p) => p.arm_id === incId);
  const marginPp = spec?.margins.noninferiority_pp ?? null;
  const marginY = incPoint && marginPp !== null ? incPoint.quality - marginPp / 100 : null;
  const xs = pts.flatMap((p) => [p.cost_usd, ...(p.cost_interval ?? [])]);
  const ys = [
    ...pts.flatMap((p) => [p.quality, ...(p.quality_interval ?? [])]),
    ...(marginY === null ? [] : [marginY]),
  ];
  const range = (v: number[], floor: number | null, ceil: number | null) => {
    const lo = Math.min(...v);
    const hi = Math.max(...v);
    const pad = Math.max((hi - lo) * 0.15, Math.abs(hi) * 0.1, 1e-9);
    return [
      floor === null ? lo - pad : Math.max(floor, lo - pad),
      ceil === null ? hi + pad : Math.min(ceil, hi + pad),
    ] as const;
  };
  // cost cannot be negative, quality lives in [0, 1]: the padded ends never show impossible values
  let [x0, x1] = range(xs, 0, null);
  let [y0, y1] = range(ys, 0, 1);
  if (!(x1 > x0)) x1 = x0 + 1e-9;
  if (!(y1 > y0)) [y0, y1] = [Math.max(0, y0 - 0.05), Math.min(1, y1 + 0.05)];
  const sx = (x: number) => LEFT + ((x - x0) / (x1 - x0)) * W;
  const sy = (y: number) => TOP + H - ((y - y0) / (y1 - y0)) * H;
  const colour = new Map(ct.arms.map((a, i) => [a.arm_id, PALETTE[i % PALETTE.length]!]));
  const marker = (p: FrontierPoint) => {
    const cx = sx(p.cost_usd).toFixed(1);
    const cy = sy(p.quality).toFixed(1);
    const wh: string[] = [];
    if (p.cost_interval)
      wh.push(
        `<line class="whisker" data-arm="${esc(p.arm_id)}" data-axis="cost" x1="${sx(p.cost_interval[0]).toFixed(1)}" x2="${sx(p.cost_interval[1]).toFixed(1)}" y1="${cy}" y2="${cy}" stroke="#555"/>`,
      );
    if (p.quality_interval)
      wh.push(
        `<line class="whisker" data-arm="${esc(p.arm_id)}" data-axis="quality" x1="${cx}" x2="${cx}" y1="${sy(p.quality_interval[0]).toFixed(1)}" y2="${sy(p.quality_interval[1]).toFixed(1)}" stroke="#555"/>`,
      );
    const fill = p.on_frontier ? colour.get(p.arm_id)! : '#fff';
    return `${wh.join('')}<circle class="arm-marker" data-arm="${esc(p.arm_id)}" cx="${cx}" cy="${cy}" r="6" fill="${fill}" stroke="${colour.get(p.arm_id) ?? '#333'}" stroke-width="2"/><text x="${(+cx + 9).toFixed(1)}" y="${(+cy - 8).toFixed(1)}" font-size="12">${esc(p.arm_id)}</text>`;
  };
  const frontier = pts.filter((p) => p.on_frontier).sort((a, b) => a.cost_usd - b.cost_usd);
  const line =
    frontier.length > 1
      ? `<polyline class="frontier" fill="none" stroke="#444" stroke-dasharray="4 3" points="${frontier.map((p) => `${sx(p.cost_usd).toFixed(1)},${sy(p.quality).toFixed(1)}`).join(' ')}"/>`
      : '';
  const xt = niceTicks(x0, x1).filter((v) => v >= x0 && v <= x1);
  const yt = niceTicks(y0, y1).filter((v) => v >= y0 && v <= y1);
  const ticks = [
    ...xt.map(
      (xv) =>
        `<line class="grid" x1="${sx(xv).toFixed(1)}" x2="${sx(xv).toFixed(1)}" y1="${TOP}" y2="${TOP + H}" stroke="#e6e6e6"/><line x1="${sx(xv).toFixed(1)}" x2="${sx(xv).toFixed(1)}" y1="${TOP + H}" y2="${TOP + H + 4}" stroke="#333"/><text class="x-tick" x="${sx(xv).toFixed(1)}" y="${TOP + H + 16}" font-size="10" text-anchor="middle">${esc(usd(xv))}</text>`,
    ),
    ...yt.map(
      (yv) =>
        `<line class="grid" x1="${LEFT}" x2="${LEFT + W}" y1="${sy(yv).toFixed(1)}" y2="${sy(yv).toFixed(1)}" stroke="#e6e6e6"/><line x1="${LEFT - 4}" x2="${LEFT}" y1="${sy(yv).toFixed(1)}" y2="${sy(yv).toFixed(1)}" stroke="#333"/><text class="y-tick" x="${LEFT - 6}" y="${(sy(yv) + 3).toFixed(1)}" font-size="10" text-anchor="end">${esc(pct(yv, 0))}</text>`,
    ),
  ];
  const marginLine =
    marginY !== null && marginY >= y0
      ? `<line class="margin" x1="${LEFT}" x2="${LEFT + W}" y1="${sy(marginY).toFixed(1)}" y2="${sy(marginY).toFixed(1)}" stroke="#b00" stroke-dasharray="6 4"/><text x="${LEFT + W - 4}" y="${(sy(marginY) - 4).toFixed(1)}" font-size="10" text-anchor="end" fill="#b00">margin: ${esc(incId)} − ${esc(marginPp)} pp</text>`
      : '';
  const lx = LEFT + W + 16;
  const legend = [
    `<g class="legend"><text x="${lx}" y="${TOP + 10}" font-size="11" font-weight="bold">legend</text>`,
    ...pts.map(
      (p, i) =>
        `<circle cx="${lx + 6}" cy="${TOP + 26 + i * 16}" r="5" fill="${p.on_frontier ? colour.get(p.arm_id) : '#fff'}" stroke="${colour.get(p.arm_id)}" stroke-width="2"/><text class="legend-arm" x="${lx + 16}" y="${TOP + 30 + i * 16}" font-size="11">${esc(p.arm_id)}${p.arm_id === incId ? ' (incumbent)' : ''}${p.on_frontier ? '' : ' — dominated'}</text>`,
    ),
    `<line x1="${lx}" x2="${lx + 14}" y1="${TOP + 36 + pts.length * 16}" y2="${TOP + 36 + pts.length * 16}" stroke="#555"/><text x="${lx + 18}" y="${TOP + 40 + pts.length * 16}" font-size="11">interval (see below)</text>`,
    `<line x1="${lx}" x2="${lx + 14}" y1="${TOP + 52 + pts.length * 16}" y2="${TOP + 52 + pts.length * 16}" stroke="#b00" stroke-dasharray="6 4"/><text x="${lx + 18}" y="${TOP + 56 + pts.length * 16}" font-size="11">non-inferiority margin</text>`,
    `<line x1="${lx}" x2="${lx + 14}" y1="${TOP + 68 + pts.length * 16}" y2="${TOP + 68 + pts.length * 16}" stroke="#444" stroke-dasharray="4 3"/><text x="${lx + 18}" y="${TOP + 72 + pts.length * 16}" font-size="11">frontier</text></g>`,
  ];
  const incNote = incPoint
    ? incPoint.cost_interval || incPoint.quality_interval
      ? `${esc(incId)} (the incumbent, the reference): 95% normal-approximation interval of its own mean`
      : `${esc(incId)} (the incumbent, the reference): no interval (${bundle ? 'fewer than 2 values' : 'drawn from the report alone, without its evidence bundle'})`
    : '';
  return `<figure class="frontier"><svg class="frontier-chart" data-call-type="${esc(ct.call_type)}" data-origin-x="${LEFT}" data-origin-y="${TOP + H}" xmlns="http://www.w3.org/2000/svg" width="${LEFT + W + 230}" height="${TOP + H + 44}" role="img" aria-label="cost vs quality frontier, call type ${esc(ct.call_type)}">
<rect x="${LEFT}" y="${TOP}" width="${W}" height="${H}" fill="#fcfcfc" stroke="#ccc"/>
${ticks.join('')}
<line x1="${LEFT}" y1="${TOP + H}" x2="${LEFT + W}" y2="${TOP + H}" stroke="#333"/><line x1="${LEFT}" y1="${TOP}" x2="${LEFT}" y2="${TOP + H}" stroke="#333"/>
<text x="${LEFT + W / 2}" y="${TOP + H + 36}" font-size="12" text-anchor="middle">mean cost per request, USD (${esc(basisLabel(ct.basis))})</text>
<text x="16" y="${TOP + H / 2}" font-size="12" transform="rotate(-90 16 ${TOP + H / 2})" text-anchor="middle">mean quality (share of the best score)</text>
${marginLine}${line}${pts.map(marker).join('\n')}
${legend.join('\n')}
</svg><figcaption>Whiskers: candidates — the paired cluster-bootstrap interval at the comparison's level; ${incNote}. The red line is the incumbent's quality minus the pinned margin: a candidate passes on quality when its interval's lower bound of the quality <em>difference</em> stays above it (see the comparisons table).</figcaption></figure>`;
}

/**
 * Mean quality per arm in bins of context size (reported input tokens of the incumbent's call for
 * the same item), from the bundle's paired rows and cost evidence. Descriptive only: no verdict.
 */
function contextChart(ct: CallTypeReport, bundle: RenderBundle | null): string {
  const ev = new Map(
    (bundle?.parts?.cost_evidence ?? [])
      .filter((r) => r.call_type === ct.call_type)
      .map((r) => [r.obs_id, r.input_tokens]),
  );
  const paired = (bundle?.parts?.paired ?? []).filter((p) => p.call_type === ct.call_type && p.rows.length > 0);
  const incId = ct.arms.find((a) => a.role === 'incumbent')?.arm_id ?? 'incumbent';
  // per item: context tokens and the quality of each arm
  const items = new Map<string, { tokens: number; q: Map<string, number> }>();
  for (const p of paired) {
    for (const r of p.rows) {
      const t = ev.get(r.obs_inc);
      if (t === null || t === undefined) continue;
      const it = items.get(r.item_hash) ?? { tokens: t, q: new Map<string, number>() };
      it.q.set(incId, r.q_inc);
      it.q.set(p.candidate_arm_id, r.q_cand);
      items.set(r.item_hash, it);
    }
  }
  if (!bundle)
    return `<p class="no-chart context">Quality by context size is drawn from the evidence bundle; this page was rendered from the report alone.</p>`;
  if (items.size < 8)
    return `<p class="no-chart context">Quality by context size: fewer than 8 paired items with reported input tokens (${items.size}); nothing is drawn.</p>`;
  const sorted = [...items.values()].sort((a, b) => a.tokens - b.tokens);
  const nBins = Math.min(4, Math.floor(sorted.length / 4));
  const bins: { lo: number; hi: number; rows: typeof sorted }[] = [];
  for (let b = 0; b < nBins; b++) {
    const rows = sorted.slice(Math.floor((b * sorted.length) / nBins), Math.floor(((b + 1) * sorted.length) / nBins));
    if (rows.length) bins.push({ lo: rows[0]!.tokens, hi: rows[rows.length - 1]!.tokens, rows });
  }
  const arms = [incId, ...paired.map((p) => p.candidate_arm_id)];
  const colour = new Map(ct.arms.map((a, i) => [a.arm_id, PALETTE[i % PALETTE.length]!]));
  const w = 420;
  const h = 220;
  const l = 60;
  const t = 16;
  const bx = (i: number) => l + ((i + 0.5) / bins.length) * w;
  const by = (q: number) => t + h - q * h;
  const series = arms.map((arm) => {
    const means = bins.map((b) => {
      const qs = b.rows.map((r) => r.q.get(arm)).filter((q): q is number => q !== undefined);
      return qs.length ? { mean: qs.reduce((a, c) => a + c, 0) / qs.length, n: qs.length } : null;
    });
    const pts = means
      .map((m, i) => (m ? `${bx(i).toFixed(1)},${by(m.mean).toFixed(1)}` : null))
      .filter((x): x is string => x !== null);
    return `<polyline fill="none" stroke="${colour.get(arm)}" points="${pts.join(' ')}"/>${means.map((m, i) => (m ? `<circle class="context-point" data-arm="${esc(arm)}" data-bin="${i}" data-mean="${m.mean.toFixed(4)}" data-n="${m.n}" cx="${bx(i).toFixed(1)}" cy="${by(m.mean).toFixed(1)}" r="4" fill="${colour.get(arm)}"/>` : '')).join('')}`;
  });
  const yTicks = [0, 0.25, 0.5, 0.75, 1].map(
    (q) =>
      `<line x1="${l}" x2="${l + w}" y1="${by(q)}" y2="${by(q)}" stroke="#e6e6e6"/><text x="${l - 6}" y="${by(q) + 3}" font-size="10" text-anchor="end">${pct(q, 0)}</text>`,
  );
  const xTicks = bins.map(
    (b, i) =>
      `<text x="${bx(i).toFixed(1)}" y="${t + h + 14}" font-size="10" text-anchor="middle">${b.lo}–${b.hi} tokens</text><text x="${bx(i).toFixed(1)}" y="${t + h + 26}" font-size="9" text-anchor="middle" fill="#666">${b.rows.length} items</text>`,
  );
  const legend = arms.map(
    (a, i) =>
      `<rect x="${l + w + 14}" y="${t + i * 16}" width="10" height="10" fill="${colour.get(a)}"/><text x="${l + w + 28}" y="${t + 9 + i * 16}" font-size="11">${esc(a)}</text>`,
  );
  return `<figure class="context"><svg class="context-chart" data-call-type="${esc(ct.call_type)}" xmlns="http://www.w3.org/2000/svg" width="${l + w + 140}" height="${t + h + 50}" role="img" aria-label="quality by context size, call type ${esc(ct.call_type)}">
<rect x="${l}" y="${t}" width="${w}" height="${h}" fill="#fcfcfc" stroke="#ccc"/>${yTicks.join('')}${xTicks.join('')}
<text x="${l + w / 2}" y="${t + h + 44}" font-size="12" text-anchor="middle">context size: reported input tokens of the incumbent's call (bins of equal item count)</text>
<text x="14" y="${t + h / 2}" font-size="12" transform="rotate(-90 14 ${t + h / 2})" text-anchor="middle">mean quality</text>
${series.join('\n')}${legend.join('')}</svg><figcaption>Mean quality of each arm on the paired items of each context-size bin. Descriptive: no interval, no verdict — use it to see whether a candidate falls behind on long prompts.</figcaption></figure>`;
}

/** p50 / p90 of a measured time, or — when not measured (no run record, or no ok observation). */
const p5090 = (p: Percentiles | undefined): string => (p ? `${num(p.p50)} / ${num(p.p90)}` : '—');

/** "rate card from price catalogue <version> (<model>, listed <date> at <source>)" for an arm whose card came from the catalogue. */
function cardProvenance(spec: CampaignSpec | null, armId: string): string {
  const arm = spec ? [spec.incumbent, ...spec.candidates].find((x) => x.id === armId) : undefined;
  const f = arm?.rate_card_from;
  return f
    ? `<div class="basis card-from" data-catalogue="${esc(f.catalogue)}">rate card from price catalogue ${esc(f.catalogue)} (${esc(f.model)}, listed ${esc(f.as_of)} at ${esc(f.source)})</div>`
    : '';
}

function armRow(a: ArmView, times: RunArmTimes | undefined, spec: CampaignSpec | null = null): string {
  const t = a.tokens;
  const lat = times?.latency_ms ?? a.latency_ms;
  const ttft = times?.ttft_ms ?? a.ttft_ms;
  return `<tr data-arm="${esc(a.arm_id)}"><td>${esc(a.arm_id)}</td><td>${esc(a.role)}</td><td>${esc(a.provider)}/${esc(a.model)}</td><td>${esc(a.status)}</td>
<td>${a.observations.ok}/${a.observations.total} (abandoned ${a.observations.abandoned})</td>
<td>${pct(a.error_share.share)} [${pct(a.error_share.lower)}, ${pct(a.error_share.upper)}]${
    Object.keys(a.errors_by_class).length
      ? `<div class="basis">${Object.entries(a.errors_by_class)
          .map(([k, v]) => `${esc(k)} ${v.n}`)
          .join(', ')}</div>`
      : ''
  }</td>
<td>${usd(a.cost.per_request_mean_usd)} <span class="basis">${esc(basisLabel(a.cost.basis))}</span> (n=${a.cost.n_priced}, other basis ${a.cost.n_other_basis}, unpriced ${a.cost.n_unpriced})${a.cost.basis === 'rate_card' ? cardProvenance(spec, a.arm_id) : ''}</td>
<td>${a.cost.per_task_usd === null ? '— (no outcome closes a task)' : `${usd(a.cost.per_task_usd)} <span class="basis">${esc(basisLabel(a.cost.basis))}</span>`}</td>
<td>in ${num(t.input_uncached.mean, 1)} · cache read ${num(t.cache_read.mean, 1)} · cache write ${num(t.cache_write.mean, 1)} · out ${num(t.output.mean, 1)} · reasoning ${num(t.reasoning.mean, 1)}</td>
<td class="latency">${p5090(lat)}</td><td class="ttft">${p5090(ttft)}</td><td class="skew">${p5090(times?.start_skew_ms)}</td>
<td>${pct(a.cache_hit_share.share)}</td><td>${a.quality.mean === null ? 'unscored' : pct(a.quality.mean)} (scored ${a.quality.n_scored}, unscored ${a.quality.n_unscored})</td></tr>`;
}

const iv = (v: { point: number; lower: number; upper: number } | null | undefined, f: (x: number) => string) =>
  v ? `${f(v.point)} [${f(v.lower)}, ${f(v.upper)}]` : '—';
const pp = (x: number) => `${(x * 100).toFixed(2)} pp`;

/** A savings figure, always with its basis and the word projection. */
function savingsText(c: Comparison): string {
  const s = c.stats;
  if (!s?.cost_savings)
    return `savings not measurable${s?.cost_savings_null_reason ? ` (${esc(s.cost_savings_null_reason)})` : ''}`;
  return `projected savings ${iv(s.cost_savings, (x) => pct(x))} <span class="basis">per request, ${esc(basisLabel(c.basis))} basis; a projection from shadow calls, not realized savings</span>`;
}

function stateText(c: Comparison): string {
  return c.state === 'CANNOT_MEASURE'
    ? `CANNOT_MEASURE (${esc(c.cannot_measure?.reason)}${c.insufficient ? `: have ${c.insufficient.have}, need ${c.insufficient.need}` : ''})`
    : c.state;
}

function cmpRow(c: Comparison): string {
  const s = c.stats;
  return `<tr data-candidate="${esc(c.candidate_arm_id)}"><td>${esc(c.candidate_arm_id)}</td><td class="state">${stateText(c)}</td><td>${esc(c.decision ?? '—')}</td>
<td>${iv(s?.quality_delta, pp)}</td><td class="savings">${savingsText(c)}</td>
<td>${s ? `${pct(s.level)} (one-sided α per comparison ${s.alpha_one_sided_adjusted.toPrecision(3)} = α/K over ${s.candidates_k} candidates, run ${s.run_index}; B=${s.resamples}, seed ${s.seed})` : '—'}</td>
<td>${esc(c.trust_class ?? '—')}</td><td>${c.pairs.items} items / ${c.pairs.clusters} clusters; excluded: ${counts(c.pairs.excluded)}</td>
<td>${c.power_plan?.mde_pp == null ? '—' : `${c.power_plan.mde_pp.toFixed(2)} pp (${c.power_plan.sd_source === 'aa_pairs' ? 'spread from A-A pairs' : 'conservative prior spread'})`}</td>
<td>${c.remediation.map((r) => `<div class="remediation" data-code="${esc(r.code)}">${esc(r.text)}</div>`).join('')}${c.decision_reasons.map((r) => `<div class="reason">${esc(r)}</div>`).join('')}${c.judge_refused ? `<div class="judge-refused">${esc(c.judge_refused)}</div>` : ''}</td></tr>`;
}

/** One sentence per candidate and call type, from the structured comparison (never the bare headline). */
function verdictLine(ct: CallTypeReport, c: Comparison, spec: CampaignSpec | null): string {
  const inc = ct.arms.find((a) => a.role === 'incumbent')?.arm_id ?? 'incumbent';
  const who = `<strong>${esc(ct.call_type)}: ${esc(c.candidate_arm_id)} vs ${esc(inc)}</strong>`;
  const s = c.stats;
  if (c.state === 'CANNOT_MEASURE' || !s)
    return `<li data-call-type="${esc(ct.call_type)}" data-candidate="${esc(c.candidate_arm_id)}">${who} — ${stateText(c)}: ${esc(c.cannot_measure?.detail ?? '')}${c.remediation[0] ? ` Next: ${esc(c.remediation[0].text)}.` : ''}</li>`;
  const word =
    c.decision === 'pass'
      ? `passes non-inferiority at −${esc(s.margin_pp)} pp`
      : c.decision === 'fail'
        ? 'fails'
        : 'is inconclusive';
  const floor =
    spec && spec.margins.min_savings > 0
      ? ` (pass needs the savings lower bound ≥ ${pct(spec.margins.min_savings, 0)})`
      : '';
  return `<li data-call-type="${esc(ct.call_type)}" data-candidate="${esc(c.candidate_arm_id)}">${who} — ${c.state}, ${word}; quality difference ${iv(s.quality_delta, pp)} at ${pct(s.level)}; ${savingsText(c)}${floor}; trust class ${esc(c.trust_class ?? '—')}.${c.decision !== 'pass' && c.remediation[0] ? ` Next: ${esc(c.remediation[0].text)}.` : ''}</li>`;
}

function windowHours(run: RunRecord | null, report: Report): number | null {
  const w = run?.window ?? report.window;
  if (!w?.first_started_at || !w.last_ended_at) return null;
  const ms = Date.parse(w.last_ended_at) - Date.parse(w.first_started_at);
  return Number.isFinite(ms) && ms > 0 ? ms / 3_600_000 : null;
}

const duration = (h: number | null): string =>
  h === null
    ? '—'
    : h < 1 / 60
      ? `${(h * 3600).toFixed(0)} s`
      : h < 2
        ? `${(h * 60).toFixed(1)} min`
        : h < 48
          ? `${h.toFixed(1)} h`
          : `${(h / 24).toFixed(1)} days`;

/**
 * The monthly projection rows: per call type and measured candidate, the requests observed in the
 * window scaled to {@link PROJECTION_DAYS} days, and the savings interval applied to the incumbent's
 * projected cost on the comparison's basis. Observed requests = Σ weights of admitted items (each
 * item counts 1 + its exact duplicates) + 1 per excluded item, divided by the campaign's
 * `sample_rate` (its own share of captured items). A projection, not a measurement.
 */
function projectionRows(cts: CallTypeReport[], spec: CampaignSpec | null, hours: number | null): string[] {
  const rows: string[] = [];
  const sampleRate = spec?.sample_rate ?? 1;
  for (const ct of cts) {
    const inc = ct.arms.find((a) => a.role === 'incumbent');
    const observed = ct.dataset_card.total_weight + ct.dataset_card.exclusions.length;
    const perMonth = hours === null ? null : (observed / sampleRate) * ((PROJECTION_DAYS * 24) / hours);
    for (const c of ct.comparisons) {
      const sv = c.stats?.cost_savings ?? null;
      const incMean = inc && inc.cost.basis === c.basis ? inc.cost.per_request_mean_usd : null;
      const incMonth = perMonth !== null && incMean !== null ? perMonth * incMean : null;
      const cell = (f: number | undefined) => (incMonth !== null && f !== undefined ? usd(incMonth * f) : '—');
      rows.push(
        `<tr data-call-type="${esc(ct.call_type)}" data-candidate="${esc(c.candidate_arm_id)}"${incMonth !== null && sv ? ` data-savings-month-usd="${(incMonth * sv.point).toFixed(6)}"` : ''}><td>${esc(ct.call_type)}</td><td>${esc(c.candidate_arm_id)}</td><td>${observed}${sampleRate < 1 ? ` ÷ sample rate ${sampleRate}` : ''}</td><td>${perMonth === null ? '—' : Math.round(perMonth).toLocaleString('en-US')}</td><td>${incMonth === null ? '—' : usd(incMonth)} <span class="basis">${esc(basisLabel(c.basis))}</span></td><td class="projection">${sv ? `${cell(sv.point)} [${cell(sv.lower)}, ${cell(sv.upper)}] <span class="basis">projection</span>` : `— (${esc(c.stats?.cost_savings_null_reason ?? (c.state === 'CANNOT_MEASURE' ? 'cannot measure' : 'no savings interval'))})`}</td></tr>`,
      );
    }
  }
  return rows;
}

const GLOSSARY: [string, string][] = [
  [
    'BEAT',
    'The candidate was measured against the incumbent on the same requests at the same time, is non-inferior on quality, and is better on cost or quality beyond its interval.',
  ],
  [
    'NOT_BEAT',
    'There was enough evidence to decide, and the candidate did not clear the bar (it failed, or it is inconclusive on quality or savings).',
  ],
  [
    'ON_FRONTIER',
    'The candidate is on the cost–quality frontier but was not measured side by side with the incumbent, so it cannot be called better.',
  ],
  [
    'CANNOT_MEASURE',
    'No verdict is possible, with the reason: too few paired items (fewer than 8), costs on different bases, unpriced or unscored calls, or a missing arm.',
  ],
  [
    'pass / fail / inconclusive',
    'pass: the lower end of the quality-difference interval is above −margin and the savings lower bound reaches the minimum savings. fail: the upper end is below −margin, a hard assertion broke, or a per-request cost ceiling was exceeded. Otherwise inconclusive.',
  ],
  [
    'margin',
    'The non-inferiority margin: how many percentage points (pp) of quality a candidate may lose and still pass. Pinned in the campaign spec at launch.',
  ],
  [
    'α (alpha)',
    'The one-sided error rate the campaign accepts, before it is divided among candidates (Bonferroni, α/K) and spent over repeated runs of the same comparison.',
  ],
  [
    'level',
    'The two-sided confidence level of an interval, 1 − 2·(α per comparison). A 95.0% level means intervals built this way contain the true value 95% of the time.',
  ],
  [
    'interval [a, b]',
    'The range the true value plausibly lies in at the stated level: from a paired cluster bootstrap (resampling near-duplicate clusters) for quality differences and savings; Wilson 95% for shares.',
  ],
  [
    'MDE',
    'Minimum detectable effect: the smallest quality difference (pp) these many clusters could reliably detect at 80% power. An MDE above the margin explains an inconclusive verdict.',
  ],
  ['pp', 'Percentage points of quality (quality on a 0–100% scale).'],
  [
    'basis',
    "Where a cost comes from: provider-reported (measured, from the provider's bill), rate card (derived: reported tokens × the configured price per million), estimate (characters ÷ 4, never used to rank or decide). Bases are never mixed.",
  ],
  [
    'projection',
    'A figure computed from shadow calls and an assumed volume, not money saved. Savings are realized only by switching tiers in production.',
  ],
  [
    'trust class',
    'A: quality comes only from programmatic scorers and first-party outcomes; B: an LLM judge carries up to half of the weight; C: the judge dominates.',
  ],
  [
    'A-A pair',
    "A second, independent call of the incumbent on the same request: it measures the incumbent's own run-to-run noise.",
  ],
  [
    'abandoned',
    'A successful response that carried no usage block: billed by the provider, but its tokens cannot be counted.',
  ],
  [
    'start skew',
    'How much later an arm started than the first arm for the same request. Large skew means arms did not run concurrently, so time-varying provider behaviour can differ between them.',
  ],
  [
    'cluster',
    'Near-duplicate prompts grouped together (SimHash, Hamming distance ≤ 3 of 64 bits) so repeated questions do not count as independent evidence.',
  ],
];

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
