#!/usr/bin/env bash
# helm-check: everything CI asserts about the chart, offline.
#   1. values.schema.json, the Grafana dashboard and deploy/schemas are what their generators
#      produce, and every metric the dashboard/alerts/KEDA query use is defined by a service
#   2. helm lint --strict with default, staging and full values
#   3. helm template each; kubeconform -strict against the committed Kubernetes schemas
#      (CRDs ServiceMonitor, PodMonitor, PrometheusRule, ScaledObject are skipped: no schema here)
#   4. policy assertions on the rendered manifests (deploy/tools/check-manifests.mjs)
#   4a. every PromQL expression (alert rules, dashboard queries) parses with Prometheus' parser
#   4b. branches the example values do not take, rendered with --set variants (same checks)
#   5. NOTES.txt renders, and the sidecar snippet it prints parses
#   6. the sample router chart with the sidecar merged in: render, validate, assert
#   7. the Dockerfile: BuildKit's lint rules + Shadowplane's image policy (deploy/tools/dockerfile-lint)
# Usage: deploy/tools/helm-check.sh   (expects .bin/helm, .bin/kubeconform, .bin/dockerfile-lint;
#        `make helm-check` builds them first)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BIN=$ROOT/.bin
OUT=$ROOT/.tmp/helm-check
CHART=$ROOT/helm/shadowplane
K8S_VERSION=1.35.1
SKIP_KINDS=ServiceMonitor,PodMonitor,PrometheusRule,ScaledObject
SCHEMAS="$ROOT/deploy/schemas/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json"

for tool in helm kubeconform dockerfile-lint promql-lint; do
  [[ -x $BIN/$tool ]] || { echo "helm-check: $BIN/$tool is missing — run: make helm-tools" >&2; exit 2; }
done
rm -rf "$OUT" && mkdir -p "$OUT"
step() { printf '\n== %s\n' "$*"; }

step "generated files are up to date"
node deploy/tools/gen-values-schema.mjs --check
node deploy/tools/gen-dashboard.mjs --check
if [[ ${HELM_CHECK_SKIP_SCHEMA_REGEN:-0} == 1 ]]; then
  echo "deploy/schemas regeneration check skipped (HELM_CHECK_SKIP_SCHEMA_REGEN=1)"
else
  node deploy/tools/k8s-schemas.mjs --check
fi

kubeconform() {
  "$BIN/kubeconform" -strict -summary -kubernetes-version "$K8S_VERSION" \
    -schema-location "$SCHEMAS" -skip "$SKIP_KINDS" "$@"
}

declare -A VALUES=([default]="" [staging]="$ROOT/deploy/values-staging.yaml" [full]="$ROOT/deploy/values-full.yaml")
for name in default staging full; do
  args=()
  [[ -n ${VALUES[$name]} ]] && args=(-f "${VALUES[$name]}")
  step "helm lint --strict ($name values)"
  "$BIN/helm" lint --strict "$CHART" "${args[@]}"
  step "helm template + kubeconform + policy ($name values)"
  "$BIN/helm" template sp "$CHART" --namespace shadowplane --kube-version "$K8S_VERSION" "${args[@]}" > "$OUT/$name.yaml"
  kubeconform "$OUT/$name.yaml"
  node deploy/tools/check-manifests.mjs "$OUT/$name.yaml" \
    $([[ $name == default ]] || echo --allow-foreign-selectors)
done

step "PromQL: every alert rule (full values, all alerts on) and dashboard query parses"
"$BIN/promql-lint" -rules "$OUT/full.yaml" -dashboard "$ROOT/deploy/grafana/shadowplane.json"

step "template branches the example values do not take (--set variants): render + kubeconform + policy"
VARIANTS=(
  "duplicator.keda.enabled=true"
  "duplicator.autoscaling.enabled=false"
  "serviceAccount.create=false,networkPolicy.enabled=false"
  "control.enabled=false,verdict.enabled=false"
  "sidecar.placement=egress,sidecar.listen=127.0.0.1:8080,sidecar.upstream=,sidecar.routes[0].upstream=https://api.openai.com,sidecar.routes[0].path_prefix=/openai/"
)
i=0
for v in "${VARIANTS[@]}"; do
  i=$((i + 1))
  echo "variant $i: $v"
  "$BIN/helm" template sp "$CHART" --namespace shadowplane --kube-version "$K8S_VERSION" --set "$v" > "$OUT/variant-$i.yaml"
  kubeconform "$OUT/variant-$i.yaml"
  node deploy/tools/check-manifests.mjs "$OUT/variant-$i.yaml"
done

step "NOTES.txt renders (default and full values; helm template does not render NOTES, so a copy wraps it)"
NOTES_CHART=$OUT/notes-chart/shadowplane
mkdir -p "$(dirname "$NOTES_CHART")" && cp -r "$CHART" "$NOTES_CHART"
{ echo '{{- define "shadowplane.notesBody" -}}'; cat "$CHART/templates/NOTES.txt"; echo '{{- end -}}'; } > "$NOTES_CHART/templates/_notes_body.tpl"
rm "$NOTES_CHART/templates/NOTES.txt"
cat > "$NOTES_CHART/templates/notes-render.yaml" <<'EOF_NOTES'
apiVersion: v1
kind: ConfigMap
metadata:
  name: notes
data:
  notes: |
{{ include "shadowplane.notesBody" . | indent 4 }}
EOF_NOTES
for name in default full; do
  args=()
  [[ -n ${VALUES[$name]} ]] && args=(-f "${VALUES[$name]}")
  "$BIN/helm" template sp "$NOTES_CHART" --namespace shadowplane --kube-version "$K8S_VERSION" "${args[@]}" \
    --show-only templates/notes-render.yaml > "$OUT/notes-$name.yaml"
  node -e '
    const { parse } = require("yaml");
    const notes = parse(require("fs").readFileSync(process.argv[1], "utf8")).data.notes;
    const m = notes.split("Or paste the rendered container for this release:")[1].split("and these volumes:");
    const c = parse(m[0]), v = parse(m[1].split("Placement")[0]);
    if (!Array.isArray(c) || c[0].name !== "shadowplane-sidecar" || !Array.isArray(v)) { console.error("NOTES: the pasted sidecar snippet does not parse"); process.exit(1); }
    console.log(`NOTES (${process.argv[2]}): renders; the pasted container (${c[0].env.length} env vars) and ${v.length} volume(s) parse as YAML`);
  ' "$OUT/notes-$name.yaml" "$name"
done

step "sample router Deployment with the sidecar merged in (deploy/examples/router)"
"$BIN/helm" lint --strict "$ROOT/deploy/examples/router"
"$BIN/helm" template edge "$ROOT/deploy/examples/router" --namespace shadowplane --kube-version "$K8S_VERSION" > "$OUT/router.yaml"
kubeconform "$OUT/router.yaml"
node deploy/tools/check-manifests.mjs --require-sidecar --allow-foreign-selectors "$OUT/router.yaml"

step "Dockerfile lint"
"$BIN/dockerfile-lint" -f "$ROOT/Dockerfile" -context "$ROOT"

printf '\nhelm-check: OK (rendered manifests in %s)\n' "${OUT#$ROOT/}"
