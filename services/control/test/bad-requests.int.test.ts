import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, fixture, KEYS, validSpec, type Fixture } from '../testing/helpers.js';

// Each bad launch request is refused with the offending field named, and nothing is written:
// every key and revision of the campaigns, budget and flags buckets and the OBS message count
// are compared before and after. paid_dispatch is ON, so validation is the only thing refusing.

const base = validSpec();
const { max_cost_usd: _drop, ...noBudget } = base;
const twoMb = JSON.stringify({ ...base, name: 'x'.repeat(2 * 1024 * 1024) });

const TABLE: { name: string; body: string; contentType?: string; status: number; code: string; field: string }[] = [
  {
    name: 'missing budget',
    body: JSON.stringify(noBudget),
    status: 400,
    code: 'invalid_request',
    field: 'max_cost_usd',
  },
  {
    name: 'negative budget',
    body: JSON.stringify({ ...base, max_cost_usd: -5 }),
    status: 400,
    code: 'invalid_request',
    field: 'max_cost_usd',
  },
  {
    name: 'zero budget',
    body: JSON.stringify({ ...base, max_cost_usd: 0 }),
    status: 400,
    code: 'invalid_request',
    field: 'max_cost_usd',
  },
  {
    name: 'unknown provider id',
    body: JSON.stringify({ ...base, candidates: [{ id: 'medium', provider: 'not-allowlisted', model: 'm' }] }),
    status: 400,
    code: 'unknown_provider',
    field: 'candidates.0.provider',
  },
  {
    name: 'a URL where a provider id belongs',
    body: JSON.stringify({
      ...base,
      incumbent: { id: 'large', provider: 'https://api.openai.com/v1', model: 'gpt-4o' },
    }),
    status: 400,
    code: 'invalid_request',
    field: 'incumbent.provider',
  },
  {
    name: "a candidate id equal to the generated A-A arm's id",
    body: JSON.stringify({
      ...base,
      candidates: [
        {
          id: 'large__aa',
          provider: 'sim-openai',
          model: 'sim-medium',
          rate_card: { input: 0.4, cached_input: 0.1, output: 1.6 },
        },
      ],
    }),
    status: 400,
    code: 'invalid_request',
    field: 'candidates.0.id',
  },
  {
    name: 'an incumbent id in the A-A namespace',
    body: JSON.stringify({
      ...base,
      incumbent: {
        id: 'x__aa',
        provider: 'sim-openai',
        model: 'sim-large',
        rate_card: { input: 2.5, cached_input: 1.25, output: 10 },
      },
    }),
    status: 400,
    code: 'invalid_request',
    field: 'incumbent.id',
  },
  {
    name: 'max_items over 5,000',
    body: JSON.stringify({ ...base, max_items: 5001 }),
    status: 400,
    code: 'invalid_request',
    field: 'max_items',
  },
  {
    name: 'unknown top-level field',
    body: JSON.stringify({ ...base, budget_usd: 3 }),
    status: 400,
    code: 'invalid_request',
    field: 'budget_usd',
  },
  {
    name: 'unknown nested field (base_url on an arm)',
    body: JSON.stringify({
      ...base,
      candidates: [{ id: 'medium', provider: 'sim-openai', model: 'sim-medium', base_url: 'http://evil.example' }],
    }),
    status: 400,
    code: 'invalid_request',
    field: 'candidates.0.base_url',
  },
  {
    name: 'wrong type (max_items as a string)',
    body: JSON.stringify({ ...base, max_items: '200' }),
    status: 400,
    code: 'invalid_request',
    field: 'max_items',
  },
  {
    name: 'wrong type (call_types as a string)',
    body: JSON.stringify({ ...base, call_types: 'solve' }),
    status: 400,
    code: 'invalid_request',
    field: 'call_types',
  },
  {
    name: 'wrong type (dry_run as a string)',
    body: JSON.stringify({ ...base, dry_run: 'yes' }),
    status: 400,
    code: 'invalid_request',
    field: 'dry_run',
  },
  { name: 'a JSON array instead of an object', body: '[1,2]', status: 400, code: 'invalid_request', field: '(body)' },
  {
    name: 'non-JSON body',
    body: 'name=gsm8k&max_cost_usd=5',
    contentType: 'application/json',
    status: 400,
    code: 'invalid_json',
    field: '(body)',
  },
  // a body that is not declared JSON is refused for its media type, not blamed for its syntax
  {
    name: 'a text/plain body',
    body: 'launch it',
    contentType: 'text/plain',
    status: 415,
    code: 'unsupported_media_type',
    field: '(body)',
  },
  {
    name: 'a form post (curl -d without -H)',
    body: 'name=gsm8k&max_cost_usd=5',
    contentType: 'application/x-www-form-urlencoded',
    status: 415,
    code: 'unsupported_media_type',
    field: '(body)',
  },
  {
    name: 'valid JSON sent as text/plain',
    body: JSON.stringify(base),
    contentType: 'text/plain',
    status: 415,
    code: 'unsupported_media_type',
    field: '(body)',
  },
  {
    name: 'malformed JSON as application/json; charset=utf-8',
    body: '{"name":',
    contentType: 'application/json; charset=utf-8',
    status: 400,
    code: 'invalid_json',
    field: '(body)',
  },
  // 413, not 400: see services/control/README.md "Request size" — RFC 9110 §15.5.14, and the body is refused unread.
  { name: '2 MB body', body: twoMb, status: 413, code: 'payload_too_large', field: '(body)' },
];

describe('POST /v1/campaigns bad-request table', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture({ flag: true });
  });
  afterAll(async () => f.close());

  it('a valid spec in the same fixture launches (the table below fails only for its own reason)', async () => {
    const res = await f.app.inject({
      method: 'POST',
      url: '/v1/campaigns?dry_run=true',
      headers: { ...auth(KEYS.write), 'content-type': 'application/json' },
      payload: JSON.stringify(base),
    });
    expect(res.statusCode).toBe(200);
  });

  for (const row of TABLE) {
    it(`${row.name} → ${row.status} ${row.code} naming ${row.field}, KV unchanged`, async () => {
      const before = await f.snapshot();
      const res = await f.app.inject({
        method: 'POST',
        url: '/v1/campaigns',
        headers: { ...auth(KEYS.write), 'content-type': row.contentType ?? 'application/json' },
        payload: row.body,
      });
      expect(res.statusCode).toBe(row.status);
      const body = res.json() as {
        error: { code: string; message: string; details: { issues: { path: string; message: string }[] } };
      };
      expect(body.error.code).toBe(row.code);
      expect(body.error.details.issues.map((i) => i.path)).toContain(row.field);
      expect(await f.snapshot()).toEqual(before);
    });
  }

  it('the whole table wrote nothing: no campaign and no ledger exist', async () => {
    const snap = (await f.snapshot()) as Record<string, { values: number }>;
    expect(snap[f.bus.names.buckets.campaigns]!.values).toBe(0);
    expect(snap[f.bus.names.buckets.budget]!.values).toBe(0);
  });
});
