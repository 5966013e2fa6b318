/**
 * Provisional report requests on `names.verdictReportSubject` (queue group `verdict`):
 * `{campaign_id}` → `{report_id, run_record_id}` or `{error:{code,message}}`.
 */
import type { Subscription } from '@nats-io/transport-node';
import { isShadowplaneError } from '@shadowplane/contracts';
import { ROOT_CONTEXT, contextFromHeaders, tracingEnabled } from '@shadowplane/telemetry';
import { TERMINAL } from './campaign-slots.js';
import { foldAndWrite, type FoldDeps } from './fold.js';

/** The trace context a NATS request's `traceparent`/`tracestate` headers name, or the root context. */
function requestContext(h: { get(k: string): string; has(k: string): boolean } | undefined) {
  if (!h?.has('traceparent')) return ROOT_CONTEXT;
  return contextFromHeaders({
    traceparent: h.get('traceparent'),
    ...(h.has('tracestate') ? { tracestate: h.get('tracestate') } : {}),
  });
}

/**
 * Answers report requests: a campaign unknown to this process → not_found; a final report that
 * is still current → its ids; otherwise a fold and write now (provisional unless the campaign is
 * terminal), in the requester's trace when tracing is on.
 */
export function serveReportRequests(d: FoldDeps): Subscription {
  return d.bus.nc.subscribe(d.bus.names.verdictReportSubject, {
    queue: 'verdict',
    callback: (_err, m) => {
      void (async () => {
        let id = '';
        try {
          id = String((m.json() as { campaign_id?: unknown }).campaign_id ?? '');
          const s = d.slots.get(id);
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
          const r = await foldAndWrite(d, id, provisional, tracingEnabled() ? requestContext(m.headers) : ROOT_CONTEXT);
          m.respond(JSON.stringify({ report_id: r.reportId, run_record_id: r.runRecordId }));
        } catch (e) {
          const code = isShadowplaneError(e) ? e.code : 'internal';
          d.log.warn({ campaignId: id, err: e }, 'report request failed');
          m.respond(JSON.stringify({ error: { code, message: (e as Error).message } }));
        }
      })();
    },
  });
}
