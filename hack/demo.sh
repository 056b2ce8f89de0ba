#!/usr/bin/env bash
# make demo: a local control plane, the controller, and a simulated OpenShift update
# (12 operators, 2 pools, 10 nodes, one worker's drain blocked by a PodDisruptionBudget for a
# few steps), shown with `kubectl update-status` every 2 s until the update completes; then
# the final state stays on screen until Ctrl-C. Ctrl-C stops the simulator and the controller
# and tears the control plane down.
#
# usage: hack/demo.sh                 a simulated update
#        hack/demo.sh SNAPSHOT_DIR    a captured cluster (testdata/oc-status layout),
#                                     shown at the instant it was captured
#        MODE=hosted hack/demo.sh     a simulated hosted-cluster update (HyperShift): the
#                                     HyperShift and cluster-api CRDs (testdata/hosted/crds),
#                                     the controller with --mode=hosted, simulate-hosted-update
#                                     (HostedCluster clusters/demo, a Replace and an InPlace
#                                     NodePool; an invalid release image, then a minor update
#                                     blocked by ClusterVersionUpgradeable=False, then a Machine
#                                     that cannot be drained), shown with
#                                     `kubectl update-status -n clusters --hosted-cluster demo`
#
# environment:
#   CLUSTER_DIR      control-plane state (default .cache/demo-cluster)
#   NAMESPACE        where the controller writes (default openshift-update-status; hosted: the
#                    HostedCluster's namespace, default clusters)
#   MODE             standalone (default) or hosted
#   DEMO_INTERVAL    wall-clock time per simulated step (default 1s; hosted: 2s)
#   DEMO_SIM_ARGS    more simulate-update (hosted: simulate-hosted-update) flags, e.g.
#                    "--paused-pool auto:8 --nodes-per-pool 20" ("--replace-replicas 5")
#   DEMO_REFRESH     seconds between screens (default 2)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
snapshot=${1:-}
mode=${MODE:-standalone}
case $mode in
standalone)
  namespace=${NAMESPACE:-openshift-update-status}
  interval=${DEMO_INTERVAL:-1s}
  ;;
hosted)
  [[ -z $snapshot ]] || { echo "demo: MODE=hosted plays a simulated update, not a snapshot" >&2; exit 2; }
  namespace=${NAMESPACE:-clusters}
  interval=${DEMO_INTERVAL:-2s}
  ;;
*) echo "demo: MODE must be standalone or hosted, not $mode" >&2; exit 2 ;;
esac
refresh=${DEMO_REFRESH:-2}
export CLUSTER_DIR=${CLUSTER_DIR:-$root/.cache/demo-cluster}

hack/ensure-tools.sh
cargo build -q -p update-status-controllers -p update-status-cli -p update-status-tools --bins
hack/local-cluster.sh up
export KUBECONFIG=$CLUSTER_DIR/kubeconfig

controller_pid=""
simulator_pid=""
stop() { # pid: SIGTERM, then wait for it
  [[ -n $1 ]] || return 0
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  trap - INT TERM EXIT
  stop "${web_pid:-}"
  stop "$simulator_pid"
  stop "$controller_pid"
  hack/local-cluster.sh down >/dev/null 2>&1 || true
  echo "demo: stopped the simulator, the controller and the control plane"
}
trap cleanup INT TERM EXIT

kubectl create namespace "$namespace" --dry-run=client -o yaml | kubectl apply -f - >/dev/null

clock=() # controller: evaluation instant
cli_now=()
controller_args=(--namespace "$namespace")
cli_args=(-n "$namespace")
if [[ $mode == hosted ]]; then
  # The HyperShift and cluster-api CRDs (vendored), then a hosted cluster that replaces
  # whatever an earlier demo left; its update starts after a few seconds.
  kubectl apply --server-side --force-conflicts -f testdata/hosted/crds >/dev/null
  # kubectl fails at once on a CRD without status conditions yet: wait again (for 60 s).
  crds_deadline=$((SECONDS + 60))
  until out=$(kubectl wait --for condition=Established --timeout 60s -f testdata/hosted/crds 2>&1); do
    [[ $out == *".status.conditions accessor error"* ]] && ((SECONDS < crds_deadline)) ||
      { echo "demo: the hosted CRDs are not Established: $out" >&2; exit 1; }
    sleep 0.2
  done
  kubectl create namespace openshift-update-status --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  # shellcheck disable=SC2086 # DEMO_SIM_ARGS is a list of flags
  target/debug/simulate-hosted-update --clean --namespace "$namespace" --name demo \
    --invalid-image auto:4 --blocked-update auto:4 --blocked-drain auto:6 \
    --interval "$interval" --start-delay 6s ${DEMO_SIM_ARGS:-} >"$CLUSTER_DIR/simulator.log" 2>&1 &
  simulator_pid=$!
  title="simulated hosted-cluster update"
  # Hosted mode writes into the HostedCluster's namespace; its Lease stays in the default one.
  controller_args=(--mode=hosted --watch-namespace "$namespace" --namespace openshift-update-status)
  cli_args=(-n "$namespace" --hosted-cluster demo)
elif [[ -n $snapshot ]]; then
  hack/load-snapshot.sh --clean "$snapshot"
  # A captured cluster is shown at the instant it was captured (its `now` file), as oc's mock
  # mode does; without one the wall clock is used.
  if [[ -f $snapshot/now ]]; then
    clock=(--assess-at "$(tr -d '[:space:]' <"$snapshot/now")")
    cli_now=(--now "$(tr -d '[:space:]' <"$snapshot/now")")
  fi
  title="snapshot $(basename "$snapshot")"
else
  # The simulated cluster replaces whatever an earlier demo left; it starts updating after a
  # few seconds, so the first screens show it before the update.
  # shellcheck disable=SC2086 # DEMO_SIM_ARGS is a list of flags
  target/debug/simulate-update --clean --operators 12 --pools 2 --masters 3 --nodes-per-pool 7 \
    --max-unavailable 2 --blocked-drain auto:6 --interval "$interval" --start-delay 6s \
    ${DEMO_SIM_ARGS:-} >"$CLUSTER_DIR/simulator.log" 2>&1 &
  simulator_pid=$!
  title="simulated update"
fi

target/debug/update-status-controller "${controller_args[@]}" --metrics-bind-address 127.0.0.1:0 \
  --metrics-secure=false --health-probe-bind-address 127.0.0.1:0 "${clock[@]}" >"$CLUSTER_DIR/controller.log" 2>&1 &
controller_pid=$!
echo "demo: controller running (log: $CLUSTER_DIR/controller.log); KUBECONFIG=$KUBECONFIG"

# The picture of the same update: kubectl update-status --web, on a free loopback port. The URL
# it prints carries the session's token (http://127.0.0.1:<port>/?token=...): printed as is, and
# its file readable by this user only.
web_url=""
web_pid=""
rm -f "$CLUSTER_DIR/web.out" && (umask 077 && : >"$CLUSTER_DIR/web.out")
target/debug/kubectl-update_status "${cli_args[@]}" "${cli_now[@]}" --web >"$CLUSTER_DIR/web.out" 2>"$CLUSTER_DIR/web.log" &
web_pid=$!
for _ in $(seq 1 100); do
  web_url=$(grep -o 'http://[^ ]*' "$CLUSTER_DIR/web.out" 2>/dev/null | head -1 || true)
  [[ -n $web_url ]] && break
  kill -0 "$web_pid" 2>/dev/null || break
  sleep 0.2
done
[[ -n $web_url ]] || web_url="(not started yet: see $CLUSTER_DIR/web.log)"

finished=""
while true; do
  if ! kill -0 "$controller_pid" 2>/dev/null; then
    echo "demo: the controller exited; its log:" >&2
    tail -20 "$CLUSTER_DIR/controller.log" >&2
    exit 1
  fi
  status=""
  if [[ -n $simulator_pid ]]; then
    if [[ -z $finished ]] && ! kill -0 "$simulator_pid" 2>/dev/null; then
      if wait "$simulator_pid"; then finished="the simulated update is over"; else
        echo "demo: the simulator failed; its log:" >&2
        tail -20 "$CLUSTER_DIR/simulator.log" >&2
        exit 1
      fi
      simulator_pid=""
    fi
    status=$(grep -E '^(step|simulate-)' "$CLUSTER_DIR/simulator.log" 2>/dev/null | tail -1 || true)
  fi
  out=$({
    echo "update-status demo — $title — $(date -u +%H:%M:%S) — Ctrl-C to stop"
    echo "the picture, live in a browser: $web_url"
    [[ -n $status ]] && echo "simulator: $status"
    [[ -n $finished ]] && echo "demo: $finished; this is the final state (Ctrl-C to stop)"
    echo
    target/debug/kubectl-update_status "${cli_args[@]}" "${cli_now[@]}" 2>&1 || echo "(waiting for the controller)"
    echo
    kubectl get controlplaneupdatestatus,workerpoolupdatestatus -n "$namespace" 2>&1
    if [[ $mode == hosted ]]; then
      echo
      kubectl get machines.cluster.x-k8s.io -n "$namespace-demo" 2>&1
    fi
  })
  clear 2>/dev/null || true
  echo "$out"
  sleep "$refresh"
done
