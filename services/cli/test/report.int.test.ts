import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldReport } from '@shadowplane/evidence';
import { writeReport } from '@shadowplane/reports';
import { auth, fixture, KEYS, validSpec, type Fixture } from '@shadowplane/control/testing';
// Synthetic OBS messages with a known ground truth (GSM8K gold answers), from the evidence lib's tests.
import { synthCampaign, synthSpec } from '@shadowplane/testkit';
import { main } from '../src/index.js';

class Sink extends Writable {
  text = '';
  override _write(c: Buffer, _e: BufferEncoding, cb: () => void) {
    this.text += c.toString();
    cb();
  }
}

// A real report folded by libs/evidence from 300 synthetic items: candidate `same` answers exactly
// as the incumbent (non-inferior by construction, cheaper by its rate card), candidate `bad` is
// right 40% of the time against the incumbent's ~90% (inferior far beyond the 2 pp margin).
describe('shadowctl report and verify on a real folded report', () => {
  let f: Fixture;
  let url = '';
  let dir = '';
  let id = '';
  const run = async (...args: string[]) => {
    const out = new Sink();
    const err = new Sink();
    const code = await main(['--url', url, '--api-key', KEYS.read, ...args], {
      out: out as unknown as NodeJS.WriteStream,
      err: err as unknown as NodeJS.WriteStream,
    });
    return { code, out: out.text, err: err.text };
  };
  beforeAll(async () => {
    f = await fixture({ flag: true });
    url = await f.app.listen({ host: '127.0.0.1', port: 0 });
    dir = mkdtempSync(join(tmpdir(), 'shadowctl-report-'));
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

  it('before any report: exit 1 with report_not_ready', async () => {
    const r = await run('report', id);
    expect([r.code, r.err]).toEqual([1, expect.stringMatching(/report_not_ready/)]);
  });

  it('--gate: exit 0 for the candidate that passes, 2 for the one that fails and for the whole report; --html and --bundle write the files; verify accepts the bundle and rejects a tampered one', async () => {
    const folded = foldReport({
      campaign: { campaign_id: id, spec: synthSpec(['same', 'bad']), run_index: 1, state: 'completed' },
      messages: synthCampaign(id, 300, 0.9, { same: 'same', bad: 0.4 }),
      provisional: false,
    });
    await writeReport(f.bus, {
      campaignId: id,
      reportId: folded.reportId,
      reportJson: folded.reportJson,
      runRecordId: folded.runRecordId,
      runRecordJson: folded.runRecordJson,
      provisional: false,
      html: '<!doctype html><p>report</p>',
      bundle: folded.bundle,
      datasetCards: folded.datasetCards,
    });

    const same = await run('report', id, '--gate', '--candidate', 'same');
    expect(same.code, same.out + same.err).toBe(0);
    expect(same.out).toMatch(/gate: PASS/);
    // the run record of the run is named beside the reproducible report id (synth times: 2026-11-01)
    expect(same.out).toContain(
      `report ${folded.reportId}\nrun record ${folded.runRecordId}: campaign ${id} completed, window 2026-11-01T12:00:00.000Z → `,
    );
    const bad = await run('report', id, '--gate', '--candidate', 'bad');
    expect(bad.code).toBe(2);
    expect(bad.out).toMatch(/gate: FAIL — math\/bad: fail/);
    expect((await run('report', id, '--gate')).code).toBe(2);
    const json = JSON.parse((await run('--json', 'report', id, '--gate', '--candidate', 'same')).out);
    expect(json).toMatchObject({
      report_id: folded.reportId,
      provisional: false,
      gate: { pass: true },
      run_record_id: folded.runRecordId,
      run_record: { campaign_id: id, report_id: folded.reportId },
    });

    const html = join(dir, 'r.html');
    const bundle = join(dir, 'b.json');
    expect((await run('report', id, '--html', html, '--bundle', bundle)).code).toBe(0);
    expect(readFileSync(html, 'utf8')).toBe('<!doctype html><p>report</p>');
    const verified = await run('verify', bundle);
    expect([verified.code, verified.out], verified.out).toEqual([0, expect.stringMatching(/OK/)]);

    // tamper: change one recorded quality delta point in the bundle; verification must name a problem
    const text = readFileSync(bundle, 'utf8');
    const tampered = text.replace(/"point":(-?[0-9.e-]+)/, (_m, v: string) => `"point":${Number(v) + 0.25}`);
    expect(tampered).not.toBe(text);
    writeFileSync(join(dir, 't.json'), tampered);
    const rejected = await run('verify', join(dir, 't.json'));
    expect(rejected.code).toBe(2);
    expect(rejected.out).toMatch(/problem/);
    expect((await run('verify', join(dir, 'missing.json'))).code).toBe(66);
  });
});
