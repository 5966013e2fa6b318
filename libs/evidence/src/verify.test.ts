import { describe, expect, it } from 'vitest';
import { foldReport, verifyBundle, type EvidenceBundle } from './index.js';
import { synthCampaign, synthSpec } from '@shadowplane/testkit';

const CID = 'cmp_00000000000000aa';
const fresh = (): EvidenceBundle => {
  const r = foldReport({
    campaign: { campaign_id: CID, spec: synthSpec(['equal', 'worse']), run_index: 2, state: 'completed' },
    messages: synthCampaign(CID, 60, 0.85, { equal: 'same', worse: 0.5 }),
    provisional: false,
  });
  return JSON.parse(JSON.stringify(r.bundle)) as EvidenceBundle;
};

describe('verifyBundle', () => {
  const base = fresh();

  it('verifies an untouched bundle (after a JSON round trip)', () => {
    expect(verifyBundle(JSON.parse(JSON.stringify(base)))).toEqual({ ok: true, problems: [] });
  });
  it('names the recorded statistic when one number in it is changed', () => {
    const b = fresh();
    b.parts.stats[0]!.result.quality_delta.lower += 0.001;
    const v = verifyBundle(b);
    expect(v.ok).toBe(false);
    expect(v.problems[0]!.path).toBe('parts.stats[0].result.quality_delta.lower');
    expect(v.problems.map((p) => p.path)).toContain('hashes.stats');
  });
  it('names the report field when a number in the report is changed', () => {
    const b = fresh();
    const cmp = b.parts.report.call_types![0]!.comparisons[1]!;
    cmp.stats!.cost_savings!.upper = 0.99;
    const v = verifyBundle(b);
    expect(v.problems[0]!.path).toBe('parts.report.report_id');
    expect(v.problems.map((p) => p.path)).toContain(
      'parts.report.call_types[0].comparisons[1].stats.cost_savings.upper',
    );
  });
  it('detects a changed paired row through the recomputed bootstrap and the part hash', () => {
    const b = fresh();
    const row = b.parts.paired[1]!.rows.find((r) => r.q_cand === 0)!;
    row.q_cand = 1;
    const paths = verifyBundle(b).problems.map((p) => p.path);
    expect(paths).toContain('parts.stats[1].result.quality_delta.point');
    expect(paths).toContain('hashes.paired');
  });
  it('detects a changed cost in the cost evidence through the per-request mean', () => {
    const b = fresh();
    b.parts.cost_evidence[0]!.usd = 1;
    const paths = verifyBundle(b).problems.map((p) => p.path);
    expect(paths[0]).toBe('parts.report.call_types[0].arms[0].cost.per_request_mean_usd');
  });
  it('detects a seed that differs from the pinned spec', () => {
    const b = fresh();
    b.parts.stats[0]!.settings.seed = 2;
    expect(verifyBundle(b).problems[0]!.path).toBe('parts.stats[0].settings.seed');
  });
  it('detects a changed MDE in the power plan', () => {
    const b = fresh();
    b.parts.report.call_types![0]!.comparisons[0]!.power_plan!.mde_pp = 1;
    const paths = verifyBundle(b).problems.map((p) => p.path);
    expect(paths).toContain('parts.report.call_types[0].comparisons[0].power_plan.mde_pp');
  });
  it('detects a paired row whose observation is not in the lineage', () => {
    const b = fresh();
    b.parts.lineage.observation_ids = b.parts.lineage.observation_ids.filter(
      (id) => id !== b.parts.paired[0]!.rows[2]!.obs_cand,
    );
    expect(verifyBundle(b).problems[0]!.path).toBe('parts.paired[0].rows[2].obs_cand');
  });
  it('names the run record when a latency number in it is changed', () => {
    const b = fresh();
    b.parts.run_record.call_types[0]!.arms[1]!.latency_ms.p90 = 1;
    const v = verifyBundle(b);
    expect(v.ok).toBe(false);
    expect(v.problems[0]!.path).toBe('parts.run_record.run_record_id');
    expect(v.problems.map((p) => p.path)).toEqual(['parts.run_record.run_record_id', 'hashes.run_record']);
  });
  it('detects a run record that points at another report, and a bundle without one', () => {
    const b = fresh();
    b.parts.run_record.report_id = 'f'.repeat(64);
    expect(verifyBundle(b).problems.map((p) => p.path)).toContain('parts.run_record.report_id');
    const c = fresh() as unknown as { parts: Record<string, unknown> };
    delete c.parts.run_record;
    expect(verifyBundle(c).problems[0]!.path).toBe('parts.run_record');
  });
  it('rejects something that is not a bundle', () => {
    expect(verifyBundle({ hello: 1 }).problems[0]!.path).toBe('$');
  });
});

describe('fast canonical JSON', () => {
  it('writes the same text as the contracts canonicalJson (RFC 8785) for a whole bundle and odd values', async () => {
    const { canonicalJson } = await import('@shadowplane/contracts');
    const { fastCanonicalJson } = await import('./canonical-fast.js');
    const odd = {
      b: [1, 1.5e-7, -0, 1e21, 'é\u2028"\\', null, true],
      a: { z: undefined, y: 0.1 + 0.2 },
      '\u00e9': 1,
      Z: 2,
    };
    expect(fastCanonicalJson(odd)).toBe(canonicalJson(odd));
    const b = fresh();
    expect(fastCanonicalJson(b)).toBe(canonicalJson(b));
  });
  describe('clusters', () => {
    // items 0, 1, 2 of a campaign: 0 and 2 are 6 bits apart, 1 is within 3 bits of both; item 1 has
    // no candidate call, so 0 and 2 are paired and share a cluster only through item 1
    const bridged = (): EvidenceBundle => {
      const sims = ['0000000000000000', '0000000000000007', '000000000000003f'];
      const msgs = synthCampaign(CID, 60, 0.85, { equal: 'same', worse: 0.5 });
      const hashes = [...new Set(msgs.map((m) => ('item_hash' in m ? m.item_hash : '')))];
      const kept = msgs
        .map((m) => {
          if (m.schema !== 'shadow.observation/v1') return m;
          const k = hashes.indexOf(m.item_hash);
          // every other item far from these three: its own SimHash with the top bits set
          const sim = k < 3 ? sims[k]! : `ff${k.toString(16).padStart(4, '0')}ffff${k.toString(16).padStart(6, '0')}`;
          return { ...m, prompt_simhash: sim };
        })
        .filter((m) => !(m.schema === 'shadow.observation/v1' && m.item_hash === hashes[1] && m.role === 'candidate'));
      const r = foldReport({
        campaign: { campaign_id: CID, spec: synthSpec(['equal', 'worse']), run_index: 2, state: 'completed' },
        messages: kept,
        provisional: false,
      });
      return JSON.parse(JSON.stringify(r.bundle)) as EvidenceBundle;
    };

    it('accepts two paired rows joined through an item without a pair in the comparison', () => {
      const b = bridged();
      const rows = b.parts.paired[0]!.rows;
      const cl = (sim: string) => rows.find((r) => r.simhash === sim)!.cluster;
      // the fold joined them; the rows alone cannot show why
      expect(cl('0000000000000000')).toBe(cl('000000000000003f'));
      expect(rows.some((r) => r.simhash === '0000000000000007')).toBe(false);
      expect(verifyBundle(b)).toEqual({ ok: true, problems: [] });
    });
    it('names near-duplicate rows recorded in different clusters', () => {
      const b = fresh();
      const rows = b.parts.paired[0]!.rows;
      rows[1]!.simhash = rows[0]!.simhash;
      expect(rows[0]!.cluster).not.toBe(rows[1]!.cluster);
      const p = verifyBundle(b).problems.find((x) => x.path === 'parts.paired[0].rows[1].cluster');
      expect(p?.message).toMatch(/near-duplicate rows/);
    });
    it('names a SimHash that is not 16 lowercase hex digits, and a cluster id above its member', () => {
      const b = fresh();
      const rows = b.parts.paired[0]!.rows;
      rows[2]!.simhash = rows[2]!.simhash.toUpperCase().replace(/[0-9]/, 'Z');
      rows[3]!.cluster = 'f'.repeat(64);
      const paths = verifyBundle(b).problems.map((x) => x.path);
      expect(paths).toContain('parts.paired[0].rows[2].simhash');
      expect(paths).toContain('parts.paired[0].rows[3].cluster');
    });
  });
});
