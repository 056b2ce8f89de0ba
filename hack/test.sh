#!/usr/bin/env bash
# make test: every check CI runs, in turn; a failing phase does not stop the later ones (one
# failure must not hide the rest), and the run ends with a summary: each phase's result and wall
# time, then each e2e test binary's (hack/e2e.sh, .cache/e2e-summary.txt). Exits 1 when any phase
# failed. The tools come first: without them nothing else can run.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
make -s tools || exit 1
mkdir -p .cache
rm -f .cache/e2e-summary.txt
phases=(manifests-check prometheus-rules olm-validate script-tests unit console image-test e2e)
results=()
failed=0
t_all=$SECONDS
for phase in "${phases[@]}"; do
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
