// A provisional report asked through the control API: the control SERVER span continues the
// caller's traceparent, and the verdict fold it leads to (over a NATS request) is its child in the
// same trace. Spans exported over OTLP/HTTP (JSON) to a loopback receiver; real NATS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
import { startVerdict, type VerdictHandle } from '@shadowplane/verdict';
import { auth, fixture, KEYS, type Fixture } from '../testing/helpers.js';

const CID = 'cmp_7ace7ace7ace7ac1';
const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319d';
const CALLER_SPAN = 'b7ad6b7169203332';

describe('control → verdict trace propagation', () => {
  let t: OtlpTracingHandle;
  let f: Fixture;
  let verdict: VerdictHandle | null = null;
  const spec = synthSpec(['same']);
  const campaign = runningCampaign(CID, spec);

  beforeAll(async () => {
    t = await startOtlpTracing('control-verdict-test', 'control');
    const prefix = randomPrefix('ctltr');
    // a fold under a loaded machine can take seconds: the control waits for the verdict's reply
    f = await fixture({ prefix, reportRequestTimeoutMs: 30_000 });
    await f.bus.kvm.open(f.bus.names.buckets.campaigns).then((kv) => kv.put(CID, JSON.stringify(campaign)));
    for (const m of synthCampaign(CID, 20, 0.9, { same: 'same' }))
      await f.bus.js.publish(f.bus.names.obsSubject(CID), JSON.stringify(m));
    verdict = await startVerdict({
      natsUrl: sharedNatsUrl(),
      prefix,
      keyring: null,
      tickMs: 100,
      storage: 'memory',
    });
  }, 90_000);

  afterAll(async () => {
    await verdict?.close();
    await f?.close();
    await t?.close();
  });

  it('GET …/report?provisional=true carries its span in the NATS request: the verdict fold is its child', async () => {
    expect(t.tracing.enabled).toBe(true);
    // until the verdict service has read the campaign's observations, it may answer not_found
    const res = await waitFor('the provisional report', async () => {
      const r = await f.app.inject({
        method: 'GET',
        url: `/v1/campaigns/${CID}/report?provisional=true`,
        headers: { ...auth(KEYS.read), traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      });
      return r.statusCode === 200 ? r : null;
    });
    const reportId = res.json().report_id as string;
    // the server span ends after the fold (on the response): wait for both
    const spans = await waitFor('the fold and server spans', async () => {
      const s = t.otlp.spans();
      const fold = s.find(
        (x) => x.name === 'shadowplane.verdict.fold' && x.attributes['shadowplane.report.id'] === reportId,
      );
      const servers = s.filter((x) => x.name === 'GET /v1/campaigns/{id}/report');
      return fold && servers.some((x) => x.spanId === fold.parentSpanId) ? { all: s, fold, servers } : null;
    });
    const { fold, servers } = spans;
    // every report request continued the caller's trace
    for (const s of servers) {
      expect(s.traceId).toBe(CALLER_TRACE);
      expect(s.parentSpanId).toBe(CALLER_SPAN);
    }
    // the fold that wrote the served report is a child of one of those server spans
    expect(fold.traceId).toBe(CALLER_TRACE);
    expect(servers.map((s) => s.spanId)).toContain(fold.parentSpanId);
    expect(fold.attributes).toMatchObject({
      'shadowplane.campaign.id': CID,
      'shadowplane.report.provisional': true,
    });
    const write = spans.all.find(
      (x) => x.name === 'shadowplane.verdict.report.write' && x.parentSpanId === fold.spanId,
    );
    expect(write?.traceId).toBe(CALLER_TRACE);
  }, 120_000);
});
