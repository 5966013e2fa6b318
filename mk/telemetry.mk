# Telemetry area: the OTLP backend the tracing tests export to.
# Jaeger v2 (an OpenTelemetry Collector distribution with Jaeger's storage and query API) is built
# from its Go module into .bin/, pinned by deploy/tools/jaeger/go.mod (a `tool` requirement). The
# first build is long (measured: 37 min wall on 2 busy cores, 12 min CPU); the Go caches make
# later builds a few seconds, and the binary is only rebuilt when go.mod/go.sum change.

JAEGER     := $(CURDIR)/.bin/jaeger
JAEGER_SRC := deploy/tools/jaeger/go.mod deploy/tools/jaeger/go.sum

.PHONY: jaeger jaeger-up

$(JAEGER): $(JAEGER_SRC)
	@mkdir -p $(CURDIR)/.bin
	cd deploy/tools/jaeger && go build -trimpath -ldflags='-s -w' -o $(JAEGER) github.com/jaegertracing/jaeger/cmd/jaeger

jaeger: $(JAEGER) ## build the Jaeger v2 all-in-one (OTLP receiver + query API) into .bin/ (Go)
test: jaeger

jaeger-up: $(JAEGER) ## run Jaeger in the foreground for local traces: OTLP on 127.0.0.1:4317/4318, query API and UI on :16686 (Ctrl-C stops it)
	$(JAEGER) --config file:deploy/tools/jaeger/local.yaml
