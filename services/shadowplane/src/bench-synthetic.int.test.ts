import { DeliverPolicy } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBenchStack, until, type BenchStack } from '../test/bench-stack.js';
import { Envelope } from '@shadowplane/contracts';
import { KEYS } from '@shadowplane/control/testing';

// The synthetic builder over a real nats-server, the control API, a duplicator worker, the verdict
// service and provider-sim: refusals publish nothing → a template × rows → envelopes of traffic
// class `synthetic` (identical expansions collapse with weight) → a card whose census is
// synthetic, never fit-eligible → a re-freeze of the same spec, even after the stream's
// de-duplication window, publishes nothing and gives the same hash → a frozen run that admits the
// class runs every item, references scored; the cartesian-product form on a second call type.

const SUITE = 'synth';
const CT = 'math';

// ten (a, b) pairs; the reference is their product, written out here rather than computed by a template
const PAIRS = Array.from({ length: 10 }, (_, i) => [i + 2, i + 9] as const);
const rows = [...PAIRS.map(([a, b]) => ({ a, b, answer: a * b })), { a: 2, b: 9, answer: 18 }];
const mathSpec = {
  kind: 'synthetic',
  call_type: CT,
  request: {
    model: 'gpt-prod',
    messages: [{ role: 'user', content: 'Synthetic item: what is {{a}} times {{b}}?' }],
    max_tokens: 64,
  },
  reference: { kind: 'numeric', value: '{{answer}}' },
  rows,
};

describe('the synthetic builder end to end', () => {
  let stack: BenchStack;
  const req: BenchStack['req'] = (...a) => stack.req(...a);
  const freeze = (builder: object, extra: object = {}) =>
    req('POST', `/v1/suites/${SUITE}/freeze`, KEYS.write, { builder, ...extra });
  /** Every envelope the CAPTURE stream holds on one call type's subject, with its sequence. */
  const stored = async (ct: string) => {
    const consumer = await stack.f.bus.js.consumers.get(stack.f.bus.names.streams.capture, {
      filter_subjects: stack.f.bus.names.captureSubject(SUITE, ct),
      deliver_policy: DeliverPolicy.All,
    });
    const out: { seq: number; env: Envelope }[] = [];
    try {
      const info = await consumer.info();
      let left = info.num_pending;
      while (left > 0) {
        for await (const m of await consumer.fetch({ max_messages: left, expires: 5000 })) {
          out.push({ seq: m.seq, env: Envelope.parse(m.json()) });
          left = m.info.pending;
          if (left === 0) break;
        }
      }
    } finally {
      await consumer.delete().catch(() => undefined);
    }
    return out;
  };

  beforeAll(async () => {
    stack = await startBenchStack('synth');
  });
  afterAll(async () => stack?.close());

  it('refuses bad templates without publishing, expands rows into weighted synthetic items, re-freezes as a no-op, runs them', async () => {
    // refusals name the field and publish nothing
    const over = await freeze(mathSpec, { max_items: 10 });
    expect([over.statusCode, over.json().error.details.issues[0].path]).toEqual([400, 'builder.rows']);
    expect(over.json().error.details.issues[0].message).toMatch(/expands to 11 requests, more than max_items 10/);
    const unknown = await freeze({ ...mathSpec, request: { ...mathSpec.request, model: '{{model}}' } });
    expect([unknown.statusCode, unknown.json().error.details.issues[0]]).toEqual([
      400,
      { path: 'builder.request.model', message: 'unknown variable {{model}}: no row binds it' },
    ]);
    const unused = await freeze({ ...mathSpec, reference: undefined });
    expect([unused.statusCode, unused.json().error.details.issues[0].path]).toEqual([400, 'builder.rows.0.answer']);
    const section = await freeze({ ...mathSpec, reference: { kind: 'exact', value: '{{#answer}}x{{/answer}}' } });
    expect([section.statusCode, section.json().error.details.issues[0].path]).toEqual([400, 'builder.reference.value']);
    expect(await stored(CT)).toEqual([]);

    // 11 rows, the last repeating the first: 10 items, weight 11
    const frozen = await freeze(mathSpec);
    expect(frozen.statusCode).toBe(201);
    const ds = frozen.json().datasets[0];
    expect(frozen.json().datasets).toHaveLength(1);
    expect(ds.card).toMatchObject({
      call_type: CT,
      unique_items: 10,
      total_weight: 11,
      duplicated_items: 1,
      census: { synthetic: { items: 10, weight: 11 } },
      traffic_classes: { synthetic: 10 },
      strata: { numeric: 10 },
      exclusion_counts: {},
      builder: { kind: 'synthetic', call_type: CT, api: 'openai.chat', expansion: 'rows', expanded_items: 11 },
    });
    expect(ds.card.builder.variables).toEqual(['a', 'answer', 'b']);
    expect(ds.card.builder.spec_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(ds.card.census.production).toBeUndefined();
    expect(ds.card.fit_eligibility.eligible).toBe(false);
    expect(ds.card.fit_eligibility.reasons).toContain('census_not_production');

    // the stream holds one envelope per expansion: traffic class synthetic, the expanded request and reference
    const envs = await stored(CT);
    expect(envs).toHaveLength(11);
    for (const { env: e } of envs)
      expect(e).toMatchObject({ traffic_class: 'synthetic', served: null, suite: SUITE, call_type: CT });
    const texts = envs.map(({ env: e }) => [
      (e.request.body as { messages: { content: string }[] }).messages[0]!.content,
      e.expectations,
    ]);
    expect(texts).toEqual(
      rows.map((r) => [`Synthetic item: what is ${r.a} times ${r.b}?`, [{ kind: 'numeric', value: r.answer }]]),
    );

    // the same spec again: nothing published, the same dataset, nothing written
    const again = await freeze(mathSpec);
    expect(again.statusCode).toBe(200);
    expect(again.json().datasets[0]).toMatchObject({ dataset_hash: ds.dataset_hash, created: false });
    // … also once the stream has forgotten the message ids (its de-duplication window shrunk and
    // passed: a probe id publishes twice), because the freeze finds its envelopes in the stream
    const si = await stack.f.bus.jsm.streams.info(stack.f.bus.names.streams.capture);
    await stack.f.bus.jsm.streams.update(stack.f.bus.names.streams.capture, {
      ...si.config,
      duplicate_window: 100_000_000,
    });
    const probeSubject = stack.f.bus.names.captureSubject('probe', 'x');
    await stack.f.bus.js.publish(probeSubject, '{}', { msgID: 'probe' });
    await until('the de-duplication window to pass', async () => {
      const ack = await stack.f.bus.js.publish(probeSubject, '{}', { msgID: 'probe' });
      return !ack.duplicate;
    });
    const later = await freeze(mathSpec);
    expect(later.statusCode).toBe(200);
    expect(later.json().datasets[0]).toMatchObject({ dataset_hash: ds.dataset_hash, created: false });
    expect((await stored(CT)).map((x) => x.seq)).toEqual(envs.map((x) => x.seq));

    // a from_filter freeze of production only leaves the synthetic captures out, and says so
    const prodOnly = await freeze({ kind: 'from_filter', filter: { traffic_classes: ['production'] } });
    expect(prodOnly.statusCode).toBe(201);
    const po = prodOnly.json().datasets.find((d: { call_type: string }) => d.call_type === CT);
    expect([po.card.unique_items, po.card.filtered_out]).toEqual([0, { 'traffic_class:synthetic': 11 }]);

    // the cartesian product on a second call type: 3 × 2 expansions, the last variable fastest
    const geo = await freeze({
      kind: 'synthetic',
      call_type: 'geo',
      request: {
        model: 'gpt-prod',
        messages: [{ role: 'user', content: 'In one word, the capital of {{country}}? ({{style}})' }],
      },
      reference: { kind: 'regex', value: '{{capital}}' },
      product: { country: ['France'], capital: ['Paris'], style: ['terse', 'formal'] },
    });
    expect(geo.statusCode).toBe(201);
    expect(geo.json().datasets[0].card).toMatchObject({
      call_type: 'geo',
      unique_items: 2,
      total_weight: 2,
      census: { synthetic: { items: 2, weight: 2 } },
      builder: { expansion: 'product', expanded_items: 2, variables: ['capital', 'country', 'style'] },
    });
    expect((await stored('geo')).map((x) => (x.env.request.body as any).messages[0].content)).toEqual([
      'In one word, the capital of France? (terse)',
      'In one word, the capital of France? (formal)',
    ]);

    // a frozen run must admit the synthetic class; then it dispatches every item, weights kept
    const spec = (extra: object = {}) => ({
      name: 'synthetic run',
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
    const notAdmitted = await req('POST', '/v1/campaigns', KEYS.write, spec());
    expect([notAdmitted.statusCode, notAdmitted.json().error.details.issues[0].path]).toEqual([400, 'traffic_classes']);
    const run = await req('POST', '/v1/campaigns', KEYS.write, spec({ traffic_classes: ['synthetic'] }));
    expect(run.statusCode).toBe(201);
    const id: string = run.json().campaign.id;
    const rep = await stack.finalReport(id, KEYS.read);
    const card = rep.report.call_types[0].dataset_card;
    expect(card).toMatchObject({ dataset_hash: ds.dataset_hash, unique_items: 10, total_weight: 11 });
    expect(card.traffic_classes).toEqual({ synthetic: 10 });
    expect(card.strata).toEqual({ numeric: 10 });
  }, 240_000);
});
