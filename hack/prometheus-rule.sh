#!/usr/bin/env bash
# Generates the deployable rule objects from the plain rule files promtool checks and tests:
# - config/prometheus/prometheus-rule.yaml (the PrometheusRule of a cluster) from
#   config/prometheus/rules.yaml: the same groups under `spec`;
# - config/acm/observability/thanos-ruler-custom-rules.yaml (the ConfigMap ACM's Thanos ruler
#   reads on the hub) from config/acm/observability/fleet-rules.yaml: the file under
#   `data.custom_rules.yaml`.
# `--check` fails, with a diff, when a committed file differs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prom_src=$root/config/prometheus/rules.yaml
prom_dst=$root/config/prometheus/prometheus-rule.yaml
acm_src=$root/config/acm/observability/fleet-rules.yaml
acm_dst=$root/config/acm/observability/thanos-ruler-custom-rules.yaml
prometheus_rule() {
  cat <<'HEADER'
# Generated from config/prometheus/rules.yaml by hack/prometheus-rule.sh: edit that file, then
# run `hack/prometheus-rule.sh` (`make prometheus-rules` checks that this file is up to date).
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: update-status
  namespace: openshift-update-status
  labels:
    app.kubernetes.io/name: update-status-controller
  annotations:
    kubernetes.io/description: Alerting rules for when the update-status metrics call for administrator attention during a cluster update.
spec:
HEADER
  # Drop the file's leading comments; indent every non-empty line under `spec:`.
  grep -v '^#' "$prom_src" | sed '/^$/!s/^/  /'
}
thanos_ruler_rules() {
  cat <<'HEADER'
# Generated from config/acm/observability/fleet-rules.yaml by hack/prometheus-rule.sh: edit that
# file, then run `hack/prometheus-rule.sh` (`make prometheus-rules` checks this file).
# ACM's Thanos ruler reads ONE ConfigMap of this name: if the hub has one already, add the group
# of custom_rules.yaml below to it instead of applying this file (docs/acm.md).
apiVersion: v1
kind: ConfigMap
metadata:
  name: thanos-ruler-custom-rules
  namespace: open-cluster-management-observability
  labels:
    cluster.open-cluster-management.io/backup: ""
    app.kubernetes.io/name: update-status-controller
data:
  custom_rules.yaml: |
HEADER
  grep -v '^#' "$acm_src" | sed '/^$/!s/^/    /'
}
case ${1:-} in
  --check)
    rc=0
    if ! diff -u "$prom_dst" <(prometheus_rule); then
      echo "prometheus-rule.sh: $prom_dst is out of date with $prom_src; run hack/prometheus-rule.sh" >&2
      rc=1
    fi
    if ! diff -u "$acm_dst" <(thanos_ruler_rules); then
      echo "prometheus-rule.sh: $acm_dst is out of date with $acm_src; run hack/prometheus-rule.sh" >&2
      rc=1
    fi
    exit $rc
    ;;
  "")
    prometheus_rule >"$prom_dst"
    thanos_ruler_rules >"$acm_dst"
    ;;
  *)
    echo "usage: $0 [--check]" >&2
    exit 2
    ;;
esac
