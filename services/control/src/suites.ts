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
import { DeliverPolicy } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { openKv, openObjectStore, type Bus } from '@shadowplane/bus';
import {
  CaptureSkipMarker,
  DATASET_BUILDER_KINDS,
  Dataset,
  deriveFitEligibility,
  Envelope,
  FreezeRequest,
  IMPLEMENTED_DATASET_BUILDERS,
  IMPORT_ITEM_MAX_BYTES,
  itemHash,
  type ImportBuilder,
  isSubjectToken,
  sha256Hex,
  ShadowplaneError,
  simhash64,
  SuiteFreezeRecord,
  type Campaign,
  type CampaignSpec,
  type FromFailuresBuilder,
  isShadowplaneError,
  type DatasetCard,
} from '@shadowplane/contracts';
import {
  bodyProblem,
  buildDatasets,
  type PairRow,
  type CaptureRecord,
  type SkipRecord,
  type UnparseableRecord,
} from '@shadowplane/evidence';
import { requestPromptText, WIRE_ADAPTERS } from '@shadowplane/providers';
import { TERMINAL_STATES } from './campaign-ids.js';
import type { CampaignService } from './campaigns.js';
import { invalidRequest, parseOr400 } from './errors.js';
import type { ReportsPort } from './reports-port.js';

type ObjectStore = Awaited<ReturnType<typeof openObjectStore>>;

const dec = new TextDecoder();
const enc = new TextEncoder();

/** What the stream holds for one suite, reduced for the builder. */
interface SuiteCaptures {
  captures: CaptureRecord[];
  unparseable: UnparseableRecord[];
  skips: SkipRecord[];
  /** confirmed (stored) envelopes and skip markers per call type, from the stream's subject counts */
  counts: Map<string, { envelopes: number; skip_markers: number }>;
}

/** One call type of a freeze answer. */
export interface FrozenCallType {
  call_type: string;
  dataset_hash: string;
  /** false: a dataset with this hash already existed and nothing was written */
  created: boolean;
  card: DatasetCard;
}

/** What the `from_failures` builder reads: the campaigns and the reports' read side. */
export interface RunsDeps {
  campaigns: CampaignService;
  reports: ReportsPort;
}

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
   * Freezes a suite: one dataset per call type of what the stream holds now.
   * @throws ShadowplaneError 400 invalid_request (fields named), 400 builder_unsupported,
   *   404 not_found (nothing captured for the suite / the filter's call types)
   */
  async freeze(suite: string, body: unknown): Promise<{ suite: string; datasets: FrozenCallType[] }> {
    checkSuite(suite);
    const kind = (body as { builder?: { kind?: unknown } } | undefined)?.builder?.kind;
    if (
      typeof kind === 'string' &&
      (DATASET_BUILDER_KINDS as readonly string[]).includes(kind) &&
      !(IMPLEMENTED_DATASET_BUILDERS as readonly string[]).includes(kind)
    )
      throw invalidRequest(
        [
          {
            path: 'builder.kind',
            message: `${kind} is not implemented; use ${IMPLEMENTED_DATASET_BUILDERS.join(' or ')}`,
          },
        ],
        'builder_unsupported',
        `dataset builder ${kind} is not implemented; only ${IMPLEMENTED_DATASET_BUILDERS.join(' and ')} are`,
      );
    const req = parseOr400(FreezeRequest, body ?? {});
    let failures: { items: Set<string>; arm_id: string } | undefined;
    let caps: SuiteCaptures;
    if (req.builder.kind === 'import') caps = await this.importItems(suite, req.builder);
    else if (req.builder.kind === 'from_failures') {
      const r = await this.failedItems(suite, req.builder);
      failures = { items: r.items, arm_id: r.arm_id };
      const all = await this.readSuite(suite);
      // only the failed items' captures of the run's call types; no markers or unparseable counts
      caps = {
        captures: all.captures.filter((c) => r.items.has(c.item_hash) && r.call_types.includes(c.call_type)),
        unparseable: [],
        skips: [],
        counts: all.counts,
      };
    } else caps = await this.readSuite(suite);
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
      const existing = await this.datasets.info(ds.dataset_hash);
      let created = false;
      if (!existing) {
        await this.datasets.putBlob(
          { name: ds.dataset_hash, description: `${suite}/${ds.call_type}` },
          enc.encode(JSON.stringify(Dataset.parse(ds))),
        );
        created = true;
      }
      const key = `${suite}.${ds.call_type}`;
      const cur = await this.index.get(key);
      const had = cur && cur.operation === 'PUT' ? SuiteFreezeRecord.safeParse(cur.json()) : null;
      if (!had?.success || had.data.dataset_hash !== ds.dataset_hash) {
        const rec: SuiteFreezeRecord = {
          dataset_hash: ds.dataset_hash,
          frozen_at: new Date().toISOString(),
          unique_items: ds.items.length,
        };
        await this.index.put(key, JSON.stringify(rec));
      }
      const stored = created ? ds : ((await this.readDataset(ds.dataset_hash)) ?? ds);
      out.push({ call_type: ds.call_type, dataset_hash: ds.dataset_hash, created, card: stored.card });
    }
    return { suite, datasets: out };
  }

  /**
   * The items an ended run observed failing on one arm (the `from_failures` builder): error
   * observations of the arm, and paired rows of the final report's evidence where the arm's
   * quality is below `below`.
   * @throws ShadowplaneError 404 not_found (no such campaign, `builder.campaign_id`), 400
   *   invalid_request (`builder.campaign_id` of another suite, `builder.arm_id` not called by the
   *   run), 409 conflict (the run has not ended or its final report is not written yet)
   */
  private async failedItems(
    suite: string,
    b: FromFailuresBuilder,
  ): Promise<{ items: Set<string>; arm_id: string; call_types: string[] }> {
    if (!this.runs) throw new ShadowplaneError('internal', 'the from_failures builder is not wired in this process');
    const id = b.campaign_id;
    let c: Campaign;
    try {
      c = await this.runs.campaigns.get(id);
    } catch (e) {
      if (isShadowplaneError(e) && e.code === 'not_found')
        throw new ShadowplaneError('not_found', `no campaign ${id}`, {
          details: { issues: [{ path: 'builder.campaign_id', message: 'no such campaign' }] },
        });
      throw e;
    }
    if (c.spec.suite !== suite)
      throw invalidRequest([{ path: 'builder.campaign_id', message: `campaign ${id} ran on suite ${c.spec.suite}` }]);
    const called = [...(c.spec.compare ? [] : [c.spec.incumbent.id]), ...c.spec.candidates.map((a) => a.id)];
    const arm = b.arm_id ?? c.spec.candidates[0]!.id;
    if (!called.includes(arm))
      throw invalidRequest([
        { path: 'builder.arm_id', message: `campaign ${id} called no arm ${arm} (its arms: ${called.join(', ')})` },
      ]);
    const notYet = (why: string) =>
      new ShadowplaneError('conflict', `campaign ${id} has no failures to freeze yet: ${why}`, {
        details: { campaign_id: id, state: c.state },
      });
    if (!TERMINAL_STATES.has(c.state)) throw notYet(`it is ${c.state}`);
    const latest = await this.runs.reports.readLatestReport(this.bus, id);
    if (!latest || latest.provisional) throw notYet('its final report is not written yet');
    const items = new Set<string>();
    const paired =
      (latest.bundle as { parts?: { paired?: { candidate_arm_id: string; rows: PairRow[] }[] } } | null)?.parts
        ?.paired ?? [];
    for (const p of paired)
      for (const r of p.rows) {
        if (p.candidate_arm_id === arm && r.q_cand < b.below) items.add(r.item_hash);
        if (arm === c.spec.incumbent.id && !c.spec.compare && r.q_inc < b.below) items.add(r.item_hash);
      }
    for await (const m of this.runs.reports.exportObservations(this.bus, id, {}))
      if (m.schema === 'shadow.observation/v1' && m.arm_id === arm && m.role !== 'incumbent_aa' && m.status === 'error')
        items.add(m.item_hash);
    return { items, arm_id: arm, call_types: c.spec.call_types };
  }

  /**
   * The `import` builder's captures: each item becomes a `shadow.envelope/v1` of traffic class
   * `import` on `shadow.capture.<suite>.<call_type>` (request inline, no served summary, nothing
   * redacted — the operator supplied it), published with a message id derived from the suite, the
   * item hash and its occurrence in the import, so a retried import within the stream's
   * de-duplication window publishes nothing twice. Returns the captures as the builder reads them.
   * @throws ShadowplaneError 400 invalid_request naming `builder.items.<i>.request` (larger than
   *   IMPORT_ITEM_MAX_BYTES)
   */
  private async importItems(suite: string, b: ImportBuilder): Promise<SuiteCaptures> {
    const now = new Date().toISOString();
    b.items.forEach((it, i) => {
      const bytes = enc.encode(JSON.stringify(it.request)).length;
      if (bytes > IMPORT_ITEM_MAX_BYTES)
        throw invalidRequest([
          {
            path: `builder.items.${i}.request`,
            message: `${bytes} bytes; an imported request holds at most ${IMPORT_ITEM_MAX_BYTES}`,
          },
        ]);
    });
    const seen = new Map<string, number>();
    const captures: CaptureRecord[] = [];
    for (const it of b.items) {
      const path = WIRE_ADAPTERS[it.api].publicPath;
      const hash = itemHash(it.api, path, it.request);
      const k = seen.get(hash) ?? 0;
      seen.set(hash, k + 1);
      const id = sha256Hex(enc.encode(`import|${suite}|${it.call_type}|${hash}|${k}`));
      // a UUID (version 4 layout) from the hash: the same item and occurrence always gets the same id
      const envelopeId = `${id.slice(0, 8)}-${id.slice(8, 12)}-4${id.slice(13, 16)}-${'89ab'[parseInt(id[16]!, 16) % 4]}${id.slice(17, 20)}-${id.slice(20, 32)}`;
      const expectations =
        it.reference === undefined ? [] : Array.isArray(it.reference) ? it.reference : [it.reference];
      const json = JSON.stringify(it.request);
      const env: Envelope = {
        schema: 'shadow.envelope/v1',
        envelope_id: envelopeId,
        captured_at: now,
        suite,
        call_type: it.call_type,
        api: it.api,
        method: 'POST',
        path,
        request: { body: it.request, body_ref: null, bytes: enc.encode(json).length, content_type: 'application/json' },
        item_hash: hash,
        served: null,
        traffic_class: 'import',
        retention: { consent: true },
        expectations,
        redactions: [],
        source: { placement: 'ingress', sidecar_id: 'import', sticky_key_hash: null },
      };
      const ack = await this.bus.js.publish(this.bus.names.captureSubject(suite, it.call_type), JSON.stringify(env), {
        msgID: envelopeId,
      });
      captures.push(await this.record(ack.seq, env));
    }
    return { captures, unparseable: [], skips: [], counts: new Map() };
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
  private async readSuite(suite: string): Promise<SuiteCaptures> {
    const n = this.bus.names;
    const filter = n.captureSuiteAll(suite);
    const info = await this.bus.jsm.streams.info(n.streams.capture, { subjects_filter: filter });
    const counts = new Map<string, { envelopes: number; skip_markers: number }>();
    const base = n.captureFilter(suite).slice(0, -1); // `…shadow.capture.<suite>.`
    let total = 0;
    for (const [subject, count] of Object.entries(info.state.subjects ?? {})) {
      const rest = subject.slice(base.length).split('.');
      const ct = rest[0]!;
      const c = counts.get(ct) ?? { envelopes: 0, skip_markers: 0 };
      if (rest.length === 1) c.envelopes += count;
      else if (rest[1] === 'skipped') c.skip_markers += count;
      counts.set(ct, c);
      total += count;
    }
    const out: SuiteCaptures = { captures: [], unparseable: [], skips: [], counts };
    if (total === 0) return out;
    const consumer = await this.bus.js.consumers.get(n.streams.capture, {
      filter_subjects: filter,
      deliver_policy: DeliverPolicy.All,
    });
    // fetch in batches until caught up: a batch that comes back empty (messages aged out since
    // the count) ends the read instead of waiting for messages that will never come
    try {
      for (;;) {
        const batch = await consumer.fetch({ max_messages: 1000, expires: 2000 });
        let got = 0;
        let pending = 1;
        for await (const m of batch) {
          got++;
          pending = m.info.pending;
          const rest = m.subject.slice(base.length).split('.');
          const ct = rest[0]!;
          const json = safeJson(m.data);
          if (rest.length === 2 && rest[1] === 'skipped') {
            const s = CaptureSkipMarker.safeParse(json);
            if (s.success) out.skips.push({ call_type: ct, at: s.data.at, reason: s.data.reason });
          } else if (rest.length === 1) {
            const e = Envelope.safeParse(json);
            if (!e.success) out.unparseable.push({ seq: m.seq, call_type: ct });
            else out.captures.push(await this.record(m.seq, e.data));
          }
          if (pending === 0) break;
        }
        if (got === 0 || pending === 0) break;
      }
    } finally {
      await consumer.delete().catch(() => undefined);
    }
    return out;
  }

  private async record(seq: number, env: Envelope): Promise<CaptureRecord> {
    const r: CaptureRecord = {
      seq,
      envelope_id: env.envelope_id,
      item_hash: env.item_hash,
      call_type: env.call_type,
      traffic_class: env.traffic_class,
      captured_at: env.captured_at,
      prompt_simhash: null,
      expectation_kinds: [...new Set(env.expectations.map((x) => x.kind))].sort(),
      problem: null,
    };
    let body: unknown = env.request.body;
    if (env.request.body_ref) {
      const bytes = await this.bodies.getBlob(env.request.body_ref.name).catch(() => null);
      if (!bytes || sha256Hex(bytes) !== env.request.body_ref.sha256) return { ...r, problem: 'body_missing' };
      body = safeJson(bytes);
    }
    const problem = bodyProblem(env.api, body);
    if (problem) return { ...r, problem };
    // the same prompt text and SimHash the duplicator writes on observations, so clusters agree
    return { ...r, prompt_simhash: simhash64(requestPromptText(env.api, body)) };
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

function safeJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(dec.decode(data));
  } catch {
    return undefined;
  }
}
