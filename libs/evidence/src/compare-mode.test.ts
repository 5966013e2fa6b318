import { describe, expect, it } from 'vitest';
import type { ObsMessage, Observation } from '@shadowplane/contracts';
import { seededRandom, synthObservation, synthSpec } from '@shadowplane/testkit';
import { compareModeMessages, foldReport, verifyBundle } from './index.js';

const BASE = 'cmp_base00000000000000';
const CID = 'cmp_compare0000000000';
const N = 120;
const spec = synthSpec(['next'], {
  margins: { noninferiority_pp: 5, min_savings: 0 },
  compare: { baseline: BASE, resolved: { campaign_id: BASE, arm_id: 'inc', report_id: 'a'.repeat(64) } },
});

// the baseline run: its incumbent `inc` right ~90% of the time (a candidate `old` beside it)
const rnd = seededRandom(11);
const incCorrect = Array.from({ length: N }, () => rnd() < 0.9);
const baseline: Observation[] = incCorrect.flatMap((c, i) => [
  { ...synthObservation(BASE, i, 'inc', 'incumbent', { correct: c }), artifact_ref: `art-${i}` },
  synthObservation(BASE, i, 'old', 'candidate', { correct: false }),
]);
// the compare run: only the candidate, answering exactly as the baseline incumbent did
const own = (n = N): ObsMessage[] =>
  Array.from({ length: n }, (_, i) => synthObservation(CID, i, 'next', 'candidate', { correct: incCorrect[i % N]! }));

const fold = (messages: ObsMessage[]) =>
  foldReport({ campaign: { campaign_id: CID, spec, run_index: 1, state: 'completed' }, messages, provisional: false });
const ct = (r: ReturnType<typeof fold>) => r.report.call_types!.find((c) => c.call_type === 'math')!;

describe('compare mode: pairing a candidate-only run with a baseline run by item hash', () => {
  it('pairs every item with the baseline arm, relabelled as the incumbent; capped at ON_FRONTIER; bundle verifies', () => {
    const m = compareModeMessages({ campaignId: CID, spec, own: own(), baseline });
    expect(m.paired).toBe(N);
    expect(m.ineligible).toEqual({});
    const incs = m.messages.filter(
      (x): x is Observation => x.schema === 'shadow.observation/v1' && x.role === 'incumbent',
    );
    expect(incs).toHaveLength(N);
    expect(new Set(incs.map((x) => `${x.campaign_id}/${x.arm_id}/${x.instrument}`))).toEqual(
      new Set([`${CID}/inc/judged_dataset_run`]),
    );
    // the baseline's other arm never joins
    expect(m.messages.some((x) => x.schema === 'shadow.observation/v1' && x.arm_id === 'old')).toBe(false);
    const r = fold(m.messages);
    const c = ct(r).comparisons[0]!;
    expect(c.pairs.items).toBe(N);
    expect(c.instrument).toBe('judged_dataset_run');
    expect(c.decision, JSON.stringify([c.decision_reasons, c.stats?.quality_delta, c.pairs])).toBe('pass');
    expect(c.state).toBe('ON_FRONTIER');
    expect(verifyBundle(r.bundle)).toMatchObject({ ok: true });
  });

  it('a missing baseline artifact makes its item ineligible, counted with its reason, and widens the interval to inconclusive', () => {
    const full = ct(fold(compareModeMessages({ campaignId: CID, spec, own: own(), baseline }).messages))
      .comparisons[0]!;
    // a quarter of the baseline artifacts are gone (expired or deleted)
    const gone = baseline.map((o) =>
      o.role === 'incumbent' && Number(o.artifact_ref!.slice(4)) % 4 === 0 ? { ...o, output_text: null } : o,
    );
    const m = compareModeMessages({ campaignId: CID, spec, own: own(), baseline: gone });
    expect(m.ineligible).toEqual({ baseline_artifact_missing: N / 4 });
    expect(m.paired).toBe((3 * N) / 4);
    const r = fold(m.messages);
    const card = ct(r).dataset_card;
    expect(card.exclusion_counts).toMatchObject({ baseline_artifact_missing: N / 4 });
    const c = ct(r).comparisons[0]!;
    expect(c.pairs.items).toBe((3 * N) / 4);
    expect(c.decision).toBe('inconclusive');
    expect(c.decision_reasons.some((x) => x.startsWith('baseline_ineligible_bound'))).toBe(true);
    expect(c.remediation.map((x) => x.code)).toContain('rebaseline');
    // worst case over the missing quarter: the lower end drops by about a quarter of the range
    expect(c.stats!.quality_delta.lower).toBeLessThan(full.stats!.quality_delta.lower - 0.2);
    expect(c.stats!.quality_delta.upper).toBeGreaterThan(full.stats!.quality_delta.upper + 0.2);
    expect(verifyBundle(r.bundle)).toMatchObject({ ok: true });
  });

  it('every baseline artifact missing: nothing to pair, CANNOT_MEASURE (never a pass)', () => {
    const gone = baseline.map((o) => (o.role === 'incumbent' ? { ...o, output_text: null } : o));
    const c = ct(fold(compareModeMessages({ campaignId: CID, spec, own: own(), baseline: gone }).messages))
      .comparisons[0]!;
    expect(c.decision).toBeNull();
    expect(c.state).toBe('CANNOT_MEASURE');
  });

  it('items the baseline never saw are excluded as not_in_baseline; the own run never contributes an incumbent', () => {
    const extra = [
      ...own(),
      ...Array.from({ length: 5 }, (_, k) => synthObservation(CID, N + k, 'next', 'candidate', { correct: true })),
      synthObservation(CID, 0, 'inc', 'incumbent', { correct: false }),
    ];
    const m = compareModeMessages({ campaignId: CID, spec, own: extra, baseline });
    expect(m.ineligible).toEqual({ not_in_baseline: 5 });
    const incs = m.messages.filter((x) => x.schema === 'shadow.observation/v1' && x.role === 'incumbent');
    expect(incs).toHaveLength(N);
    expect(incs.every((x) => x.schema === 'shadow.observation/v1' && x.instrument === 'judged_dataset_run')).toBe(true);
    expect(ct(fold(m.messages)).dataset_card.exclusion_counts).toMatchObject({ not_in_baseline: 5 });
  });

  it('refuses a spec without a resolved baseline', () => {
    expect(() => compareModeMessages({ campaignId: CID, spec: synthSpec(['next']), own: [], baseline: [] })).toThrow(
      /no resolved compare baseline/,
    );
  });
});
