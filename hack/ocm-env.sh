#!/usr/bin/env bash
# A real Open Cluster Management (OCM) environment on loopback, for e2e tests and manual runs: a
# hub and N managed clusters, each a local control plane of hack/local-cluster.sh, with OCM's
# components as local processes built from source by hack/build-ocm.sh (.cache/bin/ocm).
#
# usage: hack/ocm-env.sh up|down|env|status
#
#   up      start the hub (its kube-controller-manager signs CSRs), install the OCM CRDs and the
#           add-on conversion webhook, start the registration controller, the add-on manager, the
#           placement controller and, per managed cluster, a klusterlet agent (restarted when it
#           exits, as kubelet would), each with the flags, environment and feature gates OCM's own
#           manifests give it in a real hub (see "How each component is started" below);
#           then accept every cluster (hubAcceptsClient, approve its CSR) and wait until it is
#           joined and available. No-op when the same environment is already healthy.
#   down    stop everything `up` started (pid files, never by name) and remove $OCM_ENV_DIR
#   env     print exports: KUBECONFIG (the hub), OCM_HUB_KUBECONFIG, OCM_KUBECONFIG_<CLUSTER>
#           (use: eval "$(hack/ocm-env.sh env)")
#   status  print the state of each component and cluster; exit 1 unless all are healthy
#
# layout of $OCM_ENV_DIR:
#   hub/kubeconfig, clusters/<name>/kubeconfig   admin kubeconfigs (local-cluster.sh CLUSTER_DIRs)
#   ocm/<component>.log, ocm/<component>.pid     controller, manager, placement, webhook,
#                                                agent-<name>
#   ocm/agent-<name>/hub-kubeconfig/             the hub credentials the agent obtained
#   ocm/env                                      clusters and ports of this environment
#
# environment:
#   OCM_ENV_DIR          state dir (default <repo>/.cache/ocm-env)
#   OCM_CLUSTERS         managed cluster names, space separated (default "cluster1")
#   OCM_SIGNING_DURATION lifetime of the certificates the hub signs, the klusterlet's and the
#                        add-ons' (kube-controller-manager --cluster-signing-duration; default 1
#                        year). The registration agent renews a certificate when 20-25% of its
#                        lifetime is left, the lifetime counted from 5 minutes before signing (the
#                        signer backdates), but it only looks on Secret/CSR events and every 5
#                        minutes: below 30m a certificate can expire unrenewed (then the agent
#                        cannot reach the hub and re-bootstraps, needing a new approval), so
#                        shorter values are refused. With 30m, renewal comes 26-33 minutes after
#                        issue: tests force a rotation instead (e2e/src/ocm/rotation.rs, force_rotation).
#   OCM_STATUS_SYNC_INTERVAL
#                        how often the work agent reports resource status (Deployment replicas,
#                        hence add-on availability and the add-on rollout's progress) to the hub
#                        (default 2s: what a Klusterlet with spec.workConfiguration.statusSyncInterval
#                        2s gets; without that field the klusterlet operator passes 60s to a
#                        single-replica agent, and the flag's own default is 10s)
#   OCM_EVICTION_GRACE   the klusterlet agents' --appliedmanifestwork-eviction-grace-period (what a
#                        Klusterlet with spec.workConfiguration.appliedManifestWorkEvictionGracePeriod
#                        gets): how long a work agent keeps what a ManifestWork applied once that
#                        ManifestWork is missing from the hub (a hub restored without it) before it
#                        deletes it (pkg/work/spoke/controllers/finalizercontroller/
#                        unmanaged_appliedmanifestwork_controller.go). Default: no flag, the agent's
#                        60m, as in a Klusterlet without the field. A duration like 20s or 5m.
#   START_TIMEOUT        seconds to wait for each component (default 60)
#   JOIN_TIMEOUT         seconds to wait for each cluster to join (default 120)
#
# How each component is started (paths inside the OCM source, .cache/ocm-src):
#   The cluster-manager operator renders the hub's Deployments from
#   manifests/cluster-manager/management/*/deployment.yaml with the config of
#   pkg/operator/operators/clustermanager/controllers/clustermanagercontroller/clustermanager_controller.go;
#   the klusterlet operator the agent's from manifests/klusterlet/management/klusterlet-agent-deployment.yaml
#   (Singleton mode, deploy/klusterlet/config/samples) with
#   pkg/operator/operators/klusterlet/controllers/klusterletcontroller/klusterlet_controller.go.
#   Feature gates: the operators pass --feature-gates only for a gate the ClusterManager or
#   Klusterlet sets away from its default (pkg/operator/helpers/helpers.go ConvertToFeatureGateFlags);
#   the sample ClusterManager (deploy/cluster-manager/config/samples) enables DefaultClusterSet,
#   already on by default, so no component gets a --feature-gates flag, and none is passed here:
#   hack/ocm/main.go registers the same default gate sets as the upstream mains.
#   Leader election is on for the hub's controllers, as in their Deployments (library-go's
#   defaults: 137s lease, 107s renew deadline, 26s retry; the Lease in their namespace).
#   What must differ here, with no kubelet and no pods:
#   - --kubeconfig names the admin kubeconfig of the hub or the managed cluster: a pod uses its
#     in-cluster ServiceAccount (the operators pass --kubeconfig only in Hosted mode), and its
#     namespace is --namespace instead of the ServiceAccount's namespace file;
#   - --listen=127.0.0.1:<free port> instead of the pods' 0.0.0.0:8443 (several processes share
#     one loopback); the probes the Deployments declare on /healthz are run by `up` and, for the
#     agent, by the restart loop below;
#   - POD_NAME / POD_NAMESPACE (downward API in the manifests) are set to the component's name and
#     namespace;
#   - the klusterlet agent keeps --disable-leader-election: its pod runs with leader election, but
#     here the restart loop stands in for kubelet and the agent exits without releasing its Lease
#     when it switches hub credentials (klog.FlushAndExit, pkg/registration/spoke/spokeagent.go),
#     so each restart would wait out the 137s lease of its previous run;
#   - the agent's hub credentials live in --hub-kubeconfig-dir (ocm/agent-<name>/hub-kubeconfig)
#     instead of the Secret hub-kubeconfig-secret mounted at /spoke/hub-kubeconfig, and its bootstrap
#     kubeconfig is a file instead of the Secret bootstrap-hub-kubeconfig at /spoke/bootstrap;
#   - the add-on webhook's serving certificate is a self-signed one in ocm/webhook (--certdir)
#     instead of the Secret the operator mounts at /tmp/k8s-webhook-server/serving-certs, and the
#     CRDs' conversion points at it by URL instead of the Service cluster-manager-addon-webhook;
#   - the registration and work admission webhooks (validation of ManagedClusters, ManifestWorks,
#     ...) and the hub's work controller (only with ManifestWorkReplicaSet or
#     CleanUpCompletedManifestWork, both off by default) are not started.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OCM_ENV_DIR=${OCM_ENV_DIR:-$root/.cache/ocm-env}
read -r -a clusters <<<"${OCM_CLUSTERS:-cluster1}"
signing_duration=${OCM_SIGNING_DURATION:-}
status_sync_interval=${OCM_STATUS_SYNC_INTERVAL:-2s}
eviction_grace=${OCM_EVICTION_GRACE:-}
start_timeout=${START_TIMEOUT:-60}
join_timeout=${JOIN_TIMEOUT:-120}
bin=$root/.cache/bin/ocm
# shellcheck source=lib/procs.sh
source "$root/hack/lib/procs.sh"
src=$root/.cache/ocm-src
api=$src/vendor/open-cluster-management.io/api
marker=.update-status-ocm-env
ocm_dir=$OCM_ENV_DIR/ocm
hub_dir=$OCM_ENV_DIR/hub
hub_ns=open-cluster-management-hub
agent_ns=open-cluster-management-agent
addon_ns=open-cluster-management-agent-addon

log() { echo "ocm-env: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

cluster_dir() { echo "$OCM_ENV_DIR/clusters/$1"; }
kc_dir() { # CLUSTER_DIR kubectl-args...: kubectl as admin of that control plane
  local dir=$1
  shift
  kubectl --kubeconfig "$dir/kubeconfig" --cache-dir "$dir/kubectl-cache" "$@"
}
kc_hub() { kc_dir "$hub_dir" "$@"; }
kc_cluster() { kc_dir "$(cluster_dir "$1")" "${@:2}"; }

validate_clusters() {
  ((${#clusters[@]})) || die "OCM_CLUSTERS is empty"
  local c seen=" "
  for c in "${clusters[@]}"; do
    [[ $c =~ ^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$ ]] || die "OCM_CLUSTERS: '$c' is not a DNS label (a managed cluster name is a namespace on the hub)"
    case $c in default | kube-* | open-cluster-management*) die "OCM_CLUSTERS: '$c' is a reserved namespace name on the hub" ;; esac
    [[ $seen != *" $c "* ]] || die "OCM_CLUSTERS names '$c' twice"
    seen+="$c "
  done
}

# --- processes -------------------------------------------------------------------

used_ports=""
# pick_port VAR: sets VAR to a free loopback port (as hack/local-cluster.sh does).
pick_port() {
  local var=$1 port listening
  listening=$(ss -Htln 2>/dev/null | awk '{print $4}' | sed 's/.*://' | sort -u | tr '\n' ' ')
  for _ in $(seq 1 200); do
    port=$((10000 + RANDOM % 22000)) # below the ephemeral range (32768+)
    if [[ " $listening $used_ports " != *" $port "* ]] &&
      ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      used_ports+=" $port"
      printf -v "$var" '%s' "$port"
      return 0
    fi
  done
  die "could not find a free loopback port for $var"
}

# is_component NAME PID: PID is what this script starts as NAME: the ocm binary, or the restart
# loop of an agent (bash, recognised by its $0).
is_component() {
  local name=$1 pid=$2 cmdline
  { cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline"); } 2>/dev/null || return 1
  if proc_exe_is ocm "$pid"; then
    [[ $cmdline == "$bin "* ]]
  elif proc_exe_is bash "$pid"; then
    [[ $cmdline == *"ocm-env.sh __restart-loop $name "* ]]
  else
    return 1
  fi
}

# pid of a component if its pid file names a live process started by this script (asked only
# once `start` has seen the exec: hack/lib/procs.sh).
live_pid() {
  local name=$1 pidfile=$ocm_dir/$1.pid pid
  [[ -f $pidfile ]] || return 1
  pid=$(<"$pidfile")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  proc_alive "$pid" && is_component "$name" "$pid" || return 1
  echo "$pid"
}

# started NAME: waits until the process just started as NAME has exec'd what it was started to
# run (before that, /proc/PID names bash or setsid), so that live_pid never judges a component
# that is still starting dead.
started() {
  local name=$1 pid=$spawned_pid rc=0
  proc_await_exec "$pid" is_component "$name" || rc=$?
  case $rc in
  0) ;;
  1) fail_start "$name" "exited during start-up (pid $pid)" ;;
  *) fail_start "$name" "was not running what it was started to run ${PROC_EXEC_TIMEOUT:-30}s after it was started (pid $pid)" ;;
  esac
}

# start NAME ARGS...: runs `ocm ARGS...` in its own session (process group), logging to NAME.log.
start() {
  local name=$1
  shift
  proc_spawn "$ocm_dir/$name.pid" "$ocm_dir/$name.log" "$bin" "$@"
  started "$name"
}

# start_restarting NAME PORT ARGS...: as start, but run by `restart_loop` (below), which stands in
# for kubelet: the klusterlet agent exits to pick up new hub credentials, and kubelet restarts it
# when its liveness probe fails (expired hub certificate). The loop and the agent share a process
# group, stopped together.
start_restarting() {
  local name=$1 port=$2
  shift 2
  proc_spawn "$ocm_dir/$name.pid" /dev/null \
    bash "$root/hack/ocm-env.sh" __restart-loop "$name" "$ocm_dir/$name.log" "$port" "$bin" "$@"
  started "$name"
}

# restart_loop NAME LOG PORT COMMAND...: runs COMMAND again 1s after it exits, and probes its
# https://127.0.0.1:PORT/healthz as the klusterlet Deployment's liveness probe does (first after
# 2s, every 10s, 3 failures in a row: SIGTERM, SIGKILL 30s later).
restart_loop() {
  local name=$1 log=$2 port=$3 pid rc fails t
  shift 3
  while :; do
    echo "ocm-env: starting $name ($(date -u +%FT%TZ))" >>"$log"
    "$@" >>"$log" 2>&1 </dev/null &
    pid=$!
    fails=0
    for ((t = 0; ; t++)); do
      sleep 1
      kill -0 "$pid" 2>/dev/null || break
      ((t % 10 == 1)) || continue
      if curl -sk --max-time 2 -o /dev/null -f "https://127.0.0.1:$port/healthz"; then
        fails=0
      elif ((++fails >= 3)); then
        echo "ocm-env: $name failed its liveness probe (/healthz) 3 times in a row; restarting it, as kubelet would" >>"$log"
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 30); do
          kill -0 "$pid" 2>/dev/null || break
          sleep 1
        done
        kill -KILL "$pid" 2>/dev/null || true
        break
      fi
    done
    if wait "$pid"; then rc=0; else rc=$?; fi
    echo "ocm-env: $name exited with status $rc; restarting it in 1s" >>"$log"
    sleep 1
  done
}

# stop NAME...: SIGTERM to the process group of each live component, SIGKILL after 10s.
stop() {
  local name pid pids=() alive
  for name in "$@"; do
    if pid=$(live_pid "$name"); then
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
    rm -f "$ocm_dir/$name.pid"
  done
  ((${#pids[@]})) || return 0
  for _ in $(seq 1 200); do
    alive=0
    for pid in "${pids[@]}"; do
      if kill -0 -- "-$pid" 2>/dev/null || kill -0 "$pid" 2>/dev/null; then alive=1; fi
    done
    ((alive)) || return 0
    sleep 0.05
  done
  for pid in "${pids[@]}"; do
    log "process group $pid ignored SIGTERM for 10s; sending SIGKILL"
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  done
}

components() {
  local c
  echo webhook controller manager placement
  for c in "${clusters[@]}"; do echo "agent-$c"; done
}

# All OCM processes of the state dir, whatever OCM_CLUSTERS says now (pid files).
started_components() {
  local f
  shopt -s nullglob
  for f in "$ocm_dir"/*.pid; do basename "$f" .pid; done
  shopt -u nullglob
}

fail_start() { # name reason
  local name=$1
  log "error: $name $2; last lines of $ocm_dir/$name.log:"
  tail -n 40 "$ocm_dir/$name.log" >&2 || true
  exit 1
}

https_healthz() { # port
  local out
  out=$(curl -sk --max-time 2 "https://127.0.0.1:$1/healthz" 2>/dev/null) || return 1
  [[ $out == ok ]]
}

wait_healthy() { # name port
  local name=$1 port=$2 deadline=$((SECONDS + start_timeout))
  until https_healthz "$port"; do
    live_pid "$name" >/dev/null || fail_start "$name" "exited during start-up"
    ((SECONDS < deadline)) || fail_start "$name" "not healthy on https://127.0.0.1:$port/healthz after ${start_timeout}s"
    sleep 0.3
  done
}

webhook_ok() {
  curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$WEBHOOK_HEALTH_PORT/readyz" &&
    curl -s --max-time 2 -o /dev/null --cacert "$ocm_dir/webhook/tls.crt" "https://127.0.0.1:$WEBHOOK_PORT/"
}

# --- control planes --------------------------------------------------------------

local_cluster() { # dir command [VAR=value...]
  local dir=$1 cmd=$2
  shift 2
  env CLUSTER_DIR="$dir" "$@" "$root/hack/local-cluster.sh" "$cmd" 9>&-
}

# apply_crds CLUSTER_DIR FILE...: applies CRDs and waits until discovery serves them.
apply_crds() {
  local dir=$1 out line names=() args=() f group plural version deadline
  local kc=(kc_dir "$dir")
  shift
  for f in "$@"; do
    [[ -f $f ]] || die "CRD file $f is missing from the OCM source (hack/build-ocm.sh extracts it)"
    args+=(-f "$f")
  done
  out=$("${kc[@]}" apply --server-side --force-conflicts --field-manager=ocm-env "${args[@]}" -o name 2>&1) ||
    die "applying the OCM CRDs failed: $out"
  while read -r line; do
    [[ $line == customresourcedefinition.apiextensions.k8s.io/* ]] && names+=("${line#*/}")
  done <<<"$out"
  # kubectl (1.32) fails at once, instead of waiting, on a CRD whose status has no conditions
  # yet (".status.conditions accessor error: <nil>", seen under load): wait again.
  deadline=$((SECONDS + start_timeout))
  until out=$("${kc[@]}" wait --for=condition=Established --timeout="${start_timeout}s" "${names[@]/#/crd/}" 2>&1); do
    [[ $out == *".status.conditions accessor error"* ]] && ((SECONDS < deadline)) ||
      die "OCM CRDs not Established: $out"
    sleep 0.2
  done
  out=$("${kc[@]}" get crd "${names[@]}" -o jsonpath='{range .items[*]}{.spec.group} {.spec.names.plural} {.spec.versions[?(@.served==true)].name}{"\n"}{end}') ||
    die "reading the OCM CRDs failed"
  while read -r group plural version _; do
    [[ -n $group ]] || continue
    until [[ $("${kc[@]}" get --raw "/apis/$group/$version" 2>/dev/null) == *"\"name\":\"$plural\""* ]]; do
      ((SECONDS < deadline)) || die "CRD $plural.$group is Established but not served by /apis/$group/$version after ${start_timeout}s"
      sleep 0.2
    done
  done <<<"$out"
}

# The add-on CRDs serve v1alpha1 (stored) and v1beta1 (read by the add-on manager): the API server
# converts through OCM's webhook, here on loopback with a self-signed certificate.
webhook_cert() {
  local d=$ocm_dir/webhook
  mkdir -p "$d"
  openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -keyout "$d/tls.key" -out "$d/tls.crt" \
    -subj "/CN=ocm-addon-webhook" -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null ||
    die "openssl could not make the webhook's certificate"
  chmod 600 "$d/tls.key"
}

point_conversion_at_webhook() {
  local crd patch ca
  ca=$(base64 -w0 <"$ocm_dir/webhook/tls.crt")
  patch=$(printf '{"spec":{"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1","v1beta1"],"clientConfig":{"url":"https://127.0.0.1:%s/convert","caBundle":"%s"}}}}}' "$WEBHOOK_PORT" "$ca")
  for crd in clustermanagementaddons.addon.open-cluster-management.io managedclusteraddons.addon.open-cluster-management.io; do
    kc_hub patch crd "$crd" --type=merge -p "$patch" >/dev/null || die "setting the conversion webhook of CRD $crd failed"
  done
}

# What the cluster-manager operator would create: the hub namespace, and the bootstrap identity
# the klusterlets register with (ServiceAccount agent-registration-bootstrap, as `clusteradm init`).
hub_objects() {
  kc_hub apply --server-side --field-manager=ocm-env -f - >/dev/null <<EOF || die "creating the hub's namespaces and bootstrap RBAC failed"
apiVersion: v1
kind: Namespace
metadata:
  name: $hub_ns
---
apiVersion: v1
kind: Namespace
metadata:
  name: open-cluster-management
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: agent-registration-bootstrap
  namespace: open-cluster-management
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: open-cluster-management:bootstrap
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get]
- apiGroups: [certificates.k8s.io]
  resources: [certificatesigningrequests]
  verbs: [create, get, list, watch]
- apiGroups: [cluster.open-cluster-management.io]
  resources: [managedclusters]
  verbs: [get, create, list, watch]
- apiGroups: [cluster.open-cluster-management.io]
  resources: [managedclustersets/join]
  verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: open-cluster-management:bootstrap:agent-registration
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: open-cluster-management:bootstrap
subjects:
- kind: ServiceAccount
  name: agent-registration-bootstrap
  namespace: open-cluster-management
EOF
}

# bootstrap_kubeconfig FILE: the hub's address and CA with a token of the bootstrap
# ServiceAccount (written to the file only, never printed).
bootstrap_kubeconfig() {
  local file=$1 token server ca
  token=$(kc_hub -n open-cluster-management create token agent-registration-bootstrap --duration=8760h) ||
    die "requesting a bootstrap token on the hub failed"
  server=$(kc_hub config view --minify -o jsonpath='{.clusters[0].cluster.server}')
  ca=$(base64 -w0 <"$hub_dir/pki/ca.crt")
  (
    umask 077
    cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: hub
  cluster:
    server: $server
    certificate-authority-data: $ca
users:
- name: bootstrap
  user:
    token: $token
contexts:
- name: bootstrap
  context:
    cluster: hub
    user: bootstrap
current-context: bootstrap
EOF
  )
}

managed_objects() { # cluster
  kc_cluster "$1" apply --server-side --field-manager=ocm-env -f - >/dev/null <<EOF || die "creating the agent namespaces on $1 failed"
apiVersion: v1
kind: Namespace
metadata:
  name: $agent_ns
---
apiVersion: v1
kind: Namespace
metadata:
  name: $addon_ns
EOF
}

# --- joining ---------------------------------------------------------------------

cluster_condition() { # cluster type -> status
  kc_hub get managedcluster "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].status}" 2>/dev/null
}

joined() { # cluster
  [[ $(cluster_condition "$1" ManagedClusterJoined) == True &&
    $(cluster_condition "$1" ManagedClusterConditionAvailable) == True ]]
}

# As `clusteradm accept`: hubAcceptsClient on the ManagedCluster the agent created, and approval of
# the cluster's pending CSRs (not those of its add-ons, which the add-on manager approves).
accept() { # cluster
  local c=$1 deadline=$((SECONDS + join_timeout)) accepted="" name conds
  log "accepting $c (hubAcceptsClient, approving its CSR) and waiting until it is joined"
  until joined "$c"; do
    live_pid "agent-$c" >/dev/null || fail_start "agent-$c" "is not running"
    if [[ -z $accepted ]] && kc_hub get managedcluster "$c" -o name >/dev/null 2>&1; then
      kc_hub patch managedcluster "$c" --type=merge -p '{"spec":{"hubAcceptsClient":true}}' >/dev/null ||
        die "setting hubAcceptsClient on ManagedCluster $c failed"
      accepted=1
    fi
    while read -r name conds; do
      [[ -n $name && $conds == "<none>" ]] || continue
      if kc_hub certificate approve "$name" >/dev/null 2>&1; then log "approved CSR $name of $c"; fi
    done < <(kc_hub get csr -l "open-cluster-management.io/cluster-name=$c,!open-cluster-management.io/addon-name" \
      -o custom-columns=NAME:.metadata.name,CONDITIONS:.status.conditions[*].type --no-headers 2>/dev/null || true)
    if ((SECONDS >= deadline)); then
      log "ManagedCluster $c: $(kc_hub get managedcluster "$c" -o jsonpath='{range .status.conditions[*]}{.type}={.status} ({.message}); {end}' 2>&1)"
      fail_start "agent-$c" "did not join the hub within ${join_timeout}s"
    fi
    sleep 0.5
  done
}

# --- commands --------------------------------------------------------------------

write_env() {
  {
    echo "OCM_CLUSTERS=\"${clusters[*]}\""
    echo "OCM_SIGNING_DURATION=$signing_duration"
    echo "OCM_EVICTION_GRACE=$eviction_grace"
    echo "WEBHOOK_PORT=$WEBHOOK_PORT"
    echo "WEBHOOK_HEALTH_PORT=$WEBHOOK_HEALTH_PORT"
    echo "WEBHOOK_METRICS_PORT=$WEBHOOK_METRICS_PORT"
    echo "CONTROLLER_PORT=$CONTROLLER_PORT"
    echo "MANAGER_PORT=$MANAGER_PORT"
    echo "PLACEMENT_PORT=$PLACEMENT_PORT"
    local c var
    for c in "${clusters[@]}"; do
      var=AGENT_PORT_${c//-/_}
      echo "$var=${!var}"
    done
  } >"$ocm_dir/env"
}

load_env() {
  [[ -f $ocm_dir/env ]] || return 1
  # shellcheck disable=SC1091
  source "$ocm_dir/env"
}

healthy() {
  load_env 2>/dev/null || return 1
  [[ $OCM_CLUSTERS == "${clusters[*]}" && $OCM_SIGNING_DURATION == "$signing_duration" &&
    ${OCM_EVICTION_GRACE:-} == "$eviction_grace" ]] || return 1
  local c var name
  local_cluster "$hub_dir" status >/dev/null 2>&1 || return 1
  for c in "${clusters[@]}"; do local_cluster "$(cluster_dir "$c")" status >/dev/null 2>&1 || return 1; done
  for name in $(components); do live_pid "$name" >/dev/null || return 1; done
  webhook_ok && https_healthz "$CONTROLLER_PORT" && https_healthz "$MANAGER_PORT" &&
    https_healthz "$PLACEMENT_PORT" || return 1
  for c in "${clusters[@]}"; do
    var=AGENT_PORT_${c//-/_}
    https_healthz "${!var}" && joined "$c" || return 1
  done
}

# Stops everything of the state dir: OCM processes first, then the control planes.
stop_all() {
  local names d
  mapfile -t names < <(started_components)
  ((${#names[@]} == 0)) || stop "${names[@]}"
  shopt -s nullglob
  for d in "$OCM_ENV_DIR"/clusters/* "$hub_dir"; do
    [[ -d $d ]] || continue
    # keep the control planes' logs next to OCM's
    mkdir -p "$ocm_dir/control-plane-logs/$(basename "$d")"
    cp "$d"/*.log "$ocm_dir/control-plane-logs/$(basename "$d")/" 2>/dev/null || true
    local_cluster "$d" down >/dev/null 2>&1 || log "warning: stopping the control plane in $d failed"
  done
  shopt -u nullglob
}

up_in_progress=0
on_exit() {
  local rc=$?
  if ((rc != 0 && up_in_progress)); then
    log "start-up failed: stopping what did start (logs kept in $ocm_dir; '$0 down' removes it)"
    stop_all
  fi
}

lock_state_dir() {
  exec 9>"$OCM_ENV_DIR/.lock"
  flock -w 600 9 || die "timed out waiting for another $0 on $OCM_ENV_DIR"
}

cmd_up() {
  local t0=$SECONDS c d var signing_env=() work_args=()
  validate_clusters
  for c in kubectl curl openssl flock setsid ss; do command -v "$c" >/dev/null || die "$c is required on PATH"; done
  if [[ -n $signing_duration ]]; then
    local secs
    secs=$(duration_seconds "$signing_duration") || die "OCM_SIGNING_DURATION=$signing_duration is not a duration like 10m or 1h"
    ((secs >= 1800)) || die "OCM_SIGNING_DURATION=$signing_duration: below 30m certificates can expire before the registration agent's 5-minute check renews them"
  fi
  if [[ -n $eviction_grace ]]; then
    duration_seconds "$eviction_grace" >/dev/null || die "OCM_EVICTION_GRACE=$eviction_grace is not a duration like 20s or 5m"
    work_args+=(--appliedmanifestwork-eviction-grace-period="$eviction_grace")
  fi
  if [[ -e $OCM_ENV_DIR && ! -f $OCM_ENV_DIR/$marker && -n $(ls -A "$OCM_ENV_DIR" 2>/dev/null) ]]; then
    die "OCM_ENV_DIR=$OCM_ENV_DIR exists, is not empty and was not created by this script; refusing to use it"
  fi
  mkdir -p "$OCM_ENV_DIR"
  touch "$OCM_ENV_DIR/$marker"
  lock_state_dir
  if (healthy); then
    log "already running: hub KUBECONFIG=$hub_dir/kubeconfig, clusters ${clusters[*]}"
    return 0
  fi

  "$root/hack/build-k8s.sh"
  "$root/hack/build-ocm.sh"
  [[ -x $bin ]] || die "$bin missing after hack/build-ocm.sh"

  up_in_progress=1
  trap on_exit EXIT
  stop_all
  find "$OCM_ENV_DIR" -mindepth 1 -maxdepth 1 ! -name .lock ! -name "$marker" -exec rm -rf {} +
  mkdir -p "$ocm_dir" "$OCM_ENV_DIR/clusters"

  for var in WEBHOOK_PORT WEBHOOK_HEALTH_PORT WEBHOOK_METRICS_PORT CONTROLLER_PORT MANAGER_PORT PLACEMENT_PORT; do
    pick_port "$var"
  done
  for c in "${clusters[@]}"; do pick_port "AGENT_PORT_${c//-/_}"; done
  write_env

  log "starting the hub's control plane (with the CSR signer)"
  # The resource-quota controller, as in any hub's kube-controller-manager: the ResourceQuotas
  # of config/acm/limits count the agents' copies (it fills and replenishes their usage).
  signing_env=(CSR_SIGNING=1 KCM_EXTRA_CONTROLLERS=resourcequota-controller)
  [[ -z $signing_duration ]] || signing_env+=(CSR_SIGNING_DURATION="$signing_duration")
  local_cluster "$hub_dir" up "${signing_env[@]}"
  for c in "${clusters[@]}"; do
    log "starting the control plane of managed cluster $c"
    local_cluster "$(cluster_dir "$c")" up
  done

  log "starting the add-on conversion webhook"
  webhook_cert
  # manifests/cluster-manager/management/addon-manager/webhook-deployment.yaml: `addon
  # webhook-server --port --health-probe-port --metrics-port` (the operator's 9443, 8000, 8080;
  # free loopback ports here), its certificate mounted at the --certdir default.
  KUBECONFIG=$hub_dir/kubeconfig POD_NAME=cluster-manager-addon-webhook start webhook webhook \
    --kubeconfig="$hub_dir/kubeconfig" --port="$WEBHOOK_PORT" --certdir="$ocm_dir/webhook" \
    --health-probe-port="$WEBHOOK_HEALTH_PORT" --metrics-port="$WEBHOOK_METRICS_PORT"
  local deadline=$((SECONDS + start_timeout))
  until webhook_ok; do
    live_pid webhook >/dev/null || fail_start webhook "exited during start-up"
    ((SECONDS < deadline)) || fail_start webhook "not ready after ${start_timeout}s"
    sleep 0.3
  done

  log "installing the OCM CRDs on the hub"
  apply_crds "$hub_dir" "$api"/cluster/v1/*.crd.yaml "$api"/cluster/v1beta1/*.crd.yaml \
    "$api"/cluster/v1beta2/*.crd.yaml "$api"/cluster/v1alpha1/*addonplacementscores.crd.yaml \
    "$api"/work/v1/*_manifestworks.crd.yaml "$api"/addon/v1beta1/*.crd.yaml
  point_conversion_at_webhook
  hub_objects

  log "starting the registration controller, the add-on manager and the placement controller on the hub"
  # manifests/cluster-manager/management/registration/deployment.yaml: `registration controller`,
  # env POD_NAME; no --feature-gates (above), no --cluster-auto-approval-users (the sample
  # ClusterManager sets no autoApproveUsers: clusters are accepted as `clusteradm accept` does).
  POD_NAME=cluster-manager-registration-controller start controller controller \
    --kubeconfig="$hub_dir/kubeconfig" --namespace="$hub_ns" --listen="127.0.0.1:$CONTROLLER_PORT"
  # manifests/cluster-manager/management/addon-manager/deployment.yaml: `addon manager`, env
  # POD_NAMESPACE and POD_NAME (the add-on manager reads POD_NAMESPACE).
  POD_NAMESPACE=$hub_ns POD_NAME=cluster-manager-addon-manager-controller start manager manager \
    --kubeconfig="$hub_dir/kubeconfig" --namespace="$hub_ns" --listen="127.0.0.1:$MANAGER_PORT"
  # manifests/cluster-manager/management/placement/deployment.yaml: `placement controller`, env
  # POD_NAME (the debug-server container only with the PlacementDebugServer gate, off).
  POD_NAME=cluster-manager-placement-controller start placement placement \
    --kubeconfig="$hub_dir/kubeconfig" --namespace="$hub_ns" --listen="127.0.0.1:$PLACEMENT_PORT"
  wait_healthy controller "$CONTROLLER_PORT"
  wait_healthy manager "$MANAGER_PORT"
  wait_healthy placement "$PLACEMENT_PORT"

  for c in "${clusters[@]}"; do
    log "installing the klusterlet's CRDs on $c and starting its agent"
    # manifests/klusterlet/managed: the AppliedManifestWork and ClusterClaim CRDs.
    apply_crds "$(cluster_dir "$c")" "$api"/work/v1/*_appliedmanifestworks.crd.yaml "$api"/cluster/v1alpha1/*clusterclaims.crd.yaml
    managed_objects "$c"
    d=$ocm_dir/agent-$c
    mkdir -p "$d/hub-kubeconfig"
    chmod 700 "$d"
    bootstrap_kubeconfig "$d/bootstrap.kubeconfig"
    # The Klusterlet's UID is its agent ID (klusterlet_controller.go: AgentID); one per cluster,
    # kept across restarts of the agent.
    [[ -s $d/agent-id ]] || cat /proc/sys/kernel/random/uuid >"$d/agent-id"
    var=AGENT_PORT_${c//-/_}
    # manifests/klusterlet/management/klusterlet-agent-deployment.yaml (Singleton mode): `agent
    # --spoke-cluster-name --bootstrap-kubeconfig --agent-id --workload-source-driver=kube
    # --workload-source-config=<hub kubeconfig dir>/kubeconfig --status-sync-interval`, env
    # POD_NAME; --max-custom-cluster-claims and --reserved-cluster-claim-suffixes only when the
    # Klusterlet sets registrationConfiguration.clusterClaimConfiguration (defaults: 20, none);
    # --appliedmanifestwork-eviction-grace-period only when it sets
    # workConfiguration.appliedManifestWorkEvictionGracePeriod (OCM_EVICTION_GRACE).
    POD_NAME=klusterlet-agent start_restarting "agent-$c" "${!var}" agent \
      --kubeconfig="$(cluster_dir "$c")/kubeconfig" --namespace="$agent_ns" \
      --disable-leader-election --listen="127.0.0.1:${!var}" \
      --spoke-cluster-name="$c" --bootstrap-kubeconfig="$d/bootstrap.kubeconfig" \
      --agent-id="$(<"$d/agent-id")" --hub-kubeconfig-dir="$d/hub-kubeconfig" \
      --workload-source-driver=kube --workload-source-config="$d/hub-kubeconfig/kubeconfig" \
      --status-sync-interval="$status_sync_interval" "${work_args[@]}"
  done
  for c in "${clusters[@]}"; do accept "$c"; done
  up_in_progress=0
  log "up in $((SECONDS - t0))s: hub KUBECONFIG=$hub_dir/kubeconfig; joined: ${clusters[*]}"
}

# duration_seconds 10m|1h|90s|1h30m -> seconds
duration_seconds() {
  local d=$1 total=0 n u
  [[ $d =~ ^([0-9]+[hms])+$ ]] || return 1
  while [[ $d =~ ^([0-9]+)([hms])(.*)$ ]]; do
    n=${BASH_REMATCH[1]} u=${BASH_REMATCH[2]} d=${BASH_REMATCH[3]}
    case $u in h) total=$((total + n * 3600)) ;; m) total=$((total + n * 60)) ;; s) total=$((total + n)) ;; esac
  done
  echo "$total"
}

cmd_down() {
  [[ -e $OCM_ENV_DIR ]] || {
    log "nothing to stop: $OCM_ENV_DIR does not exist"
    return 0
  }
  [[ -f $OCM_ENV_DIR/$marker ]] || die "$OCM_ENV_DIR was not created by this script; not touching it"
  lock_state_dir
  stop_all
  rm -rf "$OCM_ENV_DIR"
  log "stopped and removed $OCM_ENV_DIR"
}

cmd_env() {
  [[ -f $hub_dir/kubeconfig ]] || die "no environment in $OCM_ENV_DIR (run '$0 up' first)"
  load_env || die "no environment in $OCM_ENV_DIR (run '$0 up' first)"
  local c var
  printf 'export KUBECONFIG=%q\n' "$hub_dir/kubeconfig"
  printf 'export OCM_HUB_KUBECONFIG=%q\n' "$hub_dir/kubeconfig"
  printf 'export OCM_CLUSTERS=%q\n' "$OCM_CLUSTERS"
  for c in $OCM_CLUSTERS; do
    var=OCM_KUBECONFIG_${c//-/_}
    printf 'export %s=%q\n' "${var^^}" "$(cluster_dir "$c")/kubeconfig"
  done
}

cmd_status() {
  local ok=0 name pid c var port
  load_env 2>/dev/null || {
    echo "no environment in $OCM_ENV_DIR"
    return 1
  }
  read -r -a clusters <<<"$OCM_CLUSTERS"
  if local_cluster "$hub_dir" status >/dev/null 2>&1; then echo "hub control plane: healthy"; else
    echo "hub control plane: not healthy ($hub_dir)"
    ok=1
  fi
  for c in "${clusters[@]}"; do
    if local_cluster "$(cluster_dir "$c")" status >/dev/null 2>&1; then echo "$c control plane: healthy"; else
      echo "$c control plane: not healthy ($(cluster_dir "$c"))"
      ok=1
    fi
  done
  for name in $(components); do
    case $name in
    webhook) port=$WEBHOOK_PORT ;;
    controller) port=$CONTROLLER_PORT ;;
    manager) port=$MANAGER_PORT ;;
    placement) port=$PLACEMENT_PORT ;;
    agent-*)
      var=AGENT_PORT_${name#agent-}
      var=${var//-/_}
      port=${!var}
      ;;
    esac
    if ! pid=$(live_pid "$name"); then
      echo "$name: not running"
      ok=1
    elif [[ $name == webhook ]] && webhook_ok; then
      echo "$name: ready (pid $pid, https://127.0.0.1:$port/convert)"
    elif [[ $name != webhook ]] && https_healthz "$port"; then
      echo "$name: healthy (pid $pid, 127.0.0.1:$port)"
    else
      echo "$name: running (pid $pid) but not healthy on 127.0.0.1:$port"
      ok=1
    fi
  done
  for c in "${clusters[@]}"; do
    if joined "$c"; then echo "ManagedCluster $c: joined, available"; else
      echo "ManagedCluster $c: not joined or not available"
      ok=1
    fi
  done
  echo "hub KUBECONFIG=$hub_dir/kubeconfig; logs in $ocm_dir"
  return $ok
}

case ${1:-} in
__restart-loop)
  shift
  restart_loop "$@"
  ;;
up) cmd_up ;;
down) cmd_down ;;
env) cmd_env ;;
status) cmd_status || exit 1 ;;
*) usage ;;
esac
