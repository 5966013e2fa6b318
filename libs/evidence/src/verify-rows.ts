import type { BundleParts, CostEvidenceRow } from './bundle.js';
import { fastCanonicalJson as canonicalJson } from './canonical-fast.js';
import { comparisonPowerPlan, type PairRow } from './compare.js';
import { sdOfDifferences } from '@shadowplane/stats';
import { sameNumber, type AddProblem, type Obj } from './verify-util.js';

// The checks of the bundle's supporting rows against the report (`callTypes` = report.call_types).

/** The A-A sd from its recorded differences, and each comparison's power plan from its paired rows. */
export function checkPowerPlans(parts: BundleParts, callTypes: Obj[], add: AddProblem): void {
  const noiseFloorOf = new Map<string, { pairs: number; sd: number | null }>();
  (parts.aa ?? []).forEach((aa, i) => {
    const sd = aa.diffs.length >= 2 ? sdOfDifferences(aa.diffs) : null;
    if (!sameNumber(aa.sd, sd)) add(`parts.aa[${i}].sd`, sd, aa.sd, 'A-A sd differs from the recorded differences');
    noiseFloorOf.set(aa.call_type, { pairs: aa.diffs.length, sd });
  });
  callTypes.forEach((ct, c) => {
    ((ct.comparisons ?? []) as Obj[]).forEach((cmp, m) => {
      const pp = cmp.power_plan as Obj | null;
      if (!pp || typeof pp.clusters !== 'number' || pp.sd_source === 'aa_pairs') return;
      const pr = (parts.paired ?? []).find(
        (x) => x.call_type === ct.call_type && x.candidate_arm_id === cmp.candidate_arm_id,
      );
      const plan = comparisonPowerPlan((pr?.rows ?? []) as PairRow[], {
        clusters: pp.clusters,
        alpha_one_sided: pp.alpha_one_sided as number,
        margin_pp: pp.margin_pp as number,
        noise_floor: noiseFloorOf.get(ct.call_type as string) ?? { pairs: 0, sd: null },
      });
      const base = `parts.report.call_types[${c}].comparisons[${m}].power_plan`;
      for (const f of [
        'sd_diff',
        'sd_source',
        'mde_pp',
        'clusters_needed_for_margin',
        'powered',
        'noise_floor_sd',
      ] as const) {
        if (!sameNumber(pp[f] ?? null, plan[f] ?? null))
          add(`${base}.${f}`, plan[f], pp[f], `power plan ${f} differs from the one recomputed from the paired rows`);
      }
    });
  });
}

/** Every paired row and cost-evidence row names an observation listed in the lineage. */
export function checkLineage(parts: BundleParts, add: AddProblem): void {
  const lineage = new Set<string>(parts.lineage?.observation_ids ?? []);
  (parts.paired ?? []).forEach((pr, i) =>
    (pr.rows as PairRow[]).forEach((r, j) => {
      for (const f of ['obs_inc', 'obs_cand'] as const)
        if (!lineage.has(r[f]))
          add(
            `parts.paired[${i}].rows[${j}].${f}`,
            'an id in parts.lineage.observation_ids',
            r[f],
            'paired row names an observation missing from the lineage',
          );
    }),
  );
  (parts.cost_evidence ?? []).forEach((e, i) => {
    if (!lineage.has(e.obs_id))
      add(
        `parts.cost_evidence[${i}].obs_id`,
        'an id in parts.lineage.observation_ids',
        e.obs_id,
        'cost evidence names an observation missing from the lineage',
      );
  });
}

/** Each arm's priced count, per-request mean and basis from the cost evidence; dataset cards equal the report's. */
export function checkCostViews(parts: BundleParts, callTypes: Obj[], add: AddProblem): void {
  const ev = (parts.cost_evidence ?? []) as CostEvidenceRow[];
  callTypes.forEach((ct, c) => {
    ((ct.arms ?? []) as Obj[]).forEach((arm, a) => {
      const rows = ev.filter((e) => e.call_type === ct.call_type && e.arm_id === arm.arm_id && e.on_basis);
      const cost = arm.cost as Obj;
      const total = rows.reduce((x, e) => x + (e.usd ?? 0), 0);
      const mean = rows.length ? total / rows.length : null;
      const p = `parts.report.call_types[${c}].arms[${a}].cost`;
      if (!sameNumber(cost.n_priced, rows.length))
        add(`${p}.n_priced`, rows.length, cost.n_priced, 'priced count differs from the cost evidence');
      if (!sameNumber(cost.per_request_mean_usd, mean))
        add(
          `${p}.per_request_mean_usd`,
          mean,
          cost.per_request_mean_usd,
          'per-request mean differs from the cost evidence',
        );
      if (rows.some((e) => e.basis !== cost.basis))
        add(
          `${p}.basis`,
          cost.basis,
          rows.find((e) => e.basis !== cost.basis)?.basis,
          'cost evidence on another basis was counted (bases never blend)',
        );
    });
    const card = (parts.dataset_cards ?? [])[c];
    if (canonicalJson(card ?? null) !== canonicalJson(ct.dataset_card ?? null))
      add(`parts.dataset_cards[${c}]`, ct.dataset_card, card, 'dataset card differs from the report');
  });
}
