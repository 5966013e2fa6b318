/**
 * Keeps a metric label's value set bounded: the first `max` distinct values pass through, any
 * later one becomes `other` (so a misconfigured or hostile value stream cannot grow the series
 * count without limit). Values come from operator configuration (provider ids, model names, arm
 * ids), so `other` showing up means the bound is too small for this deployment, not an attack.
 */
export class BoundedLabel {
  private readonly seen = new Set<string>();
  /** @param max most distinct values kept (≥ 1); default 64 */
  constructor(readonly max = 64) {}

  /** `v` when it is (or fits among) the first `max` distinct values, else `other`. */
  value(v: string): string {
    if (this.seen.has(v)) return v;
    if (this.seen.size >= this.max) return 'other';
    this.seen.add(v);
    return v;
  }
}
