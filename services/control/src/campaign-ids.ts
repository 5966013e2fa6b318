// Campaign ids, comparison keys, ledger limits and terminal states: pure helpers shared by the
// campaign service, the planner, baselines and suites.
import { randomBytes } from 'node:crypto';
import { contentHash, TERMINAL_CAMPAIGN_STATES, type CampaignSpec, type CampaignState } from '@shadowplane/contracts';
import { usdToMicroUsdCeil } from '@shadowplane/providers';

/** States from which a campaign never runs again. */
export const TERMINAL_STATES: ReadonlySet<CampaignState> = new Set(TERMINAL_CAMPAIGN_STATES);

/** A new campaign id: `cmp_` + 16 lowercase hex characters (64 random bits). */
export function newCampaignId(): string {
  return `cmp_${randomBytes(8).toString('hex')}`;
}

/**
 * The key that identifies "the same comparison" across runs, for α-spending: contentHash of the
 * suite, the call types (sorted), the incumbent's provider/model and the candidates'
 * provider/model pairs (sorted). Arm ids, budgets and margins do not change the comparison.
 */
export function comparisonKey(spec: CampaignSpec): string {
  const pm = (a: { provider: string; model: string }) => ({ provider: a.provider, model: a.model });
  const cands = spec.candidates
    .map(pm)
    .sort((a, b) => (a.provider + '\u0000' + a.model).localeCompare(b.provider + '\u0000' + b.model));
  return contentHash({
    suite: spec.suite,
    call_types: [...spec.call_types].sort(),
    incumbent: pm(spec.incumbent),
    candidates: cands,
  });
}

/**
 * Limit of a budget ledger: ⌈max_cost_usd × 1e6⌉ micro-USD, computed on the shortest decimal form
 * (`usdToMicroUsdCeil` from libs/providers) so 0.1 → 100000 exactly, never 100001.
 */
export function limitMicroUsd(maxCostUsd: number): number {
  return usdToMicroUsdCeil(maxCostUsd);
}
