import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openKv } from '@shadowplane/bus';
import { BudgetLedger, Campaign, FLAG_PAID_DISPATCH, OutcomeRecord, type Envelope } from '@shadowplane/contracts';
import { attemptUpperBoundMicroUsd, prepareArmRequest, promptTokensUpperBound } from '@shadowplane/providers';
import { CampaignStatus, DryRunResult } from '@shadowplane/contracts';
import { auth, fixture, KEYS, validSpec, type Fixture } from '../testing/helpers.js';

const post = (f: Fixture, url: string, body: unknown, key: string = KEYS.write) =>
  f.app.inject({
    method: 'POST',
    url,
    headers: { ...auth(key), 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });

describe('campaign launch, kill switch and lifecycle', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture();
  });
  afterAll(async () => f.close());

  it('refuses a live launch with 503 paid_dispatch_disabled when the flag was never set (unknown = off), writing nothing', async () => {
    const before = await f.snapshot();
    const res = await post(f, '/v1/campaigns', validSpec());
    expect(res.statusCode).toBe(503);
    expect(res.json().error).toMatchObject({ code: 'paid_dispatch_disabled', details: { state: 'unknown' } });
    // the refusal says how to turn the switch on
    expect(res.json().error.message).toContain("shadowctl flags paid-dispatch on --reason '<why>'");
    expect(res.json().error.details.hint).toContain('PUT /v1/admin/flags/paid_dispatch');
    expect(await f.snapshot()).toEqual(before);
  });

  it('treats an unparsable flag value as off', async () => {
    const flags = await openKv(f.bus, f.bus.names.buckets.flags);
    await flags.put(FLAG_PAID_DISPATCH, 'yes please');
    const before = await f.snapshot();
    const res = await post(f, '/v1/campaigns', validSpec());
    expect(res.statusCode).toBe(503);
    expect(await f.snapshot()).toEqual(before);
  });

  it('refuses with 503 when the flag is explicitly off, writing nothing', async () => {
    await f.setFlag(false);
    const before = await f.snapshot();
    const res = await post(f, '/v1/campaigns', validSpec());
    expect(res.statusCode).toBe(503);
    expect(res.json().error.details.state).toBe('off');
    expect(await f.snapshot()).toEqual(before);
  });

  it('a dry run with the flag off labels every call type not_runnable (paid_dispatch_disabled) and writes nothing', async () => {
    const before = await f.snapshot();
    const res = await post(f, '/v1/campaigns', { ...validSpec({ call_types: ['solve', 'explain'] }), dry_run: true });
    expect(res.statusCode).toBe(200);
    const d = DryRunResult.parse(res.json());
    expect(d.would_launch).toBe(false);
    expect(
      d.dispositions.map((x) => [x.call_type, x.disposition, x.reasons.includes('paid_dispatch_disabled')]),
    ).toEqual([
      ['solve', 'not_runnable', true],
      ['explain', 'not_runnable', true],
    ]);
    expect(await f.snapshot()).toEqual(before);
  });

  it('a dry run without captures uses the stated 4,000-byte assumption; worst case by hand, by the reservation formula', async () => {
    await f.setFlag(true);
    const res = await post(f, '/v1/campaigns?dry_run=true', validSpec());
    const d = DryRunResult.parse(res.json());
    const est = d.estimate.call_types[0]!;
    expect(est.source).toBe('assumption');
    expect(est.assumption).toMatch(/4000 bytes/);
    expect(est.prompt_bytes_max).toBe(4000);
    // 4000 bytes → 4000 input tokens at the highest input-side price, 512 output tokens, in µ$ rounded up:
    // large  = 4000×2.50 + 512×10.00 = 15120 µ$
    // medium = 4000×0.40 + 512× 1.60 =  2419.2 → 2420 µ$
    // A-A    = 0.1 × 0.01512          = 0.001512
    expect(est.arms.map((a) => [a.arm_id, a.role, a.worst_case_usd])).toEqual([
      ['large', 'incumbent', expect.closeTo(0.01512, 12)],
      ['medium', 'candidate', expect.closeTo(0.00242, 12)],
      ['large', 'incumbent_aa', expect.closeTo(0.001512, 12)],
    ]);
    expect(est.per_item_worst_case_usd).toBeCloseTo(0.019052, 12);
    expect(d.estimate.worst_case_total_usd).toBeCloseTo(3.8104, 9); // × 200 items
    expect(d.estimate.items_affordable).toBe(656); // floor(12.5 / 0.019052) = floor(656.1)
    // spend under both stopping rules: the same worst case; sequential's expectation per scenario
    const st = d.stopping[0]!;
    expect(st).toMatchObject({ call_type: 'solve', rule: 'fixed', worst_case_items: 200 });
    expect(st.worst_case_usd).toBeCloseTo(3.8104, 9);
    expect(st.fixed).toEqual({ expected_items: 200, expected_usd: st.worst_case_usd });
    expect(st.sequential.scenarios.map((x) => x.scenario)).toEqual(['clearly_worse', 'at_margin', 'equal']);
    for (const x of st.sequential.scenarios) {
      expect(x.expected_items).toBeLessThanOrEqual(200);
      expect(x.expected_usd).toBeCloseTo(x.expected_items * est.per_item_worst_case_usd!, 9);
    }
    // group_sequential over the same simulated items: planned looks every 25 up to max_items 200
    expect(st.group_sequential).toMatchObject({ batch_items: 25, planned_looks: 8 });
    expect(st.group_sequential!.scenarios.map((x) => x.scenario)).toEqual(['clearly_worse', 'at_margin', 'equal']);
    for (const x of st.group_sequential!.scenarios) expect(x.expected_items).toBeLessThanOrEqual(200);
    expect(st.simulation.model).toMatch(/ratios 0\.160/); // medium / large = 0.00242 / 0.01512
    expect(d.dispositions[0]).toMatchObject({
      disposition: 'runnable',
      warnings: expect.arrayContaining(['no_recent_captures', 'underpowered']),
    });
  });

  it('a dry run prices the largest prompt among recent CAPTURE envelopes of that suite and call type', async () => {
    const prompts = ['x'.repeat(40), 'y'.repeat(400), 'z'.repeat(80)];
    for (const text of prompts) {
      const env: Envelope = {
        schema: 'shadow.envelope/v1',
        envelope_id: randomUUID(),
        captured_at: new Date().toISOString(),
        suite: 'gsm8k',
        call_type: 'solve',
        api: 'openai.chat',
        method: 'POST',
        path: '/v1/chat/completions',
        request: {
          body: { model: 'sim-large', messages: [{ role: 'user', content: text }] },
          body_ref: null,
          bytes: text.length + 60,
          content_type: 'application/json',
        },
        item_hash: 'a'.repeat(64),
        served: null,
        traffic_class: 'production',
        retention: { consent: true },
        expectations: [],
        redactions: [],
        source: { placement: 'egress', sidecar_id: 'test', sticky_key_hash: null },
      };
      await f.bus.js.publish(f.bus.names.captureSubject('gsm8k', 'solve'), JSON.stringify(env), {
        msgID: env.envelope_id,
      });
    }
    // a bigger prompt on another call type must not count
    const other = {
      schema: 'shadow.envelope/v1',
      envelope_id: randomUUID(),
      captured_at: new Date().toISOString(),
      suite: 'gsm8k',
      call_type: 'other',
      api: 'openai.chat',
      method: 'POST',
      path: '/v1/chat/completions',
      request: {
        body: { messages: [{ role: 'user', content: 'w'.repeat(9000) }] },
        body_ref: null,
        bytes: 9100,
        content_type: 'application/json',
      },
      item_hash: 'b'.repeat(64),
      served: null,
      traffic_class: 'production',
      retention: { consent: true },
      expectations: [],
      redactions: [],
      source: { placement: 'egress', sidecar_id: 'test', sticky_key_hash: null },
    };
    await f.bus.js.publish(f.bus.names.captureSubject('gsm8k', 'other'), JSON.stringify(other));
    const res = await post(f, '/v1/campaigns?dry_run=true', validSpec());
    expect(res.statusCode, res.body).toBe(200);
    const d = DryRunResult.parse(res.json());
    const est = d.estimate.call_types[0]!;
    expect(est).toMatchObject({
      source: 'capture_tail',
      envelopes_sampled: 3,
      assumption: null,
    });
    // the largest body, measured as the duplicator measures it: its JSON bytes as sent to each arm
    const big = { model: 'sim-large', messages: [{ role: 'user', content: 'y'.repeat(400) }] };
    expect(est.prompt_bytes_max).toBe(Buffer.byteLength(JSON.stringify(big)));
    for (const [armId, model, card] of [
      ['large', 'sim-large', { input: 2.5, cached_input: 1.25, output: 10 }],
      ['medium', 'sim-medium', { input: 0.4, cached_input: 0.1, output: 1.6 }],
    ] as const) {
      const prep = prepareArmRequest('openai.chat', big, { api: 'openai.chat', model, maxOutputTokens: 512 });
      if (!prep.ok) throw new Error(prep.reason);
      // equal to what the duplicator reserves for this item on this arm
      const reserved = attemptUpperBoundMicroUsd(promptTokensUpperBound(prep.body), 512, card) / 1e6;
      expect(est.arms.find((a) => a.arm_id === armId && a.role !== 'incumbent_aa')!.worst_case_usd).toBeCloseTo(
        reserved,
        12,
      );
    }
  });

  it('a dry run says when an arm cannot be priced (no rate card) and when the budget cannot cover one item', async () => {
    const unpriced = DryRunResult.parse(
      (
        await post(
          f,
          '/v1/campaigns?dry_run=true',
          validSpec({
            call_types: ['fresh'],
            candidates: [{ id: 'medium', provider: 'sim-openai', model: 'sim-medium' }],
          }),
        )
      ).json(),
    );
    expect(unpriced.estimate.call_types[0]!.arms.find((a) => a.arm_id === 'medium')).toEqual({
      arm_id: 'medium',
      role: 'candidate',
      worst_case_usd: null,
      reason: 'no_rate_card',
    });
    expect([unpriced.estimate.call_types[0]!.per_item_worst_case_usd, unpriced.estimate.items_affordable]).toEqual([
      null,
      null,
    ]);
    expect(unpriced.dispositions[0]!.warnings).toContain('cost_unknown_no_rate_card');
    // worst case per item with the 4,000-byte assumption is $0.019052 (see above) > $0.005
    const tiny = DryRunResult.parse(
      (await post(f, '/v1/campaigns?dry_run=true', validSpec({ call_types: ['fresh'], max_cost_usd: 0.005 }))).json(),
    );
    expect(tiny.dispositions[0]).toMatchObject({ disposition: 'not_runnable', reasons: ['budget_below_one_item'] });
    expect([tiny.would_launch, tiny.estimate.items_affordable]).toEqual([false, 0]);
  });

  it('a live launch with an arm that has no rate card is refused with 400 naming it, writing nothing', async () => {
    await f.setFlag(true);
    const before = await f.snapshot();
    const res = await post(
      f,
      '/v1/campaigns',
      validSpec({ call_types: ['fresh'], candidates: [{ id: 'medium', provider: 'sim-openai', model: 'sim-medium' }] }),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_request');
    expect(res.json().error.details.issues.map((i: { path: string }) => i.path)).toEqual(['candidates.0.rate_card']);
    expect(res.json().error.message).toContain('model sim-medium is not in price catalogue 2025-08-01.1');
    expect(await f.snapshot()).toEqual(before);
  });

  it('an arm without a rate card whose model the price catalogue lists takes the catalogue card, pinned with its provenance', async () => {
    await f.setFlag(true);
    const res = await post(
      f,
      '/v1/campaigns',
      validSpec({
        call_types: ['priced'],
        candidates: [{ id: 'mini', provider: 'sim-openai', model: 'gpt-4o-mini-2024-07-18' }],
      }),
    );
    expect(res.statusCode).toBe(201);
    const cand = res.json().campaign.spec.candidates[0];
    // libs/prices/data/catalogue.json, entry gpt-4o-mini (alias gpt-4o-mini-2024-07-18), read by hand
    expect(cand.rate_card).toEqual({ input: 0.15, cached_input: 0.075, cache_write: 0.15, output: 0.6 });
    expect(cand.rate_card_from).toEqual({
      catalogue: '2025-08-01.1',
      model: 'gpt-4o-mini',
      source: 'https://openai.com/api/pricing/',
      as_of: '2025-08-01',
    });
    // the operator's own card is kept as given, with no provenance
    expect(res.json().campaign.spec.incumbent.rate_card).toEqual({ input: 2.5, cached_input: 1.25, output: 10 });
    expect(res.json().campaign.spec.incumbent.rate_card_from).toBeUndefined();
  });

  it('require_power refuses an underpowered plan with 422 naming the call type, writing nothing', async () => {
    // α_adj = 0.05·6/π² = 0.030396 (run 1, one candidate); t(1−α_adj, n−1) + t(0.8, n−1) ≈ 1.8763 + 0.8418 = 2.718
    // at n ≈ 1400 (z: 1.8753 + 0.8416); MDE = 100 · 2.718 · √0.5 / √n: n = 1400 → 5.14 pp > 5
    // (underpowered); n = 1500 → 4.96 pp ≤ 5 (powered); the least powered n is 1478 (z alone: 1477).
    // A live source has no dataset card: the prior is not inflated (design effect 1), and says so.
    const before = await f.snapshot();
    const res = await post(f, '/v1/campaigns', {
      ...validSpec({ max_items: 1400, margins: { noninferiority_pp: 5 } }),
      require_power: true,
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('underpowered');
    expect(res.json().error.details.call_types[0]).toMatchObject({
      call_type: 'solve',
      mde_pp: expect.closeTo(5.137, 2),
      clusters_needed_for_margin: 1478,
      sd_source: 'conservative_prior',
      design_effect: 1,
      design_effect_source: 'none_live_source',
    });
    expect(await f.snapshot()).toEqual(before);
    const dryRes = await post(
      f,
      '/v1/campaigns?dry_run=1&require_power=1',
      validSpec({ max_items: 1500, margins: { noninferiority_pp: 5 } }),
    );
    expect(dryRes.statusCode, dryRes.body).toBe(200);
    const dry = DryRunResult.parse(dryRes.json());
    expect(dry.power[0]).toMatchObject({
      powered: true,
      mde_pp: expect.closeTo(4.963, 2),
      sd_source: 'conservative_prior',
      design_effect: 1,
      design_effect_source: 'none_live_source',
    });
    expect(dry.dispositions[0]!.disposition).toBe('runnable');
  });

  let id = '';
  it('launches with the flag on: 201, the campaign running, the ledger at ⌈max_cost_usd·1e6⌉ micro-USD', async () => {
    const res = await post(f, '/v1/campaigns', { ...validSpec({ max_cost_usd: 12.5 }), require_power: false });
    expect(res.statusCode).toBe(201);
    const s = CampaignStatus.parse(res.json());
    id = s.campaign.id;
    expect(id).toMatch(/^cmp_[0-9a-f]{16}$/);
    expect(res.headers['location']).toBe(`/v1/campaigns/${id}`);
    const stored = Campaign.parse(
      JSON.parse((await (await openKv(f.bus, f.bus.names.buckets.campaigns)).get(id))!.string()),
    );
    expect(stored).toMatchObject({ state: 'running', run_index: 1, state_reason: null });
    expect(stored.spec.margins).toEqual({ noninferiority_pp: 2, min_savings: 0 }); // defaults pinned
    const ledger = BudgetLedger.parse(
      JSON.parse((await (await openKv(f.bus, f.bus.names.buckets.budget)).get(id))!.string()),
    );
    expect(ledger).toEqual({
      limit_micro_usd: 12_500_000,
      reserved_micro_usd: 0,
      settled_micro_usd: 0,
      exhausted: false,
    });
    expect(s.spend).toMatchObject({ limit_usd: 12.5, settled_usd: 0, reserved_usd: 0 });
    expect(s.call_types).toEqual([
      {
        call_type: 'solve',
        items_target: 200,
        items_seen: 0,
        items_unique: 0,
        items_dispatched: 0,
        items_excluded: {},
        duplicates: 0,
      },
    ]);
  });

  it('numbers repeated runs of the same comparison (run_index) and a budget of $0.10 is 100,000 micro-USD exactly', async () => {
    const again = CampaignStatus.parse(
      (
        await post(
          f,
          '/v1/campaigns',
          validSpec({
            name: 'second run',
            max_cost_usd: 0.1,
            candidates: [
              { id: 'cand', provider: 'sim-openai', model: 'sim-medium', rate_card: { input: 0.4, output: 1.6 } },
            ],
          }),
        )
      ).json(),
    );
    expect(again.campaign.run_index).toBe(2);
    expect(again.spend?.limit_micro_usd).toBe(100_000);
    const other = CampaignStatus.parse(
      (
        await post(
          f,
          '/v1/campaigns',
          validSpec({
            candidates: [
              { id: 'small', provider: 'sim-openai', model: 'sim-small', rate_card: { input: 0.1, output: 0.4 } },
            ],
          }),
        )
      ).json(),
    );
    expect(other.campaign.run_index).toBe(1);
  });

  it('GET shows spend settled/reserved/limit as the ledger holds them', async () => {
    const budget = await openKv(f.bus, f.bus.names.buckets.budget);
    await budget.put(
      id,
      JSON.stringify({
        limit_micro_usd: 12_500_000,
        reserved_micro_usd: 250_000,
        settled_micro_usd: 1_234_567,
        exhausted: false,
      }),
    );
    const s = CampaignStatus.parse(
      (await f.app.inject({ method: 'GET', url: `/v1/campaigns/${id}`, headers: auth(KEYS.read) })).json(),
    );
    expect(s.spend).toEqual({
      limit_micro_usd: 12_500_000,
      reserved_micro_usd: 250_000,
      settled_micro_usd: 1_234_567,
      limit_usd: 12.5,
      reserved_usd: 0.25,
      settled_usd: 1.234567,
      exhausted: false,
    });
    const list = (
      await f.app.inject({ method: 'GET', url: '/v1/campaigns?state=running', headers: auth(KEYS.read) })
    ).json() as { campaigns: { id: string }[] };
    expect(list.campaigns.map((c) => c.id)).toContain(id);
  });

  it('pause → paused, pause again is a no-op, resume → running, stop → stopped; a stopped campaign refuses resume and pause with 409', async () => {
    const state = async (action: string) => {
      const r = await post(f, `/v1/campaigns/${id}/${action}`, undefined);
      return [r.statusCode, r.statusCode < 300 ? r.json().campaign.state : r.json().error.code];
    };
    expect(await state('pause')).toEqual([200, 'paused']);
    expect(await state('pause')).toEqual([200, 'paused']);
    await f.setFlag(false);
    expect(await state('resume')).toEqual([503, 'paid_dispatch_disabled']);
    await f.setFlag(true);
    expect(await state('resume')).toEqual([200, 'running']);
    expect(await state('stop')).toEqual([200, 'stopped']);
    expect(await state('stop')).toEqual([200, 'stopped']);
    expect(await state('resume')).toEqual([409, 'conflict']);
    expect(await state('pause')).toEqual([409, 'conflict']);
    const stored = Campaign.parse(
      JSON.parse((await (await openKv(f.bus, f.bus.names.buckets.campaigns)).get(id))!.string()),
    );
    expect(stored.state).toBe('stopped');
    expect(stored.state_reason).toBe('stop by writer');
  });

  it('a campaign the duplicator completed refuses stop with 409', async () => {
    const kv = await openKv(f.bus, f.bus.names.buckets.campaigns);
    const ids: string[] = [];
    for await (const k of await kv.keys()) ids.push(k);
    const other = ids.find((k) => k !== id)!;
    const c = Campaign.parse(JSON.parse((await kv.get(other))!.string()));
    await kv.put(other, JSON.stringify({ ...c, state: 'completed', state_reason: 'max_items reached' }));
    const r = await post(f, `/v1/campaigns/${other}/stop`, undefined);
    expect([r.statusCode, r.json().error.code, r.json().error.details.state]).toEqual([409, 'conflict', 'completed']);
  });

  it('an unknown campaign is 404 not_found', async () => {
    const r = await f.app.inject({
      method: 'GET',
      url: '/v1/campaigns/cmp_0000000000000000',
      headers: auth(KEYS.read),
    });
    expect([r.statusCode, r.json().error.code]).toEqual([404, 'not_found']);
  });

  it('records an outcome on the campaign OBS subject (202), de-duplicates a retry (200), refuses one naming no item (400 item_hash)', async () => {
    const outcome = {
      campaign_id: id,
      item_hash: 'c'.repeat(64),
      arm_id: 'medium',
      result: 'pass',
      source: 'ci:unit-tests',
      closes_task: true,
    };
    const r1 = await post(f, '/v1/outcomes', outcome, KEYS.outcome);
    expect(r1.statusCode).toBe(202);
    expect(r1.json()).toMatchObject({ subject: f.bus.names.obsSubject(id), duplicate: false });
    const r2 = await post(f, '/v1/outcomes', outcome, KEYS.outcome);
    expect([r2.statusCode, r2.json().duplicate, r2.json().outcome_id]).toEqual([200, true, r1.json().outcome_id]);
    const msg = await f.bus.jsm.streams.getMessage(f.bus.names.streams.obs, {
      last_by_subj: f.bus.names.obsSubject(id),
    });
    const rec = OutcomeRecord.parse(msg!.json());
    expect(rec).toMatchObject({
      schema: 'shadow.outcome/v1',
      campaign_id: id,
      item_hash: 'c'.repeat(64),
      arm_id: 'medium',
      result: 'pass',
      score: 1,
      closes_task: true,
      envelope_id: null,
    });
    expect(msg!.header?.get('Nats-Msg-Id')).toBe(rec.outcome_id);
    const bad = await post(f, '/v1/outcomes', { result: 'fail', source: 'x' }, KEYS.outcome);
    expect([bad.statusCode, bad.json().error.details.issues[0].path]).toEqual([400, 'item_hash']);
    const unknown = await post(f, '/v1/outcomes', { ...outcome, campaign_id: 'cmp_ffffffffffffffff' }, KEYS.outcome);
    expect([unknown.statusCode, unknown.json().error.details.issues[0].path]).toEqual([404, 'campaign_id']);
  });

  it('PUT paid_dispatch by an admin key writes the flag with who and why', async () => {
    const r = await f.app.inject({
      method: 'PUT',
      url: '/v1/admin/flags/paid_dispatch',
      headers: { ...auth(KEYS.admin), 'content-type': 'application/json' },
      payload: { enabled: false, reason: 'incident 42' },
    });
    expect(r.statusCode).toBe(200);
    const stored = JSON.parse(
      (await (await openKv(f.bus, f.bus.names.buckets.flags)).get(FLAG_PAID_DISPATCH))!.string(),
    );
    expect(stored).toMatchObject({ enabled: false, updated_by: 'admin', reason: 'incident 42' });
    const g = await f.app.inject({ method: 'GET', url: '/v1/admin/flags/paid_dispatch', headers: auth(KEYS.read) });
    expect(g.json()).toMatchObject({ enabled: false, state: 'off' });
  });

  it('never writes an API key into the logs', () => {
    const text = f.logs.lines.join('\n');
    expect(f.logs.lines.length).toBeGreaterThan(10);
    for (const k of Object.values(KEYS)) expect(text).not.toContain(k);
  });
});
