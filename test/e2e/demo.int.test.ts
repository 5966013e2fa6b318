import { mkdtempSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDemo, type DemoResult } from '../../scripts/lib/demo.js';

/**
 * The demo's flow on a smaller slice, as part of `make test`: every role as a real process, real
 * GSM8K questions through the sidecar with the official openai client, a verdict at the end.
 * Ground truth comes from provider-sim's configured tiers: sim-small answers 55% of GSM8K
 * correctly against sim-large's 92%, far beyond the 5 pp margin, so it must fail; sim-medium (90%)
 * is within the margin, so it must pass or be inconclusive — never fail.
 */
describe('end to end: the demo flow on a small slice', () => {
  const runs: DemoResult[] = [];
  const run = async () => {
    const out = mkdtempSync(join(tmpdir(), 'shadowplane-e2e-'));
    const r = await runDemo({ seed: 11, gsm8k: 36, chat: 8, dupEvery: 6, maxCostUsd: 2, concurrency: 6, outDir: out, say: () => undefined, timeoutMs: 300_000 });
    runs.push(r);
    return { r, out };
  };

  it('runs a budget-capped campaign from replayed requests to a verified verdict that matches the sim ground truth', async () => {
    const { r, out } = await run();
    expect(r.requestsFailed).toBe(0);
    expect(['completed', 'stopped']).toContain(r.state);
    expect(r.spendUsd).toBeGreaterThan(0);
    expect(r.spendUsd).toBeLessThanOrEqual(r.maxCostUsd);
    expect(r.verifyExit, r.verifyOutput).toBe(0);
    for (const f of ['report.json', 'run-record.json', 'report.html', 'bundle.json']) expect(existsSync(join(out, f))).toBe(true);
    // the report is reproducible (no campaign id, state, window or latencies inside); the run
    // record holds those and points at the report
    expect(r.report).not.toHaveProperty('campaign_id');
    expect(r.runRecord).toMatchObject({ schema: 'shadow.run_record/v1', report_id: r.reportId, campaign_id: r.campaignId, campaign_state: r.state, run_record_id: r.runRecordId });
    expect(JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')).report_id).toBe(r.reportId);
    const report = r.report as any;
    const gsm = report.call_types.find((c: any) => c.call_type === 'gsm8k');
    const small = gsm.comparisons.find((c: any) => c.candidate_arm_id === 'small');
    const medium = gsm.comparisons.find((c: any) => c.candidate_arm_id === 'medium');
    expect(small.decision).toBe('fail');
    expect(['pass', 'inconclusive']).toContain(medium.decision);
    if (medium.decision === 'inconclusive') expect(medium.power_plan?.mde_pp).toBeGreaterThan(0);
    // chat prompts carry no reference answers: reported as unscored, never as a score
    const chat = report.call_types.find((c: any) => c.call_type === 'chat');
    for (const c of chat.comparisons) expect(c.state).toBe('CANNOT_MEASURE');
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('<svg');
    // nothing the demo started is left running
    expect(r.pids).toEqual([]);
  }, 330_000);

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
  }, 330_000);
});
