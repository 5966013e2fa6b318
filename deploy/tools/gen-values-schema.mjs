// Generates helm/shadowplane/values.schema.json (strict: additionalProperties false on every
// Shadowplane-owned object; Kubernetes pass-through objects such as affinity stay open).
// Run: node deploy/tools/gen-values-schema.mjs  (the helm-check target verifies it is up to date)
import { writeFileSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const out = fileURLToPath(new URL('../../helm/shadowplane/values.schema.json', import.meta.url));

const obj = (properties, required = [], extra = {}) => ({
  type: 'object',
  additionalProperties: false,
  properties,
  ...(required.length ? { required } : {}),
  ...extra,
});
const str = (extra = {}) => ({ type: 'string', ...extra });
const bool = { type: 'boolean' };
const int = (minimum, maximum, extra = {}) => ({
  type: 'integer',
  ...(minimum !== undefined ? { minimum } : {}),
  ...(maximum !== undefined ? { maximum } : {}),
  ...extra,
});
const port = int(1, 65535);
const openObj = { type: 'object' };
const peers = {
  type: 'array',
  items: { type: 'object' },
  description: 'NetworkPolicyPeer list (namespaceSelector / podSelector / ipBlock)',
};
const ports = { type: 'array', items: port };
const quantity = {
  anyOf: [
    { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti)?$' },
    { type: 'number', minimum: 0 },
  ],
};
const resourceList = obj({ cpu: quantity, memory: quantity, 'ephemeral-storage': quantity }, ['cpu', 'memory']);
const resources = obj({ requests: resourceList, limits: resourceList }, ['requests', 'limits'], {
  description: 'requests and limits are both required (cpu and memory)',
});
const envMap = {
  type: 'object',
  additionalProperties: { type: ['string', 'number', 'boolean'] },
  propertyNames: { pattern: '^[A-Z_][A-Z0-9_]*$' },
  description: 'extra environment variables, NAME → value',
};
const pdb = obj({ enabled: bool, maxUnavailable: { anyOf: [int(0), str({ pattern: '^[0-9]+%$' })] } }, [
  'enabled',
  'maxUnavailable',
]);
const hostPort = str({ pattern: '^(\\[[0-9a-fA-F:.]+\\]|[A-Za-z0-9.-]+):[0-9]{1,5}$' });
const secretRef = obj({ name: str(), key: str({ minLength: 1 }) }, ['name', 'key']);
const scheduling = {
  nodeSelector: { type: 'object', additionalProperties: { type: 'string' } },
  tolerations: { type: 'array', items: openObj },
  affinity: openObj,
  topologySpreadConstraints: { type: 'array', items: openObj },
  podAnnotations: { type: 'object', additionalProperties: { type: 'string' } },
  priorityClassName: str(),
};
const grace = int(1, 3600);
const replicas = int(0, 100);
const dnsLabel = str({ pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 });
const secretName = {
  type: 'string',
  anyOf: [{ const: '' }, { pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$' }],
  maxLength: 253,
};

const schema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'Shadowplane Helm chart values',
  ...obj(
    {
      global: openObj,
      nameOverride: str({ maxLength: 40 }),
      fullnameOverride: str({ maxLength: 50 }),
      commonLabels: { type: 'object', additionalProperties: { type: 'string' } },
      image: obj(
        {
          repository: str({ minLength: 1 }),
          tag: str(),
          digest: { type: 'string', anyOf: [{ const: '' }, { pattern: '^sha256:[0-9a-f]{64}$' }] },
          pullPolicy: { enum: ['Always', 'IfNotPresent', 'Never'] },
        },
        ['repository', 'tag', 'digest', 'pullPolicy'],
      ),
      imagePullSecrets: { type: 'array', items: obj({ name: str({ minLength: 1 }) }, ['name']) },
      serviceAccount: obj(
        { create: bool, name: str(), annotations: { type: 'object', additionalProperties: { type: 'string' } } },
        ['create', 'name'],
      ),
      nats: obj(
        {
          url: str({
            pattern: '^(nats|tls|ws|wss)://[^,\\s]+(,(nats|tls|ws|wss)://[^,\\s]+)*$',
            description: 'SHADOWPLANE_NATS_URL',
          }),
          urlSecret: secretRef,
          prefix: str({ pattern: '^[A-Za-z0-9_-]{0,32}$', description: 'SHADOWPLANE_NATS_PREFIX' }),
          replicas: int(1, 5, { description: 'SHADOWPLANE_NATS_REPLICAS' }),
          networkPolicy: obj({ peers, ports }, ['peers', 'ports']),
        },
        ['url', 'urlSecret', 'prefix', 'replicas', 'networkPolicy'],
      ),
      logLevel: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
      otlp: obj(
        {
          endpoint: { type: 'string', anyOf: [{ const: '' }, { pattern: '^https?://' }] },
          protocol: { type: 'string', enum: ['http/protobuf', 'http/json', 'grpc'] },
          serviceNames: obj(
            Object.fromEntries(
              ['sidecar', 'duplicator', 'control', 'verdict'].map((r) => [r, { type: 'string', maxLength: 255 }]),
            ),
            [],
          ),
          resourceAttributes: { type: 'string', pattern: '^$|^[^=,]+=[^,]*(,[^=,]+=[^,]*)*$' },
          networkPolicy: obj({ peers, ports }, ['peers', 'ports']),
        },
        ['endpoint'],
      ),
      redis: obj(
        {
          url: { type: 'string', anyOf: [{ const: '' }, { pattern: '^rediss?://' }] },
          urlSecret: secretRef,
          networkPolicy: obj({ peers, ports }, ['peers', 'ports']),
        },
        ['url', 'urlSecret'],
      ),
      providers: obj(
        {
          allowlist: {
            type: 'array',
            items: obj(
              {
                id: str({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' }),
                // the adapters' base_url rule (libs/providers): the API root ending at its version
                base_url: str({ pattern: '^https?://[^?#]*/v[0-9]+((alpha|beta)[0-9]*)?/?$' }),
                api: { enum: ['openai.chat', 'openai.responses', 'anthropic.messages', 'openrouter.chat'] },
                family: str(),
                apiKeySecretKey: str({
                  pattern: '^[-._a-zA-Z0-9]+$',
                  description: "key of providers.existingSecret holding this provider's API key",
                }),
              },
              ['id', 'base_url', 'api'],
            ),
          },
          existingSecret: secretName,
          egress: {
            type: 'array',
            items: obj(
              { cidrs: { type: 'array', minItems: 1, items: str({ pattern: '^[0-9a-fA-F:.]+/[0-9]{1,3}$' }) }, ports },
              ['cidrs'],
            ),
          },
        },
        ['allowlist', 'existingSecret', 'egress'],
      ),
      artifacts: obj({ existingSecret: secretName, key: str({ minLength: 1 }) }, ['existingSecret', 'key']),
      podSecurityContext: obj(
        {
          runAsNonRoot: { const: true },
          runAsUser: int(1),
          runAsGroup: int(1),
          fsGroup: int(1),
          seccompProfile: openObj,
        },
        ['runAsNonRoot', 'runAsUser'],
      ),
      containerSecurityContext: obj(
        {
          runAsNonRoot: { const: true },
          runAsUser: int(1),
          runAsGroup: int(1),
          allowPrivilegeEscalation: { const: false },
          readOnlyRootFilesystem: { const: true },
          privileged: { const: false },
          capabilities: obj(
            { drop: { type: 'array', contains: { const: 'ALL' }, items: str() }, add: { type: 'array', maxItems: 0 } },
            ['drop'],
          ),
          seccompProfile: openObj,
        },
        ['runAsNonRoot', 'allowPrivilegeEscalation', 'readOnlyRootFilesystem', 'capabilities'],
      ),
      tmpSizeLimit: quantity,
      networkPolicy: obj({ enabled: bool, dns: obj({ peers }, ['peers']), metricsFrom: peers }, [
        'enabled',
        'dns',
        'metricsFrom',
      ]),
      duplicator: obj(
        {
          enabled: bool,
          replicas,
          env: envMap,
          opsPort: port,
          resources,
          terminationGracePeriodSeconds: grace,
          autoscaling: obj(
            { enabled: bool, minReplicas: int(1), maxReplicas: int(1), targetCPUUtilizationPercentage: int(1, 100) },
            ['enabled', 'minReplicas', 'maxReplicas', 'targetCPUUtilizationPercentage'],
          ),
          keda: obj(
            {
              enabled: bool,
              minReplicas: int(0),
              maxReplicas: int(1),
              trigger: { enum: ['prometheus', 'nats-jetstream'] },
              prometheusServerAddress: str(),
              prometheusQuery: str(),
              natsServerMonitoringEndpoint: str(),
              account: str(),
              stream: str(),
              consumer: str(),
              lagThreshold: { type: ['string', 'integer'] },
              pollingInterval: int(1),
              cooldownPeriod: int(0),
            },
            ['enabled'],
          ),
          pdb,
          ...scheduling,
        },
        ['enabled', 'replicas', 'opsPort', 'resources', 'autoscaling', 'keda', 'pdb'],
      ),
      control: obj(
        {
          enabled: bool,
          replicas,
          env: envMap,
          port,
          apiKeys: obj({ existingSecret: secretName, key: str({ minLength: 1 }) }, ['existingSecret', 'key']),
          mountArtifactKeys: bool,
          service: obj(
            {
              type: { enum: ['ClusterIP', 'NodePort', 'LoadBalancer'] },
              port,
              annotations: { type: 'object', additionalProperties: { type: 'string' } },
            },
            ['type', 'port'],
          ),
          ingressFrom: peers,
          preStopSleepSeconds: int(0, 120),
          resources,
          terminationGracePeriodSeconds: grace,
          pdb,
          ...scheduling,
        },
        ['enabled', 'replicas', 'port', 'apiKeys', 'service', 'resources', 'pdb'],
      ),
      verdict: obj(
        {
          enabled: bool,
          replicas,
          env: envMap,
          opsPort: port,
          resources,
          terminationGracePeriodSeconds: grace,
          pdb,
          ...scheduling,
        },
        ['enabled', 'replicas', 'opsPort', 'resources', 'pdb'],
      ),
      sidecar: obj(
        {
          enabled: bool,
          listen: hostPort,
          opsListen: hostPort,
          placement: { enum: ['ingress', 'egress'] },
          upstream: { type: 'string', anyOf: [{ const: '' }, { pattern: '^https?://' }] },
          routes: {
            type: 'array',
            items: obj(
              {
                path_prefix: str({ pattern: '^/' }),
                host: str(),
                upstream: str({ pattern: '^https?://' }),
                strip_prefix: bool,
                preserve_host: bool,
                placement: { enum: ['ingress', 'egress'] },
              },
              ['upstream'],
            ),
          },
          sampleRate: { type: 'number', minimum: 0, maximum: 1 },
          suite: str({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
          sampling: {
            type: 'object',
            description: 'the sampling section of the sidecar config file (validated by the sidecar at start)',
          },
          stickyHeader: str({ pattern: "^([A-Za-z0-9!#$%&'*+.^_`|~-]+)?$" }),
          stickySaltSecret: secretRef,
          env: envMap,
          resources,
          preStopSleepSeconds: int(0, 120),
          portNames: obj({ proxy: str({ pattern: '^[a-z0-9-]{1,15}$' }), ops: str({ pattern: '^[a-z0-9-]{1,15}$' }) }, [
            'proxy',
            'ops',
          ]),
          routerPodSelector: openObj,
          networkPolicy: obj({ enabled: bool, extraEgress: { type: 'array', items: openObj } }, ['enabled']),
          podMonitor: obj({ enabled: bool }, ['enabled']),
        },
        ['enabled', 'listen', 'opsListen', 'placement', 'resources', 'portNames'],
      ),
      metrics: obj(
        {
          serviceMonitor: obj(
            {
              enabled: bool,
              interval: str({ pattern: '^[0-9]+(ms|s|m|h)$' }),
              labels: { type: 'object', additionalProperties: { type: 'string' } },
            },
            ['enabled'],
          ),
          prometheusRule: obj(
            {
              enabled: bool,
              labels: { type: 'object', additionalProperties: { type: 'string' } },
              captureDropRatePerSecond: { type: 'number', minimum: 0 },
              noPublishMinutes: int(1),
              consumerLagMessages: int(1),
              for: str({ pattern: '^[0-9]+(s|m|h)$' }),
              roleDownFor: str({ pattern: '^[0-9]+(s|m|h)$' }),
              budgetUsedRatio: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
              runbookBaseUrl: str({ pattern: '^https?://' }),
            },
            ['enabled'],
          ),
        },
        ['serviceMonitor', 'prometheusRule'],
      ),
    },
    [
      'image',
      'nats',
      'providers',
      'artifacts',
      'podSecurityContext',
      'containerSecurityContext',
      'duplicator',
      'control',
      'verdict',
      'sidecar',
      'metrics',
    ],
  ),
};
void dnsLabel;

const text = JSON.stringify(schema, null, 2) + '\n';
if (process.argv.includes('--check')) {
  const cur = readFileSync(out, 'utf8');
  if (cur !== text) {
    console.error('values.schema.json is out of date: run node deploy/tools/gen-values-schema.mjs');
    process.exit(1);
  }
  console.log('values.schema.json is up to date');
} else {
  writeFileSync(out, text);
  console.log(`wrote ${out}`);
}
