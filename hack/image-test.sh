#!/usr/bin/env bash
# make image-test: builds the image (hack/image-build.sh) and checks it without running a
# container (podman cannot run one on every CI machine): it mounts the image's filesystem
# (`podman image mount`, root) and runs both binaries in it with chroot, as root and as the
# image's user, then checks the image's configuration (non-root user, entrypoint) and content
# (the three binaries, the console plugin's assets, shared libraries, /etc/passwd, /etc/group;
# no shell, no package manager).
# Prints the image size. Without podman (or not root) it says so and skips, exit 0.
#
#   hack/image-test.sh [IMG]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' Cargo.toml)
img=${1:-localhost/update-status-controller:$version}
if ! command -v podman >/dev/null; then
  echo "image-test: SKIPPED: podman is not installed (hack/ensure-tools.sh installs it on Debian)" >&2
  exit 0
fi
if [[ $(id -u) != 0 ]]; then
  echo "image-test: SKIPPED: mounting the image and chroot need root" >&2
  exit 0
fi
pm() { podman --storage-driver vfs "$@"; }
fail() {
  echo "image-test: FAIL: $*" >&2
  exit 1
}

hack/image-build.sh "$img"
mnt=$(pm image mount "$img")
scratch=$(mktemp -d)
trap 'pm image unmount "$img" >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT

# The configuration.
user=$(pm image inspect "$img" --format '{{.Config.User}}')
[[ -n $user && ${user%%:*} != 0 && ${user%%:*} != root ]] || fail "the image runs as '${user:-root}', not a non-root UID"
entrypoint=$(pm image inspect "$img" --format '{{json .Config.Entrypoint}}')
[[ $entrypoint == '["/update-status-controller"]' ]] || fail "entrypoint $entrypoint, want [\"/update-status-controller\"]"
grep -q "^[^:]*:x:${user%%:*}:" "$mnt/etc/passwd" || fail "UID ${user%%:*} is not in /etc/passwd"

# The content: only the binaries, shared libraries and the two /etc files.
for f in /bin/sh /bin/bash /usr/bin/sh /bin/busybox /usr/bin/apt /usr/bin/dpkg /usr/bin/rpm /usr/bin/microdnf /sbin/apk; do
  [[ ! -e $mnt$f && ! -L $mnt$f ]] || fail "the image holds $f"
done
unexpected=$(cd "$mnt" && find . ! -type d ! -name '*.so' ! -name '*.so.*' \
  ! -path ./update-status-controller ! -path ./kubectl-update_status ! -path ./update-status-console-plugin \
  ! -path './console-plugin/*.js' ! -path './console-plugin/*.json' ! -path './console-plugin/*.txt' ! -path ./etc/passwd ! -path ./etc/group)
[[ -f $mnt/console-plugin/plugin-manifest.json ]] || fail "no /console-plugin/plugin-manifest.json (the console plugin's assets)"
[[ -z $unexpected ]] || fail "unexpected files in the image: $unexpected"

# Both binaries run in the image's filesystem, as root and as the image's user.
for bin in update-status-controller kubectl-update_status update-status-console-plugin; do
  for as in root "$user"; do
    out=$(chroot --userspec="$as" "$mnt" "/$bin" --version 2>&1) || fail "/$bin --version as $as in the image: $out"
    [[ $out == *" $version" ]] || fail "/$bin --version as $as printed '$out', want version $version"
  done
  echo "image-test: /$bin --version: $out" >&2
done

# The chroot check can fail: the same filesystem without its C library does not run.
cp -a "$mnt/." "$scratch/"
libc=$(cd "$scratch" && find . -name 'libc.so.6' | head -1)
if [[ -n $libc ]]; then
  rm "$scratch/$libc"
  if chroot "$scratch" /update-status-controller --version >/dev/null 2>&1; then
    fail "the controller ran without ${libc#.}: the chroot check proves nothing"
  fi
fi

size=$(pm image inspect "$img" --format '{{.Size}}')
echo "image-test: OK: $img, user $user, entrypoint $entrypoint, $((size / 1024 / 1024)) MiB ($size bytes)"
