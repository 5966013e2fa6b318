/**
 * libs/stats against the shared reference vectors (test/vectors/stats.json, generated with numpy
 * and scipy outside this code). Analytic cases must match to ~1e-12; bootstrap cases within each
 * case's stated tolerance_abs, with ≥ 2000 resamples, for several seeds.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  mdePpPaired,
  normPpf,
  pairedClusterBootstrap,
  twoProportionZ,
  wilsonInterval,
  holm,
  CONSERVATIVE_SD_DIFF,
  type PairedItem,
} from '@shadowplane/stats';

interface RawItem {
  cluster: number;
  weight: number;
  q_incumbent: number;
  q_candidate: number;
  cost_incumbent_usd: number;
  cost_candidate_usd: number;
}
interface Band {
  point: number;
  p05: number;
  p95: number;
}
interface Vectors {
  cases: {
    wilson_95: { successes: number; n: number; interval: [number, number] }[];
    norm_ppf: { p: number; z: number }[];
    two_proportion_z: { x1: number; n1: number; x2: number; n2: number; z: number; p_two_sided: number }[];
    holm: { p: number[]; adjusted: number[] }[];
    mde_pp_paired: { sd_diff: number; clusters: number; alpha_one_sided: number; power: number; mde_pp: number }[];
    paired_cluster_bootstrap: {
      name: string;
      items: RawItem[];
      quality_delta: Band;
      cost_savings: Band;
      resamples: number;
      tolerance_abs: number;
    }[];
  };
}

const vectors = JSON.parse(
  readFileSync(new URL('../../../test/vectors/stats.json', import.meta.url), 'utf8'),
) as Vectors;
const { cases } = vectors;
const ANALYTIC_TOL = 1e-12;

const toItems = (raw: RawItem[]): PairedItem[] =>
  raw.map((r) => ({
    cluster: r.cluster,
    weight: r.weight,
    qIncumbent: r.q_incumbent,
    qCandidate: r.q_candidate,
    costIncumbentUsd: r.cost_incumbent_usd,
    costCandidateUsd: r.cost_candidate_usd,
  }));

describe('reference vectors (test/vectors/stats.json)', () => {
  it('has every case family this suite checks', () => {
    for (const k of [
      'wilson_95',
      'norm_ppf',
      'two_proportion_z',
      'holm',
      'mde_pp_paired',
      'paired_cluster_bootstrap',
    ] as const)
      expect(cases[k].length).toBeGreaterThan(0);
  });

  it.each(cases.wilson_95.map((c) => [`${c.successes}/${c.n}`, c] as const))(
    'wilsonInterval(%s) at 95%% matches',
    (_n, c) => {
      const [lo, hi] = wilsonInterval(c.successes, c.n);
      expect(Math.abs(lo - c.interval[0])).toBeLessThan(ANALYTIC_TOL);
      expect(Math.abs(hi - c.interval[1])).toBeLessThan(ANALYTIC_TOL);
    },
  );

  it.each(cases.norm_ppf.map((c) => [c.p, c] as const))('normPpf(%s) matches', (_p, c) => {
    expect(Math.abs(normPpf(c.p) - c.z)).toBeLessThan(ANALYTIC_TOL);
  });

  it.each(cases.two_proportion_z.map((c) => [`${c.x1}/${c.n1} vs ${c.x2}/${c.n2}`, c] as const))(
    'twoProportionZ(%s) matches z and two-sided p',
    (_n, c) => {
      const r = twoProportionZ(c.x1, c.n1, c.x2, c.n2);
      expect(Math.abs(r.z - c.z)).toBeLessThan(ANALYTIC_TOL);
      expect(Math.abs(r.pTwoSided - c.p_two_sided)).toBeLessThan(ANALYTIC_TOL);
    },
  );

  it.each(cases.holm.map((c) => [JSON.stringify(c.p), c] as const))('holm(%s) matches', (_n, c) => {
    const adj = holm(c.p);
    expect(adj).toHaveLength(c.adjusted.length);
    adj.forEach((a, i) => expect(Math.abs(a - c.adjusted[i]!)).toBeLessThan(ANALYTIC_TOL));
  });

  it.each(cases.mde_pp_paired.map((c) => [`sd ${c.sd_diff}, ${c.clusters} clusters`, c] as const))(
    'mdePpPaired(%s) matches',
    (_n, c) => {
      const mde = mdePpPaired({
        sdDiff: c.sd_diff,
        clusters: c.clusters,
        alphaOneSided: c.alpha_one_sided,
        power: c.power,
      });
      expect(Math.abs(mde - c.mde_pp)).toBeLessThan(1e-10);
    },
  );

  it("CONSERVATIVE_SD_DIFF is the vectors' conservative prior √0.5", () => {
    expect(CONSERVATIVE_SD_DIFF).toBe(cases.mde_pp_paired[0]!.sd_diff);
  });

  /**
   * Each case at the fixed seed 1 with B = 2000, and at five more seeds. small_n (6 clusters) is a
   * discrete bootstrap distribution: its exact 5% quantile of S sits where the exact CDF is 0.0483
   * just below it (see the enumeration test below), so an estimate from B = 2000 resamples falls to
   * the next lower atom for about a quarter of seeds (measured: 46 of 200 seeds). That is Monte
   * Carlo error of the case, not of the method: with B = 50,000 (6 clusters, ~25 ms) 200 of 200
   * seeds land. So the several-seed check for small_n uses B = 50,000.
   */
  const SEEDS = [1, 2, 3, 20260101, 987654321];
  describe.each(cases.paired_cluster_bootstrap.map((c) => [c.name, c] as const))(
    'pairedClusterBootstrap case %s',
    (_name, c) => {
      const items = toItems(c.items);
      it.each(SEEDS.map((seed) => [seed, seed === 1 || c.name !== 'small_n' ? 2000 : 50_000] as const))(
        'lands within tolerance_abs with seed %i and %i resamples',
        (seed, resamples) => {
          const r = pairedClusterBootstrap(items, { resamples, seed, level: 0.9 });
          const tol = c.tolerance_abs;
          expect(Math.abs(r.qualityDelta.point - c.quality_delta.point)).toBeLessThan(1e-12);
          expect(Math.abs(r.qualityDelta.lower - c.quality_delta.p05)).toBeLessThanOrEqual(tol);
          expect(Math.abs(r.qualityDelta.upper - c.quality_delta.p95)).toBeLessThanOrEqual(tol);
          expect(r.costSavings).not.toBeNull();
          expect(Math.abs(r.costSavings!.point - c.cost_savings.point)).toBeLessThan(1e-12);
          expect(Math.abs(r.costSavings!.lower - c.cost_savings.p05)).toBeLessThanOrEqual(tol);
          expect(Math.abs(r.costSavings!.upper - c.cost_savings.p95)).toBeLessThanOrEqual(tol);
          expect(r).toMatchObject({
            resamples,
            seed,
            level: 0.9,
            items: c.items.length,
            clusters: new Set(c.items.map((i) => i.cluster)).size,
          });
        },
      );
    },
  );

  it('small_n: the reference p05/p95 are the exact type-7 quantiles of all 6^6 equally likely cluster draws, and a large-B bootstrap converges to them', () => {
    const c = cases.paired_cluster_bootstrap.find((x) => x.name === 'small_n')!;
    // Independent exact computation: enumerate every ordered draw of k clusters from k.
    const sums = new Map<number, [number, number, number, number]>();
    for (const r of c.items) {
      const s = sums.get(r.cluster) ?? [0, 0, 0, 0];
      s[0] += r.weight;
      s[1] += r.weight * (r.q_candidate - r.q_incumbent);
      s[2] += r.weight * r.cost_incumbent_usd;
      s[3] += r.weight * r.cost_candidate_usd;
      sums.set(r.cluster, s);
    }
    const cl = [...sums.values()];
    const k = cl.length;
    const total = k ** k;
    const d: number[] = [];
    const sv: number[] = [];
    const digits = new Array<number>(k).fill(0);
    for (let n = 0; n < total; n++) {
      let x = n;
      for (let j = 0; j < k; j++) {
        digits[j] = x % k;
        x = Math.floor(x / k);
      }
      let w = 0,
        wd = 0,
        xi = 0,
        xc = 0;
      for (const j of digits) {
        const s = cl[j]!;
        w += s[0];
        wd += s[1];
        xi += s[2];
        xc += s[3];
      }
      d.push(wd / w);
      sv.push(1 - xc / xi);
    }
    const q7 = (a: number[], p: number): number => {
      const b = [...a].sort((u, v) => u - v);
      const h = (b.length - 1) * p;
      const lo = Math.floor(h);
      return b[lo]! + (h - lo) * (b[Math.min(lo + 1, b.length - 1)]! - b[lo]!);
    };
    expect(Math.abs(q7(d, 0.05) - c.quality_delta.p05)).toBeLessThan(1e-9);
    expect(Math.abs(q7(d, 0.95) - c.quality_delta.p95)).toBeLessThan(1e-9);
    expect(Math.abs(q7(sv, 0.05) - c.cost_savings.p05)).toBeLessThan(1e-3);
    expect(Math.abs(q7(sv, 0.95) - c.cost_savings.p95)).toBeLessThan(1e-3);
    const r = pairedClusterBootstrap(toItems(c.items), { resamples: 200_000, seed: 7, level: 0.9 });
    expect(Math.abs(r.costSavings!.lower - q7(sv, 0.05))).toBeLessThan(0.01);
    expect(Math.abs(r.costSavings!.upper - q7(sv, 0.95))).toBeLessThan(0.01);
  });
});
