import { describe, expect, it } from 'vitest';
import { synthCampaign, synthSpec } from '@shadowplane/testkit';
import { foldReport, verifyBundle, type EvidenceBundle } from './index.js';

const CID = 'cmp_00000000000000ab';
const fold = (stopping: 'fixed' | 'sequential' | undefined, n = 200) =>
  foldReport({
    campaign: {
      campaign_id: CID,
      spec: synthSpec(['equal', 'worse'], {
        max_items: 500,
        margins: { noninferiority_pp: 5, min_savings: 0.2 },
        ...(stopping === 'sequential' ? { stopping, stopping_batch_items: 20 } : stopping ? { stopping } : {}),
      }),
      run_index: 1,
      state: 'decided',
    },
    messages: synthCampaign(CID, n, 0.85, { equal: 'same', worse: 0.5 }),
    provisional: false,
  });
const bundle = (): EvidenceBundle => JSON.parse(JSON.stringify(fold('sequential').bundle)) as EvidenceBundle;

describe('sequential stopping in the fold and in verifyBundle', () => {
  it('a fixed campaign has no sequential record', () => {
    const r = fold(undefined);
    for (const c of r.report.call_types![0]!.comparisons) expect(c.sequential).toBeUndefined();
    expect(r.bundle.parts.stats.every((s) => s.settings.sequential === undefined)).toBe(true);
  });

  it('records method, looks, items used and saved; the clearly worse candidate fails early', () => {
    const r = fold('sequential');
    const [eq, worse] = r.report.call_types![0]!.comparisons;
    const s = worse!.sequential!;
    expect(s.method).toMatch(/betting confidence sequence/);
    expect(s.decision).toBe('fail');
    expect(s.settled_look).not.toBeNull();
    expect(s.items_used).toBeLessThan(200);
    expect(s.items_used).toBe(20 * s.settled_look!);
    expect(s.items_paired).toBe(200);
    expect(s.items_saved).toBe(300);
    expect(s.quality_delta.upper).toBeLessThan(-0.05);
    expect(worse!.decision).toBe('fail');
    // identical answers: lower bound rises but 200 pairs may not yet settle it; never a fail
    expect(eq!.sequential!.decision).not.toBe('fail');
    if (eq!.decision === 'pass') expect(eq!.sequential!.decision).toBe('pass');
  });

  it('verifies an untouched sequential bundle', () => {
    expect(verifyBundle(bundle())).toEqual({ ok: true, problems: [] });
  });

  it('tamper: a changed look bound is named', () => {
    const b = bundle();
    b.parts.stats[1]!.result.sequential!.looks[0]!.delta.upper = -0.9;
    const v = verifyBundle(b);
    expect(v.ok).toBe(false);
    expect(v.problems[0]!.path).toBe('parts.stats[1].result.sequential.looks[0].delta.upper');
  });

  it('tamper: a reordered arrival order changes the recomputed decision record', () => {
    const b = bundle();
    const o = b.parts.stats[1]!.settings.sequential!.order;
    o.reverse();
    expect(verifyBundle(b).ok).toBe(false);
  });

  it('tamper: dropping the sequential settings of a sequential campaign is refused', () => {
    const b = bundle();
    delete b.parts.stats[0]!.settings.sequential;
    const paths = verifyBundle(b).problems.map((p) => p.path);
    expect(paths).toContain('parts.stats[0].settings.sequential');
  });

  it('tamper: items saved in the report must match the recomputation', () => {
    const b = bundle();
    b.parts.report.call_types![0]!.comparisons[1]!.sequential!.items_saved = 450;
    const paths = verifyBundle(b).problems.map((p) => p.path);
    expect(paths).toContain('parts.report.call_types[0].comparisons[1].sequential');
  });
});
