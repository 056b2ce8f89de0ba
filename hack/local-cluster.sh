#!/usr/bin/env bash
# Local control plane for update-status e2e tests and manual runs:
# etcd + kube-apiserver + kube-controller-manager on loopback, built from pinned
# Go modules by hack/build-k8s.sh into .cache/bin.
#
# usage: hack/local-cluster.sh up|down|env|status|stop-apiserver|start-apiserver
#
#   up      start the control plane (no-op apart from re-applying the CRDs when it is
#           already healthy), install hack/crds/*.yaml and config/crd/*.yaml and wait
#           until they are Established and served by discovery
#   down    stop the processes (pid files) and remove $CLUSTER_DIR
#   env     print `export KUBECONFIG=...` (use: eval "$(hack/local-cluster.sh env)")
#   status  print the state of each component; exit 1 unless all are healthy
#   stop-apiserver / start-apiserver
#           an outage of kube-apiserver alone (same port, data kept in etcd), for tests
#
# environment:
#   CLUSTER_DIR      state dir (default <repo>/.cache/cluster): pki, data, logs, kubeconfig
#   ETCD_PORT, ETCD_PEER_PORT, APISERVER_PORT, KCM_PORT
#                    loopback ports (default: free ports picked at `up`)
#   START_TIMEOUT    seconds to wait for each component to become ready (default 60)
#   APISERVER_EXTRA_ARGS
#                    extra kube-apiserver flags, split on whitespace, read by `up` and
#                    `start-apiserver` (e.g. a throttled API server for e2e/tests/throttled.rs:
#                    "--enable-priority-and-fairness=false --max-requests-inflight=1
#                    --max-mutating-requests-inflight=1"; restart it without them to undo)
#   CSR_SIGNING      1: kube-controller-manager also signs approved CertificateSigningRequests
#                    (kubernetes.io/kube-apiserver-client and the other built-in signers) with the
#                    cluster's CA, as a hub of Open Cluster Management needs (hack/ocm-env.sh);
#                    read by `up` (default: off, no signer)
#   CSR_SIGNING_DURATION
#                    with CSR_SIGNING=1: the longest lifetime of a signed certificate
#                    (--cluster-signing-duration, e.g. 1h; default kube-controller-manager's, 1 year).
#                    Short-lived certificates are renewed sooner by their clients (rotation tests).
#   KCM_EXTRA_CONTROLLERS
#                    more kube-controller-manager controllers, comma-separated, read by `up`
#                    (e.g. resourcequota-controller, which an OCM hub's ResourceQuotas need:
#                    hack/ocm-env.sh)
#
# Only the garbage collector, namespace, service-account and ClusterRole aggregation controllers (and, with CSR_SIGNING=1,
# the CSR signer; and KCM_EXTRA_CONTROLLERS) run in kube-controller-manager: there is no node lifecycle controller, so the fake Nodes
# loaded from snapshots (no kubelet) keep the conditions they were created with; and the
# TaintNodesByCondition admission plugin is off, so they get no not-ready taint either.
set -eEuo pipefail
trap 'echo "local-cluster: error: \"$BASH_COMMAND\" failed (line $LINENO)" >&2' ERR

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CLUSTER_DIR=${CLUSTER_DIR:-$root/.cache/cluster}
bin_dir=$root/.cache/bin
# shellcheck source=lib/procs.sh
source "$root/hack/lib/procs.sh"
start_timeout=${START_TIMEOUT:-60}
marker=.update-status-local-cluster
components=(etcd kube-apiserver kube-controller-manager)

log() { echo "local-cluster: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# --- helpers ---------------------------------------------------------------------

kc() { kubectl --kubeconfig "$CLUSTER_DIR/kubeconfig" --cache-dir "$CLUSTER_DIR/kubectl-cache" "$@"; }

# pid of a component if its pid file names a live process running our binary (asked only once
# `start` has seen the exec: hack/lib/procs.sh).
live_pid() {
  local name=$1 pidfile=$CLUSTER_DIR/$1.pid pid
  [[ -f $pidfile ]] || return 1
  pid=$(<"$pidfile")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  proc_alive "$pid" && proc_exe_is "$name" "$pid" || return 1
  echo "$pid"
}

# signal_and_wait SIGNAL NAME...: signals the live components (pid files, never by name)
# and waits until they are gone, with SIGKILL after 10s.
signal_and_wait() {
  local sig=$1 name pid pids=() alive
  shift
  for name in "$@"; do
    if pid=$(live_pid "$name"); then
      kill "-$sig" "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
    rm -f "$CLUSTER_DIR/$name.pid"
  done
  for _ in $(seq 1 200); do
    alive=0
    for pid in "${pids[@]}"; do
      if kill -0 "$pid" 2>/dev/null; then alive=1; fi
    done
    ((alive)) || return 0
    sleep 0.05
  done
  for pid in "${pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      log "pid $pid ignored SIG$sig for 10s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
}

# Stops the components. Their state is always thrown away afterwards (down, or a fresh
# up), so etcd is simply killed once the apiserver is gone; the apiserver and
# kube-controller-manager get a SIGTERM (graceful stop, about 3s).
stop_components() {
  signal_and_wait TERM kube-controller-manager kube-apiserver
  signal_and_wait KILL etcd
}

http_ok() { # url [curl args...]
  local url=$1
  shift
  curl -sf --max-time 2 -o /dev/null "$@" "$url"
}

etcd_ok() {
  local out
  out=$(curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" 2>/dev/null) || return 1
  [[ $out == *'"health":"true"'* ]]
}
apiserver_ok() {
  http_ok "https://127.0.0.1:$APISERVER_PORT/readyz" --cacert "$CLUSTER_DIR/pki/ca.crt" \
    --cert "$CLUSTER_DIR/pki/admin.crt" --key "$CLUSTER_DIR/pki/admin.key"
}
# kube-controller-manager serves a self-signed cert: recognise it by its controller checks
# (a bare /healthz "ok" could come from any server on that port).
kcm_ok() {
  local out
  out=$(curl -sfk --max-time 2 "https://127.0.0.1:$KCM_PORT/healthz?verbose" 2>/dev/null) || return 1
  [[ $out == *'[+]garbage-collector-controller ok'* ]]
}

load_ports() {
  [[ -f $CLUSTER_DIR/ports.env ]] || return 1
  # shellcheck disable=SC1091
  source "$CLUSTER_DIR/ports.env"
}

healthy() {
  load_ports 2>/dev/null || return 1
  local name
  for name in "${components[@]}"; do live_pid "$name" >/dev/null || return 1; done
  etcd_ok && apiserver_ok && kcm_ok
}

used_ports=""
# pick_port VAR: keeps $VAR when set (from the environment), else sets it to a free port.
pick_port() {
  local var=$1 port listening
  if [[ -n ${!var:-} ]]; then
    [[ ${!var} =~ ^[0-9]+$ ]] || die "$var=${!var} is not a port number"
    used_ports+=" ${!var}"
    return 0
  fi
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

# start NAME ARGS...: runs .cache/bin/NAME in its own session, logging to NAME.log, and waits
# until it has exec'd (before that, /proc/PID/exe is bash or setsid: hack/lib/procs.sh), so that
# live_pid never judges a component that is still starting dead.
start() {
  local name=$1 pid rc=0
  shift
  proc_spawn "$CLUSTER_DIR/$name.pid" "$CLUSTER_DIR/$name.log" "$bin_dir/$name" "$@"
  pid=$spawned_pid
  proc_await_exec "$pid" proc_exe_is "$name" || rc=$?
  case $rc in
  0) ;;
  1) fail_start "$name" "exited during start-up (pid $pid)" ;;
  *) fail_start "$name" "was not running $bin_dir/$name ${PROC_EXEC_TIMEOUT:-30}s after it was started (pid $pid)" ;;
  esac
}

fail_start() { # name reason
  local name=$1
  log "error: $name $2; last lines of $CLUSTER_DIR/$name.log:"
  tail -n 40 "$CLUSTER_DIR/$name.log" >&2 || true
  exit 1 # the EXIT trap stops what did start
}

# EXIT trap of `up`: a failed start leaves no process behind (the logs stay).
up_in_progress=0
on_exit() {
  local rc=$?
  if ((rc != 0 && up_in_progress)); then
    log "start-up failed: stopping the components that did start (logs kept in $CLUSTER_DIR; '$0 down' removes it)"
    stop_components
  fi
}

wait_ready() { # name check-function
  local name=$1 check=$2 deadline=$((SECONDS + start_timeout))
  until "$check"; do
    live_pid "$name" >/dev/null || fail_start "$name" "exited during start-up"
    ((SECONDS < deadline)) || fail_start "$name" "not ready after ${start_timeout}s"
    sleep 0.2
  done
}

# The audit policy of the local kube-apiserver: only what update-status-controller's
# ServiceAccount reads of MachineConfigs and Pods, with the objects the API server answered, into
# $CLUSTER_DIR/audit.log (e2e service_account checks it asks for their metadata only); nothing
# else is audited.
write_audit_policy() {
  cat >"$CLUSTER_DIR/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: RequestResponse
  users: ["system:serviceaccount:openshift-update-status:update-status-controller"]
  verbs: ["get", "list", "watch"]
  resources:
  - group: machineconfiguration.openshift.io
    resources: ["machineconfigs"]
  - group: ""
    resources: ["pods"]
- level: None
EOF
}

# Starts kube-apiserver on $APISERVER_PORT (the data stays in etcd across restarts).
start_apiserver() {
  local pki=$CLUSTER_DIR/pki extra=()
  read -r -a extra <<<"${APISERVER_EXTRA_ARGS:-}"
  write_audit_policy
  ((${#extra[@]} == 0)) || log "kube-apiserver extra flags: ${extra[*]}"
  start kube-apiserver --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
    --cert-dir="$CLUSTER_DIR/apiserver-certs" \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" --authorization-mode=RBAC \
    --service-cluster-ip-range=10.0.0.0/24 --allow-privileged=true \
    --service-account-issuer="https://127.0.0.1:$APISERVER_PORT" \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --endpoint-reconciler-type=none --profiling=false \
    --audit-policy-file="$CLUSTER_DIR/audit-policy.yaml" --audit-log-path="$CLUSTER_DIR/audit.log" \
    --audit-log-maxsize=50 --audit-log-maxbackup=1 \
    --disable-admission-plugins=TaintNodesByCondition "${extra[@]}"
}

# --- PKI -------------------------------------------------------------------------

sign() { # name subject extensions...
  local name=$1 subj=$2 pki=$CLUSTER_DIR/pki
  shift 2
  {
    echo "[ext]"
    echo "basicConstraints = critical,CA:FALSE"
    echo "keyUsage = critical,digitalSignature,keyEncipherment"
    echo "authorityKeyIdentifier = keyid"
    printf '%s\n' "$@"
  } >"$pki/$name.ext"
  openssl req -new -nodes -newkey rsa:2048 -keyout "$pki/$name.key" -out "$pki/$name.csr" \
    -subj "$subj" 2>/dev/null
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
    -set_serial "0x$(openssl rand -hex 16)" -days 3650 -sha256 \
    -extfile "$pki/$name.ext" -extensions ext -out "$pki/$name.crt" 2>/dev/null
  rm -f "$pki/$name.csr" "$pki/$name.ext"
}

gen_pki() {
  local pki=$CLUSTER_DIR/pki
  command -v openssl >/dev/null || die "openssl is required to generate the cluster PKI"
  mkdir -p "$pki"
  cat >"$pki/ca.cnf" <<'EOF'
[req]
distinguished_name = dn
prompt = no
[dn]
CN = update-status-local-ca
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign,digitalSignature
subjectKeyIdentifier = hash
EOF
  openssl req -x509 -new -nodes -newkey rsa:2048 -keyout "$pki/ca.key" -out "$pki/ca.crt" \
    -days 3650 -sha256 -config "$pki/ca.cnf" -extensions ca 2>/dev/null
  rm -f "$pki/ca.cnf"
  sign apiserver "/CN=kube-apiserver" "extendedKeyUsage = serverAuth" \
    "subjectAltName = IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
  sign admin "/O=system:masters/CN=admin" "extendedKeyUsage = clientAuth"
  sign kcm "/CN=system:kube-controller-manager" "extendedKeyUsage = clientAuth"
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
}

write_kubeconfig() { # file user cert key
  local b64='base64 -w0'
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority-data: $($b64 <"$CLUSTER_DIR/pki/ca.crt")
users:
- name: $2
  user:
    client-certificate-data: $($b64 <"$3")
    client-key-data: $($b64 <"$4")
contexts:
- name: local
  context:
    cluster: local
    user: $2
current-context: local
EOF
  chmod 600 "$1"
}

# --- CRDs ------------------------------------------------------------------------

install_crds() {
  local files=() args=() f out names=() line group plural version deadline
  shopt -s nullglob
  files=("$root"/hack/crds/*.yaml "$root"/config/crd/*.update.openshift.io.yaml)
  shopt -u nullglob
  ((${#files[@]})) || return 0
  for f in "${files[@]}"; do args+=(-f "$f"); done
  if ! out=$(kc apply --server-side --force-conflicts --field-manager=local-cluster "${args[@]}" -o name 2>&1); then
    die "installing the CRDs of ${files[*]#"$root"/} failed: $out"
  fi
  while read -r line; do
    [[ $line == customresourcedefinition.apiextensions.k8s.io/* ]] && names+=("${line#*/}")
  done <<<"$out"
  ((${#names[@]})) || return 0
  # kubectl (1.32) fails at once, instead of waiting, on a CRD whose status has no conditions
  # yet (".status.conditions accessor error: <nil>", seen under load): wait again.
  deadline=$((SECONDS + start_timeout))
  until out=$(kc wait --for=condition=Established --timeout="${start_timeout}s" "${names[@]/#/crd/}" 2>&1); do
    [[ $out == *".status.conditions accessor error"* ]] && ((SECONDS < deadline)) ||
      die "CRDs not Established: $out"
    sleep 0.2
  done
  # Established is not enough: wait until discovery serves every resource.
  out=$(kc get crd "${names[@]}" -o jsonpath='{range .items[*]}{.spec.group} {.spec.names.plural} {.spec.versions[?(@.served==true)].name}{"\n"}{end}') ||
    die "reading the CRDs failed"
  while read -r group plural version _; do
    [[ -n $group ]] || continue
    until [[ $(kc get --raw "/apis/$group/$version" 2>/dev/null) == *"\"name\":\"$plural\""* ]]; do
      ((SECONDS < deadline)) || die "CRD $plural.$group is Established but /apis/$group/$version does not list $plural after ${start_timeout}s"
      sleep 0.2
    done
  done <<<"$out"
  log "CRDs ready: ${names[*]}"
}

# --- commands --------------------------------------------------------------------

cmd_up() {
  local t0=$SECONDS
  command -v kubectl >/dev/null || die "kubectl is required on PATH"
  command -v curl >/dev/null || die "curl is required on PATH"
  if [[ -e $CLUSTER_DIR && ! -f $CLUSTER_DIR/$marker && -n $(ls -A "$CLUSTER_DIR" 2>/dev/null) ]]; then
    die "CLUSTER_DIR=$CLUSTER_DIR exists, is not empty and was not created by this script; refusing to use it"
  fi
  mkdir -p "$CLUSTER_DIR"
  touch "$CLUSTER_DIR/$marker"
  exec 9>"$CLUSTER_DIR/.lock"
  flock -w 300 9 || die "timed out waiting for another '$0 up' on $CLUSTER_DIR"

  # (in a subshell: the ports of a dead cluster must not leak into the new one)
  if (healthy); then
    load_ports
    install_crds
    log "already running (apiserver https://127.0.0.1:$APISERVER_PORT); KUBECONFIG=$CLUSTER_DIR/kubeconfig"
    return 0
  fi

  "$root/hack/build-k8s.sh"
  local name
  for name in "${components[@]}"; do
    [[ -x $bin_dir/$name ]] || die "$bin_dir/$name missing after hack/build-k8s.sh"
  done

  # Anything left from an earlier, unhealthy run is discarded: start from scratch.
  stop_components
  find "$CLUSTER_DIR" -mindepth 1 -maxdepth 1 ! -name .lock ! -name "$marker" -exec rm -rf {} +

  local var
  for var in ETCD_PORT ETCD_PEER_PORT APISERVER_PORT KCM_PORT; do pick_port "$var"; done
  cat >"$CLUSTER_DIR/ports.env" <<EOF
ETCD_PORT=$ETCD_PORT
ETCD_PEER_PORT=$ETCD_PEER_PORT
APISERVER_PORT=$APISERVER_PORT
KCM_PORT=$KCM_PORT
EOF

  gen_pki
  write_kubeconfig "$CLUSTER_DIR/kubeconfig" admin "$CLUSTER_DIR/pki/admin.crt" "$CLUSTER_DIR/pki/admin.key"
  write_kubeconfig "$CLUSTER_DIR/kcm.kubeconfig" system:kube-controller-manager \
    "$CLUSTER_DIR/pki/kcm.crt" "$CLUSTER_DIR/pki/kcm.key"

  up_in_progress=1
  trap on_exit EXIT
  local peer=http://127.0.0.1:$ETCD_PEER_PORT
  start etcd --name=local --data-dir="$CLUSTER_DIR/etcd" \
    --listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls="$peer" --initial-advertise-peer-urls="$peer" --initial-cluster="local=$peer" \
    --unsafe-no-fsync=true --log-level=warn
  wait_ready etcd etcd_ok

  local pki=$CLUSTER_DIR/pki
  start_apiserver
  wait_ready kube-apiserver apiserver_ok

  # CRDs before kube-controller-manager: the garbage collector then watches their kinds
  # from its first discovery, instead of after its next 30s resync.
  install_crds

  # No --authentication/authorization-kubeconfig: the serving endpoint only answers the
  # always-allowed /healthz, and the apiserver has no request-header CA to delegate to.
  # --use-service-account-credentials: each controller acts as its own service account (the CSR
  # signer as system:serviceaccount:kube-system:certificate-controller, which RBAC allows to
  # write the certificates).
  # clusterrole-aggregation-controller: the `view`/`edit`/`admin` ClusterRoles gather the rules
  # of the roles labelled to aggregate into them, as on any cluster (config/acm's hub viewer role).
  local controllers=garbage-collector-controller,namespace-controller,serviceaccount-controller,serviceaccount-token-controller,clusterrole-aggregation-controller
  local signing=()
  case ${CSR_SIGNING:-} in
  1 | true)
    controllers+=,certificatesigningrequest-signing-controller
    signing=(--cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key")
    if [[ -n ${CSR_SIGNING_DURATION:-} ]]; then
      signing+=(--cluster-signing-duration="$CSR_SIGNING_DURATION")
    fi
    log "kube-controller-manager signs approved CSRs with the cluster CA${CSR_SIGNING_DURATION:+ (certificates valid for at most $CSR_SIGNING_DURATION)}"
    ;;
  "" | 0 | false) ;;
  *) die "CSR_SIGNING=$CSR_SIGNING: expected 1 or 0" ;;
  esac
  if [[ -n ${KCM_EXTRA_CONTROLLERS:-} ]]; then
    [[ $KCM_EXTRA_CONTROLLERS =~ ^[a-z-]+(,[a-z-]+)*$ ]] || die "KCM_EXTRA_CONTROLLERS=$KCM_EXTRA_CONTROLLERS: expected controller names, comma-separated"
    controllers+=,$KCM_EXTRA_CONTROLLERS
    log "kube-controller-manager also runs $KCM_EXTRA_CONTROLLERS"
  fi
  start kube-controller-manager --kubeconfig="$CLUSTER_DIR/kcm.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$KCM_PORT" --cert-dir="$CLUSTER_DIR/kcm-certs" \
    --controllers="$controllers" "${signing[@]}" \
    --leader-elect=false --use-service-account-credentials=true \
    --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
    --service-cluster-ip-range=10.0.0.0/24 --profiling=false
  wait_ready kube-controller-manager kcm_ok
  up_in_progress=0

  log "up in $((SECONDS - t0))s: apiserver https://127.0.0.1:$APISERVER_PORT, KUBECONFIG=$CLUSTER_DIR/kubeconfig"
}

cmd_down() {
  [[ -e $CLUSTER_DIR ]] || {
    log "nothing to stop: $CLUSTER_DIR does not exist"
    return 0
  }
  [[ -f $CLUSTER_DIR/$marker ]] || die "$CLUSTER_DIR was not created by this script; not touching it"
  exec 9>"$CLUSTER_DIR/.lock"
  flock -w 300 9 || die "timed out waiting for the lock on $CLUSTER_DIR"
  stop_components
  rm -rf "$CLUSTER_DIR"
  log "stopped and removed $CLUSTER_DIR"
}

# An outage of the API server alone (etcd and the data stay): for tests of clients that
# must survive one.
cmd_stop_apiserver() {
  load_ports || die "no cluster in $CLUSTER_DIR (run '$0 up' first)"
  signal_and_wait TERM kube-apiserver
  log "kube-apiserver stopped (https://127.0.0.1:$APISERVER_PORT)"
}

cmd_start_apiserver() {
  load_ports || die "no cluster in $CLUSTER_DIR (run '$0 up' first)"
  if live_pid kube-apiserver >/dev/null; then
    log "kube-apiserver already running"
    return 0
  fi
  start_apiserver
  wait_ready kube-apiserver apiserver_ok
  log "kube-apiserver started (https://127.0.0.1:$APISERVER_PORT)"
}

cmd_env() {
  [[ -f $CLUSTER_DIR/kubeconfig ]] || die "no cluster in $CLUSTER_DIR (run '$0 up' first)"
  printf 'export KUBECONFIG=%q\n' "$CLUSTER_DIR/kubeconfig"
}

cmd_status() {
  local ok=0 name pid
  if ! load_ports 2>/dev/null; then
    echo "no cluster in $CLUSTER_DIR"
    return 1
  fi
  for name in "${components[@]}"; do
    if pid=$(live_pid "$name"); then echo "$name: running (pid $pid)"; else
      echo "$name: not running"
      ok=1
    fi
  done
  if etcd_ok; then echo "etcd: healthy on 127.0.0.1:$ETCD_PORT"; else
    echo "etcd: not healthy on 127.0.0.1:$ETCD_PORT"
    ok=1
  fi
  if apiserver_ok; then echo "kube-apiserver: ready on https://127.0.0.1:$APISERVER_PORT"; else
    echo "kube-apiserver: not ready on https://127.0.0.1:$APISERVER_PORT"
    ok=1
  fi
  if kcm_ok; then echo "kube-controller-manager: healthy on 127.0.0.1:$KCM_PORT"; else
    echo "kube-controller-manager: not healthy on 127.0.0.1:$KCM_PORT"
    ok=1
  fi
  echo "KUBECONFIG=$CLUSTER_DIR/kubeconfig"
  return $ok
}

case ${1:-} in
up) cmd_up ;;
down) cmd_down ;;
env) cmd_env ;;
status) cmd_status || exit 1 ;;
stop-apiserver) cmd_stop_apiserver ;;
start-apiserver) cmd_start_apiserver ;;
*) usage ;;
esac
