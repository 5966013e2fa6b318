import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES, type RouteDef } from '../src/index.js';
import { chatEnvelope } from '@shadowplane/testkit';
import { auth, fixture, KEYS, validSpec, type Fixture } from '../testing/helpers.js';
import { seedReport } from '../testing/seed.js';

// Keys for the scope matrix: for each scope, a key holding ONLY that scope (right key) and a key
// holding EVERY OTHER scope (wrong key) — so a 403 cannot come from a missing unrelated scope.
const SCOPE_KEY: Record<string, string> = {
  'campaign:read': KEYS.read,
  'campaign:write': KEYS.write,
  'outcome:write': KEYS.outcome,
  admin: KEYS.admin,
};
const ALL_BUT: Record<string, string> = {
  'campaign:read': KEYS.allButRead,
  'campaign:write': KEYS.allButWrite,
  'outcome:write': KEYS.allButOutcome,
  admin: KEYS.allButAdmin,
};

interface Ctx {
  campaignId: string;
  datasetHash: string;
  /** a stopped campaign with a final report: what a baseline pin needs */
  baselineId: string;
}

function request(r: RouteDef, ctx: Ctx): { url: string; payload?: string } {
  const url = r.path
    .replace('{id}', ctx.campaignId)
    .replace('{hash}', ctx.datasetHash)
    .replace('{suite}', String(validSpec().suite));
  if (r.operationId === 'pinBaseline') return { url, payload: JSON.stringify({ campaign_id: ctx.baselineId }) };
  if (r.operationId === 'createCampaign') return { url, payload: JSON.stringify(validSpec()) };
  if (r.operationId === 'addOutcome')
    return {
      url,
      payload: JSON.stringify({
        campaign_id: ctx.campaignId,
        item_hash: 'd'.repeat(64),
        result: 'score',
        score: 0.5,
        source: `matrix-${Math.random()}`,
      }),
    };
  if (r.operationId === 'setPaidDispatch') return { url, payload: JSON.stringify({ enabled: true }) };
  return { url };
}

describe('control API routes', () => {
  let f: Fixture;
  let ctx: Ctx;
  let doc: {
    paths: Record<
      string,
      Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>
    >;
  };
  beforeAll(async () => {
    f = await fixture({ flag: true });
    const launched = await f.app.inject({
      method: 'POST',
      url: '/v1/campaigns',
      headers: { ...auth(KEYS.all), 'content-type': 'application/json' },
      payload: validSpec(),
    });
    const campaignId = launched.json().campaign.id as string;
    const baselineId = (
      await f.app.inject({
        method: 'POST',
        url: '/v1/campaigns',
        headers: { ...auth(KEYS.all), 'content-type': 'application/json' },
        payload: validSpec({ name: 'baseline' }),
      })
    ).json().campaign.id as string;
    await f.app.inject({ method: 'POST', url: `/v1/campaigns/${baselineId}/stop`, headers: auth(KEYS.all) });
    await seedReport(f.bus, baselineId, { provisional: false });
    ctx = { campaignId, datasetHash: await seedReport(f.bus, campaignId), baselineId };
    // one capture, so the suite routes have a suite to answer for
    const e = chatEnvelope('gsm8k', 'solve', 'What is 6 times 7?');
    await f.bus.js.publish(f.bus.names.captureSubject('gsm8k', 'solve'), JSON.stringify(e), { msgID: e.envelope_id });
    doc = (await f.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  });
  afterAll(async () => f.close());

  it('serves an OpenAPI 3.1 document that validates (@seriousme/openapi-schema-validator)', async () => {
    const res = await new Validator().validate(doc as never);
    expect(res.errors ?? []).toEqual([]);
    expect(res.valid).toBe(true);
    expect((doc as unknown as { openapi: string }).openapi).toBe('3.1.0');
  });

  it('documents exactly the routes the server serves', () => {
    const documented = Object.entries(doc.paths)
      .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
      .sort();
    expect(documented).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
    expect(documented.length).toBe(20);
  });

  it('every documented route answers 2xx with a body valid against its documented schema', async () => {
    const ajv = new Ajv2020.default({ strict: false, allErrors: true });
    addFormats.default(ajv);
    // stop last (it ends the campaign other routes use); pin a baseline before reading it
    const rank = (r: RouteDef) => (r.operationId === 'stopCampaign' ? 2 : r.operationId === 'getBaseline' ? 1 : 0);
    const order = [...ROUTES].sort((a, b) => rank(a) - rank(b));
    for (const r of order) {
      const { url, payload } = request(r, ctx);
      const res = await f.app.inject({
        method: r.method,
        url,
        headers: { ...auth(KEYS.all), ...(payload ? { 'content-type': 'application/json' } : {}) },
        ...(payload ? { payload } : {}),
      });
      expect.soft(res.statusCode, `${r.method} ${r.path}: ${res.body.slice(0, 300)}`).toBeGreaterThanOrEqual(200);
      expect.soft(res.statusCode, `${r.method} ${r.path}: ${res.body.slice(0, 300)}`).toBeLessThan(300);
      const documented = doc.paths[r.path]![r.method.toLowerCase()]!.responses[String(res.statusCode)];
      expect.soft(documented, `${r.method} ${r.path} ${res.statusCode} is documented`).toBeDefined();
      const schema = documented?.content?.['application/json']?.schema;
      if (schema && String(res.headers['content-type']).startsWith('application/json')) {
        const ok = ajv.validate(schema, res.json());
        expect.soft(ok, `${r.method} ${r.path}: ${ajv.errorsText()}`).toBe(true);
      }
    }
  });

  it('types every format of the report route: the JSON view, the bundle (application/json) and the HTML page', async () => {
    const ajv = new Ajv2020.default({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const content = doc.paths['/v1/campaigns/{id}/report']!.get!.responses['200']!.content!;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'text/html']);
    for (const format of ['json', 'bundle']) {
      const res = await f.app.inject({
        method: 'GET',
        url: `/v1/campaigns/${ctx.campaignId}/report?format=${format}`,
        headers: auth(KEYS.all),
      });
      expect(res.statusCode).toBe(200);
      expect(ajv.validate(content['application/json']!.schema, res.json()), `${format}: ${ajv.errorsText()}`).toBe(
        true,
      );
    }
    // the bundle is not accepted as the JSON view and vice versa: the union is not vacuous
    const view = (
      await f.app.inject({ method: 'GET', url: `/v1/campaigns/${ctx.campaignId}/report`, headers: auth(KEYS.all) })
    ).json() as Record<string, unknown>;
    expect(ajv.validate(content['application/json']!.schema, { ...view, report: { schema: 'nope' } })).toBe(false);
    const html = await f.app.inject({
      method: 'GET',
      url: `/v1/campaigns/${ctx.campaignId}/report?format=html`,
      headers: auth(KEYS.all),
    });
    expect(String(html.headers['content-type'])).toMatch(/^text\/html/);
    // every route with a body documents the 415
    for (const r of ROUTES.filter((x) => x.body))
      expect(doc.paths[r.path]![r.method.toLowerCase()]!.responses['415'], r.operationId).toBeDefined();
  });

  it('answers 405 method_not_allowed with Allow for a known path and 404 not_found for an unknown one', async () => {
    const r = await f.app.inject({ method: 'DELETE', url: `/v1/campaigns/${ctx.campaignId}`, headers: auth(KEYS.all) });
    expect([r.statusCode, r.json().error.code, r.headers['allow']]).toEqual([405, 'method_not_allowed', 'GET']);
    const n = await f.app.inject({ method: 'GET', url: '/v1/nothing', headers: auth(KEYS.all) });
    expect([n.statusCode, n.json().error.code]).toEqual([404, 'not_found']);
  });

  describe('scope matrix: every route × {no key, wrong-scope key, right key}', () => {
    beforeAll(async () => {
      // a fresh running campaign, so pause → resume → stop (route order) each succeed with the right key
      const launched = await f.app.inject({
        method: 'POST',
        url: '/v1/campaigns',
        headers: { ...auth(KEYS.all), 'content-type': 'application/json' },
        payload: validSpec({ name: 'matrix' }),
      });
      ctx = { ...ctx, campaignId: launched.json().campaign.id as string };
      await seedReport(f.bus, ctx.campaignId);
    });
    for (const r of ROUTES) {
      it(`${r.method} ${r.path} (${r.scope ?? 'public'})`, async () => {
        const { url, payload } = request(r, ctx);
        const send = (headers: Record<string, string>) =>
          f.app.inject({
            method: r.method,
            url,
            headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) },
            ...(payload ? { payload } : {}),
          });
        if (r.scope === null) {
          expect((await send({})).statusCode).toBe(200);
          return;
        }
        const none = await send({});
        expect([none.statusCode, none.json().error.code]).toEqual([401, 'unauthenticated']);
        expect(none.headers['www-authenticate']).toMatch(/^Bearer realm="shadowplane"/);
        const unknown = await send(auth('sp_not_a_key_at_all_000000000000000'));
        expect([unknown.statusCode, unknown.headers['www-authenticate']]).toEqual([
          401,
          'Bearer realm="shadowplane", error="invalid_token"',
        ]);
        const wrong = await send(auth(ALL_BUT[r.scope]!));
        expect([wrong.statusCode, wrong.json().error.code, wrong.json().error.details.required_scope]).toEqual([
          403,
          'forbidden',
          r.scope,
        ]);
        const right = await send(auth(SCOPE_KEY[r.scope]!));
        expect(right.statusCode, right.body.slice(0, 300)).toBeGreaterThanOrEqual(200);
        expect(right.statusCode).toBeLessThan(300);
      });
    }
  });
});
