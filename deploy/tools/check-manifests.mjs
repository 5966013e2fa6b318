#!/usr/bin/env node
// Policy assertions on rendered Kubernetes manifests (the output of `helm template`), beyond what
// schema validation can say. Exits 1 listing every violation.
//
// For every workload (Deployment, StatefulSet, DaemonSet, Job, CronJob, Pod) and every container:
//   - not root: runAsNonRoot true (pod or container level) and runAsUser ≠ 0 wherever set
//   - resources.requests and resources.limits, each with cpu and memory
//   - livenessProbe and readinessProbe (regular containers; init containers are exempt)
//   - hardening: readOnlyRootFilesystem true, allowPrivilegeEscalation false, capabilities.drop
//     contains ALL, seccompProfile RuntimeDefault (pod or container level), no privileged
//   - image not :latest / untagged; no literal env value for a secret-looking variable name
//   - probe/Service ports that name a port exist on the container(s)
// For every object: standard labels (app.kubernetes.io/name, instance, managed-by; the full set —
// plus version, component, part-of, helm.sh/chart — on Shadowplane's own objects).
// Cross-object: Service/PDB/NetworkPolicy selectors and HPA targets resolve to a rendered
// workload; no Secret objects (secrets are referenced, never rendered).
//
// Usage: node deploy/tools/check-manifests.mjs [--require-sidecar] [--allow-foreign-selectors] <file.yaml>...
//   --require-sidecar           at least one Deployment must carry the shadowplane-sidecar container
//   --allow-foreign-selectors   NetworkPolicies/PodMonitors may select pods not in this render
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'Pod']);
const BASE_LABELS = ['app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app.kubernetes.io/managed-by'];
const FULL_LABELS = [
  ...BASE_LABELS,
  'app.kubernetes.io/version',
  'app.kubernetes.io/component',
  'app.kubernetes.io/part-of',
  'helm.sh/chart',
];
const SECRETISH = /(SECRET|PASSWORD|PASSWD|TOKEN|API_?KEY|PRIVATE_?KEY|CREDENTIAL)/i;

/**
 * Checks a list of Kubernetes objects.
 * @param {object[]} objects parsed manifests
 * @param {{requireSidecar?: boolean, allowForeignSelectors?: boolean}} opts
 * @returns {string[]} violations, each naming kind/name and the rule
 */
export function checkManifests(objects, opts = {}) {
  const problems = [];
  const fail = (o, msg) => problems.push(`${o?.kind ?? '?'}/${o?.metadata?.name ?? '?'}: ${msg}`);
  const pods = []; // {owner, labels, spec}

  for (const o of objects) {
    if (!o || typeof o !== 'object') continue;
    if (!o.kind || !o.apiVersion || !o.metadata?.name) {
      fail(o, 'missing apiVersion, kind or metadata.name');
      continue;
    }
    if (o.kind === 'Secret')
      fail(o, 'a Secret is rendered: secrets must be referenced (existingSecret), never given in values');
    const labels = o.metadata.labels ?? {};
    const own = labels['app.kubernetes.io/part-of'] === 'shadowplane';
    for (const l of own ? FULL_LABELS : BASE_LABELS) if (!labels[l]) fail(o, `missing label ${l}`);

    if (WORKLOADS.has(o.kind)) {
      const tpl = o.kind === 'Pod' ? o : o.kind === 'CronJob' ? o.spec?.jobTemplate?.spec?.template : o.spec?.template;
      if (!tpl?.spec) {
        fail(o, 'no pod template');
        continue;
      }
      const podLabels = tpl.metadata?.labels ?? {};
      if (o.spec?.selector?.matchLabels && !matches(o.spec.selector.matchLabels, podLabels))
        fail(o, 'selector does not match the pod template labels');
      if (own) for (const l of FULL_LABELS) if (!podLabels[l]) fail(o, `pod template missing label ${l}`);
      pods.push({ owner: o, labels: podLabels, spec: tpl.spec, namespace: o.metadata.namespace });
      checkPod(o, tpl.spec, fail);
    }
  }

  const findPods = (selector) => pods.filter((p) => matches(selector, p.labels));
  for (const o of objects) {
    if (!o?.kind) continue;
    if (o.kind === 'Service' && o.spec?.selector) {
      const hit = findPods(o.spec.selector);
      if (hit.length === 0) fail(o, `selector ${JSON.stringify(o.spec.selector)} matches no rendered workload`);
      for (const p of o.spec.ports ?? []) {
        if (typeof p.targetPort === 'string' && !hit.some((h) => containerPortNames(h.spec).has(p.targetPort)))
          fail(o, `targetPort ${p.targetPort} is not a named port of the selected pods`);
      }
    }
    if (o.kind === 'PodDisruptionBudget') {
      if (findPods(o.spec?.selector?.matchLabels ?? {}).length === 0) fail(o, 'selector matches no rendered workload');
    }
    if (o.kind === 'NetworkPolicy' && !opts.allowForeignSelectors) {
      if (findPods(o.spec?.podSelector?.matchLabels ?? {}).length === 0)
        fail(o, 'podSelector matches no rendered workload');
    }
    if (o.kind === 'NetworkPolicy') {
      const types = o.spec?.policyTypes ?? [];
      if (types.includes('Egress')) {
        const egress = o.spec?.egress ?? [];
        if (!egress.some((r) => (r.ports ?? []).some((p) => p.port === 53)))
          fail(o, 'egress policy allows no DNS (port 53)');
        if (egress.some((r) => !r.to || r.to.length === 0))
          fail(o, 'an egress rule has no destination (allows everywhere)');
      }
    }
    if (o.kind === 'HorizontalPodAutoscaler') {
      const t = o.spec?.scaleTargetRef;
      if (!objects.some((x) => x?.kind === t?.kind && x?.metadata?.name === t?.name))
        fail(o, `scaleTargetRef ${t?.kind}/${t?.name} is not rendered`);
      const target = objects.find((x) => x?.kind === t?.kind && x?.metadata?.name === t?.name);
      if (target?.spec?.replicas !== undefined)
        fail(o, `target ${t.name} also sets spec.replicas (the HPA and every upgrade would fight)`);
    }
  }

  if (opts.requireSidecar) {
    const withSidecar = pods.filter((p) => (p.spec.containers ?? []).some((c) => c.name === 'shadowplane-sidecar'));
    if (withSidecar.length === 0) problems.push('no workload carries the shadowplane-sidecar container');
    for (const p of withSidecar) {
      const c = p.spec.containers.find((x) => x.name === 'shadowplane-sidecar');
      if (JSON.stringify(c.args) !== JSON.stringify(['sidecar']))
        fail(p.owner, `sidecar args are ${JSON.stringify(c.args)}, want ["sidecar"]`);
      const vols = new Set((p.spec.volumes ?? []).map((v) => v.name));
      for (const m of c.volumeMounts ?? [])
        if (!vols.has(m.name)) fail(p.owner, `sidecar mounts volume ${m.name}, which the pod does not define`);
    }
  }
  return problems;
}

function checkPod(o, spec, fail) {
  const psc = spec.securityContext ?? {};
  if (psc.runAsUser === 0) fail(o, 'pod securityContext.runAsUser is 0 (root)');
  if (spec.hostNetwork || spec.hostPID || spec.hostIPC) fail(o, 'uses host namespaces');
  const names = new Set();
  const all = [...(spec.initContainers ?? []).map((c) => [c, true]), ...(spec.containers ?? []).map((c) => [c, false])];
  if ((spec.containers ?? []).length === 0) fail(o, 'no containers');
  for (const [c, isInit] of all) {
    const where = `container ${c.name}`;
    if (names.has(c.name)) fail(o, `duplicate container name ${c.name}`);
    names.add(c.name);
    const sc = c.securityContext ?? {};
    const nonRoot = sc.runAsNonRoot ?? psc.runAsNonRoot;
    if (nonRoot !== true) fail(o, `${where}: runAsNonRoot is not true (may run as root)`);
    if (sc.runAsUser === 0) fail(o, `${where}: runAsUser is 0 (root)`);
    if (sc.privileged) fail(o, `${where}: privileged`);
    if (sc.allowPrivilegeEscalation !== false) fail(o, `${where}: allowPrivilegeEscalation is not false`);
    if (sc.readOnlyRootFilesystem !== true) fail(o, `${where}: readOnlyRootFilesystem is not true`);
    if (!(sc.capabilities?.drop ?? []).includes('ALL')) fail(o, `${where}: capabilities.drop does not include ALL`);
    if ((sc.capabilities?.add ?? []).length > 0)
      fail(o, `${where}: adds capabilities ${sc.capabilities.add.join(',')}`);
    const seccomp = sc.seccompProfile?.type ?? psc.seccompProfile?.type;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost')
      fail(o, `${where}: seccompProfile is not RuntimeDefault`);
    for (const kind of ['requests', 'limits']) {
      for (const r of ['cpu', 'memory']) {
        if (c.resources?.[kind]?.[r] === undefined) fail(o, `${where}: no resources.${kind}.${r}`);
      }
    }
    if (!isInit) {
      if (!c.livenessProbe) fail(o, `${where}: no livenessProbe`);
      if (!c.readinessProbe) fail(o, `${where}: no readinessProbe`);
      const portNames = new Set((c.ports ?? []).map((p) => p.name).filter(Boolean));
      for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
        const port = c[probe]?.httpGet?.port ?? c[probe]?.tcpSocket?.port;
        if (typeof port === 'string' && !portNames.has(port))
          fail(o, `${where}: ${probe} uses port name ${port}, which the container does not declare`);
      }
    }
    if (!c.image || /:latest$/.test(c.image) || !/[:@]/.test(c.image.split('/').pop()))
      fail(o, `${where}: image ${c.image} is untagged or :latest`);
    for (const e of c.env ?? []) {
      if (SECRETISH.test(e.name) && !/_FILE$/.test(e.name) && typeof e.value === 'string' && e.value !== '')
        fail(o, `${where}: env ${e.name} has a literal value (use a Secret)`);
    }
  }
}

function containerPortNames(spec) {
  return new Set((spec.containers ?? []).flatMap((c) => (c.ports ?? []).map((p) => p.name)).filter(Boolean));
}

function matches(selector, labels) {
  const entries = Object.entries(selector ?? {});
  return entries.length > 0 && entries.every(([k, v]) => labels[k] === v);
}

/** Parses every YAML document of the given files (empty documents skipped). */
export function loadManifests(files) {
  const out = [];
  for (const f of files) {
    for (const doc of parseAllDocuments(readFileSync(f, 'utf8'))) {
      if (doc.errors.length) throw new Error(`${f}: ${doc.errors[0].message}`);
      const v = doc.toJS();
      if (v) out.push(v);
    }
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const files = args.filter((a) => !a.startsWith('--'));
  const opts = {
    requireSidecar: args.includes('--require-sidecar'),
    allowForeignSelectors: args.includes('--allow-foreign-selectors'),
  };
  const objects = loadManifests(files);
  const problems = checkManifests(objects, opts);
  for (const p of problems) console.log(`FAIL  ${p}`);
  const workloads = objects.filter((o) => WORKLOADS.has(o?.kind));
  const containers = workloads.reduce(
    (n, w) => n + ((w.kind === 'Pod' ? w.spec : w.spec?.template?.spec)?.containers?.length ?? 0),
    0,
  );
  if (problems.length) {
    console.log(`check-manifests: ${problems.length} violation(s) in ${files.join(' ')}`);
    process.exit(1);
  }
  console.log(
    `check-manifests: ${objects.length} objects, ${workloads.length} workloads, ${containers} containers — non-root, resources, probes, hardening, labels, selectors OK`,
  );
}
