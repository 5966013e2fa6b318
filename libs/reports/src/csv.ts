/**
 * CSV exports of the call ledger tables (RFC 4180, via csv-stringify): a header row with the
 * field names of {@link CallRow} / {@link ArmRollup} / {@link HostRollup}, one row per record,
 * CRLF-free (`\n` line ends). null is an empty cell and 0 is `0`, so a spreadsheet keeps "not
 * reported" apart from zero; booleans are `true` / `false`; numbers are JavaScript's shortest form.
 */
import { stringify } from 'csv-stringify/sync';
import type { ArmRollup, CallRow, HostRollup, Ledger } from './ledger.js';

function table<T extends object>(rows: readonly T[], columns: readonly (keyof T & string)[]): string {
  const cell = (v: unknown): string => (v === null || v === undefined ? '' : String(v));
  return stringify([[...columns], ...rows.map((r) => columns.map((c) => cell(r[c])))], { record_delimiter: 'unix' });
}

/** Column order of `calls.csv`. */
const CALL_COLUMNS: readonly (keyof CallRow)[] = Object.freeze([
  'started_at',
  'campaign_id',
  'call_type',
  'item_hash',
  'arm_id',
  'role',
  'route',
  'upstream',
  'model_echo',
  'pin_honored',
  'status',
  'http_status',
  'error_class',
  'attempts',
  'latency_ms',
  'ttft_ms',
  'start_skew_ms',
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'reasoning_tokens',
  'cost_usd',
  'cost_basis',
  'charged_usd',
  'abandoned',
] as const);
/** Column order of `arms.csv`. */
const ARM_COLUMNS: readonly (keyof ArmRollup)[] = Object.freeze([
  'arm_id',
  'role',
  'route',
  'calls',
  'ok',
  'never_completed',
  'never_completed_share',
  'never_completed_lower',
  'never_completed_upper',
  'abandoned',
  'cost_basis',
  'cost_usd',
  'cost_priced_calls',
  'cost_other_basis',
  'cost_unpriced',
  'cost_per_prompt_token_usd',
  'charged_usd',
  'cache_hit_share',
  'latency_p50_ms',
  'latency_p90_ms',
  'distinct_upstreams',
  'z_vs_incumbent',
  'p_vs_incumbent',
  'p_holm',
] as const);
/** Column order of `hosts.csv`. */
const HOST_COLUMNS: readonly (keyof HostRollup)[] = Object.freeze([
  'arm_id',
  'role',
  'upstream',
  'calls',
  'never_completed',
  'never_completed_share',
  'pin_honored_true',
  'pin_honored_false',
  'pin_honored_null',
  'latency_p50_ms',
] as const);

/** The three ledger tables as CSV texts: `{ calls, arms, hosts }`. */
export function ledgerCsv(l: Ledger): { calls: string; arms: string; hosts: string } {
  return { calls: table(l.calls, CALL_COLUMNS), arms: table(l.arms, ARM_COLUMNS), hosts: table(l.hosts, HOST_COLUMNS) };
}
