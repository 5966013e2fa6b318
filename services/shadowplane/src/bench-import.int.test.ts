import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBenchStack, type BenchStack } from '../test/bench-stack.js';
import { KEYS } from '@shadowplane/control/testing';

// The import builder over a real nats-server, the control API, a duplicator worker, the verdict
// service and provider-sim: operator-supplied items → a dataset whose census is `import` (never
// production, so not fit-eligible) → a re-import is the same dataset → a frozen run of it admits
// the import class on purpose and dispatches every item.

const SUITE = 'imported';
const CT = 'math';

const line = (i: number) => ({
  call_type: CT,
  request: {
    model: 'gpt-prod',
    messages: [{ role: 'user', content: `Imported item ${i}: what is ${i + 2} times ${i + 9}?` }],
    max_tokens: 64,
  },
  reference: { kind: 'numeric', value: (i + 2) * (i + 9) },
});

describe('the import builder end to end', () => {
  let stack: BenchStack;
  const req: BenchStack['req'] = (...a) => stack.req(...a);

  beforeAll(async () => {
    stack = await startBenchStack('import');
  });
  afterAll(async () => stack?.close());

  it('imports items as `import` traffic, freezes them alone, and runs them when admitted', async () => {
    // one JSONL file: 10 items, item 0 twice (weight 2), one the arms cannot be sent
    const lines = [...Array.from({ length: 10 }, (_, i) => line(i)), line(0)];
    const tool = {
      call_type: CT,
      request: { model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'web_search' }] },
    };
    const items = [...lines, tool];
    const bad = await req('POST', `/v1/suites/${SUITE}/freeze`, KEYS.write, {
      builder: { kind: 'import', items: [line(0), { call_type: CT, request: 'not an object' }] },
    });
    expect([bad.statusCode, bad.json().error.details.issues[0].path]).toEqual([400, 'builder.items.1.request']);

    const frozen = await req('POST', `/v1/suites/${SUITE}/freeze`, KEYS.write, { builder: { kind: 'import', items } });
    expect(frozen.statusCode).toBe(201);
    const ds = frozen.json().datasets[0];
    expect(ds.card).toMatchObject({
      unique_items: 10,
      total_weight: 11,
      census: { import: { items: 10, weight: 11 } },
      traffic_classes: { import: 10 },
      exclusion_counts: { untranslatable: 1 },
      builder: { kind: 'import', imported_items: 12 },
    });
    expect(ds.card.census.production).toBeUndefined();
    expect(ds.card.fit_eligibility.eligible).toBe(false);
    expect(ds.card.fit_eligibility.reasons).toContain('census_not_production');
    // the same file again: the same envelopes (de-duplicated), the same dataset, nothing written
    const again = await req('POST', `/v1/suites/${SUITE}/freeze`, KEYS.write, { builder: { kind: 'import', items } });
    expect(again.statusCode).toBe(200);
    expect(again.json().datasets[0]).toMatchObject({ dataset_hash: ds.dataset_hash, created: false });

    const spec = (extra: object = {}) => ({
      name: 'imported run',
      suite: SUITE,
      call_types: [CT],
      source: `frozen:${ds.dataset_hash}`,
      incumbent: {
        id: 'large',
        provider: 'sim-openai',
        model: 'sim-large',
        rate_card: { input: 2.5, output: 10 },
        max_output_tokens: 64,
      },
      candidates: [
        {
          id: 'small',
          provider: 'sim-openai',
          model: 'sim-small',
          rate_card: { input: 0.1, output: 0.4 },
          max_output_tokens: 64,
        },
      ],
      max_cost_usd: 5,
      aa_share: 0,
      ...extra,
    });
    // production-only (the default) would exclude every item: refused, naming the field
    const notAdmitted = await req('POST', '/v1/campaigns', KEYS.write, spec());
    expect([notAdmitted.statusCode, notAdmitted.json().error.details.issues[0].path]).toEqual([400, 'traffic_classes']);
    const run = await req('POST', '/v1/campaigns', KEYS.write, spec({ traffic_classes: ['import'] }));
    expect(run.statusCode).toBe(201);
    const id: string = run.json().campaign.id;
    const rep = await stack.finalReport(id, KEYS.read);
    const card = rep.report.call_types[0].dataset_card;
    expect(card).toMatchObject({ dataset_hash: ds.dataset_hash, unique_items: 10, total_weight: 11 });
    expect(card.traffic_classes).toEqual({ import: 10 });

    // from_failures: the items the run saw the candidate fail (low paired score or an error)
    const bundle = (await req('GET', `/v1/campaigns/${id}/report?format=bundle`, KEYS.read)).json();
    const obs = (await req('GET', `/v1/campaigns/${id}/observations`, KEYS.read)).body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, any>);
    const failed = new Set<string>([
      ...bundle.parts.paired.flatMap((p: any) =>
        p.candidate_arm_id === 'small' ? p.rows.filter((r: any) => r.q_cand < 0.5).map((r: any) => r.item_hash) : [],
      ),
      ...obs
        .filter((o) => o.schema === 'shadow.observation/v1' && o.arm_id === 'small' && o.status === 'error')
        .map((o) => o.item_hash),
    ]);
    const ff = (builder: object) =>
      req('POST', `/v1/suites/${SUITE}/freeze`, KEYS.write, { builder: { kind: 'from_failures', ...builder } });
    const noRun = await ff({ campaign_id: 'cmp_nosuchrun' });
    expect([noRun.statusCode, noRun.json().error.details.issues[0].path]).toEqual([404, 'builder.campaign_id']);
    const noArm = await ff({ campaign_id: id, arm_id: 'nope' });
    expect([noArm.statusCode, noArm.json().error.details.issues[0].path]).toEqual([400, 'builder.arm_id']);
    // below 1: every paired item whose candidate score is under 1 comes back (a dataset is its
    // items: when they are the import's own, the freeze finds that dataset and writes nothing)
    const paired = bundle.parts.paired
      .find((p: any) => p.candidate_arm_id === 'small')
      .rows.filter((r: any) => r.q_cand < 1);
    const all = await ff({ campaign_id: id, below: 1 });
    if (paired.length > 0) {
      expect([200, 201]).toContain(all.statusCode);
      const d = all.json().datasets[0];
      expect(d.card.unique_items).toBeGreaterThanOrEqual(paired.length);
      if (d.created) expect(d.card.builder).toMatchObject({ kind: 'from_failures', campaign_id: id, arm_id: 'small' });
      else expect(d.dataset_hash).toBe(ds.dataset_hash);
    }
    // nothing scores below 0 and no call failed: nothing to freeze
    if (!obs.some((o) => o.status === 'error')) expect((await ff({ campaign_id: id, below: 0 })).statusCode).toBe(404);
    const got = await ff({ campaign_id: id });
    if (failed.size === 0) expect(got.statusCode).toBe(404);
    else {
      expect([200, 201]).toContain(got.statusCode);
      const d = got.json().datasets[0];
      expect(d.card.unique_items).toBe(failed.size);
      if (d.created)
        expect(d.card.builder).toMatchObject({ kind: 'from_failures', failed_items: failed.size, below: 0.5 });
    }
  }, 240_000);
});
