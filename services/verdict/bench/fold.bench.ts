/**
 * Fold benchmark (run on purpose: `npx tsx services/verdict/bench/fold.bench.ts [items]`):
 * foldReport over N items × 3 arms (incumbent + 2 candidates), B = 2000 resamples per candidate,
 * wall time and peak RSS, next to the bare pairedClusterBootstrap on the same rows as a baseline.
 * Prints one table; repeat runs interleaved (fold, bootstrap, fold, bootstrap, ...).
 */
import { performance } from 'node:perf_hooks';
import { pairedClusterBootstrap } from '@shadowplane/stats';
import { foldReport } from '@shadowplane/evidence';
import { synthCampaign, synthSpec } from '@shadowplane/testkit';

const N = Number(process.argv[2] ?? 100_000);
const REPEATS = Number(process.argv[3] ?? 3);
const CID = 'cmp_benchbenchbench01';
const t0 = performance.now();
const msgs = synthCampaign(CID, N, 0.9, { a: 'same', b: 0.8 });
const genMs = performance.now() - t0;
const spec = synthSpec(['a', 'b']);
const rows = msgs
  .filter((m) => m.schema === 'shadow.observation/v1' && m.arm_id === 'inc')
  .map((m, i) => ({
    cluster: i,
    weight: 1,
    qIncumbent: 1,
    qCandidate: i % 10 ? 1 : 0,
    costIncumbentUsd: 0.002,
    costCandidateUsd: 0.0004,
  }));
const fold: number[] = [];
const boot: number[] = [];
let rssPeak = process.memoryUsage().rss;
for (let r = 0; r < REPEATS; r++) {
  let t = performance.now();
  const rep = foldReport({
    campaign: { campaign_id: CID, spec, run_index: 1, state: 'completed' },
    messages: msgs,
    provisional: false,
  });
  fold.push(performance.now() - t);
  rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  if (r === 0)
    console.log(
      `report ${rep.reportId.slice(0, 16)} decisions ${rep.report.call_types![0]!.comparisons.map((c) => `${c.candidate_arm_id}:${c.decision}`).join(' ')}`,
    );
  t = performance.now();
  pairedClusterBootstrap(rows, { resamples: 2000, seed: 1, level: 0.94 });
  pairedClusterBootstrap(rows, { resamples: 2000, seed: 1, level: 0.94 });
  boot.push(performance.now() - t);
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `items ${N} × 3 arms (${msgs.length} observations), generate ${genMs.toFixed(0)} ms, node ${process.version}`,
);
console.log('| what | median ms | runs (ms) | ratio vs 2× bootstrap |');
console.log('|---|---|---|---|');
console.log(
  `| 2× pairedClusterBootstrap B=2000 (baseline) | ${med(boot).toFixed(0)} | ${boot.map((x) => x.toFixed(0)).join(', ')} | 1.00 |`,
);
console.log(
  `| foldReport (score, pair, cluster, 2 bootstraps, bundle) | ${med(fold).toFixed(0)} | ${fold.map((x) => x.toFixed(0)).join(', ')} | ${(med(fold) / med(boot)).toFixed(2)} |`,
);
console.log(`peak RSS ${(rssPeak / 1048576).toFixed(0)} MiB`);
