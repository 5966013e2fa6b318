import { describe, expect, it } from 'vitest';
import { ObsMessage } from '@shadowplane/contracts';
import { synthCampaign, synthEvent, synthSpec } from '@shadowplane/testkit';
import { fastCanonicalJson } from './canonical-fast.js';
import { foldReport } from './fold.js';
import { lazyRows } from './fold-rows.js';

const reparsed = (msgs: readonly ObsMessage[]): ObsMessage[] =>
  msgs.map((m) => ObsMessage.parse(JSON.parse(JSON.stringify(m))));

describe('lazyRows', () => {
  it('reads as an array whose rows are built on each read, and refuses writes', () => {
    let built = 0;
    const xs = lazyRows(3, (i) => {
      built++;
      return { i };
    });
    expect(Array.isArray(xs)).toBe(true);
    expect(xs.length).toBe(3);
    expect(xs[1]).toEqual({ i: 1 });
    expect(xs[3]).toBeUndefined();
    expect(xs.filter((x) => x.i > 0)).toEqual([{ i: 1 }, { i: 2 }]);
    expect([...xs]).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }]);
    expect(JSON.stringify(xs)).toBe('[{"i":0},{"i":1},{"i":2}]');
    expect(fastCanonicalJson(xs)).toBe('[{"i":0},{"i":1},{"i":2}]');
    expect(Object.keys(xs)).toEqual(['0', '1', '2']);
    expect(built).toBeGreaterThan(3);
    expect(() => {
      (xs as { i: number }[])[0] = { i: 9 };
    }).toThrow(TypeError);
    expect(() => xs.push({ i: 3 })).toThrow(TypeError);
  });
});

describe('foldReport lazyRows', () => {
  it('gives the same report, bundle JSON and hashes as plain rows', () => {
    const cid = 'cmp_lazylazylazylazy01';
    const msgs = [
      ...synthCampaign(cid, 60, 0.9, { a: 'same', b: 0.7 }),
      synthEvent(cid, 3, 'duplicate', null),
      synthEvent(cid, 5, 'excluded', 'pii_uncertain'),
    ];
    const campaign = { campaign_id: cid, spec: synthSpec(['a', 'b']), run_index: 1 };
    const plain = foldReport({ campaign, messages: reparsed(msgs), provisional: false });
    const lazy = foldReport({ campaign, messages: reparsed(msgs), lazyRows: true, provisional: false });
    expect(lazy.reportJson).toBe(plain.reportJson);
    expect(lazy.bundle.hashes).toEqual(plain.bundle.hashes);
    expect(lazy.bundle.bundle_hash).toBe(plain.bundle.bundle_hash);
    expect(fastCanonicalJson(lazy.bundle)).toBe(fastCanonicalJson(plain.bundle));
    expect(lazy.bundle.parts.cost_evidence.length).toBeGreaterThan(100);
    expect(lazy.bundle.parts.paired.every((p) => p.rows.length > 0)).toBe(true);
  });
});
