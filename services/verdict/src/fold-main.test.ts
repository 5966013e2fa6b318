import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { verifyBundle } from '@shadowplane/evidence';
import type { Report } from '@shadowplane/contracts';
import { synthCampaign, synthSpec } from '../../../libs/evidence/test/synth.js';
import { main } from './fold-main.js';

const CID = 'cmp_0f0f0f0f0f0f0f0f';

describe('shadowplane fold (offline)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sp-fold-'));
  const obsFile = join(dir, 'obs.jsonl');
  writeFileSync(obsFile, synthCampaign(CID, 50, 0.9, { same: 'same', worse: 0.4 }).map((m) => JSON.stringify(m)).join('\n') + '\n');
  const specFile = join(dir, 'run-spec.yaml');
  writeFileSync(specFile, stringify(synthSpec(['same', 'worse'])));

  it('folds an exported file with a pinned spec into JSON, HTML and a bundle that verifies', async () => {
    const [json, html, bundle] = ['r.json', 'r.html', 'b.json'].map((f) => join(dir, f)) as [string, string, string];
    expect(await main([obsFile, '--spec', specFile, '--json', json, '--html', html, '--bundle', bundle])).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as Report;
    expect(report.campaign_id).toBe(CID);
    const cmps = report.call_types![0]!.comparisons;
    expect(cmps.map((c) => [c.candidate_arm_id, c.decision])).toEqual([
      ['same', 'pass'],
      ['worse', 'fail'],
    ]);
    expect(readFileSync(html, 'utf8')).toContain('class="frontier-chart"');
    expect(verifyBundle(JSON.parse(readFileSync(bundle, 'utf8'))).ok).toBe(true);
    // same file, same spec → the same bytes
    const json2 = join(dir, 'r2.json');
    expect(await main([obsFile, '--spec', specFile, '--json', json2])).toBe(0);
    expect(readFileSync(json2, 'utf8')).toBe(readFileSync(json, 'utf8'));
  });
  it('derives a labeled spec when none is given', async () => {
    const json = join(dir, 'derived.json');
    expect(await main([obsFile, '--json', json])).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as Report & { spec: { name: string; candidates: { id: string }[] } };
    expect(report.spec.name).toBe('offline fold: spec derived from observations (no pinned spec given)');
    expect(report.spec.candidates.map((c) => c.id)).toEqual(['same', 'worse']);
  });
  it('exits 65 on a line that is not an OBS message, 66 on a missing file, 64 on a usage error', async () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"schema":"nope"}\n');
    expect(await main([bad])).toBe(65);
    expect(await main([join(dir, 'missing.jsonl')])).toBe(66);
    expect(await main([])).toBe(64);
  });
  it('refuses to write an empty report (exit 65)', async () => {
    const empty = join(dir, 'empty.jsonl');
    writeFileSync(empty, '');
    expect(await main([empty, '--spec', specFile, '--campaign-id', CID])).toBe(65);
  });
});
