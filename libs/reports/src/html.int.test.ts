import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObsMessage } from '@shadowplane/contracts';
import { foldReport } from '@shadowplane/evidence';
import { renderReportHtml, SKEW_WARNING_MS } from './index.js';
// the evidence library's synthetic campaigns: known ground truth, shared rather than copied
import { synthCampaign, synthObservation, synthSpec } from '@shadowplane/testkit';

const CHROMIUM = '/usr/bin/chromium';
const CID = 'cmp_feedfacecafe0001';
const OUT = new URL('../../../test-artifacts/', import.meta.url);

async function open(browser: Browser, html: string, name: string): Promise<Page> {
  mkdirSync(OUT, { recursive: true });
  writeFileSync(new URL(`${name}.html`, OUT), html);
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.setContent(html, { waitUntil: 'load' });
  await page.screenshot({ path: new URL(`${name}.png`, OUT).pathname, fullPage: true });
  return page;
}

describe('HTML report in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
  });
  afterAll(async () => browser?.close());

  it('draws the frontier with no arm at the origin and lists dominated, insufficient and unpriced arms beside it', async () => {
    const msgs: ObsMessage[] = synthCampaign(CID, 60, 0.85, { cheap: 'same', mid: 0.7 });
    for (let i = 0; i < 60; i++)
      msgs.push(
        synthObservation(CID, i, 'pricey', 'candidate', { costUsd: 0.004 + (i % 5) * 1e-4, correct: i % 3 !== 0 }),
      );
    for (let i = 0; i < 5; i++) msgs.push(synthObservation(CID, i, 'few', 'candidate'));
    for (let i = 0; i < 60; i++)
      msgs.push(synthObservation(CID, i, 'nocost', 'candidate', { usageNull: true, costUsd: null }));
    const r = foldReport({
      campaign: {
        campaign_id: CID,
        spec: synthSpec(['cheap', 'mid', 'pricey', 'few', 'nocost']),
        run_index: 1,
        state: 'completed',
      },
      messages: msgs,
      provisional: false,
    });
    const page = await open(browser, renderReportHtml(r.report, r.runRecord, { bundle: r.bundle }), 'verdict-report');

    const svg = page.locator('svg.frontier-chart');
    expect(await svg.count()).toBe(1);
    const origin = {
      x: Number(await svg.getAttribute('data-origin-x')),
      y: Number(await svg.getAttribute('data-origin-y')),
    };
    const markers = await page.$$eval('circle.arm-marker', (cs) =>
      cs.map((c) => ({
        arm: c.getAttribute('data-arm'),
        cx: Number(c.getAttribute('cx')),
        cy: Number(c.getAttribute('cy')),
        r: c.getBoundingClientRect(),
      })),
    );
    expect(markers.map((m) => m.arm).sort()).toEqual(['cheap', 'inc', 'mid', 'pricey']);
    for (const m of markers) {
      expect(Math.hypot(m.cx - origin.x, m.cy - origin.y)).toBeGreaterThan(10);
      expect(m.r.width).toBeGreaterThan(0); // actually rendered
    }
    const beside = await page.$$eval('ul.beside > li', (ls) =>
      ls.map((l) => [l.getAttribute('data-arm'), l.textContent ?? '']),
    );
    const why = Object.fromEntries(beside) as Record<string, string>;
    expect(why.few).toContain('cannot measure: insufficient (have 5, need 8)');
    expect(why.nocost).toContain('cannot measure: unpriced');
    expect(why.pricey).toMatch(/dominated by (inc|cheap)/);
    expect(why.inc).toBe('inc — dominated by cheap');
    // every drawn arm has whiskers, the incumbent's from the bundle (normal approximation)
    for (const arm of ['inc', 'cheap', 'mid', 'pricey'])
      expect(await page.locator(`svg.frontier-chart line.whisker[data-arm="${arm}"]`).count()).toBe(2);
    expect(await page.locator('svg.frontier-chart line.margin').count()).toBe(1);
    expect(await page.locator('svg.frontier-chart g.legend text.legend-arm').count()).toBe(4);
    expect(await page.locator('svg.frontier-chart text.x-tick').count()).toBeGreaterThanOrEqual(3);
    expect(await page.locator('svg.frontier-chart text.y-tick').count()).toBeGreaterThanOrEqual(3);
    expect(await page.locator('table.arms tbody tr').count()).toBe(6);
    expect(await page.locator('ul.verdict li').count()).toBe(5);
    // both ids; campaign and measured times from the run record
    expect(await page.locator('code.report-id').textContent()).toBe(r.reportId);
    expect(await page.locator('code.run-record-id').textContent()).toBe(r.runRecordId);
    expect(await page.locator('h1').textContent()).toContain(CID);
    const incLatency = r.runRecord.call_types[0]!.arms.find((a) => a.arm_id === 'inc')!.latency_ms;
    expect(await page.locator('table.arms tr[data-arm="inc"] td.latency').textContent()).toBe(
      `${incLatency.p50!.toFixed(0)} / ${incLatency.p90!.toFixed(0)}`,
    );
    await page.close();
  });

  it('gives a finance reader the header figures of the report JSON, labelled savings, a projection and a glossary, and no raw JSON', async () => {
    const msgs: ObsMessage[] = synthCampaign(CID, 60, 0.85, { cheap: 'same' });
    const spec = synthSpec(['cheap'], {
      max_cost_usd: 7.5,
      alpha: 0.1,
      margins: { noninferiority_pp: 3, min_savings: 0.25 },
    });
    // the candidate's card came from the price catalogue (as the control API pins it)
    spec.candidates[0]!.rate_card_from = {
      catalogue: '2025-08-01.1',
      model: 'gpt-4o-mini',
      source: 'https://openai.com/api/pricing/',
      as_of: '2025-08-01',
    };
    const r = foldReport({
      campaign: { campaign_id: CID, spec, run_index: 1, state: 'completed' },
      messages: msgs,
      provisional: false,
    });
    const page = await open(browser, renderReportHtml(r.report, r.runRecord, { bundle: r.bundle }), 'report-header');
    const field = async (f: string) => ({
      value: await page.locator(`dd[data-field="${f}"]`).getAttribute('data-value'),
      text: (await page.locator(`dd[data-field="${f}"]`).textContent()) ?? '',
    });

    // expectations from the inputs (the spec above and the synthetic charges), not from the renderer
    expect(await field('campaign')).toMatchObject({ value: CID });
    expect(await field('max_cost_usd')).toMatchObject({ value: '7.5' });
    expect((await field('max_cost_usd')).text).toContain('$7.50');
    expect(await field('margin_pp')).toMatchObject({ value: '3' });
    expect(await field('min_savings')).toMatchObject({ value: '0.25' });
    expect(await field('alpha')).toMatchObject({ value: '0.1' });
    // synthObservation charges ceil(cost·1e6) µ$ per call: incumbent 0.002 + (i%7)·1e-5, candidate 0.0004 + (i%7)·1e-5
    let charged = 0;
    for (let i = 0; i < 60; i++)
      charged += Math.ceil((0.002 + (i % 7) * 1e-5) * 1e6) + Math.ceil((0.0004 + (i % 7) * 1e-5) * 1e6);
    expect(r.runRecord.spend?.arms_micro_usd).toBe(charged);
    expect(Number((await field('spend_arms_usd')).value)).toBeCloseTo(charged / 1e6, 9);
    expect(Number((await field('spend_share_of_cap')).value)).toBeCloseTo(charged / 1e6 / 7.5, 9);
    expect((await field('spend_judge_usd')).text).toContain('no LLM judge is configured');
    // the savings in the report JSON appear on the page with basis and the word projection
    const c = r.report.call_types![0]!.comparisons[0]!;
    const sv = c.stats!.cost_savings!;
    const verdict = (await page.locator('ul.verdict li').first().textContent()) ?? '';
    expect(verdict).toContain(
      `projected savings ${(sv.point * 100).toFixed(1)}% [${(sv.lower * 100).toFixed(1)}%, ${(sv.upper * 100).toFixed(1)}%]`,
    );
    expect(verdict).toContain('rate card (derived) basis');
    expect(verdict).toContain('not realized savings');
    for (const cell of await page.locator('table.comparisons td.savings').allTextContents())
      expect(cell).toContain('projection');
    // projection: 60 requests over the synthetic window (items 1 s apart, last one ends after 500 + 59%13·10 ms)
    const windowMs = 59_000 + 500 + (59 % 13) * 10;
    const perMonth = 60 * ((30 * 24 * 3_600_000) / windowMs);
    const incMean = r.report.call_types![0]!.arms.find((a) => a.arm_id === 'inc')!.cost.per_request_mean_usd!;
    const row = page.locator('table.projection tr[data-candidate="cheap"]');
    expect(Number(await row.getAttribute('data-savings-month-usd'))).toBeCloseTo(perMonth * incMean * sv.point, 3);
    expect(await row.locator('td.projection').textContent()).toContain('projection');
    expect(await page.locator('section.projection-section').textContent()).toContain(
      'Extrapolated from a short window',
    );
    expect(await page.locator('table.arms tr[data-arm="cheap"] .card-from').textContent()).toBe(
      'rate card from price catalogue 2025-08-01.1 (gpt-4o-mini, listed 2025-08-01 at https://openai.com/api/pricing/)',
    );
    expect(await page.locator('table.arms tr[data-arm="inc"] .card-from').count()).toBe(0);
    // glossary terms and no raw JSON objects anywhere in the visible text
    const terms = await page.locator('dl.glossary dt').allTextContents();
    for (const t of ['NOT_BEAT', 'MDE', 'level', 'margin', 'basis', 'projection']) expect(terms).toContain(t);
    const text = (await page.locator('body').innerText()) ?? '';
    expect(text).not.toMatch(/\{\s*\}|\{"/);
    // the synthetic arms start together: no concurrency warning
    expect(await page.locator('div.warning.concurrency').count()).toBe(0);
    expect(await page.locator('svg.context-chart circle.context-point').count()).toBeGreaterThanOrEqual(4);
    await page.close();
  });

  it(`warns when an arm's p90 start skew exceeds ${SKEW_WARNING_MS} ms`, async () => {
    const msgs = synthCampaign(CID, 40, 0.85, { late: 'same' }).map((m) =>
      m.schema === 'shadow.observation/v1' && m.arm_id === 'late'
        ? { ...m, start_skew_ms: 1200 + (m.latency_ms ?? 0) }
        : m,
    );
    const r = foldReport({
      campaign: { campaign_id: CID, spec: synthSpec(['late']), run_index: 1, state: 'completed' },
      messages: msgs,
      provisional: false,
    });
    const page = await open(browser, renderReportHtml(r.report, r.runRecord), 'report-skew');
    const warning = page.locator('div.warning.concurrency');
    expect(await warning.count()).toBe(1);
    expect(await warning.textContent()).toMatch(/math\/late 1\d{3} ms/);
    // without the bundle the context chart says why it is missing instead of drawing nothing silently
    expect(await page.locator('p.no-chart.context').textContent()).toContain('evidence bundle');
    await page.close();
  });
});
