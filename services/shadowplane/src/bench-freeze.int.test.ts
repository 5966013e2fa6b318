import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBenchStack, until, type BenchStack } from '../test/bench-stack.js';
import type { CaptureSkipMarker, Envelope } from '@shadowplane/contracts';
import { KEYS } from '@shadowplane/control/testing';
import { chatEnvelope } from '@shadowplane/testkit';

// The Bench lifecycle's first half end to end, over a real nats-server, the control API, a
// duplicator worker, the verdict service and provider-sim: captures → status → freeze →
// re-freeze (same hash, nothing written) → a frozen campaign dispatches exactly the dataset's
// captures (weights kept, live traffic untouched) → its report's dataset card matches the frozen
// one; a second run counts toward the α-spending run index and reports a reference that left the
// stream as excluded, never silently missing.

const SUITE = 'bench';
const CT = 'math';

function item(i: number): Envelope {
  const e = chatEnvelope(
    SUITE,
    CT,
    `Bench item ${i}: a farmer has ${i + 3} crates of ${i * 7 + 2} apples each. How many apples?`,
    { max_tokens: 64 },
  );
  return { ...e, expectations: [{ kind: 'numeric', value: (i + 3) * (i * 7 + 2) }] };
}
const fresh = (e: Envelope): Envelope => ({ ...e, envelope_id: randomUUID(), captured_at: new Date().toISOString() });

describe('suites: status, freeze and frozen runs end to end', () => {
  let stack: BenchStack;
  const req: BenchStack['req'] = (...a) => stack.req(...a);
  const published: { env: Envelope; seq: number }[] = [];

  const publish = async (e: Envelope) => {
    const ack = await stack.f.bus.js.publish(stack.f.bus.names.captureSubject(SUITE, CT), JSON.stringify(e), {
      msgID: e.envelope_id,
    });
    published.push({ env: e, seq: ack.seq });
  };

  beforeAll(async () => {
    stack = await startBenchStack('bench');
  });
  afterAll(async () => stack?.close());

  it('captures → status → freeze → re-freeze → frozen run of exactly the dataset → matching card → run 2', async () => {
    // 12 distinct items; item 0 captured 3 times and item 1 twice (exact duplicates, new envelope ids)
    const items = Array.from({ length: 12 }, (_, i) => item(i));
    for (const e of items) await publish(e);
    await publish(fresh(items[0]!));
    await publish(fresh(items[0]!));
    await publish(fresh(items[1]!));
    // excluded at freeze: test traffic, a provider-executed tool, a message that is no envelope
    await publish({ ...item(100), traffic_class: 'test' });
    const tool = chatEnvelope(SUITE, CT, 'search the web for today', { tools: [{ type: 'web_search' }] });
    await publish(tool);
    await stack.f.bus.js.publish(stack.f.bus.names.captureSubject(SUITE, CT), '{"not":"an envelope"}');
    // what the sidecar publishes for a capture it skipped for size
    const marker: CaptureSkipMarker = {
      schema: 'shadow.capture_skip/v1',
      marker_id: randomUUID(),
      at: new Date().toISOString(),
      suite: SUITE,
      call_type: CT,
      reason: 'too_large',
      traffic_class: 'production',
      bytes: 9_000_000,
    };
    await stack.f.bus.js.publish(stack.f.bus.names.captureSkipSubject(SUITE, CT), JSON.stringify(marker));

    // status: the read scope, a known suite, qualified-evidence terms
    expect((await req('GET', `/v1/suites/${SUITE}/status`, KEYS.allButRead)).statusCode).toBe(403);
    const unknown = await req('GET', '/v1/suites/nosuchsuite/status', KEYS.read);
    expect([unknown.statusCode, unknown.json().error.code]).toEqual([404, 'not_found']);
    const st = await req('GET', `/v1/suites/${SUITE}/status`, KEYS.read);
    expect(st.statusCode).toBe(200);
    const stCt = st.json().call_types[0];
    expect(stCt).toMatchObject({ call_type: CT, confirmed_captures: 18, skip_markers: 1, frozen: null });
    expect(stCt.readiness).toMatchObject({
      distinct_items: 12,
      total_weight: 15,
      exclusion_counts: { test_traffic: 1, untranslatable: 1, unparseable: 1, too_large: 1 },
    });
    expect(stCt.readiness.near_duplicate_clusters).toBeGreaterThanOrEqual(1);
    expect(stCt.readiness.power_plan.mde_pp).toBeGreaterThan(0);

    // freeze: bad requests name their field; a builder outside the vocabulary is refused, not ignored
    for (const max_items of [0, 5001]) {
      const bad = await req('POST', `/v1/suites/${SUITE}/freeze`, KEYS.write, { max_items });
      expect([bad.statusCode, bad.json().error.details.issues[0].path]).toEqual([400, 'max_items']);
    }
    const other = await req('POST', `/v1/suites/${SUITE}/freeze`, KEYS.write, { builder: { kind: 'from_nowhere' } });
    expect([other.statusCode, other.json().error.details.issues[0].path]).toEqual([400, 'builder.kind']);
    const synth = await req('POST', `/v1/suites/${SUITE}/freeze`, KEYS.write, { builder: { kind: 'synthetic' } });
    expect([synth.statusCode, synth.json().error.details.issues[0].path]).toEqual([400, 'builder.call_type']);
    expect((await req('POST', `/v1/suites/${SUITE}/freeze`, KEYS.read, {})).statusCode).toBe(403);

    const frozen = await req('POST', `/v1/suites/${SUITE}/freeze`, KEYS.write, {});
    expect(frozen.statusCode).toBe(201);
    const ds = frozen.json().datasets[0];
    expect(ds).toMatchObject({ call_type: CT, created: true });
    expect(ds.dataset_hash).toBe(stCt.readiness.freeze_would_give);
    expect(ds.card).toMatchObject({ unique_items: 12, total_weight: 15, skipped_at_capture: { too_large: 1 } });
    const again = await req('POST', `/v1/suites/${SUITE}/freeze`, KEYS.write, {});
    expect(again.statusCode).toBe(200);
    expect(again.json().datasets[0]).toMatchObject({ dataset_hash: ds.dataset_hash, created: false });
    const card = await req('GET', `/v1/datasets/${ds.dataset_hash}`, KEYS.read);
    expect(card.json()).toEqual(ds.card);
    const st2 = (await req('GET', `/v1/suites/${SUITE}/status`, KEYS.read)).json().call_types[0];
    expect(st2.frozen).toMatchObject({ dataset_hash: ds.dataset_hash, current: true });

    // live traffic after the freeze: a frozen run must not touch it
    const live = Array.from({ length: 4 }, (_, i) => item(200 + i));
    for (const e of live) await publish(e);

    const spec = (source: string) => ({
      name: 'bench frozen run',
      suite: SUITE,
      call_types: [CT],
      source,
      incumbent: {
        id: 'large',
        provider: 'sim-openai',
        model: 'sim-large',
        rate_card: { input: 2.5, cached_input: 1.25, output: 10 },
        max_output_tokens: 64,
      },
      candidates: [
        {
          id: 'small',
          provider: 'sim-openai',
          model: 'sim-small',
          rate_card: { input: 0.1, cached_input: 0.025, output: 0.4 },
          max_output_tokens: 64,
        },
      ],
      max_cost_usd: 5,
      aa_share: 0,
    });
    const missing = await req('POST', '/v1/campaigns', KEYS.write, spec(`frozen:${'0'.repeat(64)}`));
    expect([missing.statusCode, missing.json().error.code]).toEqual([404, 'unknown_dataset']);

    const sampled = await req('POST', '/v1/campaigns', KEYS.write, {
      ...spec(`frozen:${ds.dataset_hash}`),
      sample_rate: 0.5,
    });
    expect([sampled.statusCode, sampled.json().error.details.issues[0].path]).toEqual([400, 'sample_rate']);
    const otherCt = await req('POST', '/v1/campaigns', KEYS.write, {
      ...spec(`frozen:${ds.dataset_hash}`),
      call_types: ['chat'],
    });
    expect([otherCt.statusCode, otherCt.json().error.details.issues[0].path]).toEqual([400, 'call_types']);

    const run1 = await req('POST', '/v1/campaigns', KEYS.write, spec(`frozen:${ds.dataset_hash}`));
    expect(run1.statusCode).toBe(201);
    const id1: string = run1.json().campaign.id;
    const done1 = await until('run 1 to complete', async () => {
      const s = (await req('GET', `/v1/campaigns/${id1}`, KEYS.read)).json();
      return s.campaign.state === 'completed' ? s.campaign : null;
    });
    expect(done1.state_reason).toBe('dataset_exhausted');
    const liveHashes = new Set(live.map((e) => e.item_hash));
    const datasetHashes = new Set(items.map((e) => e.item_hash));
    // only dataset items were dispatched, the live captures never
    const obs = (await req('GET', `/v1/campaigns/${id1}/observations`, KEYS.read)).body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { schema: string; item_hash: string; kind?: string });
    const observed = new Set(obs.filter((m) => m.schema === 'shadow.observation/v1').map((m) => m.item_hash));
    expect([...observed].sort()).toEqual([...datasetHashes].sort());
    expect(obs.some((m) => liveHashes.has(m.item_hash))).toBe(false);
    expect(obs.filter((m) => m.kind === 'duplicate').length).toBe(3);
    expect(obs.filter((m) => m.schema === 'shadow.observation/v1').length).toBe(24); // 12 items × 2 arms

    const rep = await until('run 1 final report', async () => {
      const r = await req('GET', `/v1/campaigns/${id1}/report`, KEYS.read);
      return r.statusCode === 200 && r.json().provisional === false ? (r.json() as any) : null;
    });
    const rc = rep.report.call_types[0].dataset_card;
    expect(rc).toMatchObject({
      dataset_hash: ds.dataset_hash,
      unique_items: ds.card.unique_items,
      total_weight: ds.card.total_weight,
      near_duplicate_clusters: ds.card.near_duplicate_clusters,
    });
    expect(rep.report.run_index).toBe(1);

    // run 2 on the same dataset: run index 2; a reference gone from the stream is reported
    const gone = published.find((p) => p.env.item_hash === items[5]!.item_hash)!;
    await stack.f.bus.jsm.streams.deleteMessage(stack.f.bus.names.streams.capture, gone.seq);
    const run2 = await req('POST', '/v1/campaigns', KEYS.write, spec(`frozen:${ds.dataset_hash}`));
    expect(run2.statusCode).toBe(201);
    expect(run2.json().campaign.run_index).toBe(2);
    const id2: string = run2.json().campaign.id;
    const rep2 = await stack.finalReport(id2, KEYS.read);
    const c2 = rep2.report.call_types[0].dataset_card;
    expect(c2.exclusions).toContainEqual({ item_hash: items[5]!.item_hash, reason: 'capture_expired' });
    expect(c2.unique_items).toBe(11);
    expect(rep2.report.run_index).toBe(2);
  }, 240_000);
});
