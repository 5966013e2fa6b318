import { DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import type { KvWatchEntry } from '@nats-io/kv';
import type { Subscription } from '@nats-io/transport-node';
import pLimit from 'p-limit';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { getArtifact, type Keyring } from '@shadowplane/artifacts';
import { connectBus, provision, type Bus } from '@shadowplane/bus';
import {
  Campaign,
  ObsMessage,
  SEQUENTIAL_BATCH_DEFAULT,
  TERMINAL_CAMPAIGN_STATES,
  isShadowplaneError,
  type Campaign as CampaignT,
} from '@shadowplane/contracts';
import { compareModeMessages, foldReport, observationId, type FoldResult } from '@shadowplane/evidence';
import { renderReportHtml, reportDocsStore, writeProgress, writeReport } from '@shadowplane/reports';
import {
  ROOT_CONTEXT,
  SpanKind,
  contextFromHeaders,
  createLogger,
  createMetricsRegistry,
  inSpan,
  serveOps,
  tracingEnabled,
  type Logger,
  type OpsServer,
} from '@shadowplane/telemetry';
import { computeProgress } from './progress.js';
import { sequentialVerdict } from './sequential.js';

/** Resolved configuration of {@link startVerdict}. */
export interface VerdictConfig {
  natsUrl: string;
  /** NATS name prefix (tests isolate with it); '' for the standard names */
  prefix: string;
  /** ops listener (default 127.0.0.1:0) */
  opsHost?: string;
  opsPort?: number;
  /** keyring for decrypting outputs to score; null → outputs unavailable (every output unscored) */
  keyring: Keyring | null;
  /** progress write interval, ms (default 2000) */
  progressIntervalMs?: number;
  /** terminal-campaign check interval, ms (default 500) */
  tickMs?: number;
  /** least time between two sequential looks (each a full fold), ms (default 5000) */
  sequentialLookMs?: number;
  storage?: 'file' | 'memory';
  logger?: Logger;
  registry?: Registry;
}

/** A running verdict service. */
export interface VerdictHandle {
  /** base URL of the ops server (/healthz, /readyz, /metrics) */
  opsUrl: string;
  /** final report ids written by this process, by campaign */
  finalReports(): ReadonlyMap<string, string>;
  /** stops consuming, drains NATS, closes the ops server */
  close(): Promise<void>;
}

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_CAMPAIGN_STATES);

interface CampaignSlot {
  messages: Map<string, ObsMessage>;
  campaign: CampaignT | null;
  dirty: boolean;
  /** message count when the final report was last written */
  finalAt: number;
  finalId: string | null;
  /** run record of the final report last written */
  finalRunId: string | null;
  latestId: string | null;
  emptyAt: number;
  /** items with an observation, and their count at the last sequential look */
  items: Set<string>;
  lookAt: number;
}

class VerdictMetrics {
  readonly messages: Counter<'kind'>;
  readonly invalid: Counter;
  readonly reports: Counter<'kind'>;
  readonly foldSeconds: Histogram;
  readonly campaigns: Gauge;
  readonly decided: Counter;
  constructor(r: Registry) {
    this.decided = new Counter({
      name: 'shadowplane_verdict_campaigns_decided_total',
      help: 'sequential campaigns moved to decided because every candidate was settled',
      registers: [r],
    });
    this.messages = new Counter({
      name: 'shadowplane_verdict_obs_messages_total',
      help: 'OBS messages folded, by kind',
      labelNames: ['kind'],
      registers: [r],
    });
    this.invalid = new Counter({
      name: 'shadowplane_verdict_obs_invalid_total',
      help: 'OBS messages that failed the contract and were skipped',
      registers: [r],
    });
    this.reports = new Counter({
      name: 'shadowplane_verdict_reports_written_total',
      help: 'reports written, final or provisional',
      labelNames: ['kind'],
      registers: [r],
    });
    this.foldSeconds = new Histogram({
      name: 'shadowplane_verdict_fold_seconds',
      help: 'time to fold a campaign into a report',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [r],
    });
    this.campaigns = new Gauge({
      name: 'shadowplane_verdict_campaigns',
      help: 'campaigns with state in this process',
      registers: [r],
    });
  }
}

/** The trace context a NATS request's `traceparent`/`tracestate` headers name, or the root context. */
function requestContext(h: { get(k: string): string; has(k: string): boolean } | undefined) {
  if (!h?.has('traceparent')) return ROOT_CONTEXT;
  return contextFromHeaders({
    traceparent: h.get('traceparent'),
    ...(h.has('tracestate') ? { tracestate: h.get('tracestate') } : {}),
  });
}

function messageKey(m: ObsMessage): string {
  if (m.schema === 'shadow.observation/v1') return `o:${observationId(m)}`;
  if (m.schema === 'shadow.item_event/v1')
    return `e:${m.call_type}:${m.kind}:${m.item_hash}:${m.envelope_id}:${m.reason ?? ''}`;
  if (m.schema === 'shadow.judge_verdict/v1') return `j:${m.call_type}:${m.item_hash}:${m.arm_id}:${m.role}:${m.mode}`;
  return `x:${m.outcome_id}`;
}

/**
 * Starts the verdict service: replays the OBS stream from its start with an ordered consumer
 * (state is rebuilt from the stream alone; restart = replay = same reports), watches
 * `shadow_campaigns`, writes progress summaries, writes the final report of a campaign once it is
 * terminal (completed/stopped/budget_exhausted/decided) and the OBS backlog is drained, moves a
 * `stopping: sequential` campaign to `decided` once a look (after each batch of new messages)
 * finds every candidate of every call type settled, and answers
 * provisional report requests on `names.verdictReportSubject` (`{campaign_id}` →
 * `{report_id, run_record_id}` or `{error:{code,message}}`). Every report is written with its run
 * record (campaign id/state, window, latency/TTFT percentiles): the report id is reproducible
 * across runs of the same evidence, the run record id is per run. Outputs are decrypted from the artifact store with `keyring` to score.
 * Errors: throws when NATS cannot be reached at start.
 */
export async function startVerdict(cfg: VerdictConfig): Promise<VerdictHandle> {
  const log = cfg.logger ?? createLogger({ service: 'verdict', version: '0.1.0', level: 'silent' });
  const registry = cfg.registry ?? createMetricsRegistry({ role: 'verdict' });
  const metrics = new VerdictMetrics(registry);
  const bus: Bus = await connectBus({ url: cfg.natsUrl, name: 'shadowplane-verdict', prefix: cfg.prefix });
  await provision(bus, { storage: cfg.storage ?? 'file' });
  await reportDocsStore(bus);
  const artifacts = await bus.objm.open(bus.names.buckets.artifacts);
  const outputCache = new Map<string, string | null>();
  const slots = new Map<string, CampaignSlot>();
  const globalOutcomes = new Map<string, ObsMessage>();
  let processedSeq = 0;
  let drainedOnce = false;
  let watcherReady = false;
  let closed = false;

  const slot = (id: string): CampaignSlot => {
    let s = slots.get(id);
    if (!s) {
      s = {
        messages: new Map(),
        campaign: null,
        dirty: true,
        finalAt: -1,
        finalId: null,
        finalRunId: null,
        latestId: null,
        emptyAt: -1,
        items: new Set(),
        lookAt: 0,
      };
      slots.set(id, s);
      metrics.campaigns.set(slots.size);
    }
    return s;
  };

  // OBS replay + live tail
  const consumer = await bus.js.consumers.get(bus.names.streams.obs, {
    filter_subjects: bus.names.obsAll,
    deliver_policy: DeliverPolicy.All,
  });
  const msgs: ConsumerMessages = await consumer.consume();
  const consumeLoop = (async () => {
    for await (const m of msgs) {
      processedSeq = Math.max(processedSeq, m.seq);
      let data: unknown;
      try {
        data = m.json();
      } catch {
        metrics.invalid.inc();
        continue;
      }
      const r = ObsMessage.safeParse(data);
      if (!r.success) {
        metrics.invalid.inc();
        continue;
      }
      const om = r.data;
      metrics.messages.inc({ kind: om.schema.slice(7, om.schema.indexOf('/')) });
      if (om.schema === 'shadow.outcome/v1' && om.campaign_id === null) {
        globalOutcomes.set(messageKey(om), om);
        for (const s of slots.values()) s.dirty = true;
        continue;
      }
      const s = slot(om.campaign_id!);
      const k = messageKey(om);
      if (!s.messages.has(k)) {
        s.messages.set(k, om);
        s.dirty = true;
        if (om.schema === 'shadow.observation/v1') s.items.add(`${om.call_type}|${om.item_hash}`);
      }
    }
  })().catch((e: unknown) => log.error({ err: e }, 'obs consumer stopped'));

  // campaigns KV watch
  const campaignsKv = await bus.kvm.open(bus.names.buckets.campaigns);
  const watcher = await campaignsKv.watch();
  watcherReady = true;
  const watchLoop = (async () => {
    for await (const e of watcher as AsyncIterable<KvWatchEntry>) {
      if (e.operation !== 'PUT' || e.length === 0) continue;
      const r = Campaign.safeParse(e.json());
      if (!r.success) {
        log.warn({ key: e.key }, 'campaign value does not match the contract');
        continue;
      }
      const s = slot(r.data.id);
      s.campaign = r.data;
      s.dirty = true;
    }
  })().catch((e: unknown) => log.error({ err: e }, 'campaign watch stopped'));

  // decrypt outputs for scoring, 16 artifact reads at a time; cached per artifact ref
  const limit = pLimit(16);
  const fillOutputs = async (messages: Iterable<ObsMessage>): Promise<ObsMessage[]> => {
    const list = [...messages];
    const keyring = cfg.keyring;
    if (keyring) {
      const missing = [
        ...new Set(
          list.flatMap((m) =>
            m.schema === 'shadow.observation/v1' &&
            m.output_text === undefined &&
            m.artifact_ref &&
            !outputCache.has(m.artifact_ref)
              ? [m.artifact_ref]
              : [],
          ),
        ),
      ];
      await Promise.all(
        missing.map((ref) =>
          limit(async () => {
            try {
              outputCache.set(ref, (await getArtifact(artifacts, keyring, ref)).output_text);
            } catch (e) {
              log.warn({ err: e }, 'artifact unavailable; output unscored');
              // missing or expired is permanent; other failures are retried on the next fold
              if (isShadowplaneError(e) && e.code === 'not_found') outputCache.set(ref, null);
            }
          }),
        ),
      );
    }
    return list.map((m) =>
      m.schema !== 'shadow.observation/v1' || m.output_text !== undefined || !m.artifact_ref
        ? m
        : { ...m, output_text: keyring ? (outputCache.get(m.artifact_ref) ?? null) : null },
    );
  };

  const fold = async (id: string, provisional: boolean): Promise<FoldResult> => {
    const s = slots.get(id);
    if (!s?.campaign) throw Object.assign(new Error(`campaign ${id} unknown`), { code: 'not_found' });
    const c = s.campaign;
    let messages = await fillOutputs([...s.messages.values(), ...globalOutcomes.values()]);
    const baseline = c.spec.compare?.resolved;
    if (baseline) {
      // compare mode: the baseline run's retained observations of its arm stand for the incumbent
      const b = slots.get(baseline.campaign_id);
      const own = [...s.messages.values()];
      const wanted = new Set(own.map((m) => ('item_hash' in m ? m.item_hash : '')));
      const baseObs = [...(b?.messages.values() ?? [])].filter(
        (m) => m.schema === 'shadow.observation/v1' && m.arm_id === baseline.arm_id && wanted.has(m.item_hash),
      );
      // a baseline artifact is evidence only while it is retained: read each one afresh at every
      // fold, so one that expired (or was deleted) since it was cached is ineligible, never used
      for (const m of baseObs)
        if (m.schema === 'shadow.observation/v1' && m.artifact_ref) outputCache.delete(m.artifact_ref);
      const base = await fillOutputs(baseObs);
      messages = compareModeMessages({
        campaignId: id,
        spec: c.spec,
        own: messages,
        baseline: base,
        // gone for good only when the store said not_found; any other read failure is retried next fold
        artifactMissing: (o) =>
          o.status === 'ok' && o.artifact_ref !== null && (!cfg.keyring || outputCache.get(o.artifact_ref) === null),
      }).messages;
    }
    const end = metrics.foldSeconds.startTimer();
    try {
      return foldReport({
        campaign: { campaign_id: id, spec: c.spec, run_index: c.run_index, spec_hash: c.spec_hash, state: c.state },
        messages,
        provisional,
      });
    } finally {
      end();
    }
  };

  const write = async (id: string, r: FoldResult, provisional: boolean) => {
    await writeReport(bus, {
      campaignId: id,
      reportId: r.reportId,
      reportJson: r.reportJson,
      runRecordId: r.runRecordId,
      runRecordJson: r.runRecordJson,
      provisional,
      html: renderReportHtml(r.report, r.runRecord, { bundle: r.bundle }),
      bundle: r.bundle,
      datasetCards: r.datasetCards,
    });
    metrics.reports.inc({ kind: provisional ? 'provisional' : 'final' });
    const s = slot(id);
    s.latestId = r.reportId;
    s.dirty = true;
    log.info({ campaignId: id, reportId: r.reportId, runRecordId: r.runRecordId, provisional }, 'report written');
  };

  /**
   * Folds and writes one report inside a span `shadowplane.verdict.fold` (child
   * `shadowplane.verdict.report.write`): a new trace for a final report, the requester's trace
   * when a report request carries a W3C `traceparent` header. Its `shadowplane.campaign.id` is
   * the attribute the duplicator's item spans carry, so one search finds both.
   */
  const foldAndWrite = (id: string, provisional: boolean, parent = ROOT_CONTEXT): Promise<FoldResult> =>
    inSpan(
      'shadowplane.verdict.fold',
      {
        kind: SpanKind.INTERNAL,
        parent,
        attributes: { 'shadowplane.campaign.id': id, 'shadowplane.report.provisional': provisional },
      },
      async (span) => {
        const r = await fold(id, provisional);
        span.setAttributes({
          'shadowplane.report.id': r.reportId,
          'shadowplane.run_record.id': r.runRecordId,
          'shadowplane.verdict.messages': slots.get(id)?.messages.size ?? 0,
        });
        await inSpan(
          'shadowplane.verdict.report.write',
          { kind: SpanKind.INTERNAL, attributes: { 'shadowplane.report.id': r.reportId } },
          () => write(id, r, provisional),
        );
        return r;
      },
    );

  // provisional report requests
  const sub: Subscription = bus.nc.subscribe(bus.names.verdictReportSubject, {
    queue: 'verdict',
    callback: (_err, m) => {
      void (async () => {
        let id = '';
        try {
          id = String((m.json() as { campaign_id?: unknown }).campaign_id ?? '');
          const s = slots.get(id);
          if (!s?.campaign) {
            m.respond(
              JSON.stringify({
                error: { code: 'not_found', message: `campaign ${id} unknown to the verdict service` },
              }),
            );
            return;
          }
          if (s.finalId !== null && s.finalAt === s.messages.size) {
            m.respond(JSON.stringify({ report_id: s.finalId, run_record_id: s.finalRunId }));
            return;
          }
          const provisional = !TERMINAL.has(s.campaign.state);
          const r = await foldAndWrite(id, provisional, tracingEnabled() ? requestContext(m.headers) : ROOT_CONTEXT);
          m.respond(JSON.stringify({ report_id: r.reportId, run_record_id: r.runRecordId }));
        } catch (e) {
          const code = isShadowplaneError(e) ? e.code : 'internal';
          log.warn({ campaignId: id, err: e }, 'report request failed');
          m.respond(JSON.stringify({ error: { code, message: (e as Error).message } }));
        }
      })();
    },
  });

  // running|paused → decided by compare-and-set: a stop, a completion or the budget that got there first wins
  const decide = async (id: string, reason: string): Promise<void> => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const e = await campaignsKv.get(id);
      if (!e || e.length === 0) return;
      const cur = Campaign.parse(e.json());
      if (TERMINAL.has(cur.state)) return;
      const next: CampaignT = { ...cur, state: 'decided', state_reason: reason, updated_at: new Date().toISOString() };
      try {
        await campaignsKv.update(id, JSON.stringify(next), e.revision);
        log.info({ campaignId: id, reason }, 'campaign decided by the sequential rule');
        metrics.decided.inc();
        return;
      } catch {
        // revision moved: re-read and retry
      }
    }
    log.warn({ campaignId: id }, 'could not mark the campaign decided (kept changing)');
  };

  // periodic work: drained check, final reports, progress, sequential looks
  let lastProgress = 0;
  let lastLook = 0;
  let busy = false;
  const tick = async () => {
    if (busy || closed) return;
    busy = true;
    try {
      const info = await bus.jsm.streams.info(bus.names.streams.obs);
      const drained = processedSeq >= info.state.last_seq;
      if (drained) drainedOnce = true;
      for (const [id, s] of slots) {
        const c = s.campaign;
        if (!drained || !c || !TERMINAL.has(c.state)) continue;
        if (s.finalAt === s.messages.size || s.emptyAt === s.messages.size) continue;
        try {
          const r = await foldAndWrite(id, false);
          s.finalAt = s.messages.size;
          s.finalId = r.reportId;
          s.finalRunId = r.runRecordId;
        } catch (e) {
          if (isShadowplaneError(e) && e.code === 'report_empty') {
            s.emptyAt = s.messages.size;
            log.warn({ campaignId: id }, 'nothing scored and nothing refused: no report written');
          } else log.error({ campaignId: id, err: e }, 'final report failed');
        }
      }
      // sequential stopping: look after each batch; once every candidate is settled, decide
      if (Date.now() - lastLook >= (cfg.sequentialLookMs ?? 5000)) {
        lastLook = Date.now();
        // (the fold's own looks are over every batch of paired items; this only decides when to fold)
        for (const [id, s] of slots) {
          const c = s.campaign;
          if (!c || c.spec.stopping !== 'sequential' || TERMINAL.has(c.state)) continue;
          // a look folds the whole campaign: only after a batch of newly observed items
          const batch = c.spec.stopping_batch_items ?? SEQUENTIAL_BATCH_DEFAULT;
          if (s.items.size < s.lookAt + batch) continue;
          s.lookAt = s.items.size;
          try {
            const v = sequentialVerdict((await fold(id, true)).report);
            if (v.settled) await decide(id, v.reason);
          } catch (e) {
            if (!(isShadowplaneError(e) && e.code === 'report_empty'))
              log.warn({ campaignId: id, err: e }, 'sequential look failed');
          }
        }
      }
      const now = Date.now();
      if (now - lastProgress >= (cfg.progressIntervalMs ?? 2000)) {
        lastProgress = now;
        for (const [id, s] of slots) {
          if (!s.dirty) continue;
          s.dirty = false;
          await writeProgress(bus, computeProgress(id, s.messages.values(), s.latestId, new Date()));
        }
      }
    } catch (e) {
      log.warn({ err: e }, 'verdict tick failed');
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), cfg.tickMs ?? 500);

  const ops: OpsServer = await serveOps(registry, {
    ready: () => drainedOnce && watcherReady && !closed,
    port: cfg.opsPort ?? 0,
    host: cfg.opsHost ?? '127.0.0.1',
  });
  log.info({ opsUrl: ops.url, prefix: cfg.prefix }, 'verdict started');

  return {
    opsUrl: ops.url,
    finalReports: () => new Map([...slots].filter(([, s]) => s.finalId !== null).map(([id, s]) => [id, s.finalId!])),
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      while (busy) await new Promise((r) => setTimeout(r, 20));
      sub.unsubscribe();
      watcher.stop();
      msgs.stop();
      await Promise.allSettled([consumeLoop, watchLoop]);
      await ops.close();
      await bus.close();
    },
  };
}
