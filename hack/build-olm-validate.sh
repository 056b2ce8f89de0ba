#!/usr/bin/env bash
# Builds hack/olm-validate (operator-framework/api's bundle validators, pinned in its go.mod)
# into .cache/tools/olm-validate; rebuilds only when its go.mod, go.sum or main.go change.
# The module comes from the Go module proxy (about 850 module versions listed in go.sum, most
# of them go.mod files only); the first build takes about a minute and a half on 2 cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root/.cache/tools"
exec 8>"$root/.cache/go-build.lock"
if ! flock -n 8; then
  echo "build-olm-validate: waiting for the Go build already running (lock .cache/go-build.lock)" >&2
  flock 8
fi
src="$root/hack/olm-validate"
out="$root/.cache/tools/olm-validate"
stamp="$out.stamp"
want=$(cat "$src/go.mod" "$src/go.sum" "$src/main.go" | sha256sum | cut -d' ' -f1)
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$out" ]]; then
  exit 0
fi
command -v go >/dev/null || { echo "build-olm-validate: Go is required; none on PATH" >&2; exit 1; }
echo "build-olm-validate: building operator-framework/api's validators (hack/olm-validate)" >&2
cd "$src"
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out" .
echo "$want" > "$stamp"
