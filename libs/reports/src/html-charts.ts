import type { CallTypeReport, CampaignSpec, FrontierPoint } from '@shadowplane/contracts';
import { basisLabel, esc, niceTicks, PALETTE, pct, usd } from './html-format.js';

// The two SVG charts of a call type: the cost–quality frontier and quality by context size.

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

/**
 * The cost–quality frontier of a call type as an SVG figure: every measurable arm with its
 * intervals, the frontier line, the incumbent's quality minus the pinned margin, ticks and a legend.
 */
export function frontierChart(ct: CallTypeReport, spec: CampaignSpec | null, bundle: RenderBundle | null): string {
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
export function contextChart(ct: CallTypeReport, bundle: RenderBundle | null): string {
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
