import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObsMessage } from '@shadowplane/contracts';
import { foldReport, renderReportHtml } from './index.js';
import { synthCampaign, synthObservation, synthSpec } from '../test/synth.js';

const CHROMIUM = '/usr/bin/chromium';
const CID = 'cmp_feedfacecafe0001';
const OUT = new URL('../../../test-artifacts/', import.meta.url);

describe('HTML report in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
  });
  afterAll(async () => browser?.close());

  it('draws the frontier with no arm at the origin and lists dominated, insufficient and unpriced arms beside it', async () => {
    const msgs: ObsMessage[] = synthCampaign(CID, 60, 0.85, { cheap: 'same', mid: 0.7 });
    for (let i = 0; i < 60; i++) msgs.push(synthObservation(CID, i, 'pricey', 'candidate', { costUsd: 0.004 + (i % 5) * 1e-4, correct: i % 3 !== 0 }));
    for (let i = 0; i < 5; i++) msgs.push(synthObservation(CID, i, 'few', 'candidate'));
    for (let i = 0; i < 60; i++) msgs.push(synthObservation(CID, i, 'nocost', 'candidate', { usageNull: true, costUsd: null }));
    const r = foldReport({ campaign: { campaign_id: CID, spec: synthSpec(['cheap', 'mid', 'pricey', 'few', 'nocost']), run_index: 1, state: 'completed' }, messages: msgs, provisional: false });
    const html = renderReportHtml(r.report, r.runRecord);
    mkdirSync(OUT, { recursive: true });
    writeFileSync(new URL('verdict-report.html', OUT), html);

    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.setContent(html, { waitUntil: 'load' });
    await page.screenshot({ path: new URL('verdict-report.png', OUT).pathname, fullPage: true });

    const svg = page.locator('svg.frontier-chart');
    expect(await svg.count()).toBe(1);
    const origin = { x: Number(await svg.getAttribute('data-origin-x')), y: Number(await svg.getAttribute('data-origin-y')) };
    const markers = await page.$$eval('circle.arm-marker', (cs) => cs.map((c) => ({ arm: c.getAttribute('data-arm'), cx: Number(c.getAttribute('cx')), cy: Number(c.getAttribute('cy')), r: c.getBoundingClientRect() })));
    expect(markers.map((m) => m.arm).sort()).toEqual(['cheap', 'inc', 'mid', 'pricey']);
    for (const m of markers) {
      expect(Math.hypot(m.cx - origin.x, m.cy - origin.y)).toBeGreaterThan(10);
      expect(m.r.width).toBeGreaterThan(0); // actually rendered
    }
    const beside = await page.$$eval('ul.beside > li', (ls) => ls.map((l) => [l.getAttribute('data-arm'), l.textContent ?? '']));
    const why = Object.fromEntries(beside) as Record<string, string>;
    expect(why.few).toContain('cannot measure: insufficient (have 5, need 8)');
    expect(why.nocost).toContain('cannot measure: unpriced');
    expect(why.pricey).toMatch(/dominated by (inc|cheap)/);
    expect(why.inc).toBe('inc — dominated by cheap');
    expect(await page.locator('svg.frontier-chart line.whisker').count()).toBeGreaterThanOrEqual(6);
    expect(await page.locator('table.arms tbody tr').count()).toBe(6);
    expect(await page.locator('ul.verdict li').count()).toBe(5);
    // both ids; campaign and measured times from the run record
    expect(await page.locator('code.report-id').textContent()).toBe(r.reportId);
    expect(await page.locator('code.run-record-id').textContent()).toBe(r.runRecordId);
    expect(await page.locator('h1').textContent()).toContain(CID);
    const incLatency = r.runRecord.call_types[0]!.arms.find((a) => a.arm_id === 'inc')!.latency_ms;
    expect(await page.locator('table.arms tr[data-arm="inc"] td.latency').textContent()).toBe(`${incLatency.p50!.toFixed(0)} / ${incLatency.p90!.toFixed(0)}`);
    await page.close();
  });
});
