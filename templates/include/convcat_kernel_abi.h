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
 * ABI 10 adds the gather and direct families, whose kernels take one parameter each,
 * KEY(const __grid_constant__ cvc_gather_params p) and KEY(const __grid_constant__
 * cvc_direct_params p) (no tensor maps: their threads load the operands), and their helper
 * KEY_reduce(the same block), which adds split-K slices.
 *
 * ABI 11: cvc_gather_params gains `patch` (a patch convolution's dgrad in one launch), which
 * moves the fields after it; a runtime of ABI 10 would pass them at the wrong offsets.
 *
 * ABI 12: cvc_direct_params gains `cg` (direct fprop and dgrad of groups of c = k channels); a
 * runtime of ABI 11 would pass a parameter block without it.
 *
 * ABI 13: cvc_gather_params gains the packed-group fields (packed, wc, gk, gn and their
 * dividers); a runtime of ABI 12 would leave them zero, and the kernels divide by them.
 *
 * ABI 14: cvc_params gains group_filters (sm90a schedule grouped: grouped fprop by TMA); a
 * runtime of ABI 13 would leave it zero and run those kernels' grouped problems ungrouped.
 *
 * ABI 15: cvc_params gains cluster_splits (sm90a wgrad, flag CLUSTER_SPLITS: a cluster's CTAs are
 * one tile's split-K slices, which add their sums through distributed shared memory); the
 * kernels compiled with it read it where an older runtime's block would end.
 *
 * ABI 16: direct kernels of flag TMA_TILE (sm90a staged fprop and dgrad) take the input's tensor map
 * first, KEY(const __grid_constant__ cvc_tmap tmap_in, const __grid_constant__ cvc_direct_params p);
 * a runtime of ABI 15 would pass the parameter block alone.
 *
 * ABI 18: the grouped schedule's filter helper KEY_turn(w, wt, groups, kg, cg, taps) becomes
 * KEY_regroup(w, wt, groups, k, c, taps, turned, widen), which also widens narrow groups (flag
 * WIDENS_GROUPS); a runtime of ABI 17 would look for KEY_turn.
 *
 * ABI 19: cvc_gather_params gains tile_pass (input-tile dgrad: col computed in passes over bands of
 * filter rows); a runtime of ABI 18 would leave it zero, and the kernels divide by it.
 *
 * ABI 20: the input-tile dgrad kernels run the stride phases side by side: tile_pass becomes the dy
 * offsets along each axis, tile_kp the phases' columns, blocks count positions, not dx pixels.
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

#define CONVCAT_KERNEL_ABI 20

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
    float *workspace;        /* wgrad split-K partial sums, [splits][K][T*R*S][C] f32 (grouped: [c]); NULL if splits == 1 */
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
     * tile = tap); the epilogue stores only the c x c diagonal blocks, into dw as (K, T*R*S, c).
     * Grouped fprop (schedule grouped, space.groups_fprop): c, and k = K / groups filters per group in
     * group_filters; a tile column reads x's channels (n0 / k) * c on, and channels is c. */
    int32_t group_channels;
    int32_t group_filters;
    /* Cluster split-K (flag CLUSTER_SPLITS): 1 where the launch's clusters are the `splits` slices
     * of one tile each (cluster x = splits, a tile per CTA, slice = rank), which add their f32 sums
     * through distributed shared memory and finish them: no workspace, no KEY_reduce.  0 otherwise. */
    int32_t cluster_splits;
} cvc_params;

/* ---- the gather family (templates/gather_conv.cu.j2) ---------------------------------
 * Implicit GEMM per group g, the threads gathering both operands (any groups, any channel
 * counts).  Forward terms: fprop reads x (a) and w (b) and writes y; dgrad reads dy (a) and
 * w (b) and writes dx; wgrad reads dy (a) and x (b) and writes dw.  One stride phase of a
 * strided dgrad per launch (unit stride: one phase of every tap), or all of a patch
 * convolution's dgrad in one. */
typedef struct cvc_gather_params {
    const void *a;
    const void *b;
    void *y;
    const void *c;           /* beta * C, the output's layout; NULL when beta == 0 */
    const void *bias;        /* fprop: one per output channel, the output's type; NULL: none */
    float *workspace;        /* wgrad, splits > 1: [splits][K][T*R*S*c] f32 partial sums */
    int64_t ldy;             /* elements of one output row: fprop K, dgrad C, wgrad T*R*S*c */
    int64_t out_elems;       /* wgrad: K * T*R*S*c, the elements KEY_reduce adds */
    float alpha, beta;
    int32_t activation;
    int32_t groups, cg, kg;  /* groups; channels c and filters k per group */
    int32_t gemm_m, gemm_n, gemm_k;   /* one group's GEMM (dgrad: this phase's) */
    int32_t tiles_m, tiles_n;
    int32_t splits, split_k;          /* wgrad: K slices, GEMM K per slice */
    int32_t vec_a, vec_b;             /* elements per load of A and B: the widest the alignment allows */
    int32_t n;
    int32_t src_c;                    /* channels per pixel of the gathered activations (x: C, dy: K) */
    int32_t taps_total;               /* the filter's T*R*S */
    int32_t patch;                    /* dgrad of a patch convolution (stride = filter, no padding or
                                       * dilation): one GEMM over dy's pixels, N = T*R*S*c, column
                                       * (t, r, s, ch) written to dx pixel origin + (t, r, s) */
    /* The gathered activations (fprop and wgrad: x; dgrad: dy) and the pixel grid the GEMM's
     * rows (fprop, dgrad) or K (wgrad) walk; per axis D, H, W.  Grid pixel i's window starts
     * at i * stride - pad; tap index u adds u * dil. */
    int32_t src_ext[3];
    int32_t grid_ext[3];
    int32_t stride[3], pad[3], dil[3];
    int32_t taps[3];                  /* tap indices of the K loop (dgrad: the phase's taps) */
    int32_t tap0[3], tap_step[3];     /* dgrad: tap index u reads filter tap tap0 - u * tap_step */
    int32_t filt[3];                  /* the filter's T, R, S */
    int32_t ph[3], out_step[3], out_ext[3];   /* dgrad: grid pixel i is dx pixel ph + i * out_step */
    uint32_t div_chan[2];             /* dividers (cvc_divider): the K loop's channel run (c; dgrad k), */
    uint32_t div_taps[3][2];          /* its taps per axis, */
    uint32_t div_grid[3][2];          /* the grid's extents */
    /* Packed groups (dgrad kernels of flag PACKS_GROUPS): groups, cg and kg above are those of packs
     * of adjacent groups, one pack a CTA column, the GEMM's K and N running over the pack's filters
     * and channels; B is block diagonal (a filter meets the channels of its own group only). */
    int32_t packed;                   /* 1: packs of several groups; 0: one group (gk, gn span K's run and N) */
    int32_t wc;                       /* channels of one filter: the problem's C / groups */
    int32_t gk, gn;                   /* a group's width along K's channel run and along N: fprop c and k,
                                       * dgrad k and c (unpacked: the whole run and N, one group) */
    uint32_t div_gk[2], div_gn[2];    /* their dividers */
    /* Input-tile kernels (flag INPUT_TILE: fprop and wgrad, groups = 1, C <= tile_cp).  A block of
     * output pixels is rows x block_q columns of one image, blocks[0] x blocks[1] an image; its input
     * tile is tile_ext[0] rows x tile_ext[1] columns of tile_cp channels (zero past C and past the
     * image).  The (tap, channel) columns, tile_cp channels a tap, are padded to tile_kp.
     * fprop: tiles_m counts blocks (tile M = rows * block_q); tiles_n, blocks of tile-N filters; K,
     * (tap, channel), is padded to a multiple of tile K.  The grid is persistent: CTA b takes work
     * items b, b + grid, ..., item i block i / tiles_n of filter block i % tiles_n (the grid a multiple
     * of tiles_n, so that a CTA keeps its filters).
     * dgrad (tile_cp = C): along each axis dx coordinate x is position (x + pad) / stride, phase
     * (x + pad) % stride; tiles_m counts blocks of tile-M positions (rows x block_q columns; grid_ext:
     * dx; src_ext: dy, whose region a block reads is tile_ext[0] x tile_ext[1] pixels of K = kg
     * filters); gemm_k is K padded to 16; tile_kp, the phases' columns stride_h x stride_w x C padded
     * to 8 (at most tile N); tile_pass, the dy offsets along each axis, (R - 1) dil / stride + 1.  The
     * grid is persistent over the blocks.
     * wgrad (tile_cp = C): tiles_m counts blocks of tile-M filters, tiles_n blocks of tile-N columns
     * (tile_kp a multiple of 8); a block is CVC_TILE_WGRAD_BLOCK_PIXELS pixels, the GEMM's K.  CTA b
     * takes column block b % tiles_n of filter block (b / tiles_n) % tiles_m, and slice
     * b / (tiles_m * tiles_n): the split_k blocks from slice * split_k on, in order (splits slices,
     * none empty). */
    int32_t block_q;
    int32_t blocks[2];                /* blocks along P (rows) and Q (columns) */
    int32_t tile_ext[2];
    int32_t tile_cp, tile_kp;
    int32_t tile_pass[2];             /* input-tile dgrad: dy offsets along rows and columns */
} cvc_gather_params;

/* An input-tile kernel's shared memory, in this order: tile N filter rows of tile_kp elements of eb
 * bytes each, a row 16 bytes past a multiple of 32 (a warp's rows off each other's banks); the column
 * table, a 32-bit offset for each pair of K; then the input tile, tile_ext[0] x tile_ext[1] pixels of
 * tile_cp elements.  Macros, so that the runtime may pass doubles (no overflow while it checks). */
#define CVC_TILE_FILTER_ROW_BYTES(kp, eb) ((kp) * (eb) + 16)
#define CVC_TILE_TABLE_BYTES(kp) ((kp) / 2 * 4)

/* An input-tile wgrad kernel's shared memory: the block's dy rows, CVC_TILE_WGRAD_BLOCK_PIXELS rows of
 * the tile's tile-M filters, each row 16 bytes longer than its filters (ldmatrix's eight rows then fall
 * in distinct banks, at 32 and at 64 filters); then the input tile, tile_ext[0] x tile_ext[1] pixels of
 * tile_cp elements. */
#define CVC_TILE_DY_ROW_BYTES(bm, eb) ((bm) * (eb) + 16)

/* An input-tile dgrad kernel's shared memory: the filters as rows of (offset, column), tile_kp columns
 * an offset, and tile N - tile_kp rows of zeros after the last (a warp reads tile N columns at every
 * offset; those past tile_kp are discarded), K filters padded to 16 (gemm_k) each, a row 16 bytes past
 * a multiple of 32 (ldmatrix's eight rows in distinct banks); then the block's dy region, tile_ext[0] x
 * tile_ext[1] pixels, rows of the same length. */
#define CVC_TILE_DGRAD_ROW_BYTES(kp, eb) (((kp) + 8) * (eb))
#define CVC_TILE_DGRAD_FILTER_ROWS(offsets, kp, bn) ((offsets) * (kp) + (bn) - (kp))

/* ---- the direct family (templates/direct_conv.cu.j2) ----------------------------------
 * Depthwise convolution (c = 1 channel per group, `mult` = K / C filters per group) on CUDA
 * cores.  fprop and dgrad compute blocks of their output from a tile of their input in
 * shared memory; wgrad sums over blocks of dy, each CTA a slice of them, into f32 partial
 * sums that KEY_reduce adds in slice order. */
typedef struct cvc_direct_params {
    const void *in;          /* fprop, wgrad: x; dgrad: dy */
    const void *w;           /* fprop, dgrad: the filters (K, T, R, S); wgrad: dy */
    void *y;                 /* fprop y, dgrad dx, wgrad dw */
    const void *c;           /* beta * C; NULL when beta == 0 */
    const void *bias;        /* fprop: one per output channel; NULL: none */
    float *workspace;        /* wgrad: [slices][K][T*R*S] f32 */
    int64_t out_elems;       /* wgrad: K * T*R*S */
    float alpha, beta;
    int32_t activation;
    int32_t n, mult;         /* images; filters per group */
    int32_t in_c, out_c;     /* channels per pixel of `in` and of the blocks' tensor (fprop y, dgrad dx, wgrad dy) */
    int32_t in_ext[3];       /* D, H, W of `in` */
    int32_t out_ext[3];      /* of the blocks' tensor */
    int32_t filt[3];
    int32_t stride[3], pad[3], dil[3];   /* fprop, wgrad: the problem's; dgrad: see mode */
    int32_t mode;            /* 0: correlation, in[o * stride - pad + tap * dil] (fprop, wgrad, and unit-stride
                                dgrad with the filter turned around: flip 1, pad = reach - pad_lo);
                                1: dgrad at stride > 1, dx[h] = sum of dy[(h + pad - tap * dil) / stride] */
    int32_t flip;
    int32_t tile_ext[3];     /* staged kernels: fprop/dgrad [1], [2] the input tile's rows and columns; wgrad [0] a
                                block's dy rows, [1] the x tile's rows, [2] its pixels a row (copied and pitch) */
    int32_t blocks[3];       /* blocks per axis (depth: one output slice each) */
    int32_t chan_blocks;     /* blocks of tile-K channels of the output (wgrad: of K) */
    int32_t slices, blocks_per_slice;   /* CTAs per channel block, blocks each (wgrad: dy rows each) */
    int32_t units, unit_groups, pixel_groups;   /* wgrad: units of taps (a filter row, UNIT_TAPS at most),
                                threads per channel vector (unit_groups x pixel_groups); staged wgrad: units
                                the segments of a block row, pixel_groups the threads of a lane and filter row */
    int32_t vec;             /* elements per load of `in` (and wgrad's dy) */
    int32_t cg;              /* fprop, dgrad: channels per group (c = k; 1: depthwise, mult filters a group) */
} cvc_direct_params;

#endif
