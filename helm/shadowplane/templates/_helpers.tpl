{{/*
Shadowplane chart helpers. Every helper takes the chart scope (.Values, .Release, .Chart) — or,
for the ones that take a component, a dict {ctx: <chart scope>, component: <name>}. A parent chart
(e.g. your router's) reaches the same scope through `.Subcharts.shadowplane`.
*/}}

{{/* Chart name. */}}
{{- define "shadowplane.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Fully qualified name prefix: <release>-shadowplane unless overridden (63-char DNS limit). */}}
{{- define "shadowplane.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Name of one component's resources: <fullname>-<component>. */}}
{{- define "shadowplane.componentName" -}}
{{- printf "%s-%s" (include "shadowplane.fullname" .ctx | trunc 50 | trimSuffix "-") .component -}}
{{- end -}}

{{/* helm.sh/chart label value. */}}
{{- define "shadowplane.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels for a component (stable across upgrades). */}}
{{- define "shadowplane.selectorLabels" -}}
app.kubernetes.io/name: {{ include "shadowplane.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Standard labels for a component's resources. */}}
{{- define "shadowplane.labels" -}}
helm.sh/chart: {{ include "shadowplane.chart" .ctx }}
{{ include "shadowplane.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Values.image.tag | default .ctx.Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/part-of: shadowplane
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
{{- with .ctx.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The image reference: repository@digest when a digest is set, else repository:tag. */}}
{{- define "shadowplane.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/* ServiceAccount name. */}}
{{- define "shadowplane.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "shadowplane.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Providers allowlist ConfigMap name. */}}
{{- define "shadowplane.providersConfigMap" -}}
{{- printf "%s-providers" (include "shadowplane.fullname" . | trunc 50 | trimSuffix "-") -}}
{{- end -}}

{{/* Sidecar ConfigMap name (routes + sampling). */}}
{{- define "shadowplane.sidecarConfigMap" -}}
{{- printf "%s-sidecar" (include "shadowplane.fullname" . | trunc 50 | trimSuffix "-") -}}
{{- end -}}

{{/* Mount paths inside every container. */}}
{{- define "shadowplane.paths.providers" -}}/etc/shadowplane/providers{{- end -}}
{{- define "shadowplane.paths.providerKeys" -}}/var/run/secrets/shadowplane/providers{{- end -}}
{{- define "shadowplane.paths.artifactKeys" -}}/var/run/secrets/shadowplane/artifacts{{- end -}}
{{- define "shadowplane.paths.apiKeys" -}}/var/run/secrets/shadowplane/api-keys{{- end -}}
{{- define "shadowplane.paths.sidecarConfig" -}}/etc/shadowplane/sidecar{{- end -}}
{{- define "shadowplane.paths.stickySalt" -}}/var/run/secrets/shadowplane/sticky-salt{{- end -}}

{{/* Environment every role reads: NATS and log level (SHADOWPLANE_*; see libs/config). OTLP: shadowplane.otelEnv. */}}
{{- define "shadowplane.commonEnv" -}}
{{- if .Values.nats.urlSecret.name }}
- name: SHADOWPLANE_NATS_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.nats.urlSecret.name }}
      key: {{ .Values.nats.urlSecret.key }}
{{- else }}
- name: SHADOWPLANE_NATS_URL
  value: {{ .Values.nats.url | quote }}
{{- end }}
{{- if .Values.nats.prefix }}
- name: SHADOWPLANE_NATS_PREFIX
  value: {{ .Values.nats.prefix | quote }}
{{- end }}
{{- if ne (int .Values.nats.replicas) 1 }}
- name: SHADOWPLANE_NATS_REPLICAS
  value: {{ .Values.nats.replicas | quote }}
{{- end }}
- name: SHADOWPLANE_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- end -}}

{{/*
OpenTelemetry variables of one role, only when otlp.endpoint is set: OTEL_EXPORTER_OTLP_ENDPOINT
(the base URL; the SDK appends /v1/traces over HTTP), OTEL_SERVICE_NAME (otlp.serviceNames.<role>,
default shadowplane-<role>), OTEL_EXPORTER_OTLP_PROTOCOL (otlp.protocol) and OTEL_RESOURCE_ATTRIBUTES (the namespace, then otlp.resourceAttributes).
Call with (dict "ctx" . "role" "<role>").
*/}}
{{- define "shadowplane.otelEnv" -}}
{{- $o := .ctx.Values.otlp -}}
{{- if $o.endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ $o.endpoint | quote }}
- name: OTEL_SERVICE_NAME
  value: {{ (get ($o.serviceNames | default dict) .role) | default (printf "shadowplane-%s" .role) | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ $o.protocol | default "http/protobuf" | quote }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ printf "k8s.namespace.name=%s%s" .ctx.Release.Namespace (ternary (printf ",%s" $o.resourceAttributes) "" (ne ($o.resourceAttributes | default "") "")) | quote }}
{{- end }}
{{- end -}}

{{/* SHADOWPLANE_REDIS_URL, when configured (duplicator rate limits). */}}
{{- define "shadowplane.redisEnv" -}}
{{- if .Values.redis.urlSecret.name }}
- name: SHADOWPLANE_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.redis.urlSecret.name }}
      key: {{ .Values.redis.urlSecret.key }}
{{- else if .Values.redis.url }}
- name: SHADOWPLANE_REDIS_URL
  value: {{ .Values.redis.url | quote }}
{{- end }}
{{- end -}}

{{/* Free-form extra env (name → value map), sorted for stable output. */}}
{{- define "shadowplane.extraEnv" -}}
{{- range $k, $v := . }}
- name: {{ $k }}
  value: {{ $v | toString | quote }}
{{- end }}
{{- end -}}

{{/* Pod-level settings shared by the role Deployments. Takes {ctx, component, spec}. */}}
{{- define "shadowplane.podCommon" -}}
serviceAccountName: {{ include "shadowplane.serviceAccountName" .ctx }}
automountServiceAccountToken: false
enableServiceLinks: false
securityContext:
  {{- toYaml .ctx.Values.podSecurityContext | nindent 2 }}
terminationGracePeriodSeconds: {{ .spec.terminationGracePeriodSeconds }}
{{- with .ctx.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .spec.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .spec.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .spec.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .spec.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .spec.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Probes on an HTTP port name: startup (a generous window for a loaded node), liveness /healthz, readiness /readyz. */}}
{{- define "shadowplane.probes" -}}
startupProbe:
  httpGet:
    path: /healthz
    port: {{ . }}
  periodSeconds: 2
  timeoutSeconds: 2
  failureThreshold: 60
livenessProbe:
  httpGet:
    path: /healthz
    port: {{ . }}
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
readinessProbe:
  httpGet:
    path: /readyz
    port: {{ . }}
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 2
{{- end -}}

{{/* The writable /tmp every container gets (the root filesystem is read-only). */}}
{{- define "shadowplane.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: {{ .Values.tmpSizeLimit }}
{{- end -}}

{{/* Labels only (no selector) for a component, as a YAML map for pod templates. */}}
{{- define "shadowplane.podLabels" -}}
{{ include "shadowplane.labels" . }}
{{- end -}}

{{/* NetworkPolicy egress rules shared by every role: DNS, NATS, and the OTLP collector when set. */}}
{{- define "shadowplane.netpol.baseEgress" -}}
- to:
    {{- toYaml .Values.networkPolicy.dns.peers | nindent 4 }}
  ports:
    - protocol: UDP
      port: 53
    - protocol: TCP
      port: 53
- to:
    {{- toYaml .Values.nats.networkPolicy.peers | nindent 4 }}
  ports:
    {{- range .Values.nats.networkPolicy.ports }}
    - protocol: TCP
      port: {{ . }}
    {{- end }}
{{- if and .Values.otlp.endpoint .Values.otlp.networkPolicy.peers }}
- to:
    {{- toYaml .Values.otlp.networkPolicy.peers | nindent 4 }}
  ports:
    {{- range .Values.otlp.networkPolicy.ports }}
    - protocol: TCP
      port: {{ . }}
    {{- end }}
{{- end }}
{{- end -}}

{{/* NetworkPolicy egress rules to the allowlisted providers (CIDRs + ports from values). */}}
{{- define "shadowplane.netpol.providerEgress" -}}
{{- range .Values.providers.egress }}
- to:
    {{- range .cidrs }}
    - ipBlock:
        cidr: {{ . }}
    {{- end }}
  ports:
    {{- range (.ports | default (list 443)) }}
    - protocol: TCP
      port: {{ . }}
    {{- end }}
{{- end }}
{{- end -}}

{{/* Ingress rule for the ops (metrics) port of a role. Takes {ctx, port}. */}}
{{- define "shadowplane.netpol.metricsIngress" -}}
- ports:
    - protocol: TCP
      port: {{ .port }}
  {{- with .ctx.Values.networkPolicy.metricsFrom }}
  from:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
