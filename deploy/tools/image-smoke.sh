#!/usr/bin/env bash
# image-smoke: replays the Dockerfile's steps without a Docker engine and runs the result the way
# the image runs it — to catch what a lint cannot: a role needing a dev dependency at run time,
# a source file the .dockerignore leaves out, a write outside /tmp.
#
#   1. copy exactly the build context (.dockerignore applied by BuildKit's matcher, via
#      dockerfile-lint -print-context) into a scratch /app
#   2. npm ci --omit=dev there and remove tsx/esbuild (as the deps stage does; npm's cache makes
#      it quick)
#   3. the build stage: scripts/build.mjs (the host's dev install has esbuild) compiles the same
#      sources; its output becomes /app/dist
#   4. make /app read-only (root-owned, chmod a-w), as the image's code is to uid 10001
#   5. as uid/gid 10001 with TMPDIR=HOME=<scratch tmp>, NODE_ENV=production and
#      SHADOWPLANE_RUN_FROM=dist (the image's environment):
#      - `shadowplane --help` lists the roles and exits 0
#      - `shadowplane provider-sim` starts, prints its {"event":"listening"} line, answers
#        /healthz, and exits 0 on SIGTERM
#      - every role module loads (import only) from dist/ and the production install
# Not replayed: the base image, apt's tini, the removal of npm (the host's Node.js is used; the image's is Node 24 LTS).
# Usage: deploy/tools/image-smoke.sh   (needs .bin/dockerfile-lint or DOCKERFILE_LINT=<path>, setpriv,
#        network or npm cache, and the dev install for the build step)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
WORK=$(mktemp -d /tmp/shadowplane-image-smoke.XXXXXX)
APP=$WORK/app
RUNTMP=$WORK/tmp
SIM_PID=""
cleanup() {
  if [[ -n $SIM_PID ]] && kill -0 "$SIM_PID" 2>/dev/null; then kill "$SIM_PID" 2>/dev/null || true; fi
  chmod -R u+w "$WORK" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$APP" "$RUNTMP"
chmod 755 "$WORK" "$APP"
chmod 1777 "$RUNTMP"

echo "== build context → $APP"
"${DOCKERFILE_LINT:-$ROOT/.bin/dockerfile-lint}" -print-context -context "$ROOT" > "$WORK/context.txt"
(cd "$ROOT" && tar -cf - -T "$WORK/context.txt") | (cd "$APP" && tar -xf -)
echo "$(wc -l < "$WORK/context.txt") files"

# IMAGE_SMOKE_NPM=install replays with `npm install` instead of `npm ci`, only to diagnose the
# rest of the image when the lock file is out of sync (the Docker build itself uses npm ci).
NPM_CMD=${IMAGE_SMOKE_NPM:-ci}
echo "== npm $NPM_CMD --omit=dev"
if ! (cd "$APP" && NODE_ENV=production npm "$NPM_CMD" --omit=dev --no-audit --no-fund --prefer-offline --loglevel=error); then
  echo "FAIL: npm $NPM_CMD --omit=dev failed in the build context — the image build would fail the same way" >&2
  exit 1
fi
rm -rf "$APP/node_modules/tsx" "$APP/node_modules/esbuild" "$APP/node_modules/@esbuild"
for dev in vitest typescript autocannon playwright-core tsx esbuild; do
  if [[ -e $APP/node_modules/$dev ]]; then echo "FAIL: dev dependency $dev installed" >&2; exit 1; fi
done
echo "production install: $(du -sh "$APP/node_modules" | cut -f1), no dev dependencies, no tsx"

echo "== build stage: scripts/build.mjs → $APP/dist"
BUILD_OUT=$ROOT/.tmp-image-smoke-dist-$$
trap 'rm -rf "$BUILD_OUT"; cleanup' EXIT
(cd "$ROOT" && node scripts/build.mjs --outdir "$BUILD_OUT")
cp -r "$BUILD_OUT" "$APP/dist"
rm -rf "$BUILD_OUT"
if grep -lq "tsx/esm" "$APP"/dist/*.mjs; then echo "FAIL: dist/ loads tsx" >&2; exit 1; fi

chmod -R a-w "$APP"
echo "== shadowplane --help (uid 10001, read-only /app)"
out=$(cd / && env -i PATH="$PATH" NODE_ENV=production SHADOWPLANE_RUN_FROM=dist TMPDIR="$RUNTMP" HOME="$RUNTMP" \
  setpriv --reuid 10001 --regid 10001 --clear-groups node "$APP/services/shadowplane/bin/shadowplane.mjs" --help)
for role in sidecar duplicator control verdict provider-sim; do
  grep -q "^  $role " <<<"$out" || { echo "FAIL: --help does not list $role" >&2; echo "$out" >&2; exit 1; }
done
echo "ok: lists sidecar, duplicator, control, verdict, provider-sim"

echo "== every role module loads from dist/ and the production install"
cat > "$RUNTMP/load-roles.mjs" <<EOF
const { ROLES } = await import('$APP/dist/shadowplane.mjs');
const failed = [];
for (const [name, r] of Object.entries(ROLES)) {
  try { const m = await r.load(); if (typeof m.main !== 'function') failed.push(name + ': no main()'); }
  catch (e) { failed.push(name + ': ' + (e && e.message ? e.message.split('\n')[0] : e)); }
}
if (failed.length) { console.error('FAIL ' + failed.join('\n     ')); process.exit(1); }
console.log('ok: ' + Object.keys(ROLES).join(', '));
process.exit(0);
EOF
chmod 0644 "$RUNTMP/load-roles.mjs"
(cd / && env -i PATH="$PATH" NODE_ENV=production SHADOWPLANE_RUN_FROM=dist TMPDIR="$RUNTMP" HOME="$RUNTMP" \
  setpriv --reuid 10001 --regid 10001 --clear-groups node "$RUNTMP/load-roles.mjs")

echo "== provider-sim starts, serves /healthz, drains on SIGTERM"
(cd / && exec env -i PATH="$PATH" NODE_ENV=production SHADOWPLANE_RUN_FROM=dist TMPDIR="$RUNTMP" HOME="$RUNTMP" \
  SHADOWPLANE_SIM_LISTEN=127.0.0.1:0 SHADOWPLANE_SIM_LOG_LEVEL=error \
  setpriv --reuid 10001 --regid 10001 --clear-groups node "$APP/services/shadowplane/bin/shadowplane.mjs" provider-sim) \
  > "$WORK/sim.out" 2> "$WORK/sim.err" &
SIM_PID=$!
url=""
for _ in $(seq 1 300); do
  url=$(grep -o '"url":"[^"]*"' "$WORK/sim.out" 2>/dev/null | head -1 | cut -d'"' -f4 || true)
  [[ -n $url ]] && break
  kill -0 "$SIM_PID" 2>/dev/null || break
  sleep 0.1
done
[[ -n $url ]] || { echo "FAIL: provider-sim printed no listening line" >&2; cat "$WORK/sim.out" "$WORK/sim.err" >&2; exit 1; }
echo "listening: $url"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/healthz" || true)
[[ $code == 200 ]] || { echo "FAIL: /healthz answered $code" >&2; exit 1; }
kill -TERM "$SIM_PID"
rc=0; wait "$SIM_PID" || rc=$?
SIM_PID=""
[[ $rc == 0 ]] || { echo "FAIL: provider-sim exited $rc after SIGTERM" >&2; cat "$WORK/sim.err" >&2; exit 1; }
echo "ok: /healthz 200, exit 0 after SIGTERM"

if ls -d "$RUNTMP"/tsx* >/dev/null 2>&1; then echo "FAIL: a role ran through tsx (a cache in TMPDIR)" >&2; exit 1; fi
echo "== image-smoke: OK (compiled build, no tsx)"
