#!/usr/bin/env bash
# Installs what Shadowplane's demo and tests run against, when missing: nats-server (JetStream),
# redis-server (cluster-wide rate-limit tests), chromium (HTML report test), tmux (terminal test of
# `shadowctl campaign watch`), prometheus (its promtool checks the roles' /metrics and
# unit-tests the chart's alert rules). apt-get needs root; otherwise prints what to install and exits
# non-zero.
#
# nats-server is not Debian's: that one (2.9.x) has a KV compare-and-set race on replicated
# buckets, fixed in 2.10, that lets the budget ledger overspend. It is built from its Go module at
# NATS_SERVER_VERSION into .bin/nats-server (needs `go` and the Go module proxy; the first build
# takes a minute or two, later ones reuse the Go caches). Tests and the demo use that binary.
# Usage: scripts/ensure-system-deps.sh [package ...]   (default: all of the above)
set -euo pipefail
NATS_SERVER_VERSION="${NATS_SERVER_VERSION:-v2.15.3}"
root="$(cd "$(dirname "$0")/.." && pwd)"

# Builds .bin/nats-server at NATS_SERVER_VERSION unless it is already that version.
ensure_nats_server() {
  local bin="$root/.bin/nats-server"
  if [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null)" = "nats-server: $NATS_SERVER_VERSION" ]; then return 0; fi
  if ! command -v go >/dev/null 2>&1; then
    echo "building nats-server $NATS_SERVER_VERSION needs the Go toolchain (go) — install it (https://go.dev/dl/) and rerun" >&2
    exit 69
  fi
  echo "building nats-server $NATS_SERVER_VERSION from its Go module into .bin/ (first time: a minute or two)"
  mkdir -p "$root/.bin"
  GOBIN="$root/.bin" go install "github.com/nats-io/nats-server/v2@$NATS_SERVER_VERSION"
  "$bin" --version
}

want=("$@")
[ ${#want[@]} -gt 0 ] || want=(nats-server redis-server chromium tmux prometheus)
missing=()
for p in "${want[@]}"; do
  case "$p" in
    nats-server) ensure_nats_server ;;
    redis-server) command -v redis-server >/dev/null 2>&1 || missing+=(redis-server) ;;
    chromium) command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium) ;;
    tmux) command -v tmux >/dev/null 2>&1 || missing+=(tmux) ;;
    prometheus) command -v promtool >/dev/null 2>&1 || missing+=(prometheus) ;;
    *) command -v "$p" >/dev/null 2>&1 || missing+=("$p") ;;
  esac
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing system packages: ${missing[*]} — install them (Debian: sudo apt-get install -y ${missing[*]})" >&2
  exit 69
fi
echo "installing ${missing[*]} (apt-get)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
