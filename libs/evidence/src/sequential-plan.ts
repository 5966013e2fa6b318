/**
 * Spend before a campaign under the stopping rules: what a dry run can say about `fixed`,
 * `sequential` and `group_sequential` without evidence. The worst case is the same for both (the sequential rule can only
 * stop earlier); the expected spend under `sequential` depends on the candidate's true quality, so
 * it is given per scenario from a small seeded simulation of the same decision the verdict service
 * runs (libs/stats `sequentialSettling`, the settling look of `sequentialLooks`), never as one number.
 */
import {
  GROUP_SEQUENTIAL_FUTILITY_POWER,
  GROUP_SEQUENTIAL_MAX_LOOKS,
  Xoshiro128ss,
  conditionalPower,
  sequentialSettling,
  spendingBoundaries,
} from '@shadowplane/stats';
import { MIN_ARM_OBSERVATIONS } from '@shadowplane/contracts';

/** A true quality gap the expected spend is simulated at. */
export type SpendScenario = 'clearly_worse' | 'at_margin' | 'equal';

/** Expected paid items and dollars under one scenario (simulation, not a bound). */
export interface ScenarioSpend {
  scenario: SpendScenario;
  /** candidate − incumbent quality the scenario assumes, pp (clearly worse = −4 × margin) */
  delta_pp: number;
  /** mean paid items under `sequential` over the simulated campaigns */
  expected_items: number;
  /** 90th percentile of paid items under `sequential` */
  p90_items: number;
  /** expected_items × the per-item worst case, USD (null when no rate card prices the arms) */
  expected_usd: number | null;
  /** share of simulated campaigns in which every candidate settled (pass, fail or futile) before the last item */
  settled_share: number;
}

/** The dry run's `stopping` block of one call type. */
export interface StoppingSpendPlan {
  /** the spec's rule; the others are shown for comparison */
  rule: 'fixed' | 'sequential' | 'group_sequential';
  /** items both rules can pay for at most: min(max_items, items the cap affords) */
  worst_case_items: number;
  /** worst_case_items × per-item worst case, USD, the same under both rules (null when unpriced) */
  worst_case_usd: number | null;
  /** `fixed` pays for every item it can: expected = worst case */
  fixed: { expected_items: number; expected_usd: number | null };
  /** `sequential`: one row per scenario, from `simulation` */
  sequential: { batch_items: number; scenarios: ScenarioSpend[] };
  /**
   * `group_sequential`: one row per scenario from the same simulated items, looked at only at the
   * planned looks (every batch up to max_items); null when max_items / batch plans more than
   * GROUP_SEQUENTIAL_MAX_LOOKS looks (such a spec is refused for group_sequential)
   */
  group_sequential: { batch_items: number; planned_looks: number; scenarios: ScenarioSpend[] } | null;
  simulation: {
    basis: 'simulation';
    campaigns: number;
    seed: number;
    /** what the simulated items are: the assumptions a reader needs to weigh the figures */
    model: string;
  };
}

/** Inputs of {@link stoppingSpendPlan}. */
export interface StoppingSpendInput {
  rule: 'fixed' | 'sequential' | 'group_sequential';
  /** items the campaign may pay for at most (min of max_items and what the cap affords), ≥ 0 */
  items: number;
  /** the spec's max_items: the group-sequential plan's horizon (default `items`), ≥ items */
  maxItems?: number;
  /** paired items between looks (spec `stopping_batch_items` or its default), ≥ 1 */
  batchItems: number;
  marginPp: number;
  minSavings: number;
  /** one-sided α per side after the candidate and re-run split, in (0, 0.5) */
  alphaAdjusted: number;
  /** per-item worst case of every arm, USD; null when unpriced */
  perItemWorstCaseUsd: number | null;
  /**
   * per candidate: candidate ÷ incumbent per-item worst case (its savings side's cost ratio),
   * ≥ 0; null when unpriced — that candidate's savings are then assumed met and only quality
   * decides. The campaign stops when every candidate is settled, so its paid items are the
   * largest settling point among them.
   */
  costRatios: readonly (number | null)[];
  /** sd of the paired per-item difference the power plan uses (0–1 scale) */
  sdDiff: number;
  /** simulated campaigns per scenario (default 100) */
  campaigns?: number;
  /** default 20261201 */
  seed?: number;
}

/**
 * Expected and worst-case spend under `fixed` and `sequential` for one call type. Items are
 * singleton clusters with a paired difference d ∈ {−1, 0, +1}: discordant with probability
 * π = min(1, sdDiff²) (the power plan's prior), +1 with (π + δ)/2 and −1 with (π − δ)/2; costs are
 * constant with the given ratio. Scenarios: δ = −4·margin, −margin and 0. The decision is
 * libs/stats sequentialSettling (one pass per campaign): 3 × campaigns × items steps; the
 * group-sequential one is {@link groupSequentialSettling} on the same items.
 * Errors: RangeError on items < 0, batchItems < 1 or α ∉ (0, 0.5) (from sequentialLooks).
 */
export function stoppingSpendPlan(input: StoppingSpendInput): StoppingSpendPlan {
  if (!(input.items >= 0 && Number.isInteger(input.items)))
    throw new RangeError(`stoppingSpendPlan: items must be an integer >= 0, got ${input.items}`);
  if (!(Number.isInteger(input.batchItems) && input.batchItems >= 1))
    throw new RangeError(`stoppingSpendPlan: batchItems must be an integer >= 1, got ${input.batchItems}`);
  const campaigns = input.campaigns ?? 100;
  const seed = input.seed ?? 20261201;
  const usd = (items: number): number | null =>
    input.perItemWorstCaseUsd === null ? null : items * input.perItemWorstCaseUsd;
  const margin = input.marginPp / 100;
  const pi = Math.min(1, Math.max(input.sdDiff * input.sdDiff, 4 * margin));
  if (input.costRatios.length < 1) throw new RangeError('stoppingSpendPlan: costRatios needs one entry per candidate');
  const scenarios: [SpendScenario, number][] = [
    ['clearly_worse', -4 * margin],
    ['at_margin', -margin],
    ['equal', 0],
  ];
  const looks: number[] = [];
  for (let k = input.batchItems; k < input.items; k += input.batchItems) looks.push(k);
  if (input.items > 0) looks.push(input.items);
  // the group-sequential plan over the horizon max_items (looks past `items` are never reached)
  const maxItems = Math.max(input.maxItems ?? input.items, input.items);
  const gsLooks: number[] = [];
  if (maxItems > 0 && Math.ceil(maxItems / input.batchItems) <= GROUP_SEQUENTIAL_MAX_LOOKS) {
    for (let k = input.batchItems; k < maxItems; k += input.batchItems) gsLooks.push(k);
    gsLooks.push(maxItems);
  }
  const gs = gsLooks.length
    ? spendingBoundaries(
        gsLooks.map((n) => n / maxItems),
        input.alphaAdjusted,
      )
    : null;
  const summarise = (scenario: SpendScenario, deltaRaw: number, paid: number[], settled: number): ScenarioSpend => {
    paid.sort((a, b) => a - b);
    const mean = Math.round((paid.reduce((s, x) => s + x, 0) / campaigns) * 10) / 10;
    return {
      scenario,
      delta_pp: Math.round(100 * deltaRaw * 100) / 100,
      expected_items: mean,
      p90_items: paid[Math.min(campaigns - 1, Math.ceil(0.9 * campaigns) - 1)]!,
      expected_usd: usd(mean),
      settled_share: settled / campaigns,
    };
  };
  const rows: ScenarioSpend[] = [];
  const gsRows: ScenarioSpend[] = [];
  for (const [scenario, deltaRaw] of scenarios) {
    const delta = Math.max(-pi, deltaRaw);
    const rng = new Xoshiro128ss(seed + Math.round(1000 * deltaRaw));
    const paid: number[] = [];
    const gsPaid: number[] = [];
    let settled = 0;
    let gsSettled = 0;
    for (let c = 0; c < campaigns; c++) {
      if (input.items === 0) {
        paid.push(0);
        gsPaid.push(0);
        continue;
      }
      // every candidate its own draws: the campaign pays until the last one settles
      let at = 0;
      let gsAt = 0;
      for (const ratio of input.costRatios) {
        const clusters = Array.from({ length: input.items }, () => {
          const u = rng.nextFloat();
          const d = u < (pi + delta) / 2 ? 1 : u < pi ? -1 : 0;
          return { weight: 1, delta: d, costIncumbentUsd: 1, costCandidateUsd: ratio ?? 0 };
        });
        const r = sequentialSettling(clusters, looks, {
          alpha: input.alphaAdjusted,
          marginPp: input.marginPp,
          minSavings: ratio === null ? -1 : input.minSavings,
        });
        at = Math.max(at, r.settledAt === null ? input.items : looks[r.settledAt]!);
        if (gs) {
          const g = groupSequentialSettling(
            clusters.map((x) => x.delta),
            gsLooks,
            gs.critical,
            maxItems,
            margin,
            // constant costs: the savings side is known exactly (met, or futile at the first look)
            ratio === null || 1 - ratio >= input.minSavings,
          );
          gsAt = Math.max(gsAt, g ?? input.items);
        }
      }
      if (at < input.items) settled++;
      paid.push(at);
      if (gsAt < input.items) gsSettled++;
      gsPaid.push(gsAt);
    }
    rows.push(summarise(scenario, deltaRaw, paid, settled));
    gsRows.push(summarise(scenario, deltaRaw, gsPaid, gsSettled));
  }
  return {
    rule: input.rule,
    worst_case_items: input.items,
    worst_case_usd: usd(input.items),
    fixed: { expected_items: input.items, expected_usd: usd(input.items) },
    sequential: { batch_items: input.batchItems, scenarios: rows },
    group_sequential: gs ? { batch_items: input.batchItems, planned_looks: gsLooks.length, scenarios: gsRows } : null,
    simulation: {
      basis: 'simulation',
      campaigns,
      seed,
      model: `every candidate at the scenario's quality gap; group_sequential looks use the Wald z of the running mean difference against the planned boundaries (the real rule inverts the score interval; on the same simulated items their expected paid items agree within 6%, sequential-plan-agree.test.ts); singleton items, paired difference in {-1, 0, +1} discordant with probability ${pi.toFixed(3)} (the power plan's prior sd ${input.sdDiff.toFixed(3)}, at least 4 × margin); constant costs at candidate/incumbent ratios ${input.costRatios.map((r) => (r === null ? 'unpriced (savings assumed met)' : r.toFixed(3))).join(', ')}; every arm priced at its worst case per item`,
    },
  };
}

/**
 * The paid items at which the group-sequential rule settles one simulated candidate, or null
 * when no planned look within the items settles it. Singleton items d_i ∈ [−1, 1]; at look n_k the
 * Wald z = (D + margin)/se (se = sample sd/√n, variance floored at 1/n) against the boundary c_k for pass and −c_k for
 * fail, then the futility rule of libs/evidence groupSequentialComparison (conditional power to
 * pass under D = 0 and to fail under the current trend both below GROUP_SEQUENTIAL_FUTILITY_POWER); `savingsMet` false settles futile at the first
 * look with enough clusters. Looks beyond d.length are not reached.
 */
export function groupSequentialSettling(
  d: readonly number[],
  looks: readonly number[],
  critical: readonly number[],
  maxItems: number,
  margin: number,
  savingsMet: boolean,
): number | null {
  let s1 = 0;
  let s2 = 0;
  let i = 0;
  const cK = critical.at(-1)!;
  for (let k = 0; k < looks.length; k++) {
    const n = looks[k]!;
    if (n > d.length) return null;
    for (; i < n; i++) {
      s1 += d[i]!;
      s2 += d[i]! * d[i]!;
    }
    if (n < MIN_ARM_OBSERVATIONS) continue;
    if (!savingsMet) return n;
    const mean = s1 / n;
    // variance floored at one unseen discordant pair among n, as the score interval's bound point does
    const sd = Math.sqrt(Math.max(1 / n, (s2 - n * mean * mean) / (n - 1)));
    const se = sd / Math.sqrt(n);
    const x = mean + margin;
    const z = se > 0 ? x / se : x > 0 ? Infinity : x < 0 ? -Infinity : 0;
    const c = critical[k]!;
    if (z >= c || z <= -c) return n;
    const t = n / maxItems;
    if (t < 1) {
      const drift = se > 0 ? (margin / se) * Math.sqrt(1 / t) : Infinity;
      const cpPass = conditionalPower({ z, t, drift, finalCritical: cK });
      const cpFail = conditionalPower({ z: -z, t, drift: -z / Math.sqrt(t), finalCritical: cK });
      if (cpPass < GROUP_SEQUENTIAL_FUTILITY_POWER && cpFail < GROUP_SEQUENTIAL_FUTILITY_POWER) return n;
    }
  }
  return null;
}
