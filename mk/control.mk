# Control area: the control REST API and shadowctl.

.PHONY: test-control openapi bench-control

test-control: install ## control API and shadowctl tests (unit + integration; needs nats-server, tmux for the watch test)
	npx vitest run services/control services/cli

openapi: install ## print the control API's OpenAPI 3.1 document (generated from the zod schemas)
	@npx tsx -e "import('@shadowplane/control').then(m => console.log(JSON.stringify(m.buildOpenApi('0.1.0'), null, 2)))"

bench-control: install ## control API throughput/latency (autocannon, private nats-server; not part of test)
	npx tsx services/control/bench/api-bench.ts
