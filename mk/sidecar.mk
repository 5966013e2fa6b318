# The sidecar's own targets.
.PHONY: sidecar-test sidecar-run

sidecar-test: install ## sidecar unit + integration tests (starts its own nats-server)
	npx vitest run services/sidecar

SIDECAR_UPSTREAM ?= http://127.0.0.1:4000
sidecar-run: install ## run a sidecar in front of SIDECAR_UPSTREAM on 127.0.0.1:8080 (NATS from SHADOWPLANE_NATS_URL)
	npx shadowplane sidecar --listen 127.0.0.1:8080 --upstream $(SIDECAR_UPSTREAM) --sample $${SHADOWPLANE_SIDECAR_SAMPLE:-0.1}
