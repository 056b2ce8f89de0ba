#!/usr/bin/env bash
# Builds .cache/bin/ocm, the Open Cluster Management (OCM) components the e2e tests run as local
# processes (hack/ocm-env.sh): `ocm controller` (hub registration controller), `ocm manager`
# (add-on manager), `ocm placement` (placement controller), `ocm webhook` (add-on conversion
# webhook), `ocm agent` (klusterlet agent).
#
# The source is an archive of open-cluster-management-io/ocm at a pinned commit with its vendor/
# tree (the Go module proxy does not serve open-cluster-management.io/*): it is extracted into
# .cache/ocm-src and built offline with hack/ocm/main.go as the main package. Nothing of OCM is
# committed here. Rebuilds only when the archive's checksum or hack/ocm/main.go changes.
#
# environment:
#   OCM_SRC_ARCHIVE  the archive (default <repo>/../shared/ocm/ocm-src.tar.xz)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# One Go build at a time (.ci/run starts them in the background while lint compiles; make e2e
# then waits here and finds them built).
mkdir -p "$root/.cache"
exec 8>"$root/.cache/go-build.lock"
if ! flock -n 8; then
  echo "build-ocm: waiting for the Go build already running (lock .cache/go-build.lock)" >&2
  flock 8
fi
archive=${OCM_SRC_ARCHIVE:-$root/../shared/ocm/ocm-src.tar.xz}
commit=00f84c32b03b813ca504809bc526f59ec6c5df8b
main_go=$root/hack/ocm/main.go
src=$root/.cache/ocm-src
out=$root/.cache/bin
stamp=$out/.ocm.stamp

log() { echo "build-ocm: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

if [[ ! -f $archive ]]; then
  die "the OCM source archive is missing: expected at $archive
  (set OCM_SRC_ARCHIVE to use another path). It is the source of
  https://github.com/open-cluster-management-io/ocm at commit $commit with 'go mod vendor' run,
  packed as a tar.xz whose top folder is ocm/ (e.g. git clone, git checkout $commit, go mod vendor,
  tar -cJf ocm-src.tar.xz ocm); the team's copy is in the shared folder, shared/ocm/ocm-src.tar.xz"
fi
[[ -f $main_go ]] || die "$main_go is missing"

ldflags="-s -w -X open-cluster-management.io/ocm/pkg/version.commitFromGit=$commit"
ldflags+=" -X open-cluster-management.io/ocm/pkg/version.versionFromGit=${commit:0:12}"
want=$({
  sha256sum <"$archive"
  sha256sum <"$main_go"
  echo "go build -trimpath -ldflags '$ldflags' CGO_ENABLED=0 GOFLAGS=-mod=vendor"
} | sha256sum | cut -d' ' -f1)
# The extracted tree is needed too: hack/ocm-env.sh installs the CRDs from it.
if [[ -f $stamp && $(<"$stamp") == "$want" && -x $out/ocm && -f $src/go.mod ]]; then
  exit 0
fi

command -v go >/dev/null || die "Go is required (https://go.dev/dl); none on PATH"
command -v xz >/dev/null || die "xz is required to extract $archive (Debian: xz-utils)"

t0=$SECONDS
log "extracting $archive into ${src#"$root"/}"
tmp=$(mktemp -d "$root/.cache/ocm-src.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
tar -xJf "$archive" -C "$tmp" --strip-components=1 --no-same-owner
[[ -f $tmp/go.mod && -d $tmp/vendor ]] || die "$archive does not hold an OCM tree with vendor/ under one top folder"
grep -q '^module open-cluster-management.io/ocm$' "$tmp/go.mod" || die "$archive is not open-cluster-management.io/ocm (go.mod)"
need=$(awk '$1 == "go" {print $2; exit}' "$tmp/go.mod")
have=$(go env GOVERSION)
have=${have#go}
if [[ -n $need ]] && ! printf '%s\n%s\n' "$need" "$have" | sort -V -C; then
  die "OCM needs Go >= $need (go.mod); the go on PATH is $have"
fi
mkdir -p "$tmp/cmd/update-status-ocm"
cp "$main_go" "$tmp/cmd/update-status-ocm/main.go"
rm -rf "$src"
mv "$tmp" "$src"
trap - EXIT

mkdir -p "$out"
log "building ${out#"$root"/}/ocm from OCM $commit (offline, vendored; 4-8 minutes on 2 cores from a cold Go cache)"
(
  cd "$src"
  export CGO_ENABLED=0 GOFLAGS=-mod=vendor GOTOOLCHAIN=local GOWORK=off
  go build -trimpath -ldflags "$ldflags" -o "$out/ocm.new" ./cmd/update-status-ocm
)
mv "$out/ocm.new" "$out/ocm"
echo "$want" >"$stamp"
log "done in $((SECONDS - t0))s: $("$out/ocm" --version 2>/dev/null || echo "${out#"$root"/}/ocm")"
