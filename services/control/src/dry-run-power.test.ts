import { describe, expect, it } from 'vitest';
import { CampaignSpec } from '@shadowplane/contracts';
import { dryRunPower, priorDesignEffect } from './dry-run-power.js';

const HASH = 'ab'.repeat(32);
const spec = (over: Partial<Record<string, unknown>> = {}) =>
  CampaignSpec.parse({
    name: 'power',
    suite: 'gsm8k',
    call_types: ['solve', 'explain'],
    incumbent: { id: 'large', provider: 'sim', model: 'sim-large' },
    candidates: [{ id: 'medium', provider: 'sim', model: 'sim-medium' }],
    max_cost_usd: 10,
    max_items: 1500,
    margins: { noninferiority_pp: 5 },
    ...over,
  });
// α_adj of run 1 with one candidate: 0.05·6/π²
const ALPHA = (0.05 * 6) / Math.PI ** 2;
const card = (callType: string, powerPlan: unknown) => async (hash: string) =>
  hash === HASH
    ? { schema: 'shadow.dataset_card/v1', dataset_hash: HASH, call_type: callType, power_plan: powerPlan }
    : null;

describe('dry-run power plan', () => {
  it('live source: the √0.5 prior, design effect 1, disclosed; t-based MDE 4.96 pp at 1500 clusters', async () => {
    const s = spec();
    const prior = await priorDesignEffect(s, undefined);
    expect(prior.source).toBe('none_live_source');
    const rows = dryRunPower(s, ALPHA, prior);
    expect(rows.map((r) => r.call_type)).toEqual(['solve', 'explain']);
    for (const r of rows) {
      expect(r).toMatchObject({
        sd_source: 'conservative_prior',
        design_effect: 1,
        design_effect_source: 'none_live_source',
      });
      expect(r.sd_diff).toBeCloseTo(Math.SQRT1_2, 12);
      // 100 · (t_{0.9696,1499} + t_{0.8,1499}) · √0.5 / √1500 ≈ 100 · 2.718 · 0.7071 / 38.73
      expect(r.mde_pp).toBeCloseTo(4.963, 2);
      expect(r.powered).toBe(true);
    }
  });

  it('frozen source: the dataset card’s design effect inflates the prior for its call type only', async () => {
    const s = spec({ source: `frozen:${HASH}` });
    const prior = await priorDesignEffect(s, card('solve', { design_effect: 2 }));
    expect(prior).toEqual({ callType: 'solve', designEffect: 2, source: 'frozen_dataset_card' });
    const [solve, explain] = dryRunPower(s, ALPHA, prior);
    // sd = √0.5·√2 = 1: the MDE grows by √2 and the campaign is no longer powered at 1500
    expect(solve).toMatchObject({ design_effect: 2, design_effect_source: 'frozen_dataset_card', powered: false });
    expect(solve!.sd_diff).toBeCloseTo(1, 12);
    expect(solve!.mde_pp!).toBeCloseTo(explain!.mde_pp! * Math.SQRT2, 9);
    expect(solve!.clusters_needed_for_margin!).toBeGreaterThan(2 * 1470);
    expect(explain).toMatchObject({
      design_effect: 1,
      design_effect_source: 'frozen_card_other_call_type',
      powered: true,
    });
  });

  it('frozen source without a stored card, or a card without a design effect: 1, with the reason named', async () => {
    const s = spec({ source: `frozen:${HASH}` });
    expect((await priorDesignEffect(s, async () => null)).source).toBe('frozen_card_not_found');
    expect((await priorDesignEffect(s, undefined)).source).toBe('frozen_card_not_found');
    expect((await priorDesignEffect(s, card('solve', null))).source).toBe('frozen_card_has_none');
    expect((await priorDesignEffect(s, card('solve', { design_effect: 0.5 }))).source).toBe('frozen_card_has_none');
    const rows = dryRunPower(s, ALPHA, await priorDesignEffect(s, card('solve', {})));
    expect(rows.every((r) => r.design_effect === 1 && r.design_effect_source === 'frozen_card_has_none')).toBe(true);
  });
});
