/** Timestamps of observations held as numbers (obs-table.ts). */

/**
 * Largest epoch ms whose toISOString() has a four-digit year (9999-12-31T23:59:59.999Z); from year
 * 0000 on, such strings all have 24 characters, so their code-unit order is their time order.
 */
const MAX_ISO_MS = 253402300799999;
const MIN_ISO_MS = -62167219200000;

/**
 * The epoch ms of `v` when `new Date(ms).toISOString()` gives `v` back exactly (so `v` can be held as
 * a number), else NaN.
 */
export function isoMs(v: string): number {
  if (v.length !== 24) return NaN;
  const ms = Date.parse(v);
  if (!(ms >= MIN_ISO_MS && ms <= MAX_ISO_MS)) return NaN;
  return new Date(ms).toISOString() === v ? ms : NaN;
}
