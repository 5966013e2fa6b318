import type { CampaignSpec } from '@shadowplane/contracts';
import { comparisonPowerPlan } from '@shadowplane/evidence';

/**
 * Where a dry-run power plan took its design effect from:
 * - `frozen_dataset_card`: the Kish design effect of the cluster weights in the dataset card a
 *   `frozen:<hash>` source names (its `power_plan.design_effect`), for that card's call type;
 * - `none_live_source`: a live source has no evidence yet, so the √0.5 prior is used uninflated (1);
 * - `frozen_card_not_found` / `frozen_card_has_none`: a frozen source whose card is not stored or
 *   carries no design effect (1, named so);
 * - `frozen_card_other_call_type`: the card is of another call type (1 for this one).
 */
export type DesignEffectSource =
  | 'frozen_dataset_card'
  | 'none_live_source'
  | 'frozen_card_not_found'
  | 'frozen_card_has_none'
  | 'frozen_card_other_call_type';

/** The dry run's power plan of one call type (the `power[]` rows of a dry-run answer). */
export interface DryRunPower {
  call_type: string;
  /** max_items: an upper bound on the near-duplicate clusters the campaign can collect */
  clusters: number;
  alpha_one_sided_adjusted: number;
  margin_pp: number;
  /** MDE in pp at `clusters` (t quantiles, k − 1 df); null below 2 clusters */
  mde_pp: number | null;
  /** sd of the per-cluster paired difference used (0–1 quality scale) */
  sd_diff: number;
  /** always `conservative_prior` before a campaign: no candidate-vs-incumbent pairs exist yet */
  sd_source: 'conservative_prior';
  /** Kish design effect (≥ 1) the prior and the rare-failure floor are inflated by */
  design_effect: number;
  design_effect_source: DesignEffectSource;
  clusters_needed_for_margin: number | null;
  /** MDE ≤ margin: a truly equal candidate passes with ≥ 80% probability */
  powered: boolean;
}

/**
 * The design effect a `frozen:<hash>` source's dataset card carries, read through `readCard`
 * (null when the card is not stored). Live sources need no read. Never throws for a bad card: a
 * card without a finite `power_plan.design_effect` ≥ 1 is `frozen_card_has_none`.
 */
export async function priorDesignEffect(
  spec: CampaignSpec,
  readCard: ((hash: string) => Promise<unknown>) | undefined,
): Promise<{ callType: string | null; designEffect: number | null; source: DesignEffectSource }> {
  if (spec.source === 'live') return { callType: null, designEffect: null, source: 'none_live_source' };
  const hash = spec.source.slice('frozen:'.length);
  const card = readCard ? ((await readCard(hash).catch(() => null)) as Record<string, unknown> | null) : null;
  if (!card || typeof card !== 'object') return { callType: null, designEffect: null, source: 'frozen_card_not_found' };
  const callType = typeof card['call_type'] === 'string' ? card['call_type'] : null;
  const pp = card['power_plan'] as Record<string, unknown> | null | undefined;
  const d = pp && typeof pp === 'object' ? pp['design_effect'] : undefined;
  if (typeof d !== 'number' || !Number.isFinite(d) || d < 1)
    return { callType, designEffect: null, source: 'frozen_card_has_none' };
  return { callType, designEffect: d, source: 'frozen_dataset_card' };
}

/**
 * Power plan per call type before any evidence: libs/evidence comparisonPowerPlan with no pairs,
 * so the sd is the prior √0.5·√deff (at least the rare-failure floor at the margin), with deff
 * from {@link priorDesignEffect} for the card's call type and 1 elsewhere (disclosed per row).
 * The same plan a report states before its pairs exist, so `require_power` refuses exactly what a
 * report would call underpowered. Shape: spec, adjusted one-sided α, the design-effect lookup →
 * one {@link DryRunPower} per call type, in spec order.
 */
export function dryRunPower(
  spec: CampaignSpec,
  alphaAdjusted: number,
  prior: { callType: string | null; designEffect: number | null; source: DesignEffectSource },
): DryRunPower[] {
  return spec.call_types.map((ct) => {
    let deff = 1;
    let source: DesignEffectSource = prior.source;
    if (prior.source === 'frozen_dataset_card') {
      if (prior.callType === null || prior.callType === ct) deff = prior.designEffect!;
      else source = 'frozen_card_other_call_type';
    }
    const p = comparisonPowerPlan([], {
      clusters: spec.max_items,
      alpha_one_sided: alphaAdjusted,
      margin_pp: spec.margins.noninferiority_pp,
      noise_floor: { pairs: 0, sd: null },
      priorDesignEffect: deff,
    });
    return {
      call_type: ct,
      clusters: spec.max_items,
      alpha_one_sided_adjusted: alphaAdjusted,
      margin_pp: spec.margins.noninferiority_pp,
      mde_pp: p.mde_pp,
      sd_diff: p.sd_diff,
      sd_source: 'conservative_prior',
      design_effect: p.design_effect ?? deff,
      design_effect_source: source,
      clusters_needed_for_margin: p.clusters_needed_for_margin,
      powered: p.powered,
    };
  });
}
