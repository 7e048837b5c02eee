#!/usr/bin/env bash
# Install what building and testing convcat needs, where it is missing:
# Debian packages (ninja, CUnit, pkg-config, cmake for the install test's
# find_package project, clang and libFuzzer for the fuzz harnesses) and Python packages (meson,
# Jinja2, and cuobjdump/nvdisasm for the static SASS checks).  The CUDA
# toolkit (nvcc 12.8+, 13.0 tested) must already be installed.
set -euo pipefail

need_apt=()
command -v ninja >/dev/null || need_apt+=(ninja-build)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)
command -v cmake >/dev/null || need_apt+=(cmake)
[ -f /usr/include/CUnit/Basic.h ] || need_apt+=(libcunit1-dev)
# clang with libFuzzer (Debian: libclang-rt-dev) for the fuzz harnesses (-Dfuzz=true).
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }' |
    clang -x c -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null || need_apt+=(clang libclang-rt-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
    SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

need_pip=()
python3 -c 'import jinja2' 2>/dev/null || need_pip+=(jinja2)
command -v meson >/dev/null || need_pip+=(meson)
python3 - <<'PY' || need_pip+=(nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)
import glob, os, shutil, sys, sysconfig
found = shutil.which("cuobjdump") or glob.glob(os.path.join(sysconfig.get_paths()["purelib"], "nvidia", "*", "bin", "cuobjdump"))
sys.exit(0 if found else 1)
PY
if [ ${#need_pip[@]} -gt 0 ]; then
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore "${need_pip[@]}"
fi

command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || {
    echo "install-deps: nvcc not found: install the CUDA toolkit (12.8 or newer)" >&2; exit 1; }
echo "install-deps: ok"
