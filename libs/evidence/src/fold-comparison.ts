/**
 * Fold stage 6b (per call type × candidate): the comparison. From the pairs: the power plan,
 * CANNOT_MEASURE with its reason when the pairs cannot decide (missing arm, unscored, mixed bases,
 * estimate only, unpriced, fewer than MIN_ARM_OBSERVATIONS), else the paired cluster bootstrap
 * with α-spending (compare.ts), the decision, its remediation, and the candidate's frontier point.
 */
import {
  BASELINE_ARTIFACT_MISSING,
  MIN_ARM_OBSERVATIONS,
  SEQUENTIAL_BATCH_DEFAULT,
  type ArmView,
  type CampaignSpec,
  type CannotMeasureReason,
  type Comparison,
  type PowerPlanValue,
  type Remediation,
} from '@shadowplane/contracts';
import { trustClass } from '@shadowplane/scoring';
import type { StatsPart } from './bundle.js';
import {
  DECISION_INTERVAL_METHOD,
  comparisonPowerPlan,
  computeComparison,
  type ComparisonSettings,
} from './compare.js';
import type { CandidatePairs } from './fold-pairs.js';
import { byKey, sortRecord } from './fold-util.js';
import { sequentialSummary } from './sequential.js';

/** A candidate's point on the cost–quality frontier, with its intervals. */
export interface FrontierCandidate {
  cost: number;
  quality: number;
  ci: [number, number];
  qi: [number, number];
}

/** Stage 6b output: the comparison, and for a measured one its statistics and frontier point. */
export interface CandidateComparison {
  cmp: Comparison;
  stats: StatsPart | null;
  frontier: FrontierCandidate | null;
}

/** Stage 6b (pure): the comparison of `cand` with the incumbent on call type `ct`. */
export function compareCandidate(p: {
  ct: string;
  spec: CampaignSpec;
  cand: CampaignSpec['incumbent'];
  runIndex: number;
  /** a provisional report takes only planned group-sequential looks; a final one may take the closing look */
  provisional: boolean;
  pairs: CandidatePairs;
  arms: readonly ArmView[];
  admittedCount: number;
  planSettings: Omit<Parameters<typeof comparisonPowerPlan>[1], 'clusters'>;
  ineligibleWeight: number;
  exclusionCounts: Readonly<Record<string, number>>;
}): CandidateComparison {
  const { ct, spec, cand, pairs, arms, planSettings, ineligibleWeight, exclusionCounts } = p;
  const {
    rows,
    basis,
    excluded,
    instrument,
    judgeRefused,
    judgeShares,
    arrivalOrder,
    hardFails,
    ceiling,
    unscoredPairs,
    okPairs,
  } = pairs;
  const K = spec.candidates.length;
  const incView = arms[0]!;
  const candView = arms.find((a) => a.arm_id === cand.id)!;
  let statsPart: StatsPart | null = null;
  let frontier: FrontierCandidate | null = null;
  const wsum = rows.reduce((a, r) => a + r.weight, 0);
  const jshare =
    wsum > 0 && instrument !== 'replay' ? rows.reduce((a, r, i) => a + r.weight * judgeShares[i]!, 0) / wsum : null;
  const clustersHave = new Set(rows.map((r) => r.cluster)).size;
  const pp = comparisonPowerPlan(rows, { ...planSettings, clusters: clustersHave });
  const base: Omit<
    Comparison,
    'state' | 'cannot_measure' | 'insufficient' | 'decision' | 'decision_reasons' | 'remediation' | 'stats'
  > = {
    candidate_arm_id: cand.id,
    basis,
    pairs: {
      items: rows.length,
      clusters: clustersHave,
      total_weight: rows.reduce((a, r) => a + r.weight, 0),
      excluded: sortRecord(excluded),
    },
    hard_gate_failures: hardFails,
    cost_ceiling_breaches: ceiling,
    trust_class: jshare === null ? null : trustClass(jshare),
    judge_weight_share: jshare,
    judge_refused: judgeRefused,
    instrument,
    power_plan: pp,
  };
  const need = pp.clusters_needed_for_margin;
  const moreTraffic: Remediation = {
    code: 'capture_more_traffic',
    text:
      need === null
        ? 'capture more traffic (a zero margin cannot be powered: set a positive noninferiority_pp)'
        : `capture more traffic: need ${need} clusters for MDE <= ${spec.margins.noninferiority_pp}pp (have ${clustersHave}; sd ${pp.sd_diff.toFixed(3)} from ${pp.sd_source === 'paired_upper_bound' ? 'the upper bound on the observed paired spread' : 'the conservative prior'})`,
  };
  const cannot = (reason: CannotMeasureReason, detail: string, remediation: Remediation[]): Comparison => ({
    ...base,
    state: 'CANNOT_MEASURE',
    cannot_measure: { reason, detail },
    insufficient: null,
    decision: null,
    decision_reasons: [],
    remediation,
    stats: null,
  });
  let cmp: Comparison;
  if (p.admittedCount > 0 && (incView.observations.ok === 0 || candView.observations.ok === 0)) {
    const which = incView.observations.ok === 0 ? spec.incumbent.id : cand.id;
    const v = incView.observations.ok === 0 ? incView : candView;
    cmp = cannot(
      'missing_arm',
      `arm ${which} has no successful observations (${v.observations.total} calls, ${v.observations.error} errors)`,
      [
        {
          code: 'fix_arm',
          text: `arm ${which} produced no successful calls: check its provider, model and errors_by_class`,
        },
      ],
    );
  } else if (okPairs > 0 && unscoredPairs === okPairs) {
    cmp = cannot(
      'unscored',
      `none of ${okPairs} paired items could be scored (no scorer applied or no output available)`,
      [
        { code: 'add_programmatic_scorer', text: 'add a programmatic scorer or expectations for this call type' },
        {
          code: 'register_outcome',
          text: 'register first-party outcomes for the arms (POST /v1/outcomes with arm_id)',
        },
      ],
    );
  } else if (basis === null && (excluded.off_basis ?? 0) > 0) {
    cmp = cannot(
      'mixed_bases',
      `no paired item has both arms on one cost basis (${excluded.off_basis} off-basis); bases never blend`,
      [
        {
          code: 'pin_one_cost_basis',
          text: 'price both arms on one basis: give both a rate card, or use providers that both report cost',
        },
      ],
    );
  } else if (basis === null && (excluded.estimate_basis ?? 0) > 0) {
    cmp = cannot('estimate_only', 'only the chars/4 estimate prices these pairs; an estimate never ranks or decides', [
      { code: 'add_rate_card', text: 'configure rate cards (or providers that report usage) for both arms' },
    ]);
  } else if (basis === null && (excluded.unpriced ?? 0) > 0) {
    cmp = cannot('unpriced', `no paired item has a known cost on both arms (${excluded.unpriced} unpriced)`, [
      {
        code: 'add_rate_card',
        text: 'configure rate cards for both arms; calls without usage are abandoned and unpriced',
      },
    ]);
  } else if (rows.length < MIN_ARM_OBSERVATIONS) {
    cmp = {
      ...cannot('insufficient', `${rows.length} paired items, need ${MIN_ARM_OBSERVATIONS}`, [moreTraffic]),
      insufficient: { below_min_n: true, need: MIN_ARM_OBSERVATIONS, have: rows.length },
    };
  } else {
    const settings: ComparisonSettings = {
      resamples: spec.bootstrap.resamples,
      seed: spec.bootstrap.seed,
      alpha: spec.alpha,
      candidates_k: K,
      run_index: p.runIndex,
      margin_pp: spec.margins.noninferiority_pp,
      min_savings: spec.margins.min_savings,
      hard_gate_failures: hardFails,
      cost_ceiling_breaches: ceiling,
      instrument,
      ...(spec.stopping === 'sequential' || spec.stopping === 'group_sequential'
        ? {
            sequential: {
              batch_items: spec.stopping_batch_items ?? SEQUENTIAL_BATCH_DEFAULT,
              order: arrivalOrder(),
              ...(spec.stopping === 'group_sequential'
                ? {
                    method: 'group_sequential' as const,
                    max_items: spec.max_items,
                    ...(p.provisional ? {} : { final: true }),
                  }
                : {}),
            },
          }
        : {}),
      ...(ineligibleWeight > 0 ? { ineligible_weight: ineligibleWeight } : {}),
    };
    const r = computeComparison(rows, settings);
    const remediation: Remediation[] = [];
    if (r.decision === 'inconclusive') {
      if (r.decision_reasons.some((x) => x.startsWith('quality_lower_bound_not_above_margin'))) {
        // claim only what the interval shows: below 0 throughout → shown worse (by less than it
        // can rule out); otherwise it holds both 0 and −margin and only more traffic can tell
        const m = spec.margins.noninferiority_pp;
        const lo = (r.quality_delta.lower * 100).toFixed(2);
        const hi = (r.quality_delta.upper * 100).toFixed(2);
        remediation.push(
          r.quality_delta.upper < 0
            ? {
                code: 'quality_shown_worse',
                text: `the quality interval [${lo}, ${hi}]pp lies below 0: the candidate is shown worse than the incumbent, by between ${(-r.quality_delta.upper * 100).toFixed(2)} and ${(-r.quality_delta.lower * 100).toFixed(2)}pp, and not shown within -${m}pp`,
              }
            : {
                code: 'capture_more_traffic',
                text: `the quality interval [${lo}, ${hi}]pp holds both 0 and -${m}pp: ${moreTraffic.text}`,
              },
        );
      }
      if (r.decision_reasons.some((x) => x.startsWith('savings_unmeasurable')))
        remediation.push({
          code: 'add_rate_card',
          text: 'cost savings are unmeasurable: configure rate cards so both arms are priced',
        });
      if (r.decision_reasons.some((x) => x.startsWith('savings_lower_bound_below_min')))
        remediation.push({
          code: 'savings_not_shown',
          text: `savings are not shown to reach min_savings ${spec.margins.min_savings}: capture more traffic or accept a lower min_savings`,
        });
    }
    if (ineligibleWeight > 0)
      remediation.push({
        code: 'rebaseline',
        text: `${exclusionCounts[BASELINE_ARTIFACT_MISSING]} item(s) have no retained baseline artifact (missing or expired): pin a newer baseline run, or keep artifacts longer (retention.ttl_days)`,
      });
    if (r.state === 'CANNOT_MEASURE')
      remediation.push({
        code: 'run_shadow_dual_run',
        text: 'replay measures cost only: run the candidate as a shadow_dual_run campaign to decide quality',
      });
    if (base.trust_class === 'C')
      remediation.push({
        code: 'register_outcome',
        text: 'the quality evidence is judge-dominated (trust class C): register first-party outcomes or add programmatic scorers',
      });
    cmp = {
      ...base,
      state: r.state,
      cannot_measure:
        r.state === 'CANNOT_MEASURE'
          ? {
              reason: 'instrument_cost_only',
              detail:
                'the pairs come from replay: cost savings are measured, quality is never decided from a historical served output',
            }
          : null,
      insufficient: null,
      decision: r.decision,
      decision_reasons: r.decision_reasons,
      remediation,
      stats: {
        quality_delta: r.quality_delta,
        cost_savings: r.cost_savings,
        cost_savings_null_reason: r.cost_savings_null_reason,
        resamples: settings.resamples,
        seed: settings.seed,
        level: r.level,
        alpha_one_sided_adjusted: r.alpha_one_sided_adjusted,
        candidates_k: K,
        run_index: p.runIndex,
        margin_pp: settings.margin_pp,
        min_savings: settings.min_savings,
        interval_method: DECISION_INTERVAL_METHOD,
      },
      ...(r.sequential ? { sequential: sequentialSummary(r.sequential, spec, rows.length) } : {}),
    };
    statsPart = { call_type: ct, candidate_arm_id: cand.id, settings, result: r };
    if (r.cost_savings !== null && r.state !== 'CANNOT_MEASURE') {
      const tw = rows.reduce((a, x) => a + x.weight, 0);
      const qInc = rows.reduce((a, x) => a + x.weight * x.q_inc, 0) / tw;
      const cInc = rows.reduce((a, x) => a + x.weight * x.cost_inc_usd, 0) / tw;
      frontier = {
        quality: qInc + r.quality_delta.point,
        cost: cInc * (1 - r.cost_savings.point),
        qi: [qInc + r.quality_delta.lower, qInc + r.quality_delta.upper],
        ci: [cInc * (1 - r.cost_savings.upper), cInc * (1 - r.cost_savings.lower)],
      };
    }
  }
  return { cmp, stats: statsPart, frontier };
}
