#!/usr/bin/env bash
# Stage a build for a GPU machine that has no Debian packages: copy the
# binaries, the catalog, the bench and CUnit's shared library into .gpu/
# (ignored by git; pass it to the device tool's `carry`).
#   scripts/stage-device.sh [BUILD_DIR]      (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rm -rf .gpu && mkdir -p .gpu/lib
cp "$build"/runtime/convcat "$build"/tests/test_gpu "$build"/catalog/convcat.catalog .gpu/
cp -P "$build"/runtime/libconvcat.so* .gpu/lib/ 2>/dev/null || true
(cd .gpu && apt-get download -qq libcunit1 2>/dev/null) || echo "stage-device: could not download libcunit1" >&2
du -sh .gpu
