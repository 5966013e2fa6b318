# Duplicator, budget ledger and rate limiter targets.
.PHONY: test-duplicator bench-duplicator

test-duplicator: install ## duplicator + libs/budget + libs/ratelimit tests (real nats-server, redis-server, provider-sim)
	npx vitest run services/duplicator libs/budget libs/ratelimit

bench-duplicator: install ## duplicator items/s, CPU ms per provider call (after a warm-up) and NATS messages per item, 1 vs 2 vs 4 workers (zero-latency sim; BENCH_BASELINE=<checkout> adds its build side by side)
	npx tsx bench/duplicator.ts 200 3
