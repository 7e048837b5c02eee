#!/usr/bin/env bash
# Run on the GPU machine from the repository root, after scripts/stage-device.sh
# here and with .gpu carried there.  Writes logs to $OUT (or /tmp/convcat-out).
#   scripts/device-session.sh [suite] [sanitize] [bench]     (default: all three)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/convcat-out}; mkdir -p "$out"
what=${*:-suite sanitize bench}
mkdir -p /tmp/cunit && dpkg -x .gpu/libcunit1_*.deb /tmp/cunit
[ -f .gpu/convcat.catalog ] || xz -dk .gpu/convcat.catalog.xz   # stage-device.sh packs it
export LD_LIBRARY_PATH=/tmp/cunit/usr/lib/x86_64-linux-gnu:$PWD/.gpu/lib
export CONVCAT_CATALOG=$PWD/.gpu/convcat.catalog
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/gpu.txt"
summary=()
if [[ $what == *suite* ]]; then
    timeout ${SUITE_TIMEOUT:-500} .gpu/test_gpu .gpu/convcat.catalog > "$out/gpu_suite.txt" 2>&1
    rc=$?
    grep -E "^  .*problem [0-9]+|FAILED|failed" "$out/gpu_suite.txt" | head -20
    summary+=("gpu suite (rc $rc): $(tail -1 "$out/gpu_suite.txt")")
fi
if [[ $what == *sanitize* ]]; then
    # One kernel per op and shape of pipeline: a 2x1-cluster fprop with bias, residual and GELU; a halo
    # fprop (input tiles, part-blocks, four channel blocks);
    # a 2x1-cluster dgrad and a strided one (4 phases, scattered rows, beta); a split-K wgrad (flat N)
    # and a per-tap 3D wgrad (C = 72); a tf32 wgrad (its stages copied K-major) and a grouped one (c = 8).
    run_san() {   # tool name key problem...
        local tool=$1 name=$2 key=$3; shift 3
        local dt; dt=$(echo "$key" | cut -d_ -f4); local ot; ot=$(echo "$key" | cut -d_ -f7)
        timeout 300 compute-sanitizer --tool $tool --error-exitcode 3 .gpu/convcat run "$key" "$@" \
            --a_type "$dt" --b_type "$dt" --out_type "$ot" --verify > "$out/san_${tool}_$name.txt" 2>&1
        summary+=("compute-sanitizer $tool $key: rc $? $(grep -E 'ERROR SUMMARY|verify:' "$out/san_${tool}_$name.txt" | tr '\n' ' ')")
    }
    for tool in memcheck racecheck synccheck; do
        run_san $tool fprop sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_coop \
            --n 2 --h 9 --w 11 --c 72 --k 136 --r 3 --s 3 --pad_h 1 --pad_w 1 --bias --act gelu --alpha 0.5 --beta 0.75
        run_san $tool fprop_halo sm90a_fprop_2d_bf16_bf16_f32_bf16_224x64x64_s10_c1x1_halo \
            --n 3 --h 61 --w 21 --c 200 --k 72 --r 3 --s 3 --pad_h 1 --pad_w 1 --bias --act gelu --alpha 0.5 --beta 0.75
        run_san $tool dgrad sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_coop --op dgrad \
            --n 2 --h 9 --w 11 --c 72 --k 136 --r 3 --s 3 --pad_h 1 --pad_w 1 --alpha 0.5 --beta 0.75
        run_san $tool dgrad_strided sm90a_dgrad_2d_f16_f16_f32_f16_128x128x64_s4_c1x1_coop --op dgrad \
            --n 2 --h 15 --w 13 --c 72 --k 136 --r 3 --s 3 --pad_h 1 --pad_w 1 --stride_h 2 --stride_w 2 --beta 0.75
        run_san $tool wgrad_split sm90a_wgrad_2d_f16_f16_f32_f16_128x64x64_s4_c2x1_coop --op wgrad \
            --n 8 --h 28 --w 28 --c 64 --k 128 --r 3 --s 3 --pad_h 1 --pad_w 1 --beta 1
        run_san $tool wgrad_3d sm90a_wgrad_3d_bf16_bf16_f32_bf16_64x128x64_s4_c1x1_pingpong --op wgrad \
            --n 1 --d 5 --h 6 --w 7 --c 72 --k 136 --t 3 --r 3 --s 3 --pad_d 1 --pad_h 1 --pad_w 1
        run_san $tool wgrad_tf32 sm90a_wgrad_2d_tf32_tf32_f32_f32_128x128x32_s4_c1x1_coop --op wgrad \
            --n 4 --h 14 --w 14 --c 96 --k 136 --r 3 --s 3 --pad_h 1 --pad_w 1 --beta 0.5
        run_san $tool wgrad_grouped sm90a_wgrad_2d_f16_f16_f32_f16_64x64x64_s4_c1x1_pingpong --op wgrad \
            --n 2 --h 9 --w 11 --c 72 --k 72 --r 3 --s 3 --pad_h 1 --pad_w 1 --groups 9 --beta 0.75
    done
fi
if [[ $what == *bench* ]]; then
    # BENCH_FILE (default bench/layers.txt), BENCH_OPS (default fprop), BENCH_ARGS (e.g. --all-ops)
    PYTHONUNBUFFERED=1 timeout ${BENCH_TIMEOUT:-500} python3 bench/bench.py ${BENCH_FILE:-bench/layers.txt} \
        --ops ${BENCH_OPS:-fprop} ${BENCH_ARGS:-} --lib .gpu/lib/libconvcat.so \
        --catalog .gpu/convcat.catalog --json "$out/bench${BENCH_TAG:-}.json" > "$out/bench${BENCH_TAG:-}.txt" 2>&1
    summary+=("bench ${BENCH_FILE:-layers} rc $?")
    grep -A8 "^geomean" "$out/bench${BENCH_TAG:-}.txt"
fi
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
