/**
 * The demo's dry-run line: it names the spend of every stopping rule the dry run simulated, from a
 * `stopping[]` entry built as control builds it (libs/evidence stoppingSpendPlan).
 */
import { describe, expect, it } from 'vitest';
import { stoppingSpendPlan } from '@shadowplane/evidence';
import { summariseDryRun } from '../scripts/lib/demo-io.js';

describe('summariseDryRun', () => {
  const plan = stoppingSpendPlan({
    rule: 'sequential',
    items: 200,
    maxItems: 200,
    batchItems: 25,
    marginPp: 5,
    minSavings: 0.2,
    alphaAdjusted: 0.0304,
    perItemWorstCaseUsd: 0.001,
    costRatios: [0.3],
    sdDiff: Math.sqrt(0.5),
    campaigns: 20,
  });

  it('shows fixed, sequential and group_sequential expected items per scenario', () => {
    const line = summariseDryRun({
      estimate: { worst_case_total_usd: 0.4 },
      dispositions: [{ call_type: 'chat', disposition: 'runnable' }],
      power: [{ call_type: 'chat', mde_pp: 12.3 }],
      stopping: [{ call_type: 'chat', ...plan }],
    });
    expect(plan.group_sequential).not.toBeNull();
    const gs = plan.group_sequential!.scenarios.map((s) => Math.round(s.expected_items));
    const seq = plan.sequential.scenarios.map((s) => Math.round(s.expected_items));
    expect(line).toContain(
      `chat: fixed 200 items, sequential expected clearly worse ${seq[0]} / at margin ${seq[1]} / equal ${seq[2]}`,
    );
    expect(line).toContain(`group_sequential expected clearly worse ${gs[0]} / at margin ${gs[1]} / equal ${gs[2]}`);
    expect(line).toMatch(/^worst case \$0\.40 \(basis estimate\); chat runnable; chat MDE 12\.3 pp; items by rule/);
  });

  it('leaves group_sequential out when the dry run has no plan for it (over 200 looks)', () => {
    const line = summariseDryRun({ stopping: [{ call_type: 'chat', ...plan, group_sequential: null }] });
    expect(line).toContain('sequential expected');
    expect(line).not.toContain('group_sequential');
  });
});
