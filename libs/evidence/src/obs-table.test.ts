import { describe, expect, it } from 'vitest';
import { ObsMessage, type Observation } from '@shadowplane/contracts';
import { synthCampaign, synthEvent, synthSpec } from '@shadowplane/testkit';
import { foldReport, observationId } from './fold.js';
import { cmpJoined } from './fold-util.js';
import { ObsTable } from './obs-table.js';

const reparsed = (msgs: readonly ObsMessage[]): ObsMessage[] =>
  msgs.map((m) => ObsMessage.parse(JSON.parse(JSON.stringify(m))));
const FIELDS = [
  'campaign_id',
  'item_hash',
  'call_type',
  'arm_id',
  'role',
  'instrument',
  'envelope_id',
  'provider',
  'model',
  'started_at',
  'ended_at',
  'start_skew_ms',
  'attempts',
  'status',
  'error_class',
  'latency_ms',
  'ttft_ms',
  'charged_micro_usd',
  'abandoned',
  'output_text',
  'prompt_simhash',
  'traffic_class',
  'expectations',
] as const;
const isObs = (m: ObsMessage): m is Observation => m.schema === 'shadow.observation/v1';

describe('ObsTable', () => {
  const cid = 'cmp_tabletabletable01';
  const msgs = [...synthCampaign(cid, 40, 0.9, { a: 'same', b: 0.7 }), synthEvent(cid, 3, 'duplicate', null)];

  it('gives back every field the fold reads, valued as in the message, and the lineage id', () => {
    const t = new ObsTable();
    const obs = reparsed(msgs).filter(isObs);
    // nulls, an absent output, a cost reason and an error: each column's null/absent case
    obs[1] = {
      ...obs[1]!,
      status: 'error',
      error_class: 'hang_timeout',
      latency_ms: null,
      ttft_ms: null,
      output_text: null,
      usage: { ...obs[1]!.usage, input_tokens: null, output_tokens: 0 },
      cost: { usd: null, micro_usd: null, basis: null, reason: 'provider_zero_with_billed_tokens' },
    };
    for (const o of obs) t.add(o);
    expect(t.length).toBe(obs.length);
    obs.forEach((o, r) => {
      const v = t.row(r);
      const { usage, cost } = o;
      const got = Object.fromEntries(FIELDS.map((k) => [k, v[k]]));
      const want = Object.fromEntries(FIELDS.map((k) => [k, k === 'output_text' ? (o.output_text ?? null) : o[k]]));
      expect(got).toEqual(want);
      const { raw: _raw, ...u } = usage;
      expect(v.usage).toEqual(u);
      expect(v.cost).toEqual({ usd: cost.usd, basis: cost.basis, ...(cost.reason ? { reason: cost.reason } : {}) });
      expect(t.id(r)).toBe(observationId(o));
    });
    // an item's arms share one frozen expectation list
    expect(Object.is(t.row(0).expectations, t.row(1).expectations)).toBe(true);
    expect(Object.isFrozen(t.row(0).expectations)).toBe(true);
    expect([...t.rowsOf(cid)]).toEqual(obs.map((_, r) => r));
    expect([...t.rowsOf('cmp_othercampaign0001')]).toEqual([]);
  });

  it('holds timestamps as ms only where the text comes back exactly, and orders them as their texts', () => {
    const t = new ObsTable();
    const base = reparsed(msgs).filter(isObs)[0]!;
    // toISOString's own form, then forms the schema also accepts: no fraction, other fraction
    // lengths, an offset, a year before 1970
    const texts = [
      '2026-11-01T12:00:00.500Z',
      '2026-11-01T12:00:00Z',
      '2026-11-01T12:00:00.5Z',
      '2026-11-01T12:00:00.123456Z',
      '2026-11-01T13:00:00.000+01:00',
      '1969-12-31T23:59:59.999Z',
      '2026-11-01T12:00:00.499Z',
    ];
    texts.forEach((x, i) => {
      const o = ObsMessage.parse({ ...base, started_at: x, ended_at: texts[texts.length - 1 - i] }) as Observation;
      t.add(o);
    });
    texts.forEach((x, r) => {
      expect(t.row(r).started_at).toBe(x);
      expect(t.row(r).ended_at).toBe(texts[texts.length - 1 - r]);
      for (let b = 0; b < texts.length; b++) {
        const want = x < texts[b]! ? -1 : x > texts[b]! ? 1 : 0;
        expect(t.cmpTime('started_at', r, b)).toBe(want);
      }
    });
    // only the exact toISOString forms are numbers
    expect([...t.tm.started_at.subarray(0, t.length)].map((v) => !Number.isNaN(v))).toEqual([
      true,
      false,
      false,
      false,
      false,
      true,
      true,
    ]);
  });

  it('keeps number columns in float32 only while every value is one exactly, and gives back every value', () => {
    const t = new ObsTable();
    const base = reparsed(msgs).filter(isObs)[0]!;
    const latencies = [512, 0.5, null, 250.25];
    const charged = [1200, 16_777_216, 33_554_433, 7];
    latencies.forEach((latency_ms, i) =>
      t.add(ObsMessage.parse({ ...base, latency_ms, charged_micro_usd: charged[i] }) as Observation),
    );
    expect(t.n.latency_ms).toBeInstanceOf(Float32Array);
    expect(t.n.charged_micro_usd).toBeInstanceOf(Float64Array); // 2^25 + 1 is not a float32
    // a value that is not a float32 widens the column, earlier rows kept
    t.add(ObsMessage.parse({ ...base, latency_ms: 0.1, charged_micro_usd: 3 }) as Observation);
    expect(t.n.latency_ms).toBeInstanceOf(Float64Array);
    expect(Array.from({ length: t.length }, (_, r) => t.row(r).latency_ms)).toEqual([...latencies, 0.1]);
    expect(Array.from({ length: t.length }, (_, r) => t.row(r).charged_micro_usd)).toEqual([...charged, 3]);
  });

  it('releaseOutputs() frees the texts: every other field still reads, output_text and add() throw', () => {
    const t = new ObsTable();
    const obs = reparsed(msgs).filter(isObs);
    for (const o of obs) t.add(o);
    expect(t.row(0).output_text).toBe(obs[0]!.output_text ?? null);
    t.releaseOutputs();
    expect(() => t.row(0).output_text).toThrow(/released/);
    expect(() => t.add(obs[0]!)).toThrow(/released/);
    expect(t.length).toBe(obs.length);
    expect(t.row(1).item_hash).toBe(obs[1]!.item_hash);
    expect(t.id(1)).toBe(observationId(obs[1]!));
  });

  it("intern() gives the pool's own copy of a string, adding it when new", () => {
    const t = new ObsTable();
    for (const o of reparsed(msgs).filter(isObs)) t.add(o);
    const h = t.row(0).item_hash;
    const copy = JSON.parse(JSON.stringify(h)) as string;
    expect(t.intern(copy)).toBe(h);
    const poolLength = t.pool.length;
    expect(t.intern('shadow.item_event/v1')).toBe('shadow.item_event/v1');
    expect(t.pool.length).toBe(poolLength + 1);
    expect(t.intern('shadow.item_event/v1')).toBe('shadow.item_event/v1');
    expect(t.pool.length).toBe(poolLength + 1);
  });

  it('compact() keeps every row, ids and lookups; rows added after it share the strings and lists as before', () => {
    const obs = reparsed(msgs).filter(isObs);
    const t = new ObsTable();
    const half = obs.length >> 1;
    // texts of every kind: latin1, wider (CJK, an emoji's surrogate pair), a lone surrogate, empty
    const texts = ['caf\u00e9 #### 4', '\u7b54\u3048 #### 4 \u{1f600}', 'broken \ud800 #### 4', ''];
    texts.forEach((text, k) => (obs[k] = { ...obs[k]!, output_text: text }));
    obs.slice(0, half).forEach((o, r) => t.add(o, r === 2 ? 'not-a-hex-id' : undefined));
    t.compact();
    expect([...t.rowsOf(cid)]).toEqual(obs.slice(0, half).map((_, r) => r));
    for (const o of obs.slice(half)) t.add(o);
    t.compact();
    expect(t.length).toBe(obs.length);
    obs.forEach((o, r) => {
      expect(t.id(r)).toBe(r === 2 ? 'not-a-hex-id' : observationId(o));
      expect(t.row(r).item_hash).toBe(o.item_hash);
      expect(t.row(r).output_text).toBe(o.output_text ?? null);
    });
    // the string pool and the shared lists are found again after compact(): no second copy
    expect(t.pool.filter((v) => v === cid)).toHaveLength(1);
    expect(Object.is(t.row(half - 1).expectations, t.row(obs.length - 1).expectations)).toBe(
      JSON.stringify(obs[half - 1]!.expectations) === JSON.stringify(obs.at(-1)!.expectations),
    );
    // cmpId orders as the id strings do, hex or not
    for (const [a, b] of [
      [0, 1],
      [1, 0],
      [2, 3],
      [3, 2],
      [5, 5],
      [obs.length - 1, 4],
    ] as const) {
      const x = t.id(a);
      const y = t.id(b);
      expect(t.cmpId(a, b)).toBe(x < y ? -1 : x > y ? 1 : 0);
    }
  });

  it('folds to the same report and bundle bytes whether the observations come as messages or as a table', () => {
    const spec = synthSpec(['a', 'b']);
    const campaign = { campaign_id: cid, spec, run_index: 1 };
    const asMessages = foldReport({ campaign, messages: reparsed(msgs), provisional: false });
    const observations = new ObsTable();
    const rest: ObsMessage[] = [];
    for (const m of reparsed(msgs))
      if (isObs(m)) observations.add(m);
      else rest.push(m);
    const asTable = foldReport({ campaign, messages: rest, observations, provisional: false });
    expect(asTable.reportJson).toBe(asMessages.reportJson);
    expect(asTable.runRecordJson).toBe(asMessages.runRecordJson);
    expect(asTable.bundle.bundle_hash).toBe(asMessages.bundle.bundle_hash);
  });
});

describe('cmpJoined', () => {
  it("orders tuples as their '|'-joined strings do, prefixes included", () => {
    const cases: [string[], string[]][] = [
      [
        ['a', 'x'],
        ['ab', 'y'],
      ],
      [
        ['ab', 'y'],
        ['a', 'x'],
      ],
      [['a'], ['a', 'b']],
      [
        ['a|', 'b'],
        ['a', '|b'],
      ],
      [
        ['a', '}'],
        ['a}', 'x'],
      ],
      [
        ['same', 'same'],
        ['same', 'same'],
      ],
      [
        ['2026-01-01T00:00:00Z', 'e'],
        ['2026-01-01T00:00:00.5Z', 'e'],
      ],
    ];
    for (const [a, b] of cases) {
      const ja = a.join('|');
      const jb = b.join('|');
      expect(cmpJoined(a, b)).toBe(ja < jb ? -1 : ja > jb ? 1 : 0);
    }
  });
});
