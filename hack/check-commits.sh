#!/usr/bin/env bash
# make check-commits (part of make lint): the commit habits of CONTRIBUTING.md on every commit
# after COMMITS_SINCE (default bf33c49, the last commit before the habit held: the history
# before it is left as it is). A subject is at most 72 characters, and no subject is marked a
# wip, in any case: `wip` starting it (`wip: ...`, `WIP ...`), opening a bracket (`[WIP] ...`,
# `... (wip, to be compiled)`) or a branch's name (`Merge branch 'wip/x'`). Prints each offending commit; exits 1 on any.
#
#   hack/check-commits.sh [REV]     checks COMMITS_SINCE..REV (default HEAD)
#
# A shallow clone without COMMITS_SINCE cannot tell which commits are new: it says so and
# checks nothing (exit 0); a full clone without it is an error.
set -euo pipefail
export LC_ALL=C.UTF-8 # characters, not bytes
since=${COMMITS_SINCE:-bf33c49}
rev=${1:-HEAD}
if ! git cat-file -e "$since^{commit}" 2>/dev/null; then
  if [[ $(git rev-parse --is-shallow-repository) == true ]]; then
    echo "check-commits: $since is not in this shallow clone: no commit checked" >&2
    exit 0
  fi
  echo "check-commits: COMMITS_SINCE=$since is not a commit of this repository" >&2
  exit 2
fi
bad=0 n=0
wip="(^|[[('/])wip([^[:alnum:]]|$)"
while IFS=$'\t' read -r hash subject; do
  n=$((n + 1))
  if ((${#subject} > 72)); then
    echo "check-commits: $hash: a subject of ${#subject} characters (at most 72): $subject" >&2
    bad=1
  fi
  if [[ ${subject,,} =~ $wip ]]; then
    echo "check-commits: $hash: a wip commit: $subject" >&2
    bad=1
  fi
done < <(git log --format='%h%x09%s' "$since..$rev")
((bad == 0)) && echo "check-commits: $n commits after $since: subjects of at most 72 characters, none a wip" >&2
exit "$bad"
