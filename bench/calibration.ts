/**
 * Calibration of the verdict rule by simulation, at a larger scale and over more designs than the
 * vitest check (libs/stats/test/calibration.test.ts, whose docstring explains the simulation).
 *
 * Run: `make bench-calibration` or `npx tsx bench/calibration.ts`.
 * Env knobs: CALIB_CAMPAIGNS (1000 per scenario), CALIB_RESAMPLES (2000), CALIB_SEED (7).
 *
 * Rows: for each design, the null (true δ = −margin: pass rate should be ≤ α) and the alternative
 * at the MDE (true δ = −margin + MDE, MDE from mdePpPaired at the design's own effective sd:
 * pass rate should be ≈ the planned 80%). Also the same null folded with a *naive* item-level
 * bootstrap (every item its own cluster), to show what ignoring near-duplicate clusters costs.
 * The ± column is the binomial 3-sigma Monte Carlo band around the nominal rate.
 */
import { intervalLevel, mdePpPaired, nonInferiorityDecision, pairedClusterBootstrap, createRng, type PairedItem } from '@shadowplane/stats';
import { DEFAULT_DESIGN, effectiveSdDiff, simulateCampaign, type SimDesign } from '../libs/stats/test/calibration-sim.js';

const CAMPAIGNS = Number(process.env.CALIB_CAMPAIGNS ?? 1000);
const RESAMPLES = Number(process.env.CALIB_RESAMPLES ?? 2000);
const SEED = Number(process.env.CALIB_SEED ?? 7);

interface Row { design: string; scenario: string; 'δ pp': string; 'nominal pass': string; 'pass %': string; '±3σ': string; 'fail %': string; 'inconcl. %': string; 'mean D pp': string }

function run(design: SimDesign, delta: number, alphaOneSided: number, seed: number, itemLevel: boolean): { pass: number; fail: number; inconclusive: number; meanD: number } {
  const rng = createRng(seed);
  const c = { pass: 0, fail: 0, inconclusive: 0 };
  let sumD = 0;
  for (let i = 0; i < CAMPAIGNS; i++) {
    let items: PairedItem[] = simulateCampaign(design, delta, rng);
    if (itemLevel) items = items.map((it, j) => ({ ...it, cluster: j }));
    const b = pairedClusterBootstrap(items, { resamples: RESAMPLES, seed: seed * 100_000 + i, level: 1 - 2 * alphaOneSided });
    sumD += b.qualityDelta.point;
    c[nonInferiorityDecision({ qualityDelta: b.qualityDelta, costSavings: b.costSavings, marginPp: design.marginPp, minSavings: design.minSavings }).decision]++;
  }
  return { ...c, meanD: sumD / CAMPAIGNS };
}

const pct = (x: number): string => (100 * x).toFixed(1);

function main(): void {
  const designs: { name: string; d: SimDesign; alpha: number }[] = [
    { name: 'default (200 clusters, α .05)', d: DEFAULT_DESIGN, alpha: 0.05 },
    { name: '60 clusters, α .05', d: { ...DEFAULT_DESIGN, clusters: 60 }, alpha: 0.05 },
    { name: '600 clusters, margin 3pp', d: { ...DEFAULT_DESIGN, clusters: 600, marginPp: 3 }, alpha: 0.05 },
    { name: 'unclustered singletons, α .05', d: { ...DEFAULT_DESIGN, maxClusterSize: 1, clusterShift: 0, copyProb: 0 }, alpha: 0.05 },
    // K = 2 candidates, run 1 of the comparison: α/K then α-spending (DESIGN.md).
    { name: '200 clusters, K=2, run 1 (α-spent)', d: DEFAULT_DESIGN, alpha: intervalLevel({ alphaOneSided: 0.05, candidates: 2, runIndex: 1 }).alphaAdjusted },
  ];
  const rows: Row[] = [];
  const started = performance.now();
  console.log(`calibration: ${CAMPAIGNS} campaigns per row, B = ${RESAMPLES}, seed ${SEED}, node ${process.version}`);
  designs.forEach(({ name, d, alpha }, di) => {
    const margin = d.marginPp / 100;
    let sd = effectiveSdDiff(d, -margin);
    let mde = mdePpPaired({ sdDiff: sd, clusters: d.clusters, alphaOneSided: alpha, power: 0.8 });
    sd = effectiveSdDiff(d, -margin + mde / 100);
    mde = mdePpPaired({ sdDiff: sd, clusters: d.clusters, alphaOneSided: alpha, power: 0.8 });
    const band = (p: number): string => `${pct(3 * Math.sqrt((p * (1 - p)) / CAMPAIGNS))}`;
    const scen: [string, number, number, boolean][] = [
      ['null δ = −margin', -margin, alpha, false],
      [`at MDE (${mde.toFixed(2)}pp, sd ${sd.toFixed(3)})`, -margin + mde / 100, 0.8, false],
    ];
    if (di === 0) scen.push(['null, naive item-level bootstrap', -margin, alpha, true]);
    scen.forEach(([label, delta, nominal, itemLevel], si) => {
      const r = run(d, delta, alpha, SEED + 10 * di + si, itemLevel);
      rows.push({ design: name, scenario: label, 'δ pp': (100 * delta).toFixed(2), 'nominal pass': `${nominal < 0.5 ? '≤' : '≈'}${pct(nominal)}%`, 'pass %': pct(r.pass / CAMPAIGNS), '±3σ': band(nominal), 'fail %': pct(r.fail / CAMPAIGNS), 'inconcl. %': pct(r.inconclusive / CAMPAIGNS), 'mean D pp': (100 * r.meanD).toFixed(2) });
      console.log(`  done: ${name} / ${label} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    });
  });
  console.table(rows);
}

main();
