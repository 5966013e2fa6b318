import { DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import type { KvWatchEntry } from '@nats-io/kv';
import type { Registry } from 'prom-client';
import type { Keyring } from '@shadowplane/artifacts';
import { connectBus, provision, type Bus } from '@shadowplane/bus';
import { Campaign, ObsMessage, SEQUENTIAL_BATCH_DEFAULT, isShadowplaneError } from '@shadowplane/contracts';
import { reportDocsStore, writeProgress } from '@shadowplane/reports';
import { createLogger, createMetricsRegistry, serveOps, type Logger, type OpsServer } from '@shadowplane/telemetry';
import { messageKey, newSlot, TERMINAL, type CampaignSlot } from './campaign-slots.js';
import { decideCampaign } from './decide.js';
import { foldAndWrite, foldCampaign, type FoldDeps } from './fold.js';
import { OutputCache } from './outputs.js';
import { computeProgress } from './progress.js';
import { serveReportRequests } from './report-requests.js';
import { sequentialVerdict } from './sequential.js';
import { VerdictMetrics } from './verdict-metrics.js';

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

/**
 * Starts the verdict service: replays the OBS stream from its start with an ordered consumer
 * (state is rebuilt from the stream alone; restart = replay = same reports), watches
 * `shadow_campaigns`, writes progress summaries, writes the final report of a campaign once it is
 * terminal (completed/stopped/budget_exhausted/decided) and the OBS backlog is drained, moves a
 * `stopping: sequential` or `group_sequential` campaign to `decided` once a look (after each batch of new messages)
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
  const slots = new Map<string, CampaignSlot>();
  const globalOutcomes = new Map<string, ObsMessage>();
  let processedSeq = 0;
  let drainedOnce = false;
  let watcherReady = false;
  let closed = false;

  const slot = (id: string): CampaignSlot => {
    let s = slots.get(id);
    if (!s) {
      s = newSlot();
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
        s.messages.set(k, s.intern(om));
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

  const outputs = new OutputCache(artifacts, cfg.keyring, log);
  const d: FoldDeps = { bus, log, metrics, slots, globalOutcomes, outputs, slot };
  const sub = serveReportRequests(d);

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
          const r = await foldAndWrite(d, id, false);
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
      // sequential / group-sequential stopping: look after each batch; once every candidate is
      // settled, decide (the group-sequential rule itself only evaluates its planned looks)
      if (Date.now() - lastLook >= (cfg.sequentialLookMs ?? 5000)) {
        lastLook = Date.now();
        // (the fold's own looks are over every batch of paired items; this only decides when to fold)
        for (const [id, s] of slots) {
          const c = s.campaign;
          if (
            !c ||
            (c.spec.stopping !== 'sequential' && c.spec.stopping !== 'group_sequential') ||
            TERMINAL.has(c.state)
          )
            continue;
          // a look folds the whole campaign: only after a batch of newly observed items
          const batch = c.spec.stopping_batch_items ?? SEQUENTIAL_BATCH_DEFAULT;
          if (s.items.size < s.lookAt + batch) continue;
          s.lookAt = s.items.size;
          try {
            const v = sequentialVerdict((await foldCampaign(d, id, true)).report, c.spec.stopping);
            if (v.settled) await decideCampaign(campaignsKv, id, v.reason, log, metrics);
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
