import { describe, expect, it } from 'vitest';
import { clusterBySimhash, hammingDistance64 } from './index.js';

const h = (c: string) => c.repeat(64);

describe('near-duplicate clusters by SimHash', () => {
  it('measures Hamming distance over all 64 bits', () => {
    expect(hammingDistance64('0000000000000000', '0000000000000000')).toBe(0);
    expect(hammingDistance64('0000000000000000', 'ffffffffffffffff')).toBe(64);
    expect(hammingDistance64('8000000000000001', '0000000000000000')).toBe(2);
    expect(hammingDistance64('0000000100000000', '0000000000000000')).toBe(1);
  });
  it('joins items within 3 bits, not 4, transitively, with the smallest item hash as id', () => {
    const m = clusterBySimhash([
      [h('b'), '0000000000000000'],
      [h('a'), '0000000000000007'], // 3 bits from b → same cluster
      [h('c'), '000000000000003f'], // 3 bits from a (6 from b) → joins transitively
      [h('d'), '00000000000f0000'], // 4 bits from b, ≥ 4 from a and c → alone
      [h('e'), 'ffffffffffffffff'],
      [h('f'), 'ffffffffffffffff'], // identical → same cluster
    ]);
    expect([...m.entries()]).toEqual([
      [h('b'), h('a')],
      [h('a'), h('a')],
      [h('c'), h('a')],
      [h('d'), h('d')],
      [h('e'), h('e')],
      [h('f'), h('e')],
    ]);
  });
  it('finds pairs whose differing bits fall in three different 16-bit bands', () => {
    const m = clusterBySimhash([
      [h('1'), '0000000000000000'],
      [h('2'), '0001000100010000'],
    ]);
    expect(m.get(h('2'))).toBe(h('1'));
  });
});
