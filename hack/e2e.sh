#!/usr/bin/env bash
# make e2e: starts one local control plane for all e2e test binaries, builds the binaries the
# tests run (the controller and the kubectl plugin, debug and release; OCM for ocm_env, which
# starts its own hub and managed clusters), runs every e2e test binary (a failure does not stop the
# others) with a summary of each one's result and wall time, and tears down.
# UPDATE_STATUS_E2E_KEEP=1 keeps the cluster (and its logs) for debugging.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export CLUSTER_DIR=${E2E_CLUSTER_DIR:-$root/.cache/e2e-cluster}
# Two runs at once would tear down each other's control plane (same directory) or, on 2 cores,
# break each other's timing (other checkouts): the second waits for the first.
# Builds first, outside the lock: a build holding it would keep other runs waiting.
hack/build-k8s.sh
hack/build-ocm.sh
cargo build -q -p update-status-controllers -p update-status-cli --bins
# The release controller (the service_account test runs the binary the image ships): the same
# build as `make image`, so `make test` builds it once. E2E_SKIP_RELEASE=1 skips it (a run of tests
# that start no release binary: every test but service_account, acm_addon and acm_agent).
[[ ${E2E_SKIP_RELEASE:-} == 1 ]] || hack/image-build.sh --bins-only
cargo test -q -p update-status-e2e --features e2e --no-run "$@"
cargo build -q -p xtask --bin run-tests
[[ ${E2E_BUILD_ONLY:-} != 1 ]] || exit 0 # hack/stress.sh builds before it loads the machine
mkdir -p "$(dirname "$CLUSTER_DIR")"
lock=${E2E_LOCK:-/tmp/update-status-e2e.lock}
exec 9>"$lock"
if ! flock -n 9; then
  echo "e2e: waiting for another e2e run to finish (lock $lock)" >&2
  flock 9
fi
hack/local-cluster.sh down >/dev/null 2>&1 || true
hack/local-cluster.sh up 9>&- # the daemons must not hold the lock
if [[ ${UPDATE_STATUS_E2E_KEEP:-} != 1 ]]; then
  trap 'hack/local-cluster.sh down >/dev/null 2>&1 || true' EXIT
fi
export KUBECONFIG=$CLUSTER_DIR/kubeconfig UPDATE_STATUS_E2E_REUSE=1
# Every binary runs, whatever fails (no fail-fast); the summary lists each with its wall time,
# also in .cache/e2e-summary.txt. A binary running longer than E2E_BINARY_TIMEOUT seconds (default
# 600: the slowest takes about 2 minutes) is killed and reported, so one hang cannot eat CI's time.
target/debug/run-tests --summary "$root/.cache/e2e-summary.txt" --timeout "${E2E_BINARY_TIMEOUT:-600}" \
  -p update-status-e2e --features e2e "$@"
