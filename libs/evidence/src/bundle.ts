/**
 * The evidence bundle: everything a reviewer needs to re-check a report offline, and the run
 * record of the run that produced it. The report part is reproducible (same evidence → same
 * report_id); the run record, run spec (campaign id) and lineage (envelope and observation ids)
 * are specific to the run, so the bundle hash is per run.
 */
import { fastContentHash } from './canonical-fast.js';
import {
  type DatasetCard,
  type JudgeVerdict,
  type OutcomeRecord,
  type Report,
  type RunRecord,
} from '@shadowplane/contracts';
import type { ComparisonResult, ComparisonSettings, PairRow } from './compare.js';

/** One ok observation's cost evidence (per arm × call type), in billed units; nulls stay null. */
export interface CostEvidenceRow {
  call_type: string;
  arm_id: string;
  obs_id: string;
  item_hash: string;
  basis: 'provider_reported' | 'rate_card' | 'estimate' | null;
  usd: number | null;
  /** true when this row counts toward the arm's per-request mean (on the arm's basis) */
  on_basis: boolean;
  input_tokens: number | null;
  cache_read_input_tokens: number | null;
  cache_creation_input_tokens: number | null;
  output_tokens: number | null;
  reasoning_output_tokens: number | null;
  abandoned: boolean;
}

/** The recorded statistics of one measured comparison: settings (with seed) and results. */
export interface StatsPart {
  call_type: string;
  candidate_arm_id: string;
  settings: ComparisonSettings;
  result: ComparisonResult;
}

/**
 * One (judge label, programmatic label) pair of the judge's kappa, with the verdict it came from:
 * `verdict_key` = `<call_type>|<item_hash>|<arm_id>|<role>|<mode>` (the key the fold de-duplicates
 * verdicts by); `judge` the judge's score (pointwise, 0–1) or candidate preference (pairwise);
 * `programmatic` the programmatic/first-party composite (pointwise) or 0.5 + (q_cand − q_inc)/2
 * (pairwise). Labels: good/bad at 0.5 (pointwise); candidate/incumbent/tie around 0.5 (pairwise).
 */
export interface JudgeAgreementRow {
  call_type: string;
  verdict_key: string;
  mode: 'pointwise' | 'pairwise';
  judge: number;
  programmatic: number;
}

/** The LLM judge's evidence: the verdicts the fold used (sorted by key) and the kappa's agreement rows. */
export interface JudgePart {
  verdicts: JudgeVerdict[];
  agreement: JudgeAgreementRow[];
}

/** The parts of a bundle; each is hashed separately (`hashes.<part>` = contentHash(part)). */
export interface BundleParts {
  /** the report, with report_id */
  report: Report;
  /** the run record (campaign id/state, window, latency/TTFT/skew percentiles), with run_record_id; its report_id is the report's */
  run_record: RunRecord;
  dataset_cards: DatasetCard[];
  run_spec: { campaign_id: string; run_index: number; spec_hash: string; spec: unknown };
  cost_evidence: CostEvidenceRow[];
  /** per comparison, the paired rows sorted by item_hash (empty when not measurable) */
  paired: { call_type: string; candidate_arm_id: string; rows: PairRow[] }[];
  stats: StatsPart[];
  /** A-A quality differences per call type (noise floor) and their sd */
  aa: { call_type: string; diffs: number[]; sd: number | null }[];
  outcomes: OutcomeRecord[];
  /**
   * the judge verdicts and kappa agreement rows, or null without a judge; absent in bundles
   * written before judge evidence was bundled (then not hashed and not checked)
   */
  judge?: JudgePart | null;
  lineage: { envelope_ids: string[]; observation_ids: string[]; outcome_ids: string[] };
}

/**
 * `shadow.evidence_bundle/v1`: the parts, the sha256 (contentHash, canonical JSON) of each part,
 * the report id, the run record id, and `bundle_hash` = contentHash({report_id, hashes}) (the
 * run record is covered through `hashes.run_record`).
 */
export interface EvidenceBundle {
  schema: 'shadow.evidence_bundle/v1';
  report_id: string;
  run_record_id: string;
  campaign_id: string;
  parts: BundleParts;
  hashes: Record<keyof BundleParts, string>;
  bundle_hash: string;
}

/** The part names, in the order they are hashed and checked. */
export const BUNDLE_PARTS: readonly (keyof BundleParts)[] = Object.freeze([
  'report',
  'run_record',
  'dataset_cards',
  'run_spec',
  'cost_evidence',
  'paired',
  'stats',
  'aa',
  'outcomes',
  'judge',
  'lineage',
]);

/** Assembles a bundle and computes its part hashes and bundle hash. */
export function buildBundle(parts: {
  report: Report;
  runRecord: RunRecord;
  datasetCards: DatasetCard[];
  runSpec: BundleParts['run_spec'];
  costEvidence: CostEvidenceRow[];
  paired: BundleParts['paired'];
  stats: StatsPart[];
  aa: BundleParts['aa'];
  outcomes: OutcomeRecord[];
  judge?: JudgePart | null;
  lineage: BundleParts['lineage'];
}): EvidenceBundle {
  const p: BundleParts = {
    report: parts.report,
    run_record: parts.runRecord,
    dataset_cards: parts.datasetCards,
    run_spec: parts.runSpec,
    cost_evidence: parts.costEvidence,
    paired: parts.paired,
    stats: parts.stats,
    aa: parts.aa,
    outcomes: parts.outcomes,
    judge: parts.judge ?? null,
    lineage: parts.lineage,
  };
  // round-trip through JSON so the bundle holds exactly what a reader will see; the row parts
  // (one row per observation or pair, built by the fold from JSON values only) are kept as they
  // are: a round trip of them would copy hundreds of MB for nothing
  const rows = { cost_evidence: p.cost_evidence, paired: p.paired, lineage: p.lineage };
  const plain = {
    ...(JSON.parse(JSON.stringify({ ...p, cost_evidence: [], paired: [], lineage: null })) as BundleParts),
    ...rows,
  };
  const hashes = Object.fromEntries(BUNDLE_PARTS.map((k) => [k, fastContentHash(plain[k])])) as Record<
    keyof BundleParts,
    string
  >;
  const reportId = String(plain.report.report_id);
  return {
    schema: 'shadow.evidence_bundle/v1',
    report_id: reportId,
    run_record_id: String(plain.run_record.run_record_id),
    campaign_id: plain.run_record.campaign_id,
    parts: plain,
    hashes,
    bundle_hash: fastContentHash({ report_id: reportId, hashes }),
  };
}
