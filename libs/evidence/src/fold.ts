/**
 * The fold: pinned campaign spec + OBS messages (outputs filled in) → report + run record +
 * evidence bundle. Pure and deterministic: the same spec and the same set of messages (in any
 * order) give the same report, byte for byte, and so the same report_id.
 *
 * Reproducibility split: the report holds only what the evidence says (spec, counts, costs,
 * tokens, quality, error shares, comparisons, intervals, decisions, frontier, verdict text), so
 * two runs of the same evidence — another campaign id, other timestamps, other latencies, messages
 * in another arrival order — give the same report_id. What a run measured about time and identity
 * (campaign id and state, the observation window, latency/TTFT/start-skew percentiles, retries,
 * delivery counts) goes into the run record (`shadow.run_record/v1`), content-addressed by its own
 * `run_record_id` and pointing at the report by `report_id`. Nothing is dropped: both are stored,
 * both are in the evidence bundle, both are rendered.
 *
 * Order independence: observations, events and outcomes are de-duplicated and sorted by stable
 * keys (call type, item_hash, arm, role) before anything is summed, numbered or resampled; near-
 * duplicate clusters are numbered over items sorted by item_hash.
 */
import {
  MIN_ARM_OBSERVATIONS,
  ShadowplaneError,
  canonicalJson,
  contentHash,
  type CallTypeReport,
  type CampaignSpec,
  type Comparison,
  type DatasetCard,
  type JudgeSummary,
  type ObsMessage,
  type Report,
  type RunRecord,
} from '@shadowplane/contracts';
import type { ScoreResult } from '@shadowplane/scoring';
import { fastContentHash } from './canonical-fast.js';
import { comparisonLevel, type PairRow } from './compare.js';
import { judgeSummary } from './judge-fold.js';
import {
  buildBundle,
  type EvidenceBundle,
  type CostEvidenceRow,
  type JudgeAgreementRow,
  type StatsPart,
} from './bundle.js';
import { armViews } from './fold-arms.js';
import { compareCandidate, type FrontierCandidate } from './fold-comparison.js';
import { datasetCard, describe, frontierOf } from './fold-frontier.js';
import { admitItems } from './fold-items.js';
import { pairCandidate } from './fold-pairs.js';
import { partitionMessages } from './fold-partition.js';
import { CostRows, rowsPart } from './fold-rows.js';
import type { ObsTable } from './obs-table.js';
import { callTypesOf, envelopeIds, observationIds, rowsOfCallType, runSpend } from './fold-lineage.js';
import { scoreCallType } from './fold-score.js';
import { appendAll } from './fold-util.js';

export { judgeKey, observationId } from './fold-ids.js';

import { sequentialSummary } from './sequential.js';

/** The pinned campaign a fold is for. */
export interface FoldCampaign {
  campaign_id: string;
  /** the pinned spec (parsed: defaults applied) */
  spec: CampaignSpec;
  /** run r of the same comparison, for α-spending (1 for the first) */
  run_index: number;
  spec_hash?: string;
  /** campaign state when folded (completed, stopped, ...), or null offline */
  state?: string | null;
}

/** Input of {@link foldReport}. */
export interface FoldInput {
  campaign: FoldCampaign;
  /** every OBS message of the campaign (observations with `output_text` where available), any order */
  messages: readonly ObsMessage[];
  /**
   * observations already held as columns (the offline fold adds each line as it reads it, and
   * keeps no message objects); the observations among `messages` are added to it. Rows of other
   * campaigns are left out, as such messages are.
   */
  observations?: ObsTable;
  /**
   * true: the bundle's row parts (cost evidence, paired rows) are read-only arrays whose rows are
   * built from the table each time they are read (fold-rows.ts lazyRows), so they are never all
   * held at once — for a caller that hashes and writes the bundle and drops it (the offline
   * fold). The bundle's JSON, hashes and values are the same either way.
   */
  lazyRows?: boolean;
  /**
   * true: the fold may free the output texts of `observations` once every call type is scored
   * (ObsTable.releaseOutputs; nothing later reads them), for a caller that drops the table after
   * the fold (the offline fold). The table's `output_text` then throws.
   */
  releaseOutputs?: boolean;
  /** true for an on-demand report of a running campaign */
  provisional: boolean;
  /** optional LLM-judge scores keyed by {@link judgeKey}; weight from the spec's llm_judge scorer */
  judgeScores?: ReadonlyMap<string, ScoreResult>;
  /**
   * Provider family of the judge and of each arm (allowlist `family`, else the provider id). When
   * given, a judge of the same family as either arm of a pair is refused for that pair: the pair's
   * composites are computed without judge scores and the comparison names the refusal.
   */
  judgeFamily?: string;
  armFamilies?: Readonly<Record<string, string>>;
}

/** Output of {@link foldReport}. */
export interface FoldResult {
  /** the report with `report_id` set: reproducible, no run-specific identity or times */
  report: Report;
  /** canonical JSON of the report (what is stored; re-read byte-identical) */
  reportJson: string;
  reportId: string;
  /** this run's record (campaign id/state, window, latency/TTFT/skew percentiles) with `run_record_id` set; points at `reportId` */
  runRecord: RunRecord;
  /** canonical JSON of the run record (what is stored) */
  runRecordJson: string;
  runRecordId: string;
  bundle: EvidenceBundle;
  datasetCards: DatasetCard[];
}

/**
 * Folds a campaign's OBS messages into a report and evidence bundle (see the module doc and
 * docs/architecture.md "Statistics of a verdict" / "Honesty rules"). Rules applied:
 * - pairing per item: incumbent vs each candidate, only items where both arms have an ok, scored
 *   observation; A-A second calls (role incumbent_aa) feed only the noise floor;
 * - bases never blend: each comparison is priced on one basis (the majority basis among its
 *   pairs where both arms share a basis, `estimate` never deciding); off-basis, unpriced and
 *   estimate-priced pairs are excluded and counted;
 * - fewer than MIN_ARM_OBSERVATIONS (8) pairs → CANNOT_MEASURE with insufficient{below_min_n, need, have};
 * - exclusions from item events (and traffic classes not admitted by the spec) with per-item reasons;
 * - weights = 1 + duplicate events; clusters from prompt SimHash (Hamming ≤ 3);
 * - bootstrap B = spec.bootstrap.resamples with spec.bootstrap.seed, level 1 − 2·alphaSpent(α, r)/K.
 * Arm views are per shadow call (unweighted); comparison statistics weight items by duplicates.
 * Stages (each a small pure function): partition (fold-partition.ts) → items (fold-items.ts) →
 * scores (fold-score.ts) → arm views (fold-arms.ts) → pairs (fold-pairs.ts) → comparison
 * (fold-comparison.ts) → frontier, dataset card, verdict text (fold-frontier.ts).
 * Errors: ShadowplaneError `report_empty` when nothing was scored and nothing was refused
 * (honesty rule 10: such a report cannot be written).
 */
export function foldReport(input: FoldInput): FoldResult {
  const { campaign, provisional } = input;
  const spec = campaign.spec;
  const cid = campaign.campaign_id;
  const judgeSpec = spec.scorers.find((s) => s.kind === 'llm_judge');
  const judgeWeight = judgeSpec && judgeSpec.kind === 'llm_judge' ? judgeSpec.weight : 0.5;

  // 1. partition and de-duplicate (order-independent)
  const messagesIn = input.messages.length + (input.observations?.length ?? 0);
  const { table, rawRows, obs, evs, outcomes, verdicts, ji, judgeScores, judgeFamily, armFamilies, outcomesFor } =
    partitionMessages(cid, spec.incumbent.id, input.messages, { ...input, table: input.observations });
  const agreementAll: [string, string][] = [];
  // the same agreement with the verdict each judge label came from, for offline verification
  const agreementRows: JudgeAgreementRow[] = [];
  // verdict lines are written once the whole report's judge calibration is known
  const pendingText: { ct: string; cmp: Comparison; judge: JudgeSummary | undefined }[] = [];

  const K = spec.candidates.length;
  const { alphaAdjusted } = comparisonLevel({ alpha: spec.alpha, candidates_k: K, run_index: campaign.run_index });
  const callTypes = [
    ...new Set([...spec.call_types, ...callTypesOf(table, obs), ...evs.map((e) => e.call_type)]),
  ].sort();

  const callTypeReports: CallTypeReport[] = [];
  const datasetCards: DatasetCard[] = [];
  const cost = new CostRows(table);
  const pairedParts: { call_type: string; candidate_arm_id: string; rows: PairRow[] }[] = [];
  const statsParts: StatsPart[] = [];
  const aaParts: { call_type: string; diffs: number[]; sd: number | null }[] = [];
  const runTimes: RunRecord['call_types'] = [];
  let anyScored = false;
  let anyRefused = false;
  const verdictText: string[] = [];

  for (const ct of callTypes) {
    const ctObs = rowsOfCallType(table, obs, ct);
    const ctEvents = evs.filter((e) => e.call_type === ct);
    // 2. items, exclusions, weights, clusters
    const items = admitItems(spec, table, ctObs, ctEvents);
    const { admitted, excludedReason, firstRow, weights, clusters, exclusions, exclusionCounts, ineligibleWeight } =
      items;
    if (exclusions.length > 0) anyRefused = true;

    // 3-4. scoring, pointwise judge agreement, A-A noise floor
    const keepScores = ji.pairwise.size > 0;
    const sc = scoreCallType({
      ct,
      spec,
      table,
      ctObs,
      excludedReason,
      outcomesFor,
      judgeScores,
      judgeWeight,
      keepScores,
    });
    const { scored, agreement } = sc;
    // the texts are read only by scoring: once the last call type is scored they can go
    if (input.releaseOutputs && input.observations === table && ct === callTypes[callTypes.length - 1])
      table.releaseOutputs();
    if (sc.anyScored) anyScored = true;
    appendAll(agreementRows, sc.agreementRows);
    aaParts.push({ call_type: ct, diffs: sc.aaDiffs, sd: sc.aaSd });
    const planSettings = {
      alpha_one_sided: alphaAdjusted,
      margin_pp: spec.margins.noninferiority_pp,
      noise_floor: { pairs: sc.aaDiffs.length, sd: sc.aaSd },
    };

    // 5. arm views; measured times of this run go into the run record, never the report
    const av = armViews({ ct, spec, table, admitted, outcomesFor, scored, aaCalls: sc.aaCalls, cost });
    const arms = av.arms;
    runTimes.push(av.runTimes);

    // 6. comparisons
    const comparisons: Comparison[] = [];
    const frontierCand = new Map<string, FrontierCandidate>();
    for (const cand of spec.candidates) {
      const pairs = pairCandidate({
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
        verdictsCount: verdicts.length,
        lazyIds: input.lazyRows === true,
      });
      appendAll(agreement, pairs.agreement);
      appendAll(agreementRows, pairs.agreementRows);
      if (Object.keys(pairs.excluded).length > 0) anyRefused = true;
      const c = compareCandidate({
        provisional,
        ct,
        spec,
        cand,
        runIndex: campaign.run_index,
        pairs,
        arms,
        admittedCount: admitted.length,
        planSettings,
        ineligibleWeight,
        exclusionCounts,
      });
      if (c.stats) statsParts.push(c.stats);
      if (c.frontier) frontierCand.set(cand.id, c.frontier);
      // lazy: rows built from the pair columns and the table when the bundle is hashed and written
      pairedParts.push({ call_type: ct, candidate_arm_id: cand.id, rows: pairs.bundleRows });
      comparisons.push(c.cmp);
    }
    const ctVerdicts = verdicts.filter((v) => v.call_type === ct);
    const ctJudge = judgeSummary(spec, ctVerdicts, agreement);
    appendAll(agreementAll, agreement);
    for (const cmp of comparisons) pendingText.push({ ct, cmp, judge: ctJudge });

    // 7. frontier, dataset card
    const { points, beside } = frontierOf(arms[0]!, arms, comparisons, frontierCand);
    const card = datasetCard(ct, items, planSettings);
    datasetCards.push(card);
    const decidingBases = comparisons
      .map((c) => c.basis)
      .filter((b): b is 'provider_reported' | 'rate_card' => b !== null);
    callTypeReports.push({
      call_type: ct,
      dataset_card: card,
      basis: decidingBases.length > 0 && decidingBases.every((b) => b === decidingBases[0]) ? decidingBases[0]! : null,
      arms,
      comparisons,
      frontier: { points, beside },
      ...(ctJudge ? { judge: ctJudge } : {}),
    });
  }

  if (!anyScored && !anyRefused) {
    throw new ShadowplaneError(
      'report_empty',
      `campaign ${cid}: nothing was scored and nothing was refused (${obs.length} observations, ${evs.length} item events); an empty report cannot be written`,
      {
        details: { campaign_id: cid, observations: obs.length, item_events: evs.length },
      },
    );
  }

  const reportJudge = judgeSummary(spec, verdicts, agreementAll);
  // a call type without its own calibration (e.g. judge-only chat) carries the judge's kappa over the whole report
  for (const t of pendingText)
    verdictText.push(
      describe(t.ct, spec.incumbent.id, t.cmp, spec.margins.noninferiority_pp, t.judge?.kappa ? t.judge : reportJudge),
    );
  // the window: earliest start, latest end (code-unit order, as a sort would give)
  let first = -1;
  let last = -1;
  for (const r of obs) {
    if (first < 0 || table.cmpTime('started_at', r, first) < 0) first = r;
    if (last < 0 || table.cmpTime('ended_at', r, last) > 0) last = r;
  }
  const firstStart = first < 0 ? null : table.time('started_at', first);
  const lastEnd = last < 0 ? null : table.time('ended_at', last);
  const body: Report = {
    schema: 'shadow.report/v1',
    provisional,
    run_index: campaign.run_index,
    spec_hash: campaign.spec_hash ?? contentHash(spec),
    spec,
    counts: {
      messages: obs.length + evs.length + outcomes.length,
      observations: obs.length,
      item_events: evs.length,
      outcomes: outcomes.length,
    },
    min_arm_observations: MIN_ARM_OBSERVATIONS,
    call_types: callTypeReports,
    verdict_text: verdictText,
  };
  if (reportJudge) body.judge = reportJudge;
  // JSON round trip drops undefined members so the stored text and the hashed object agree
  const plain = JSON.parse(canonicalJson(body)) as Report;
  const reportId = fastContentHash(plain);
  const report = { ...plain, report_id: reportId } as Report;
  const reportJson = canonicalJson(report);
  const runBody: RunRecord = {
    schema: 'shadow.run_record/v1',
    report_id: reportId,
    campaign_id: cid,
    campaign_state: campaign.state ?? null,
    provisional,
    window: { first_started_at: firstStart, last_ended_at: lastEnd },
    counts: { messages_in: messagesIn, superseded_observations: rawRows.length - obs.length },
    call_types: runTimes,
    spend: runSpend(table, rawRows, verdicts),
  };
  const runPlain = JSON.parse(canonicalJson(runBody)) as RunRecord;
  const runRecordId = fastContentHash(runPlain);
  const runRecord = { ...runPlain, run_record_id: runRecordId } as RunRecord;
  const runRecordJson = canonicalJson(runRecord);
  const bundle = buildBundle({
    report,
    runRecord,
    datasetCards,
    runSpec: { campaign_id: cid, run_index: campaign.run_index, spec_hash: body.spec_hash!, spec: plain.spec },
    costEvidence: rowsPart(cost, input.lazyRows === true),
    paired: pairedParts,
    stats: statsParts,
    aa: aaParts,
    outcomes,
    judge:
      verdicts.length > 0 || agreementRows.length > 0
        ? { verdicts: verdicts.map((v) => ({ ...v })), agreement: agreementRows }
        : null,
    lineage: {
      envelope_ids: envelopeIds(table, obs, evs),
      observation_ids: observationIds(table, obs, input.lazyRows === true),
      outcome_ids: outcomes.map((o) => o.outcome_id),
    },
  });
  return { report, reportJson, reportId, runRecord, runRecordJson, runRecordId, bundle, datasetCards };
}
