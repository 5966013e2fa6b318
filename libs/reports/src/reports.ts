import { DeliverPolicy, StorageType } from '@nats-io/jetstream';
import type { ObjectStore } from '@nats-io/obj';
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';
import type { Bus } from '@shadowplane/bus';
import { getArtifact, type Keyring } from '@shadowplane/artifacts';
import { CampaignProgress, DatasetCard, ObsMessage, Report, RunRecord, ShadowplaneError } from '@shadowplane/contracts';
import { z } from 'zod';

/*
 * Storage layout (all names from natsNames):
 * - object store `shadow_report_docs` (documents may exceed one NATS message):
 *   `report.<report_id>.json` — canonical report JSON, byte-stable; reproducible, so two runs of
 *     the same evidence share it;
 *   `run.<run_record_id>.json` — canonical run record JSON (campaign id/state, window, times);
 *   `run.<run_record_id>.html`, `run.<run_record_id>.bundle.json` — the HTML and the evidence
 *     bundle, which include the run record and so are per run;
 *   `dataset.<dataset_hash>.json` — dataset cards;
 *   reports written before run records: `report.<report_id>.html`, `bundle.<report_id>.json`.
 * - KV `shadow_reports`: `latest.<campaign_id>` → {report_id, run_record_id, provisional, campaign_id},
 *   `final.<campaign_id>` → the same for the final report, `progress.<campaign_id>` → CampaignProgress.
 */

const Hex64 = z.string().regex(/^[0-9a-f]{64}$/);
/** `run_record_id` is absent in pointers written before run records existed. */
const Pointer = z
  .object({ report_id: Hex64, run_record_id: Hex64.optional(), provisional: z.boolean(), campaign_id: z.string() })
  .strict();
type Pointer = z.infer<typeof Pointer>;

const enc = new TextEncoder();
const dec = new TextDecoder();
const docStores = new WeakMap<Bus, Promise<ObjectStore>>();

/**
 * Opens (creating idempotently) the report documents object store `names.reportDocs`.
 * Storage file, 1 replica (reports are small in number; use NATS tooling to change).
 */
export function reportDocsStore(bus: Bus): Promise<ObjectStore> {
  let p = docStores.get(bus);
  if (!p) {
    p = bus.objm.create(bus.names.reportDocs, { storage: StorageType.File });
    p.catch(() => docStores.delete(bus));
    docStores.set(bus, p);
  }
  return p;
}

async function reportsKv(bus: Bus) {
  return bus.kvm.create(bus.names.buckets.reports, { history: 1 });
}

/**
 * A stored report as read back, with the run record of the run it was read for. `reportJson` and
 * `runRecordJson` are the exact stored texts (canonical JSON). `runRecordId`/`runRecord`/
 * `runRecordJson` are null for reports written before run records, or when read by report id alone.
 */
export interface StoredReport {
  reportId: string;
  report: Report;
  reportJson: string;
  provisional: boolean;
  runRecordId: string | null;
  runRecord: RunRecord | null;
  runRecordJson: string | null;
  html: string;
  bundle: unknown;
}

/** What {@link writeReport} stores. */
export interface ReportWrite {
  campaignId: string;
  reportId: string;
  /** canonical JSON of the report (libs/evidence FoldResult.reportJson) */
  reportJson: string;
  /** the run record's id and canonical JSON (FoldResult.runRecordId / runRecordJson); omit both only for legacy writers */
  runRecordId?: string;
  runRecordJson?: string;
  provisional: boolean;
  html: string;
  bundle: unknown;
  datasetCards?: { dataset_hash: string }[];
}

/**
 * Stores a report (content-addressed by report id: two runs of the same evidence share it), its
 * run record, HTML and evidence bundle (by run record id), its dataset cards, and points
 * `latest.<campaign>` (and `final.<campaign>` when not provisional) at report and run record.
 * Writing the same documents twice is a no-op in effect.
 * Errors: ShadowplaneError `invalid_request` when `reportJson` does not parse as a Report, or the
 * run record does not parse, is given without its id, or points at another report.
 */
export async function writeReport(bus: Bus, w: ReportWrite): Promise<void> {
  const parsed = Report.safeParse(JSON.parse(w.reportJson));
  if (!parsed.success)
    throw new ShadowplaneError('invalid_request', `not a report: ${parsed.error.issues[0]?.message ?? ''}`);
  if ((w.runRecordId === undefined) !== (w.runRecordJson === undefined))
    throw new ShadowplaneError('invalid_request', 'runRecordId and runRecordJson go together');
  if (w.runRecordJson !== undefined) {
    const run = RunRecord.safeParse(JSON.parse(w.runRecordJson));
    if (!run.success)
      throw new ShadowplaneError('invalid_request', `not a run record: ${run.error.issues[0]?.message ?? ''}`);
    if (run.data.report_id !== w.reportId)
      throw new ShadowplaneError(
        'invalid_request',
        `the run record points at report ${run.data.report_id}, not ${w.reportId}`,
      );
  }
  const store = await reportDocsStore(bus);
  const putIfAbsent = async (name: string, text: string) => {
    const info = await store.info(name);
    if (info && !info.deleted) return;
    await store.putBlob({ name }, enc.encode(text));
  };
  await putIfAbsent(`report.${w.reportId}.json`, w.reportJson);
  if (w.runRecordId !== undefined && w.runRecordJson !== undefined) {
    await putIfAbsent(`run.${w.runRecordId}.json`, w.runRecordJson);
    await putIfAbsent(`run.${w.runRecordId}.html`, w.html);
    await putIfAbsent(`run.${w.runRecordId}.bundle.json`, JSON.stringify(w.bundle));
  } else {
    await putIfAbsent(`report.${w.reportId}.html`, w.html);
    await putIfAbsent(`bundle.${w.reportId}.json`, JSON.stringify(w.bundle));
  }
  for (const c of w.datasetCards ?? []) await putIfAbsent(`dataset.${c.dataset_hash}.json`, JSON.stringify(c));
  const kv = await reportsKv(bus);
  const ptr: Pointer = {
    report_id: w.reportId,
    ...(w.runRecordId !== undefined ? { run_record_id: w.runRecordId } : {}),
    provisional: w.provisional,
    campaign_id: w.campaignId,
  };
  await kv.put(`latest.${w.campaignId}`, JSON.stringify(ptr));
  if (!w.provisional) await kv.put(`final.${w.campaignId}`, JSON.stringify(ptr));
}

/**
 * Reads a report by id; with `runRecordId`, also that run's record, HTML and bundle (without it,
 * or for reports written before run records: the report's own HTML and bundle if stored, else ''
 * and null). Returns null when the report is absent.
 * Errors: zod error when a stored document does not match its schema.
 */
export async function readReport(bus: Bus, reportId: string, runRecordId?: string): Promise<StoredReport | null> {
  const store = await reportDocsStore(bus);
  const json = await store.getBlob(`report.${reportId}.json`);
  if (!json) return null;
  const reportJson = dec.decode(json);
  const report = Report.parse(JSON.parse(reportJson));
  const run = runRecordId ? await readRunRecordDoc(store, runRecordId) : null;
  const html = await store.getBlob(run ? `run.${runRecordId}.html` : `report.${reportId}.html`);
  const bundle = await store.getBlob(run ? `run.${runRecordId}.bundle.json` : `bundle.${reportId}.json`);
  return {
    reportId,
    report,
    reportJson,
    provisional: report.provisional,
    runRecordId: run ? runRecordId! : null,
    runRecord: run?.runRecord ?? null,
    runRecordJson: run?.runRecordJson ?? null,
    html: html ? dec.decode(html) : '',
    bundle: bundle ? JSON.parse(dec.decode(bundle)) : null,
  };
}

async function readRunRecordDoc(
  store: ObjectStore,
  id: string,
): Promise<{ runRecord: RunRecord; runRecordJson: string } | null> {
  const b = await store.getBlob(`run.${id}.json`);
  if (!b) return null;
  const runRecordJson = dec.decode(b);
  return { runRecord: RunRecord.parse(JSON.parse(runRecordJson)), runRecordJson };
}

/** A run record by its id (`{runRecord, runRecordJson}` with the exact stored text), or null. */
export async function readRunRecord(
  bus: Bus,
  runRecordId: string,
): Promise<{ runRecord: RunRecord; runRecordJson: string } | null> {
  return readRunRecordDoc(await reportDocsStore(bus), runRecordId);
}

async function readPointer(bus: Bus, key: string): Promise<Pointer | null> {
  const kv = await reportsKv(bus);
  const e = await kv.get(key);
  if (!e || e.operation !== 'PUT' || e.length === 0) return null;
  return Pointer.parse(e.json());
}

/**
 * The latest report (final or provisional) of a campaign with the run record it was written with
 * (`runRecordId`, `runRecord`), or null when none was written yet. `provisional` is the pointer's.
 */
export async function readLatestReport(bus: Bus, campaignId: string): Promise<StoredReport | null> {
  const p = await readPointer(bus, `latest.${campaignId}`);
  return p ? readReport(bus, p.report_id, p.run_record_id) : null;
}

/** The final (non-provisional) report of a campaign with its run record, or null. */
export async function readFinalReport(bus: Bus, campaignId: string): Promise<StoredReport | null> {
  const p = await readPointer(bus, `final.${campaignId}`);
  return p ? readReport(bus, p.report_id, p.run_record_id) : null;
}

/** Writes a campaign's progress summary (verdict service). */
export async function writeProgress(bus: Bus, progress: CampaignProgress): Promise<void> {
  const kv = await reportsKv(bus);
  await kv.put(`progress.${progress.campaign_id}`, JSON.stringify(CampaignProgress.parse(progress)));
}

/** A campaign's progress as last written by the verdict service, or null. */
export async function readProgress(bus: Bus, campaignId: string): Promise<CampaignProgress | null> {
  const kv = await reportsKv(bus);
  const e = await kv.get(`progress.${campaignId}`);
  if (!e || e.operation !== 'PUT' || e.length === 0) return null;
  return CampaignProgress.parse(e.json());
}

/** A dataset card by its dataset_hash, or null. */
export async function readDatasetCard(bus: Bus, hash: string): Promise<DatasetCard | null> {
  const store = await reportDocsStore(bus);
  const b = await store.getBlob(`dataset.${hash}.json`);
  return b ? DatasetCard.parse(JSON.parse(dec.decode(b))) : null;
}

/**
 * Reads every message on one OBS subject from the start of the stream up to the moment of the
 * call (ordered consumer; ends when caught up). Yields raw parsed JSON with the stream sequence.
 */
export async function* readObsSubject(bus: Bus, subject: string): AsyncIterable<{ seq: number; data: unknown }> {
  const info = await bus.jsm.streams.info(bus.names.streams.obs, { subjects_filter: subject });
  const count = info.state.subjects?.[subject] ?? 0;
  if (count === 0) return;
  const c = await bus.js.consumers.get(bus.names.streams.obs, {
    filter_subjects: subject,
    deliver_policy: DeliverPolicy.All,
  });
  const msgs = await c.consume();
  try {
    for await (const m of msgs) {
      yield { seq: m.seq, data: m.json() };
      if (m.info.pending === 0) break;
    }
  } finally {
    msgs.stop();
    await c.delete().catch(() => undefined);
  }
}

/**
 * Exports a campaign's OBS messages (observations, item events, outcomes) in stream order, as
 * `GET /v1/campaigns/{id}/observations` and `shadowplane fold` use them. With a keyring, each
 * observation's `output_text` is filled from its encrypted artifact (null when the artifact is
 * missing or expired); without one it is left absent. Messages that fail the ObsMessage schema are skipped.
 */
export async function* exportObservations(
  bus: Bus,
  campaignId: string,
  opts: { keyring?: Keyring } = {},
): AsyncIterable<ObsMessage> {
  const artifacts = opts.keyring ? await bus.objm.open(bus.names.buckets.artifacts).catch(() => null) : null;
  for await (const { data } of readObsSubject(bus, bus.names.obsSubject(campaignId))) {
    const r = ObsMessage.safeParse(data);
    if (!r.success) continue;
    const m = r.data;
    if (m.schema === 'shadow.observation/v1' && opts.keyring && artifacts && m.artifact_ref) {
      let text: string | null = null;
      try {
        text = (await getArtifact(artifacts, opts.keyring, m.artifact_ref)).output_text;
      } catch {
        text = null;
      }
      yield { ...m, output_text: text };
    } else yield m;
  }
}

const ReportReply = z.union([
  z.object({ report_id: z.string(), run_record_id: z.string().optional() }),
  z.object({ error: z.object({ code: z.string(), message: z.string() }) }),
]);

/**
 * Asks the verdict service to write a provisional report now (NATS request to
 * `names.verdictReportSubject` with `{campaign_id}`; reply `{report_id, run_record_id}`).
 * `traceContext` (the caller's W3C trace context) goes in the request's `traceparent`/`tracestate`
 * headers, so the verdict fold span joins the caller's trace.
 * Returns `{ reportId, runRecordId }` (runRecordId null from an older verdict service), or null
 * when no verdict service answers within `timeoutMs` or it answers with an error (e.g. report_empty).
 */
export async function requestReport(
  bus: Bus,
  campaignId: string,
  opts: { timeoutMs: number; traceContext?: { traceparent: string; tracestate?: string | null } | null },
): Promise<{ reportId: string; runRecordId: string | null } | null> {
  try {
    let h: MsgHdrs | undefined;
    if (opts.traceContext) {
      h = natsHeaders();
      h.set('traceparent', opts.traceContext.traceparent);
      if (opts.traceContext.tracestate) h.set('tracestate', opts.traceContext.tracestate);
    }
    const m = await bus.nc.request(bus.names.verdictReportSubject, JSON.stringify({ campaign_id: campaignId }), {
      timeout: opts.timeoutMs,
      ...(h ? { headers: h } : {}),
    });
    const r = ReportReply.safeParse(m.json());
    if (!r.success || !('report_id' in r.data)) return null;
    return { reportId: r.data.report_id, runRecordId: r.data.run_record_id ?? null };
  } catch {
    return null;
  }
}
