import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { verifyBundle } from '@shadowplane/evidence';
import { contentHash, type Report, type RunRecord } from '@shadowplane/contracts';
import { synthCampaign, synthSpec } from '@shadowplane/testkit';
import { main } from './fold-main.js';

const CID = 'cmp_0f0f0f0f0f0f0f0f';

describe('shadowplane fold (offline)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sp-fold-'));
  const obsFile = join(dir, 'obs.jsonl');
  writeFileSync(
    obsFile,
    synthCampaign(CID, 300, 0.9, { same: 'same', worse: 0.4 })
      .map((m) => JSON.stringify(m))
      .join('\n') + '\n',
  );
  const specFile = join(dir, 'run-spec.yaml');
  writeFileSync(specFile, stringify(synthSpec(['same', 'worse'])));

  it('folds an exported file with a pinned spec into JSON, a run record, HTML and a bundle that verifies', async () => {
    const [json, run, html, bundle] = ['r.json', 'run.json', 'r.html', 'b.json'].map((f) => join(dir, f)) as [
      string,
      string,
      string,
      string,
    ];
    expect(
      await main([
        obsFile,
        '--spec',
        specFile,
        '--json',
        json,
        '--run-record',
        run,
        '--html',
        html,
        '--bundle',
        bundle,
      ]),
    ).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as Report;
    expect(report).not.toHaveProperty('campaign_id');
    const runRecord = JSON.parse(readFileSync(run, 'utf8')) as RunRecord;
    expect(runRecord.campaign_id).toBe(CID);
    expect(runRecord.report_id).toBe(report.report_id);
    const { run_record_id: runId, ...runBody } = runRecord;
    expect(contentHash(runBody)).toBe(runId);
    expect(readFileSync(html, 'utf8')).toContain(`<code class="run-record-id">${runId}</code>`);
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
    // the same evidence under another campaign id → the same report bytes, another run record
    const json3 = join(dir, 'r3.json');
    const run3 = join(dir, 'run3.json');
    const obsFile3 = join(dir, 'obs3.jsonl');
    writeFileSync(
      obsFile3,
      synthCampaign('cmp_1111111111111111', 300, 0.9, { same: 'same', worse: 0.4 })
        .reverse()
        .map((m) => JSON.stringify(m))
        .join('\n') + '\n',
    );
    expect(await main([obsFile3, '--spec', specFile, '--json', json3, '--run-record', run3])).toBe(0);
    expect(readFileSync(json3, 'utf8')).toBe(readFileSync(json, 'utf8'));
    expect((JSON.parse(readFileSync(run3, 'utf8')) as RunRecord).campaign_id).toBe('cmp_1111111111111111');
  });
  it('derives a labeled spec when none is given', async () => {
    const json = join(dir, 'derived.json');
    expect(await main([obsFile, '--json', json])).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as Report & {
      spec: { name: string; candidates: { id: string }[] };
    };
    expect(report.spec.name).toBe('offline fold: spec derived from observations (no pinned spec given)');
    expect(report.spec.candidates.map((c) => c.id)).toEqual(['same', 'worse']);
  });
  it('without --spec, observations no campaign spec can hold (a 250-character model name) exit 65 naming the field and --spec', async () => {
    const long = join(dir, 'long-model.jsonl');
    const model = 'm'.repeat(250);
    const msgs = synthCampaign(CID, 20, 0.9, { same: 'same' }).map((m) =>
      m.schema === 'shadow.observation/v1' && m.role === 'incumbent' ? { ...m, model } : m,
    );
    writeFileSync(long, msgs.map((m) => JSON.stringify(m)).join('\n') + '\n');
    const err: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => (err.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      expect(await main([long])).toBe(65);
    } finally {
      process.stderr.write = write;
    }
    expect(err.join('')).toMatch(/cannot be read as a campaign spec \(incumbent\.model: .*\); pass .* --spec/);
    expect(err.join('')).not.toMatch(/bad spec/);
  });
  it('folds a campaign stored with patterns RE2 refuses: those scores are unscored, neither pass nor fail', async () => {
    // Under JavaScript syntax the lookahead scorer matched every output (a pass) and the hard
    // lookahead expectation matched none (a hard fail); now both give no score, so the verdict is
    // the one of the same evidence without them.
    const hardFail = { kind: 'regex', value: 'x(?=y)', hard: true } as const;
    const withJsOnly = join(dir, 'obs-js-only.jsonl');
    writeFileSync(
      withJsOnly,
      synthCampaign(CID, 300, 0.9, { same: 'same', worse: 0.4 })
        .map((m) =>
          JSON.stringify(
            m.schema === 'shadow.observation/v1' ? { ...m, expectations: [...m.expectations, hardFail] } : m,
          ),
        )
        .join('\n') + '\n',
    );
    const pinned = synthSpec(['same', 'worse']);
    const stored = {
      schema: 'shadow.campaign/v1',
      id: CID,
      spec: { ...pinned, scorers: [...pinned.scorers, { kind: 'regex', pattern: '####(?= )' }] },
      spec_hash: 'h',
      comparison_key: 'k',
      run_index: 1,
      state: 'completed',
      state_reason: null,
      created_at: '2026-11-01T00:00:00Z',
      updated_at: '2026-11-01T00:00:00Z',
    };
    const storedFile = join(dir, 'stored-campaign.yaml');
    writeFileSync(storedFile, stringify(stored));
    const [got, want] = [join(dir, 'js-only.json'), join(dir, 'reference.json')];
    expect(await main([withJsOnly, '--spec', storedFile, '--json', got])).toBe(0);
    expect(await main([obsFile, '--spec', specFile, '--json', want])).toBe(0);
    const comparisons = (f: string) => (JSON.parse(readFileSync(f, 'utf8')) as Report).call_types![0]!.comparisons;
    expect(comparisons(got).map((c) => c.hard_gate_failures)).toEqual([0, 0]);
    expect(comparisons(got)).toEqual(comparisons(want));
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

describe('shadowplane fold (offline): the instrument ceilings hold in the CLI too', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sp-fold-ceiling-'));
  // an equal, cheaper candidate: under shadow_dual_run a BEAT
  const base = synthCampaign(CID, 300, 0.9, { cand: 'same' });
  const specFile = join(dir, 'run-spec.yaml');
  writeFileSync(specFile, stringify(synthSpec(['cand'])));
  const foldAs = async (instrument: 'shadow_dual_run' | 'judged_dataset_run' | 'replay') => {
    const obsFile = join(dir, `${instrument}.jsonl`);
    writeFileSync(
      obsFile,
      base.map((m) => JSON.stringify(m.schema === 'shadow.observation/v1' ? { ...m, instrument } : m)).join('\n') +
        '\n',
    );
    const json = join(dir, `${instrument}.json`);
    const bundle = join(dir, `${instrument}.bundle.json`);
    expect(await main([obsFile, '--spec', specFile, '--json', json, '--bundle', bundle])).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as Report;
    expect(verifyBundle(JSON.parse(readFileSync(bundle, 'utf8'))).ok).toBe(true);
    return report.call_types![0]!.comparisons.find((c) => c.candidate_arm_id === 'cand')!;
  };

  it('shadow_dual_run input: BEAT', async () => {
    expect((await foldAs('shadow_dual_run')).state).toBe('BEAT');
  });
  it('judged_dataset_run input is accepted and capped at ON_FRONTIER, the ceiling named', async () => {
    const c = await foldAs('judged_dataset_run');
    expect(c.decision).toBe('pass');
    expect(c.state).toBe('ON_FRONTIER');
    expect(c.decision_reasons.some((r) => r.startsWith('instrument_ceiling:'))).toBe(true);
  });
  it('replay input decides cost only: CANNOT_MEASURE (instrument_cost_only)', async () => {
    const c = await foldAs('replay');
    expect(c.state).toBe('CANNOT_MEASURE');
    expect(c.decision).toBeNull();
    expect(c.cannot_measure!.reason).toBe('instrument_cost_only');
  });
});
