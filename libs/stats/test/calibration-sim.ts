/**
 * The simulation behind the calibration test (calibration.test.ts) and the calibration bench
 * (bench/calibration.ts): synthetic paired campaigns with a known true quality delta, folded by the
 * real pairedClusterBootstrap + nonInferiorityDecision.
 *
 * Data-generating process for one campaign with true delta δ (0–1 scale):
 * - k clusters (near-duplicate groups). Each cluster has m ~ U{1..maxClusterSize} items and each
 *   item a weight w ~ U{1..maxWeight} (exact-duplicate frequency), independent of outcomes.
 * - Cluster effect: δ_c = δ + s·ε_c with ε_c = ±1 equiprobable (some clusters favour the
 *   candidate, some the incumbent), so differences are correlated within a cluster.
 * - Binary quality per item, paired: (q_inc, q_cand) from the joint table
 *   P(1,0) = (r − δ_c)/2, P(0,1) = (r + δ_c)/2, P(1,1) = (1 − r)·pBoth, P(0,0) = (1 − r)·(1 − pBoth)
 *   (r = discordance). Concordant mass makes q_inc and q_cand strongly correlated (a real pair),
 *   and E[q_cand − q_inc | δ_c] = δ_c.
 * - Near duplicates: items after the first copy the first item's pair with probability `copyProb`,
 *   else draw fresh — more within-cluster correlation.
 * - Costs: incumbent x ~ 0.001·U(0.5, 1.5) USD, candidate 0.3·x·U(0.8, 1.2): savings ≈ 70%, far
 *   above minSavings 0.2, so the decision is driven by quality alone.
 * Because weights and sizes are independent of outcomes, E[D | weights] = δ exactly.
 *
 * The sd that makes SE(D) ≈ sd/√k (the sd_diff of the MDE formula) is the sd of the per-cluster
 * linearised contribution z_c = Σ_{i∈c} w_i(d_i − δ) / E[W_c], W_c = Σ_{i∈c} w_i (delta method for
 * the ratio D = ΣW_c·d̄_c / ΣW_c). {@link effectiveSdDiff} estimates it from 400,000 simulated clusters.
 */
import {
  createRng,
  nonInferiorityDecision,
  pairedClusterBootstrap,
  type Decision,
  type PairedItem,
} from '@shadowplane/stats';

/** Knobs of the data-generating process; see the module docstring. */
export interface SimDesign {
  clusters: number;
  marginPp: number;
  minSavings: number;
  clusterShift: number;
  discordance: number;
  pBoth: number;
  copyProb: number;
  maxClusterSize: number;
  maxWeight: number;
}

/** The design used by the calibration test: 200 clusters, margin 5 pp. */
export const DEFAULT_DESIGN: SimDesign = {
  clusters: 200,
  marginPp: 5,
  minSavings: 0.2,
  clusterShift: 0.1,
  discordance: 0.3,
  pBoth: 0.7,
  copyProb: 0.5,
  maxClusterSize: 4,
  maxWeight: 3,
};

type Rng = () => number;
const uniformInt = (rng: Rng, lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));

function drawPair(rng: Rng, d: SimDesign, deltaC: number): [number, number] {
  const r = d.discordance;
  const u = rng();
  const p10 = (r - deltaC) / 2;
  const p01 = (r + deltaC) / 2;
  if (u < p10) return [1, 0];
  if (u < p10 + p01) return [0, 1];
  return rng() < d.pBoth ? [1, 1] : [0, 0];
}

/** One cluster's items (cluster id `c`) under true delta δ. */
function simulateCluster(rng: Rng, d: SimDesign, delta: number, c: number, out: PairedItem[]): void {
  const deltaC = delta + (rng() < 0.5 ? -d.clusterShift : d.clusterShift);
  if (d.discordance < Math.abs(deltaC))
    throw new RangeError(`design: discordance ${d.discordance} < |δ_c| ${Math.abs(deltaC)}`);
  const m = uniformInt(rng, 1, d.maxClusterSize);
  let first: [number, number] | undefined;
  for (let i = 0; i < m; i++) {
    const pair: [number, number] = first !== undefined && rng() < d.copyProb ? first : drawPair(rng, d, deltaC);
    first ??= pair;
    const xi = 0.001 * (0.5 + rng());
    out.push({
      cluster: c,
      weight: uniformInt(rng, 1, d.maxWeight),
      qIncumbent: pair[0],
      qCandidate: pair[1],
      costIncumbentUsd: xi,
      costCandidateUsd: 0.3 * xi * (0.8 + 0.4 * rng()),
    });
  }
}

/** A simulated campaign: paired items over `d.clusters` clusters with true quality delta δ. */
export function simulateCampaign(d: SimDesign, delta: number, rng: Rng): PairedItem[] {
  const out: PairedItem[] = [];
  for (let c = 0; c < d.clusters; c++) simulateCluster(rng, d, delta, c, out);
  return out;
}

/**
 * sd of the linearised per-cluster contribution z_c = Σw(d − δ)/E[W_c] under the design at δ,
 * estimated from `n` simulated clusters (plain arithmetic here, not the code under test).
 */
export function effectiveSdDiff(d: SimDesign, delta: number, n = 400_000, seed = 424242): number {
  const rng = createRng(seed);
  let sumW = 0;
  let sumSq = 0;
  const buf: PairedItem[] = [];
  for (let c = 0; c < n; c++) {
    buf.length = 0;
    simulateCluster(rng, d, delta, c, buf);
    let w = 0;
    let z = 0;
    for (const it of buf) {
      w += it.weight;
      z += it.weight * (it.qCandidate - it.qIncumbent - delta);
    }
    sumW += w;
    sumSq += z * z;
  }
  const meanW = sumW / n;
  return Math.sqrt(sumSq / n) / meanW;
}

/** Decision counts over simulated campaigns. */
export interface ScenarioResult {
  campaigns: number;
  pass: number;
  fail: number;
  inconclusive: number;
  /** mean of the campaigns' point estimates of D (should be ≈ δ) */
  meanPoint: number;
}

/**
 * Runs `campaigns` simulated campaigns at true delta δ through pairedClusterBootstrap (B resamples,
 * level 1 − 2α so the lower bound is a one-sided α test) and nonInferiorityDecision.
 */
export function runScenario(o: {
  design: SimDesign;
  delta: number;
  campaigns: number;
  seed: number;
  resamples: number;
  alphaOneSided: number;
}): ScenarioResult {
  const rng = createRng(o.seed);
  const counts: Record<Decision, number> = { pass: 0, fail: 0, inconclusive: 0 };
  let sumPoint = 0;
  for (let i = 0; i < o.campaigns; i++) {
    const items = simulateCampaign(o.design, o.delta, rng);
    const b = pairedClusterBootstrap(items, {
      resamples: o.resamples,
      seed: o.seed * 1000 + i,
      level: 1 - 2 * o.alphaOneSided,
    });
    sumPoint += b.qualityDelta.point;
    counts[
      nonInferiorityDecision({
        qualityDelta: b.qualityDelta,
        costSavings: b.costSavings,
        marginPp: o.design.marginPp,
        minSavings: o.design.minSavings,
      }).decision
    ]++;
  }
  return { campaigns: o.campaigns, ...counts, meanPoint: sumPoint / o.campaigns };
}
