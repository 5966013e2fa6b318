/**
 * The handlers of a campaign's results: its report (JSON, HTML or the evidence bundle, optionally
 * asking the verdict service for a provisional one first), its observations as NDJSON, and
 * outcomes posted back by the caller's systems onto the observation stream.
 */
import { Readable } from 'node:stream';
import type { Keyring } from '@shadowplane/artifacts';
import type { Bus } from '@shadowplane/bus';
import {
  contentHash,
  isShadowplaneError,
  Outcome,
  OutcomeRecord,
  OUTCOMES_NO_CAMPAIGN,
  REPORT_ID_HEADER,
  RUN_RECORD_ID_HEADER,
  ShadowplaneError,
} from '@shadowplane/contracts';
import type { CampaignService } from './campaigns.js';
import { invalidRequest, parseOr400 } from './errors.js';
import { queryFlag, type Handlers } from './handler-kit.js';
import { requestTraceContext } from './http-telemetry.js';
import type { ReportsPort } from './reports-port.js';

/** What the report handlers read and write. */
export interface ReportHandlerDeps {
  bus: Bus;
  svc: CampaignService;
  reports: ReportsPort;
  /** artifact keyring for ?outputs=1 exports; absent → such exports are refused */
  keyring?: Keyring;
  /** timeout of a provisional report request to the verdict service, ms */
  reportRequestTimeoutMs: number;
}

/**
 * Handlers of getReport, exportObservations and addOutcome.
 * Errors: 404 not_found (no such campaign), 409 report_not_ready, 403 forbidden (outputs without
 * admin), 400 invalid_request (format, outputs without a keyring, outcome fields).
 */
export function reportHandlers({ bus, svc, reports, keyring, reportRequestTimeoutMs }: ReportHandlerDeps): Handlers {
  return {
    getReport: async (req, reply) => {
      const id = (req.params as { id: string }).id;
      await svc.get(id);
      const q = req.query as Record<string, unknown>;
      const format = q['format'] === undefined ? 'json' : q['format'];
      if (format !== 'json' && format !== 'html' && format !== 'bundle')
        throw invalidRequest([{ path: 'format', message: 'must be json, html or bundle' }]);
      if (queryFlag(req, 'provisional'))
        await reports.requestReport(bus, id, {
          timeoutMs: reportRequestTimeoutMs,
          traceContext: requestTraceContext(req),
        });
      const latest = await reports.readLatestReport(bus, id);
      if (!latest)
        throw new ShadowplaneError('report_not_ready', `no report for ${id} yet`, { details: { campaign_id: id } });
      reply.header(REPORT_ID_HEADER, latest.reportId).header('x-shadow-report-provisional', String(latest.provisional));
      if (latest.runRecordId) reply.header(RUN_RECORD_ID_HEADER, latest.runRecordId);
      if (format === 'html') {
        if (!latest.html)
          throw new ShadowplaneError('report_not_ready', `report ${latest.reportId} has no HTML rendering`);
        return reply.type('text/html; charset=utf-8').send(latest.html);
      }
      if (format === 'bundle') return reply.type('application/json').send(JSON.stringify(latest.bundle));
      return {
        report_id: latest.reportId,
        provisional: latest.provisional,
        report: latest.report,
        run_record_id: latest.runRecordId,
        run_record: latest.runRecord ?? null,
      };
    },
    exportObservations: async (req, reply) => {
      const id = (req.params as { id: string }).id;
      await svc.get(id);
      const outputs = queryFlag(req, 'outputs');
      if (outputs && !req.principal?.scopes.has('admin'))
        throw new ShadowplaneError('forbidden', 'exporting outputs needs the admin scope too', {
          details: { required_scope: 'admin' },
        });
      if (outputs && keyring === undefined)
        throw invalidRequest([
          { path: 'outputs', message: 'no artifact keyring is configured on this control instance' },
        ]);
      const iter = reports.exportObservations(bus, id, outputs && keyring ? { keyring } : {});
      async function* lines() {
        for await (const m of iter) yield `${JSON.stringify(m)}\n`;
      }
      return reply.type('application/x-ndjson').send(Readable.from(lines()));
    },
    addOutcome: async (req, reply) => {
      const o = parseOr400(Outcome, req.body);
      if (o.campaign_id !== undefined)
        await svc.get(o.campaign_id).catch((e: unknown) => {
          throw isShadowplaneError(e) && e.code === 'not_found'
            ? new ShadowplaneError('not_found', `no campaign ${o.campaign_id}`, {
                details: { issues: [{ path: 'campaign_id', message: 'no such campaign' }] },
              })
            : e;
        });
      const outcome_id = contentHash(o);
      const record = OutcomeRecord.parse({
        schema: 'shadow.outcome/v1',
        outcome_id,
        campaign_id: o.campaign_id ?? null,
        envelope_id: o.envelope_id ?? null,
        item_hash: o.item_hash ?? null,
        arm_id: o.arm_id ?? null,
        result: o.result,
        score: o.score ?? (o.result === 'pass' ? 1 : o.result === 'fail' ? 0 : null),
        source: o.source,
        closes_task: o.closes_task,
        received_at: o.at ?? new Date().toISOString(),
      });
      const subject = bus.names.obsSubject(o.campaign_id ?? OUTCOMES_NO_CAMPAIGN);
      const ack = await bus.js.publish(subject, JSON.stringify(record), { msgID: outcome_id });
      return reply.status(ack.duplicate ? 200 : 202).send({ outcome_id, subject, duplicate: ack.duplicate });
    },
  };
}
