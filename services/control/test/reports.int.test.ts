import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObsMessage } from '@shadowplane/contracts';
import { ReportView } from '@shadowplane/contracts';
import { auth, fixture, KEYS, validSpec, type Fixture } from '../testing/helpers.js';
import { seedReport } from '../testing/seed.js';

describe('reports, dataset cards and the observations export', () => {
  let f: Fixture;
  let id = '';
  const get = (url: string, key: string = KEYS.read) => f.app.inject({ method: 'GET', url, headers: auth(key) });
  beforeAll(async () => {
    f = await fixture({ flag: true });
    id = (
      await f.app.inject({
        method: 'POST',
        url: '/v1/campaigns',
        headers: { ...auth(KEYS.write), 'content-type': 'application/json' },
        payload: validSpec(),
      })
    ).json().campaign.id;
  });
  afterAll(async () => f.close());

  it('answers 404 report_not_ready before the verdict service wrote anything, also when a provisional report is asked of no verdict service (no responders)', async () => {
    const r = await get(`/v1/campaigns/${id}/report`);
    expect([r.statusCode, r.json().error.code]).toEqual([404, 'report_not_ready']);
    const p = await get(`/v1/campaigns/${id}/report?provisional=true`);
    expect([p.statusCode, p.json().error.code]).toEqual([404, 'report_not_ready']);
  });

  it('serves the latest report as JSON, HTML and bundle, labelled provisional or final', async () => {
    await seedReport(f.bus, id, { provisional: true, verdictText: ['provisional'] });
    const prov = await get(`/v1/campaigns/${id}/report`);
    expect(prov.statusCode).toBe(200);
    expect(prov.headers['x-shadow-report-provisional']).toBe('true');
    expect(ReportView.parse(prov.json())).toMatchObject({
      provisional: true,
      report: { verdict_text: ['provisional'] },
    });

    const hash = await seedReport(f.bus, id, { provisional: false });
    const fin = ReportView.parse((await get(`/v1/campaigns/${id}/report?format=json`)).json());
    expect(fin.provisional).toBe(false);
    expect(fin.report_id).toMatch(/^[0-9a-f]{64}$/);
    // the run record of the run: campaign id/state and measured times, pointing at the report
    expect(fin.run_record_id).toMatch(/^[0-9a-f]{64}$/);
    expect(fin.run_record).toMatchObject({
      schema: 'shadow.run_record/v1',
      run_record_id: fin.run_record_id,
      report_id: fin.report_id,
      campaign_id: id,
      campaign_state: 'completed',
    });
    expect(fin.report).not.toHaveProperty('campaign_id');
    expect((await get(`/v1/campaigns/${id}/report`)).headers['x-shadow-run-record-id']).toBe(fin.run_record_id);
    const html = await get(`/v1/campaigns/${id}/report?format=html`);
    expect([html.statusCode, html.headers['content-type']]).toEqual([200, 'text/html; charset=utf-8']);
    expect(html.body).toContain(`report ${fin.report_id}`);
    const bundle = await get(`/v1/campaigns/${id}/report?format=bundle`);
    expect(bundle.json()).toMatchObject({
      schema: 'shadow.evidence_bundle/v1',
      report_id: fin.report_id,
      run_record_id: fin.run_record_id,
      campaign_id: id,
    });
    const bad = await get(`/v1/campaigns/${id}/report?format=xml`);
    expect([bad.statusCode, bad.json().error.details.issues[0].path]).toEqual([400, 'format']);

    const card = await get(`/v1/datasets/${hash}`);
    expect(card.json()).toMatchObject({
      schema: 'shadow.dataset_card/v1',
      dataset_hash: hash,
      unique_items: 40,
      total_weight: 43,
    });
    expect((await get(`/v1/datasets/${'0'.repeat(64)}`)).statusCode).toBe(404);
    expect((await get('/v1/datasets/not-a-hash')).json().error.details.issues[0].path).toBe('hash');
  });

  it('exports the campaign OBS stream as NDJSON, one valid ObsMessage per line, in order', async () => {
    const items = ['1', '2', '3'].map((c) => c.repeat(64));
    for (const item_hash of items) {
      const r = await f.app.inject({
        method: 'POST',
        url: '/v1/outcomes',
        headers: { ...auth(KEYS.outcome), 'content-type': 'application/json' },
        payload: { campaign_id: id, item_hash, result: 'fail', source: 'ci' },
      });
      expect(r.statusCode).toBe(202);
    }
    const res = await get(`/v1/campaigns/${id}/observations`);
    expect([res.statusCode, res.headers['content-type']]).toEqual([200, 'application/x-ndjson']);
    const lines = res.body
      .trim()
      .split('\n')
      .map((l) => ObsMessage.parse(JSON.parse(l)));
    expect(lines.map((m) => (m.schema === 'shadow.outcome/v1' ? m.item_hash : null))).toEqual(items);
  });

  it('exporting outputs needs the admin scope and a configured keyring', async () => {
    const noAdmin = await get(`/v1/campaigns/${id}/observations?outputs=1`);
    expect([noAdmin.statusCode, noAdmin.json().error.code]).toEqual([403, 'forbidden']);
    const noKeyring = await get(`/v1/campaigns/${id}/observations?outputs=1`, KEYS.all);
    expect([noKeyring.statusCode, noKeyring.json().error.details.issues[0].path]).toEqual([400, 'outputs']);
  });
});
