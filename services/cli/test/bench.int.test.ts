// The bench loop end to end on real components: a real nats-server (shared, private prefix),
// provider-sim, the control API on loopback, a duplicator and the verdict service in-process.
// Baseline run → pin it → shadowctl bench run --gate (exit 0) → delete half of the baseline's
// artifacts → bench run --gate again: those pairs are ineligible, the verdict inconclusive, exit 2.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { generateKey, loadKeyring } from '@shadowplane/artifacts';
import { openKv } from '@shadowplane/bus';
import { FLAG_PAID_DISPATCH, ObsMessage, type Observation } from '@shadowplane/contracts';
import { auth, fixture, KEYS, type Fixture } from '@shadowplane/control/testing';
import { startDuplicator, type DuplicatorHandle } from '@shadowplane/duplicator';
import { startProviderSim, type ProviderSim } from '@shadowplane/provider-sim';
import { readObsSubject } from '@shadowplane/reports';
import { chatEnvelope, GSM8K, randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import { startVerdict, type VerdictHandle } from '@shadowplane/verdict';
import { main } from '../src/index.js';

class Sink extends Writable {
  text = '';
  override _write(c: Buffer, _e: BufferEncoding, cb: () => void) {
    this.text += c.toString();
    cb();
  }
}

const SUITE = 'benchint';
const ITEMS = 24;
const LARGE = { input: 2.5, cached_input: 1.25, output: 10 };
const SMALL = { input: 0.1, cached_input: 0.025, output: 0.4 };
// every output with a character scores 1: both arms equal by construction, so the only thing
// between the compare and a pass is the evidence itself (how many pairs, whether they are eligible)
const SCORERS = [{ kind: 'regex', pattern: '.' }];
const MARGINS = { noninferiority_pp: 15, min_savings: 0 };

describe('bench loop: baseline → compare → gate', () => {
  let f: Fixture;
  let sim: ProviderSim;
  let dup: DuplicatorHandle;
  let verdict: VerdictHandle;
  let url = '';
  let dir = '';
  const artifactKey = generateKey();

  const shadowctl = async (...args: string[]) => {
    const out = new Sink();
    const err = new Sink();
    const code = await main(['--url', url, '--api-key', KEYS.all, ...args], {
      out: out as unknown as NodeJS.WriteStream,
      err: err as unknown as NodeJS.WriteStream,
    });
    return { code, out: out.text, err: err.text };
  };
  const api = async (method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown) =>
    f.app.inject({
      method,
      url: path,
      headers: { ...auth(KEYS.all), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  // the same ITEMS prompts every time (new envelope ids, the same item hashes)
  const publishTraffic = async () => {
    for (const g of GSM8K.slice(0, ITEMS)) {
      const e = chatEnvelope(SUITE, 'math', g.question);
      await f.bus.js.publish(f.bus.names.captureSubject(SUITE, 'math'), JSON.stringify(e), { msgID: e.envelope_id });
    }
  };
  const until = async <T>(what: string, probe: () => Promise<T | null | undefined>, ms = 120_000): Promise<T> => {
    const end = Date.now() + ms;
    for (;;) {
      const v = await probe();
      if (v !== null && v !== undefined) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const campaignIds = async () =>
    ((await api('GET', '/v1/campaigns')).json() as { campaigns: { id: string }[] }).campaigns.map((c) => c.id);
  /** runs `bench run` and feeds the traffic once its compare campaign exists (a live campaign reads from its launch) */
  const benchRun = async (...args: string[]) => {
    const before = new Set(await campaignIds());
    const run = shadowctl('--json', 'bench', 'run', SUITE, ...args);
    await until('the compare campaign', async () => (await campaignIds()).find((id) => !before.has(id)));
    await publishTraffic();
    return run;
  };

  beforeAll(async () => {
    sim = await startProviderSim();
    const prefix = randomPrefix('bench');
    const providers = [{ id: 'sim', base_url: `${sim.url}/v1`, api: 'openai.chat' as const, api_key_env: 'SIM_KEY' }];
    f = await fixture({ flag: true, prefix, providers });
    url = await f.app.listen({ host: '127.0.0.1', port: 0 });
    dir = mkdtempSync(join(tmpdir(), 'bench-int-'));
    const providersFile = join(dir, 'providers.json');
    writeFileSync(providersFile, JSON.stringify({ providers }));
    await (
      await openKv(f.bus, f.bus.names.buckets.flags)
    ).put(
      FLAG_PAID_DISPATCH,
      JSON.stringify({ enabled: true, updated_at: new Date().toISOString(), updated_by: 'test' }),
    );
    dup = await startDuplicator(
      {
        natsUrl: sharedNatsUrl(),
        natsPrefix: prefix,
        logLevel: 'warn',
        providersFile,
        redisUrl: undefined,
        workerId: 'bench-w1',
        opsHost: '127.0.0.1',
        opsPort: 0,
        itemConcurrency: 8,
        ackWaitMs: 5000,
        leaseTtlMs: 2000,
        rateWindowMs: 60_000,
        retryBaseMs: 20,
        flagPollMs: 200,
        provision: false,
        storage: 'memory',
      },
      { env: { SIM_KEY: 'sk-sim-test', SHADOWPLANE_ARTIFACT_KEY: artifactKey } },
    );
    verdict = await startVerdict({
      natsUrl: sharedNatsUrl(),
      prefix,
      keyring: loadKeyring({ SHADOWPLANE_ARTIFACT_KEY: artifactKey }),
      storage: 'memory',
      tickMs: 200,
      progressIntervalMs: 500,
    });
  }, 60_000);
  afterAll(async () => {
    await verdict?.close();
    await dup?.close();
    await f?.close();
    await sim?.close();
  });

  it(
    'pins a completed run as the baseline, gates a compare run on it (0), and fails the gate (2) when baseline artifacts are gone',
    { timeout: 300_000 },
    async () => {
      // 1. the baseline run: sim-large incumbent beside a sim-medium candidate, on live traffic
      const launched = await api('POST', '/v1/campaigns', {
        name: 'baseline',
        suite: SUITE,
        call_types: ['math'],
        incumbent: { id: 'large', provider: 'sim', model: 'sim-large', rate_card: LARGE },
        candidates: [{ id: 'medium', provider: 'sim', model: 'sim-medium', rate_card: { input: 0.4, output: 1.6 } }],
        scorers: SCORERS,
        margins: MARGINS,
        aa_share: 0,
        max_items: ITEMS,
        max_cost_usd: 2,
      });
      expect(launched.statusCode, launched.body).toBe(201);
      const baseId = launched.json().campaign.id as string;
      await publishTraffic();
      // not pinnable before its final report
      await until('the baseline to end', async () =>
        api('GET', `/v1/campaigns/${baseId}`).then((r) => (r.json().terminal ? true : null)),
      );
      const pinned = await until<{ report_id: string }>('a pinnable baseline', async () => {
        const r = await api('PUT', `/v1/suites/${SUITE}/baseline`, { campaign_id: baseId });
        if (r.statusCode === 409) return null;
        expect(r.statusCode, r.body).toBe(200);
        return r.json();
      });
      expect(pinned).toMatchObject({
        schema: 'shadow.baseline/v1',
        suite: SUITE,
        campaign_id: baseId,
        arm_id: 'large',
      });
      expect((await api('GET', `/v1/suites/${SUITE}/baseline`)).json()).toEqual(pinned);
      expect((await api('GET', `/v1/suites/nosuch/baseline`)).json().error.code).toBe('baseline_not_found');

      // 2. the compare run: the current config is sim-small alone; shadowctl gates it against <suite>:main
      const specFile = join(dir, 'bench.yaml');
      writeFileSync(
        specFile,
        toYaml({
          candidates: [{ id: 'small', provider: 'sim', model: 'sim-small', rate_card: SMALL }],
          scorers: SCORERS,
          margins: MARGINS,
          max_items: ITEMS,
        }),
      );
      const junit = join(dir, 'junit.xml');
      const ok = await benchRun('--budget', '1', '--spec', specFile, '--gate', '--junit', junit);
      expect(ok.code, ok.out + ok.err).toBe(0);
      const okOut = JSON.parse(ok.out) as {
        campaign_id: string;
        report_id: string;
        gate: { pass: boolean };
        report: {
          spec: { compare: unknown; incumbent: { id: string } };
          call_types: {
            comparisons: {
              candidate_arm_id: string;
              decision: string;
              state: string;
              instrument: string;
              pairs: { items: number };
            }[];
          }[];
        };
      };
      expect(okOut.gate.pass).toBe(true);
      // the baseline is pinned in the run spec; the incumbent is the baseline arm
      expect(okOut.report.spec.compare).toEqual({
        baseline: `${SUITE}:main`,
        resolved: { campaign_id: baseId, arm_id: 'large', report_id: pinned.report_id },
      });
      expect(okOut.report.spec.incumbent.id).toBe('large');
      expect(okOut.report.call_types[0]!.comparisons[0]).toMatchObject({
        candidate_arm_id: 'small',
        decision: 'pass',
        state: 'ON_FRONTIER',
        instrument: 'judged_dataset_run',
        pairs: { items: ITEMS },
      });
      // the compare run called only its candidate
      const own: Observation[] = [];
      for await (const { data } of readObsSubject(f.bus, f.bus.names.obsSubject(okOut.campaign_id))) {
        const m = ObsMessage.parse(data);
        if (m.schema === 'shadow.observation/v1') own.push(m);
      }
      expect(new Set(own.map((o) => o.arm_id))).toEqual(new Set(['small']));
      const xml = readFileSync(junit, 'utf8');
      expect(xml).toContain('<testsuites name="shadowplane bench" tests="3" failures="0" errors="0">');

      // 3. half of the baseline's retained artifacts expire: a compare can no longer pass on them
      const store = await f.bus.objm.open(f.bus.names.buckets.artifacts);
      const baseObs: Observation[] = [];
      for await (const { data } of readObsSubject(f.bus, f.bus.names.obsSubject(baseId))) {
        const m = ObsMessage.parse(data);
        if (m.schema === 'shadow.observation/v1' && m.arm_id === 'large' && m.artifact_ref) baseObs.push(m);
      }
      expect(baseObs).toHaveLength(ITEMS);
      const gone = baseObs.sort((a, b) => (a.item_hash < b.item_hash ? -1 : 1)).slice(0, ITEMS / 2);
      for (const o of gone) expect(await store.delete(o.artifact_ref!.slice('art:'.length))).toBeTruthy();
      const junit2 = join(dir, 'junit2.xml');
      const bad = await benchRun(
        '--budget',
        '1',
        '--spec',
        specFile,
        '--baseline',
        baseId,
        '--gate',
        '--junit',
        junit2,
      );
      expect(bad.code, bad.out + bad.err).toBe(2);
      const badOut = JSON.parse(bad.out) as {
        gate: { pass: boolean; reason: string };
        report: {
          call_types: {
            dataset_card: { exclusion_counts?: Record<string, number> };
            comparisons: { decision: string | null; decision_reasons: string[]; remediation: { code: string }[] }[];
          }[];
        };
      };
      expect(badOut.gate.pass).toBe(false);
      const ct = badOut.report.call_types[0]!;
      expect(ct.dataset_card.exclusion_counts).toMatchObject({ baseline_artifact_missing: ITEMS / 2 });
      expect(ct.comparisons[0]!.decision).toBe('inconclusive');
      expect(ct.comparisons[0]!.decision_reasons.some((r) => r.startsWith('baseline_ineligible_bound'))).toBe(true);
      expect(ct.comparisons[0]!.remediation.map((r) => r.code)).toContain('rebaseline');
      expect(readFileSync(junit2, 'utf8')).toMatch(/name="decision">\s*<failure message="inconclusive: /);

      // refusals: an unknown baseline run (1, baseline_not_found), a submitted resolved baseline (65)
      const unknown = await shadowctl(
        'bench',
        'run',
        SUITE,
        '--budget',
        '1',
        '--spec',
        specFile,
        '--baseline',
        'cmp_00000000deadbeef',
      );
      expect([unknown.code, unknown.err]).toEqual([1, expect.stringMatching(/baseline_not_found/)]);
      const forged = await api('POST', '/v1/campaigns', {
        name: 'forged',
        suite: SUITE,
        candidates: [{ id: 'small', provider: 'sim', model: 'sim-small', rate_card: SMALL }],
        max_cost_usd: 1,
        compare: { baseline: baseId, resolved: { campaign_id: baseId, arm_id: 'large', report_id: 'f'.repeat(64) } },
      });
      expect([forged.statusCode, forged.json().error.details.issues[0].path]).toEqual([400, 'compare.resolved']);
    },
  );
});
