#!/usr/bin/env bash
# Generates config/prometheus/prometheus-rule.yaml (the PrometheusRule to deploy) from
# config/prometheus/rules.yaml (the plain rule file promtool checks and tests): the same groups
# under `spec`. `--check` fails, with a diff, when the committed file differs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src=$root/config/prometheus/rules.yaml
dst=$root/config/prometheus/prometheus-rule.yaml
generate() {
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
  grep -v '^#' "$src" | sed '/^$/!s/^/  /'
}
case ${1:-} in
  --check)
    if ! diff -u "$dst" <(generate); then
      echo "prometheus-rule.sh: $dst is out of date with $src; run hack/prometheus-rule.sh" >&2
      exit 1
    fi
    ;;
  "")
    generate >"$dst"
    ;;
  *)
    echo "usage: $0 [--check]" >&2
    exit 2
    ;;
esac
