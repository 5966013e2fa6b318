// The deploy checks under vitest: the same pipeline as `make helm-check` (helm lint --strict,
// helm template, kubeconform against the committed Kubernetes schemas, policy assertions, the
// sample router with the sidecar merged in, the Dockerfile lint), plus negative cases proving the
// checks reject what they claim to, and agreement between what the chart sets and what the roles'
// own config schemas accept. Tools come from .bin/ (built by `make helm-tools` when missing).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { SidecarEnv, SidecarFile } from '@shadowplane/sidecar';
import { ControlEnv } from '@shadowplane/control';
import { VerdictEnv } from '@shadowplane/verdict';
import { DuplicatorEnv } from '@shadowplane/duplicator';
import { loadProviderAllowlist } from '@shadowplane/config';
import { WIRE_ADAPTERS, requestUrl } from '@shadowplane/providers';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, '.bin');
const HELM = join(BIN, 'helm');
const CHART = join(ROOT, 'helm', 'shadowplane');
const ROUTER = join(ROOT, 'deploy', 'examples', 'router');
const TOOLS = ['helm', 'kubeconform', 'dockerfile-lint', 'promql-lint'];

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
}
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: unknown;
}

function run(cmd: string, args: string[], opts: { cwd?: string; input?: string } = {}) {
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd ?? ROOT,
    encoding: 'utf8',
    input: opts.input,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status ?? -1, out: `${r.stdout ?? ''}${r.stderr ?? ''}`, stdout: r.stdout ?? '' };
}

function template(chart: string, release: string, valuesFiles: string[] = [], sets: string[] = []): K8sObject[] {
  const args = [
    'template',
    release,
    chart,
    '--namespace',
    'shadowplane',
    '--kube-version',
    '1.35.1',
    ...valuesFiles.flatMap((f) => ['-f', f]),
    ...sets.flatMap((s) => ['--set', s]),
  ];
  const r = run(HELM, args);
  if (r.code !== 0) throw new Error(`helm template failed: ${r.out}`);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

const find = (objs: K8sObject[], kind: string, name: string) => {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o)
    throw new Error(`${kind}/${name} not rendered; have ${objs.map((x) => `${x.kind}/${x.metadata.name}`).join(', ')}`);
  return o;
};
const container = (d: K8sObject, name: string) => {
  const c = (d.spec.template.spec.containers as { name: string }[]).find((x) => x.name === name);
  if (!c) throw new Error(`no container ${name} in ${d.metadata.name}`);
  return c as { name: string; args: string[]; env: EnvVar[]; [k: string]: any };
};
const envMap = (env: EnvVar[]) =>
  Object.fromEntries(env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));

beforeAll(() => {
  const missing = TOOLS.filter((t) => !existsSync(join(BIN, t)));
  if (missing.length > 0) {
    // Builds from the Go modules (minutes on a cold Go cache). Fails loudly if Go cannot build them.
    const r = run('make', ['helm-tools']);
    if (r.code !== 0) throw new Error(`missing ${missing.join(', ')} and \`make helm-tools\` failed:\n${r.out}`);
  }
}, 30 * 60_000);

describe('make helm-check pipeline', () => {
  it('passes end to end: lint, render, schema validation, policies, sample router, Dockerfile lint', () => {
    const r = run(join(ROOT, 'deploy', 'tools', 'helm-check.sh'), []);
    expect(r.out).toContain('helm-check: OK');
    expect(r.code).toBe(0);
    // every rendering was schema-validated with nothing invalid (CRDs skipped, and said so)
    const summaries = r.out.split('\n').filter((l) => l.startsWith('Summary:'));
    expect(summaries).toHaveLength(9); // default, staging, full, 5 --set variants, the sample router
    for (const s of summaries) expect(s).toMatch(/Invalid: 0, Errors: 0/);
  }, 180_000);
});

describe('default values', () => {
  let objs: K8sObject[];
  beforeAll(() => {
    objs = template(CHART, 'sp');
  });

  it('renders the three roles with their Services, PDBs, NetworkPolicies, a CPU HPA and no Secret', () => {
    const kinds = objs.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    expect(kinds).toEqual(
      [
        'ConfigMap/sp-shadowplane-providers',
        'Deployment/sp-shadowplane-control',
        'Deployment/sp-shadowplane-duplicator',
        'Deployment/sp-shadowplane-verdict',
        'HorizontalPodAutoscaler/sp-shadowplane-duplicator',
        'NetworkPolicy/sp-shadowplane-control',
        'NetworkPolicy/sp-shadowplane-duplicator',
        'NetworkPolicy/sp-shadowplane-verdict',
        'PodDisruptionBudget/sp-shadowplane-control',
        'PodDisruptionBudget/sp-shadowplane-duplicator',
        'PodDisruptionBudget/sp-shadowplane-verdict',
        'Service/sp-shadowplane-control',
        'Service/sp-shadowplane-duplicator',
        'Service/sp-shadowplane-verdict',
        'ServiceAccount/sp-shadowplane',
      ].sort(),
    );
  });

  it('runs each role as `shadowplane <role>` from the one image, uid 10001, read-only root, /tmp an emptyDir', () => {
    for (const role of ['duplicator', 'control', 'verdict']) {
      const d = find(objs, 'Deployment', `sp-shadowplane-${role}`);
      const c = container(d, role);
      expect(c.args).toEqual([role]);
      expect(c.image).toBe('ghcr.io/shadowplane/shadowplane:0.1.0');
      expect(c.securityContext).toMatchObject({
        runAsNonRoot: true,
        runAsUser: 10001,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      });
      expect(c.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
      expect(d.spec.template.spec.volumes).toContainEqual({ name: 'tmp', emptyDir: { sizeLimit: '256Mi' } });
      expect(d.spec.template.spec.automountServiceAccountToken).toBe(false);
    }
  });

  it('gives the control role an environment its own config schema accepts', () => {
    const c = container(find(objs, 'Deployment', 'sp-shadowplane-control'), 'control');
    const env = envMap(c.env);
    expect(env).toMatchObject({
      SHADOWPLANE_CONTROL_LISTEN: '0.0.0.0:8090',
      SHADOWPLANE_CONTROL_API_KEYS_FILE: '/var/run/secrets/shadowplane/api-keys/api-keys.yaml',
      SHADOWPLANE_PROVIDERS_FILE: '/etc/shadowplane/providers/providers.yaml',
      SHADOWPLANE_NATS_URL: 'nats://nats:4222',
    });
    const parsed = ControlEnv.safeParse(env);
    expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
    for (const k of Object.keys(env)) expect(Object.keys(ControlEnv.shape)).toContain(k);
  });
});

/** Asserts every variable the chart sets is one the role reads, and the role's schema accepts them. */
function expectEnvAccepted(
  schema: {
    shape: Record<string, unknown>;
    safeParse: (v: unknown) => { success: boolean; error?: { issues: unknown[] } };
  },
  env: Record<string, string | undefined>,
) {
  // OTEL_* are the OpenTelemetry SDK's own variables (read by it through libs/telemetry startTracing)
  const ours = Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('OTEL_')));
  for (const k of Object.keys(ours)) expect(Object.keys(schema.shape), `${k} is not read by the role`).toContain(k);
  const parsed = schema.safeParse(ours);
  expect(parsed.success ? [] : parsed.error!.issues).toEqual([]);
}

describe('what the chart sets is what the roles read', () => {
  for (const [label, files] of [
    ['default values', []],
    ['full values', [join(ROOT, 'deploy', 'values-full.yaml')]],
  ] as const) {
    it(`duplicator, control and verdict accept their environment (${label})`, () => {
      const objs = template(CHART, 'sp', [...files]);
      const byRole = (role: string) => {
        const d = objs.find((o) => o.kind === 'Deployment' && o.metadata.name.endsWith(`-${role}`))!;
        // secretKeyRef values are resolved by the kubelet; stand in a URL of the right shape
        const stand: Record<string, string> = {
          SHADOWPLANE_NATS_URL: 'nats://nats:4222',
          SHADOWPLANE_REDIS_URL: 'redis://redis:6379',
        };
        const env = container(d, role).env.map((e): EnvVar => {
          const v = stand[e.name];
          return e.value === undefined && v !== undefined ? { name: e.name, value: v } : e;
        });
        return envMap(env);
      };
      expectEnvAccepted(DuplicatorEnv, byRole('duplicator'));
      expectEnvAccepted(ControlEnv, byRole('control'));
      expectEnvAccepted(VerdictEnv, byRole('verdict'));
    });
  }

  for (const values of ['values-staging.yaml', 'values-full.yaml']) {
    it(`renders a providers allowlist the roles load, each base_url reaching its API's real path (${values})`, () => {
      const objs = template(CHART, 'sp', [join(ROOT, 'deploy', values)]);
      const cm = objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name.endsWith('-providers'))!;
      const file = join(mkdtempSync(join(tmpdir(), 'sp-providers-')), 'providers.yaml');
      writeFileSync(file, cm.data!['providers.yaml']!);
      const entries = loadProviderAllowlist(file); // refuses a base_url that breaks the adapters' rule
      expect(entries.length).toBeGreaterThan(0);
      for (const e of entries) {
        const url = new URL(requestUrl(e.api, e.base_url));
        expect(url.pathname, `${e.id}: ${e.base_url}`).toBe(WIRE_ADAPTERS[e.api].publicPath);
      }
    });
  }
});

describe('sample router Deployment with the sidecar merged in', () => {
  let objs: K8sObject[];
  beforeAll(() => {
    objs = template(ROUTER, 'edge');
  });

  it('carries the router and the shadowplane-sidecar container with the values from deploy/examples/router/values.yaml', () => {
    const d = find(objs, 'Deployment', 'edge-llm-router');
    const names = (d.spec.template.spec.containers as { name: string }[]).map((c) => c.name);
    expect(names).toEqual(['router', 'shadowplane-sidecar']);
    const sc = container(d, 'shadowplane-sidecar');
    expect(sc.args).toEqual(['sidecar']);
    expect(envMap(sc.env)).toMatchObject({
      SHADOWPLANE_NATS_URL: 'nats://nats.shadowplane.svc.cluster.local:4222',
      SHADOWPLANE_SIDECAR_LISTEN: '0.0.0.0:8080',
      SHADOWPLANE_SIDECAR_OPS_LISTEN: '0.0.0.0:9464',
      SHADOWPLANE_SIDECAR_UPSTREAM: 'http://127.0.0.1:8000',
      SHADOWPLANE_SIDECAR_SAMPLE: '0.05',
      SHADOWPLANE_SIDECAR_SUITE: 'support-bot',
      SHADOWPLANE_SIDECAR_PLACEMENT: 'ingress',
      SHADOWPLANE_SIDECAR_CONFIG: '/etc/shadowplane/sidecar/sidecar.yaml',
      SHADOWPLANE_SIDECAR_STICKY_HEADER: 'x-conversation-id',
      SHADOWPLANE_SIDECAR_STICKY_SALT_FILE: '/var/run/secrets/shadowplane/sticky-salt/salt',
    });
    expect(sc.env).toContainEqual({
      name: 'SHADOWPLANE_SIDECAR_ID',
      valueFrom: { fieldRef: { fieldPath: 'metadata.name' } },
    });
    expect(sc.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'sp-ops' });
    expect(sc.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'sp-ops' });
    // keeps accepting while the pod leaves the Service endpoints; the pod's grace period covers it
    expect(sc.lifecycle.preStop.exec.command).toEqual(['sleep', '5']);
    expect(d.spec.template.spec.terminationGracePeriodSeconds).toBe(45);
    const vols = d.spec.template.spec.volumes as {
      name: string;
      configMap?: { name: string };
      secret?: { secretName: string };
    }[];
    expect(vols.find((v) => v.name === 'shadowplane-sidecar-config')?.configMap?.name).toBe('edge-shadowplane-sidecar');
    expect(vols.find((v) => v.name === 'shadowplane-sticky-salt')?.secret?.secretName).toBe('shadowplane-sticky-salt');
    // the Service sends clients to the sidecar, which forwards to the router on loopback
    expect(find(objs, 'Service', 'edge-llm-router').spec.ports[0].targetPort).toBe('sp-proxy');
  });

  it('sets only variables the sidecar reads, with values its env schema accepts', () => {
    const sc = container(find(objs, 'Deployment', 'edge-llm-router'), 'shadowplane-sidecar');
    const env = { ...envMap(sc.env), SHADOWPLANE_SIDECAR_ID: 'edge-llm-router-5d9c7-abcde' };
    for (const k of Object.keys(env)) expect(Object.keys(SidecarEnv.shape)).toContain(k);
    const parsed = SidecarEnv.safeParse(env);
    expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
  });

  it('renders a sidecar config file the sidecar file schema accepts', () => {
    const cm = find(objs, 'ConfigMap', 'edge-shadowplane-sidecar');
    const doc = parseAllDocuments(cm.data!['sidecar.yaml']!)[0]!.toJS();
    expect(doc).toEqual({
      sampling: {
        rules: [{ name: 'chat', path_prefix: '/v1/chat/completions', rate: 0.05, call_type: 'openai_chat' }],
      },
    });
    const parsed = SidecarFile.safeParse(doc);
    expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
  });

  it('constrains the router pods to DNS, NATS and the router’s own egress (not the whole internet on any port)', () => {
    const np = find(objs, 'NetworkPolicy', 'edge-shadowplane-sidecar-egress');
    expect(np.spec.podSelector).toEqual({ matchLabels: { 'app.kubernetes.io/name': 'llm-router' } });
    expect(np.spec.policyTypes).toEqual(['Egress']);
    const ports = (np.spec.egress as { ports: { port: number }[] }[]).map((r) => r.ports.map((p) => p.port));
    expect(ports).toEqual([[53, 53], [4222], [443]]);
  });
});

describe('full values', () => {
  let objs: K8sObject[];
  beforeAll(() => {
    objs = template(CHART, 'sp', [join(ROOT, 'deploy', 'values-full.yaml')]);
  });

  it('gives every role the standard OTEL_* variables when otlp.endpoint is set, service name per role', () => {
    const dep = (o: K8sObject[], role: string) =>
      o.find((x) => x.kind === 'Deployment' && x.metadata.name === `sp-${role}`)!;
    for (const role of ['duplicator', 'control', 'verdict']) {
      expect(envMap(container(dep(objs, role), role).env)).toMatchObject({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector.observability:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_SERVICE_NAME: `shadowplane-${role}`,
        OTEL_RESOURCE_ATTRIBUTES: 'k8s.namespace.name=shadowplane',
      });
    }
    const set = template(
      CHART,
      'sp',
      [join(ROOT, 'deploy', 'values-full.yaml')],
      [
        'otlp.protocol=http/json',
        'otlp.serviceNames.duplicator=dup-eu',
        'otlp.resourceAttributes=deployment.environment.name=prod',
      ],
    );
    expect(envMap(container(dep(set, 'duplicator'), 'duplicator').env)).toMatchObject({
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'dup-eu',
      OTEL_RESOURCE_ATTRIBUTES: 'k8s.namespace.name=shadowplane,deployment.environment.name=prod',
    });
    expect(envMap(container(dep(set, 'verdict'), 'verdict').env)['OTEL_SERVICE_NAME']).toBe('shadowplane-verdict');
    // without an endpoint no role gets any OTEL_* variable (tracing stays off)
    for (const o of template(CHART, 'sp').filter((x) => x.kind === 'Deployment'))
      for (const c of o.spec.template.spec.containers as { env: { name: string }[] }[])
        expect(c.env.map((e) => e.name).filter((n) => n.startsWith('OTEL_'))).toEqual([]);
  });

  it('lets the duplicator reach only DNS, NATS, the providers’ CIDRs, Redis and the OTLP collector', () => {
    const np = find(objs, 'NetworkPolicy', 'sp-duplicator');
    const rules = np.spec.egress as { to: Record<string, any>[]; ports: { port: number; protocol: string }[] }[];
    const summary = rules.map((r) => ({
      to: r.to.map((t) => (t.ipBlock ? t.ipBlock.cidr : Object.keys(t).sort().join('+'))),
      ports: r.ports.map((p) => p.port),
    }));
    expect(summary).toEqual([
      { to: ['namespaceSelector+podSelector'], ports: [53, 53] },
      { to: ['namespaceSelector+podSelector'], ports: [4222] },
      { to: ['namespaceSelector'], ports: [4318] },
      { to: ['192.0.2.0/24', '198.51.100.0/24'], ports: [443] },
      { to: ['203.0.113.0/24'], ports: [443] },
      { to: ['podSelector'], ports: [6379] },
    ]);
  });

  it('runs every role against R3 streams and buckets (nats.replicas: 3, the 3-node JetStream cluster)', () => {
    for (const d of objs.filter((o) => o.kind === 'Deployment' || o.kind === 'DaemonSet')) {
      for (const c of d.spec.template.spec.containers as { name: string; env: EnvVar[] }[]) {
        if (!c.env.some((e) => e.name === 'SHADOWPLANE_NATS_URL')) continue;
        expect({ pod: d.metadata.name, container: c.name, replicas: envMap(c.env).SHADOWPLANE_NATS_REPLICAS }).toEqual({
          pod: d.metadata.name,
          container: c.name,
          replicas: '3',
        });
      }
    }
  });

  it('scales the duplicator with KEDA on the named JetStream consumer instead of the CPU HPA', () => {
    expect(objs.some((o) => o.kind === 'HorizontalPodAutoscaler')).toBe(false);
    const so = find(objs, 'ScaledObject', 'sp-duplicator');
    expect(so.spec.triggers[0]).toEqual({
      type: 'nats-jetstream',
      metadata: {
        natsServerMonitoringEndpoint: 'nats-headless.nats.svc.cluster.local:8222',
        account: '$G',
        stream: 'prod_CAPTURE',
        consumer: 'duplicator',
        lagThreshold: '200',
      },
    });
    expect(find(objs, 'Deployment', 'sp-duplicator').spec.replicas).toBeUndefined();
  });

  it('pins the image by digest and reads secrets only from mounted files or secretKeyRefs', () => {
    const d = find(objs, 'Deployment', 'sp-duplicator');
    const c = container(d, 'duplicator');
    expect(c.image).toBe(
      'ghcr.io/shadowplane/shadowplane@sha256:0000000000000000000000000000000000000000000000000000000000000000',
    );
    expect(c.env).toContainEqual({
      name: 'SHADOWPLANE_NATS_URL',
      valueFrom: { secretKeyRef: { name: 'shadowplane-nats', key: 'url' } },
    });
    expect(c.env).toContainEqual({
      name: 'SHADOWPLANE_REDIS_URL',
      valueFrom: { secretKeyRef: { name: 'shadowplane-redis', key: 'url' } },
    });
    const providers = parseAllDocuments(
      find(objs, 'ConfigMap', 'sp-providers').data!['providers.yaml']!,
    )[0]!.toJS() as { providers: Record<string, string>[] };
    expect(providers.providers[0]).toEqual({
      id: 'openai',
      base_url: 'https://api.openai.com/v1',
      api: 'openai.chat',
      family: 'openai',
      api_key_file: '/var/run/secrets/shadowplane/providers/openai',
    });
    expect(objs.some((o) => o.kind === 'Secret')).toBe(false);
  });
});

describe('the checks reject what they claim to', () => {
  it('values.schema.json refuses a root user, a writable root filesystem, missing limits and unknown keys', () => {
    const cases: [string, RegExp][] = [
      ['containerSecurityContext.runAsUser=0', /runAsUser/],
      ['containerSecurityContext.readOnlyRootFilesystem=false', /readOnlyRootFilesystem/],
      ['duplicator.resources.limits=null', /limits/],
      ['duplicator.replica=3', /replica/],
    ];
    for (const [set, why] of cases) {
      const r = run(HELM, ['lint', '--strict', CHART, '--set', set]);
      expect(r.code, set).not.toBe(0);
      expect(r.out, set).toMatch(why);
    }
  });

  it('the policy checker names a root container without probes or limits', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-policy-'));
    const bad = join(dir, 'bad.yaml');
    writeFileSync(
      bad,
      `apiVersion: apps/v1
kind: Deployment
metadata:
  name: bad
  labels: {app.kubernetes.io/name: x, app.kubernetes.io/instance: y, app.kubernetes.io/managed-by: Helm}
spec:
  selector: {matchLabels: {app: bad}}
  template:
    metadata: {labels: {app: bad}}
    spec:
      containers:
        - name: app
          image: example/app:latest
          securityContext: {runAsUser: 0}
          resources: {requests: {cpu: 100m, memory: 64Mi}}
`,
    );
    const r = run('node', [join(ROOT, 'deploy', 'tools', 'check-manifests.mjs'), bad]);
    expect(r.code).toBe(1);
    for (const msg of [
      'container app: runAsNonRoot is not true (may run as root)',
      'container app: runAsUser is 0 (root)',
      'container app: no resources.limits.cpu',
      'container app: no resources.limits.memory',
      'container app: no livenessProbe',
      'container app: no readinessProbe',
      'container app: readOnlyRootFilesystem is not true',
      'container app: image example/app:latest is untagged or :latest',
    ]) {
      expect(r.out).toContain(`Deployment/bad: ${msg}`);
    }
  });

  it('the Dockerfile linter fails a root, unpinned, remotely-ADDed, health-checked image', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-dockerfile-'));
    writeFileSync(
      join(dir, 'Dockerfile'),
      `FROM node:latest
ADD https://example.com/tool.tgz /tmp/
RUN npm ci
HEALTHCHECK CMD curl -f http://localhost/ || exit 1
ENTRYPOINT node server.js
`,
    );
    writeFileSync(join(dir, '.dockerignore'), 'node_modules\n');
    const r = run(join(BIN, 'dockerfile-lint'), ['-f', join(dir, 'Dockerfile'), '-context', dir]);
    expect(r.code).toBe(1);
    for (const msg of [
      'base image "node:latest" uses the latest tag',
      'ADD of a remote source "https://example.com/tool.tgz"',
      'npm install without --omit=dev',
      'HEALTHCHECK present',
      'final stage: no USER (would run as root)',
      'ENTRYPOINT in shell form',
      'buildkit rule JSONArgsRecommended',
    ]) {
      expect(r.out).toContain(msg);
    }
  });

  it('the PromQL linter fails an alert whose expression does not parse or that lacks severity and summary', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-promql-'));
    const rules = join(dir, 'rules.yaml');
    writeFileSync(
      rules,
      `apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: bad}
spec:
  groups:
    - name: g
      rules:
        - alert: Broken
          expr: sum by (pod (rate(shadowplane_sidecar_requests_total[5m]))
`,
    );
    const r = run(join(BIN, 'promql-lint'), ['-rules', rules]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('rule g/Broken: 1:13: parse error: unexpected "(" in grouping opts'); // column of the second (
    expect(r.out).toContain('alert Broken: no severity label');
    expect(r.out).toContain('alert Broken: no summary annotation');
  });

  it('the committed Dockerfile passes the linter', () => {
    const r = run(join(BIN, 'dockerfile-lint'), ['-f', join(ROOT, 'Dockerfile'), '-context', ROOT]);
    expect(r.out).toContain('final stage runs as numeric non-root user 10001:10001');
    expect(r.code).toBe(0);
  });
});
