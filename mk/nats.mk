# nats-server for tests and the demo, built from its Go module into .bin/ (not Debian's 2.9.x, which
# has a KV compare-and-set race on replicated buckets). The version is pinned in
# scripts/ensure-system-deps.sh (NATS_SERVER_VERSION); `make test` and `make demo` build it first.
.PHONY: nats-server

nats-server: ## build the pinned nats-server into .bin/ (Go module; about a minute the first time)
	scripts/ensure-system-deps.sh nats-server

test: nats-server
demo: nats-server
