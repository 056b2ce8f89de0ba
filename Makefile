# update-status: `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

CARGO ?= cargo
NAMESPACE ?= openshift-update-status
SNAPSHOT ?= testdata/oc-status/4.16.0-ec2-control-plane-updated-pdb-prohibits-draining
export CLUSTER_DIR ?= $(CURDIR)/.cache/cluster
KUBECONFIG_LOCAL := $(CLUSTER_DIR)/kubeconfig
VERSION := $(shell sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' Cargo.toml)
IMG ?= localhost/update-status-controller:$(VERSION)
OVERLAY ?= default
MODE ?= standalone
ACM_OVERLAY ?= acm

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: tools
tools: ## Check the tools the build and tests need; install the missing Debian packages (hack/ensure-tools.sh)
	@hack/ensure-tools.sh

.PHONY: build
build: ## Build the controller, the kubectl plugin and crdgen (debug)
	$(CARGO) build --workspace --bins

.PHONY: manifests
manifests: ## Regenerate config/crd/*.yaml from the Rust types, the dashboards (config/dashboards, config/acm/observability/grafana-dashboard.yaml), config/acm/addon.yaml (the add-on: config/openshift), the OLM bundle and catalog (make bundle) and docs/api.md (rendered examples)
	$(CARGO) run -q -p update-status-controllers --bin crdgen
	$(CARGO) run -q -p update-status-controllers --bin bundlegen
	$(CARGO) run -q -p update-status-controllers --bin apidoc

.PHONY: manifests-check
manifests-check: ## Fail if config/crd/*.yaml, the dashboards, config/acm/addon.yaml, bundle/, catalog/ or docs/api.md differs from what the code generates
	$(CARGO) run -q -p update-status-controllers --bin crdgen -- --check
	$(CARGO) run -q -p update-status-controllers --bin bundlegen -- --check
	$(CARGO) run -q -p update-status-controllers --bin apidoc -- --check

BUNDLE_IMG ?= localhost/update-status-bundle:$(VERSION)
.PHONY: bundle
bundle: ## Regenerate the OLM bundle (bundle/: the ClusterServiceVersion from config/openshift and config/olm, the CRDs, metadata/annotations.yaml) and its file-based catalog (catalog/); IMG and BUNDLE_IMG set the images (the checked-in bundle uses the defaults)
	$(CARGO) run -q -p update-status-controllers --bin crdgen
	$(CARGO) run -q -p update-status-controllers --bin bundlegen -- --image $(IMG) --bundle-image $(BUNDLE_IMG)

.PHONY: olm-validate
olm-validate: ## Run operator-framework/api's bundle validators (the code of `operator-sdk bundle validate`, the OperatorHub suite included) on bundle/ (hack/olm-validate, built once from the Go module)
	hack/build-olm-validate.sh
	.cache/tools/olm-validate bundle

.PHONY: lint
# Product code (the shipped crates' libraries and binaries; not the e2e tests, the bench, the
# fixtures or xtask) is held to functions of at most 80 lines and 5 arguments (clippy.toml).
NOT_PRODUCT := --exclude update-status-e2e --exclude update-status-testdata --exclude xtask
LENGTH_LINTS := -D clippy::too_many_lines -D clippy::too_many_arguments

lint: ## cargo fmt --check, clippy -D warnings (the e2e tests too, which need `--features e2e` to compile; product code also denies functions over 80 lines or 5 arguments), the commit habits (check-commits)
	hack/check-commits.sh
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p update-status-e2e --features e2e --all-targets -- -D warnings
	$(CARGO) clippy --workspace $(NOT_PRODUCT) --lib --bins -- -D warnings $(LENGTH_LINTS)

.PHONY: k8s-bins
k8s-bins: tools ## Build the pinned etcd, kube-apiserver, kube-controller-manager into .cache/bin (cached)
	hack/build-k8s.sh

.PHONY: ocm-bins
ocm-bins: tools ## Build .cache/bin/ocm (Open Cluster Management hub and klusterlet, for the e2e tests) from the OCM source archive, OCM_SRC_ARCHIVE or ../shared/ocm/ocm-src.tar.xz (cached)
	hack/build-ocm.sh

.PHONY: console
console: tools ## The OpenShift console plugin (console/): npm ci from the lockfile (when it changed), type check, the SDK's webpack build (console/dist, and the e2e host page console/dist-host), unit tests (hack/console-build.sh)
	hack/console-build.sh

.PHONY: unit
unit: ## Unit, fixture and structure tests (no import cycle, the controller's layers; no cluster, no Go: the e2e tests need `--features e2e`); a failing test binary does not stop the others
	$(CARGO) test --workspace --no-fail-fast

.PHONY: script-tests
script-tests: tools k8s-bins ## Tests of the dev scripts: a start-up check never takes a daemon that has not exec'd yet for a dead one (hack/tests/start-race.sh, with a slow exec and under load); the commit check (hack/tests/check-commits.sh)
	hack/tests/start-race.sh
	hack/tests/check-commits.sh

.PHONY: check-commits
check-commits: ## Every commit after COMMITS_SINCE (default bf33c49) has a subject of at most 72 characters and is no wip (hack/check-commits.sh; part of make lint)
	hack/check-commits.sh

.PHONY: modules
modules: ## Print every crate's files, the import arrows between them and any cycle (docs/architecture.md)
	$(CARGO) run -q -p xtask -- modules

.PHONY: e2e
e2e: tools k8s-bins ocm-bins console ## End-to-end tests against a real local kube-apiserver + etcd + kube-controller-manager (and real OCM hubs with managed clusters; the console plugin in Chromium); every binary runs, then a summary with each one's wall time (.cache/e2e-summary.txt)
	hack/e2e.sh

.PHONY: prometheus-rules
prometheus-rules: tools ## Check and unit-test the alerting rules (promtool): the cluster's, and ACM's fleet rules; and the objects generated from them
	hack/prometheus-rule.sh --check
	promtool check rules config/prometheus/rules.yaml config/acm/observability/fleet-rules.yaml
	cd config/prometheus && promtool test rules rules.test.yaml
	cd config/acm/observability && promtool test rules fleet-rules.test.yaml

.PHONY: test
test: ## Everything CI runs: CRD, dashboard and bundle drift, rule checks, unit tests, the console plugin's build and tests, image test (while the Go binaries build in the background), then the OLM bundle validators, script tests, e2e tests; every phase runs whatever fails, then a summary of each phase and each e2e binary with its wall time (hack/test.sh)
	hack/test.sh

.PHONY: test-stress
test-stress: tools k8s-bins ocm-bins console ## The e2e suite STRESS_RUNS times (default 3) while busy loops at nice 10 hold every core, then the script tests: finds tests that pass only on an idle machine (not in CI: about 25 min a run; hack/stress.sh, args via E2E_ARGS)
	hack/stress.sh $(E2E_ARGS)

.PHONY: image
image: console ## Build the container image IMG (default localhost/update-status-controller:<version>) with podman
	hack/image-build.sh $(IMG)

.PHONY: image-test
image-test: tools console ## Build IMG and check it: binaries run in its filesystem (chroot), non-root, no shell (skipped without podman)
	hack/image-test.sh $(IMG)

.PHONY: deploy
deploy: ## Apply config/default (OVERLAY=openshift: config/openshift, adds the ServiceMonitor and PrometheusRule; OVERLAY=hosted: hosted mode) with image IMG to the current kubectl context
	hack/deploy.sh apply $(IMG) $(OVERLAY)

.PHONY: deploy-acm
deploy-acm: ## On an ACM hub: apply config/acm (ACM_OVERLAY=acm-placement: install by Placement) with the agent image IMG; then enable the add-on per cluster (docs/acm.md)
	hack/deploy.sh apply $(IMG) $(ACM_OVERLAY)

.PHONY: undeploy-acm
undeploy-acm: ## Delete what `make deploy-acm` applied (the agents leave every cluster; the hub copies are garbage-collected)
	hack/deploy.sh delete $(IMG) $(ACM_OVERLAY)

.PHONY: undeploy
undeploy: ## Delete what `make deploy` applied (CRDs included: every update-status object goes)
	hack/deploy.sh delete $(IMG) $(OVERLAY)

.PHONY: dev-cluster
dev-cluster: tools k8s-bins ## Start the local control plane (kubeconfig: .cache/cluster/kubeconfig)
	hack/local-cluster.sh up

.PHONY: dev-cluster-down
dev-cluster-down: ## Stop the local control plane and remove its state
	hack/local-cluster.sh down

.PHONY: ocm-env
ocm-env: tools k8s-bins ocm-bins ## Start an OCM hub and managed clusters (OCM_CLUSTERS, default cluster1) as local processes in .cache/ocm-env (hack/ocm-env.sh; `hack/ocm-env.sh env` prints the kubeconfigs)
	hack/ocm-env.sh up

.PHONY: ocm-env-down
ocm-env-down: ## Stop the OCM environment and remove its state
	hack/ocm-env.sh down

.PHONY: load-snapshot
load-snapshot: ## Load SNAPSHOT=<dir> into the local control plane
	hack/load-snapshot.sh $(SNAPSHOT)

.PHONY: run
run: ## Run the controller against the local control plane (make dev-cluster first)
	KUBECONFIG=$(KUBECONFIG_LOCAL) kubectl create namespace $(NAMESPACE) --dry-run=client -o yaml | KUBECONFIG=$(KUBECONFIG_LOCAL) kubectl apply -f - >/dev/null
	KUBECONFIG=$(KUBECONFIG_LOCAL) $(CARGO) run -p update-status-controllers --bin update-status-controller -- --namespace $(NAMESPACE) --metrics-bind-address 127.0.0.1:8443 --health-probe-bind-address 127.0.0.1:8081

.PHONY: bench
bench: tools k8s-bins ## Benchmarks: pure assessment (criterion), then the controller at 500/2,000/5,000 simulated nodes on the local control plane (with the API server's raw write rate), a fleet of 1,000 hosted clusters reported to a separate hub (--fleet), a hub of 5,000 clusters x 10 health insights read by --fleet and its grid (--fleet-rows), the offline CLI on a 5,003-node snapshot and a 20,000-node must-gather, and the web view of 5,000 nodes in headless Chromium; writes docs/benchmarks.md (BENCH_ARGS="--sizes 500 --fleet 200" for a quick run)
	$(CARGO) bench -p update-status-assess --bench assess
	$(CARGO) build --release -p update-status-controllers -p update-status-cli -p update-status-e2e --bins
	BENCH_COMMAND='make bench$(if $(BENCH_ARGS), BENCH_ARGS="$(BENCH_ARGS)")' target/release/bench $(BENCH_ARGS)

ESTIMATE_SEEDS ?= 4,5,6,7,8,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50
.PHONY: bench-estimates
bench-estimates: ## The estimates that learn against oc's method, replayed on simulated updates of heterogeneous, drifting durations (pure, no control plane, ~3 min) over 25 seeds not used to tune them (ESTIMATE_SEEDS=4-8,31-50; each seed draws its platform, ESTIMATE_PLATFORM=cloud|vsphere|metal sets it); fails unless the worst error ratio after 25 % is at most 0.5 and the p10-p90 coverage at least 0.8
	@mkdir -p .cache
	$(CARGO) run -q -p update-status-e2e --bin bench -- --estimates --seeds $(ESTIMATE_SEEDS) $(if $(ESTIMATE_PLATFORM),--estimate-platform $(ESTIMATE_PLATFORM)) | tee .cache/bench-estimates.txt
	@awk '/^estimates: worst ratio/ { seen = 1; ok = ($$4 + 0 <= 0.5 && $$NF + 0 >= 0.8) } END { if (!seen || !ok) { print "bench-estimates: goal missed (worst ratio <= 0.5, coverage >= 0.8)"; exit 1 } }' .cache/bench-estimates.txt

.PHONY: demo
demo: tools k8s-bins ## Local control plane + controller + a simulated update, live (SNAPSHOT=dir: a captured cluster instead; MODE=hosted: a simulated HyperShift hosted-cluster update, --mode=hosted)
	MODE=$(MODE) hack/demo.sh $(if $(filter-out file default undefined,$(origin SNAPSHOT)),$(SNAPSHOT))
