/**
 * Fold stage 7 (per call type): the cost–quality frontier (incumbent and measured candidates,
 * dominated points marked, the rest beside it with why), the dataset card, and the verdict line
 * of each comparison.
 */
import type {
  ArmView,
  CampaignSpec,
  Comparison,
  DatasetCard,
  FrontierPoint,
  JudgeSummary,
  PowerPlanValue,
} from '@shadowplane/contracts';
import { fastContentHash } from './canonical-fast.js';
import { NEAR_DUPLICATE_HAMMING_BITS, NEAR_DUPLICATE_METHOD } from './clusters.js';
import { comparisonPowerPlan } from './compare.js';
import type { FrontierCandidate } from './fold-comparison.js';
import type { CallTypeItems } from './fold-items.js';
import { kappaText } from './judge-fold.js';
import { sortRecord } from './fold-util.js';

/** Stage 7a (pure): the frontier of one call type. */
export function frontierOf(
  incView: ArmView,
  arms: readonly ArmView[],
  comparisons: readonly Comparison[],
  frontierCand: ReadonlyMap<string, FrontierCandidate>,
): { points: FrontierPoint[]; beside: { arm_id: string; why: string }[] } {
  const points: FrontierPoint[] = [];
  const beside: { arm_id: string; why: string }[] = [];
  if (incView.status === 'measurable' && incView.cost.per_request_mean_usd !== null && incView.quality.mean !== null) {
    points.push({
      arm_id: incView.arm_id,
      cost_usd: incView.cost.per_request_mean_usd,
      quality: incView.quality.mean,
      cost_interval: null,
      quality_interval: null,
      on_frontier: true,
      dominated_by: null,
    });
  } else beside.push({ arm_id: incView.arm_id, why: `incumbent not drawn: ${incView.status}` });
  for (const cmp of comparisons) {
    const f = frontierCand.get(cmp.candidate_arm_id);
    if (f)
      points.push({
        arm_id: cmp.candidate_arm_id,
        cost_usd: f.cost,
        quality: f.quality,
        cost_interval: f.ci,
        quality_interval: f.qi,
        on_frontier: true,
        dominated_by: null,
      });
    else {
      const v = arms.find((a) => a.arm_id === cmp.candidate_arm_id)!;
      const why =
        cmp.state === 'CANNOT_MEASURE'
          ? `cannot measure: ${cmp.cannot_measure!.reason}${cmp.insufficient ? ` (have ${cmp.insufficient.have}, need ${cmp.insufficient.need})` : ''}`
          : `unpriced (cost savings ${cmp.stats?.cost_savings_null_reason ?? 'unknown'})`;
      beside.push({ arm_id: v.arm_id, why });
    }
  }
  for (const p of points) {
    const dom = points.find(
      (o) =>
        o !== p &&
        o.cost_usd <= p.cost_usd &&
        o.quality >= p.quality &&
        (o.cost_usd < p.cost_usd || o.quality > p.quality),
    );
    if (dom) {
      p.on_frontier = false;
      p.dominated_by = dom.arm_id;
      beside.push({ arm_id: p.arm_id, why: `dominated by ${dom.arm_id}` });
    }
  }
  return { points, beside };
}

/** Stage 7b (pure): the dataset card of one call type (power plan before any pairs). */
export function datasetCard(
  ct: string,
  items: CallTypeItems,
  planSettings: Omit<Parameters<typeof comparisonPowerPlan>[1], 'clusters'>,
): DatasetCard {
  const { admitted, weights, clusters, strata, trafficCounts, exclusions, exclusionCounts } = items;
  // before any pairs: the prior, inflated by the design effect of the admitted clusters' weights
  const datasetPlan = (): PowerPlanValue => {
    const cw = new Map<string, number>();
    for (let i = 0; i < admitted.length; i++) cw.set(clusters[i]!, (cw.get(clusters[i]!) ?? 0) + weights[i]!);
    return comparisonPowerPlan([], { ...planSettings, clusters: cw.size, priorWeights: [...cw.values()] });
  };
  const card: DatasetCard = {
    schema: 'shadow.dataset_card/v1',
    dataset_hash: fastContentHash(admitted.map((h, i) => [h, weights[i]!])),
    call_type: ct,
    unique_items: admitted.length,
    total_weight: weights.reduce((a, w) => a + w, 0),
    duplicated_items: weights.filter((w) => w > 1).length,
    near_duplicate_clusters: new Set(clusters).size,
    near_duplicate_threshold: NEAR_DUPLICATE_HAMMING_BITS,
    near_duplicate_method: NEAR_DUPLICATE_METHOD,
    strata: sortRecord(strata),
    traffic_classes: sortRecord(trafficCounts),
    exclusions,
    exclusion_counts: sortRecord(exclusionCounts),
    power_plan: datasetPlan(),
  };
  return card;
}

/** Stage 7c (pure): the verdict line of one comparison. */
export function describe(
  ct: string,
  inc: string,
  c: Comparison,
  marginPp: number,
  judge: JudgeSummary | undefined,
): string {
  const who = `${ct}: ${c.candidate_arm_id} vs ${inc}`;
  const next = c.remediation.length ? ` Next: ${c.remediation[0]!.text}.` : '';
  if (c.state === 'CANNOT_MEASURE')
    return `${who}: cannot measure (${c.cannot_measure!.reason}: ${c.cannot_measure!.detail}).${next}`;
  const s = c.stats!;
  const d = `quality delta ${(s.quality_delta.point * 100).toFixed(2)}pp [${(s.quality_delta.lower * 100).toFixed(2)}, ${(s.quality_delta.upper * 100).toFixed(2)}] at ${(s.level * 100).toFixed(1)}%`;
  const sv = s.cost_savings
    ? `savings ${(s.cost_savings.point * 100).toFixed(1)}% [${(s.cost_savings.lower * 100).toFixed(1)}, ${(s.cost_savings.upper * 100).toFixed(1)}] (${c.basis})`
    : 'savings unmeasurable';
  const word =
    c.decision === 'pass'
      ? `passes non-inferiority at -${marginPp}pp`
      : c.decision === 'fail'
        ? 'fails'
        : 'is inconclusive';
  const cal = c.trust_class === 'C' || c.trust_class === 'B' ? ` (${kappaText(judge)})` : '';
  return `${who}: ${c.state}, ${word}; ${d}; ${sv}; trust class ${c.trust_class ?? '-'}${cal}.${c.decision === 'pass' ? '' : next}`;
}
