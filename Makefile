# Shadowplane — the two commands a newcomer needs: `make demo` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

NODE_MODULES_STAMP := node_modules/.package-lock.json

.PHONY: help install system-deps typecheck lint format test test-unit demo bench build

help: ## list targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-14s %s\n", $$1, $$2}'

$(NODE_MODULES_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: $(NODE_MODULES_STAMP) ## install dependencies (npm ci)

typecheck: install ## TypeScript strict type check of every package
	npx tsc -p tsconfig.json --noEmit

lint: install ## layer boundaries, floating promises, type imports (ESLint); declared workspace deps; formatting (Prettier)
	npm run lint

format: install ## rewrite the sources in the project's format (Prettier)
	npm run format

test: install typecheck lint ## run every test (unit and integration; starts its own nats-server)
	scripts/ensure-system-deps.sh
	@mkdir -p .tmp
	npx vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest.json; rc=$$?; \
	  node scripts/test-summary.mjs .tmp/vitest.json || true; exit $$rc

test-unit: install ## unit tests only
	npx vitest run --exclude '**/*.int.test.ts'

system-deps: ## install nats-server, redis-server, chromium and tmux with apt-get when missing
	scripts/ensure-system-deps.sh

demo: install ## run the end-to-end demo: a budget-capped shadow campaign to a verdict
	scripts/ensure-system-deps.sh nats-server
	SHADOWPLANE_RUN_FROM=src node --import tsx scripts/demo.ts $(DEMO_ARGS)

build: install ## compile the shadowplane and shadowctl binaries to dist/ (esbuild); the bins then run it
	npm run build

# The benchmarks `make bench` runs, in order (each is also its own bench-<name> target; select
# with BENCH="fold-cli sequential"). loadtest (k6) and bench-instructions (valgrind) build or install
# their tools and run on their own. calibration and sequential rewrite their tables in docs/.
BENCH ?= providers provider-sim sidecar control duplicator fold fold-cli sequential-frontier sequential calibration

bench: install ## every benchmark in BENCH, one after another (not part of test; about 1.5 h on 2 cores)
	@for b in $(BENCH); do echo "== bench-$$b"; $(MAKE) --no-print-directory bench-$$b || exit $$?; done

# Each area adds its own targets in mk/<area>.mk (helm-check, loadtest, ...).
-include mk/*.mk
