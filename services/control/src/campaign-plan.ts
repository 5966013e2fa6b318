// The dry-run planner of CampaignService, apart because it is most of the service's length.
import { contentHash, SEQUENTIAL_BATCH_DEFAULT, type CampaignSpec } from '@shadowplane/contracts';
import { intervalLevel } from '@shadowplane/stats';
import { stoppingSpendPlan } from '@shadowplane/evidence';
import { comparisonKey } from './campaign-ids.js';
import type { CampaignServiceDeps, LaunchOptions } from './campaigns.js';
import { dryRunPower, priorDesignEffect } from './dry-run-power.js';
import { itemWorstCase, sampleCaptureTail, ASSUMED_PROMPT_BYTES } from './estimate.js';
import { judgeWorstCase } from './judge-estimate.js';
import { readPaidDispatch } from './flags.js';
import type { DryRunResult } from '@shadowplane/contracts';

/**
 * Plans a campaign without writing anything: worst-case cost estimate from recent captures,
 * power plan per call type, dispositions.
 */
export async function planCampaign(
  deps: CampaignServiceDeps,
  nextRunIndex: (key: string) => Promise<number>,
  spec: CampaignSpec,
  opts: LaunchOptions,
): Promise<DryRunResult> {
  const key = comparisonKey(spec);
  const [runIndex, flag] = await Promise.all([nextRunIndex(key), readPaidDispatch(deps.flagsKv)]);
  const { alphaAdjusted } = intervalLevel({
    alphaOneSided: spec.alpha,
    candidates: spec.candidates.length,
    runIndex,
  });
  const estimates: DryRunResult['estimate']['call_types'] = [];
  for (const ct of spec.call_types) {
    const sample =
      spec.source === 'live'
        ? await sampleCaptureTail(deps.bus, spec.suite, ct, deps.captureSample)
        : { envelopes: 0, largest: null };
    // without captures: a chat body of the assumed size (priced by bytes, as the duplicator reserves)
    const prompt = sample.largest ?? { api: 'openai.chat' as const, body: null, bytes: ASSUMED_PROMPT_BYTES };
    const wc = itemWorstCase(spec, prompt, deps.providers);
    estimates.push({
      call_type: ct,
      basis: 'estimate' as const,
      source: sample.largest === null ? ('assumption' as const) : ('capture_tail' as const),
      envelopes_sampled: sample.envelopes,
      prompt_bytes_max: prompt.bytes,
      assumption:
        sample.largest === null
          ? `no recent captures of ${spec.suite}.${ct}; assumed a request of ${ASSUMED_PROMPT_BYTES} bytes, priced as ${ASSUMED_PROMPT_BYTES} input tokens (the duplicator's bytes-as-tokens bound) per item`
          : null,
      arms: wc.arms,
      per_item_worst_case_usd: wc.total,
      items_target: spec.max_items,
      worst_case_total_usd: wc.total === null ? null : wc.total * spec.max_items,
    });
  }
  // the judge phase, on the largest prompt any call type showed; apart from the arms, never summed in
  const judge = judgeWorstCase(spec, deps.providers, Math.max(...estimates.map((e) => e.prompt_bytes_max)));
  const anyUnknown = estimates.some((e) => e.per_item_worst_case_usd === null);
  const perItemAll = anyUnknown ? null : estimates.reduce((s, e) => s + (e.per_item_worst_case_usd ?? 0), 0);
  const itemsAffordable =
    perItemAll === null ? null : perItemAll === 0 ? spec.max_items : Math.floor(spec.max_cost_usd / perItemAll);
  const power = dryRunPower(spec, alphaAdjusted, await priorDesignEffect(spec, deps.readDatasetCard));
  const dispositions = spec.call_types.map((ct, i) => {
    const reasons: string[] = [];
    const warnings: string[] = [];
    const est = estimates[i]!;
    if (!flag.enabled) reasons.push('paid_dispatch_disabled');
    if (!power[i]!.powered) (opts.requirePower ? reasons : warnings).push('underpowered');
    if (est.per_item_worst_case_usd !== null && est.per_item_worst_case_usd > spec.max_cost_usd)
      reasons.push('budget_below_one_item');
    else if (
      judge &&
      judge.call_types.includes(ct) &&
      est.per_item_worst_case_usd !== null &&
      judge.per_item_worst_case_usd !== null &&
      est.per_item_worst_case_usd + judge.per_item_worst_case_usd > spec.max_cost_usd
    )
      reasons.push('judge_phase_unaffordable');
    if (judge && judge.per_item_worst_case_usd === null && judge.call_types.includes(ct))
      reasons.push('judge_no_rate_card');
    if (est.source === 'assumption')
      warnings.push(spec.source === 'live' ? 'no_recent_captures' : 'frozen_source_not_sampled');
    if (est.per_item_worst_case_usd === null) warnings.push('cost_unknown_no_rate_card');
    if (itemsAffordable !== null && itemsAffordable < spec.max_items && !reasons.includes('budget_below_one_item'))
      warnings.push('budget_covers_fewer_items');
    return {
      call_type: ct,
      disposition: reasons.length ? ('not_runnable' as const) : ('runnable' as const),
      reasons,
      warnings,
    };
  });
  // spend under the stopping rules; simulated, so only for a dry run (a launch needs none of it)
  const stopping = opts.dryRun
    ? estimates.map((est, i) => {
        const incumbent = est.arms.find((a) => a.role === 'incumbent')?.worst_case_usd ?? null;
        const ratios = est.arms
          .filter((a) => a.role === 'candidate')
          .map((a) => (a.worst_case_usd === null || !incumbent ? null : a.worst_case_usd / incumbent));
        return {
          call_type: est.call_type,
          ...stoppingSpendPlan({
            rule: spec.stopping ?? 'fixed',
            items: Math.max(0, Math.min(spec.max_items, itemsAffordable ?? spec.max_items)),
            maxItems: spec.max_items,
            batchItems: spec.stopping_batch_items ?? SEQUENTIAL_BATCH_DEFAULT,
            marginPp: spec.margins.noninferiority_pp,
            minSavings: spec.margins.min_savings,
            alphaAdjusted,
            perItemWorstCaseUsd: est.per_item_worst_case_usd,
            costRatios: ratios,
            sdDiff: power[i]!.sd_diff,
          }),
        };
      })
    : [];
  return {
    dry_run: true,
    would_launch: dispositions.every((d) => d.disposition === 'runnable'),
    spec,
    spec_hash: contentHash(spec),
    comparison_key: key,
    run_index: runIndex,
    paid_dispatch: { enabled: flag.enabled, state: flag.state },
    estimate: {
      basis: 'estimate',
      call_types: estimates,
      worst_case_total_usd: perItemAll === null ? null : perItemAll * spec.max_items,
      max_cost_usd: spec.max_cost_usd,
      items_affordable: itemsAffordable,
    },
    judge,
    power,
    stopping,
    dispositions,
  };
}
