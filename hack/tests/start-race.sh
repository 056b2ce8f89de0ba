#!/usr/bin/env bash
# Issue #46: no start-up check may take a process that has not exec'd yet for a dead one.
#
# `cmd &` returns once bash has forked; until the child has exec'd, /proc/PID/exe names bash or
# setsid. The scripts used to ask "is PID our daemon?" right after the fork, so on a loaded
# machine a daemon that was starting fine was reported as "exited during start-up" (CI: the OCM
# webhook, with an empty log). This test makes that window long on purpose, with a setsid that
# takes SLOW_EXEC seconds before it execs, and checks:
#   1. the check the scripts made before (the exe right after the fork) does misjudge it, so the
#      slow exec really opens the window and the rest of this test can fail;
#   2. hack/lib/procs.sh's start waits for the exec: live, not dead;
#   3. a daemon that exits at once is reported as exited, at once (no waiting for a time-out);
#   4. a process that never runs what it was started to run is reported after PROC_EXEC_TIMEOUT;
#   5. the real hack/local-cluster.sh starts etcd, kube-apiserver and kube-controller-manager
#      with the slow setsid (with the old check it failed: "etcd exited during start-up");
#   6. under load (two busy loops, no slow setsid) the old check's misjudgements are counted and
#      the new start has none.
# Needs .cache/bin (hack/build-k8s.sh) for step 5; run by `make script-tests` (part of make test).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../lib/procs.sh
source "$root/hack/lib/procs.sh"
slow=${SLOW_EXEC:-0.5}
tmp=$(mktemp -d)
hogs=()
cleanup() {
  exec 2>/dev/null # bash notes the reaped daemons ("No record of process") on the way out
  local p
  for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
  [[ ! -d $tmp/cluster ]] || CLUSTER_DIR=$tmp/cluster "$root/hack/local-cluster.sh" down >/dev/null 2>&1 || true
  pkill -f "$tmp/fake-daemon" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "start-race: FAIL: $*" >&2
  exit 1
}
ok() { echo "start-race: ok: $*" >&2; }

real_setsid=$(command -v setsid)
cp "$(command -v sleep)" "$tmp/fake-daemon"
mkdir "$tmp/slow-bin"
cat >"$tmp/slow-bin/setsid" <<EOF
#!/usr/bin/env bash
# setsid with a slow exec: the fork-to-exec window of a loaded machine, made ${slow}s long.
sleep $slow
exec $real_setsid "\$@"
EOF
chmod +x "$tmp/slow-bin/setsid"
fast_path=$PATH
PATH=$tmp/slow-bin:$PATH
hash -r

# The check before the fix: right after the fork, is /proc/PID/exe our daemon?
old_check() { # pid name
  local exe
  exe=$(readlink "/proc/$1/exe" 2>/dev/null) || return 1
  [[ $(basename "${exe% (deleted)}") == "$2" ]]
}

# 1. The old check misjudges a daemon whose exec is slow.
setsid "$tmp/fake-daemon" 60 >/dev/null 2>&1 </dev/null &
pid=$!
disown "$pid"
if old_check "$pid" fake-daemon; then
  fail "the old check saw the daemon straight after the fork: the slow exec did not open the window, this test proves nothing"
fi
ok "1. the old check takes a daemon that has not exec'd yet for a dead one (pid $pid runs $(readlink "/proc/$pid/exe"))"
kill "$pid" 2>/dev/null || true

# 2. The new start waits for the exec.
t0=$(date +%s%N)
proc_spawn "$tmp/d.pid" "$tmp/d.log" "$tmp/fake-daemon" 60
rc=0
proc_await_exec "$spawned_pid" proc_exe_is fake-daemon || rc=$?
waited_ms=$((($(date +%s%N) - t0) / 1000000))
((rc == 0)) || fail "2. the new start reported status $rc for a live daemon"
[[ $(<"$tmp/d.pid") == "$spawned_pid" ]] || fail "2. the pid file does not hold the daemon's pid"
proc_alive "$spawned_pid" && proc_exe_is fake-daemon "$spawned_pid" || fail "2. the daemon is not live after the start"
ok "2. the new start waited ${waited_ms} ms for the exec and sees the daemon live"
kill "$spawned_pid"

# 3. A daemon that exits at once: reported as exited, without waiting for the time-out.
t0=$SECONDS
proc_spawn "$tmp/e.pid" "$tmp/e.log" "$tmp/fake-daemon" not-a-duration
rc=0
PROC_EXEC_TIMEOUT=20 proc_await_exec "$spawned_pid" proc_exe_is never-this-name || rc=$?
((rc == 1)) || fail "3. a daemon that exited was reported with status $rc (want 1: exited)"
((SECONDS - t0 < 10)) || fail "3. telling that the daemon exited took $((SECONDS - t0))s"
ok "3. a daemon that exits at once is reported as exited in $((SECONDS - t0))s"

# 4. A process that never runs what it was started to run: the time-out.
proc_spawn "$tmp/f.pid" "$tmp/f.log" "$tmp/fake-daemon" 60
rc=0
PROC_EXEC_TIMEOUT=2 proc_await_exec "$spawned_pid" proc_exe_is another-daemon 2>/dev/null || rc=$?
((rc == 2)) || fail "4. a process running something else was reported with status $rc (want 2: time-out)"
kill "$spawned_pid"
ok "4. a process that never runs the expected program is reported after PROC_EXEC_TIMEOUT"

# 5. The real local control plane starts with the slow exec.
if [[ -x $root/.cache/bin/etcd && -x $root/.cache/bin/kube-apiserver ]]; then
  t0=$SECONDS
  if ! CLUSTER_DIR=$tmp/cluster "$root/hack/local-cluster.sh" up >"$tmp/up.log" 2>&1; then
    cat "$tmp/up.log" >&2
    fail "5. hack/local-cluster.sh up failed with a ${slow}s exec"
  fi
  CLUSTER_DIR=$tmp/cluster "$root/hack/local-cluster.sh" down >/dev/null 2>&1
  ok "5. hack/local-cluster.sh up with a ${slow}s exec: started in $((SECONDS - t0))s"
else
  fail "5. needs .cache/bin/etcd and kube-apiserver (hack/build-k8s.sh)"
fi

# 6. Under load, without the slow setsid: how often the old check misjudges, and the new never.
PATH=$fast_path
hash -r
for _ in 1 2; do
  nice -n 10 bash -c 'while :; do :; done' &
  hogs+=($!)
done
old_wrong=0 new_wrong=0 n=${LOAD_STARTS:-40}
for ((i = 0; i < n; i++)); do
  setsid "$tmp/fake-daemon" 60 >/dev/null 2>&1 </dev/null &
  pid=$!
  disown "$pid"
  old_check "$pid" fake-daemon || old_wrong=$((old_wrong + 1))
  kill "$pid" 2>/dev/null || true
  proc_spawn "$tmp/g.pid" "$tmp/g.log" "$tmp/fake-daemon" 60
  proc_await_exec "$spawned_pid" proc_exe_is fake-daemon || new_wrong=$((new_wrong + 1))
  kill "$spawned_pid" 2>/dev/null || true
done
((new_wrong == 0)) || fail "6. the new start misjudged $new_wrong of $n starts under load"
ok "6. under two busy loops: the old check misjudged $old_wrong of $n starts, the new start 0"
