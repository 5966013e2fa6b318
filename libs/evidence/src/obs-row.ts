/**
 * A row of an ObsTable read as the observation fields the fold uses (FoldObs), built from the
 * table's columns on access: no object per observation is kept.
 */
import type { Observation } from '@shadowplane/contracts';
import type { FoldObs, FoldUsage, FoldCost, NumCol, ObsTable, StrCol } from './obs-table.js';

/** A row of an {@link ObsTable} read as a {@link FoldObs}. */
export class ObsRow implements FoldObs {
  constructor(
    private readonly t: ObsTable,
    private readonly r: number,
  ) {}
  private str(k: StrCol): string {
    return this.t.pool[this.t.s[k][this.r]!] as string;
  }
  private strOrNull(k: StrCol): string | null {
    const i = this.t.s[k][this.r]!;
    return i < 0 ? null : (this.t.pool[i] as string);
  }
  private num(k: NumCol): number | null {
    const v = this.t.n[k][this.r]!;
    return Number.isNaN(v) ? null : v;
  }
  get campaign_id(): string {
    return this.str('campaign_id');
  }
  get item_hash(): string {
    return this.str('item_hash');
  }
  get call_type(): string {
    return this.str('call_type');
  }
  get arm_id(): string {
    return this.str('arm_id');
  }
  get role(): Observation['role'] {
    return this.str('role') as Observation['role'];
  }
  get instrument(): Observation['instrument'] {
    return this.str('instrument') as Observation['instrument'];
  }
  get envelope_id(): string {
    return this.str('envelope_id');
  }
  get provider(): string {
    return this.str('provider');
  }
  get model(): string {
    return this.str('model');
  }
  get started_at(): string {
    return this.t.time('started_at', this.r);
  }
  get ended_at(): string {
    return this.t.time('ended_at', this.r);
  }
  get start_skew_ms(): number {
    return this.t.n.start_skew_ms[this.r]!;
  }
  get attempts(): number {
    return this.t.n.attempts[this.r]!;
  }
  get status(): Observation['status'] {
    return this.str('status') as Observation['status'];
  }
  get error_class(): Observation['error_class'] {
    return this.strOrNull('error_class') as Observation['error_class'];
  }
  get latency_ms(): number | null {
    return this.num('latency_ms');
  }
  get ttft_ms(): number | null {
    return this.num('ttft_ms');
  }
  get usage(): FoldUsage {
    return {
      input_tokens: this.num('input_tokens'),
      cache_read_input_tokens: this.num('cache_read_input_tokens'),
      cache_creation_input_tokens: this.num('cache_creation_input_tokens'),
      output_tokens: this.num('output_tokens'),
      reasoning_output_tokens: this.num('reasoning_output_tokens'),
    };
  }
  get cost(): FoldCost {
    const reason = this.strOrNull('reason');
    const c: FoldCost = { usd: this.num('usd'), basis: this.strOrNull('basis') as FoldCost['basis'] };
    if (reason !== null) c.reason = reason;
    return c;
  }
  get charged_micro_usd(): number {
    return this.t.n.charged_micro_usd[this.r]!;
  }
  get abandoned(): boolean {
    return this.t.abandoned[this.r] === 1;
  }
  get output_text(): string | null {
    return this.t.output(this.r);
  }
  get prompt_simhash(): string {
    return this.str('prompt_simhash');
  }
  get traffic_class(): Observation['traffic_class'] {
    return this.str('traffic_class') as Observation['traffic_class'];
  }
  get expectations(): Observation['expectations'] {
    return this.t.pool[this.t.s.expectations[this.r]!] as Observation['expectations'];
  }
}
