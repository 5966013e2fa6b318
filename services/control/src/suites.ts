/**
 * Suites: the readiness meter (`GET /v1/suites/{suite}/status`), the freeze
 * (`POST /v1/suites/{suite}/freeze`) and the check a frozen campaign source passes at launch.
 *
 * A suite exists once anything was captured for it or a dataset was frozen from it. Readiness is
 * a dry freeze of what the CAPTURE stream holds now (distinct items, clusters, exclusions by
 * reason, the power plan at the margin), never a bare count. A freeze writes one
 * `shadow.dataset/v1` per call type into the object store `shadow_datasets` under its hash (only
 * when absent: datasets are immutable, a re-freeze of the same captures writes nothing) and points
 * the suite index (KV `shadow_suites`, `<suite>.<call_type>`) at it.
 * Source: issue 17 items 1–3; docs/architecture.md "State".
 */
import type { KV } from '@nats-io/kv';
import { openKv, openObjectStore, type Bus } from '@shadowplane/bus';
import {
  Dataset,
  deriveFitEligibility,
  FreezeRequest,
  isSubjectToken,
  ShadowplaneError,
  SuiteFreezeRecord,
  type CampaignSpec,
  type DatasetCard,
} from '@shadowplane/contracts';
import { buildDatasets } from '@shadowplane/evidence';
import { invalidRequest, parseOr400 } from './errors.js';
import { failedItems, importItems, syntheticItems, type RunsDeps } from './suite-builders.js';
import { readSuiteCaptures, type ObjectStore, type SuiteCaptures } from './suite-captures.js';

export type { RunsDeps } from './suite-builders.js';

const dec = new TextDecoder();
const enc = new TextEncoder();

/** One call type of a freeze answer. */
export interface FrozenCallType {
  call_type: string;
  dataset_hash: string;
  /** false: a dataset with this hash already existed and nothing was written */
  created: boolean;
  card: DatasetCard;
}

/** The from_failures builder's restriction of the build: the failed items and the arm they failed on. */
type Failures = { items: Set<string>; arm_id: string };

/** Suite operations over the bus (one per control process). */
export class SuiteService {
  private constructor(
    private readonly bus: Bus,
    private readonly index: KV,
    private readonly datasets: ObjectStore,
    private readonly bodies: ObjectStore,
    private readonly runs: RunsDeps | undefined,
  ) {}

  /**
   * Opens the suite index, the datasets store and the capture bodies store (provisioned by
   * `provision`). `runs` (the campaigns and the reports read side) is what the `from_failures`
   * builder reads; without it that builder answers 500 internal.
   */
  static async open(bus: Bus, runs?: RunsDeps): Promise<SuiteService> {
    const [index, datasets, bodies] = await Promise.all([
      openKv(bus, bus.names.buckets.suites),
      openObjectStore(bus, bus.names.datasets),
      openObjectStore(bus, bus.names.captureBodies),
    ]);
    return new SuiteService(bus, index, datasets, bodies, runs);
  }

  /**
   * A frozen dataset by hash, or null.
   * @throws ShadowplaneError internal when the stored document does not parse
   */
  async readDataset(hash: string): Promise<Dataset | null> {
    const b = await this.datasets.getBlob(hash);
    if (!b) return null;
    const ds = Dataset.parse(JSON.parse(dec.decode(b)));
    // a dataset frozen before cards carried it: derived on read, as a freeze derives it
    if (ds.card['fit_eligibility'] === undefined) ds.card['fit_eligibility'] = deriveFitEligibility(ds.card);
    return ds;
  }

  /**
   * The readiness of a suite: per call type the confirmed capture counts, a dry freeze at the
   * request's settings (distinct items, clusters, exclusions, power plan and the hash a freeze
   * would give now) and, when frozen, the latest frozen dataset's card.
   * @throws ShadowplaneError 400 invalid_request (suite token), 404 not_found (nothing captured or frozen)
   */
  async status(suite: string, query: Record<string, unknown>): Promise<unknown> {
    checkSuite(suite);
    const req = parseOr400(FreezeRequest, numericQuery(query));
    const [caps, frozen] = await Promise.all([this.readSuite(suite), this.frozenIndex(suite)]);
    if (caps.counts.size === 0 && frozen.size === 0)
      throw new ShadowplaneError('not_found', `no captures and no frozen dataset for suite ${suite}`, {
        details: { field: 'suite', suite },
      });
    const preview = buildDatasets({ suite, stream: this.bus.names.streams.capture, ...caps, request: req });
    const cts = [...new Set([...caps.counts.keys(), ...frozen.keys(), ...preview.map((d) => d.call_type)])].sort();
    const callTypes = [];
    for (const ct of cts) {
      const p = preview.find((d) => d.call_type === ct);
      const f = frozen.get(ct);
      const ds = f ? await this.readDataset(f.dataset_hash) : null;
      const c = caps.counts.get(ct) ?? { envelopes: 0, skip_markers: 0 };
      callTypes.push({
        call_type: ct,
        confirmed_captures: c.envelopes,
        skip_markers: c.skip_markers,
        readiness: p
          ? {
              distinct_items: p.card.unique_items,
              total_weight: p.card.total_weight,
              near_duplicate_clusters: p.card.near_duplicate_clusters,
              exclusion_counts: p.card.exclusion_counts ?? {},
              census: p.card['census'],
              power_plan: p.card.power_plan,
              power_plan_settings: p.card['power_plan_settings'],
              fit_eligibility: p.card['fit_eligibility'],
              freeze_would_give: p.dataset_hash,
            }
          : null,
        frozen: f
          ? {
              dataset_hash: f.dataset_hash,
              frozen_at: f.frozen_at,
              /** true while a freeze now would give the same dataset */
              current: p?.dataset_hash === f.dataset_hash,
              card: ds?.card ?? null,
            }
          : null,
      });
    }
    return {
      schema: 'shadow.suite_status/v1',
      suite,
      stream: this.bus.names.streams.capture,
      settings: { max_items: req.max_items, margin_pp: req.margin_pp, alpha: req.alpha },
      call_types: callTypes,
    };
  }

  /**
   * Freezes a suite: one dataset per call type of what the stream holds now. Stages: parse the
   * request, gather the builder's captures, build the datasets, then store each dataset and
   * point the suite index at it.
   * @throws ShadowplaneError 400 invalid_request (fields named),
   *   404 not_found (nothing captured for the suite / the filter's call types)
   */
  async freeze(suite: string, body: unknown): Promise<{ suite: string; datasets: FrozenCallType[] }> {
    checkSuite(suite);
    const req = parseOr400(FreezeRequest, body ?? {});
    const { caps, failures } = await this.builderCaptures(suite, req);
    const built = buildDatasets({
      suite,
      stream: this.bus.names.streams.capture,
      ...caps,
      request: req,
      ...(failures ? { failures } : {}),
    });
    if (built.length === 0)
      throw new ShadowplaneError('not_found', `nothing captured for suite ${suite} matches the builder`, {
        details: { field: 'suite', suite },
      });
    const out: FrozenCallType[] = [];
    for (const ds of built) {
      const created = await this.storeDataset(suite, ds);
      await this.pointIndex(suite, ds);
      const stored = created ? ds : ((await this.readDataset(ds.dataset_hash)) ?? ds);
      out.push({ call_type: ds.call_type, dataset_hash: ds.dataset_hash, created, card: stored.card });
    }
    return { suite, datasets: out };
  }

  /**
   * Freeze stage: the captures the request's builder reads (import and synthetic publish theirs
   * first; for from_failures, also the failures).
   */
  private async builderCaptures(
    suite: string,
    req: FreezeRequest,
  ): Promise<{ caps: SuiteCaptures; failures?: Failures }> {
    if (req.builder.kind === 'import') return { caps: await importItems(this.bus, this.bodies, suite, req.builder) };
    if (req.builder.kind === 'synthetic')
      return { caps: await syntheticItems(this.bus, this.bodies, suite, req.builder) };
    if (req.builder.kind === 'from_failures') {
      const r = await failedItems(this.bus, this.runs, suite, req.builder);
      const all = await this.readSuite(suite);
      // only the failed items' captures of the run's call types; no markers or unparseable counts
      const caps: SuiteCaptures = {
        captures: all.captures.filter((c) => r.items.has(c.item_hash) && r.call_types.includes(c.call_type)),
        unparseable: [],
        skips: [],
        counts: all.counts,
      };
      return { caps, failures: { items: r.items, arm_id: r.arm_id } };
    }
    return { caps: await this.readSuite(suite) };
  }

  /** Freeze stage: writes the dataset under its hash unless present (datasets are immutable); true when written. */
  private async storeDataset(suite: string, ds: Dataset): Promise<boolean> {
    if (await this.datasets.info(ds.dataset_hash)) return false;
    await this.datasets.putBlob(
      { name: ds.dataset_hash, description: `${suite}/${ds.call_type}` },
      enc.encode(JSON.stringify(Dataset.parse(ds))),
    );
    return true;
  }

  /** Freeze stage: points `<suite>.<call_type>` of the suite index at the dataset, unless it already does. */
  private async pointIndex(suite: string, ds: Dataset): Promise<void> {
    const key = `${suite}.${ds.call_type}`;
    const cur = await this.index.get(key);
    const had = cur && cur.operation === 'PUT' ? SuiteFreezeRecord.safeParse(cur.json()) : null;
    if (had?.success && had.data.dataset_hash === ds.dataset_hash) return;
    const rec: SuiteFreezeRecord = {
      dataset_hash: ds.dataset_hash,
      frozen_at: new Date().toISOString(),
      unique_items: ds.items.length,
    };
    await this.index.put(key, JSON.stringify(rec));
  }

  /**
   * Launch check of a `frozen:<hash>` source: the dataset exists, belongs to the spec's suite and
   * is the spec's only call type (a dataset is one call type's); `sample_rate` is 1.
   * @throws ShadowplaneError 404 unknown_dataset; 400 invalid_request naming `source` / `sample_rate` / `call_types`
   */
  async checkSource(spec: CampaignSpec): Promise<Dataset | null> {
    if (spec.source === 'live') return null;
    const hash = spec.source.slice('frozen:'.length);
    const ds = await this.readDataset(hash);
    if (!ds)
      throw new ShadowplaneError('unknown_dataset', `no frozen dataset ${hash}`, {
        details: { issues: [{ path: 'source', message: 'no frozen dataset has this hash' }], dataset_hash: hash },
      });
    if (ds.suite !== spec.suite)
      throw invalidRequest([{ path: 'source', message: `dataset ${hash} was frozen from suite ${ds.suite}` }]);
    // sampling would drop dataset items without a trace on the report; a smaller dataset is a freeze
    if (spec.sample_rate < 1)
      throw invalidRequest([
        {
          path: 'sample_rate',
          message: 'a frozen run dispatches the whole dataset: sample_rate must be 1 (freeze with a smaller max_items)',
        },
      ]);
    // items of a class the spec does not admit would all be excluded as traffic_class
    const notAdmitted = Object.keys((ds.card['census'] ?? {}) as Record<string, unknown>).filter(
      (tc) => !(spec.traffic_classes as readonly string[]).includes(tc),
    );
    if (notAdmitted.length > 0)
      throw invalidRequest([
        {
          path: 'traffic_classes',
          message: `dataset ${hash} holds ${notAdmitted.join(', ')} items, which the spec does not admit: add ${notAdmitted.join(', ')} to traffic_classes`,
        },
      ]);
    if (spec.call_types.length !== 1 || spec.call_types[0] !== ds.call_type)
      throw invalidRequest([
        { path: 'call_types', message: `a frozen run of dataset ${hash} has exactly one call type: ${ds.call_type}` },
      ]);
    return ds;
  }

  /** A dataset card by hash from the frozen datasets, or null. */
  async readCard(hash: string): Promise<DatasetCard | null> {
    return (await this.readDataset(hash))?.card ?? null;
  }

  private async frozenIndex(suite: string): Promise<Map<string, SuiteFreezeRecord>> {
    const out = new Map<string, SuiteFreezeRecord>();
    const keys: string[] = [];
    for await (const k of await this.index.keys(`${suite}.*`)) keys.push(k);
    for (const k of keys) {
      const e = await this.index.get(k);
      if (!e || e.operation !== 'PUT') continue;
      const r = SuiteFreezeRecord.safeParse(e.json());
      if (r.success) out.set(k.slice(suite.length + 1), r.data);
    }
    return out;
  }

  /** Reads every message the CAPTURE stream holds for the suite (ordered consumer; ends when caught up). */
  private readSuite(suite: string): Promise<SuiteCaptures> {
    return readSuiteCaptures(this.bus, this.bodies, suite);
  }
}

function checkSuite(suite: string): void {
  if (!isSubjectToken(suite)) throw invalidRequest([{ path: 'suite', message: 'must be 1–64 of [A-Za-z0-9_-]' }]);
}

/** Query strings are text: the numeric settings are read as numbers (anything else fails the schema). */
function numericQuery(q: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(q)) {
    const num = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
    out[k] = (k === 'max_items' || k === 'margin_pp' || k === 'alpha') && !Number.isNaN(num) ? num : v;
  }
  return out;
}
