#!/usr/bin/env bash
# Stage a build for a GPU machine that has no Debian packages: copy the
# binaries, the catalog (xz-compressed: the default one is 20 MB of cubins,
# 0.6 MB packed, and what a device call carries is limited), the bench and
# CUnit's shared library into .gpu/ (ignored by git; pass it to the device
# tool's `carry`; scripts/device-session.sh unpacks the catalog there).
#   scripts/stage-device.sh [BUILD_DIR]      (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rm -rf .gpu && mkdir -p .gpu/lib
cp "$build"/runtime/convcat "$build"/tests/test_gpu "$build"/catalog/convcat.catalog .gpu/
cp -P "$build"/runtime/libconvcat.so* .gpu/lib/ 2>/dev/null || true
(cd .gpu && apt-get download -qq libcunit1 2>/dev/null) || echo "stage-device: could not download libcunit1" >&2
xz -T0 -6 .gpu/convcat.catalog   # -> .gpu/convcat.catalog.xz
du -sh .gpu
