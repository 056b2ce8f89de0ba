#!/usr/bin/env bash
# make test-stress: the e2e suite under load, to find the tests that pass only on an idle machine
# (issue #46). Builds first, then runs hack/e2e.sh STRESS_RUNS times (default 3) while
# STRESS_HOGS busy loops (default: one per core) run at `nice -n STRESS_NICE` (default 10), i.e.
# at a lower priority than the tests, as CI's neighbours would; then the script tests (the
# daemons' start-up race). Arguments go to hack/e2e.sh (e.g. `--test web` for the browser tests
# alone). Each run's summary is kept in .cache/stress-<n>.txt; the end prints them all.
# Not part of make test (it takes STRESS_RUNS times the e2e suite: about 25 minutes a run).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
runs=${STRESS_RUNS:-3}
hogs_n=${STRESS_HOGS:-$(nproc)}
nice_n=${STRESS_NICE:-10}
E2E_BUILD_ONLY=1 hack/e2e.sh "$@" || exit 1
hogs=()
stop_hogs() {
  local p
  for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
  hogs=()
}
trap stop_hogs EXIT
failed=0
for ((run = 1; run <= runs; run++)); do
  echo "stress: run $run of $runs: hack/e2e.sh $* under $hogs_n busy loops at nice $nice_n ($(date -u +%H:%M:%S) UTC)" >&2
  for ((i = 0; i < hogs_n; i++)); do
    nice -n "$nice_n" bash -c 'while :; do :; done' &
    hogs+=($!)
  done
  if ! hack/e2e.sh "$@"; then failed=1; fi
  cp .cache/e2e-summary.txt ".cache/stress-$run.txt" 2>/dev/null || echo "run-tests: no summary (the run stopped before its tests)" >".cache/stress-$run.txt"
  if ! hack/tests/start-race.sh; then
    failed=1
    echo "  FAIL  script-tests (hack/tests/start-race.sh)" >>".cache/stress-$run.txt"
  fi
  stop_hogs
done
echo >&2
for ((run = 1; run <= runs; run++)); do
  echo "stress: run $run:" >&2
  sed 's/^/  /' ".cache/stress-$run.txt" >&2
done
exit "$failed"
