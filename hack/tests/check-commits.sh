#!/usr/bin/env bash
# Test of hack/check-commits.sh on a scratch repository: it passes the history before
# COMMITS_SINCE and good subjects (72 characters, multi-byte ones counted as one, "wipe", "no
# wip"), and fails on a 73-character subject and on subjects marked wip in any case.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
check=$root/hack/check-commits.sh
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
git init -q
git config user.email test@example.com
git config user.name test
commit() { git commit -q --allow-empty -m "$1"; }
fail() {
  echo "check-commits test: FAIL: $*" >&2
  exit 1
}
commit "wip: an old habit, before the cutoff, with a subject well over seventy-two characters"
base=$(git rev-parse HEAD)
commit "$(printf 'x%.0s' {1..72})"
commit "docs: café → naïve, 72 characters counted as characters, not as bytes..."
commit "hack: wipe the cache before the build"
commit "lint: check the commit habits (72-character subjects, no wip)"
COMMITS_SINCE=$base "$check" 2>/dev/null || fail "good subjects were refused"
echo "check-commits test: ok: 1. the history before the cutoff and good subjects pass" >&2
for bad in "$(printf 'y%.0s' {1..73})" "WIP: half done" "house (wip, to be compiled)" "[Wip] x" "wip" "Merge branch 'wip/throttle'"; do
  git checkout -q -B scratch "$base"
  commit "$bad"
  out=$(COMMITS_SINCE=$base "$check" 2>&1) && fail "accepted: $bad"
  grep -q "$(git rev-parse --short HEAD)" <<<"$out" || fail "the commit is not named: $out"
done
echo "check-commits test: ok: 2. a 73-character subject and wip subjects are refused, each named" >&2
COMMITS_SINCE=0000000 "$check" 2>/dev/null && fail "an unknown cutoff was accepted"
echo "check-commits test: ok: 3. an unknown cutoff is an error in a full clone" >&2
