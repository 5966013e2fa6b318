/**
 * The refusals a live launch (or resume) can meet before anything is written: arms or a judge
 * without a rate card, a judge phase the cost cap cannot cover, call types that cannot reach the
 * margin (`require_power`), and the paid_dispatch kill switch.
 */
import { ShadowplaneError, type CampaignSpec } from '@shadowplane/contracts';
import { priceCatalogue } from '@shadowplane/prices';
import { intervalLevel } from '@shadowplane/stats';
import { dryRunPower, priorDesignEffect } from './dry-run-power.js';
import type { DryRunResult, FlagView } from '@shadowplane/contracts';

/** How to turn the kill switch on, named in every paid_dispatch_disabled refusal (admin scope). */
const PAID_DISPATCH_HINT =
  'An operator with the admin scope turns it on with `shadowctl flags paid-dispatch on --reason \'<why>\'` (PUT /v1/admin/flags/paid_dispatch {"enabled": true, "reason": "<why>"}).';

/**
 * The duplicator reserves each arm's worst case at its rate card before any call; an arm without
 * one cannot be bounded, would never be dispatched, and would silently be missing from the report.
 * @throws ShadowplaneError 400 invalid_request naming each `<arm>.rate_card`
 */
export function requireArmRateCards(spec: CampaignSpec): void {
  const unpriced = [
    ['incumbent', spec.incumbent] as const,
    ...spec.candidates.map((c, i) => [`candidates.${i}`, c] as const),
  ].filter(([, a]) => a.rate_card === undefined);
  if (unpriced.length > 0) {
    throw new ShadowplaneError(
      'invalid_request',
      `every arm needs a rate_card to bound its spend: ${unpriced.map(([p, a]) => `${p}.rate_card (model ${a.model} is not in price catalogue ${priceCatalogue().version})`).join(', ')}`,
      {
        details: {
          issues: unpriced.map(([p, a]) => ({
            path: `${p}.rate_card`,
            message: `required for a live launch: the budget reserves each call at its rate card, and model ${JSON.stringify(a.model)} is not in price catalogue ${priceCatalogue().version}`,
          })),
        },
      },
    );
  }
}

/**
 * The index of the spec's llm_judge scorer (-1 when none); the judge must carry a rate card.
 * @throws ShadowplaneError 400 invalid_request naming `scorers.<i>.rate_card`
 */
export function requireJudgeRateCard(spec: CampaignSpec): number {
  const judgeSpec = spec.scorers.findIndex((s) => s.kind === 'llm_judge');
  if (
    judgeSpec >= 0 &&
    spec.scorers[judgeSpec]!.kind === 'llm_judge' &&
    (spec.scorers[judgeSpec] as { rate_card?: unknown }).rate_card === undefined
  ) {
    throw new ShadowplaneError(
      'invalid_request',
      `the llm_judge scorer needs a rate_card to bound its spend: scorers.${judgeSpec}.rate_card`,
      {
        details: {
          issues: [
            {
              path: `scorers.${judgeSpec}.rate_card`,
              message: 'required for a live launch: the budget reserves each judge call at its rate card',
            },
          ],
        },
      },
    );
  }
  return judgeSpec;
}

/**
 * The cap must cover an item's arms and its judge phase together, before any arm spends; `dry` is
 * the campaign's dry-run plan.
 * @throws ShadowplaneError 422 judge_phase_unaffordable naming the call types and per-item USD
 */
export function requireJudgeAffordable(spec: CampaignSpec, dry: DryRunResult): void {
  const short = dry.dispositions.filter((d) => d.reasons.includes('judge_phase_unaffordable'));
  if (short.length > 0) {
    throw new ShadowplaneError(
      'judge_phase_unaffordable',
      `max_cost_usd ${spec.max_cost_usd} cannot cover one item's arms and judge calls at their worst case (judge per item ${dry.judge?.per_item_worst_case_usd} USD)`,
      {
        details: {
          call_types: short.map((d) => d.call_type),
          max_cost_usd: spec.max_cost_usd,
          judge_per_item_worst_case_usd: dry.judge?.per_item_worst_case_usd ?? null,
          arm_per_item_worst_case_usd: dry.estimate.call_types
            .filter((e) => short.some((d) => d.call_type === e.call_type))
            .map((e) => e.per_item_worst_case_usd),
        },
      },
    );
  }
}

/**
 * `require_power`: every call type must reach the non-inferiority margin at max_items, at the
 * alpha adjusted for the candidates and this run's index (1-based) in its comparison series.
 * @throws ShadowplaneError 422 underpowered naming each call type with its power figures
 */
export async function requirePowered(
  spec: CampaignSpec,
  runIndex: number,
  readDatasetCard: ((hash: string) => Promise<unknown>) | undefined,
): Promise<void> {
  const { alphaAdjusted } = intervalLevel({
    alphaOneSided: spec.alpha,
    candidates: spec.candidates.length,
    runIndex,
  });
  const power = dryRunPower(spec, alphaAdjusted, await priorDesignEffect(spec, readDatasetCard));
  const under = power.filter((p) => !p.powered);
  if (under.length > 0) {
    throw new ShadowplaneError(
      'underpowered',
      `call types ${under.map((p) => p.call_type).join(', ')} cannot reach a ${spec.margins.noninferiority_pp} pp margin with max_items ${spec.max_items}`,
      {
        details: {
          call_types: under.map((p) => ({
            call_type: p.call_type,
            mde_pp: p.mde_pp,
            margin_pp: p.margin_pp,
            clusters: p.clusters,
            clusters_needed_for_margin: p.clusters_needed_for_margin,
            sd_source: p.sd_source,
            design_effect: p.design_effect,
            design_effect_source: p.design_effect_source,
          })),
        },
      },
    );
  }
}

/**
 * The kill switch: refuses when paid_dispatch is not on. `refused` completes the sentence
 * "paid_dispatch is <state>: …" (e.g. `no campaign may launch`).
 * @throws ShadowplaneError 503 paid_dispatch_disabled with the hint to turn it on
 */
export function requirePaidDispatch(flag: FlagView, refused: string): void {
  if (!flag.enabled)
    throw new ShadowplaneError(
      'paid_dispatch_disabled',
      `paid_dispatch is ${flag.state}: ${refused}. ${PAID_DISPATCH_HINT}`,
      {
        details: { flag: 'paid_dispatch', state: flag.state, hint: PAID_DISPATCH_HINT },
      },
    );
}
