# Shadowplane: one image for every role — `shadowplane <role>` (sidecar, duplicator, control,
# verdict, provider-sim, ...). Kubernetes probes do health checking, so there is no HEALTHCHECK.
#
# Build:   docker build -t shadowplane:0.1.0 .
# Pin the base by digest for releases:
#          docker build --build-arg NODE_IMAGE=node:24.22.3-bookworm-slim@sha256:<digest> .
# Runtime: uid/gid 10001, read-only root filesystem friendly (writes only under /tmp: mount an
#          emptyDir there), tini as PID 1 forwarding SIGTERM so each role drains.
# Build:   the build stage compiles the binaries with esbuild (scripts/build.mjs, a dev dependency)
#          into dist/; the runtime runs that JavaScript with node: no tsx, TypeScript or dev
#          dependencies at run time.

ARG NODE_IMAGE=node:24.22.3-bookworm-slim

# ---- manifests: only package.json / package-lock.json files, so the dependency layer below is
# reused from cache until a manifest changes (source edits do not reinstall dependencies).
FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY . .
RUN find . -type f ! -name package.json ! -name package-lock.json -delete \
 && find . -mindepth 1 -type d -empty -delete

# ---- deps: production dependencies only, exactly as locked. tsx and its esbuild load the
# TypeScript sources in development only; the compiled build does not need them.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
ENV NODE_ENV=production \
    npm_config_update_notifier=false
COPY --from=manifests /src/ ./
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/tsx node_modules/esbuild node_modules/@esbuild

# ---- build: every dependency (esbuild is a dev dependency), then the sources → dist/. Only
# dist/ leaves this stage.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
ENV npm_config_update_notifier=false
COPY --from=manifests /src/ ./
RUN --mount=type=cache,target=/root/.npm \
    npm ci --no-audit --no-fund
COPY libs/ ./libs/
COPY services/ ./services/
COPY scripts/build.mjs ./scripts/
RUN node scripts/build.mjs

# ---- runtime
FROM ${NODE_IMAGE} AS runtime
ARG SHADOWPLANE_VERSION=0.1.0
LABEL org.opencontainers.image.title="shadowplane" \
      org.opencontainers.image.description="Shadow-duplicator data plane for LLM API traffic (one image, every role)" \
      org.opencontainers.image.version="${SHADOWPLANE_VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"

# tini: PID 1 that forwards signals and reaps zombies. npm/npx/corepack are not needed at run
# time, so they are removed from the final image.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini=0.19.0-1+b3 \
 && rm -rf /var/lib/apt/lists/* \
 && rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
           /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
 && groupadd --gid 10001 shadowplane \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
            --shell /usr/sbin/nologin shadowplane

WORKDIR /app
# Code and dependencies stay root-owned and read-only to the runtime user.
COPY --from=deps /app/ ./
COPY package.json package-lock.json tsconfig.base.json tsconfig.json ./
COPY libs/ ./libs/
COPY services/ ./services/
COPY examples/data/ ./examples/data/
COPY --from=build /src/dist/ ./dist/

# SHADOWPLANE_RUN_FROM=dist: the binaries run dist/ and refuse to start without it (never the
# sources). Data files (price catalogue, demo data set, package.json versions) stay at their
# places in the tree, where the compiled modules look for them. /tmp is the only writable path.
ENV NODE_ENV=production \
    SHADOWPLANE_RUN_FROM=dist \
    TMPDIR=/tmp \
    HOME=/tmp

USER 10001:10001
ENTRYPOINT ["tini", "--", "node", "/app/services/shadowplane/bin/shadowplane.mjs"]
CMD ["--help"]
