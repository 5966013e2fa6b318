/**
 * The dataset builder behind `POST /v1/suites/{suite}/freeze` and the readiness meter of
 * `GET /v1/suites/{suite}/status`: captures of one suite (already read from the CAPTURE stream)
 * → one weighted, content-addressed dataset per call type. Pure: no I/O.
 *
 * - exact duplicates (same item_hash) collapse into one item whose weight is its capture count;
 * - near duplicates (prompt SimHash, {@link clusterBySimhash}) form clusters, listed on the card;
 * - every capture left out has a reason from the closed list `DATASET_EXCLUSION_REASONS`;
 *   captures the sidecar skipped (size, unsure redaction) are counted from its markers;
 * - over `max_items` the highest-frequency items are kept (ties: smallest item_hash);
 * - `dataset_hash` = fastContentHash of the sorted `[item_hash, weight]` pairs: the formula of the
 *   fold's dataset card, so identical captures give an identical hash and a frozen run that admits
 *   every item reports the same hash.
 * Source: issue 17 items 1–2; docs/statistics.md (power plan); docs/architecture.md "Statistics".
 */
import {
  contentHash,
  deriveFitEligibility,
  syntheticExpansionCount,
  syntheticVariables,
  type Dataset,
  type DatasetCard,
  type DatasetExclusionReason,
  type DatasetItem,
  type FreezeRequest,
  type TrafficClass,
} from '@shadowplane/contracts';
import { fastContentHash } from './canonical-fast.js';
import { clusterBySimhash, NEAR_DUPLICATE_HAMMING_BITS, NEAR_DUPLICATE_METHOD } from './clusters.js';
import { comparisonPowerPlan } from './compare.js';

/** A capture read from the stream, reduced to what the builder needs. */
export interface CaptureRecord {
  seq: number;
  envelope_id: string;
  item_hash: string;
  call_type: string;
  traffic_class: TrafficClass;
  captured_at: string;
  /** 16 hex chars; null when no prompt could be read (then `problem` says why) */
  prompt_simhash: string | null;
  /** sorted distinct expectation kinds (the card's strata) */
  expectation_kinds: string[];
  /** why the capture cannot be a dataset item, or null */
  problem: null | 'unparseable' | 'stateful' | 'untranslatable' | 'body_missing';
}

/** A stream message that is not a valid envelope: counted as `unparseable` under its subject's call type. */
export interface UnparseableRecord {
  seq: number;
  call_type: string;
}

/** A sidecar skip marker (`shadow.capture_skip/v1`), reduced. */
export interface SkipRecord {
  call_type: string;
  at: string;
  reason: 'too_large' | 'pii_uncertain';
}

/** Input of {@link buildDatasets}. */
export interface BuildInput {
  suite: string;
  /** the CAPTURE stream's name, written on the dataset */
  stream: string;
  captures: readonly CaptureRecord[];
  unparseable?: readonly UnparseableRecord[];
  skips?: readonly SkipRecord[];
  request: FreezeRequest;
  /** from_failures: the item hashes that failed (the builder keeps only their captures) and the arm */
  failures?: { items: ReadonlySet<string>; arm_id: string };
}

type Window = { since?: string | undefined; until?: string | undefined };
const inWindow = (at: string, w: Window) =>
  (w.since === undefined || Date.parse(at) >= Date.parse(w.since)) &&
  (w.until === undefined || Date.parse(at) < Date.parse(w.until));

function inc(m: Record<string, number>, k: string, by = 1): void {
  m[k] = (m[k] ?? 0) + by;
}
function sorted<T>(r: Record<string, T>): Record<string, T> {
  return Object.fromEntries(
    Object.keys(r)
      .sort()
      .map((k) => [k, r[k]!]),
  );
}

/** How many clusters the card lists by name (largest by weight first). */
const LISTED_CLUSTERS = 20;

/**
 * Builds one dataset per call type (sorted by call type) from a suite's captures.
 * Shapes: see {@link BuildInput}; the result's `items` are sorted by item_hash, each with its
 * capture references (stream seq + envelope id) in seq order.
 * The card's power plan is the prior plan of `comparisonPowerPlan` at the dataset's clusters
 * (weights' design effect) for `request.margin_pp` at one-sided `request.alpha`, one candidate,
 * run 1 — a campaign with more candidates or later runs spends a smaller α (statistics.md).
 * Card fields beyond the report card's: `suite`, `builder`, `max_items`, `census` (items and
 * weight per traffic class), `skipped_at_capture` (per reason, from markers), `filtered_out`
 * (captures outside the builder's filter/window, per cause), `clusters` (the largest, with items
 * and weight), `power_plan_settings`, `fit_eligibility` (derived from the card itself:
 * contracts `deriveFitEligibility`).
 */
export function buildDatasets(input: BuildInput): Dataset[] {
  const { request } = input;
  const b = request.builder;
  // import / synthetic: the captures are exactly the builder's own items (all of its class), no window
  // from_failures: the failed items' captures of any class but test, no window
  const filter =
    b.kind === 'from_filter'
      ? b.filter
      : {
          traffic_classes:
            b.kind === 'import'
              ? ['import']
              : b.kind === 'synthetic'
                ? ['synthetic']
                : ['production', 'synthetic', 'import'],
          call_types: b.kind === 'synthetic' ? [b.call_type] : undefined,
        };
  const window: Window = b.kind === 'from_filter' ? b.window : {};
  if (b.kind === 'from_failures' && !input.failures) throw new Error('buildDatasets: from_failures needs failures');
  const record: Dataset['builder'] =
    b.kind === 'import'
      ? { kind: 'import', imported_items: b.items.length }
      : b.kind === 'from_failures'
        ? {
            kind: 'from_failures',
            campaign_id: b.campaign_id,
            arm_id: input.failures!.arm_id,
            below: b.below,
            failed_items: input.failures!.items.size,
          }
        : b.kind === 'synthetic'
          ? {
              kind: 'synthetic',
              call_type: b.call_type,
              api: b.api,
              expansion: b.rows ? 'rows' : 'product',
              variables: syntheticVariables(b),
              expanded_items: syntheticExpansionCount(b),
              spec_hash: contentHash(b),
            }
          : b;
  const wantCt = (ct: string) => filter.call_types === undefined || filter.call_types.includes(ct);
  const callTypes = new Set<string>();
  for (const c of input.captures) if (wantCt(c.call_type)) callTypes.add(c.call_type);
  for (const s of input.skips ?? []) if (wantCt(s.call_type)) callTypes.add(s.call_type);
  for (const u of input.unparseable ?? []) if (wantCt(u.call_type)) callTypes.add(u.call_type);

  const out: Dataset[] = [];
  for (const ct of [...callTypes].sort()) {
    const filteredOut: Record<string, number> = {};
    const byItem = new Map<string, CaptureRecord[]>();
    for (const c of input.captures) {
      if (c.call_type !== ct) continue;
      if (input.failures && !input.failures.items.has(c.item_hash)) continue;
      if (!inWindow(c.captured_at, window)) {
        inc(filteredOut, 'outside_window');
        continue;
      }
      if (c.traffic_class !== 'test' && !(filter.traffic_classes as readonly string[]).includes(c.traffic_class)) {
        inc(filteredOut, `traffic_class:${c.traffic_class}`);
        continue;
      }
      const list = byItem.get(c.item_hash);
      if (list) list.push(c);
      else byItem.set(c.item_hash, [c]);
    }
    const excluded = new Map<string, DatasetExclusionReason>();
    const candidates: { h: string; caps: CaptureRecord[] }[] = [];
    for (const [h, capsUnsorted] of byItem) {
      const caps = [...capsUnsorted].sort((x, y) => x.seq - y.seq);
      const first = caps[0]!;
      const problems = caps.map((c) => c.problem).filter((p): p is NonNullable<typeof p> => p !== null);
      // a problem with any capture of the item excludes it whole: its weight could not be kept
      if (problems.length > 0) excluded.set(h, [...problems].sort()[0]!);
      else if (first.traffic_class === 'test') excluded.set(h, 'test_traffic');
      else candidates.push({ h, caps });
    }
    // the cap keeps the highest-frequency items; ties by item_hash so the choice is reproducible
    candidates.sort((x, y) => y.caps.length - x.caps.length || (x.h < y.h ? -1 : x.h > y.h ? 1 : 0));
    const kept = candidates.slice(0, request.max_items);
    for (const c of candidates.slice(request.max_items)) excluded.set(c.h, 'over_cap');
    kept.sort((x, y) => (x.h < y.h ? -1 : 1));

    const clusterOf = clusterBySimhash(kept.map((k) => [k.h, k.caps[0]!.prompt_simhash!] as const));
    const items: DatasetItem[] = kept.map(({ h, caps }) => ({
      item_hash: h,
      weight: caps.length,
      cluster: clusterOf.get(h)!,
      prompt_simhash: caps[0]!.prompt_simhash!,
      traffic_class: caps[0]!.traffic_class,
      refs: caps.map((c) => ({ seq: c.seq, envelope_id: c.envelope_id })),
    }));

    const exclusions: { item_hash: string; reason: string }[] = [...excluded.entries()]
      .sort((x, y) => (x[0] < y[0] ? -1 : 1))
      .map(([item_hash, reason]) => ({ item_hash, reason }));
    // unparseable messages have no trustworthy item hash: they are named by stream sequence
    for (const u of [...(input.unparseable ?? [])].sort((x, y) => x.seq - y.seq))
      if (u.call_type === ct) exclusions.push({ item_hash: `seq:${u.seq}`, reason: 'unparseable' });
    const exclusionCounts: Record<string, number> = {};
    for (const x of exclusions) inc(exclusionCounts, x.reason);
    const skipped: Record<string, number> = {};
    for (const s of input.skips ?? []) {
      if (s.call_type !== ct || !inWindow(s.at, window)) continue;
      const reason: DatasetExclusionReason = s.reason === 'too_large' ? 'too_large' : 'low_confidence_redaction';
      inc(skipped, reason);
      inc(exclusionCounts, reason);
    }

    const census: Record<string, { items: number; weight: number }> = {};
    const trafficClasses: Record<string, number> = {};
    const strata: Record<string, number> = {};
    const clusterStats = new Map<string, { items: number; weight: number }>();
    for (const [i, it] of items.entries()) {
      const cur = census[it.traffic_class] ?? { items: 0, weight: 0 };
      census[it.traffic_class] = { items: cur.items + 1, weight: cur.weight + it.weight };
      inc(trafficClasses, it.traffic_class);
      const kinds = kept[i]!.caps[0]!.expectation_kinds;
      inc(strata, kinds.length ? kinds.join('+') : 'none');
      const cs = clusterStats.get(it.cluster) ?? { items: 0, weight: 0 };
      clusterStats.set(it.cluster, { items: cs.items + 1, weight: cs.weight + it.weight });
    }
    const planSettings = {
      alpha_one_sided: request.alpha,
      margin_pp: request.margin_pp,
      noise_floor: { pairs: 0, sd: null },
    };
    const power = comparisonPowerPlan([], {
      ...planSettings,
      clusters: clusterStats.size,
      priorWeights: [...clusterStats.values()].map((c) => c.weight),
    });
    const datasetHash = fastContentHash(items.map((it) => [it.item_hash, it.weight]));
    const card: DatasetCard = {
      schema: 'shadow.dataset_card/v1',
      dataset_hash: datasetHash,
      call_type: ct,
      unique_items: items.length,
      total_weight: items.reduce((a, it) => a + it.weight, 0),
      duplicated_items: items.filter((it) => it.weight > 1).length,
      near_duplicate_clusters: clusterStats.size,
      near_duplicate_threshold: NEAR_DUPLICATE_HAMMING_BITS,
      near_duplicate_method: NEAR_DUPLICATE_METHOD,
      strata: sorted(strata),
      traffic_classes: sorted(trafficClasses),
      exclusions,
      exclusion_counts: sorted(exclusionCounts),
      power_plan: power,
      suite: input.suite,
      builder: record,
      max_items: request.max_items,
      census: sorted(census),
      skipped_at_capture: sorted(skipped),
      filtered_out: sorted(filteredOut),
      clusters: [...clusterStats.entries()]
        .sort((x, y) => y[1].weight - x[1].weight || y[1].items - x[1].items || (x[0] < y[0] ? -1 : 1))
        .slice(0, LISTED_CLUSTERS)
        .map(([cluster, s]) => ({ cluster, items: s.items, weight: s.weight })),
      power_plan_settings: { ...planSettings, candidates: 1, run_index: 1 },
    };
    card['fit_eligibility'] = deriveFitEligibility(card);
    out.push({
      schema: 'shadow.dataset/v1',
      dataset_hash: datasetHash,
      suite: input.suite,
      call_type: ct,
      stream: input.stream,
      builder: record,
      max_items: request.max_items,
      items,
      card,
    });
  }
  return out;
}

/**
 * Why a request body cannot be a dataset item whatever arm it is sent to, or null. Mirrors the
 * duplicator's common checks (architecture.md honesty rule 8): provider-side state
 * (`previous_response_id`, `conversation`, `background`, Anthropic `container`) → `stateful`;
 * provider-executed tools and non-text content → `untranslatable`; a non-object body → `unparseable`.
 */
export function bodyProblem(api: string, body: unknown): 'stateful' | 'untranslatable' | 'unparseable' | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'unparseable';
  const b = body as Record<string, unknown>;
  if (api === 'openai.responses') {
    if ((b['previous_response_id'] ?? null) !== null || (b['conversation'] ?? null) !== null) return 'stateful';
    if (b['background'] === true) return 'stateful';
  }
  if (api === 'anthropic.messages' && b['container'] !== undefined) return 'stateful';
  if (api !== 'anthropic.messages' && b['web_search_options'] !== undefined) return 'untranslatable';
  for (const t of Array.isArray(b['tools']) ? b['tools'] : []) {
    if (t === null || typeof t !== 'object') continue;
    const type = (t as Record<string, unknown>)['type'];
    if (typeof type !== 'string') continue;
    if (api === 'anthropic.messages' ? type !== 'custom' : type !== 'function' && type !== 'custom')
      return 'untranslatable';
  }
  let bad = false;
  const visit = (content: unknown) => {
    if (!Array.isArray(content)) return;
    for (const p of content) {
      if (p === null || typeof p !== 'object') continue;
      const type = String((p as Record<string, unknown>)['type'] ?? '');
      if (TEXT_PARTS.has(type)) {
        if (type === 'tool_result') visit((p as Record<string, unknown>)['content']);
        continue;
      }
      bad = true;
    }
  };
  const each = (arr: unknown) => {
    if (Array.isArray(arr))
      for (const m of arr) if (m && typeof m === 'object') visit((m as Record<string, unknown>)['content']);
  };
  each(b['messages']);
  each(b['input']);
  if (Array.isArray(b['system'])) visit(b['system']);
  return bad ? 'untranslatable' : null;
}

const TEXT_PARTS = new Set([
  'text',
  'input_text',
  'output_text',
  'tool_use',
  'tool_result',
  'refusal',
  'thinking',
  'redacted_thinking',
  'function_call',
  'function_call_output',
]);
