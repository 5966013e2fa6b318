import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { canonicalJson } from '@shadowplane/contracts';
import { REPO_ROOT } from './processes.js';

type Api = (
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  body?: unknown,
) => Promise<{ status: number; json: any; text: string }>;

/** What the bench loop after the live campaign produced (written as demo-out/lifecycle.json). */
export interface Lifecycle {
  /** call type → dataset_hash of the freeze */
  datasets: Record<string, string>;
  /** the second freeze of the same captures gave the same hashes and wrote nothing */
  refreeze_identical: boolean;
  frozen_run: {
    campaign_id: string;
    dataset_hash: string;
    call_type: string;
    report_id: string;
    run_record_id: string | null;
    state: string;
  };
  baseline: { suite: string; campaign_id: string; arm_id: string; report_id: string };
  compare: { campaign_id: string; report_id: string; candidate: string; gate_exit_code: number; gate_reason: string };
}

/** Options of {@link walkLifecycle}. */
export interface LifecycleOptions {
  api: Api;
  say: (line: string) => void;
  outDir: string;
  controlUrl: string;
  apiKey: string;
  suite: string;
  /** the call type whose dataset the frozen run and the compare run use */
  callType: string;
  /** arms of the frozen run and the changed candidate of the compare run */
  incumbent: Record<string, unknown>;
  candidate: Record<string, unknown>;
  changedCandidate: Record<string, unknown>;
  margins: { noninferiority_pp: number; min_savings: number };
  seed: number;
  maxCostUsd: number;
  /** epoch ms after which waiting gives up */
  deadline: number;
}

async function untilFinal(
  api: Api,
  id: string,
  deadline: number,
  say: (l: string) => void,
): Promise<{ state: string; report: any }> {
  let last = '';
  for (;;) {
    if (Date.now() > deadline)
      throw new Error(`campaign ${id} did not end with a final report in time (state ${last})`);
    const s = await api('GET', `/v1/campaigns/${id}`);
    const state = String(s.json?.campaign?.state ?? 'unknown');
    if (state !== last)
      say(`  ${id}: ${state}${s.json?.campaign?.state_reason ? ` (${s.json.campaign.state_reason})` : ''}`);
    last = state;
    if (s.json?.terminal) {
      const r = await api('GET', `/v1/campaigns/${id}/report`);
      if (r.status === 200 && r.json?.provisional === false) return { state, report: r.json };
    }
    await new Promise((res) => setTimeout(res, 1000));
  }
}

function shadowctl(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'services', 'cli', 'bin', 'shadowctl.mjs'), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/**
 * The bench loop after the demo's live campaign (docs/bench.md, docs/demo.md): freeze the captured
 * traffic (one dataset per call type, cards written to dataset-card.<call_type>.json), freeze again
 * (the same hashes, nothing written), run a frozen campaign on one call type's dataset, pin it as
 * the suite's baseline, then `shadowctl bench run --gate --junit` a compare run of a changed
 * candidate against `<suite>:main`. Writes openapi.json (the served document), compare-bundle.json,
 * compare-junit.xml and lifecycle.json into `outDir`.
 * @throws Error naming the step that failed
 */
export async function walkLifecycle(o: LifecycleOptions): Promise<Lifecycle> {
  const { api, say } = o;
  const openapi = await api('GET', '/openapi.json');
  if (openapi.status !== 200) throw new Error(`GET /openapi.json failed: ${openapi.status}`);
  writeFileSync(join(o.outDir, 'openapi.json'), `${JSON.stringify(openapi.json, null, 2)}\n`);

  const freeze = async () => {
    const r = await api('POST', `/v1/suites/${o.suite}/freeze`, { max_items: 500 });
    if (r.status !== 200 && r.status !== 201) throw new Error(`freeze failed: ${r.status} ${r.text}`);
    return r;
  };
  const first = await freeze();
  const datasets: Record<string, string> = {};
  for (const d of first.json.datasets as { call_type: string; dataset_hash: string; card: unknown }[]) {
    datasets[d.call_type] = d.dataset_hash;
    writeFileSync(join(o.outDir, `dataset-card.${d.call_type}.json`), `${canonicalJson(d.card)}\n`);
  }
  say(
    `▶ froze suite ${o.suite}: ${Object.entries(datasets)
      .map(([ct, h]) => `${ct} ${h.slice(0, 12)}…`)
      .join(', ')}`,
  );
  const second = await freeze();
  const again: Record<string, string> = {};
  for (const d of second.json.datasets as { call_type: string; dataset_hash: string; created: boolean }[])
    again[d.call_type] = d.dataset_hash;
  const refreezeIdentical =
    second.status === 200 &&
    canonicalJson(again) === canonicalJson(datasets) &&
    (second.json.datasets as { created: boolean }[]).every((d) => !d.created);
  say(`▶ re-froze: ${refreezeIdentical ? 'identical hashes, nothing written' : 'DIFFERENT hashes'}`);

  const hash = datasets[o.callType];
  if (!hash) throw new Error(`the freeze produced no ${o.callType} dataset`);
  const frozenSpec = {
    name: `demo: frozen run of ${o.callType} dataset ${hash.slice(0, 12)}`,
    suite: o.suite,
    call_types: [o.callType],
    source: `frozen:${hash}`,
    incumbent: o.incumbent,
    candidates: [o.candidate],
    max_items: 500,
    max_cost_usd: o.maxCostUsd,
    margins: o.margins,
    scorers: [{ kind: 'expectations' }],
    aa_share: 0,
    bootstrap: { resamples: 2000, seed: o.seed },
  };
  const created = await api('POST', '/v1/campaigns', frozenSpec);
  if (created.status !== 201) throw new Error(`frozen run launch failed: ${created.status} ${created.text}`);
  const frozenId = String(created.json.campaign.id);
  say(`▶ frozen run ${frozenId} on frozen:${hash.slice(0, 12)}…`);
  const frozen = await untilFinal(api, frozenId, o.deadline, say);

  const pin = await api('PUT', `/v1/suites/${o.suite}/baseline`, { campaign_id: frozenId });
  if (pin.status !== 200) throw new Error(`pinning the baseline failed: ${pin.status} ${pin.text}`);
  say(
    `▶ baseline ${o.suite}:main = ${frozenId} arm ${pin.json.arm_id} (report ${String(pin.json.report_id).slice(0, 12)}…)`,
  );

  const specFile = join(o.outDir, 'bench-spec.json');
  writeFileSync(
    specFile,
    `${JSON.stringify({ candidates: [o.changedCandidate], margins: o.margins, scorers: [{ kind: 'expectations' }], max_items: 500, bootstrap: { resamples: 2000, seed: o.seed } }, null, 2)}\n`,
  );
  const junit = join(o.outDir, 'compare-junit.xml');
  const waitS = String(Math.max(30, Math.round((o.deadline - Date.now()) / 1000)));
  say(
    `▶ shadowctl bench run ${o.suite} --baseline ${o.suite}:main --gate (candidate ${String(o.changedCandidate.id)})`,
  );
  const gate = await shadowctl(
    [
      '--json',
      'bench',
      'run',
      o.suite,
      '--budget',
      String(o.maxCostUsd),
      '--baseline',
      `${o.suite}:main`,
      '--spec',
      specFile,
      '--gate',
      '--junit',
      junit,
      '--wait-s',
      waitS,
      '--poll-ms',
      '1000',
    ],
    { SHADOWPLANE_URL: o.controlUrl, SHADOWPLANE_API_KEY: o.apiKey },
  );
  if (gate.code !== 0 && gate.code !== 2)
    throw new Error(`bench run failed (exit ${gate.code}): ${gate.stderr.slice(-2000)}`);
  const out = JSON.parse(gate.stdout) as {
    campaign_id: string;
    report_id: string;
    gate: { pass: boolean; reason: string };
    report: { verdict_text?: string[] };
  };
  for (const l of out.report.verdict_text ?? []) say(`  ${l}`);
  say(`  gate: ${out.gate.pass ? 'PASS' : 'FAIL'} (exit ${gate.code}) — ${out.gate.reason}`);
  const bundle = await api('GET', `/v1/campaigns/${out.campaign_id}/report?format=bundle`);
  if (bundle.status !== 200) throw new Error(`compare bundle export failed: ${bundle.status}`);
  writeFileSync(join(o.outDir, 'compare-bundle.json'), bundle.text);

  const lifecycle: Lifecycle = {
    datasets,
    refreeze_identical: refreezeIdentical,
    frozen_run: {
      campaign_id: frozenId,
      dataset_hash: hash,
      call_type: o.callType,
      report_id: String(frozen.report.report_id),
      run_record_id: frozen.report.run_record_id ?? null,
      state: frozen.state,
    },
    baseline: {
      suite: o.suite,
      campaign_id: frozenId,
      arm_id: String(pin.json.arm_id),
      report_id: String(pin.json.report_id),
    },
    compare: {
      campaign_id: out.campaign_id,
      report_id: out.report_id,
      candidate: String(o.changedCandidate.id),
      gate_exit_code: gate.code,
      gate_reason: out.gate.reason,
    },
  };
  writeFileSync(join(o.outDir, 'lifecycle.json'), `${JSON.stringify(lifecycle, null, 2)}\n`);
  return lifecycle;
}
