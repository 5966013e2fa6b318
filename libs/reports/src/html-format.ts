import type { Percentiles } from '@shadowplane/contracts';

// Text formatting the report page shares (escaping, money, shares, durations, ticks) and the
// page's thresholds and colours.

/** Start skew (ms, p90 over an arm's calls) above which the report warns that arms did not run concurrently. */
export const SKEW_WARNING_MS = 500;
/** Days in the projected month. */
export const PROJECTION_DAYS = 30;
/** Below this many hours of observation window the projection says it extrapolates from a short window. */
export const SHORT_WINDOW_HOURS = 24;

/** HTML-escapes `s` (text and attribute values). */
export const esc = (s: unknown): string =>
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
/** A share as a percentage with `d` decimals; null → '—'. */
export const pct = (x: number | null | undefined, d = 1): string =>
  x === null || x === undefined ? '—' : `${(x * 100).toFixed(d)}%`;
/** A number with `d` decimals; null → '—'. */
export const num = (x: number | null | undefined, d = 0): string =>
  x === null || x === undefined ? '—' : x.toFixed(d);
const BASIS_LABEL: Record<string, string> = {
  provider_reported: 'provider-reported (measured)',
  rate_card: 'rate card (derived)',
  estimate: 'estimate (chars÷4; never ranks)',
};
/** A cost basis in words; null → 'unpriced'. */
export const basisLabel = (b: string | null | undefined): string =>
  b === null || b === undefined ? 'unpriced' : (BASIS_LABEL[b] ?? b);
/** `reason: n, …` or `none` — never a JSON object on the page. */
export const counts = (r: Record<string, number> | undefined): string => {
  const e = Object.entries(r ?? {});
  return e.length ? e.map(([k, v]) => `${esc(k)}: ${v}`).join(', ') : 'none';
};
/** Arm colours, by the arm's position in the call type. */
export const PALETTE = [
  '#1f77b4',
  '#d62728',
  '#2ca02c',
  '#9467bd',
  '#ff7f0e',
  '#8c564b',
  '#e377c2',
  '#17becf',
  '#7f7f7f',
];

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

/** p50 / p90 of a measured time, or — when not measured (no run record, or no ok observation). */
export const p5090 = (p: Percentiles | undefined): string => (p ? `${num(p.p50)} / ${num(p.p90)}` : '—');

/** `point [lower, upper]` with `f` applied; null → '—'. */
export const iv = (v: { point: number; lower: number; upper: number } | null | undefined, f: (x: number) => string) =>
  v ? `${f(v.point)} [${f(v.lower)}, ${f(v.upper)}]` : '—';
/** A fraction as percentage points, two decimals. */
export const pp = (x: number) => `${(x * 100).toFixed(2)} pp`;

/** An observation window in hours, in the unit a reader expects (s, min, h, days); null → '—'. */
export const duration = (h: number | null): string =>
  h === null
    ? '—'
    : h < 1 / 60
      ? `${(h * 3600).toFixed(0)} s`
      : h < 2
        ? `${(h * 60).toFixed(1)} min`
        : h < 48
          ? `${h.toFixed(1)} h`
          : `${(h / 24).toFixed(1)} days`;
