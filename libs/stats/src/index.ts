/**
 * @shadowplane/stats — the verdict statistics: normal quantiles, binomial intervals, multiplicity
 * control, power planning, seeded RNG, type-7 quantiles, the paired cluster bootstrap and the
 * non-inferiority decision. All pure and deterministic, no I/O. Source of the rules: docs/architecture.md
 * "Verdict statistics"; reference values: test/vectors/stats.json.
 */
export { normPpf, normCdf } from './normal.js';
export { wilsonInterval, twoProportionZ } from './proportions.js';
export { holm, bonferroniAlpha, alphaSpent, intervalLevel } from './multiplicity.js';
export { mdePpPaired, CONSERVATIVE_SD_DIFF, powerPlan, powerPlanFromPairs, sdOfDifferences } from './power.js';
export type { PowerPlan, PairedPowerPlan, PairedSdSource } from './power.js';
export { quantileType7 } from './quantile.js';
export { createRng, createNormalRng, Xoshiro128ss, MAX_INT_RANGE } from './rng.js';
export { pairedClusterBootstrap } from './bootstrap.js';
export { pairedScoreIntervals, pairedDifferenceSpread } from './score-interval.js';
export type { PairedColumns, PairedInput } from './cluster-sums.js';
export type { ScoreInterval, PairedScoreIntervals } from './score-interval.js';
export { studentTCdf, studentTPpf, studentTUpperPpf, chiSquarePpf } from './distributions.js';
export type { PairedItem, Interval, BootstrapResult, CostSavingsNullReason } from './bootstrap.js';
export { cohensKappa } from './kappa.js';
export type { KappaResult } from './kappa.js';
export { nonInferiorityDecision, DECISION_REASONS } from './decision.js';
export type { Decision, DecisionReason } from './decision.js';
export { sequentialLooks, sequentialSettling, SEQUENTIAL_METHOD } from './confidence-sequence.js';
export type {
  SequentialCluster,
  SequentialDecision,
  SequentialLook,
  SequentialSettings,
} from './confidence-sequence.js';
export {
  obrienFlemingSpending,
  spendingBoundaries,
  conditionalPower,
  GROUP_SEQUENTIAL_MAX_LOOKS,
  GROUP_SEQUENTIAL_FUTILITY_POWER,
  GROUP_SEQUENTIAL_METHOD,
} from './group-sequential.js';
export type { GroupSequentialBoundaries } from './group-sequential.js';
