#!/usr/bin/env bash
# make test: every check CI runs, in turn; a failing phase does not stop the later ones (one
# failure must not hide the rest), and the run ends with a summary: each phase's result and wall
# time, then each e2e test binary's (hack/e2e.sh, .cache/e2e-summary.txt). Exits 1 when any phase
# failed. The tools come first: without them nothing else can run. The Go builds run in the
# background meanwhile (below).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
make -s tools || exit 1
mkdir -p .cache
rm -f .cache/e2e-summary.txt
# The Go-built control plane, OCM and the OLM validators (about 10 minutes on a fresh machine, a
# no-op once built) build in the background at a lower priority while the phases that need no Go
# run (CRD drift, rules, unit tests, the console, the image: Rust's and npm's builds leave cores
# idle), as .ci/run does during lint; the phases that need them, and the timing-sensitive ones,
# come after and wait for that build to end. If it fails, their own make target builds again and
# says why.
go_builds=
if [[ ${TEST_NO_BACKGROUND_GO:-} != 1 ]]; then
  echo "test: building the Go binaries in the background (.cache/go-builds.log)" >&2
  nice -n 10 bash -c 'hack/build-k8s.sh && hack/build-ocm.sh && hack/build-olm-validate.sh' \
    >.cache/go-builds.log 2>&1 &
  go_builds=$!
fi
phases=(manifests-check prometheus-rules unit console image-test olm-validate script-tests e2e)
results=()
failed=0
t_all=$SECONDS
for phase in "${phases[@]}"; do
  if [[ -n $go_builds && $phase == olm-validate ]]; then
    echo "test: waiting for the Go builds (.cache/go-builds.log) ($(date -u +%H:%M:%S) UTC)" >&2
    wait "$go_builds" || echo "test: the background Go builds failed (.cache/go-builds.log): the next phases build again" >&2
    go_builds=
  fi
  echo "test: ---- make $phase ($(date -u +%H:%M:%S) UTC)" >&2
  t0=$SECONDS
  if make --no-print-directory "$phase"; then word=PASS; else
    word=FAIL
    failed=1
  fi
  results+=("$(printf '  %s  %-17s %5d s' "$word" "$phase" $((SECONDS - t0)))")
done
{
  echo
  echo "test: summary ($(((SECONDS - t_all) / 60)) min in all)"
  printf '%s\n' "${results[@]}"
  [[ ! -f .cache/e2e-summary.txt ]] || sed 's/^/  /' .cache/e2e-summary.txt
} >&2
exit "$failed"
