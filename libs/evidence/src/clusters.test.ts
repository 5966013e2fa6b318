import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clusterBySimhash, hammingDistance64 } from './index.js';
import { clusterIdsBySimhash } from './clusters.js';

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
  it('gives the clusters of a pairwise check of every two items (random near-duplicate families, bad SimHashes)', () => {
    // reference: union-find over all pairs, distance from the 64 bits; a SimHash that is not 16
    // lowercase hex digits joins only its identical text
    const reference = (items: [string, string][]): string[] => {
      const ok = (s: string) => /^[0-9a-f]{16}$/.test(s);
      const parent = items.map((_, i) => i);
      const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
      for (let i = 0; i < items.length; i++)
        for (let j = i + 1; j < items.length; j++) {
          const [a, b] = [items[i]![1], items[j]![1]];
          const near = ok(a) && ok(b) ? hammingDistance64(a, b) <= 3 : a === b;
          if (near) parent[find(j)] = find(i);
        }
      const rep = new Map<number, string>();
      items.forEach(([h], i) => {
        const r = find(i);
        if (!rep.has(r) || h < rep.get(r)!) rep.set(r, h);
      });
      return items.map((_, i) => rep.get(find(i))!);
    };
    const flip = (s: string, bit: number) => {
      const v = BigInt(`0x${s}`) ^ (1n << BigInt(bit));
      return v.toString(16).padStart(16, '0');
    };
    const hex16 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map((v) => v.toString(16).padStart(16, '0'));
    const family = fc.tuple(
      hex16,
      fc.array(fc.array(fc.integer({ min: 0, max: 63 }), { maxLength: 5 }), { maxLength: 4 }),
    );
    fc.assert(
      fc.property(
        fc.array(family, { minLength: 1, maxLength: 12 }),
        fc.array(fc.constantFrom('ZZZZ', '00000000000000000', 'ABCDEF0123456789'), { maxLength: 2 }),
        (families, bad) => {
          const sims = families.flatMap(([base, variants]) => [
            base,
            ...variants.map((bits) => bits.reduce((s, b) => flip(s, b), base)),
          ]);
          const items = [...sims, ...bad, ...bad].map(
            (s, i) => [`${String(1000 + ((i * 7919) % 997))}-${i}`, s] as [string, string],
          );
          const ids = clusterIdsBySimhash(
            items.length,
            (i) => items[i]![0],
            (i) => items[i]![1],
          );
          expect(ids).toEqual(reference(items));
          expect([...clusterBySimhash(items).values()]).toEqual(ids);
        },
      ),
      { numRuns: 300, seed: 20261206 },
    );
  });
});
