#!/usr/bin/env bash
# Run on the GPU machine from the repository root, after scripts/stage-device.sh
# here and with .gpu carried there.  Writes logs to $OUT (or /tmp/convcat-out).
#   scripts/device-session.sh [suite] [sanitize] [bench]     (default: all three)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/convcat-out}; mkdir -p "$out"
what=${*:-suite sanitize bench}
mkdir -p /tmp/cunit && dpkg -x .gpu/libcunit1_*.deb /tmp/cunit
export LD_LIBRARY_PATH=/tmp/cunit/usr/lib/x86_64-linux-gnu:$PWD/.gpu/lib
export CONVCAT_CATALOG=$PWD/.gpu/convcat.catalog
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/gpu.txt"
summary=()
if [[ $what == *suite* ]]; then
    .gpu/test_gpu .gpu/convcat.catalog > "$out/gpu_suite.txt" 2>&1
    rc=$?
    grep -E "^  .*problem [0-9]+|FAILED|failed" "$out/gpu_suite.txt" | head -20
    summary+=("gpu suite (rc $rc): $(tail -1 "$out/gpu_suite.txt")")
fi
if [[ $what == *sanitize* ]]; then
    for tool in memcheck racecheck synccheck; do
        for key in sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_coop \
                   sm90a_fprop_3d_f16_f16_f32_f16_256x128x64_s3_c1x1_coop \
                   sm90a_fprop_1d_bf16_bf16_f32_f32_128x128x64_s4_c1x1_coop; do
            dims=$(echo "$key" | cut -d_ -f3); dt=$(echo "$key" | cut -d_ -f4); ot=$(echo "$key" | cut -d_ -f7)
            case $dims in
                1d) prob="--dims 1 --n 2 --w 77 --c 72 --k 136 --s 3 --pad_w 1";;
                2d) prob="--n 2 --h 9 --w 11 --c 72 --k 136 --r 3 --s 3 --pad_h 1 --pad_w 1";;
                3d) prob="--n 1 --d 5 --h 6 --w 7 --c 72 --k 136 --t 3 --r 3 --s 3 --pad_d 1 --pad_h 1 --pad_w 1";;
            esac
            timeout 300 compute-sanitizer --tool $tool --error-exitcode 3 .gpu/convcat run "$key" $prob \
                --a_type "$dt" --b_type "$dt" --out_type "$ot" --verify > "$out/san_${tool}_$dims.txt" 2>&1
            summary+=("compute-sanitizer $tool $key: rc $? $(grep -E 'ERROR SUMMARY|verify:' "$out/san_${tool}_$dims.txt" | tr '\n' ' ')")
        done
    done
fi
if [[ $what == *bench* ]]; then
    PYTHONUNBUFFERED=1 python3 bench/bench.py ${BENCH_FILE:-bench/layers.txt} --lib .gpu/lib/libconvcat.so \
        --catalog .gpu/convcat.catalog --json "$out/bench.json" > "$out/bench.txt" 2>&1
    summary+=("bench rc $?")
    tail -45 "$out/bench.txt"
fi
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
