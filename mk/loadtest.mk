# Load tests of the sidecar hot path (k6 built from its Go module; never part of `make test`).
K6_VERSION ?= v1.8.1
K6_BIN := .bin/k6

.PHONY: k6 loadtest bench-sidecar bench-instructions

$(K6_BIN):
	GOBIN=$(CURDIR)/.bin go install go.k6.io/k6@$(K6_VERSION)

k6: $(K6_BIN) ## build k6 into .bin/ from its Go module (only if absent)

loadtest: install $(K6_BIN) ## run the k6 overhead scripts against local processes; prints the overhead table
	node --import tsx loadtests/k6-run.ts

bench-sidecar: install ## Node overhead benchmark: direct / sidecar 0-10-100% / nginx / nginx+mirror table
	npm run bench:sidecar

bench-instructions: install ## instructions per request under callgrind: sidecar 0-10-100% / node:net pipe / nginx+mirror (needs valgrind)
	@command -v valgrind >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get install -y valgrind; }
	npm run bench:instructions
