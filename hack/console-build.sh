#!/usr/bin/env bash
# make console: the OpenShift console plugin (console/, docs in console/README.md).
#   1. npm ci from console/package-lock.json (pinned versions), only when the lockfile changed
#      since the last install (its hash is kept in console/node_modules/.package-lock.sha256);
#   2. the type check (tsc --noEmit);
#   3. the SDK's webpack build: console/dist (the plugin: plugin-manifest.json, its entry script
#      and chunks; ConsoleRemotePlugin validates every extension against the SDK's schema) and
#      console/dist-host (the e2e test's host page);
#   4. the unit tests (node --test: the models, the escaping, the views rendered to markup).
# Prints how long each step took. Needs node and npm (hack/ensure-tools.sh installs them).
# Steps 2-4 are skipped when their inputs (console/ but its outputs and node_modules, the web
# view's app.js the tests compare with, node's version) are those of the last run that passed
# (their hash in node_modules/.console-inputs.sha256, beside the lockfile's): `make test` asks
# for the console three times (its phase, the image, e2e).
# CONSOLE_FORCE=1 runs them anyway.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/console"
step() {
  local what=$1 t0=$SECONDS
  shift
  "$@"
  echo "console: $what: $((SECONDS - t0)) s" >&2
}
want=$(sha256sum package-lock.json | cut -d' ' -f1)
stamp=node_modules/.package-lock.sha256
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  step "npm ci" npm ci --no-audit --no-fund --loglevel=error
  echo "$want" >"$stamp"
fi
inputs() {
  find . \( -path ./node_modules -o -path ./dist -o -path ./dist-host -o -path ./build-test \) \
    -prune -o -type f -print | LC_ALL=C sort | xargs -d '\n' sha256sum
  sha256sum ../cli/src/web/assets/app.js
  node --version
}
# Beside the lockfile's stamp: dist/ is what the image ships, nothing else goes there.
built=node_modules/.console-inputs.sha256
now=$(inputs | sha256sum | cut -d' ' -f1)
if [[ ${CONSOLE_FORCE:-} != 1 && -f $built && -f dist/plugin-manifest.json && -f dist-host/host.js && $(cat "$built") == "$now" ]]; then
  echo "console: up to date (inputs unchanged since the last build and tests passed)" >&2
  exit 0
fi
rm -f "$built"
step "type check" npm run -s typecheck
step "webpack build" npm run -s build
step "unit tests" npm test --silent
echo "$now" >"$built"
