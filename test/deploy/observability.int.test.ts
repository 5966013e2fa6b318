// Prometheus's own tools against what we ship: `promtool test rules` unit-tests every alert of the
// chart's PrometheusRule (rendered by helm from deploy/values-full.yaml) with
// deploy/alerts/shadowplane-alerts.test.yaml, each alert's runbook_url must name a section of
// docs/runbooks.md, and `promtool check metrics` must pass every role's /metrics as served.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { connectBus, provision } from '@shadowplane/bus';
import { randomPrefix, sharedNatsUrl } from '@shadowplane/testkit';
import { loadConfig, startSidecar } from '@shadowplane/sidecar';
import { hashApiKey, startControl } from '@shadowplane/control';
import { startVerdict } from '@shadowplane/verdict';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HELM = join(ROOT, '.bin', 'helm');
const ALERT_TESTS = join(ROOT, 'deploy', 'alerts', 'shadowplane-alerts.test.yaml');

function run(cmd: string, args: string[], input?: string) {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', input, maxBuffer: 64 * 1024 * 1024 });
  if (r.error)
    throw new Error(`${cmd} could not run (${r.error.message}); install it: scripts/ensure-system-deps.sh prometheus`);
  return { code: r.status ?? -1, out: `${r.stdout ?? ''}${r.stderr ?? ''}`, stdout: r.stdout ?? '' };
}

interface Rule {
  alert?: string;
  annotations?: Record<string, string>;
}

describe('alerts: promtool test rules over the chart PrometheusRule', () => {
  let rules: Array<{ name: string; rules: Rule[] }>;
  let dir: string;
  beforeAll(() => {
    if (!existsSync(HELM)) {
      const b = run('make', [HELM]);
      if (b.code !== 0) throw new Error(`building helm failed: ${b.out}`);
    }
    const r = run(HELM, [
      'template',
      'sp',
      join(ROOT, 'helm', 'shadowplane'),
      '--namespace',
      'shadowplane',
      '--kube-version',
      '1.35.1',
      '-f',
      join(ROOT, 'deploy', 'values-full.yaml'),
      '--show-only',
      'templates/prometheusrule.yaml',
    ]);
    if (r.code !== 0) throw new Error(`helm template failed: ${r.out}`);
    const doc = parseAllDocuments(r.stdout)
      .map((d) => d.toJS() as { kind: string; spec: { groups: typeof rules } } | null)
      .find((d) => d?.kind === 'PrometheusRule')!;
    rules = doc.spec.groups;
    dir = mkdtempSync(join(tmpdir(), 'alerts-'));
    writeFileSync(join(dir, 'rules.yaml'), stringify({ groups: rules }));
    copyFileSync(ALERT_TESTS, join(dir, 'tests.yaml'));
  }, 600_000);

  const alerts = () => rules.flatMap((g) => g.rules).filter((r) => r.alert);

  it('has a role-down alert and a budget alert that names the campaign', () => {
    const names = alerts().map((a) => a.alert);
    expect(names).toContain('ShadowplaneRoleDown');
    const budget = alerts().find((a) => a.alert === 'ShadowplaneBudgetNearlySpent')!;
    expect(budget.annotations!['summary']).toContain('$labels.campaign');
  });

  it('passes promtool check rules and promtool test rules, with a test for every alert', () => {
    const check = run('promtool', ['check', 'rules', join(dir, 'rules.yaml')]);
    expect(check.code, check.out).toBe(0);
    const t = run('promtool', ['test', 'rules', join(dir, 'tests.yaml')]);
    expect(t.code, t.out).toBe(0);
    expect(t.out).toContain('SUCCESS');
    const tested = new Set(
      (
        parse(readFileSync(ALERT_TESTS, 'utf8')) as { tests: Array<{ alert_rule_test?: Array<{ alertname: string }> }> }
      ).tests.flatMap((x) => (x.alert_rule_test ?? []).map((a) => a.alertname)),
    );
    for (const a of alerts()) expect(tested, `no promtool test for ${a.alert}`).toContain(a.alert);
  });

  it('gives every alert a runbook_url pointing at its own section of docs/runbooks.md', () => {
    const headings = new Set(
      [...readFileSync(join(ROOT, 'docs', 'runbooks.md'), 'utf8').matchAll(/^## (\S+)$/gm)].map((m) =>
        m[1]!.toLowerCase(),
      ),
    );
    for (const a of alerts()) {
      const url = a.annotations?.['runbook_url'] ?? '';
      expect(url, a.alert).toMatch(/\/docs\/runbooks\.md#[a-z]+$/);
      const anchor = url.split('#')[1]!;
      expect(anchor).toBe(a.alert!.toLowerCase());
      expect(headings, `docs/runbooks.md has no "## ${a.alert}"`).toContain(anchor);
    }
  });
});

const PROM_CLIENT_GAUGES_TOTAL = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

describe('metrics: promtool check metrics over every role /metrics', () => {
  const check = async (url: string) => {
    const text = await (await fetch(url)).text();
    const r = run('promtool', ['check', 'metrics'], text);
    return { text, ...r };
  };

  it('sidecar, control and verdict serve clean metrics with standard process_* and nodejs_* names and a role label', async () => {
    const natsUrl = sharedNatsUrl();
    const prefix = randomPrefix('obs');
    const bus = await connectBus({ url: natsUrl, name: 'obs-test', prefix });
    await provision(bus, { storage: 'memory' });
    const dir = mkdtempSync(join(tmpdir(), 'obs-'));
    writeFileSync(
      join(dir, 'keys.yaml'),
      stringify([{ id: 'ops', hash: hashApiKey('sk-test-observability-key-0001'), scopes: ['campaign:read'] }]),
    );
    writeFileSync(
      join(dir, 'providers.yaml'),
      stringify({ providers: [{ id: 'sim', base_url: 'http://127.0.0.1:9/v1', api: 'openai.chat' }] }),
    );
    const loaded = loadConfig(
      [
        '--listen',
        '127.0.0.1:0',
        '--upstream',
        'http://127.0.0.1:9',
        '--nats',
        natsUrl,
        '--prefix',
        prefix,
        '--sample',
        '0',
      ],
      { SHADOWPLANE_SIDECAR_OPS_LISTEN: '127.0.0.1:0', SHADOWPLANE_LOG_LEVEL: 'silent' },
    );
    if (loaded.kind !== 'config') throw new Error('sidecar config did not load');
    const sidecar = await startSidecar(loaded.config);
    const control = await startControl(
      {
        SHADOWPLANE_NATS_URL: natsUrl,
        SHADOWPLANE_NATS_PREFIX: prefix,
        SHADOWPLANE_CONTROL_LISTEN: '127.0.0.1:0',
        SHADOWPLANE_CONTROL_API_KEYS_FILE: join(dir, 'keys.yaml'),
        SHADOWPLANE_PROVIDERS_FILE: join(dir, 'providers.yaml'),
        SHADOWPLANE_CONTROL_STORAGE: 'memory',
        SHADOWPLANE_LOG_LEVEL: 'silent',
      },
      { logDestination: { write: () => undefined } },
    );
    const verdict = await startVerdict({ natsUrl, prefix, keyring: null, storage: 'memory' });
    try {
      // one control request so its labelled series exist; x-request-id is echoed
      const res = await fetch(`${control.url}/healthz`, { headers: { 'x-request-id': 'req-abc-123' } });
      expect(res.headers.get('x-request-id')).toBe('req-abc-123');
      const gen = await fetch(`${control.url}/healthz`, { headers: { 'x-request-id': 'bad id with spaces' } });
      expect(gen.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      for (const [role, url] of [
        ['sidecar', `${sidecar.opsUrl}/metrics`],
        ['control', `${control.url}/metrics`],
        ['verdict', `${verdict.opsUrl}/metrics`],
      ] as const) {
        const r = await check(url);
        // prom-client's three standard gauges nodejs_active_{handles,requests,resources}_total end
        // in _total; stock Node.js dashboards query those names, so they are kept and are the
        // only findings allowed. Anything else (ours) must be clean.
        const findings = r.out.split('\n').filter((l) => l.trim() !== '');
        const unexpected = findings.filter(
          (l) =>
            !PROM_CLIENT_GAUGES_TOTAL.some((n) =>
              l.startsWith(`${n} non-counter metrics should not have "_total" suffix`),
            ),
        );
        expect(unexpected, `${role}: ${r.out}`).toEqual([]);
        expect(
          r.code === 0 || (r.code === 3 && findings.length > 0),
          `${role}: promtool exit ${r.code}: ${r.out}`,
        ).toBe(true);
        expect(r.text, role).toMatch(new RegExp(`^process_cpu_seconds_total\\{role="${role}"\\} `, 'm'));
        expect(r.text, role).toMatch(new RegExp(`^nodejs_eventloop_lag_seconds\\{role="${role}"\\} `, 'm'));
        expect(r.text, role).not.toMatch(/^shadowplane_\w+_process_/m);
      }
    } finally {
      await verdict.close();
      await control.close();
      await sidecar.stop();
      await bus.close();
    }
  }, 120_000);
});
