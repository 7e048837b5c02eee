#!/usr/bin/env bash
# Quick start: install dependencies, build the default catalog, list it, query
# it, and on a machine with a GPU run one convolution verified against a
# reference.  Safe to run again: it reuses build/.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
[ -f build/build.ninja ] || meson setup build -Dspec=default
ninja -C build

cli=build/runtime/convcat
echo; echo "== convcat list (first lines)"
$cli list | sed -n 1,8p   # sed reads all: no SIGPIPE under pipefail
$cli list | tail -1
echo; echo "== convcat query: ResNet-50 res2 3x3, bf16"
$cli query --n 128 --h 56 --w 56 --c 64 --k 64 --r 3 --s 3 --pad_h 1 --pad_w 1 --dtype bf16 | sed -n 1,12p
echo; echo "== convcat query: its data gradient with stride 2 (one launch per stride phase)"
$cli query --op dgrad --n 128 --h 56 --w 56 --c 128 --k 128 --r 3 --s 3 --pad_h 1 --pad_w 1 --stride_h 2 --stride_w 2 \
    --dtype bf16 | sed -n 1,8p
echo; echo "== convcat query: a C = 3 stem (ResNet-50's 7x7 stride 2) and a depthwise 3x3 layer"
$cli query --n 64 --h 224 --w 224 --c 3 --k 64 --r 7 --s 7 --pad_h 3 --pad_w 3 --stride_h 2 --stride_w 2 \
    --dtype bf16 --arch sm90a | sed -n 4,6p
$cli query --n 64 --h 112 --w 112 --c 32 --k 32 --groups 32 --r 3 --s 3 --pad_h 1 --pad_w 1 --dtype bf16 --arch sm90a | sed -n 4,6p
echo; echo "== convcat coverage: every convolution of nine published networks, f16/bf16/tf32"
$cli coverage bench/networks.txt | tail -2
echo; echo "== convcat run --verify"
if nvidia-smi >/dev/null 2>&1; then
    $cli run auto --n 32 --h 64 --w 64 --c 256 --k 256 --r 3 --s 3 --pad_h 1 --pad_w 1 --dtype bf16 --verify
    $cli run auto --op wgrad --n 32 --h 28 --w 28 --c 128 --k 128 --r 3 --s 3 --pad_h 1 --pad_w 1 --dtype bf16 --verify
else
    echo "no GPU on this machine: skipping the verified run (convcat run needs an sm_90 GPU)"
fi
