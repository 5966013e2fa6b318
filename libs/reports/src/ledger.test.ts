import { describe, expect, it } from 'vitest';
import type { Observation } from '@shadowplane/contracts';
import { buildLedger, ledgerCsv } from './index.js';
import { synthObservation } from '@shadowplane/testkit';

const CID = 'cmp_ledger0001';
// 20 items; the incumbent fails item 0, candidate `flaky` fails items 0–5, candidate `steady` fails item 7
function campaign(shiftSteadyMs = 0): Observation[] {
  const out: Observation[] = [];
  for (let i = 0; i < 20; i++) {
    out.push(
      synthObservation(CID, i, 'inc', 'incumbent', i === 0 ? { status: 'error', error_class: 'hang_timeout' } : {}),
    );
    out.push(synthObservation(CID, i, 'flaky', 'candidate', i < 6 ? { status: 'error' } : {}));
    const s = synthObservation(CID, i, 'steady', 'candidate', i === 7 ? { status: 'error' } : {});
    out.push(
      shiftSteadyMs
        ? {
            ...s,
            started_at: new Date(Date.parse(s.started_at) + shiftSteadyMs).toISOString(),
            start_skew_ms: shiftSteadyMs,
          }
        : s,
    );
  }
  return out;
}

describe('buildLedger', () => {
  it('rolls calls up per arm with the never-completed share, its Wilson interval and a Holm-corrected z-test against the incumbent', () => {
    const l = buildLedger(campaign());
    expect(l.calls).toHaveLength(60);
    expect(l.arms.map((a) => a.arm_id)).toEqual(['inc', 'flaky', 'steady']);
    const [inc, flaky, steady] = l.arms as [(typeof l.arms)[0], (typeof l.arms)[0], (typeof l.arms)[0]];
    expect(inc).toMatchObject({
      calls: 20,
      ok: 19,
      never_completed: 1,
      never_completed_share: 0.05,
      z_vs_incumbent: null,
      p_holm: null,
    });
    // Wilson 95% for 6/20, by hand: centre (6 + 1.92)/(23.84) = 0.3322, half 1.96/23.84·√(6·14/20 + 0.9604) = 0.1880
    expect(flaky.never_completed_lower!).toBeCloseTo(0.1455, 3);
    expect(flaky.never_completed_upper!).toBeCloseTo(0.519, 3);
    // pooled z, by hand: p̂ = 7/40, se = √(0.175·0.825·0.1) = 0.12016, z = 0.25/0.12016 = 2.0806, p = 0.03747
    expect(flaky.z_vs_incumbent!).toBeCloseTo(2.0806, 3);
    expect(flaky.p_vs_incumbent!).toBeCloseTo(0.03747, 4);
    // steady has the incumbent's share: z = 0, p = 1; Holm over two p values: 2·0.03747, then max(…, 1)
    expect(steady.z_vs_incumbent).toBe(0);
    expect(flaky.p_holm!).toBeCloseTo(0.07494, 4);
    expect(steady.p_holm).toBe(1);
    // cost, cost per prompt token and cache hits over the incumbent's ok calls, from synth's ground truth
    let cost = 0;
    let prompt = 0;
    let hits = 0;
    for (let i = 1; i < 20; i++) {
      cost += 0.002 + (i % 7) * 1e-5;
      prompt += 120 + (i % 5);
      if (i % 3 === 0) hits++;
    }
    expect(inc.cost_basis).toBe('rate_card');
    expect(inc.cost_usd!).toBeCloseTo(cost, 12);
    expect(inc.cost_per_prompt_token_usd!).toBeCloseTo(cost / prompt, 14);
    expect(inc.cache_hit_share!).toBeCloseTo(hits / 19, 12);
    expect(inc.distinct_upstreams).toBe(1);
    expect(l.concurrency.sequential).toBe(false);
  });

  it('warns when an arm ran after the incumbent rather than beside it', () => {
    const l = buildLedger(campaign(3_600_000));
    expect(l.concurrency.sequential).toBe(true);
    expect(l.concurrency.arms.map((a) => a.arm_id)).toEqual(['steady']);
    expect(l.concurrency.arms[0]!.why).toContain('overlap the incumbent');
    expect(l.concurrency.arms[0]!.why).toContain('median start skew 3600000 ms');
  });

  it('keeps an unreported token count as an empty CSV cell, apart from a reported 0', () => {
    const csv = ledgerCsv(buildLedger(campaign()));
    const [head, ...rows] = csv.calls
      .trim()
      .split('\n')
      .map((r) => r.split(','));
    const col = (name: string) => head!.indexOf(name);
    const failed = rows.find((r) => r[col('arm_id')] === 'inc' && r[col('status')] === 'error')!;
    expect(failed[col('prompt_tokens')]).toBe('');
    expect(failed[col('cost_usd')]).toBe('');
    expect(failed[col('error_class')]).toBe('hang_timeout');
    const item1 = rows.find(
      (r) => r[col('arm_id')] === 'inc' && r[col('status')] === 'ok' && r[col('cached_tokens')] === '0',
    );
    expect(item1).toBeDefined();
    expect(item1![col('prompt_tokens')]).toMatch(/^12\d$/);
    expect(csv.arms.split('\n')[0]).toBe(
      'arm_id,role,route,calls,ok,never_completed,never_completed_share,never_completed_lower,never_completed_upper,abandoned,cost_basis,cost_usd,cost_priced_calls,cost_other_basis,cost_unpriced,cost_per_prompt_token_usd,charged_usd,cache_hit_share,latency_p50_ms,latency_p90_ms,distinct_upstreams,z_vs_incumbent,p_vs_incumbent,p_holm',
    );
  });
});
