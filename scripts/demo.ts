/**
 * `make demo`: a budget-capped shadow campaign from real requests to a verdict, on this machine.
 * Flags: --seed N (default 7), --gsm8k N (default 300), --chat N (default 60), --dup-every N
 * (default 10), --max-cost-usd X (default 5), --concurrency N (default 8), --out DIR (default
 * ./demo-out), --timeout-s N (default 240: how long the campaign may take on a loaded machine),
 * --otel (export traces; see scripts/lib/otel.ts). NATS_URL uses an existing NATS instead of a
 * private nats-server; the standard OTEL_* variables reach every role.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runDemo } from './lib/demo.js';
import { LOCAL_JAEGER_QUERY, demoTracing } from './lib/otel.js';
import { printJudgeByCallType, printSequential, printVerdictTable } from './lib/verdict-table.js';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '7' },
    gsm8k: { type: 'string', default: '300' },
    chat: { type: 'string', default: '60' },
    'dup-every': { type: 'string', default: '10' },
    'max-cost-usd': { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '8' },
    out: { type: 'string', default: 'demo-out' },
    'timeout-s': { type: 'string', default: '240' },
    otel: { type: 'boolean', default: false },
  },
});

const outDir = resolve(values.out);
mkdirSync(outDir, { recursive: true });
const started = Date.now();
console.log('Shadowplane demo: shadowing GSM8K and chat traffic from sim-large onto two cheaper tiers\n');
try {
  const tracing = await demoTracing(values.otel);
  if (tracing) console.log(`▶ tracing: every role exports to ${tracing.endpoint}\n`);
  const r = await runDemo({
    seed: Number(values.seed),
    gsm8k: Number(values.gsm8k),
    chat: Number(values.chat),
    dupEvery: Number(values['dup-every']),
    maxCostUsd: Number(values['max-cost-usd']),
    concurrency: Number(values.concurrency),
    outDir,
    timeoutMs: Number(values['timeout-s']) * 1000,
    ...(process.env.NATS_URL ? { natsUrl: process.env.NATS_URL } : {}),
  });
  console.log('');
  printVerdictTable(r.report, (l) => console.log(l));
  console.log('');
  printSequential(r.report, (l) => console.log(l));
  console.log(
    `campaign ${r.campaignId}: ${r.state}; spent $${r.spendUsd.toFixed(4)} of $${r.maxCostUsd.toFixed(2)} (${r.spendUsd <= r.maxCostUsd ? 'within' : 'OVER'} budget)`,
  );
  if (r.judgeSpendUsd !== null)
    console.log(
      `  arm spend $${(r.spendUsd - r.judgeSpendUsd).toFixed(4)}; judge spend $${r.judgeSpendUsd.toFixed(4)} (evaluation cost, not in any arm's cost)`,
    );
  const jd = (
    r.report as {
      judge?: {
        kappa: { value: number; lower: number; upper: number; n: number } | null;
        kappa_none_reason: string | null;
        scored: number;
        verdicts: number;
        null_scores: Record<string, number>;
      };
    }
  ).judge;
  if (jd)
    console.log(
      `  judge: ${jd.scored}/${jd.verdicts} verdicts scored (null: ${JSON.stringify(jd.null_scores)}); ${jd.kappa ? `kappa ${jd.kappa.value.toFixed(3)} [${jd.kappa.lower.toFixed(3)}, ${jd.kappa.upper.toFixed(3)}] on ${jd.kappa.n} items against the expectations` : `no kappa: ${jd.kappa_none_reason}`}`,
    );
  printJudgeByCallType(r.report, (l) => console.log(l));
  console.log(`report ${r.reportId}`);
  console.log(
    ['report.json', 'report.html', 'bundle.json', 'observations.jsonl', 'calls.csv', 'arms.csv', 'hosts.csv']
      .map((f) => `  ${join(values.out, f)}`)
      .join('\n'),
  );
  console.log(
    `bundle verification: ${r.verifyExit === 0 ? 'OK' : `FAILED (exit ${r.verifyExit})`}${r.verifyExit === 0 ? '' : `\n${r.verifyOutput}`}`,
  );
  const lc = r.lifecycle;
  console.log(
    `bench loop: froze ${Object.keys(lc.datasets).length} dataset(s) (re-freeze identical: ${lc.refreeze_identical}); frozen run ${lc.frozen_run.campaign_id} pinned as baseline; compare ${lc.compare.campaign_id} (${lc.compare.candidate}) gate exit ${lc.compare.gate_exit_code}`,
  );
  console.log(
    [
      'lifecycle.json',
      'openapi.json',
      'compare-bundle.json',
      'compare-junit.xml',
      ...Object.keys(lc.datasets).map((ct) => `dataset-card.${ct}.json`),
    ]
      .map((f) => `  ${join(values.out, f)}`)
      .join('\n'),
  );
  console.log(
    `requests replayed: ${r.requestsSent} (${r.requestsFailed} failed); done in ${((Date.now() - started) / 1000).toFixed(0)} s; all processes stopped`,
  );
  if (tracing)
    console.log(
      tracing.localJaeger
        ? `traces: ${LOCAL_JAEGER_QUERY}/search?service=shadowplane-duplicator (API: ${LOCAL_JAEGER_QUERY}/api/traces?service=shadowplane-duplicator)`
        : `traces exported to ${tracing.endpoint} (services shadowplane-duplicator, -verdict, -control)`,
    );
  writeFileSync(
    join(outDir, 'summary.json'),
    `${JSON.stringify({ campaign_id: r.campaignId, report_id: r.reportId, state: r.state, spend_usd: r.spendUsd, max_cost_usd: r.maxCostUsd, verify_exit: r.verifyExit }, null, 2)}\n`,
  );
  process.exitCode =
    r.verifyExit === 0 && r.spendUsd <= r.maxCostUsd && r.requestsFailed === 0 && lc.refreeze_identical ? 0 : 1;
} catch (e) {
  console.error(`demo failed: ${(e as Error).message}\n(logs of every process are in ${join(values.out, 'logs')})`);
  process.exitCode = 1;
}
