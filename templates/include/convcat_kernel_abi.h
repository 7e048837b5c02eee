/* convcat_kernel_abi.h: the parameter block every convcat kernel takes.
 *
 * Shared by the generated kernels (CUDA-C, compiled by nvcc) and the runtime
 * (C11): one definition, so the two cannot drift.  A change to this struct or
 * to the kernel signature bumps CONVCAT_KERNEL_ABI, which the catalog header
 * records and the runtime checks before loading any code.
 *
 * Kernel signature (every op and arch):
 *   extern "C" __global__ void KEY(const __grid_constant__ CUtensorMap tmap_a,   A operand
 *                                  const __grid_constant__ CUtensorMap tmap_b,   B operand
 *                                  const __grid_constant__ CUtensorMap tmap_y,   output, stored by TMA
 *                                  const __grid_constant__ cvc_params p);
 * Wgrad kernels also export KEY_reduce(const __grid_constant__ cvc_params p):
 * the deterministic split-K reduction, launched after KEY when splits > 1.
 * Dgrad kernels that scatter rows export KEY_fill(cvc_params) for stride
 * phases no tap reaches; on sm90a also KEY_strided, KEY's signature, which
 * runs every stride phase of a strided problem (KEY itself then has no
 * scattering epilogue: ABI 7, so a runtime of ABI 6, which would launch KEY
 * for the phases, refuses these catalogs).
 *
 * ABI 8 also adds raster_band (the sm90a tile order; sm100a kernels ignore it).
 *
 * The output map's swizzle span is 64 bytes where the entry's output box row
 * (y_box_cols x the output's bytes) is 64 bytes (sm90a tile N 160 of
 * f16/bf16), else the entry's swizzle.  ABI 8: a runtime of ABI 7 would give
 * those kernels a 128-byte swizzle and store their rows in the wrong places.
 *
 * ABI 9: sm90a KEY and KEY_reduce wait for the stream's previous kernel
 * (griddepcontrol.wait) before they touch global memory, and the runtime
 * launches them with programmatic stream serialization; those of ABI 8 have
 * no wait and would race.
 *
 * Dynamic-cluster kernels (sm100a, keys ..._cMxNfMxN_...) take two more
 * parameters after p, the A and B maps of the fallback cluster shape
 * (const __grid_constant__ CUtensorMap tmap_a_fb, tmap_b_fb), read when the
 * device launched their cluster in that shape.  They are not in cvc_params:
 * 256 more bytes there changed ptxas's code for every sm90a kernel and made
 * the 128x256 fprop kernels 20% slower on output-heavy 1x1 layers (H200).
 */
#ifndef CONVCAT_KERNEL_ABI_H
#define CONVCAT_KERNEL_ABI_H

#include <stdint.h>

#define CONVCAT_KERNEL_ABI 9

/* A CUtensorMap (cuda.h) without including cuda.h: 128 opaque bytes, 128-B
 * aligned (CUDA 13's definition), so that the kernels need no cuda.h. */
typedef struct cvc_tmap {
#if defined(__cplusplus)
    alignas(128)
#else
    _Alignas(128)
#endif
        uint64_t opaque[16];
} cvc_tmap;

/* Epilogue activations; the values are convcat_activation's (convcat.h). */
enum { CVC_ACT_NONE = 0, CVC_ACT_RELU = 1, CVC_ACT_GELU = 2, CVC_ACT_SILU = 3 };

typedef struct cvc_params {
    void *y;                 /* output (stored through tmap_y), for residual reads and the wgrad reduction */
    const void *c;           /* residual added as beta*C (same layout as y), NULL when beta == 0 */
    const void *bias;        /* per output channel, the output's type; NULL: none (fprop only) */
    float *workspace;        /* wgrad split-K partial sums, [splits][K][T*R*S][C] f32; NULL if splits == 1 */
    int64_t ldy;             /* elements between consecutive GEMM rows of y and C */
    float alpha, beta;
    int32_t gemm_m;          /* fprop: N*Z*P*Q; dgrad: N*D*H*W; wgrad: K */
    int32_t gemm_n;          /* fprop: K; dgrad: C; wgrad: C (per filter tap) */
    int32_t channels;        /* channels of the K loop's im2col operand: fprop C, dgrad K, wgrad C */
    int32_t k_iters;         /* stages of K per tile (wgrad: of the whole N*Z*P*Q reduction) */
    int32_t split_iters;     /* wgrad: stages per split-K slice (the last may be shorter) */
    int32_t splits;          /* wgrad: split-K slices (1: the kernel writes y itself) */
    int32_t chan_tiles;      /* wgrad: ceil(C / tile N), GEMM N tiles per filter tap */
    int32_t out_q, out_p, out_z;          /* pixel grid the im2col operand walks: Q, P, Z (dgrad: the phase's dx grid) */
    int32_t stride_w, stride_h, stride_d; /* its traversal strides (dgrad: 1) */
    int32_t pad_w, pad_h, pad_d;          /* lower padding: the base pixel is index * stride - pad */
    int32_t dil_w, dil_h, dil_d;          /* im2col offset per tap */
    int32_t filt_s, filt_r, filt_t;       /* taps S (W), R (H), T (D) of the K loop */
    /* dgrad: im2col tap i reads filter tap tap0 - i * tap_step (the filter turned around; strided
     * dgrad walks one stride phase's taps), and GEMM row (n, z, p, q) of the phase's grid is dx
     * pixel (n, ph + z * out_step, ...) of a dx of extents dx_*. */
    int32_t tap0_w, tap0_h, tap0_d;
    int32_t tap_step_w, tap_step_h, tap_step_d;
    int32_t ph_w, ph_h, ph_d;
    int32_t out_step_w, out_step_h, out_step_d;   /* all 1: rows are dense, the epilogue stores by TMA */
    int32_t dx_w, dx_h, dx_d;
    /* Division by out_q, out_p*out_q and out_z*out_p*out_q by multiply and shift (the scatter's
     * row -> pixel split): q = (umulhi(x, mul) + x) >> shift for 0 <= x < 2^31 (cvc_divider). */
    uint32_t div_q[2], div_pq[2], div_zpq[2];
    int32_t cluster_tiles_m;              /* ceil(tiles_m / cluster_m) */
    int32_t cluster_tiles_n;              /* ceil(tiles_n / cluster_n) */
    int32_t activation;                   /* CVC_ACT_*: applied last */
    int32_t reverse_tiles;                /* strided dgrad: walk the tiles last to first (odd phases) */
    int32_t raster_band;                  /* sm90a: cluster-tile rows per raster band, >= 1 (1: N fastest) */
    /* Grouped wgrad (K == C, kernels of space.groups_wgrad): c = C / groups channels per group, 0 when
     * not grouped.  A tile is Tile_M filters k x the SAME channel range of one tap (chan_tiles 1: GEMM N
     * tile = tap); the epilogue stores only the c x c diagonal blocks, into dw as (K, T*R*S, c). */
    int32_t group_channels;
} cvc_params;

#endif
