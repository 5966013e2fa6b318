import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectBus, provision, type Bus } from '@shadowplane/bus';
import { generateKey, keyringFrom, putArtifact } from '@shadowplane/artifacts';
import { Campaign, contentHash, type ObsMessage } from '@shadowplane/contracts';
import { foldReport, verifyBundle } from '@shadowplane/evidence';
import {
  exportObservations,
  readDatasetCard,
  readFinalReport,
  readLatestReport,
  readProgress,
  readReport,
  readRunRecord,
  requestReport,
} from '@shadowplane/reports';
import { randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import { synthCampaign, synthEvent, synthSpec } from '@shadowplane/testkit';
import { startVerdict, type VerdictHandle } from './index.js';

const CID = 'cmp_a1b2c3d4e5f60718';
const keyring = keyringFrom('k1', { k1: generateKey() });

async function until<T>(fn: () => Promise<T | null | undefined>, timeoutMs = 20_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== null && v !== undefined) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('verdict service over a real nats-server', () => {
  let bus: Bus;
  let prefix: string;
  let svc: VerdictHandle | null = null;
  const spec = synthSpec(['same', 'worse']);
  const campaign: Campaign = Campaign.parse({
    schema: 'shadow.campaign/v1',
    id: CID,
    spec,
    spec_hash: contentHash(spec),
    comparison_key: 'gsm8k:math:inc:same,worse',
    run_index: 1,
    state: 'running',
    state_reason: null,
    created_at: '2026-11-01T11:00:00.000Z',
    updated_at: '2026-11-01T11:00:00.000Z',
  });

  beforeAll(async () => {
    prefix = randomPrefix('vd');
    bus = await connectBus({ url: sharedNatsUrl(), name: 'verdict-test', prefix });
    await provision(bus, { storage: 'memory' });
    await bus.kvm.open(bus.names.buckets.campaigns).then((kv) => kv.put(CID, JSON.stringify(campaign)));
    // observations as the duplicator publishes them: outputs encrypted in the artifact store
    const msgs: ObsMessage[] = [
      ...synthCampaign(CID, 40, 0.9, { same: 'same', worse: 0.5 }),
      synthEvent(CID, 2, 'duplicate', null, 1),
    ];
    for (const m of msgs) {
      let out: ObsMessage = m;
      if (m.schema === 'shadow.observation/v1') {
        const ref = await putArtifact(
          { bus, bucket: bus.names.buckets.artifacts },
          keyring,
          { output_text: m.output_text ?? '', tool_calls: [] },
          { campaign_id: CID, arm_id: m.arm_id, item_hash: m.item_hash, purpose: 'shadow-evaluation', ttl_days: 7 },
        );
        const { output_text: _o, ...rest } = m;
        out = { ...rest, artifact_ref: ref } as ObsMessage;
      }
      await bus.js.publish(bus.names.obsSubject(CID), JSON.stringify(out));
    }
  });

  afterAll(async () => {
    await svc?.close();
    await bus?.close();
  });

  it('answers a provisional report request, then writes the final report when the campaign completes', async () => {
    svc = await startVerdict({
      natsUrl: sharedNatsUrl(),
      prefix,
      keyring,
      tickMs: 100,
      progressIntervalMs: 200,
      storage: 'memory',
    });
    const ready = await until(async () => ((await fetch(`${svc!.opsUrl}/readyz`)).status === 200 ? true : null));
    expect(ready).toBe(true);
    const req = await until(() => requestReport(bus, CID, { timeoutMs: 5000 }));
    const prov = await readLatestReport(bus, CID);
    expect(prov!.reportId).toBe(req.reportId);
    expect(prov!.provisional).toBe(true);
    expect(prov!.runRecordId).toBe(req.runRecordId);
    expect(prov!.runRecord).toMatchObject({
      report_id: req.reportId,
      campaign_id: CID,
      campaign_state: 'running',
      provisional: true,
    });
    expect(await readFinalReport(bus, CID)).toBeNull();

    await bus.kvm
      .open(bus.names.buckets.campaigns)
      .then((kv) =>
        kv.put(CID, JSON.stringify({ ...campaign, state: 'completed', updated_at: '2026-11-01T13:00:00.000Z' })),
      );
    const fin = await until(() => readFinalReport(bus, CID));
    expect(fin.provisional).toBe(false);
    const ct = fin.report.call_types![0]!;
    expect(ct.dataset_card.unique_items).toBe(40);
    expect(ct.dataset_card.total_weight).toBe(41);
    const same = ct.comparisons.find((c) => c.candidate_arm_id === 'same')!;
    const worse = ct.comparisons.find((c) => c.candidate_arm_id === 'worse')!;
    // outputs were decrypted and scored: identical correctness (40 pairs with no discordance are
    // not yet enough to pass a 2 pp margin honestly, so the decision itself is not asserted)
    expect(same.stats!.quality_delta.point).toBe(0);
    expect(same.decision).not.toBe('fail');
    expect(worse.decision).toBe('fail');
    expect(fin.html).toContain('<svg class="frontier-chart"');

    // byte-stable re-read, id = hash of the body
    const again = await readReport(bus, fin.reportId);
    expect(again!.reportJson).toBe(fin.reportJson);
    const { report_id: _id, ...body } = JSON.parse(fin.reportJson) as Record<string, unknown>;
    expect(contentHash(body)).toBe(fin.reportId);
    expect(verifyBundle(fin.bundle)).toEqual({ ok: true, problems: [] });
    // the run record: stored beside the report, content-addressed, pointing at it
    expect(fin.runRecord).toMatchObject({
      report_id: fin.reportId,
      campaign_id: CID,
      campaign_state: 'completed',
      provisional: false,
    });
    const { run_record_id: runId, ...runBody } = JSON.parse(fin.runRecordJson!) as Record<string, unknown>;
    expect([runId, contentHash(runBody)]).toEqual([fin.runRecordId, fin.runRecordId]);
    expect(fin.runRecord!.call_types[0]!.arms.map((a) => [a.arm_id, a.latency_ms.n])).toEqual([
      ['inc', 40],
      ['same', 40],
      ['worse', 40],
    ]);
    expect((await readRunRecord(bus, fin.runRecordId!))!.runRecordJson).toBe(fin.runRecordJson);
    expect(fin.html).toContain(fin.runRecordId!);
    expect((fin.bundle as { run_record_id: string }).run_record_id).toBe(fin.runRecordId);
    const card = await readDatasetCard(bus, ct.dataset_card.dataset_hash);
    expect(card).toEqual(ct.dataset_card);

    const progress = await until(async () => {
      const p = await readProgress(bus, CID);
      return p && p.latest_report_id === fin.reportId ? p : null;
    });
    expect(progress.call_types.math).toEqual({
      items_seen: 40,
      items_unique: 40,
      items_dispatched: 40,
      items_excluded: {},
      duplicates: 1,
    });
    expect(progress.arms.inc).toEqual({ calls_ok: 40, calls_error: {}, abandoned: 0 });

    const metrics = await (await fetch(`${svc!.opsUrl}/metrics`)).text();
    expect(metrics).toMatch(/shadowplane_verdict_reports_written_total\{kind="final",role="verdict"\} 1/);
    expect(metrics).toMatch(/shadowplane_verdict_obs_messages_total\{kind="observation",role="verdict"\} 120/);
    expect(metrics).toMatch(/shadowplane_verdict_obs_messages_total\{kind="item_event",role="verdict"\} 1/);

    // the exported file folds offline to the same report
    const exported: ObsMessage[] = [];
    for await (const m of exportObservations(bus, CID, { keyring })) exported.push(m);
    expect(exported).toHaveLength(121);
    const offline = foldReport({
      campaign: { campaign_id: CID, spec, run_index: 1, spec_hash: campaign.spec_hash, state: 'completed' },
      messages: exported,
      provisional: false,
    });
    expect(offline.reportId).toBe(fin.reportId);
    expect(offline.runRecordId).toBe(fin.runRecordId);
  });

  it('replays the stream after a restart and writes the same final report hash', async () => {
    const before = (await readFinalReport(bus, CID))!.reportId;
    await svc!.close();
    svc = await startVerdict({
      natsUrl: sharedNatsUrl(),
      prefix,
      keyring,
      tickMs: 100,
      progressIntervalMs: 200,
      storage: 'memory',
    });
    const after = await until(async () => svc!.finalReports().get(CID));
    expect(after).toBe(before);
  });
});
