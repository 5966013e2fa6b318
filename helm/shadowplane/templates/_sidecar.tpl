{{/*
The sidecar, for YOUR router Deployment. Two named templates, both taking the Shadowplane chart
scope (inside this chart: `.`; from a parent chart that has shadowplane as a dependency:
`.Subcharts.shadowplane`):

  spec:
    template:
      spec:
        containers:
          - name: router
            ...
          {{- include "shadowplane.sidecar.container" .Subcharts.shadowplane | nindent 10 }}
        volumes:
          {{- include "shadowplane.sidecar.volumes" .Subcharts.shadowplane | nindent 10 }}

The container proxies on `sidecar.listen` to `sidecar.upstream` (or the routes in its ConfigMap),
publishes sampled captures to NATS off the hot path, and serves /healthz, /readyz, /metrics on
`sidecar.opsListen`. It runs as uid 10001 with a read-only root filesystem; /tmp is an emptyDir.
*/}}

{{/* Port number of a host:port listen address. */}}
{{- define "shadowplane.sidecar.port" -}}
{{- regexReplaceAll "^.*:([0-9]+)$" . "${1}" -}}
{{- end -}}

{{/* True ("true") when the sidecar needs its config file (routes or sampling given). */}}
{{- define "shadowplane.sidecar.hasConfig" -}}
{{- if or .Values.sidecar.routes .Values.sidecar.sampling -}}true{{- end -}}
{{- end -}}

{{- define "shadowplane.sidecar.container" -}}
- name: shadowplane-sidecar
  image: {{ include "shadowplane.image" . }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  args: ["sidecar"]
  env:
    {{- include "shadowplane.commonEnv" . | trim | nindent 4 }}
    {{- include "shadowplane.otelEnv" (dict "ctx" . "role" "sidecar") | trim | nindent 4 }}
    - name: SHADOWPLANE_SIDECAR_LISTEN
      value: {{ .Values.sidecar.listen | quote }}
    - name: SHADOWPLANE_SIDECAR_OPS_LISTEN
      value: {{ .Values.sidecar.opsListen | quote }}
    - name: SHADOWPLANE_SIDECAR_PLACEMENT
      value: {{ .Values.sidecar.placement | quote }}
    {{- if and .Values.sidecar.upstream (not .Values.sidecar.routes) }}
    - name: SHADOWPLANE_SIDECAR_UPSTREAM
      value: {{ .Values.sidecar.upstream | quote }}
    {{- end }}
    - name: SHADOWPLANE_SIDECAR_SAMPLE
      value: {{ .Values.sidecar.sampleRate | toString | quote }}
    - name: SHADOWPLANE_SIDECAR_SUITE
      value: {{ .Values.sidecar.suite | quote }}
    - name: SHADOWPLANE_SIDECAR_ID
      valueFrom:
        fieldRef:
          fieldPath: metadata.name
    {{- if include "shadowplane.sidecar.hasConfig" . }}
    - name: SHADOWPLANE_SIDECAR_CONFIG
      value: {{ include "shadowplane.paths.sidecarConfig" . }}/sidecar.yaml
    {{- end }}
    {{- if .Values.sidecar.stickyHeader }}
    - name: SHADOWPLANE_SIDECAR_STICKY_HEADER
      value: {{ .Values.sidecar.stickyHeader | quote }}
    - name: SHADOWPLANE_SIDECAR_STICKY_SALT_FILE
      value: {{ include "shadowplane.paths.stickySalt" . }}/{{ .Values.sidecar.stickySaltSecret.key }}
    {{- end }}
    {{- with .Values.sidecar.env}}{{ include "shadowplane.extraEnv" . | trim | nindent 4 }}{{ end }}
  ports:
    - name: {{ .Values.sidecar.portNames.proxy }}
      containerPort: {{ include "shadowplane.sidecar.port" .Values.sidecar.listen }}
      protocol: TCP
    - name: {{ .Values.sidecar.portNames.ops }}
      containerPort: {{ include "shadowplane.sidecar.port" .Values.sidecar.opsListen }}
      protocol: TCP
  {{- include "shadowplane.probes" .Values.sidecar.portNames.ops | nindent 2 }}
  {{- if .Values.sidecar.preStopSleepSeconds }}
  lifecycle:
    # Keep accepting while the endpoint is removed from Services, then SIGTERM drains.
    preStop:
      exec:
        command: ["sleep", "{{ .Values.sidecar.preStopSleepSeconds }}"]
  {{- end }}
  resources:
    {{- toYaml .Values.sidecar.resources | nindent 4 }}
  securityContext:
    {{- toYaml .Values.containerSecurityContext | nindent 4 }}
  volumeMounts:
    - name: shadowplane-tmp
      mountPath: /tmp
    {{- if include "shadowplane.sidecar.hasConfig" . }}
    - name: shadowplane-sidecar-config
      mountPath: {{ include "shadowplane.paths.sidecarConfig" . }}
      readOnly: true
    {{- end }}
    {{- if .Values.sidecar.stickyHeader }}
    - name: shadowplane-sticky-salt
      mountPath: {{ include "shadowplane.paths.stickySalt" . }}
      readOnly: true
    {{- end }}
{{- end -}}

{{- define "shadowplane.sidecar.volumes" -}}
- name: shadowplane-tmp
  emptyDir:
    sizeLimit: {{ .Values.tmpSizeLimit }}
{{- if include "shadowplane.sidecar.hasConfig" . }}
- name: shadowplane-sidecar-config
  configMap:
    name: {{ include "shadowplane.sidecarConfigMap" . }}
{{- end }}
{{- if .Values.sidecar.stickyHeader }}
- name: shadowplane-sticky-salt
  secret:
    secretName: {{ required "sidecar.stickySaltSecret.name is required with sidecar.stickyHeader" .Values.sidecar.stickySaltSecret.name }}
{{- end }}
{{- end -}}
