# provider-sim targets (services/provider-sim).
.PHONY: provider-sim test-provider-sim bench-provider-sim

provider-sim: install ## run the provider sim on 127.0.0.1:4000 (default three tiers)
	npx shadowplane provider-sim --listen 127.0.0.1:4000

test-provider-sim: install ## provider-sim tests (SDKs, faults, accuracy, determinism)
	npx vitest run services/provider-sim

bench-provider-sim: install ## provider-sim req/s on one pinned core vs a bare node:http baseline
	npx tsx bench/provider-sim.ts
