#!/usr/bin/env bash
# Loads snapshot folders (testdata/oc-status/<case>/ layout) into the local cluster
# started by hack/local-cluster.sh (same CLUSTER_DIR), through the tools crate's
# `load-snapshot` binary.
#
# usage: hack/load-snapshot.sh [--clean] DIR...
#   --clean   delete the objects of earlier snapshots first
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CLUSTER_DIR=${CLUSTER_DIR:-$root/.cache/cluster}
if [[ $# -eq 0 ]]; then
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
if [[ ! -f $CLUSTER_DIR/kubeconfig ]]; then
  echo "load-snapshot: no local cluster in $CLUSTER_DIR (run hack/local-cluster.sh up first)" >&2
  exit 1
fi
cd "$root"
exec cargo run --quiet --package update-status-tools --bin load-snapshot -- \
  --kubeconfig "$CLUSTER_DIR/kubeconfig" "$@"
