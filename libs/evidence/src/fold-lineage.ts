/**
 * Table-row helpers of the fold's last stages: the run's spend, the call types present and their
 * rows, and the lineage ids the bundle lists. Pure functions of an ObsTable and row numbers.
 */
import type { ItemEvent, RunSpend } from '@shadowplane/contracts';
import { lazyRows } from './fold-rows.js';
import { inc, sortRecord } from './fold-util.js';
import type { ObsTable } from './obs-table.js';

/** Σ charged_micro_usd over distinct observations (by id), split by arm; the judge's verdicts apart (see RunSpend). */
export function runSpend(
  table: ObsTable,
  rows: ArrayLike<number>,
  verdicts: readonly { charged_micro_usd: number }[],
): RunSpend {
  // distinct by id: rows sorted by id, the first of each run of equal ids (no set of 300k id
  // strings); the sums are of integers, so their order does not change them
  const sorted = Int32Array.from(rows).sort((a, b) => table.cmpId(a, b) || a - b);
  const byArm: Record<string, number> = {};
  let total = 0;
  for (let i = 0; i < sorted.length; i++) {
    const r = sorted[i]!;
    if (i > 0 && table.cmpId(sorted[i - 1]!, r) === 0) continue;
    const o = table.row(r);
    total += o.charged_micro_usd;
    inc(byArm, o.role === 'incumbent_aa' ? `${o.arm_id}:aa` : o.arm_id, o.charged_micro_usd);
  }
  return {
    arms_micro_usd: total,
    by_arm: sortRecord(byArm),
    judge_micro_usd: verdicts.reduce((a, v) => a + v.charged_micro_usd, 0),
  };
}

/** The distinct call types of table rows `rows`. */
export function callTypesOf(t: ObsTable, rows: Int32Array): string[] {
  const ids = new Set<number>();
  for (const r of rows) ids.add(t.s.call_type[r]!);
  return [...ids].map((i) => t.pool[i] as string);
}

/** The rows among `rows` (in their order) whose call type is `ct`. */
export function rowsOfCallType(t: ObsTable, rows: Int32Array, ct: string): Int32Array {
  const col = t.s.call_type;
  return rows.filter((r) => t.pool[col[r]!] === ct);
}

/** The lineage's envelope ids: of the observations, then of the item events, distinct and sorted. */
export function envelopeIds(t: ObsTable, rows: Int32Array, evs: readonly ItemEvent[]): string[] {
  const ids = new Set<string>();
  for (const r of rows) ids.add(t.row(r).envelope_id);
  for (const e of evs) ids.add(e.envelope_id);
  return [...ids].sort();
}

/**
 * The lineage ids of table rows `rows`, sorted (code-unit order); `lazy`: as a read-only array
 * whose ids are built when read (fold-rows.ts lazyRows) — 300k id strings were ~30 MB held from
 * the bundle's build to the end of its write.
 */
export function observationIds(t: ObsTable, rows: Int32Array, lazy: boolean): string[] {
  if (!lazy) return Array.from(rows, (r) => t.id(r)).sort();
  const sorted = rows.slice().sort((a, b) => t.cmpId(a, b));
  return lazyRows(sorted.length, (i) => t.id(sorted[i]!));
}
