import { describe, expect, it } from 'vitest';
import { Dataset, deriveFitEligibility, FreezeRequest, simhash64, type TrafficClass } from '@shadowplane/contracts';
import { bodyProblem, buildDatasets, type CaptureRecord } from './dataset.js';
import { fastContentHash } from './canonical-fast.js';

const hex = (n: number) => n.toString(16).padStart(64, '0');
let seq = 0;
function cap(
  item: number,
  opts: Partial<Omit<CaptureRecord, 'item_hash' | 'seq'>> & { prompt?: string } = {},
): CaptureRecord {
  seq++;
  return {
    seq,
    envelope_id: `00000000-0000-4000-8000-${seq.toString(16).padStart(12, '0')}`,
    item_hash: hex(item),
    call_type: opts.call_type ?? 'chat',
    traffic_class: (opts.traffic_class ?? 'production') as TrafficClass,
    captured_at: opts.captured_at ?? '2026-01-01T00:00:00.000Z',
    prompt_simhash:
      opts.prompt_simhash ??
      simhash64(opts.prompt ?? `question number ${item} about an unrelated topic ${item * 7919}`),
    expectation_kinds: opts.expectation_kinds ?? [],
    problem: opts.problem ?? null,
  };
}
const req = (o: Record<string, unknown> = {}) => FreezeRequest.parse(o);

describe('buildDatasets', () => {
  it('collapses exact duplicates into one item whose weight is its capture count, and hashes [item, weight] pairs', () => {
    const caps = [cap(1), cap(2), cap(1), cap(1), cap(3), cap(2)];
    const [ds] = buildDatasets({ suite: 's', stream: 'CAPTURE', captures: caps, request: req() });
    expect(ds!.items.map((i) => [i.item_hash, i.weight])).toEqual([
      [hex(1), 3],
      [hex(2), 2],
      [hex(3), 1],
    ]);
    expect(ds!.items[0]!.refs.map((r) => r.seq)).toEqual([caps[0]!.seq, caps[2]!.seq, caps[3]!.seq]);
    expect(ds!.card.unique_items).toBe(3);
    expect(ds!.card.total_weight).toBe(6);
    expect(ds!.card.duplicated_items).toBe(2);
    // the fold's formula: contentHash of sorted [item_hash, weight] pairs
    expect(ds!.dataset_hash).toBe(
      fastContentHash([
        [hex(1), 3],
        [hex(2), 2],
        [hex(3), 1],
      ]),
    );
    expect(ds!.card.dataset_hash).toBe(ds!.dataset_hash);
  });

  it('synthetic: only the builder call type and the synthetic class, never fit-eligible; the card records the spec', () => {
    const builder = {
      kind: 'synthetic',
      call_type: 'gen',
      request: { messages: [{ role: 'user', content: '{{q}}' }] },
      product: { q: ['a', 'b', 'a'] },
    };
    const caps = [
      ...Array.from({ length: 9 }, (_, i) => cap(40 + i, { call_type: 'gen', traffic_class: 'synthetic' })),
      cap(40, { call_type: 'gen', traffic_class: 'synthetic' }),
      cap(60, { call_type: 'gen' }), // production on the same subject: not the builder's
      cap(61, { call_type: 'other', traffic_class: 'synthetic' }),
    ];
    const out = buildDatasets({ suite: 's', stream: 'CAPTURE', captures: caps, request: req({ builder }) });
    expect(out.map((d) => d.call_type)).toEqual(['gen']);
    const card = out[0]!.card;
    expect([card.unique_items, card.total_weight, card['census']]).toEqual([
      9,
      10,
      { synthetic: { items: 9, weight: 10 } },
    ]);
    expect(card['filtered_out']).toEqual({ 'traffic_class:production': 1 });
    expect(card['builder']).toEqual({
      kind: 'synthetic',
      call_type: 'gen',
      api: 'openai.chat',
      expansion: 'product',
      variables: ['q'],
      expanded_items: 3,
      spec_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(card['fit_eligibility']).toMatchObject({
      eligible: false,
      reasons: expect.arrayContaining(['census_not_production']),
    });
    expect(Dataset.safeParse(out[0]).success).toBe(true);
  });

  it('gives the same hash and the same document whatever the capture order (re-freeze is a no-op)', () => {
    const caps = [cap(5), cap(6), cap(5), cap(7, { traffic_class: 'synthetic' })];
    const a = buildDatasets({ suite: 's', stream: 'CAPTURE', captures: caps, request: req() });
    const b = buildDatasets({ suite: 's', stream: 'CAPTURE', captures: [...caps].reverse(), request: req() });
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    const moreWeight = buildDatasets({ suite: 's', stream: 'CAPTURE', captures: [...caps, cap(6)], request: req() });
    expect(moreWeight[0]!.dataset_hash).not.toBe(a[0]!.dataset_hash);
  });

  it('joins near duplicates into visible clusters', () => {
    const base = 'please summarise the quarterly revenue report for the northern sales region in three bullet points';
    const caps = [
      cap(1, { prompt: base }),
      cap(2, { prompt: `${base}.` }),
      cap(3, { prompt: 'translate the following sentence into French: the cat sleeps on the warm windowsill' }),
    ];
    const [ds] = buildDatasets({ suite: 's', stream: 'CAPTURE', captures: caps, request: req() });
    expect(ds!.items[0]!.cluster).toBe(hex(1));
    expect(ds!.items[1]!.cluster).toBe(hex(1));
    expect(ds!.items[2]!.cluster).toBe(hex(3));
    expect(ds!.card.near_duplicate_clusters).toBe(2);
    expect(ds!.card['clusters']).toEqual([
      { cluster: hex(1), items: 2, weight: 2 },
      { cluster: hex(3), items: 1, weight: 1 },
    ]);
  });

  it('over the cap keeps the highest-frequency items, ties by item hash, the rest excluded over_cap', () => {
    const caps = [cap(1), cap(2), cap(2), cap(3), cap(3), cap(3), cap(4), cap(4)];
    const [ds] = buildDatasets({ suite: 's', stream: 'CAPTURE', captures: caps, request: req({ max_items: 2 }) });
    expect(ds!.items.map((i) => i.item_hash)).toEqual([hex(2), hex(3)]);
    expect(ds!.card.exclusions).toEqual([
      { item_hash: hex(1), reason: 'over_cap' },
      { item_hash: hex(4), reason: 'over_cap' },
    ]);
    // item 4 ties item 2 on weight: the smaller hash wins
    expect(ds!.card.exclusion_counts).toEqual({ over_cap: 2 });
  });

  it('gives every excluded capture a reason from the closed list, counting sidecar skips and unparseable messages', () => {
    const caps = [
      cap(1),
      cap(2, { traffic_class: 'test' }),
      cap(3, { problem: 'stateful' }),
      cap(4, { problem: 'untranslatable' }),
      cap(5, { problem: 'unparseable', prompt_simhash: null }),
      cap(6),
      cap(6, { problem: 'body_missing' }),
    ];
    const [ds] = buildDatasets({
      suite: 's',
      stream: 'CAPTURE',
      captures: caps,
      unparseable: [{ seq: 99, call_type: 'chat' }],
      skips: [
        { call_type: 'chat', at: '2026-01-01T00:00:00.000Z', reason: 'too_large' },
        { call_type: 'chat', at: '2026-01-01T00:00:00.000Z', reason: 'too_large' },
        { call_type: 'chat', at: '2026-01-01T00:00:00.000Z', reason: 'pii_uncertain' },
      ],
      request: req(),
    });
    expect(ds!.items.map((i) => i.item_hash)).toEqual([hex(1)]);
    expect(ds!.card.exclusions).toEqual([
      { item_hash: hex(2), reason: 'test_traffic' },
      { item_hash: hex(3), reason: 'stateful' },
      { item_hash: hex(4), reason: 'untranslatable' },
      { item_hash: hex(5), reason: 'unparseable' },
      { item_hash: hex(6), reason: 'body_missing' },
      { item_hash: 'seq:99', reason: 'unparseable' },
    ]);
    expect(ds!.card.exclusion_counts).toEqual({
      body_missing: 1,
      low_confidence_redaction: 1,
      stateful: 1,
      test_traffic: 1,
      too_large: 2,
      unparseable: 2,
      untranslatable: 1,
    });
    expect(ds!.card['skipped_at_capture']).toEqual({ low_confidence_redaction: 1, too_large: 2 });
  });

  it('one dataset per call type; filter and window narrow the captures and say what they left out', () => {
    const caps = [
      cap(1, { call_type: 'a' }),
      cap(2, { call_type: 'b', traffic_class: 'import' }),
      cap(3, { call_type: 'b', captured_at: '2025-06-01T00:00:00.000Z' }),
      cap(4, { call_type: 'b', traffic_class: 'synthetic' }),
    ];
    const all = buildDatasets({ suite: 's', stream: 'CAPTURE', captures: caps, request: req() });
    expect(all.map((d) => [d.call_type, d.items.length])).toEqual([
      ['a', 1],
      ['b', 3],
    ]);
    expect(all[1]!.card['census']).toEqual({
      import: { items: 1, weight: 1 },
      production: { items: 1, weight: 1 },
      synthetic: { items: 1, weight: 1 },
    });
    const narrow = buildDatasets({
      suite: 's',
      stream: 'CAPTURE',
      captures: caps,
      request: req({
        builder: {
          kind: 'from_filter',
          filter: { traffic_classes: ['production', 'import'], call_types: ['b'] },
          window: { since: '2025-12-01T00:00:00Z' },
        },
      }),
    });
    expect(narrow.map((d) => d.call_type)).toEqual(['b']);
    expect(narrow[0]!.items.map((i) => i.item_hash)).toEqual([hex(2)]);
    expect(narrow[0]!.card['filtered_out']).toEqual({ outside_window: 1, 'traffic_class:synthetic': 1 });
  });

  it('carries a power plan at the suite margin, wider MDE with fewer clusters', () => {
    const few = buildDatasets({
      suite: 's',
      stream: 'CAPTURE',
      captures: Array.from({ length: 10 }, (_, i) => cap(i + 1)),
      request: req(),
    })[0]!;
    const many = buildDatasets({
      suite: 's',
      stream: 'CAPTURE',
      captures: Array.from({ length: 200 }, (_, i) => cap(i + 1)),
      request: req(),
    })[0]!;
    const mde = (d: typeof few) => (d.card.power_plan as { mde_pp: number | null }).mde_pp;
    expect(mde(few)).not.toBeNull();
    expect(mde(many)!).toBeLessThan(mde(few)!);
    expect(few.card['power_plan_settings']).toMatchObject({ margin_pp: 2, alpha_one_sided: 0.05 });
  });
});

describe('fit-eligibility on the dataset card', () => {
  const many = (n: number, tc: TrafficClass = 'production') =>
    Array.from({ length: n }, (_, i) => cap(1000 + i, { traffic_class: tc }));
  const cardOf = (caps: CaptureRecord[], o: Record<string, unknown> = {}) =>
    buildDatasets({ suite: 's', stream: 'CAPTURE', captures: caps, request: req(o) })[0]!.card;
  it('is eligible only when all items are production, at least 8 clusters, and the plan is powered', () => {
    const ok = cardOf(many(60), { margin_pp: 50 });
    expect((ok.power_plan as { powered: boolean }).powered).toBe(true);
    expect(ok.fit_eligibility).toEqual({ eligible: true, reasons: [] });
    // the same items at the default 2pp margin cannot be powered by 60 clusters
    expect(cardOf(many(60)).fit_eligibility).toEqual({ eligible: false, reasons: ['underpowered'] });
    expect(cardOf(many(5), { margin_pp: 50 }).fit_eligibility!.reasons).toContain('below_min_items');
    const mixed = cardOf([...many(60), cap(5000, { traffic_class: 'import' })], { margin_pp: 50 });
    expect(mixed.fit_eligibility).toEqual({ eligible: false, reasons: ['census_not_production'] });
  });
  it('is never asserted: a dataset whose card states another eligibility does not parse', () => {
    const [ds] = buildDatasets({ suite: 's', stream: 'CAPTURE', captures: many(60), request: req() });
    expect(Dataset.safeParse(ds).success).toBe(true);
    const forged = { ...ds!, card: { ...ds!.card, fit_eligibility: { eligible: true, reasons: [] } } };
    const r = Dataset.safeParse(forged);
    expect(r.success).toBe(false);
    expect(r.error!.issues.map((i) => i.path.join('.'))).toEqual(['card.fit_eligibility']);
    expect(deriveFitEligibility(ds!.card)).toEqual(ds!.card.fit_eligibility);
  });
});

describe('FreezeRequest', () => {
  it('defaults max_items to 500 and refuses 0 or more than 5000, naming the field', () => {
    expect(FreezeRequest.parse({}).max_items).toBe(500);
    for (const bad of [0, 5001, 1.5]) {
      const r = FreezeRequest.safeParse({ max_items: bad });
      expect(r.success).toBe(false);
      expect(r.error!.issues[0]!.path).toEqual(['max_items']);
    }
  });
});

describe('bodyProblem', () => {
  it('names stateful, untranslatable and unparseable bodies', () => {
    expect(bodyProblem('openai.chat', { messages: [{ role: 'user', content: 'hi' }] })).toBeNull();
    expect(bodyProblem('openai.responses', { input: 'x', previous_response_id: 'r1' })).toBe('stateful');
    expect(bodyProblem('anthropic.messages', { messages: [], container: 'c' })).toBe('stateful');
    expect(bodyProblem('openai.chat', { messages: [], tools: [{ type: 'web_search' }] })).toBe('untranslatable');
    expect(
      bodyProblem('openai.chat', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] }),
    ).toBe('untranslatable');
    expect(bodyProblem('openai.chat', 'text')).toBe('unparseable');
  });
});
