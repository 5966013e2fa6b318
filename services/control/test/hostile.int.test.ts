import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, fixture, KEYS, validSpec, type Fixture } from '../testing/helpers.js';

// Hostile input against the control API: every answer is a 4xx in our `{error:{code,message,
// details}}` shape naming the field, nothing is written, and nothing reaches the prototype chain.

type ErrBody = { error: { code: string; message: string; details?: { issues?: { path: string }[] } } };
const base = validSpec();
const H = { ...auth(KEYS.all), 'content-type': 'application/json' };

describe('control API under hostile input', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture({ flag: true });
  });
  afterAll(async () => f.close());

  const refused = async (
    o: { method?: 'GET' | 'POST'; url?: string; payload?: string },
    status: number,
    code: string,
    field: string,
  ) => {
    const before = await f.snapshot();
    const res = await f.app.inject({
      method: o.method ?? 'POST',
      url: o.url ?? '/v1/campaigns',
      headers: H,
      ...(o.payload === undefined ? {} : { payload: o.payload }),
    });
    expect(res.statusCode, res.body).toBe(status);
    const body = res.json() as ErrBody;
    expect(body.error.code).toBe(code);
    expect(body.error.details?.issues?.map((i) => i.path)).toContain(field);
    expect(await f.snapshot()).toEqual(before);
  };

  it('a path parameter longer than the router allows → 400 invalid_request naming id (not fastify’s bare 414 shape)', async () => {
    await refused({ method: 'GET', url: `/v1/campaigns/cmp_${'a'.repeat(10_000)}` }, 400, 'invalid_request', 'id');
    await refused({ url: `/v1/campaigns/cmp_${'a'.repeat(500)}/stop` }, 400, 'invalid_request', 'id');
  });

  it('a malformed percent-encoding in a path parameter → 400 invalid_request naming it', async () => {
    await refused({ method: 'GET', url: '/v1/campaigns/%zz' }, 400, 'invalid_request', 'id');
    await refused({ method: 'GET', url: '/v1/datasets/%E0%A4%A' }, 400, 'invalid_request', 'hash');
  });

  it('a call type listed twice → 400 naming the second one', async () => {
    await refused(
      { payload: JSON.stringify({ ...base, call_types: ['solve', 'chat', 'solve'] }) },
      400,
      'invalid_request',
      'call_types.2',
    );
  });

  it('a regex scorer that does not compile → 400 naming its pattern (it would score every item null)', async () => {
    await refused(
      {
        payload: JSON.stringify({
          ...base,
          scorers: [{ kind: 'expectations' }, { kind: 'regex', pattern: '(unclosed' }],
        }),
      },
      400,
      'invalid_request',
      'scorers.1.pattern',
    );
    const ok = await f.app.inject({
      method: 'POST',
      url: '/v1/campaigns?dry_run=true',
      headers: H,
      payload: JSON.stringify({ ...base, scorers: [{ kind: 'regex', pattern: '#### \\d+' }] }),
    });
    expect(ok.statusCode).toBe(200);
  });

  it('a rate-card price above $1 per token → 400 naming it (at 1e300 the worst case is not even finite)', async () => {
    await refused(
      {
        payload: JSON.stringify({
          ...base,
          incumbent: { ...(base['incumbent'] as object), rate_card: { input: 1e300, output: 10 } },
        }),
      },
      400,
      'invalid_request',
      'incumbent.rate_card.input',
    );
    await refused(
      {
        url: '/v1/campaigns?dry_run=true',
        payload: JSON.stringify({
          ...base,
          candidates: [{ id: 'm', provider: 'sim-openai', model: 'm', rate_card: { input: 1, output: 1_000_001 } }],
        }),
      },
      400,
      'invalid_request',
      'candidates.0.rate_card.output',
    );
  });

  it('malformed JSON variants → 400 invalid_json; __proto__ / constructor keys → 400 unknown field, no pollution', async () => {
    const j = JSON.stringify(base);
    await refused({ payload: `\uFEFF${j}` }, 400, 'invalid_json', '(body)');
    await refused({ payload: `${j}xx` }, 400, 'invalid_json', '(body)');
    await refused({ payload: j.replace('"max_cost_usd":12.5', '"max_cost_usd":NaN') }, 400, 'invalid_json', '(body)');
    await refused(
      { payload: j.replace('"max_cost_usd":12.5', '"max_cost_usd":1e400') },
      400,
      'invalid_request',
      'max_cost_usd',
    );
    await refused({ payload: '['.repeat(100_000) + ']'.repeat(100_000) }, 400, 'invalid_request', '(body)');
    await refused({ payload: j.replace('{', '{"__proto__":{"polluted":1},') }, 400, 'invalid_request', '__proto__');
    await refused(
      { payload: j.replace('{', '{"constructor":{"prototype":{"polluted":1}},') },
      400,
      'invalid_request',
      'constructor',
    );
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('concurrent pause/resume: each 200 shows the state its own change produced, never a later one', async () => {
    const launched = await f.app.inject({
      method: 'POST',
      url: '/v1/campaigns',
      headers: H,
      payload: JSON.stringify(base),
    });
    expect(launched.statusCode).toBe(201);
    const id = (launched.json() as { campaign: { id: string } }).campaign.id;
    const acts = Array.from({ length: 16 }, (_, i) => (i % 2 ? 'pause' : 'resume'));
    const rs = await Promise.all(
      acts.map((a) => f.app.inject({ method: 'POST', url: `/v1/campaigns/${id}/${a}`, headers: H })),
    );
    rs.forEach((r, i) => {
      expect(r.statusCode).toBe(200);
      expect((r.json() as { campaign: { state: string } }).campaign.state).toBe(
        acts[i] === 'pause' ? 'paused' : 'running',
      );
    });
    const stop = await Promise.all(
      ['stop', 'resume', 'pause', 'stop'].map((a) =>
        f.app.inject({ method: 'POST', url: `/v1/campaigns/${id}/${a}`, headers: H }),
      ),
    );
    for (const r of stop) {
      expect([200, 409]).toContain(r.statusCode);
      if (r.statusCode === 409) expect((r.json() as ErrBody).error.code).toBe('conflict');
    }
    const after = await f.app.inject({ method: 'GET', url: `/v1/campaigns/${id}`, headers: H });
    expect((after.json() as { campaign: { state: string } }).campaign.state).toBe('stopped');
  });
});
