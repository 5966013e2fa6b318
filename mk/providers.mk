# Providers area: wire adapters, usage/cost, telemetry and `shadowplane usage`.
.PHONY: test-providers bench-providers usage-fixtures

test-providers: install ## provider adapters, telemetry, contracts and `shadowplane usage` tests
	npx vitest run libs/providers libs/telemetry libs/contracts services/shadowplane

bench-providers: install ## response-parser throughput on the recorded streams, as ratios to a JSON.parse-per-line baseline
	node --import tsx libs/providers/test/parse-bench.ts

usage-fixtures: install ## print what Shadowplane would record for every recorded provider fixture
	@for f in test/fixtures/providers/*/*.json test/fixtures/providers/*/*.sse; do \
	  case $$f in *.headers.json) continue;; esac; \
	  case $$f in *anthropic*) api=anthropic.messages;; *openrouter*) api=openrouter.chat;; */responses-*) api=openai.responses;; *) api=openai.chat;; esac; \
	  echo "== $$f"; node services/shadowplane/bin/shadowplane.mjs usage --api $$api $$f; \
	done
