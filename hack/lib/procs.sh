# shellcheck shell=bash
# Starting daemons from a script without mistaking a process that has not exec'd yet for a dead
# one (issue #46). Sourced by hack/local-cluster.sh and hack/ocm-env.sh; tested by
# hack/tests/start-race.sh.
#
# `cmd &` returns once bash has forked: until the child has exec'd (the forked bash, then
# setsid, then the daemon), /proc/PID/exe names bash or setsid. A check of "is PID our daemon?"
# made in that window judges a live process dead; a loaded machine makes the window longer. So a
# start waits for the exec (proc_await_exec) before anyone asks whether the process is ours, and
# "dead" means gone or a zombie, never "not ours yet".

# proc_alive PID: PID exists and has not exited (a zombie, state Z, has; so has state X).
proc_alive() {
  local stat
  # `read`, not `$(<file)`: under `set -e` a missing file there ends the whole script.
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  stat=${stat##*) } # the state follows the command name, which may hold spaces and parentheses
  [[ ${stat:0:1} != [ZX] ]]
}

# proc_exe_is NAME PID: PID runs a program whose file is named NAME (a binary replaced while it
# runs, "NAME (deleted)", counts).
proc_exe_is() {
  local exe
  exe=$(readlink "/proc/$2/exe" 2>/dev/null) || return 1
  exe=${exe% (deleted)}
  [[ ${exe##*/} == "$1" ]]
}

# proc_await_exec PID CHECK...: waits until `CHECK... PID` holds, i.e. the child has exec'd what
# it was started to run, for at most PROC_EXEC_TIMEOUT seconds (default 30: the exec of a
# daemon on a loaded machine, not its start-up). Returns 0 once it holds, 1 when the process
# exited first, 2 on the time-out (then prints what PID runs instead).
proc_await_exec() {
  local pid=$1 deadline=$((SECONDS + ${PROC_EXEC_TIMEOUT:-30}))
  shift
  until "$@" "$pid"; do
    proc_alive "$pid" || return 1
    if ((SECONDS >= deadline)); then
      echo "pid $pid still runs $(readlink "/proc/$pid/exe" 2>/dev/null || echo '?') after ${PROC_EXEC_TIMEOUT:-30}s" >&2
      return 2
    fi
    sleep 0.02
  done
}

# proc_spawn PIDFILE LOG COMMAND...: runs COMMAND in its own session (setsid: a process group
# to signal as one), stdin closed, stdout and stderr to LOG, fd 9 (the scripts' state-dir lock)
# closed, not in bash's job table; writes its pid to PIDFILE and to $spawned_pid (not echoed: a
# command substitution would make it a grandchild). Not a process-group leader (no job control
# in a script), so setsid execs in place and the pid is COMMAND's own.
spawned_pid=
proc_spawn() {
  local pidfile=$1 logfile=$2
  shift 2
  setsid "$@" >"$logfile" 2>&1 </dev/null 9>&- &
  spawned_pid=$!
  echo "$spawned_pid" >"$pidfile"
  # No "Killed" job notice from bash when it is stopped later; a daemon that exited at once may
  # be gone from the job table already.
  disown "$spawned_pid" 2>/dev/null || true
}
