#!/usr/bin/env bash
# Installs the system packages Shadowplane's demo and tests run against, when missing:
# nats-server (JetStream), redis-server (cluster-wide rate-limit tests), chromium (HTML report
# test), tmux (terminal test of `shadowctl campaign watch`), prometheus (its promtool checks the
# roles' /metrics and unit-tests the chart's alert rules). Needs root for apt-get; otherwise
# prints what to install and exits non-zero.
# Usage: scripts/ensure-system-deps.sh [package ...]   (default: all of the above)
set -euo pipefail
want=("$@")
[ ${#want[@]} -gt 0 ] || want=(nats-server redis-server chromium tmux prometheus)
missing=()
for p in "${want[@]}"; do
  case "$p" in
    nats-server) command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || missing+=(nats-server) ;;
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
