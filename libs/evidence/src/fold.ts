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
  BASELINE_ARTIFACT_MISSING,
  MIN_ARM_OBSERVATIONS,
  PROVIDER_ZERO_WITH_TOKENS,
  ShadowplaneError,
  canonicalJson,
  contentHash,
  type ArmView,
  type CallTypeReport,
  type CampaignSpec,
  type CannotMeasureReason,
  type Comparison,
  type CostBasis,
  type DatasetCard,
  type FrontierPoint,
  type JudgeSummary,
  type ItemEvent,
  type ObsMessage,
  type Observation,
  type OutcomeRecord,
  type PowerPlanValue,
  type Remediation,
  type Report,
  type RunArmTimes,
  type RunRecord,
  type RunSpend,
  type ShareValue,
  SEQUENTIAL_BATCH_DEFAULT,
} from '@shadowplane/contracts';
import {
  compositeQuality,
  scoreOutcome,
  scoreProgrammatic,
  trustClass,
  type Composite,
  type ScoreResult,
} from '@shadowplane/scoring';
import { quantileType7, sdOfDifferences, wilsonInterval } from '@shadowplane/stats';
import { fastContentHash } from './canonical-fast.js';
import { NEAR_DUPLICATE_HAMMING_BITS, NEAR_DUPLICATE_METHOD, clusterBySimhash } from './clusters.js';
import {
  DECISION_INTERVAL_METHOD,
  comparisonLevel,
  comparisonPowerPlan,
  computeComparison,
  weakestInstrument,
  type ComparisonSettings,
  type PairRow,
} from './compare.js';
import { collectJudgeVerdicts, goodBad, judgeInputs, judgeSummary, kappaText, preference } from './judge-fold.js';
import {
  buildBundle,
  type EvidenceBundle,
  type CostEvidenceRow,
  type JudgeAgreementRow,
  type StatsPart,
} from './bundle.js';
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

/** Key of a judge score: `<item_hash>:<arm_id>:<role>`. */
export function judgeKey(itemHash: string, armId: string, role: string): string {
  return `${itemHash}:${armId}:${role}`;
}

/** Lineage id of an observation: contentHash of the observation without `output_text`. */
export function observationId(o: Observation): string {
  const { output_text: _drop, ...rest } = o;
  return fastContentHash(rest);
}

interface ScoredObs {
  obs: Observation;
  id: string;
  composite: Composite | null;
  /** the composite without judge scores (differs only when a judge score exists) */
  compositeNoJudge: Composite | null;
  /** the programmatic and first-party scores (no judge), for pairwise judge composites */
  scores: ScoreResult[];
}

const BASIS_ORDER: CostBasis[] = ['provider_reported', 'rate_card', 'estimate'];

/** Sorts by a string key (code-unit order), computing each key once. */
function byKey<T>(xs: readonly T[], key: (x: T) => string): T[] {
  const decorated = xs.map((x) => [key(x), x] as const);
  decorated.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return decorated.map((d) => d[1]);
}

function share(n: number, of: number): ShareValue {
  if (of === 0) return { n, of, share: null, lower: null, upper: null };
  const [lo, hi] = wilsonInterval(n, of, 0.95);
  return { n, of, share: n / of, lower: lo, upper: hi };
}

function pct(xs: number[]): { p50: number | null; p90: number | null; n: number } {
  if (xs.length === 0) return { p50: null, p90: null, n: 0 };
  const s = Float64Array.from(xs).sort();
  return { p50: quantileType7(s, 0.5), p90: quantileType7(s, 0.9), n: xs.length };
}

function reportedMean(values: (number | null)[]): { mean: number | null; n_reported: number; n_null: number } {
  const rep = values.filter((v): v is number => v !== null);
  return {
    mean: rep.length ? rep.reduce((a, b) => a + b, 0) / rep.length : null,
    n_reported: rep.length,
    n_null: values.length - rep.length,
  };
}

function majorityBasis(bases: CostBasis[]): CostBasis | null {
  if (bases.length === 0) return null;
  const counts = new Map<CostBasis, number>();
  for (const b of bases) counts.set(b, (counts.get(b) ?? 0) + 1);
  let best: CostBasis | null = null;
  for (const b of BASIS_ORDER) if ((counts.get(b) ?? 0) > (best === null ? 0 : counts.get(best)!)) best = b;
  return best;
}

function inc(m: Record<string, number>, k: string, by = 1): void {
  m[k] = (m[k] ?? 0) + by;
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
  const obsRaw: Observation[] = [];
  const events: ItemEvent[] = [];
  const outcomesRaw: OutcomeRecord[] = [];
  for (const m of input.messages) {
    if (m.schema === 'shadow.observation/v1' && m.campaign_id === cid) obsRaw.push(m);
    else if (m.schema === 'shadow.item_event/v1' && m.campaign_id === cid) events.push(m);
    else if (m.schema === 'shadow.outcome/v1' && (m.campaign_id === cid || m.campaign_id === null)) outcomesRaw.push(m);
  }
  const withIds = obsRaw.map((o) => ({ o, id: observationId(o) }));
  const obsByKey = new Map<string, { o: Observation; id: string }>();
  for (const x of byKey(withIds, (x) => `${x.o.started_at}|${x.o.envelope_id}|${x.id}`)) {
    const k = `${x.o.call_type}|${x.o.item_hash}|${x.o.arm_id}|${x.o.role}`;
    if (!obsByKey.has(k)) obsByKey.set(k, x);
  }
  const obs = byKey([...obsByKey.values()], (x) => `${x.o.call_type}|${x.o.item_hash}|${x.o.arm_id}|${x.o.role}`);
  const eventMap = new Map<string, ItemEvent>();
  for (const e of events) eventMap.set(`${e.call_type}|${e.kind}|${e.item_hash}|${e.envelope_id}|${e.reason ?? ''}`, e);
  const evs = byKey(
    [...eventMap.values()],
    (e) => `${e.call_type}|${e.item_hash}|${e.kind}|${e.envelope_id}|${e.reason ?? ''}`,
  );
  const envelopeItem = new Map<string, string>();
  for (const { o } of obs) envelopeItem.set(o.envelope_id, o.item_hash);
  const itemsWithObs = new Set(obs.map((x) => x.o.item_hash));
  const outcomeMap = new Map<string, OutcomeRecord>();
  for (const o of outcomesRaw) {
    const item = o.item_hash ?? (o.envelope_id ? envelopeItem.get(o.envelope_id) : undefined);
    if (item !== undefined && itemsWithObs.has(item)) outcomeMap.set(o.outcome_id, o);
  }
  const outcomes = byKey([...outcomeMap.values()], (o) => o.outcome_id);
  // judge verdicts published by the duplicator (judge-fold.ts); explicit judgeScores take precedence
  const verdicts = collectJudgeVerdicts(input.messages, cid).filter((v) => itemsWithObs.has(v.item_hash));
  const ji = judgeInputs(verdicts, spec.incumbent.id);
  const judgeScores = input.judgeScores ?? (verdicts.length > 0 ? ji.pointwise : undefined);
  const judgeFamily = input.judgeFamily ?? ji.judgeFamily;
  const armFamilies = input.armFamilies ?? ji.armFamilies;
  const agreementAll: [string, string][] = [];
  // the same agreement with the verdict each judge label came from, for offline verification
  const agreementRows: JudgeAgreementRow[] = [];
  // verdict lines are written once the whole report's judge calibration is known
  const pendingText: { ct: string; cmp: Comparison; judge: JudgeSummary | undefined }[] = [];
  const outcomesFor = new Map<string, OutcomeRecord[]>();
  for (const o of outcomes) {
    if (o.arm_id === null) continue; // about the served production response: provenance, not an arm
    const item = o.item_hash ?? envelopeItem.get(o.envelope_id!)!;
    const k = `${item}|${o.arm_id}`;
    const list = outcomesFor.get(k);
    if (list) list.push(o);
    else outcomesFor.set(k, [o]);
  }

  const K = spec.candidates.length;
  const { alphaAdjusted } = comparisonLevel({ alpha: spec.alpha, candidates_k: K, run_index: campaign.run_index });
  const callTypes = [
    ...new Set([...spec.call_types, ...obs.map((x) => x.o.call_type), ...evs.map((e) => e.call_type)]),
  ].sort();

  const callTypeReports: CallTypeReport[] = [];
  const datasetCards: DatasetCard[] = [];
  const costEvidence: CostEvidenceRow[] = [];
  const pairedParts: { call_type: string; candidate_arm_id: string; rows: PairRow[] }[] = [];
  const statsParts: StatsPart[] = [];
  const aaParts: { call_type: string; diffs: number[]; sd: number | null }[] = [];
  const runTimes: RunRecord['call_types'] = [];
  let anyScored = false;
  let anyRefused = false;
  const verdictText: string[] = [];

  for (const ct of callTypes) {
    const ctObs = obs.filter((x) => x.o.call_type === ct);
    const ctEvents = evs.filter((e) => e.call_type === ct);
    // 2. items, exclusions, weights, clusters
    // an item excluded more than once keeps its smallest reason (code-unit order), never the one
    // whose envelope id happens to sort first (envelope ids are random per run)
    const excludedReason = new Map<string, string>();
    for (const e of ctEvents) {
      if (e.kind !== 'excluded') continue;
      const r = e.reason ?? 'excluded';
      const had = excludedReason.get(e.item_hash);
      if (had === undefined || r < had) excludedReason.set(e.item_hash, r);
    }
    const trafficCounts: Record<string, number> = {};
    const seenItems = new Map<string, Observation>();
    for (const { o } of ctObs) if (!seenItems.has(o.item_hash)) seenItems.set(o.item_hash, o);
    for (const [h, o] of seenItems) {
      inc(trafficCounts, o.traffic_class);
      if (!spec.traffic_classes.includes(o.traffic_class) && !excludedReason.has(h))
        excludedReason.set(h, `traffic_class:${o.traffic_class}`);
    }
    const admitted = [...seenItems.keys()].filter((h) => !excludedReason.has(h)).sort();
    const admittedSet = new Set(admitted);
    const weight = new Map<string, number>(admitted.map((h) => [h, 1]));
    for (const e of ctEvents)
      if (e.kind === 'duplicate' && weight.has(e.item_hash)) weight.set(e.item_hash, weight.get(e.item_hash)! + 1);
    const clusterOf = clusterBySimhash(admitted.map((h) => [h, seenItems.get(h)!.prompt_simhash] as const));
    const strata: Record<string, number> = {};
    for (const h of admitted) {
      const kinds = [...new Set(seenItems.get(h)!.expectations.map((e) => e.kind))].sort();
      inc(strata, kinds.length ? kinds.join('+') : 'none');
    }
    const exclusions = [...excludedReason.entries()]
      .sort((a, b) => (a[0] < b[0] ? -1 : 1))
      .map(([item_hash, reason]) => ({ item_hash, reason }));
    if (exclusions.length > 0) anyRefused = true;
    const exclusionCounts: Record<string, number> = {};
    for (const x of exclusions) inc(exclusionCounts, x.reason);
    // compare mode: items whose baseline half is unknown widen every comparison's interval (compare.ts)
    let ineligibleWeight = 0;
    for (const x of exclusions) if (x.reason === BASELINE_ARTIFACT_MISSING) ineligibleWeight++;
    for (const e of ctEvents)
      if (e.kind === 'duplicate' && excludedReason.get(e.item_hash) === BASELINE_ARTIFACT_MISSING) ineligibleWeight++;

    // 3. scoring of ok observations on admitted items
    const scored = new Map<string, ScoredObs>(); // key item|arm|role
    for (const { o, id } of ctObs) {
      if (!admittedSet.has(o.item_hash)) continue;
      let composite: Composite | null = null;
      let compositeNoJudge: Composite | null = null;
      let progScores: ScoreResult[] = [];
      if (o.status === 'ok') {
        const scores: ScoreResult[] = scoreProgrammatic({
          output: o.output_text ?? null,
          expectations: o.expectations,
          scorers: spec.scorers,
          callType: ct,
        });
        for (const oc of outcomesFor.get(`${o.item_hash}|${o.arm_id}`) ?? []) scores.push(scoreOutcome(oc));
        progScores = [...scores];
        const j = judgeScores?.get(judgeKey(o.item_hash, o.arm_id, o.role));
        if (j) {
          compositeNoJudge = compositeQuality(scores, judgeWeight);
          scores.push(j);
        }
        composite = compositeQuality(scores, judgeWeight);
        compositeNoJudge ??= composite;
        if (composite.quality !== null) anyScored = true;
      }
      scored.set(`${o.item_hash}|${o.arm_id}|${o.role}`, {
        obs: o,
        id,
        composite,
        compositeNoJudge,
        scores: progScores,
      });
    }
    const instrumentOf = new Map<string, Observation['instrument']>();
    for (const s of scored.values()) instrumentOf.set(s.id, s.obs.instrument);
    const byArm = new Map<string, ScoredObs[]>();
    for (const s of scored.values()) {
      const k = `${s.obs.arm_id}|${s.obs.role}`;
      const list = byArm.get(k);
      if (list) list.push(s);
      else byArm.set(k, [s]);
    }
    const armObs = (armId: string, role: 'incumbent' | 'candidate' | 'incumbent_aa') =>
      byArm.get(`${armId}|${role}`) ?? [];
    // judge agreement with programmatic / first-party scores on the same outputs (pointwise)
    const agreement: [string, string][] = [];
    for (const s of scored.values()) {
      const j = judgeScores?.get(judgeKey(s.obs.item_hash, s.obs.arm_id, s.obs.role));
      const prog = s.compositeNoJudge?.quality ?? null;
      if (j && j.score !== null && prog !== null && s.scores.some((x) => x.score !== null)) {
        agreement.push([goodBad(j.score), goodBad(prog)]);
        agreementRows.push({
          call_type: ct,
          verdict_key: `${s.obs.call_type}|${s.obs.item_hash}|${s.obs.arm_id}|${s.obs.role}|pointwise`,
          mode: 'pointwise',
          judge: j.score,
          programmatic: prog,
        });
      }
    }
    let aaCalls = 0;
    for (const s of scored.values()) if (s.obs.role === 'incumbent_aa') aaCalls++;

    // 4. A-A noise floor
    const aaDiffs: number[] = [];
    for (const s of scored.values()) {
      if (s.obs.role !== 'incumbent_aa' || s.composite?.quality == null) continue;
      const first = scored.get(`${s.obs.item_hash}|${spec.incumbent.id}|incumbent`);
      // the judge does not grade A-A second calls: compare like with like (no judge on either side)
      const ref = s.composite === s.compositeNoJudge ? first?.compositeNoJudge : first?.composite;
      if (ref?.quality != null) aaDiffs.push(s.composite.quality - ref.quality);
    }
    const aaSd = aaDiffs.length >= 2 ? sdOfDifferences(aaDiffs) : null;
    aaParts.push({ call_type: ct, diffs: aaDiffs, sd: aaSd });
    const noiseFloor = { pairs: aaDiffs.length, sd: aaSd };
    const planSettings = {
      alpha_one_sided: alphaAdjusted,
      margin_pp: spec.margins.noninferiority_pp,
      noise_floor: noiseFloor,
    };

    // 5. arm views
    const tasksClosed = (armId: string) => {
      let n = 0;
      for (const h of admitted)
        for (const oc of outcomesFor.get(`${h}|${armId}`) ?? []) if (oc.closes_task && oc.result !== 'fail') n++;
      return n;
    };
    const armView = (arm: CampaignSpec['incumbent'], role: 'incumbent' | 'candidate'): ArmView => {
      const all = armObs(arm.id, role);
      const ok = all.filter((s) => s.obs.status === 'ok');
      const errs = all.filter((s) => s.obs.status === 'error');
      const priced = ok.filter((s) => s.obs.cost.usd !== null && s.obs.cost.basis !== null);
      const basis = majorityBasis(priced.map((s) => s.obs.cost.basis!));
      const onBasis = priced.filter((s) => s.obs.cost.basis === basis);
      for (const s of ok) {
        const u = s.obs.usage;
        costEvidence.push({
          call_type: ct,
          arm_id: arm.id,
          obs_id: s.id,
          item_hash: s.obs.item_hash,
          basis: s.obs.cost.basis,
          usd: s.obs.cost.usd,
          on_basis: basis !== null && s.obs.cost.basis === basis && s.obs.cost.usd !== null,
          input_tokens: u.input_tokens,
          cache_read_input_tokens: u.cache_read_input_tokens,
          cache_creation_input_tokens: u.cache_creation_input_tokens,
          output_tokens: u.output_tokens,
          reasoning_output_tokens: u.reasoning_output_tokens,
          abandoned: s.obs.abandoned,
        });
      }
      const total = onBasis.reduce((a, s) => a + s.obs.cost.usd!, 0);
      const tasks = tasksClosed(arm.id);
      const byClass: Record<string, number> = {};
      for (const s of errs) inc(byClass, s.obs.error_class ?? 'unknown');
      const q = ok.map((s) => s.composite?.quality ?? null);
      const qs = q.filter((x): x is number => x !== null);
      const cacheKnown = ok.filter((s) => s.obs.usage.cache_read_input_tokens !== null);
      let status: ArmView['status'];
      if (ok.length === 0) status = 'missing';
      else if (qs.length === 0) status = 'unscored';
      else if (basis === null) status = 'unpriced';
      else if (basis === 'estimate') status = 'estimate_only';
      else if (ok.length < MIN_ARM_OBSERVATIONS || qs.length < MIN_ARM_OBSERVATIONS) status = 'insufficient';
      else status = 'measurable';
      return {
        arm_id: arm.id,
        role,
        provider: arm.provider,
        model: arm.model,
        status,
        observations: {
          total: all.length,
          ok: ok.length,
          error: errs.length,
          abandoned: all.filter((s) => s.obs.abandoned).length,
          // A-A second calls carry their own arm id (the duplicator names them `<incumbent>__aa`): count them by role
          aa_second_calls: role === 'incumbent' ? aaCalls : 0,
        },
        error_share: share(errs.length, all.length),
        errors_by_class: Object.fromEntries(
          Object.keys(byClass)
            .sort()
            .map((k) => [k, share(byClass[k]!, all.length)]),
        ),
        cost: {
          basis,
          per_request_mean_usd: onBasis.length ? total / onBasis.length : null,
          total_usd: onBasis.length ? total : null,
          n_priced: onBasis.length,
          n_other_basis: priced.length - onBasis.length,
          n_unpriced: ok.length - priced.length,
          per_task_usd: tasks > 0 && onBasis.length && basis !== 'estimate' ? total / tasks : null,
          tasks_closed: tasks,
          n_provider_zero_mismatch: ok.filter((s) => s.obs.cost.reason === PROVIDER_ZERO_WITH_TOKENS).length,
        },
        tokens: {
          // Cache reads and writes are parts of input: an unreported part (OpenAI has no cache
          // writes) adds nothing, as in the rate-card cost — so uncached input is known whenever
          // total input is, and null only when the provider did not report input at all.
          input_uncached: reportedMean(
            ok.map((s) => {
              const u = s.obs.usage;
              return u.input_tokens !== null
                ? u.input_tokens - (u.cache_read_input_tokens ?? 0) - (u.cache_creation_input_tokens ?? 0)
                : null;
            }),
          ),
          cache_read: reportedMean(ok.map((s) => s.obs.usage.cache_read_input_tokens)),
          cache_write: reportedMean(ok.map((s) => s.obs.usage.cache_creation_input_tokens)),
          output: reportedMean(ok.map((s) => s.obs.usage.output_tokens)),
          reasoning: reportedMean(ok.map((s) => s.obs.usage.reasoning_output_tokens)),
        },
        cache_hit_share: share(
          cacheKnown.filter((s) => s.obs.usage.cache_read_input_tokens! > 0).length,
          cacheKnown.length,
        ),
        quality: {
          mean: qs.length ? qs.reduce((a, b) => a + b, 0) / qs.length : null,
          n_scored: qs.length,
          n_unscored: q.length - qs.length,
        },
      };
    };
    const arms: ArmView[] = [
      armView(spec.incumbent, 'incumbent'),
      ...spec.candidates.map((c) => armView(c, 'candidate')),
    ];
    // measured times of this run: into the run record, never the report
    const timesOf = (armId: string, role: RunArmTimes['role'], all: ScoredObs[]): RunArmTimes => {
      const ok = all.filter((s) => s.obs.status === 'ok');
      return {
        arm_id: armId,
        role,
        latency_ms: pct(ok.map((s) => s.obs.latency_ms).filter((x): x is number => x !== null)),
        ttft_ms: pct(ok.map((s) => s.obs.ttft_ms).filter((x): x is number => x !== null)),
        start_skew_ms: pct(ok.map((s) => s.obs.start_skew_ms)),
        retries: all.reduce((a, s) => a + Math.max(0, s.obs.attempts - 1), 0),
      };
    };
    const times = (arm: CampaignSpec['incumbent'], role: 'incumbent' | 'candidate'): RunArmTimes =>
      timesOf(arm.id, role, armObs(arm.id, role));
    const aaTimes: RunArmTimes[] = [];
    const aaByArm = new Map<string, ScoredObs[]>();
    for (const s of scored.values())
      if (s.obs.role === 'incumbent_aa') aaByArm.set(s.obs.arm_id, [...(aaByArm.get(s.obs.arm_id) ?? []), s]);
    for (const id of [...aaByArm.keys()].sort()) aaTimes.push(timesOf(id, 'incumbent_aa', aaByArm.get(id)!));
    runTimes.push({
      call_type: ct,
      arms: [times(spec.incumbent, 'incumbent'), ...spec.candidates.map((c) => times(c, 'candidate')), ...aaTimes],
    });
    const incView = arms[0]!;

    // 6. comparisons
    const comparisons: Comparison[] = [];
    const frontierCand = new Map<
      string,
      { cost: number; quality: number; ci: [number, number]; qi: [number, number] }
    >();
    for (const cand of spec.candidates) {
      const excluded: Record<string, number> = {};
      const candView = arms.find((a) => a.arm_id === cand.id)!;
      const pairsByBasis = new Map<CostBasis, PairRow[]>();
      const offBasisPairs: { basisInc: CostBasis | null; basisCand: CostBasis | null; h: string }[] = [];
      let hardFails = 0;
      let ceiling = 0;
      const judgeShareOf = new Map<string, number>();
      // when the pair was complete (the later end of its two calls): the sequential look order
      const arrivalOf = new Map<string, string>();
      // same-family judge refusal for this pair
      const fam = (a: { id: string; provider: string }) => armFamilies?.[a.id] ?? a.provider;
      const judgeRefused =
        (judgeScores !== undefined || ji.pairwise.size > 0 || verdicts.length > 0) &&
        judgeFamily !== undefined &&
        [fam(spec.incumbent), fam(cand)].includes(judgeFamily)
          ? `judge family ${judgeFamily} equals the family of ${fam(spec.incumbent) === judgeFamily ? spec.incumbent.id : cand.id}: judge scores not used for this pair`
          : null;
      const comp = (x: ScoredObs) => (judgeRefused ? x.compositeNoJudge : x.composite);
      let unscoredPairs = 0;
      let okPairs = 0;
      for (const h of admitted) {
        const a = scored.get(`${h}|${spec.incumbent.id}|incumbent`);
        const b = scored.get(`${h}|${cand.id}|candidate`);
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
        const replay = a.obs.instrument === 'replay' && b.obs.instrument === 'replay';
        if (replay) {
          qa = 0;
          qb = 0;
          anyScored = true; // priced evidence: the report is not empty
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
        const row: PairRow = {
          item_hash: h,
          cluster: clusterOf.get(h)!,
          simhash: seenItems.get(h)!.prompt_simhash,
          weight: weight.get(h)!,
          q_inc: qa,
          q_cand: qb,
          cost_inc_usd: a.obs.cost.usd!,
          cost_cand_usd: b.obs.cost.usd!,
          obs_inc: a.id,
          obs_cand: b.id,
        };
        arrivalOf.set(h, a.obs.ended_at > b.obs.ended_at ? a.obs.ended_at : b.obs.ended_at);
        const list = pairsByBasis.get(ba);
        if (list) list.push(row);
        else pairsByBasis.set(ba, [row]);
        judgeShareOf.set(h, pairShare ?? Math.max(comp(a)?.judgeShare ?? 0, comp(b)?.judgeShare ?? 0));
      }
      // choose the deciding basis: majority among same-basis pairs, estimate never decides
      let basis: 'provider_reported' | 'rate_card' | null = null;
      for (const bs of ['provider_reported', 'rate_card'] as const) {
        const n = pairsByBasis.get(bs)?.length ?? 0;
        if (n > 0 && (basis === null || n > (pairsByBasis.get(basis)?.length ?? 0))) basis = bs;
      }
      let rows: PairRow[] = basis ? pairsByBasis.get(basis)! : [];
      for (const [bs, rs] of pairsByBasis)
        if (bs !== basis) inc(excluded, bs === 'estimate' ? 'estimate_basis' : 'off_basis', rs.length);
      for (const p of offBasisPairs)
        inc(excluded, p.basisInc === null || p.basisCand === null ? 'unpriced' : 'off_basis');
      rows = byKey(rows, (r) => r.item_hash);
      const instrument = weakestInstrument(
        rows.flatMap((r) => [instrumentOf.get(r.obs_inc)!, instrumentOf.get(r.obs_cand)!]),
      );
      if (Object.keys(excluded).length > 0) anyRefused = true;
      const wsum = rows.reduce((a, r) => a + r.weight, 0);
      const jshare =
        wsum > 0 && instrument !== 'replay'
          ? rows.reduce((a, r) => a + r.weight * judgeShareOf.get(r.item_hash)!, 0) / wsum
          : null;
      const clustersHave = new Set(rows.map((r) => r.cluster)).size;
      const pp = comparisonPowerPlan(rows, { ...planSettings, clusters: clustersHave });
      const base: Omit<
        Comparison,
        'state' | 'cannot_measure' | 'insufficient' | 'decision' | 'decision_reasons' | 'remediation' | 'stats'
      > = {
        candidate_arm_id: cand.id,
        basis,
        pairs: {
          items: rows.length,
          clusters: clustersHave,
          total_weight: rows.reduce((a, r) => a + r.weight, 0),
          excluded: sortRecord(excluded),
        },
        hard_gate_failures: hardFails,
        cost_ceiling_breaches: ceiling,
        trust_class: jshare === null ? null : trustClass(jshare),
        judge_weight_share: jshare,
        judge_refused: judgeRefused,
        instrument,
        power_plan: pp,
      };
      const need = pp.clusters_needed_for_margin;
      const moreTraffic: Remediation = {
        code: 'capture_more_traffic',
        text:
          need === null
            ? 'capture more traffic (a zero margin cannot be powered: set a positive noninferiority_pp)'
            : `capture more traffic: need ${need} clusters for MDE <= ${spec.margins.noninferiority_pp}pp (have ${clustersHave}; sd ${pp.sd_diff.toFixed(3)} from ${pp.sd_source === 'paired_upper_bound' ? 'the upper bound on the observed paired spread' : 'the conservative prior'})`,
      };
      const cannot = (reason: CannotMeasureReason, detail: string, remediation: Remediation[]): Comparison => ({
        ...base,
        state: 'CANNOT_MEASURE',
        cannot_measure: { reason, detail },
        insufficient: null,
        decision: null,
        decision_reasons: [],
        remediation,
        stats: null,
      });
      let cmp: Comparison;
      if (admitted.length > 0 && (incView.observations.ok === 0 || candView.observations.ok === 0)) {
        const which = incView.observations.ok === 0 ? spec.incumbent.id : cand.id;
        const v = incView.observations.ok === 0 ? incView : candView;
        cmp = cannot(
          'missing_arm',
          `arm ${which} has no successful observations (${v.observations.total} calls, ${v.observations.error} errors)`,
          [
            {
              code: 'fix_arm',
              text: `arm ${which} produced no successful calls: check its provider, model and errors_by_class`,
            },
          ],
        );
      } else if (okPairs > 0 && unscoredPairs === okPairs) {
        cmp = cannot(
          'unscored',
          `none of ${okPairs} paired items could be scored (no scorer applied or no output available)`,
          [
            { code: 'add_programmatic_scorer', text: 'add a programmatic scorer or expectations for this call type' },
            {
              code: 'register_outcome',
              text: 'register first-party outcomes for the arms (POST /v1/outcomes with arm_id)',
            },
          ],
        );
      } else if (basis === null && (excluded.off_basis ?? 0) > 0) {
        cmp = cannot(
          'mixed_bases',
          `no paired item has both arms on one cost basis (${excluded.off_basis} off-basis); bases never blend`,
          [
            {
              code: 'pin_one_cost_basis',
              text: 'price both arms on one basis: give both a rate card, or use providers that both report cost',
            },
          ],
        );
      } else if (basis === null && (excluded.estimate_basis ?? 0) > 0) {
        cmp = cannot(
          'estimate_only',
          'only the chars/4 estimate prices these pairs; an estimate never ranks or decides',
          [{ code: 'add_rate_card', text: 'configure rate cards (or providers that report usage) for both arms' }],
        );
      } else if (basis === null && (excluded.unpriced ?? 0) > 0) {
        cmp = cannot('unpriced', `no paired item has a known cost on both arms (${excluded.unpriced} unpriced)`, [
          {
            code: 'add_rate_card',
            text: 'configure rate cards for both arms; calls without usage are abandoned and unpriced',
          },
        ]);
      } else if (rows.length < MIN_ARM_OBSERVATIONS) {
        cmp = {
          ...cannot('insufficient', `${rows.length} paired items, need ${MIN_ARM_OBSERVATIONS}`, [moreTraffic]),
          insufficient: { below_min_n: true, need: MIN_ARM_OBSERVATIONS, have: rows.length },
        };
      } else {
        const settings: ComparisonSettings = {
          resamples: spec.bootstrap.resamples,
          seed: spec.bootstrap.seed,
          alpha: spec.alpha,
          candidates_k: K,
          run_index: campaign.run_index,
          margin_pp: spec.margins.noninferiority_pp,
          min_savings: spec.margins.min_savings,
          hard_gate_failures: hardFails,
          cost_ceiling_breaches: ceiling,
          instrument,
          ...(spec.stopping === 'sequential'
            ? {
                sequential: {
                  batch_items: spec.stopping_batch_items ?? SEQUENTIAL_BATCH_DEFAULT,
                  order: byKey(rows, (r) => `${arrivalOf.get(r.item_hash)!}|${r.item_hash}`).map((r) => r.item_hash),
                },
              }
            : {}),
          ...(ineligibleWeight > 0 ? { ineligible_weight: ineligibleWeight } : {}),
        };
        const r = computeComparison(rows, settings);
        const remediation: Remediation[] = [];
        if (r.decision === 'inconclusive') {
          if (r.decision_reasons.some((x) => x.startsWith('quality_lower_bound_not_above_margin'))) {
            // claim only what the interval shows: below 0 throughout → shown worse (by less than it
            // can rule out); otherwise it holds both 0 and −margin and only more traffic can tell
            const m = spec.margins.noninferiority_pp;
            const lo = (r.quality_delta.lower * 100).toFixed(2);
            const hi = (r.quality_delta.upper * 100).toFixed(2);
            remediation.push(
              r.quality_delta.upper < 0
                ? {
                    code: 'quality_shown_worse',
                    text: `the quality interval [${lo}, ${hi}]pp lies below 0: the candidate is shown worse than the incumbent, by between ${(-r.quality_delta.upper * 100).toFixed(2)} and ${(-r.quality_delta.lower * 100).toFixed(2)}pp, and not shown within -${m}pp`,
                  }
                : {
                    code: 'capture_more_traffic',
                    text: `the quality interval [${lo}, ${hi}]pp holds both 0 and -${m}pp: ${moreTraffic.text}`,
                  },
            );
          }
          if (r.decision_reasons.some((x) => x.startsWith('savings_unmeasurable')))
            remediation.push({
              code: 'add_rate_card',
              text: 'cost savings are unmeasurable: configure rate cards so both arms are priced',
            });
          if (r.decision_reasons.some((x) => x.startsWith('savings_lower_bound_below_min')))
            remediation.push({
              code: 'savings_not_shown',
              text: `savings are not shown to reach min_savings ${spec.margins.min_savings}: capture more traffic or accept a lower min_savings`,
            });
        }
        if (ineligibleWeight > 0)
          remediation.push({
            code: 'rebaseline',
            text: `${exclusionCounts[BASELINE_ARTIFACT_MISSING]} item(s) have no retained baseline artifact (missing or expired): pin a newer baseline run, or keep artifacts longer (retention.ttl_days)`,
          });
        if (r.state === 'CANNOT_MEASURE')
          remediation.push({
            code: 'run_shadow_dual_run',
            text: 'replay measures cost only: run the candidate as a shadow_dual_run campaign to decide quality',
          });
        if (base.trust_class === 'C')
          remediation.push({
            code: 'register_outcome',
            text: 'the quality evidence is judge-dominated (trust class C): register first-party outcomes or add programmatic scorers',
          });
        cmp = {
          ...base,
          state: r.state,
          cannot_measure:
            r.state === 'CANNOT_MEASURE'
              ? {
                  reason: 'instrument_cost_only',
                  detail:
                    'the pairs come from replay: cost savings are measured, quality is never decided from a historical served output',
                }
              : null,
          insufficient: null,
          decision: r.decision,
          decision_reasons: r.decision_reasons,
          remediation,
          stats: {
            quality_delta: r.quality_delta,
            cost_savings: r.cost_savings,
            cost_savings_null_reason: r.cost_savings_null_reason,
            resamples: settings.resamples,
            seed: settings.seed,
            level: r.level,
            alpha_one_sided_adjusted: r.alpha_one_sided_adjusted,
            candidates_k: K,
            run_index: campaign.run_index,
            margin_pp: settings.margin_pp,
            min_savings: settings.min_savings,
            interval_method: DECISION_INTERVAL_METHOD,
          },
          ...(r.sequential ? { sequential: sequentialSummary(r.sequential, spec, rows.length) } : {}),
        };
        statsParts.push({ call_type: ct, candidate_arm_id: cand.id, settings, result: r });
        if (r.cost_savings !== null && r.state !== 'CANNOT_MEASURE') {
          const tw = rows.reduce((a, x) => a + x.weight, 0);
          const qInc = rows.reduce((a, x) => a + x.weight * x.q_inc, 0) / tw;
          const cInc = rows.reduce((a, x) => a + x.weight * x.cost_inc_usd, 0) / tw;
          frontierCand.set(cand.id, {
            quality: qInc + r.quality_delta.point,
            cost: cInc * (1 - r.cost_savings.point),
            qi: [qInc + r.quality_delta.lower, qInc + r.quality_delta.upper],
            ci: [cInc * (1 - r.cost_savings.upper), cInc * (1 - r.cost_savings.lower)],
          });
        }
      }
      pairedParts.push({ call_type: ct, candidate_arm_id: cand.id, rows });
      comparisons.push(cmp);
    }
    const ctVerdicts = verdicts.filter((v) => v.call_type === ct);
    const ctJudge = judgeSummary(spec, ctVerdicts, agreement);
    agreementAll.push(...agreement);
    for (const cmp of comparisons) pendingText.push({ ct, cmp, judge: ctJudge });

    // 7. frontier
    const points: FrontierPoint[] = [];
    const beside: { arm_id: string; why: string }[] = [];
    if (
      incView.status === 'measurable' &&
      incView.cost.per_request_mean_usd !== null &&
      incView.quality.mean !== null
    ) {
      points.push({
        arm_id: incView.arm_id,
        cost_usd: incView.cost.per_request_mean_usd,
        quality: incView.quality.mean,
        cost_interval: null,
        quality_interval: null,
        on_frontier: true,
        dominated_by: null,
      });
    } else beside.push({ arm_id: incView.arm_id, why: `incumbent not drawn: ${incView.status}` });
    for (const cmp of comparisons) {
      const f = frontierCand.get(cmp.candidate_arm_id);
      if (f)
        points.push({
          arm_id: cmp.candidate_arm_id,
          cost_usd: f.cost,
          quality: f.quality,
          cost_interval: f.ci,
          quality_interval: f.qi,
          on_frontier: true,
          dominated_by: null,
        });
      else {
        const v = arms.find((a) => a.arm_id === cmp.candidate_arm_id)!;
        const why =
          cmp.state === 'CANNOT_MEASURE'
            ? `cannot measure: ${cmp.cannot_measure!.reason}${cmp.insufficient ? ` (have ${cmp.insufficient.have}, need ${cmp.insufficient.need})` : ''}`
            : `unpriced (cost savings ${cmp.stats?.cost_savings_null_reason ?? 'unknown'})`;
        beside.push({ arm_id: v.arm_id, why });
      }
    }
    for (const p of points) {
      const dom = points.find(
        (o) =>
          o !== p &&
          o.cost_usd <= p.cost_usd &&
          o.quality >= p.quality &&
          (o.cost_usd < p.cost_usd || o.quality > p.quality),
      );
      if (dom) {
        p.on_frontier = false;
        p.dominated_by = dom.arm_id;
        beside.push({ arm_id: p.arm_id, why: `dominated by ${dom.arm_id}` });
      }
    }

    // before any pairs: the prior, inflated by the design effect of the admitted clusters' weights
    const datasetPlan = (): PowerPlanValue => {
      const cw = new Map<string, number>();
      for (const h of admitted) cw.set(clusterOf.get(h)!, (cw.get(clusterOf.get(h)!) ?? 0) + weight.get(h)!);
      return comparisonPowerPlan([], { ...planSettings, clusters: cw.size, priorWeights: [...cw.values()] });
    };
    const card: DatasetCard = {
      schema: 'shadow.dataset_card/v1',
      dataset_hash: fastContentHash(admitted.map((h) => [h, weight.get(h)!])),
      call_type: ct,
      unique_items: admitted.length,
      total_weight: admitted.reduce((a, h) => a + weight.get(h)!, 0),
      duplicated_items: admitted.filter((h) => weight.get(h)! > 1).length,
      near_duplicate_clusters: new Set(clusterOf.values()).size,
      near_duplicate_threshold: NEAR_DUPLICATE_HAMMING_BITS,
      near_duplicate_method: NEAR_DUPLICATE_METHOD,
      strata: sortRecord(strata),
      traffic_classes: sortRecord(trafficCounts),
      exclusions,
      exclusion_counts: sortRecord(exclusionCounts),
      power_plan: datasetPlan(),
    };
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
  const starts = obs.map((x) => x.o.started_at).sort();
  const ends = obs.map((x) => x.o.ended_at).sort();
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
    window: { first_started_at: starts[0] ?? null, last_ended_at: ends[ends.length - 1] ?? null },
    counts: { messages_in: input.messages.length, superseded_observations: obsRaw.length - obs.length },
    call_types: runTimes,
    spend: runSpend(withIds, verdicts),
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
    costEvidence,
    paired: pairedParts,
    stats: statsParts,
    aa: aaParts,
    outcomes,
    judge:
      verdicts.length > 0 || agreementRows.length > 0
        ? { verdicts: verdicts.map((v) => ({ ...v })), agreement: agreementRows }
        : null,
    lineage: {
      envelope_ids: [...new Set(obs.map((x) => x.o.envelope_id).concat(evs.map((e) => e.envelope_id)))].sort(),
      observation_ids: obs.map((x) => x.id).sort(),
      outcome_ids: outcomes.map((o) => o.outcome_id),
    },
  });
  return { report, reportJson, reportId, runRecord, runRecordJson, runRecordId, bundle, datasetCards };
}

/** Σ charged_micro_usd over distinct observations (by id), split by arm; the judge's verdicts apart (see RunSpend). */
function runSpend(
  withIds: { o: Observation; id: string }[],
  verdicts: readonly { charged_micro_usd: number }[],
): RunSpend {
  const seen = new Set<string>();
  const byArm: Record<string, number> = {};
  let total = 0;
  for (const { o, id } of withIds) {
    if (seen.has(id)) continue;
    seen.add(id);
    total += o.charged_micro_usd;
    inc(byArm, o.role === 'incumbent_aa' ? `${o.arm_id}:aa` : o.arm_id, o.charged_micro_usd);
  }
  return {
    arms_micro_usd: total,
    by_arm: sortRecord(byArm),
    judge_micro_usd: verdicts.reduce((a, v) => a + v.charged_micro_usd, 0),
  };
}

function sortRecord(r: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.keys(r)
      .sort()
      .map((k) => [k, r[k]!]),
  );
}

function describe(ct: string, inc: string, c: Comparison, marginPp: number, judge: JudgeSummary | undefined): string {
  const who = `${ct}: ${c.candidate_arm_id} vs ${inc}`;
  const next = c.remediation.length ? ` Next: ${c.remediation[0]!.text}.` : '';
  if (c.state === 'CANNOT_MEASURE')
    return `${who}: cannot measure (${c.cannot_measure!.reason}: ${c.cannot_measure!.detail}).${next}`;
  const s = c.stats!;
  const d = `quality delta ${(s.quality_delta.point * 100).toFixed(2)}pp [${(s.quality_delta.lower * 100).toFixed(2)}, ${(s.quality_delta.upper * 100).toFixed(2)}] at ${(s.level * 100).toFixed(1)}%`;
  const sv = s.cost_savings
    ? `savings ${(s.cost_savings.point * 100).toFixed(1)}% [${(s.cost_savings.lower * 100).toFixed(1)}, ${(s.cost_savings.upper * 100).toFixed(1)}] (${c.basis})`
    : 'savings unmeasurable';
  const word =
    c.decision === 'pass'
      ? `passes non-inferiority at -${marginPp}pp`
      : c.decision === 'fail'
        ? 'fails'
        : 'is inconclusive';
  const cal = c.trust_class === 'C' || c.trust_class === 'B' ? ` (${kappaText(judge)})` : '';
  return `${who}: ${c.state}, ${word}; ${d}; ${sv}; trust class ${c.trust_class ?? '-'}${cal}.${c.decision === 'pass' ? '' : next}`;
}
