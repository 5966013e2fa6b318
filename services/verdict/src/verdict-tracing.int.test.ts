// Verdict spans exported over OTLP/HTTP (JSON) to a loopback receiver: one fold span per report
// written, a write span under it, and a report request's traceparent honoured as the parent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { connectBus, provision, type Bus } from '@shadowplane/bus';
import { readFinalReport } from '@shadowplane/reports';
import {
  randomPrefix,
  runningCampaign,
  sharedNatsUrl,
  startOtlpTracing,
  waitFor,
  synthCampaign,
  synthSpec,
  type OtlpTracingHandle,
} from '@shadowplane/testkit';
import { startVerdict, type VerdictHandle } from './index.js';

const CID = 'cmp_7ace7ace7ace7ace';
const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

describe('verdict spans', () => {
  let t: OtlpTracingHandle;
  let bus: Bus;
  let svc: VerdictHandle | null = null;
  const spec = synthSpec(['same']);
  const campaign = runningCampaign(CID, spec);

  beforeAll(async () => {
    t = await startOtlpTracing('verdict-test', 'verdict');
    const prefix = randomPrefix('vt');
    bus = await connectBus({ url: sharedNatsUrl(), name: 'verdict-tracing-test', prefix });
    await provision(bus, { storage: 'memory' });
    await bus.kvm.open(bus.names.buckets.campaigns).then((kv) => kv.put(CID, JSON.stringify(campaign)));
    // outputs inline (no artifact store needed for scoring)
    for (const m of synthCampaign(CID, 20, 0.9, { same: 'same' }))
      await bus.js.publish(bus.names.obsSubject(CID), JSON.stringify(m));
    svc = await startVerdict({ natsUrl: sharedNatsUrl(), prefix, keyring: null, tickMs: 100, storage: 'memory' });
  }, 60_000);

  afterAll(async () => {
    await svc?.close();
    await bus?.close();
    await t?.close();
  });

  it('a provisional request continues the caller trace; the final report gets a trace of its own', async () => {
    expect(t.tracing.enabled).toBe(true);
    const h = natsHeaders();
    h.set('traceparent', `00-${CALLER_TRACE}-${CALLER_SPAN}-01`);
    const reply = await waitFor('the provisional report', async () => {
      try {
        const m = await bus.nc.request(bus.names.verdictReportSubject, JSON.stringify({ campaign_id: CID }), {
          timeout: 5000,
          headers: h,
        });
        const r = m.json() as { report_id?: string };
        return r.report_id ? r : null;
      } catch {
        return null;
      }
    });
    await bus.kvm
      .open(bus.names.buckets.campaigns)
      .then((kv) => kv.put(CID, JSON.stringify({ ...campaign, state: 'completed' })));
    const fin = await waitFor('the final report', () => readFinalReport(bus, CID), { timeoutMs: 30_000 });
    const spans = await waitFor('both report write spans', async () => {
      const s = t.otlp.spans();
      return s.filter((x) => x.name === 'shadowplane.verdict.report.write').length >= 2 ? s : null;
    });
    const folds = spans.filter((s) => s.name === 'shadowplane.verdict.fold');
    const writes = spans.filter((s) => s.name === 'shadowplane.verdict.report.write');
    expect(folds).toHaveLength(2);
    const prov = folds.find((s) => s.attributes['shadowplane.report.provisional'] === true)!;
    const final = folds.find((s) => s.attributes['shadowplane.report.provisional'] === false)!;
    // the request's traceparent is the provisional fold's parent
    expect(prov.traceId).toBe(CALLER_TRACE);
    expect(prov.parentSpanId).toBe(CALLER_SPAN);
    expect(prov.attributes).toMatchObject({
      'shadowplane.campaign.id': CID,
      'shadowplane.report.id': reply.report_id,
      'shadowplane.verdict.messages': 40,
    });
    // the final fold is a root span of a new trace, naming the report it wrote
    expect(final.traceId).not.toBe(CALLER_TRACE);
    expect(final.parentSpanId || null).toBeNull();
    expect(final.attributes).toMatchObject({
      'shadowplane.campaign.id': CID,
      'shadowplane.report.id': fin.reportId,
      'shadowplane.run_record.id': fin.runRecordId,
    });
    expect(final.resource['shadowplane.role']).toBe('verdict');
    // each write is a child of its fold
    for (const f of folds) {
      const w = writes.find((x) => x.parentSpanId === f.spanId)!;
      expect(w.traceId).toBe(f.traceId);
      expect(w.attributes['shadowplane.report.id']).toBe(f.attributes['shadowplane.report.id']);
    }
  }, 90_000);
});
