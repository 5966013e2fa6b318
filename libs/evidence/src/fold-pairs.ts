/**
 * Fold stage 6a (per call type × candidate): pairing. Incumbent vs candidate per admitted item,
 * only where both arms have an ok, scored observation; a same-family judge is refused for the
 * pair; pairwise judge preferences join the composites; bases never blend: the deciding basis is
 * the majority among same-basis pairs (`estimate` never decides) and every other pair is
 * excluded and counted.
 */
import type { CampaignSpec, CostBasis } from '@shadowplane/contracts';
import type { FoldObs, ObsTable } from './obs-table.js';
import { compositeQuality, type ScoreResult } from '@shadowplane/scoring';
import type { JudgeAgreementRow } from './bundle.js';
import { weakestInstrument, type PairRow } from './compare.js';
import { preference, type judgeInputs } from './judge-fold.js';
import type { ScoredIndex, ScoredObs } from './fold-scored.js';
import { inc } from './fold-util.js';
import { PairStore, lazyRows } from './fold-rows.js';

/** The pairs of one candidate and what was excluded on the way. */
export interface CandidatePairs {
  /**
   * pairs on the deciding basis, sorted by item_hash; with `lazyIds`, a read-only array whose rows
   * are built from the columns on each read, their lineage ids read on access (not for JSON)
   */
  rows: PairRow[];
  /** the same rows as the bundle writes them (plain objects, built on each read with `lazyIds`) */
  bundleRows: PairRow[];
  basis: 'provider_reported' | 'rate_card' | null;
  /** excluded pair counts by reason */
  excluded: Record<string, number>;
  instrument: ReturnType<typeof weakestInstrument>;
  judgeRefused: string | null;
  /** judge weight share of each pair's composites, by row of `rows` */
  judgeShares: Float64Array;
  /** the rows' item hashes in the order their pairs were complete: the sequential look order */
  arrivalOrder: () => string[];
  hardFails: number;
  ceiling: number;
  unscoredPairs: number;
  okPairs: number;
  /** pairwise (judge, programmatic) labels */
  agreement: [string, string][];
  agreementRows: JudgeAgreementRow[];
}

/** Stage 6a (pure): pairs the incumbent with `cand` over the admitted items of call type `ct`. */
export function pairCandidate(p: {
  ct: string;
  spec: CampaignSpec;
  cand: CampaignSpec['incumbent'];
  admitted: readonly string[];
  table: ObsTable;
  scored: ScoredIndex;
  /** per admitted item (index in `admitted`): table row of its first observation, weight, cluster */
  firstRow: Int32Array;
  weights: Float64Array;
  clusters: readonly string[];
  judgeScores: ReadonlyMap<string, ScoreResult> | undefined;
  judgeWeight: number;
  judgeFamily: string | undefined;
  armFamilies: Readonly<Record<string, string>> | undefined;
  ji: ReturnType<typeof judgeInputs>;
  verdictsCount: number;
  /**
   * true: `rows` and `bundleRows` are built from the pair columns on each read (fold-rows.ts
   * lazyRows), for a caller that hashes and writes the bundle and drops it; else plain rows.
   */
  lazyIds?: boolean;
}): CandidatePairs {
  const {
    ct,
    spec,
    cand,
    admitted,
    table,
    scored,
    firstRow,
    weights,
    clusters,
    judgeScores,
    judgeWeight,
    judgeFamily,
    armFamilies,
    ji,
  } = p;
  const agreement: [string, string][] = [];
  const agreementRows: JudgeAgreementRow[] = [];
  const excluded: Record<string, number> = {};
  const pairsByBasis = new Map<CostBasis, PairStore>();
  const items = { admitted, clusters, weights, firstRow };
  // both calls' instruments of each pair, per basis (the weakest of the deciding basis's pairs)
  const instrumentsByBasis = new Map<CostBasis, FoldObs['instrument'][]>();
  const offBasisPairs: { basisInc: CostBasis | null; basisCand: CostBasis | null; h: string }[] = [];
  let hardFails = 0;
  let ceiling = 0;
  // same-family judge refusal for this pair
  const fam = (a: { id: string; provider: string }) => armFamilies?.[a.id] ?? a.provider;
  const judgeRefused =
    (judgeScores !== undefined || ji.pairwise.size > 0 || p.verdictsCount > 0) &&
    judgeFamily !== undefined &&
    [fam(spec.incumbent), fam(cand)].includes(judgeFamily)
      ? `judge family ${judgeFamily} equals the family of ${fam(spec.incumbent) === judgeFamily ? spec.incumbent.id : cand.id}: judge scores not used for this pair`
      : null;
  const comp = (x: ScoredObs) => (judgeRefused ? x.compositeNoJudge : x.composite);
  let unscoredPairs = 0;
  let okPairs = 0;
  for (let i = 0; i < admitted.length; i++) {
    const h = admitted[i]!;
    const a = scored.get(firstRow[i]!, spec.incumbent.id, 'incumbent');
    const b = scored.get(firstRow[i]!, cand.id, 'candidate');
    if (b?.obs.status === 'ok') {
      if (comp(b)?.hardFailed) hardFails++;
      if (
        spec.max_request_cost_usd !== undefined &&
        b.obs.cost.usd !== null &&
        b.obs.cost.basis !== 'estimate' &&
        b.obs.cost.usd > spec.max_request_cost_usd
      )
        ceiling++;
    }
    if (!a) {
      inc(excluded, 'incumbent_missing');
      continue;
    }
    if (!b) {
      inc(excluded, 'candidate_missing');
      continue;
    }
    if (a.obs.status !== 'ok') {
      inc(excluded, `incumbent_error:${a.obs.error_class ?? 'unknown'}`);
      continue;
    }
    if (b.obs.status !== 'ok') {
      inc(excluded, `candidate_error:${b.obs.error_class ?? 'unknown'}`);
      continue;
    }
    okPairs++;
    let qa = comp(a)?.quality ?? null;
    let qb = comp(b)?.quality ?? null;
    let pairShare: number | null = null;
    // pairwise judge: the candidate's preference p and the incumbent's 1 − p join this pair's composites
    const pw = judgeRefused ? undefined : ji.pairwise.get(`${ct}|${h}|${cand.id}`);
    if (pw !== undefined) {
      const jr = (x: number): ScoreResult => ({
        score: x,
        scorer: 'judge:pairwise',
        detail: 'pairwise judge',
        source: 'judge',
      });
      const ca = compositeQuality([...a.scores, jr(1 - pw)], judgeWeight);
      const cb = compositeQuality([...b.scores, jr(pw)], judgeWeight);
      qa = ca.quality;
      qb = cb.quality;
      pairShare = Math.max(ca.judgeShare ?? 0, cb.judgeShare ?? 0);
      const pa = a.compositeNoJudge?.quality ?? null;
      const pb = b.compositeNoJudge?.quality ?? null;
      if (
        pa !== null &&
        pb !== null &&
        a.scores.some((x) => x.score !== null) &&
        b.scores.some((x) => x.score !== null)
      ) {
        agreement.push([preference(pw), preference(0.5 + (pb - pa) / 2)]);
        agreementRows.push({
          call_type: ct,
          verdict_key: `${ct}|${h}|${cand.id}|candidate|pairwise`,
          mode: 'pairwise',
          judge: pw,
          programmatic: 0.5 + (pb - pa) / 2,
        });
      }
    }
    // replay pairs carry no outputs: they are priced only, never scored (compare.ts capByInstrument)
    if (a.obs.instrument === 'replay' && b.obs.instrument === 'replay') {
      qa = 0;
      qb = 0;
    }
    if (qa === null || qb === null) {
      inc(excluded, 'unscored');
      unscoredPairs++;
      continue;
    }
    const ba = a.obs.cost.usd === null ? null : a.obs.cost.basis;
    const bb = b.obs.cost.usd === null ? null : b.obs.cost.basis;
    if (ba === null || bb === null || ba !== bb) {
      offBasisPairs.push({ basisInc: ba, basisCand: bb, h });
      continue;
    }
    let store = pairsByBasis.get(ba);
    if (!store) pairsByBasis.set(ba, (store = new PairStore(table, items)));
    store.push(i, a.row, b.row, qa, qb, pairShare ?? Math.max(comp(a)?.judgeShare ?? 0, comp(b)?.judgeShare ?? 0));
    const insts = instrumentsByBasis.get(ba);
    if (insts) insts.push(a.obs.instrument, b.obs.instrument);
    else instrumentsByBasis.set(ba, [a.obs.instrument, b.obs.instrument]);
  }
  // choose the deciding basis: majority among same-basis pairs, estimate never decides
  let basis: 'provider_reported' | 'rate_card' | null = null;
  for (const bs of ['provider_reported', 'rate_card'] as const) {
    const n = pairsByBasis.get(bs)?.length ?? 0;
    if (n > 0 && (basis === null || n > (pairsByBasis.get(basis)?.length ?? 0))) basis = bs;
  }
  // admitted is sorted by item_hash, so each basis's rows are too
  const store = basis ? pairsByBasis.get(basis)! : new PairStore(table, items, 0);
  for (const [bs, st] of pairsByBasis)
    if (bs !== basis) inc(excluded, bs === 'estimate' ? 'estimate_basis' : 'off_basis', st.length);
  for (const p of offBasisPairs) inc(excluded, p.basisInc === null || p.basisCand === null ? 'unpriced' : 'off_basis');
  const lazy = p.lazyIds === true;
  const rows = lazy
    ? lazyRows(store.length, (i) => store.view(i))
    : Array.from({ length: store.length }, (_, i) => store.at(i));
  const bundleRows = lazy ? lazyRows(store.length, (i) => store.at(i)) : rows;
  const instrument = weakestInstrument(basis ? instrumentsByBasis.get(basis)! : []);
  return {
    rows,
    bundleRows,
    basis,
    excluded,
    instrument,
    judgeRefused,
    judgeShares: store.judgeShares(),
    arrivalOrder: () => store.arrivalOrder(),
    hardFails,
    ceiling,
    unscoredPairs,
    okPairs,
    agreement,
    agreementRows,
  };
}
