/**
 * The calibration table of the verdict statistics (docs/statistics.md): simulated campaigns with a
 * known true effect, from the seeded tier generator (libs/evidence/test/tier-sim.ts), folded by
 * the fold's own computeComparison and comparisonPowerPlan.
 *
 * Run: `npm run bench:calibration` (or `make bench-calibration`); `-- --write` replaces the table
 * between the calibration markers in docs/statistics.md.
 * Env knobs: CALIB_CAMPAIGNS (400 per cell), CALIB_RESAMPLES (2000, the service default),
 * CALIB_SEED (11), CALIB_TRUTH_CLUSTERS (200,000: population size for the true δ and sd).
 *
 * Cells: every generator regime × n ∈ {8, 12, 20, 40, 100, 400} clusters, plus 25 clusters in the
 * clustered regimes. Per cell two scenarios:
 * - null: true δ = −margin (5 pp) → type-I = pass rate (bound α_run1 + 2 MC sd), coverage of the
 *   decision interval (nominal 1 − 2α_run1, bound ± 2 MC sd);
 * - equal: true δ = 0 → pass rate, share of reports that said "powered" and their pass rate
 *   (bound ≥ 75%), share of reports whose stated MDE is below 0.9 × the true MDE (bound ≤ 10%).
 * The true MDE is the plan's formula (t quantiles) at the population's paired sd.
 */
import { writeDocSection } from './lib/doc-section.js';
import { cpus } from 'node:os';
import { intervalLevel } from '@shadowplane/stats';
import { REGIMES, mcSd, populationTruth, runCell, thetaForDelta } from '../libs/evidence/test/tier-sim.js';

const CAMPAIGNS = Number(process.env.CALIB_CAMPAIGNS ?? 400);
const RESAMPLES = Number(process.env.CALIB_RESAMPLES ?? 2000);
const SEED = Number(process.env.CALIB_SEED ?? 11);
const TRUTH = Number(process.env.CALIB_TRUTH_CLUSTERS ?? 200_000);
const MARGIN_PP = 5;
const ALPHA = 0.05;
const SIZES = [8, 12, 20, 25, 40, 100, 400];

const { alphaAdjusted, level } = intervalLevel({ alphaOneSided: ALPHA, candidates: 1, runIndex: 1 });
const pct = (x: number, d = 1): string => (100 * x).toFixed(d);

function main(): void {
  const started = performance.now();
  const lines: string[] = [];
  const head = `${CAMPAIGNS} campaigns per cell and scenario, B = ${RESAMPLES}, seed ${SEED}, margin ${MARGIN_PP} pp, α = ${ALPHA} one-sided, run 1 of K = 1 (α spent ${pct(alphaAdjusted, 2)}%, interval level ${pct(level)}%); node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'})`;
  lines.push(head, '');
  lines.push(
    '| regime | clusters | type-I % (bound) | coverage % (nominal ' +
      pct(level) +
      ') | equal: pass % | powered % | powered → pass % | MDE < 0.9·true % | stated / true MDE pp |',
  );
  lines.push('|---|---|---|---|---|---|---|---|---|');
  let failures = 0;
  let cell = 0;
  for (const r of REGIMES) {
    const clustered = r.maxClusterSize > 1;
    const thNull = thetaForDelta(r, -MARGIN_PP / 100, Math.min(TRUTH, 60_000));
    const thEq = thetaForDelta(r, 0, Math.min(TRUTH, 60_000));
    const tNull = populationTruth(r, thNull, TRUTH);
    const tEq = populationTruth(r, thEq, TRUTH);
    for (const k of SIZES) {
      if (k === 25 && !clustered) continue;
      cell++;
      const a = runCell({
        regime: r,
        thetaCandidate: thNull,
        trueDelta: tNull.delta,
        trueSdU: tNull.sdU,
        clusters: k,
        campaigns: CAMPAIGNS,
        seed: SEED * 1000 + cell,
        resamples: RESAMPLES,
        alpha: ALPHA,
        marginPp: MARGIN_PP,
      });
      const b = runCell({
        regime: r,
        thetaCandidate: thEq,
        trueDelta: tEq.delta,
        trueSdU: tEq.sdU,
        clusters: k,
        campaigns: CAMPAIGNS,
        seed: SEED * 1000 + 500 + cell,
        resamples: RESAMPLES,
        alpha: ALPHA,
        marginPp: MARGIN_PP,
      });
      const typeI = a.pass / CAMPAIGNS;
      const bound = alphaAdjusted + 2 * mcSd(alphaAdjusted, CAMPAIGNS);
      const cov = a.covered / CAMPAIGNS;
      const covSd = mcSd(level, CAMPAIGNS);
      const under = b.mdeUnder10 / CAMPAIGNS;
      const poweredPass = b.powered > 0 ? b.poweredPass / b.powered : null;
      const okI = typeI <= bound;
      const okCov = cov >= level - 2 * covSd;
      const okMde = under <= 0.1;
      const okPow = poweredPass === null || poweredPass >= 0.75;
      if (!(okI && okCov && okMde && okPow)) failures++;
      const mark = (ok: boolean, s: string): string => (ok ? s : `**${s}** ✗`);
      lines.push(
        `| ${r.name} | ${k} | ${mark(okI, `${pct(typeI, 2)} ± ${pct(mcSd(Math.max(typeI, 1e-9), CAMPAIGNS), 2)}`)} (≤ ${pct(bound, 2)}) | ${mark(okCov, `${pct(cov)}`)}${cov > level + 2 * covSd ? ' (conservative)' : ''} | ${pct(b.pass / CAMPAIGNS)} | ${pct(b.powered / CAMPAIGNS)} | ${poweredPass === null ? '—' : mark(okPow, pct(poweredPass))} | ${mark(okMde, pct(under))} | ${b.meanStatedMdePp.toFixed(1)} / ${b.trueMdePp.toFixed(1)} |`,
      );
      console.error(`  ${r.name} k=${k} done (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
  }
  lines.push(
    '',
    `Cells outside a bound: ${failures}. Wall time ${((performance.now() - started) / 1000).toFixed(0)} s.`,
  );
  const table = lines.join('\n');
  console.log(table);
  if (process.argv.includes('--write')) writeDocSection('statistics.md', 'calibration', table);
}

main();
