/**
 * A seeded generator of paired campaigns between two model tiers, for the calibration suite
 * (calibration.test.ts beside this file, reduced) and `bench/calibration.ts` (the full table in
 * docs/statistics.md). Plain arithmetic for the truth; the code under test is the fold's own
 * computeComparison (intervals, decision, state) and comparisonPowerPlan.
 *
 * Data-generating process (one item population, two tiers):
 * - clusters of near-duplicate items: size m ~ U{1..maxClusterSize}, weight w ~ U{1..maxWeight}
 *   per item (exact-duplicate frequency), independent of outcomes;
 * - item difficulty b_i = b_c + ε_i, b_c ~ N(0, σ_b) shared by the cluster, ε_i ~ N(0, σ_jitter):
 *   shared across tiers, so the tiers' correctness is correlated through difficulty;
 * - a model-specific item effect e_{t,i} ~ N(0, σ_e) per tier and item (what one model finds easy
 *   another may not), shared by the near-duplicates of a cluster with weight `clusterEffectShare`;
 * - per-call noise at temperature τ: latent x = (θ_t − b_i + e_{t,i})/τ' with τ' = max(τ, 0.05);
 *   binary quality q ~ Bernoulli(logistic(x)); continuous quality q = logistic(x + N(0, 1))
 *   (a graded score). τ → 0 is near-deterministic (the same answer every call), τ large noisy.
 * The true delta δ(θ_c) = E_w[q_c − q_i] is computed on a large population (`truthItems`), and
 * θ_c is found by bisection so that δ hits its target (e.g. −margin for the type-I cell).
 * The true per-cluster paired sd (for the true MDE) is estimated on the same population.
 */
import { createRng, studentTPpf } from '@shadowplane/stats';
import { comparisonPowerPlan, computeComparison, type PairRow } from '../src/compare.js';
import type { PairedItem } from '@shadowplane/stats';

/** One generator regime. */
export interface TierRegime {
  name: string;
  quality: 'binary' | 'continuous';
  /** temperature τ of the per-call noise (0.05 near-deterministic … 3 noisy) */
  temperature: number;
  maxClusterSize: number;
  maxWeight: number;
  sigmaDifficulty: number;
  sigmaJitter: number;
  sigmaItemEffect: number;
  clusterEffectShare: number;
  /** incumbent ability θ_i */
  thetaIncumbent: number;
}

/** The regimes of the calibration table: noise from near-deterministic to noisy, binary and graded, singletons and weighted clusters. */
export const REGIMES: readonly TierRegime[] = [
  {
    name: 'binary, near-deterministic, singletons',
    quality: 'binary',
    temperature: 0.05,
    maxClusterSize: 1,
    maxWeight: 1,
    sigmaDifficulty: 1.5,
    sigmaJitter: 0,
    sigmaItemEffect: 0.6,
    clusterEffectShare: 0,
    thetaIncumbent: 1,
  },
  {
    name: 'binary, moderate noise, singletons',
    quality: 'binary',
    temperature: 1,
    maxClusterSize: 1,
    maxWeight: 1,
    sigmaDifficulty: 1.5,
    sigmaJitter: 0,
    sigmaItemEffect: 0.6,
    clusterEffectShare: 0,
    thetaIncumbent: 1,
  },
  {
    name: 'binary, noisy, weighted clusters',
    quality: 'binary',
    temperature: 2.5,
    maxClusterSize: 4,
    maxWeight: 3,
    sigmaDifficulty: 1.5,
    sigmaJitter: 0.3,
    sigmaItemEffect: 0.6,
    clusterEffectShare: 0.7,
    thetaIncumbent: 1,
  },
  {
    name: 'binary, near-deterministic, weighted clusters',
    quality: 'binary',
    temperature: 0.05,
    maxClusterSize: 4,
    maxWeight: 3,
    sigmaDifficulty: 1.5,
    sigmaJitter: 0.3,
    sigmaItemEffect: 0.6,
    clusterEffectShare: 0.7,
    thetaIncumbent: 1,
  },
  {
    name: 'graded, moderate noise, weighted clusters',
    quality: 'continuous',
    temperature: 1,
    maxClusterSize: 4,
    maxWeight: 3,
    sigmaDifficulty: 1.5,
    sigmaJitter: 0.3,
    sigmaItemEffect: 0.6,
    clusterEffectShare: 0.7,
    thetaIncumbent: 1,
  },
  {
    name: 'graded, near-deterministic, singletons',
    quality: 'continuous',
    temperature: 0.05,
    maxClusterSize: 1,
    maxWeight: 1,
    sigmaDifficulty: 1.5,
    sigmaJitter: 0,
    sigmaItemEffect: 0.6,
    clusterEffectShare: 0,
    thetaIncumbent: 1,
  },
];

type Rng = () => number;

function normal(rng: Rng): number {
  // Box–Muller (one of the pair; simplicity over speed)
  const u = Math.max(rng(), 1e-300);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng());
}
const logistic = (x: number): number => 1 / (1 + Math.exp(-x));

function quality(rng: Rng, r: TierRegime, latent: number): number {
  const x = latent / Math.max(r.temperature, 0.05);
  if (r.quality === 'binary') return rng() < logistic(x) ? 1 : 0;
  return logistic(x + normal(rng));
}

/**
 * One campaign of `clusters` clusters at candidate ability `thetaCandidate` (incumbent
 * r.thetaIncumbent); costs: incumbent 0.001·U(0.5, 1.5), candidate 0.3× that ·U(0.8, 1.2).
 */
export function simulateTierCampaign(r: TierRegime, thetaCandidate: number, clusters: number, rng: Rng): PairedItem[] {
  const out: PairedItem[] = [];
  for (let c = 0; c < clusters; c++) {
    const bc = r.sigmaDifficulty * normal(rng);
    const eci = r.sigmaItemEffect * normal(rng);
    const ecc = r.sigmaItemEffect * normal(rng);
    const m = 1 + Math.floor(rng() * r.maxClusterSize);
    const s = r.clusterEffectShare;
    for (let j = 0; j < m; j++) {
      const b = bc + r.sigmaJitter * normal(rng);
      const ei = Math.sqrt(s) * eci + Math.sqrt(1 - s) * r.sigmaItemEffect * normal(rng);
      const ec = Math.sqrt(s) * ecc + Math.sqrt(1 - s) * r.sigmaItemEffect * normal(rng);
      const xi = 0.001 * (0.5 + rng());
      out.push({
        cluster: c,
        weight: 1 + Math.floor(rng() * r.maxWeight),
        qIncumbent: quality(rng, r, r.thetaIncumbent - b + ei),
        qCandidate: quality(rng, r, thetaCandidate - b + ec),
        costIncumbentUsd: xi,
        costCandidateUsd: 0.3 * xi * (0.8 + 0.4 * rng()),
      });
    }
  }
  return out;
}

/**
 * Population truth at candidate ability θ_c: δ = Σw(q_c − q_i)/Σw and the sd of the per-cluster
 * linearised difference u_c = (A_c − δ·W_c)/E[W_c] over `clusters` simulated clusters (same seed
 * for every θ_c: common random numbers, so δ(θ_c) is smooth for bisection).
 */
export function populationTruth(
  r: TierRegime,
  thetaCandidate: number,
  clusters = 60_000,
  seed = 99,
): { delta: number; sdU: number } {
  const items = simulateTierCampaign(r, thetaCandidate, clusters, createRng(seed));
  const W = new Float64Array(clusters);
  const A = new Float64Array(clusters);
  for (const it of items) {
    const c = it.cluster as number;
    W[c]! += it.weight;
    A[c]! += it.weight * (it.qCandidate - it.qIncumbent);
  }
  let sw = 0;
  let sa = 0;
  for (let c = 0; c < clusters; c++) {
    sw += W[c]!;
    sa += A[c]!;
  }
  const delta = sa / sw;
  const wbar = sw / clusters;
  let v = 0;
  for (let c = 0; c < clusters; c++) v += ((A[c]! - delta * W[c]!) / wbar) ** 2;
  return { delta, sdU: Math.sqrt(v / (clusters - 1)) };
}

/** Candidate ability with population δ = target (bisection on θ_c ∈ [θ_i − 4, θ_i + 4]). */
export function thetaForDelta(r: TierRegime, target: number, clusters = 60_000): number {
  let lo = r.thetaIncumbent - 4;
  let hi = r.thetaIncumbent + 4;
  for (let i = 0; i < 40; i++) {
    const mid = 0.5 * (lo + hi);
    if (populationTruth(r, mid, clusters).delta < target) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

/** Tallies of one calibration cell (campaigns at one regime, size and true δ). */
export interface CellResult {
  campaigns: number;
  pass: number;
  beat: number;
  fail: number;
  /** campaigns whose decision interval held the true δ */
  covered: number;
  /** reports that said "powered" at the margin, and how many of those passed */
  powered: number;
  poweredPass: number;
  /** reports whose stated MDE was below 0.9 × the true MDE */
  mdeUnder10: number;
  /** the true MDE (pp): t-quantile formula at the population's paired sd */
  trueMdePp: number;
  meanStatedMdePp: number;
}

/**
 * Runs `campaigns` campaigns of `clusters` clusters at candidate ability θ_c through the fold's
 * computeComparison (K = 1, run 1 unless given: α spent 6/π²·α) and comparisonPowerPlan.
 */
export function runCell(o: {
  regime: TierRegime;
  thetaCandidate: number;
  trueDelta: number;
  trueSdU: number;
  clusters: number;
  campaigns: number;
  seed: number;
  resamples: number;
  alpha: number;
  marginPp: number;
  runIndex?: number;
}): CellResult {
  const rng = createRng(o.seed);
  const settings = {
    resamples: o.resamples,
    seed: 1,
    alpha: o.alpha,
    candidates_k: 1,
    run_index: o.runIndex ?? 1,
    margin_pp: o.marginPp,
    min_savings: 0.2,
    hard_gate_failures: 0,
    cost_ceiling_breaches: 0,
  };
  const res: CellResult = {
    campaigns: o.campaigns,
    pass: 0,
    beat: 0,
    fail: 0,
    covered: 0,
    powered: 0,
    poweredPass: 0,
    mdeUnder10: 0,
    trueMdePp: 0,
    meanStatedMdePp: 0,
  };
  let alphaAdj = 0;
  let sumMde = 0;
  for (let i = 0; i < o.campaigns; i++) {
    const items = simulateTierCampaign(o.regime, o.thetaCandidate, o.clusters, rng);
    const rows: PairRow[] = items.map((it, j) => ({
      item_hash: String(j).padStart(8, '0'),
      cluster: String(it.cluster).padStart(8, '0'),
      simhash: '0000000000000000',
      weight: it.weight,
      q_inc: it.qIncumbent,
      q_cand: it.qCandidate,
      cost_inc_usd: it.costIncumbentUsd,
      cost_cand_usd: it.costCandidateUsd,
      obs_inc: '',
      obs_cand: '',
    }));
    const r = computeComparison(rows, { ...settings, seed: o.seed * 1000 + i });
    alphaAdj = r.alpha_one_sided_adjusted;
    if (r.decision === 'pass') res.pass++;
    if (r.decision === 'fail') res.fail++;
    if (r.state === 'BEAT') res.beat++;
    if (r.quality_delta.lower <= o.trueDelta && o.trueDelta <= r.quality_delta.upper) res.covered++;
    const plan = comparisonPowerPlan(rows, {
      clusters: r.clusters,
      alpha_one_sided: alphaAdj,
      margin_pp: o.marginPp,
      noise_floor: { pairs: 0, sd: null },
    });
    if (plan.powered) {
      res.powered++;
      if (r.decision === 'pass') res.poweredPass++;
    }
    const k = r.clusters;
    const trueMde = (100 * (studentTPpf(1 - alphaAdj, k - 1) + studentTPpf(0.8, k - 1)) * o.trueSdU) / Math.sqrt(k);
    res.trueMdePp = trueMde;
    if (plan.mde_pp !== null && plan.mde_pp < 0.9 * trueMde) res.mdeUnder10++;
    sumMde += plan.mde_pp ?? 0;
  }
  res.meanStatedMdePp = sumMde / o.campaigns;
  return res;
}

/** Binomial Monte-Carlo sd of a rate p over n campaigns. */
export const mcSd = (p: number, n: number): number => Math.sqrt((p * (1 - p)) / n);
