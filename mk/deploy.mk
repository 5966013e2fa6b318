# Deploy area: the image, the Helm chart and their offline checks.
# Tools are built from their Go modules into .bin/ (first build takes minutes; the Go module and
# build caches make later builds fast). Nothing here needs a Docker engine or a cluster.

HELM_VERSION        ?= v3.20.2
KUBECONFORM_VERSION ?= v0.7.0
DEPLOY_BIN          := $(CURDIR)/.bin
HELM                := $(DEPLOY_BIN)/helm
KUBECONFORM         := $(DEPLOY_BIN)/kubeconform
DOCKERFILE_LINT     := $(DEPLOY_BIN)/dockerfile-lint
DOCKERFILE_LINT_SRC := $(wildcard deploy/tools/dockerfile-lint/*.go) deploy/tools/dockerfile-lint/go.mod deploy/tools/dockerfile-lint/go.sum
PROMQL_LINT         := $(DEPLOY_BIN)/promql-lint
PROMQL_LINT_SRC     := $(wildcard deploy/tools/promql-lint/*.go) deploy/tools/promql-lint/go.mod deploy/tools/promql-lint/go.sum

.PHONY: helm-tools helm-check dockerfile-lint image-smoke helm-schemas k8s-schemas dashboard

$(HELM):
	@mkdir -p $(DEPLOY_BIN)
	GOBIN=$(DEPLOY_BIN) go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

$(KUBECONFORM):
	@mkdir -p $(DEPLOY_BIN)
	GOBIN=$(DEPLOY_BIN) go install github.com/yannh/kubeconform/cmd/kubeconform@$(KUBECONFORM_VERSION)

$(DOCKERFILE_LINT): $(DOCKERFILE_LINT_SRC)
	@mkdir -p $(DEPLOY_BIN)
	cd deploy/tools/dockerfile-lint && go build -o $(DOCKERFILE_LINT) .

$(PROMQL_LINT): $(PROMQL_LINT_SRC)
	@mkdir -p $(DEPLOY_BIN)
	cd deploy/tools/promql-lint && go build -o $(PROMQL_LINT) .

helm-tools: $(HELM) $(KUBECONFORM) $(DOCKERFILE_LINT) $(PROMQL_LINT) ## build helm, kubeconform, dockerfile-lint and promql-lint into .bin/ (Go)

helm-check: install helm-tools ## lint + render the chart (default/staging/full values, sample router), validate offline, policy checks, Dockerfile lint
	deploy/tools/helm-check.sh

dockerfile-lint: $(DOCKERFILE_LINT) ## check the Dockerfile (BuildKit lint rules + image policy + build context)
	$(DOCKERFILE_LINT) -f Dockerfile -context .

image-smoke: $(DOCKERFILE_LINT) ## replay the Dockerfile without Docker: prod install of the build context, run roles as uid 10001 on a read-only /app
	deploy/tools/image-smoke.sh

dashboard: ## regenerate deploy/grafana/shadowplane.json
	node deploy/tools/gen-dashboard.mjs

helm-schemas: ## regenerate helm/shadowplane/values.schema.json
	node deploy/tools/gen-values-schema.mjs

k8s-schemas: ## regenerate deploy/schemas from the Kubernetes OpenAPI document (k8s.io/kubernetes Go module)
	node deploy/tools/k8s-schemas.mjs
