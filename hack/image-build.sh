#!/usr/bin/env bash
# make image: builds the container image of update-status (Containerfile, FROM scratch).
#
#   hack/image-build.sh [--rootfs-only] IMG
#   hack/image-build.sh --bins-only          (step 1 only: hack/e2e.sh)
#
# 1. Builds the release binaries (the same cargo command as hack/e2e.sh, so `make test` builds
#    them once): update-status-controller and the kubectl-update_status plugin; then (not with
#    --bins-only) update-status-console-plugin, the console plugin's server.
# 2. Stages the image's root filesystem in target/image-root/: the three binaries at /, the
#    console plugin's built assets (console/dist, `make console`) at /console-plugin, exactly
#    the shared libraries they load (ldd, the dynamic loader included, at the paths ldd
#    reports), /etc/passwd and /etc/group naming the non-root UID 65532, an empty /tmp. No shell,
#    no package manager, no CA bundle: the controller trusts only the CA files it is given (the
#    in-cluster service-account ca.crt for the API server, --prometheus-ca-file for Prometheus).
# 3. `podman --storage-driver vfs build` with that directory as the build context.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
rootfs_only=false bins_only=false
case ${1:-} in
--rootfs-only) rootfs_only=true && shift ;;
--bins-only) bins_only=true ;;
esac
$bins_only || img=${1:?usage: hack/image-build.sh [--rootfs-only] IMG | --bins-only}
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' Cargo.toml)
rootfs=$root/target/image-root
bins=(update-status-controller kubectl-update_status)
uid=65532

cargo build -q --release -p update-status-controllers -p update-status-cli \
  --bin update-status-controller --bin kubectl-update_status
$bins_only && exit 0
# The console plugin's server and its assets (console/dist: `make console`).
[[ -f console/dist/plugin-manifest.json ]] || {
  echo "image-build: console/dist is not built: run make console" >&2
  exit 1
}
cargo build -q --release -p update-status-controllers --bin update-status-console-plugin
bins+=(update-status-console-plugin)

rm -rf "$rootfs"
mkdir -p "$rootfs/etc" "$rootfs/tmp"
chmod 1777 "$rootfs/tmp"
printf 'root:x:0:0:root:/:/sbin/nologin\nupdate-status:x:%s:%s:update-status:/:/sbin/nologin\n' "$uid" "$uid" >"$rootfs/etc/passwd"
printf 'root:x:0:\nupdate-status:x:%s:\n' "$uid" >"$rootfs/etc/group"
libs=()
for b in "${bins[@]}"; do
  install -m 0755 "target/release/$b" "$rootfs/$b"
  # Symbols are not needed to run (as cargo's `strip = true`; a panic's backtrace loses names).
  if command -v strip >/dev/null; then strip --strip-all "$rootfs/$b"; fi
  # ldd lines: "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)", "/lib64/ld-linux-x86-64.so.2 (0x...)",
  # "linux-vdso.so.1 (0x...)" (in the kernel: no file). "not found" fails the build.
  if ! out=$(ldd "target/release/$b" 2>&1); then
    # "not a dynamic executable": a static binary needs no library.
    [[ $out == *"not a dynamic executable"* ]] && continue
    echo "image-build: ldd target/release/$b: $out" >&2
    exit 1
  fi
  if grep -q 'not found' <<<"$out"; then
    echo "image-build: target/release/$b needs a library this machine lacks:" >&2
    grep 'not found' <<<"$out" >&2
    exit 1
  fi
  while read -r lib; do libs+=("$lib"); done < <(awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' <<<"$out")
done
mkdir -p "$rootfs/console-plugin"
cp -R console/dist/. "$rootfs/console-plugin/"
for lib in $(printf '%s\n' "${libs[@]}" | sort -u); do
  mkdir -p "$rootfs$(dirname "$lib")"
  cp -L "$lib" "$rootfs$lib" # the file, not the symlink chain
done
echo "image-build: staged $rootfs: ${bins[*]} + $(printf '%s\n' "${libs[@]}" | sort -u | wc -l) libraries ($(du -sh "$rootfs" | cut -f1))" >&2
$rootfs_only && exit 0

if ! command -v podman >/dev/null; then
  echo "image-build: podman is not installed (hack/ensure-tools.sh installs it on Debian)" >&2
  exit 1
fi
# --layers=false: no intermediate images; the image IMG named before is removed once replaced
# (vfs stores every image as a full copy).
previous=$(podman --storage-driver vfs image inspect "$img" --format '{{.Id}}' 2>/dev/null || true)
podman --storage-driver vfs build -q --layers=false -f Containerfile \
  --build-arg "VERSION=$version" -t "$img" "$rootfs" >/dev/null
current=$(podman --storage-driver vfs image inspect "$img" --format '{{.Id}}')
if [[ -n $previous && $previous != "$current" ]]; then
  podman --storage-driver vfs rmi "$previous" >/dev/null 2>&1 || true
fi
size=$(podman --storage-driver vfs image inspect "$img" --format '{{.Size}}')
echo "image-build: built $img ($((size / 1024 / 1024)) MiB, $size bytes)"
