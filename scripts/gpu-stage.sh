#!/usr/bin/env bash
# Pack a build for a GPU machine where Debian packages cannot be installed (no CUnit there):
# the convcat command, the GPU suite (test_gpu), property test (test_property) and multi-GPU test
# (test_multigpu), libconvcat, the catalog (xz-compressed: a few
# hundred kernels' cubins pack ~30x) and CUnit's Debian package (fetched here with apt-get
# download), into .gpu/ (ignored by git).  Run it where the build is; then copy the source tree
# with .gpu/ to the GPU machine and run scripts/gpu-run.sh there, from the tree's root.  A second
# build directory (BASE_BUILD_DIR, for instance one of the commit before a change) stages its
# libconvcat and catalog into .gpu/base/, for gpu-run.sh's compare mode (both in one call).
#   scripts/gpu-stage.sh [BUILD_DIR [BASE_BUILD_DIR]]      (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rm -rf .gpu && mkdir -p .gpu/lib
cp "$build"/runtime/convcat "$build"/tests/test_gpu "$build"/tests/test_property "$build"/tests/test_multigpu \
    "$build"/catalog/convcat.catalog .gpu/
libs() { find "$1"/runtime -maxdepth 1 -name "libconvcat.so*" ! -type d; }   # not meson's .p folders
cp -P $(libs "$build") .gpu/lib/
(cd .gpu && apt-get download -qq libcunit1 2>/dev/null) || echo "gpu-stage: could not download libcunit1" >&2
xz -T0 -6 .gpu/convcat.catalog   # -> .gpu/convcat.catalog.xz
if [ -n "${2:-}" ]; then
    mkdir -p .gpu/base/lib
    cp -P $(libs "$2") .gpu/base/lib/
    cp "$2"/catalog/convcat.catalog .gpu/base/
    xz -T0 -6 .gpu/base/convcat.catalog
fi
du -sh .gpu
