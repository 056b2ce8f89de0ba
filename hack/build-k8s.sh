#!/usr/bin/env bash
# Builds the pinned local control plane (etcd, kube-apiserver, kube-controller-manager)
# from Go modules into .cache/bin. Rebuilds only when hack/k8s-bins/go.{mod,sum} change.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# One Go build at a time (.ci/run starts them in the background while lint compiles; make e2e
# then waits here and finds them built).
mkdir -p "$root/.cache"
exec 8>"$root/.cache/go-build.lock"
if ! flock -n 8; then
  echo "build-k8s: waiting for the Go build already running (lock .cache/go-build.lock)" >&2
  flock 8
fi
src="$root/hack/k8s-bins"
out="$root/.cache/bin"
stamp="$out/.k8s-bins.stamp"
want=$(cat "$src/go.mod" "$src/go.sum" | sha256sum | cut -d' ' -f1)
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$out/etcd" && -x "$out/kube-apiserver" && -x "$out/kube-controller-manager" ]]; then
  exit 0
fi
command -v go >/dev/null || { echo "build-k8s: Go is required (https://go.dev/dl); none on PATH" >&2; exit 1; }
mkdir -p "$out"
k8s=$(awk '$1=="k8s.io/kubernetes" && $2 ~ /^v/ {print $2} $1=="require" && $2=="k8s.io/kubernetes" {print $3}' "$src/go.mod" | head -1)
minor=$(echo "$k8s" | cut -d. -f2)
ver_ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ver_ldflags+=" -X '$pkg.gitVersion=$k8s' -X '$pkg.gitMajor=1' -X '$pkg.gitMinor=$minor' -X '$pkg.gitTreeState=clean' -X '$pkg.buildDate=1970-01-01T00:00:00Z'"
done
echo "build-k8s: building kube-apiserver, kube-controller-manager $k8s and etcd (first build takes several minutes)" >&2
cd "$src"
export CGO_ENABLED=0
go build -trimpath -ldflags "-s -w $ver_ldflags" -o "$out/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
go build -trimpath -ldflags "-s -w $ver_ldflags" -o "$out/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager
go build -trimpath -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3
echo "$want" > "$stamp"
echo "build-k8s: done: $("$out/kube-apiserver" --version) / etcd $("$out/etcd" --version | head -1)" >&2
