import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openKv } from '@shadowplane/bus';
import { Campaign, contentHash, StoredCampaignSpec } from '@shadowplane/contracts';
import { auth, fixture, KEYS, validSpec, type Fixture } from '../testing/helpers.js';

// Patterns from requests are RE2 (linear-time matching): the control API refuses at intake what
// RE2 cannot compile, naming the field, and still serves campaigns stored before that rule.

type ErrBody = { error: { code: string; details?: { issues?: { path: string; message: string }[] } } };
const H = { ...auth(KEYS.all), 'content-type': 'application/json' };
const RULE = 'RE2 syntax: no backreferences or lookaround';

describe('regex patterns at the control API', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture({ flag: true });
  });
  afterAll(async () => f.close());

  const refused = async (url: string, payload: unknown, field: string) => {
    const before = await f.snapshot();
    const res = await f.app.inject({ method: 'POST', url, headers: H, payload: JSON.stringify(payload) });
    expect(res.statusCode, res.body).toBe(400);
    const body = res.json() as ErrBody;
    expect(body.error.code).toBe('invalid_request');
    const issue = body.error.details?.issues?.find((i) => i.path === field);
    expect(issue, res.body).toBeDefined();
    expect(await f.snapshot()).toEqual(before);
    return issue!.message;
  };

  it('a regex scorer with a lookahead → 400 naming its pattern, saying the rule (launch and dry run)', async () => {
    const spec = validSpec({ scorers: [{ kind: 'expectations' }, { kind: 'regex', pattern: '#### (?=\\d)' }] });
    expect(await refused('/v1/campaigns', spec, 'scorers.1.pattern')).toContain(RULE);
    expect(await refused('/v1/campaigns?dry_run=true', spec, 'scorers.1.pattern')).toContain(RULE);
  });

  it('a spec regex expectation with a backreference or over the program limit → 400 naming its value', async () => {
    const spec = (value: string) => validSpec({ expectations: [{ kind: 'regex', value }] });
    expect(await refused('/v1/campaigns', spec('(\\d)\\1'), 'expectations.0.value')).toContain(RULE);
    expect(await refused('/v1/campaigns', spec('\\d{1,999}'), 'expectations.0.value')).toContain('RE2 instructions');
  });

  it('an imported item whose reference has a lookbehind → 400 naming it; nothing is published', async () => {
    const item = {
      call_type: 'solve',
      request: { model: 'm', messages: [{ role: 'user', content: 'q' }] },
      reference: { kind: 'regex', value: '(?<=answer: )42' },
    };
    const msg = await refused(
      '/v1/suites/gsm8k/freeze',
      { builder: { kind: 'import', items: [item] } },
      'builder.items.0.reference.value',
    );
    expect(msg).toContain(RULE);
    const capture = await f.bus.jsm.streams.info(f.bus.names.streams.capture);
    expect(capture.state.messages).toBe(0);
  });

  it('a campaign stored with such patterns (launched under JavaScript syntax) is still read, listed and stopped', async () => {
    const spec = StoredCampaignSpec.parse(
      validSpec({
        scorers: [{ kind: 'expectations' }, { kind: 'regex', pattern: 'x(?!y)' }],
        expectations: [{ kind: 'regex', value: '(a)\\1' }],
      }),
    );
    const id = 'cmp_00000000000000aa';
    const now = new Date().toISOString();
    const record = Campaign.parse({
      schema: 'shadow.campaign/v1',
      id,
      spec,
      spec_hash: contentHash(spec),
      comparison_key: 'k',
      run_index: 1,
      state: 'running',
      state_reason: null,
      created_at: now,
      updated_at: now,
    });
    await (await openKv(f.bus, f.bus.names.buckets.campaigns)).put(id, JSON.stringify(record));
    const got = await f.app.inject({ method: 'GET', url: `/v1/campaigns/${id}`, headers: H });
    expect(got.statusCode, got.body).toBe(200);
    expect(got.json().campaign.spec.scorers[1]).toEqual({ kind: 'regex', pattern: 'x(?!y)' });
    const list = await f.app.inject({ method: 'GET', url: '/v1/campaigns', headers: H });
    expect((list.json() as { campaigns: { id: string }[] }).campaigns.map((c) => c.id)).toContain(id);
    const stop = await f.app.inject({ method: 'POST', url: `/v1/campaigns/${id}/stop`, headers: H, payload: '{}' });
    expect(stop.statusCode, stop.body).toBe(200);
    expect(stop.json().campaign.state).toBe('stopped');
  });
});
