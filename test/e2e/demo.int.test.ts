import { mkdirSync, mkdtempSync, existsSync, readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDemo, type DemoResult } from '../../scripts/lib/demo.js';
import { printJudgeByCallType } from '../../scripts/lib/verdict-table.js';

/**
 * The demo's flow on a smaller slice, as part of `make test`: every role as a real process, real
 * GSM8K questions through the sidecar with the official openai client, a verdict at the end.
 * Ground truth comes from provider-sim's configured tiers: sim-small answers 55% of GSM8K
 * correctly against sim-large's 92%, far beyond the 5 pp margin, so it must fail; sim-medium (96%
 * in the demo) is within the margin, so it must pass or be inconclusive — never fail. The demo's judge (weight
 * 0.5 beside the expectations) dilutes the measured gap, and the small-n intervals are honest, so
 * the slice is 80 questions: enough that a −37 pp tier is shown to fail.
 */
describe('end to end: the demo flow on a small slice', () => {
  const runs: DemoResult[] = [];
  const run = async () => {
    const out = mkdtempSync(join(tmpdir(), 'shadowplane-e2e-'));
    const r = await runDemo({
      seed: 11,
      gsm8k: 80,
      chat: 12,
      dupEvery: 6,
      maxCostUsd: 2,
      concurrency: 6,
      outDir: out,
      say: () => undefined,
      timeoutMs: 300_000,
      // fixed-n, so the two runs can be compared byte for byte: a sequential report depends on the
      // order pairs arrived in, which differs between runs (sequential stopping has its own tests)
      stopping: 'fixed',
    });
    runs.push(r);
    return { r, out };
  };

  it('runs a budget-capped campaign from replayed requests to a verified verdict that matches the sim ground truth', async () => {
    const { r, out } = await run();
    expect(r.requestsFailed).toBe(0);
    expect(['completed', 'stopped', 'decided']).toContain(r.state);
    expect(r.spendUsd).toBeGreaterThan(0);
    expect(r.spendUsd).toBeLessThanOrEqual(r.maxCostUsd);
    expect(r.verifyExit, r.verifyOutput).toBe(0);
    for (const f of ['report.json', 'run-record.json', 'report.html', 'bundle.json'])
      expect(existsSync(join(out, f))).toBe(true);
    // the bench loop after the live campaign: freeze twice (same hashes), frozen run, baseline, gated compare
    const lc = r.lifecycle;
    expect(lc.refreeze_identical).toBe(true);
    expect(Object.keys(lc.datasets).sort()).toEqual(['chat', 'gsm8k']);
    expect(lc.frozen_run.dataset_hash).toBe(lc.datasets.gsm8k);
    expect(lc.baseline).toMatchObject({ suite: 'demo', campaign_id: lc.frozen_run.campaign_id, arm_id: 'large' });
    expect([0, 2]).toContain(lc.compare.gate_exit_code);
    for (const f of ['lifecycle.json', 'openapi.json', 'compare-bundle.json', 'compare-junit.xml'])
      expect(existsSync(join(out, f))).toBe(true);
    for (const ct of Object.keys(lc.datasets))
      expect(JSON.parse(readFileSync(join(out, `dataset-card.${ct}.json`), 'utf8')).dataset_hash).toBe(lc.datasets[ct]);
    expect(JSON.parse(readFileSync(join(out, 'openapi.json'), 'utf8')).paths).toHaveProperty([
      '/v1/suites/{suite}/baseline',
    ]);
    // the report is reproducible (no campaign id, state, window or latencies inside); the run
    // record holds those and points at the report
    expect(r.report).not.toHaveProperty('campaign_id');
    expect(r.runRecord).toMatchObject({
      schema: 'shadow.run_record/v1',
      report_id: r.reportId,
      campaign_id: r.campaignId,
      campaign_state: r.state,
      run_record_id: r.runRecordId,
    });
    expect(JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')).report_id).toBe(r.reportId);
    const report = r.report as any;
    const gsm = report.call_types.find((c: any) => c.call_type === 'gsm8k');
    const small = gsm.comparisons.find((c: any) => c.candidate_arm_id === 'small');
    const medium = gsm.comparisons.find((c: any) => c.candidate_arm_id === 'medium');
    expect(small.decision).toBe('fail');
    expect(['pass', 'inconclusive']).toContain(medium.decision);
    if (medium.decision === 'inconclusive') expect(medium.power_plan?.mde_pp).toBeGreaterThan(0);
    // chat prompts carry no reference answers: only the judge scores them, so a verdict there is trust
    // class C and carries the judge's kappa (measured on the GSM8K items against the expectations)
    const chat = report.call_types.find((c: any) => c.call_type === 'chat');
    for (const c of chat.comparisons) {
      if (c.state === 'CANNOT_MEASURE') expect(c.cannot_measure.reason).toMatch(/insufficient|below_min_n/);
      // from the composite weights: every chat pair is scored by the judge alone (share 1)
      expect(c.trust_class).toBe('C');
      expect(c.judge_weight_share).toBe(1);
    }
    expect(report.judge?.kappa?.n).toBeGreaterThan(0);
    // chat has no kappa of its own (nothing programmatic to compare with), and says so
    expect(chat.judge.kappa).toBeNull();
    expect(chat.judge.kappa_none_reason).toMatch(/programmatic/);
    // the demo's judge lines: chat's trust class C with the kappa it rests on; judge spend apart from the arms
    const lines: string[] = [];
    printJudgeByCallType(report, (l) => lines.push(l));
    const chatLine = lines.find((l) => l.includes('judge on chat:'));
    expect(chatLine).toMatch(/trust class medium C \(judge weight share 1\.00\), small C/);
    expect(chatLine).toMatch(/kappa \d\.\d{3} \[/);
    expect(r.judgeSpendUsd).toBeGreaterThan(0);
    expect(r.judgeSpendUsd!).toBeLessThan(r.spendUsd);
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('<svg');
    // the ledger tables beside the report: one calls.csv row per observation in the export
    const obsLines = readFileSync(join(out, 'observations.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"shadow.observation/v1"')).length;
    expect(readFileSync(join(out, 'calls.csv'), 'utf8').trim().split('\n').length - 1).toBe(obsLines);
    expect(readFileSync(join(out, 'arms.csv'), 'utf8').split('\n')[0]).toMatch(
      /^arm_id,role,route,calls,ok,never_completed/,
    );
    // the demo's HTML report in Debian's Chromium: the header figures are the report JSON's and the run record's
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      await page.goto(`file://${join(out, 'report.html')}`);
      const artifacts = new URL('../../test-artifacts/', import.meta.url);
      mkdirSync(artifacts, { recursive: true });
      await page.screenshot({ path: new URL('demo-report.png', artifacts).pathname, fullPage: true });
      const value = (f: string) => page.locator(`dd[data-field="${f}"]`).getAttribute('data-value');
      expect(await value('campaign')).toBe(r.campaignId);
      expect(Number(await value('max_cost_usd'))).toBe(report.spec.max_cost_usd);
      expect(Number(await value('margin_pp'))).toBe(report.spec.margins.noninferiority_pp);
      expect(Number(await value('min_savings'))).toBe(report.spec.margins.min_savings);
      expect(Number(await value('alpha'))).toBe(report.spec.alpha);
      const spend = (r.runRecord as { spend: { arms_micro_usd: number } }).spend;
      expect(Number(await value('spend_arms_usd'))).toBeCloseTo(spend.arms_micro_usd / 1e6, 9);
      // what the ledger charged the calls in this report cannot exceed what the budget ledger settled
      expect(spend.arms_micro_usd / 1e6).toBeLessThanOrEqual(r.spendUsd + 1e-6);
      expect(await page.locator('code.report-id').textContent()).toBe(r.reportId);
      expect(await page.locator('svg.frontier-chart').count()).toBeGreaterThanOrEqual(1);
      expect(await page.locator('dl.glossary dt').count()).toBeGreaterThan(10);
    } finally {
      await browser.close();
    }
    // nothing the demo started is left running
    expect(r.pids).toEqual([]);
  }, 600_000);

  it('a second run with the same seed gives the same report id, byte for byte, and its own run record', async () => {
    if (runs.length === 0) await run();
    const { r, out } = await run();
    const first = runs[0]!;
    expect(r.campaignId).not.toBe(first.campaignId);
    expect(r.reportId).toBe(first.reportId);
    expect(r.runRecordId).not.toBe(first.runRecordId);
    expect((r.runRecord as { report_id: string }).report_id).toBe(r.reportId);
    expect(JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')).report_id).toBe(first.reportId);
    expect(r.pids).toEqual([]);
  }, 600_000);
});
