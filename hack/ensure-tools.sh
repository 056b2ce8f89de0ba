#!/usr/bin/env bash
# Checks (and where possible installs) what the build and the tests need on a fresh machine:
# Rust (cargo), Go (to build the pinned control plane and OCM), kubectl, openssl, xz, and Prometheus
# (`promtool` for the alerting-rule tests, `prometheus` for the alerts e2e tests: Debian's
# `prometheus` package has both). Optional: podman (Debian package) builds the container image
# (`make image`, `make image-test`); when it cannot be installed, the image test is skipped and
# nothing fails. Chromium (Debian package `chromium`, with a font) runs the web view's browser
# tests (e2e/tests/web.rs) and its bench; nothing downloads a browser. Node.js and npm (Debian
# packages) build the console plugin (make console: npm ci from its lockfile, from the npm registry).
set -euo pipefail
missing=()
command -v cargo >/dev/null || missing+=("cargo (Rust toolchain, https://rustup.rs)")
command -v go >/dev/null || missing+=("go (Go toolchain >= 1.26, https://go.dev/dl)")
apt_pkgs=()
command -v openssl >/dev/null || apt_pkgs+=(openssl)
command -v kubectl >/dev/null || apt_pkgs+=(kubectl)
command -v xz >/dev/null || apt_pkgs+=(xz-utils) # hack/build-ocm.sh extracts the OCM source
{ command -v prometheus >/dev/null && command -v promtool >/dev/null; } || apt_pkgs+=(prometheus)
command -v chromium >/dev/null || apt_pkgs+=(chromium)
# The console plugin (console/, make console): node >= 20 and npm (Debian's nodejs and npm).
command -v node >/dev/null || apt_pkgs+=(nodejs)
command -v npm >/dev/null || apt_pkgs+=(npm)
fc-list 2>/dev/null | grep -q . || apt_pkgs+=(fonts-dejavu-core) # the pages' text in screenshots
if ((${#apt_pkgs[@]})); then
  if command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
    echo "ensure-tools: installing ${apt_pkgs[*]}" >&2
    # --no-install-recommends: the prometheus package would otherwise pull exporters and more.
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${apt_pkgs[@]}" >/dev/null || missing+=("${apt_pkgs[@]}")
  else
    missing+=("${apt_pkgs[@]}")
  fi
fi
if ! command -v podman >/dev/null; then
  if command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
    echo "ensure-tools: installing podman (optional: the container image)" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends podman; } >/dev/null 2>&1 || true
  fi
  command -v podman >/dev/null || echo "ensure-tools: podman is not available: make image and make image-test cannot build the image (make test skips the image test)" >&2
fi
for t in openssl kubectl xz prometheus promtool chromium node npm; do command -v "$t" >/dev/null || missing+=("$t"); done
if ((${#missing[@]})); then
  printf 'ensure-tools: missing: %s\n' "${missing[@]}" >&2
  exit 1
fi
rustup component list --installed 2>/dev/null | grep -q clippy || rustup component add clippy rustfmt >/dev/null 2>&1 || true
