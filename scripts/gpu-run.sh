#!/usr/bin/env bash
# Run the GPU tests and benchmarks on a GPU machine without Debian packages, from the source
# tree's root with .gpu/ (packed by scripts/gpu-stage.sh) beside it; CUnit is unpacked from .gpu/
# into /tmp, nothing is installed.  What to run, any of:
#   suite     the GPU suite: test_gpu on every kernel of the device's arch
#   property  the property test: random problems of every family, each refused with a reason or
#             checked against the reference (test_property)
#   multigpu  one catalog on every GPU at once, a thread a device (test_multigpu; two threads on
#             one GPU, and exit 77, where there is only one)
#   ddp       data-parallel training (bench/ddp_train.py under torchrun, a process per GPU, then
#             on one GPU with the same global batch; needs PyTorch and torchvision)
#   sanitize  compute-sanitizer (memcheck, racecheck, synccheck) on one kernel of each pipeline
#   check     every row of the bench problem files on the heuristic's pick, checked against cuDNN
#             (bench/bench.py --check; needs PyTorch)
#   bench     one bench/bench.py run, convcat against cuDNN (needs PyTorch)
#   compare   the same bench/bench.py run on the base build (.gpu/base, gpu-stage.sh's second
#             build directory), then on this one, and bench/classes.py's tables of both: a
#             change's before and after in one call, each against cuDNN of its own process
# Logs and results go to $OUT (default /tmp/convcat-out); the last lines printed are a summary.
#   scripts/gpu-run.sh [suite] [property] [multigpu] [ddp] [sanitize] [check] [bench] [compare]
#   (default: suite sanitize)
# Environment: SUITE_MATCH (test_gpu --match), SUITE_SEED (--seed), SUITE_TIMEOUT; SANITIZE_MATCH
# (a regular expression: only the sanitize entries whose name matches), SANITIZE_TIMEOUT; PROPERTY_COUNT,
# PROPERTY_SEED, PROPERTY_TIMEOUT; MULTIGPU_ROUNDS; DDP_STEPS, DDP_BATCH (global), DDP_NET;
# CHECK_FILES, CHECK_DTYPES, CHECK_TIMEOUT; BENCH_FILE, BENCH_OPS, BENCH_DTYPES, BENCH_ARGS,
# BENCH_TAG, BENCH_TIMEOUT (bench and compare, each run).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/convcat-out}; mkdir -p "$out"
what=${*:-suite sanitize}
mkdir -p /tmp/cunit && dpkg -x .gpu/libcunit1_*.deb /tmp/cunit
[ -f .gpu/convcat.catalog ] || xz -dk .gpu/convcat.catalog.xz
export LD_LIBRARY_PATH=/tmp/cunit/usr/lib/x86_64-linux-gnu:$PWD/.gpu/lib
export CONVCAT_CATALOG=$PWD/.gpu/convcat.catalog
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/gpu.txt"
summary=()
if [[ $what == *suite* ]]; then
    args=(); [ -n "${SUITE_MATCH:-}" ] && args+=(--match "$SUITE_MATCH"); [ -n "${SUITE_SEED:-}" ] && args+=(--seed "$SUITE_SEED")
    timeout "${SUITE_TIMEOUT:-500}" .gpu/test_gpu .gpu/convcat.catalog "${args[@]}" > "$out/gpu_suite.txt" 2>&1
    rc=$?
    grep -E "problem [0-9]+|FAILED|failed|refused" "$out/gpu_suite.txt" | head -30
    summary+=("gpu suite (rc $rc): $(tail -6 "$out/gpu_suite.txt" | tr '\n' ' ')")
fi
if [[ $what == *property* ]]; then
    timeout "${PROPERTY_TIMEOUT:-500}" .gpu/test_property .gpu/convcat.catalog --family all \
        --count "${PROPERTY_COUNT:-10000}" --seed "${PROPERTY_SEED:-1}" > "$out/property.txt" 2>&1
    rc=$?
    grep -E "wrong|error" "$out/property.txt" | grep -v " 0 wrong, 0 errors" | head -20
    summary+=("property (rc $rc): $(grep -E '^(tma|gather|direct) *:' "$out/property.txt" | tr '\n' ' ')")
fi
if [[ $what == *multigpu* ]]; then
    timeout 500 .gpu/test_multigpu .gpu/convcat.catalog --rounds "${MULTIGPU_ROUNDS:-20}" > "$out/multigpu.txt" 2>&1
    rc=$?
    grep -E "FAIL|error" "$out/multigpu.txt" | head -20
    summary+=("multigpu (rc $rc): $(grep -E '^[0-9]+ runs on|^SKIP' "$out/multigpu.txt" | tr '\n' ' ')")
fi
if [[ $what == *ddp* ]]; then
    gpus=$(nvidia-smi -L | wc -l)
    ddp() {   # processes tag
        PYTHONPATH=python CONVCAT_LIBRARY=.gpu/lib/libconvcat.so NCCL_NVLS_ENABLE=0 timeout 500 \
            torchrun --standalone --nproc_per_node="$1" bench/ddp_train.py --net "${DDP_NET:-resnet50}" \
            --steps "${DDP_STEPS:-30}" --global-batch "${DDP_BATCH:-128}" --json "$out/ddp_$2.json" \
            > "$out/ddp_$2.txt" 2>&1
        summary+=("ddp $2 (rc $?): $(grep -E 'ms/step|curves' "$out/ddp_$2.txt" | tr '\n' ' ')")
    }
    [ "$gpus" -gt 1 ] && ddp "$gpus" "${gpus}gpu"
    ddp 1 1gpu
    python3 bench/ddp_train.py --compare "$out"/ddp_*gpu.json | tee "$out/ddp_compare.txt"
fi
if [[ $what == *sanitize* ]]; then
    # One kernel of each shape of pipeline: TMA fprop (2x1 cluster, bias, residual, GELU), halo
    # fprop, dgrad (2x1 cluster; strided: 4 phases, scattered rows, beta), wgrad (split-K;
    # split-K in clusters of 8 slices of a 1x1 layer, alpha and beta; per-tap 3D; tf32's stage
    # copy; grouped c = 8, and c = 4 whole and split); gather fprop (grouped, C = 3 through
    # registers; split K with bias, ReLU and beta), dgrad (strided, grouped), wgrad (split, odd C;
    # input tiles of C = 3 split, and of C = 1 in one slice; dgrad's of C = 3, K = 45); grouped fprop (a
    # pack of groups; a group a column, stride 2; c = 4 widened) and dgrad (c = 8 widened), a tile N 32 fprop, tile N 32 dgrad (2D, and 3D of C = 40 in two tile columns); direct fprop (7x7 with bias
    # and SiLU; staged 7x7; 4 channels a group, stride 2), dgrad (stride 2, multiplier 2; staged; 8
    # channels a group), wgrad (3D; 4 channels a group, stride 2; staged 7x7 with a part channel
    # block, alpha and beta; staged 5x3 at stride 2 with H dilation 2).
    run_san() {   # tool name key problem...
        local tool=$1 name=$2 key=$3; shift 3
        [[ -n ${SANITIZE_MATCH:-} && ! $name =~ $SANITIZE_MATCH ]] && return 0
        # only where the staged catalog has the kernel (a development or reduced spec may not)
        .gpu/convcat list --match "$key" | grep -q "$key" || return 0
        local dt; dt=$(echo "$key" | cut -d_ -f4); local ot; ot=$(echo "$key" | cut -d_ -f7)
        timeout "${SANITIZE_TIMEOUT:-300}" compute-sanitizer --tool "$tool" --error-exitcode 3 .gpu/convcat run "$key" "$@" \
            --a_type "$dt" --b_type "$dt" --out_type "$ot" --verify > "$out/san_${tool}_$name.txt" 2>&1
        summary+=("compute-sanitizer $tool $name: rc $? $(grep -E 'ERROR SUMMARY|verify:' "$out/san_${tool}_$name.txt" | tr '\n' ' ')")
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
        CONVCAT_CLUSTER_SPLITS=1 run_san $tool wgrad_cluster sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop \
            --op wgrad --n 8 --h 28 --w 28 --c 200 --k 136 --r 1 --s 1 --alpha 0.5 --beta 0.75
        run_san $tool wgrad_tf32 sm90a_wgrad_2d_tf32_tf32_f32_f32_128x128x32_s4_c1x1_coop --op wgrad \
            --n 4 --h 14 --w 14 --c 96 --k 136 --r 3 --s 3 --pad_h 1 --pad_w 1 --beta 0.5
        run_san $tool wgrad_grouped sm90a_wgrad_2d_f16_f16_f32_f16_64x64x64_s4_c1x1_pingpong --op wgrad \
            --n 2 --h 9 --w 11 --c 72 --k 72 --r 3 --s 3 --pad_h 1 --pad_w 1 --groups 9 --beta 0.75
        run_san $tool wgrad_grouped_c4 sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop --op wgrad \
            --n 2 --h 9 --w 11 --c 72 --k 72 --r 3 --s 3 --pad_h 1 --pad_w 1 --groups 18 --beta 0.75
        run_san $tool wgrad_grouped_c4_split sm90a_wgrad_2d_f16_f16_f32_f16_64x64x64_s4_c1x1_pingpong --op wgrad \
            --n 16 --h 28 --w 28 --c 64 --k 64 --r 3 --s 3 --pad_h 1 --pad_w 1 --groups 16 --alpha 0.5 --beta 0.75
        run_san $tool gather_fprop sm90a_fprop_2d_bf16_bf16_f32_bf16_128x16x32_s3_c1x1_gather \
            --n 2 --h 13 --w 11 --c 96 --k 48 --r 3 --s 3 --pad_h 1 --pad_w 1 --groups 8 --bias --act silu --beta 0.5
        run_san $tool gather_stem sm90a_fprop_2d_f16_f16_f32_f16_128x64x32_s3_c1x1_gather \
            --n 2 --h 29 --w 31 --c 3 --k 64 --r 7 --s 7 --pad_h 3 --pad_w 3 --stride_h 2 --stride_w 2
        run_san $tool gather_tile sm90a_fprop_2d_f16_f16_f32_f16_128x64x16_s1_c1x1_gather \
            --n 2 --h 29 --w 31 --c 3 --k 96 --r 7 --s 7 --pad_h 3 --pad_w 3 --stride_h 2 --stride_w 2 --bias --act gelu --beta 0.5
        run_san $tool gather_tile_1d sm90a_fprop_1d_bf16_bf16_f32_bf16_128x32x16_s1_c1x1_gather \
            --dims 1 --n 2 --h 1 --w 1605 --c 1 --k 64 --s 10 --stride_w 5
        run_san $tool gather_tile_dgrad sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x16x16_s1_c1x1_gather --op dgrad \
            --n 2 --h 29 --w 31 --c 3 --k 45 --r 7 --s 7 --pad_h 3 --pad_w 3 --stride_h 2 --stride_w 2 --alpha 0.5 --beta 0.75
        run_san $tool gather_tile_dgrad_s4 sm90a_dgrad_2d_f16_f16_f32_f16_128x48x16_s1_c1x1_gather --op dgrad \
            --n 2 --h 37 --w 35 --c 3 --k 64 --r 11 --s 11 --pad_h 2 --pad_w 2 --stride_h 4 --stride_w 4 --beta 0.5
        run_san $tool gather_tile_dgrad_1d sm90a_dgrad_1d_bf16_bf16_f32_bf16_64x8x16_s1_c1x1_gather --op dgrad \
            --dims 1 --n 2 --h 1 --w 1605 --c 1 --k 72 --s 10 --stride_w 5
        run_san $tool gather_tile_wgrad sm90a_wgrad_2d_bf16_bf16_f32_bf16_64x128x16_s1_c1x1_gather --op wgrad \
            --n 2 --h 29 --w 31 --c 3 --k 45 --r 7 --s 7 --pad_h 3 --pad_w 3 --stride_h 2 --stride_w 2 --beta 0.5
        run_san $tool gather_tile_wgrad_1d sm90a_wgrad_1d_f16_f16_f32_f16_64x64x16_s1_c1x1_gather --op wgrad \
            --dims 1 --n 1 --h 1 --w 300 --c 1 --k 64 --s 10 --stride_w 5 --alpha 0.5 --beta 0.75
        run_san $tool gather_split sm90a_fprop_2d_bf16_bf16_f32_bf16_128x16x32_s3_c1x1_gather \
            --n 64 --h 1 --w 1 --c 672 --k 28 --r 1 --s 1 --bias --act relu --alpha 0.5 --beta 0.75
        run_san $tool gather_dgrad sm90a_dgrad_2d_bf16_bf16_f32_bf16_64x32x32_s3_c1x1_gather --op dgrad \
            --n 2 --h 15 --w 13 --c 24 --k 40 --r 3 --s 3 --pad_h 1 --pad_w 1 --stride_h 2 --stride_w 2 --groups 4 --beta 0.75
        run_san $tool gather_wgrad sm90a_wgrad_2d_bf16_bf16_f32_bf16_32x64x32_s3_c1x1_gather --op wgrad \
            --n 8 --h 28 --w 28 --c 3 --k 32 --r 3 --s 3 --pad_h 1 --pad_w 1 --beta 0.5
        run_san $tool direct_fprop sm90a_fprop_2d_bf16_bf16_f32_bf16_4x16x64_s1_c1x1_direct \
            --n 2 --h 19 --w 21 --c 96 --k 96 --r 7 --s 7 --pad_h 3 --pad_w 3 --groups 96 --bias --act silu --beta 0.5
        run_san $tool direct_dgrad sm90a_dgrad_2d_f16_f16_f32_f16_8x16x64_s1_c1x1_direct --op dgrad \
            --n 2 --h 17 --w 19 --c 40 --k 80 --r 3 --s 3 --pad_h 1 --pad_w 1 --stride_h 2 --stride_w 2 --groups 40
        run_san $tool direct_staged sm90a_fprop_2d_bf16_bf16_f32_bf16_8x16x32_s2_c1x1_direct \
            --n 2 --h 19 --w 21 --c 96 --k 96 --r 7 --s 7 --pad_h 3 --pad_w 3 --groups 96 --bias --act silu --beta 0.5
        run_san $tool direct_staged_dgrad sm90a_dgrad_2d_f16_f16_f32_f16_8x8x32_s2_c1x1_direct --op dgrad \
            --n 2 --h 17 --w 19 --c 40 --k 40 --r 3 --s 3 --pad_h 1 --pad_w 1 --groups 40 --beta 0.5
        run_san $tool direct_staged_wgrad sm90a_wgrad_2d_bf16_bf16_f32_bf16_8x32x32_s2_c1x1_direct --op wgrad \
            --n 3 --h 19 --w 21 --c 40 --k 40 --r 7 --s 7 --pad_h 3 --pad_w 3 --groups 40 --alpha 0.5 --beta 0.75
        run_san $tool direct_staged_wgrad_s2 sm90a_wgrad_2d_f16_f16_f32_f16_8x16x32_s2_c1x1_direct --op wgrad \
            --n 2 --h 23 --w 17 --c 96 --k 96 --r 5 --s 3 --pad_h 2 --pad_w 1 --stride_h 2 --stride_w 2 --dilation_h 2 --groups 96
        run_san $tool direct_groups sm90a_fprop_2d_bf16_bf16_f32_bf16_8x16x16_s1_c1x1_direct \
            --n 2 --h 13 --w 11 --c 64 --k 64 --r 3 --s 3 --pad_h 1 --pad_w 1 --stride_h 2 --stride_w 2 --groups 16 --bias --beta 0.5
        run_san $tool direct_groups_dgrad sm90a_dgrad_2d_bf16_bf16_f32_bf16_8x16x16_s1_c1x1_direct --op dgrad \
            --n 2 --h 13 --w 11 --c 64 --k 64 --r 3 --s 3 --pad_h 1 --pad_w 1 --groups 8 --beta 0.5
        run_san $tool direct_wgrad sm90a_wgrad_3d_bf16_bf16_f32_bf16_4x16x64_s1_c1x1_direct --op wgrad \
            --n 2 --d 5 --h 9 --w 11 --c 48 --k 48 --t 3 --r 3 --s 3 --pad_d 1 --pad_h 1 --pad_w 1 --groups 48
        run_san $tool direct_groups_wgrad sm90a_wgrad_2d_bf16_bf16_f32_bf16_4x16x64_s1_c1x1_direct --op wgrad \
            --n 2 --h 13 --w 11 --c 64 --k 64 --r 3 --s 3 --pad_h 1 --pad_w 1 --stride_h 2 --stride_w 2 --groups 16 --beta 0.5
        run_san $tool grouped_pack sm90a_fprop_2d_bf16_bf16_f32_bf16_128x64x64_s4_c1x1_grouped \
            --n 2 --h 9 --w 11 --c 128 --k 256 --r 3 --s 3 --pad_h 1 --pad_w 1 --groups 8 --bias --act gelu --beta 0.5
        run_san $tool grouped_band sm90a_fprop_2d_f16_f16_f32_f16_128x128x64_s4_c1x1_grouped \
            --n 2 --h 9 --w 7 --c 160 --k 512 --r 3 --s 3 --pad_h 1 --pad_w 1 --stride_h 2 --stride_w 2 --groups 2
        run_san $tool grouped_widened sm90a_fprop_2d_bf16_bf16_f32_bf16_128x64x64_s4_c1x1_grouped \
            --n 2 --h 9 --w 11 --c 128 --k 128 --r 3 --s 3 --pad_h 1 --pad_w 1 --groups 32 --bias --act gelu --beta 0.5
        run_san $tool grouped_widened_dgrad sm90a_fprop_2d_f16_f16_f32_f16_256x64x64_s4_c1x1_grouped --op dgrad \
            --n 2 --h 9 --w 11 --c 256 --k 256 --r 3 --s 3 --pad_h 1 --pad_w 1 --groups 32 --beta 0.5
        run_san $tool n32 sm90a_fprop_2d_bf16_bf16_f32_bf16_128x32x64_s4_c1x1_coop \
            --n 4 --h 28 --w 28 --c 96 --k 24 --r 1 --s 1 --bias --act relu --alpha 0.5 --beta 0.75
        run_san $tool dgrad_n32 sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x32x64_s6_c1x1_coop --op dgrad \
            --n 4 --h 28 --w 28 --c 24 --k 96 --r 3 --s 3 --pad_h 1 --pad_w 1 --alpha 0.5 --beta 0.75
        run_san $tool dgrad_n32_3d sm90a_dgrad_3d_f16_f16_f32_f16_256x32x32_s8_c1x1_coop --op dgrad \
            --n 2 --d 4 --h 14 --w 14 --c 40 --k 24 --t 3 --r 3 --s 3 --pad_d 1 --pad_h 1 --pad_w 1 --beta 0.5
    done
fi
if [[ $what == *check* ]]; then
    # Every row of the problem files on the heuristic's pick, once, against cuDNN on the same tensors.
    files=${CHECK_FILES:-bench/networks.txt,bench/resnet50.txt,bench/sd_unet.txt,bench/layers.txt}
    PYTHONUNBUFFERED=1 timeout "${CHECK_TIMEOUT:-500}" python3 bench/bench.py "$files" --check \
        --ops fprop,dgrad,wgrad --dtypes "${CHECK_DTYPES:-bf16,fp16,fp32}" --lib .gpu/lib/libconvcat.so \
        --catalog .gpu/convcat.catalog --json "$out/check.json" > "$out/check.txt" 2>&1
    rc=$?
    grep -E "FAIL|skipped" "$out/check.txt" | head -30
    summary+=("check (rc $rc): $(grep -c ' ok ' "$out/check.txt") ok, $(grep -c 'FAIL' "$out/check.txt") FAIL, $(grep -c 'skipped' "$out/check.txt") skipped")
fi
bench() {   # lib catalog tag
    PYTHONUNBUFFERED=1 timeout "${BENCH_TIMEOUT:-500}" python3 bench/bench.py "${BENCH_FILE:-bench/layers.txt}" \
        --ops "${BENCH_OPS:-fprop}" --dtypes "${BENCH_DTYPES:-bf16,fp16}" ${BENCH_ARGS:-} --lib "$1" \
        --catalog "$2" --json "$out/bench$3.json" > "$out/bench$3.txt" 2>&1
    summary+=("bench$3 ${BENCH_FILE:-layers} rc $?")
    grep -A8 "^geomean" "$out/bench$3.txt"
}
if [[ $what == *bench* ]]; then
    bench .gpu/lib/libconvcat.so .gpu/convcat.catalog "${BENCH_TAG:-}"
fi
if [[ $what == *compare* ]]; then
    if [ ! -f .gpu/base/convcat.catalog.xz ] && [ ! -f .gpu/base/convcat.catalog ]; then
        summary+=("compare: no base build in .gpu/base (scripts/gpu-stage.sh BUILD_DIR BASE_BUILD_DIR)")
    else
        [ -f .gpu/base/convcat.catalog ] || xz -dk .gpu/base/convcat.catalog.xz
        bench .gpu/base/lib/libconvcat.so .gpu/base/convcat.catalog "${BENCH_TAG:-}-base"
        bench .gpu/lib/libconvcat.so .gpu/convcat.catalog "${BENCH_TAG:-}-new"
        for v in base new; do
            echo "== $v"; python3 bench/classes.py "$out/bench${BENCH_TAG:-}-$v.json" | tee "$out/classes${BENCH_TAG:-}-$v.txt"
        done
    fi
fi
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
