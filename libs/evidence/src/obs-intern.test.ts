import { describe, expect, it } from 'vitest';
import { ObsMessage, type Observation } from '@shadowplane/contracts';
import { synthCampaign, synthSpec } from '@shadowplane/testkit';
import { foldReport, observationId } from './fold.js';
import { appendAll } from './fold-util.js';
import { obsInterner } from './obs-intern.js';
import { ObsTable } from './obs-table.js';

/** Each message as if read from its own line: a fresh parse, no value shared with another. */
const reparsed = (msgs: readonly ObsMessage[]): ObsMessage[] =>
  msgs.map((m) => ObsMessage.parse(JSON.parse(JSON.stringify(m))));

describe('obsInterner', () => {
  const cid = 'cmp_interninterninte01';
  const msgs = synthCampaign(cid, 40, 0.9, { a: 'same', b: 0.7 });

  it('shares repeated strings and expectation lists among messages, leaving each message equal value for value', () => {
    const plain = reparsed(msgs);
    const intern = obsInterner();
    const shared = reparsed(msgs).map((m) => intern(m));
    expect(shared).toEqual(plain);
    const obs = shared.filter((m): m is Observation => m.schema === 'shadow.observation/v1');
    const [x, y] = obs.filter((o) => o.item_hash === obs[0]!.item_hash);
    // the arms of one item now hold one instance of its hash and of its expectations
    expect(Object.is(x!.expectations, y!.expectations)).toBe(true);
    expect(Object.isFrozen(x!.expectations)).toBe(true);
    expect(() => (x!.expectations as unknown[]).push({})).toThrow(TypeError);
    expect(obs.map((o) => observationId(o))).toEqual(
      plain.filter((m): m is Observation => m.schema === 'shadow.observation/v1').map((o) => observationId(o)),
    );
  });

  it('leaves long expectation lists unshared: their JSON key would cost as much as the list', () => {
    const intern = obsInterner();
    const long = [{ kind: 'must_include' as const, value: ['x'.repeat(2000)] }];
    const [x, y] = reparsed(msgs)
      .filter((m): m is Observation => m.schema === 'shadow.observation/v1')
      .slice(0, 2)
      .map((o) => intern({ ...o, expectations: structuredClone(long) }));
    expect(x!.expectations).toEqual(y!.expectations);
    expect(Object.is(x!.expectations, y!.expectations)).toBe(false);
    expect(Object.isFrozen(x!.expectations)).toBe(false);
  });

  it('leaves the fold unchanged: same report bytes and report id as the messages without interning', () => {
    const spec = synthSpec(['a', 'b']);
    const campaign = { campaign_id: cid, spec, run_index: 1 };
    const before = foldReport({ campaign, messages: reparsed(msgs), provisional: false });
    const intern = obsInterner();
    const after = foldReport({ campaign, messages: reparsed(msgs).map((m) => intern(m)), provisional: false });
    expect(after.reportJson).toBe(before.reportJson);
    expect(after.bundle.bundle_hash).toBe(before.bundle.bundle_hash);
  });
});

describe('appendAll', () => {
  it('appends 300,000 rows in order where push(...rows) overflows the call stack', () => {
    const rows = Array.from({ length: 300_000 }, (_, i) => i);
    expect(() => [].push(...(rows as never[]))).toThrow(RangeError);
    const out = [-1];
    appendAll(out, rows);
    expect(out.length).toBe(300_001);
    expect(out[300_000]).toBe(299_999);
  });
  it('interns into a given table instead of its own (the offline fold shares the ObsTable pool)', () => {
    const t = new ObsTable();
    const msgs = reparsed(synthCampaign('cmp_sharedsharedsh01', 4, 0.9, { a: 'same' }));
    const obs = msgs.filter((m): m is Observation => m.schema === 'shadow.observation/v1');
    for (const o of obs) t.add(o);
    const ev = JSON.parse(JSON.stringify({ ...obs[0]!, schema: 'x' })) as Record<string, unknown>;
    const had = new Set(t.pool);
    const fresh = new Set(
      Object.entries(ev)
        .filter(([k, v]) => k !== 'output_text' && typeof v === 'string' && !had.has(v))
        .map(([, v]) => v),
    );
    const before = t.pool.length;
    const intern = obsInterner((v) => t.intern(v));
    intern(ev as unknown as ObsMessage);
    // values the table holds (item_hash, campaign id, ...) are found there; only the others
    // (the new schema name, the timestamps it keeps as numbers) join its pool
    expect(fresh.has('x')).toBe(true);
    expect(fresh.has(ev.item_hash as string)).toBe(false);
    expect(new Set(t.pool.slice(before))).toEqual(fresh);
  });
});
