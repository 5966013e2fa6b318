import { describe, expect, it } from 'vitest';
import { synthCampaign, synthSpec } from '@shadowplane/testkit';
import { CampaignSpec, GROUP_SEQUENTIAL_MAX_LOOKS as CONTRACT_MAX_LOOKS } from '@shadowplane/contracts';
import { GROUP_SEQUENTIAL_MAX_LOOKS, spendingBoundaries } from '@shadowplane/stats';
import { foldReport, verifyBundle, type EvidenceBundle } from './index.js';
import { groupSequentialComparison, plannedLooks } from './group-sequential.js';
import type { PairRow } from './compare.js';

const CID = 'cmp_00000000000000ac';
const fold = (n = 200) =>
  foldReport({
    campaign: {
      campaign_id: CID,
      spec: synthSpec(['equal', 'worse'], {
        max_items: 500,
        margins: { noninferiority_pp: 5, min_savings: 0.2 },
        stopping: 'group_sequential',
        stopping_batch_items: 50,
      }),
      run_index: 1,
      state: 'decided',
    },
    messages: synthCampaign(CID, n, 0.85, { equal: 'same', worse: 0.5 }),
    provisional: false,
  });
const bundle = (): EvidenceBundle => JSON.parse(JSON.stringify(fold().bundle)) as EvidenceBundle;

const row = (i: number, qInc: number, qCand: number): PairRow => ({
  item_hash: `h${String(i).padStart(6, '0')}`,
  cluster: `h${String(i).padStart(6, '0')}`,
  simhash: '0000000000000000',
  weight: 1,
  q_inc: qInc,
  q_cand: qCand,
  cost_inc_usd: 0.002 + 0.0001 * (i % 5),
  cost_cand_usd: 0.001 + 0.0001 * (i % 3),
  obs_inc: '',
  obs_cand: '',
});
const S = {
  alpha: 0.05,
  candidates_k: 1,
  run_index: 1,
  margin_pp: 5,
  min_savings: 0.2,
  hard_gate_failures: 0,
  cost_ceiling_breaches: 0,
  batch_items: 20,
  max_items: 100,
};

describe('plannedLooks', () => {
  it('every batch, then max_items; refuses more than the look limit', () => {
    expect(plannedLooks(100, 20)).toEqual([20, 40, 60, 80, 100]);
    expect(plannedLooks(90, 25)).toEqual([25, 50, 75, 90]);
    expect(() => plannedLooks(5000, 1)).toThrow(RangeError);
    expect(() => plannedLooks(0, 1)).toThrow(RangeError);
    expect(CONTRACT_MAX_LOOKS).toBe(GROUP_SEQUENTIAL_MAX_LOOKS);
  });

  it('the contract refuses a group_sequential spec that would plan more looks', () => {
    const base = synthSpec(['a'], { max_items: 5000, stopping: 'group_sequential', stopping_batch_items: 25 });
    const r = CampaignSpec.safeParse({ ...base, stopping_batch_items: 10 });
    expect(r.success).toBe(false);
    expect(r.error!.issues.map((i) => i.path.join('.'))).toContain('stopping_batch_items');
    // the default batch (25) over 5000 items is 200 looks: allowed
    const { stopping_batch_items: _drop, ...noBatch } = base;
    expect(CampaignSpec.safeParse(noBatch).success).toBe(true);
  });
});

describe('groupSequentialComparison', () => {
  it('looks only at the planned looks the rows reached, each against its own boundary', () => {
    const rows = Array.from({ length: 75 }, (_, i) => row(i, 1, i % 10 === 0 ? 0 : 1));
    const r = groupSequentialComparison(rows, S);
    expect(r.looks.map((l) => l.items)).toEqual([20, 40, 60]);
    const b = spendingBoundaries([0.2, 0.4, 0.6, 0.8, 1], r.alpha_one_sided_adjusted);
    expect(r.plan).toEqual({ items: [20, 40, 60, 80, 100], boundaries: b.critical });
    r.looks.forEach((l, i) => expect(l.boundary).toBe(b.critical[i]));
  });

  it('a final report short of the next planned look takes one closing look that spends the rest of α', () => {
    const rows = Array.from({ length: 75 }, (_, i) => row(i, 1, i % 10 === 0 ? 0 : 1));
    const r = groupSequentialComparison(rows, { ...S, final: true });
    expect(r.looks.map((l) => l.items)).toEqual([20, 40, 60, 75]);
    const closing = spendingBoundaries([0.2, 0.4, 0.6, 0.75], r.alpha_one_sided_adjusted, { lastSpendsAll: true });
    expect(r.looks.map((l) => l.boundary)).toEqual(closing.critical);
    // the planned boundaries are untouched by the closing look, which lies below the planned last one
    expect(closing.critical.slice(0, 3)).toEqual(r.plan!.boundaries.slice(0, 3));
    expect(closing.critical[3]!).toBeLessThan(r.plan!.boundaries[3]!);
    expect(r.looks[3]!.conditional_power).toBeNull();
    // at a planned look or at max_items there is nothing to close
    expect(groupSequentialComparison(rows.slice(0, 60), { ...S, final: true }).looks).toHaveLength(3);
  });

  it('a clearly worse candidate fails at a planned look; a hard gate fails at the first look with enough clusters', () => {
    const worse = Array.from({ length: 100 }, (_, i) => row(i, 1, i % 2 === 0 ? 0 : 1));
    const r = groupSequentialComparison(worse, S);
    expect(r.decision).toBe('fail');
    expect(r.items_used).toBe(r.looks.at(-1)!.items);
    expect(r.items_used).toBeLessThan(100);
    const h = groupSequentialComparison(worse.slice(0, 30), { ...S, hard_gate_failures: 1 });
    expect(h.decision).toBe('fail');
    expect(h.settled_look).toBe(1);
    expect(h.reason).toMatch(/^hard_fail/);
  });

  it('a repeated fold reuses earlier looks and gives the same record; a changed row changes only the looks after it', () => {
    const rows = Array.from({ length: 100 }, (_, i) => row(i, i % 3 === 0 ? 0 : 1, i % 4 === 0 ? 0 : 1));
    const a = groupSequentialComparison(rows, { ...S, ignore_futility: true });
    expect(groupSequentialComparison(rows, { ...S, ignore_futility: true })).toEqual(a);
    const changed = rows.map((r, i) => (i === 50 ? { ...r, q_cand: 1 - r.q_cand } : r));
    const b = groupSequentialComparison(changed, { ...S, ignore_futility: true });
    expect(b.looks.slice(0, 2)).toEqual(a.looks.slice(0, 2));
    expect(b.looks[2]!.delta).not.toEqual(a.looks[2]!.delta);
  });

  it('fewer clusters than the minimum never settle', () => {
    const rows = Array.from({ length: 20 }, (_, i) => row(i % 5, 1, 0)).map((r, i) => ({
      ...r,
      item_hash: `x${i}`,
    }));
    const r = groupSequentialComparison(rows, S);
    expect(r.looks[0]!.clusters).toBe(5);
    expect(r.decision).toBe('continue');
  });

  it('an equal, cheaper candidate passes before max_items when the data are clear; a too-costly one is futile', () => {
    const rows = Array.from({ length: 100 }, (_, i) => row(i, 1, 1));
    const many = { ...S, max_items: 100, batch_items: 20 };
    const r = groupSequentialComparison(rows, many);
    expect(['pass', 'continue']).toContain(r.decision);
    expect(r.looks.every((l) => l.decision !== 'fail')).toBe(true);
    const costly = rows.map((x) => ({ ...x, cost_cand_usd: x.cost_inc_usd * 0.95 }));
    const f = groupSequentialComparison(costly, many);
    expect(f.decision).toBe('futile');
  });
});

describe('group_sequential in the fold and in verifyBundle', () => {
  it('records method, planned looks and boundaries; the clearly worse candidate fails at a planned look', () => {
    const r = fold();
    const [eq, worse] = r.report.call_types![0]!.comparisons;
    const s = worse!.sequential!;
    expect(s.method).toMatch(/^group sequential over planned looks/);
    expect(s.planned_looks).toEqual([50, 100, 150, 200, 250, 300, 350, 400, 450, 500]);
    expect(s.boundaries).toHaveLength(10);
    expect(s.decision).toBe('fail');
    expect(s.items_used % 50).toBe(0);
    expect(s.items_saved).toBe(300);
    expect(worse!.decision).toBe('fail');
    expect(eq!.sequential!.decision).not.toBe('fail');
    const set = r.bundle.parts.stats[0]!.settings.sequential!;
    expect(set.method).toBe('group_sequential');
    expect(set.max_items).toBe(500);
    expect(set.final).toBe(true);
  });

  it('verifies an untouched bundle and names a changed look bound or boundary', () => {
    expect(verifyBundle(bundle())).toEqual({ ok: true, problems: [] });
    const b = bundle();
    b.parts.stats[1]!.result.sequential!.looks[0]!.delta.upper = -0.9;
    expect(verifyBundle(b).problems[0]!.path).toBe('parts.stats[1].result.sequential.looks[0].delta.upper');
    const c = bundle();
    c.parts.stats[1]!.result.sequential!.looks[0]!.boundary = 1.5;
    expect(verifyBundle(c).problems.map((p) => p.path)).toContain('parts.stats[1].result.sequential');
  });

  it('tamper: a changed horizon or method is refused against the pinned spec', () => {
    const b = bundle();
    b.parts.stats[0]!.settings.sequential!.max_items = 400;
    expect(verifyBundle(b).problems.map((p) => p.path)).toContain('parts.stats[0].settings.sequential');
    const c = bundle();
    delete c.parts.stats[0]!.settings.sequential!.method;
    expect(verifyBundle(c).problems.map((p) => p.path)).toContain('parts.stats[0].settings.sequential');
    const d = bundle();
    delete d.parts.stats[0]!.settings.sequential!.final;
    expect(verifyBundle(d).problems.map((p) => p.path)).toContain('parts.stats[0].settings.sequential');
  });

  it('tamper: the report record (boundaries, items saved) must match the recomputation', () => {
    const b = bundle();
    b.parts.report.call_types![0]!.comparisons[1]!.sequential!.boundaries![0] = 3;
    expect(verifyBundle(b).problems.map((p) => p.path)).toContain(
      'parts.report.call_types[0].comparisons[1].sequential',
    );
  });
});
