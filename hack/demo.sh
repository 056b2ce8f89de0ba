#!/usr/bin/env bash
# make demo: local control plane + a loaded snapshot + the controller, showing its objects live.
# Ctrl-C stops the controller and tears the control plane down.
#
# usage: hack/demo.sh [SNAPSHOT_DIR]     (default: a worker pool blocked by a PodDisruptionBudget)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
snapshot=${1:-../shared/fixtures/oc-status/4.16.0-ec2-control-plane-updated-pdb-prohibits-draining}
namespace=${NAMESPACE:-openshift-update-status}
export CLUSTER_DIR=${CLUSTER_DIR:-$root/.cache/demo-cluster}

hack/ensure-tools.sh
cargo build -q -p update-status-controllers -p update-status-cli -p update-status-e2e --bins
hack/local-cluster.sh up
export KUBECONFIG=$CLUSTER_DIR/kubeconfig
controller_pid=""
cleanup() {
  trap - INT TERM EXIT
  [[ -n $controller_pid ]] && kill "$controller_pid" 2>/dev/null && wait "$controller_pid" 2>/dev/null
  hack/local-cluster.sh down >/dev/null 2>&1 || true
  echo "demo: stopped and cleaned up"
}
trap cleanup INT TERM EXIT

kubectl create namespace "$namespace" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
hack/load-snapshot.sh "$snapshot"
# A captured cluster is shown at the instant it was captured (its `now` file), as oc's mock
# mode does; without one the wall clock is used.
clock=()
[[ -f $snapshot/now ]] && clock=(--assess-at "$(tr -d '[:space:]' <"$snapshot/now")")
cli_now=()
[[ -f $snapshot/now ]] && cli_now=(--now "$(tr -d '[:space:]' <"$snapshot/now")")
target/debug/update-status-controller --namespace "$namespace" --metrics-bind-address 127.0.0.1:0 "${clock[@]}" \
  >"$CLUSTER_DIR/controller.log" 2>&1 &
controller_pid=$!
echo "demo: controller running (log: $CLUSTER_DIR/controller.log); KUBECONFIG=$KUBECONFIG"
while kill -0 "$controller_pid" 2>/dev/null; do
  out=$({
    echo "update-status demo — snapshot $(basename "$snapshot") — $(date -u +%H:%M:%S) — Ctrl-C to stop"
    echo
    target/debug/kubectl-update_status -n "$namespace" "${cli_now[@]}" 2>&1 || true
    echo
    kubectl get controlplaneupdatestatus,workerpoolupdatestatus -n "$namespace" 2>&1
    echo
    kubectl get updateinsights -n "$namespace" -l update.openshift.io/insight-type=health 2>&1
  })
  clear 2>/dev/null || true
  echo "$out"
  sleep 2
done
echo "demo: the controller exited; its log:" >&2
tail -20 "$CLUSTER_DIR/controller.log" >&2
exit 1
