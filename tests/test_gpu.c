/* test_gpu.c: every kernel of a catalog (fprop, dgrad, wgrad) against the GPU reference.
 *
 *   test_gpu [CATALOG] [--match TEXT[,TEXT...]] [--seed N]
 *
 * CATALOG defaults to $CONVCAT_TEST_CATALOG; --match keeps the kernels whose key contains one of
 * the texts; --seed sets the base seed of the random data (default: the time; printed first,
 * and every failure prints its problem's seed, so a failure can be run again).
 *
 * One CUnit test per kernel of the device's arch, named by its key.  Each
 * runs the kernel on ~20 problems of its op and dimensionality on fresh
 * random data with the output poisoned with NaN (cvc_verify_run: the op's
 * two inputs random, its output checked, the plan's workspace allocated),
 * and checks ||out - ref|| against the norm bound, every element against its
 * own (reference.h: the terms' magnitudes and the types' rounding) and that
 * none was left unwritten.  A kernel must
 * run at least MIN_RUNS problems (no vacuous pass), then its list again with
 * the tiles walked in raster bands of 3 rows (CONVCAT_RASTER_BAND=3).  An
 * fprop kernel of a_type == out_type also runs a chained pair: y1 = conv(x),
 * y2 = conv(y1) back to back on one stream, both checked (the second must
 * wait for the first; sm90a kernels launch with programmatic dependent launch).
 *
 *  - fprop: 1D/2D/3D; padding, asymmetric padding, stride 2..8, dilation
 *    2..3, M and N not multiples of the tile, C not a multiple of the K tile,
 *    tiny and large, a residual with alpha/beta, fused bias and ReLU/GELU/SiLU.
 *    Halo kernels run the unit-stride problems whose filters reach at most 2
 *    pixels past an output block; the others they must refuse with the
 *    rule's reason (counted, by design).
 *  - dgrad (dx from dy and w): unit stride and strides 2, 3, 8 (per stride
 *    phase, including phases no filter tap reaches and W < stride), odd sizes, M = N*D*H*W and N = C tails, C and K multiples of 8 but not
 *    of 64, asymmetric padding, dilation 1..3, 1..7 taps, even taps, large
 *    problems, alpha/beta (beta != 0: gradient accumulation).
 *  - wgrad (dw from dy and x): the same variety plus stride 2, 3 and 8 and
 *    large N*Z*P*Q (the GEMM K: split-K), beta with split-K; tf32 kernels
 *    also C in 4s (not 8s) and C = 96 (flat over taps in 32-channel boxes).
 *  - grouped wgrad (groups > 1, K == C, c = 4 (sm90a), 8, 16, 32, 64 channels per group):
 *    1D/2D/3D, odd sizes, C not a multiple of the tile, padding, stride 2,
 *    dilation 2, beta != 0, long pixel reductions (split-K on sm90a).  Kernels of
 *    tile M == tile N and cluster M 1 run them; the other wgrad kernels must
 *    refuse them with the rule's reason (counted, by design).
 * dgrad and wgrad run without bias and activation (fprop-only features).
 *
 * Then per op present: the check can fail (one damaged output element is
 * caught), and convcat_autotune picks a kernel that passes and a cache
 * remembers it.  Without a GPU it exits 77 (skip) and says why.
 */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"   /* the index flags (CLUSTER_SPLITS) */
#include "convcat.h"
#include "verify.h"

typedef struct shape {
    int n, d, h, w, c, k, t, r, s;
    int lo[3], hi[3], stride[3], dil[3];   /* D, H, W */
    float alpha, beta;
    int bias;                              /* a random per-channel bias */
    convcat_activation act;
} shape;

#define MIN_RUNS 10   /* problems each kernel must run (not refused, no error) */

#define P2(n, h, w, c, k, r, s, lh, lw, hh, hw, sh, sw, dh, dw) \
    {n, 1, h, w, c, k, 1, r, s, {0, lh, lw}, {0, hh, hw}, {1, sh, sw}, {1, dh, dw}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE}
#define P1(n, w, c, k, s, l, h, st, dl) \
    {n, 1, 1, w, c, k, 1, 1, s, {0, 0, l}, {0, 0, h}, {1, 1, st}, {1, 1, dl}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE}
#define P3(n, d, h, w, c, k, t, r, s, pad, st, dl) \
    {n, d, h, w, c, k, t, r, s, {pad, pad, pad}, {pad, pad, pad}, {st, st, st}, {dl, dl, dl}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE}

/* Epilogue variants of one shape: alpha and beta (no bias, no activation). */
#define AB(n, d, h, w, c, k, t, r, s, lo, hi, st, dl, alpha, beta) \
    {n, d, h, w, c, k, t, r, s, lo, hi, st, dl, alpha, beta, 0, CONVCAT_ACT_NONE}
#define V3(a, b, c) {a, b, c}

/* ---- fprop --------------------------------------------------------------- */

static const shape shapes_2d[] = {
    P2(1, 3, 3, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),          /* tiny */
    P2(2, 7, 9, 16, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),
    P2(2, 15, 17, 32, 40, 3, 3, 1, 1, 1, 1, 2, 2, 1, 1),      /* stride 2 */
    P2(1, 16, 16, 64, 64, 3, 3, 2, 2, 2, 2, 1, 1, 2, 2),      /* dilation 2 */
    P2(2, 10, 12, 24, 32, 3, 3, 0, 2, 2, 0, 1, 1, 1, 1),      /* asymmetric padding */
    P2(4, 14, 14, 256, 128, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),    /* 1x1 */
    P2(3, 11, 13, 72, 136, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),     /* M, N tails */
    P2(2, 9, 9, 200, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),       /* C not a multiple of 64 */
    P2(8, 56, 56, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),      /* large M */
    P2(2, 14, 14, 512, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),    /* large K */
    P2(2, 23, 23, 8, 64, 7, 7, 3, 3, 3, 3, 2, 2, 1, 1),       /* 7x7 stride 2, C = 8 */
    P2(1, 20, 20, 40, 56, 5, 5, 2, 2, 2, 2, 1, 1, 1, 1),      /* 5x5 */
    P2(3, 6, 6, 16, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),         /* K = 8 */
    P2(64, 7, 7, 128, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),     /* many small images */
    P2(2, 28, 28, 64, 128, 1, 1, 0, 0, 0, 0, 2, 2, 1, 1),     /* 1x1 stride 2 */
    P2(2, 12, 17, 32, 32, 3, 5, 1, 2, 1, 2, 1, 2, 2, 1),      /* mixed strides and dilations */
    /* 1x1 of few channels, more tiles a CTA than ring slots: B loaded once a slot (REUSES_B), one
     * K stage a tile, and two with bias, ReLU and a residual */
    P2(16, 112, 112, 24, 40, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),
    {16, 1, 96, 96, 128, 56, 1, 1, 1, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 1, CONVCAT_ACT_RELU},
    P2(1, 1, 300, 16, 32, 1, 3, 0, 1, 0, 1, 1, 1, 1, 1),      /* one row */
    P2(1, 2, 2, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),        /* filter larger than the image */
    P2(2, 9, 9, 48, 48, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1),        /* no padding */
    P2(1, 33, 33, 64, 192, 3, 3, 1, 1, 1, 1, 3, 3, 1, 1),     /* stride 3 */
    P2(2, 31, 31, 32, 64, 3, 3, 1, 1, 1, 1, 8, 8, 1, 1),      /* stride 8 */
    P2(1, 1, 1, 8, 8, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),          /* M = 1 */
    {2, 1, 16, 16, 64, 64, 1, 3, 3, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 0, CONVCAT_ACT_NONE}, /* residual */
    AB(3, 1, 11, 13, 72, 136, 1, 3, 3, V3(0, 1, 1), V3(0, 1, 1), V3(1, 1, 1), V3(1, 1, 1), 0.5f, 0.0f), /* alpha alone, tails */
    /* fused epilogues: bias, activations, with and without a residual; N and M tails */
    {2, 1, 9, 11, 64, 72, 1, 3, 3, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1.0f, 0.0f, 1, CONVCAT_ACT_RELU},
    {2, 1, 9, 11, 64, 136, 1, 3, 3, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 1.0f, 1, CONVCAT_ACT_GELU},
    {1, 1, 13, 7, 32, 200, 1, 1, 1, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 1.0f, 0.0f, 0, CONVCAT_ACT_SILU},
    /* few tiles, long K: split-K (f32 slices, KEY_reduce with bias, residual and GELU) */
    P2(2, 8, 8, 2560, 1280, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),
    /* halo kernels: a 2x2 filter at dilation 2 (their largest reach), part-blocks of rows and columns
     * with bias, SiLU and a residual */
    P2(2, 13, 12, 32, 64, 2, 2, 1, 1, 1, 1, 1, 1, 2, 2),
    {3, 1, 45, 37, 64, 64, 1, 3, 3, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.5f, 1, CONVCAT_ACT_SILU},
    {2, 1, 8, 8, 1024, 640, 1, 3, 3, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 1, CONVCAT_ACT_GELU},
};

static const shape shapes_1d[] = {
    P1(1, 5, 8, 8, 3, 1, 1, 1, 1),
    P1(2, 37, 16, 24, 3, 1, 1, 1, 1),
    P1(2, 101, 32, 40, 3, 1, 1, 2, 1),       /* stride 2 */
    P1(1, 64, 64, 64, 3, 2, 2, 1, 2),        /* dilation 2 */
    P1(2, 50, 24, 32, 3, 0, 2, 1, 1),        /* asymmetric padding */
    P1(4, 196, 256, 128, 1, 0, 0, 1, 1),     /* 1x1 */
    P1(3, 143, 72, 136, 3, 1, 1, 1, 1),      /* M, N tails */
    P1(2, 81, 200, 48, 3, 1, 1, 1, 1),       /* C = 200 */
    P1(16, 4096, 64, 64, 3, 1, 1, 1, 1),     /* large M */
    P1(2, 196, 512, 512, 3, 1, 1, 1, 1),     /* large K */
    P1(2, 529, 8, 64, 7, 3, 3, 2, 1),        /* 7 taps, stride 2 */
    P1(1, 400, 40, 56, 5, 2, 2, 1, 1),
    P1(3, 36, 16, 8, 3, 1, 1, 1, 1),         /* K = 8 */
    P1(64, 49, 128, 256, 3, 1, 1, 1, 1),
    P1(2, 784, 64, 128, 1, 0, 0, 2, 1),      /* 1x1 stride 2 */
    P1(64, 4096, 16, 48, 1, 0, 0, 1, 1),     /* 1x1 of few channels: B once a ring slot */
    P1(1, 300, 16, 32, 9, 4, 4, 1, 3),       /* dilation 3 */
    P1(1, 2, 16, 16, 3, 1, 1, 1, 1),         /* filter wider than the signal */
    P1(2, 81, 48, 48, 3, 0, 0, 1, 1),        /* no padding */
    P1(1, 1089, 64, 192, 3, 1, 1, 3, 1),     /* stride 3 */
    P1(2, 961, 32, 64, 3, 1, 1, 8, 1),       /* stride 8 */
    P1(1, 1, 8, 8, 1, 0, 0, 1, 1),           /* M = 1 */
    {2, 1, 1, 256, 64, 64, 1, 1, 3, {0, 0, 1}, {0, 0, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 0, CONVCAT_ACT_NONE}, /* residual */
    {2, 1, 1, 99, 64, 72, 1, 1, 3, {0, 0, 1}, {0, 0, 1}, {1, 1, 1}, {1, 1, 1}, 1.0f, 0.0f, 1, CONVCAT_ACT_RELU},
    {2, 1, 1, 99, 64, 136, 1, 1, 3, {0, 0, 1}, {0, 0, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 1.0f, 1, CONVCAT_ACT_GELU},
    {1, 1, 1, 91, 32, 200, 1, 1, 1, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 1.0f, 0.0f, 0, CONVCAT_ACT_SILU},
};

static const shape shapes_3d[] = {
    P3(1, 3, 3, 3, 8, 8, 3, 3, 3, 1, 1, 1),
    P3(2, 5, 7, 9, 16, 24, 3, 3, 3, 1, 1, 1),
    P3(2, 9, 11, 13, 32, 40, 3, 3, 3, 1, 2, 1),      /* stride 2 */
    P3(1, 8, 10, 10, 64, 64, 3, 3, 3, 2, 1, 2),      /* dilation 2 */
    P3(2, 6, 14, 14, 256, 128, 1, 1, 1, 0, 1, 1),    /* 1x1x1 */
    P3(3, 5, 11, 13, 72, 136, 3, 3, 3, 1, 1, 1),     /* M, N tails */
    P3(2, 4, 9, 9, 200, 48, 3, 3, 3, 1, 1, 1),       /* C = 200 */
    P3(4, 16, 28, 28, 64, 64, 3, 3, 3, 1, 1, 1),     /* large M */
    P3(1, 4, 7, 7, 512, 256, 3, 3, 3, 1, 1, 1),      /* large K */
    P3(2, 9, 15, 15, 8, 64, 5, 5, 5, 2, 2, 1),       /* 5x5x5 stride 2, C = 8 */
    P3(3, 4, 6, 6, 16, 8, 3, 3, 3, 1, 1, 1),         /* K = 8 */
    P3(2, 8, 16, 16, 64, 128, 1, 1, 1, 0, 2, 1),     /* 1x1x1 stride 2 */
    P3(4, 16, 56, 56, 32, 48, 1, 1, 1, 0, 1, 1),     /* 1x1x1 of few channels: B once a ring slot */
    P3(1, 2, 2, 2, 16, 16, 3, 3, 3, 1, 1, 1),        /* filter larger than the volume */
    P3(2, 5, 9, 9, 48, 48, 3, 3, 3, 0, 1, 1),        /* no padding */
    P3(1, 10, 17, 17, 64, 192, 3, 3, 3, 1, 3, 1),    /* stride 3 */
    P3(1, 1, 1, 1, 8, 8, 1, 1, 1, 0, 1, 1),          /* M = 1 */
    P3(1, 12, 12, 12, 32, 32, 3, 3, 3, 3, 1, 3),     /* dilation 3 */
    {2, 4, 9, 11, 24, 32, 3, 3, 3, {0, 1, 2}, {2, 1, 0}, {1, 2, 1}, {2, 1, 1}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE}, /* mixed */
    {1, 6, 10, 10, 32, 48, 2, 3, 4, {1, 1, 2}, {0, 1, 1}, {2, 1, 3}, {1, 2, 1}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE}, /* even taps */
    {2, 4, 8, 8, 64, 64, 3, 3, 3, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 0, CONVCAT_ACT_NONE}, /* residual */
    {1, 3, 5, 7, 64, 72, 3, 3, 3, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1.0f, 0.0f, 1, CONVCAT_ACT_RELU},
    {1, 3, 5, 7, 64, 136, 3, 3, 3, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 1.0f, 1, CONVCAT_ACT_GELU},
    {1, 2, 6, 7, 32, 200, 1, 1, 1, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 1.0f, 0.0f, 0, CONVCAT_ACT_SILU},
};

/* ---- dgrad: dx = conv^T(dy, w) ---------------------------------------------- */
/* GEMM M = N*D*H*W, N = C, K = K*T*R*S.  C and K are multiples of 8 (16-byte rows). */

static const shape dgrad_2d[] = {
    P2(1, 3, 3, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),          /* tiny */
    P2(2, 7, 9, 16, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),        /* odd sizes */
    P2(3, 11, 13, 136, 72, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),     /* M and N (= C = 136) tails, K = 72 */
    P2(2, 9, 9, 48, 200, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),       /* K = 200: the GEMM K tail */
    P2(1, 16, 16, 64, 64, 3, 3, 2, 2, 2, 2, 1, 1, 2, 2),      /* dilation 2 */
    P2(1, 20, 20, 32, 40, 3, 3, 3, 3, 3, 3, 1, 1, 3, 3),      /* dilation 3 */
    P2(2, 10, 12, 24, 32, 3, 3, 0, 2, 2, 0, 1, 1, 1, 1),      /* asymmetric padding */
    P2(1, 15, 15, 24, 40, 3, 3, 2, 0, 0, 2, 1, 1, 1, 1),      /* asymmetric the other way */
    P2(4, 14, 14, 128, 256, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),    /* 1x1 */
    P2(2, 7, 7, 32, 32, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1),        /* 1x1 padded: dy wider than dx */
    P2(1, 20, 20, 40, 56, 5, 5, 2, 2, 2, 2, 1, 1, 1, 1),      /* 5x5 */
    P2(2, 23, 23, 8, 64, 7, 7, 3, 3, 3, 3, 1, 1, 1, 1),       /* 7x7, C = 8 */
    P2(2, 23, 23, 64, 8, 7, 7, 3, 3, 3, 3, 1, 1, 1, 1),       /* 7x7, K = 8 */
    P2(2, 12, 17, 32, 32, 2, 4, 0, 1, 1, 2, 1, 1, 1, 1),      /* even taps */
    P2(2, 12, 17, 32, 32, 3, 5, 1, 2, 1, 2, 1, 1, 2, 1),      /* mixed dilations */
    P2(8, 56, 56, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),      /* large M */
    P2(2, 14, 14, 512, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),    /* large N and K */
    P2(64, 7, 7, 256, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),     /* many small images */
    P2(1, 1, 300, 16, 32, 1, 3, 0, 1, 0, 1, 1, 1, 1, 1),      /* one row */
    P2(1, 2, 2, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),        /* filter larger than the image */
    P2(2, 9, 9, 48, 48, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1),        /* no padding: border dx see fewer taps */
    P2(1, 1, 1, 8, 8, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),          /* M = 1 */
    AB(2, 1, 16, 16, 64, 64, 1, 3, 3, V3(0, 1, 1), V3(0, 1, 1), V3(1, 1, 1), V3(1, 1, 1), 0.5f, 0.75f),  /* residual */
    AB(2, 1, 9, 11, 72, 136, 1, 3, 3, V3(0, 1, 1), V3(0, 1, 1), V3(1, 1, 1), V3(1, 1, 1), 1.0f, 1.0f),   /* accumulate, tails */
    AB(3, 1, 11, 13, 72, 136, 1, 3, 3, V3(0, 1, 1), V3(0, 1, 1), V3(1, 1, 1), V3(1, 1, 1), 2.0f, 0.0f),  /* alpha alone, tails */
    /* strided: one launch per stride phase, rows scattered into dx */
    P2(2, 15, 17, 32, 40, 3, 3, 1, 1, 1, 1, 2, 2, 1, 1),      /* stride 2 */
    AB(2, 1, 15, 17, 32, 40, 1, 3, 3, V3(0, 1, 1), V3(0, 1, 1), V3(1, 2, 2), V3(1, 1, 1), 0.5f, 0.0f),  /* stride 2, alpha alone */
    P2(4, 56, 56, 64, 128, 3, 3, 1, 1, 1, 1, 2, 2, 1, 1),     /* ResNet 3x3 stride 2 */
    P2(2, 28, 28, 64, 128, 1, 1, 0, 0, 0, 0, 2, 2, 1, 1),     /* 1x1 stride 2: odd dx rows get no tap */
    /* 1x1 of few channels, more tiles a CTA than ring slots: B loaded once a slot (REUSES_B), one
     * and two K stages a tile, unit stride and a stride phase's launch */
    P2(16, 112, 112, 40, 24, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),
    AB(16, 1, 96, 96, 56, 128, 1, 1, 1, V3(0, 0, 0), V3(0, 0, 0), V3(1, 1, 1), V3(1, 1, 1), 0.5f, 0.75f),
    P2(64, 112, 112, 32, 64, 1, 1, 0, 0, 0, 0, 2, 2, 1, 1),
    P2(1, 33, 33, 64, 192, 3, 3, 1, 1, 1, 1, 3, 3, 1, 1),     /* stride 3 */
    P2(2, 31, 31, 32, 64, 3, 3, 1, 1, 1, 1, 8, 8, 1, 1),      /* stride 8 > taps */
    P2(2, 23, 23, 8, 64, 7, 7, 3, 3, 3, 3, 2, 2, 1, 1),       /* 7x7 stride 2, C = 8 */
    P2(2, 12, 17, 32, 32, 3, 5, 1, 2, 1, 2, 1, 2, 2, 1),      /* stride 1 x 2, dilation 2 x 1 */
    P2(1, 17, 19, 24, 40, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2),      /* stride 2, dilation 2: half the phases get no tap */
    P2(2, 12, 17, 32, 32, 2, 4, 0, 1, 1, 2, 2, 3, 1, 1),      /* even taps, strides 2 x 3 */
    AB(2, 1, 15, 13, 72, 136, 1, 3, 3, V3(0, 1, 0), V3(0, 0, 1), V3(1, 2, 2), V3(1, 1, 1), 0.5f, 0.75f),  /* residual, asymmetric */
    /* dx no wider than the stride: one stride phase, reached by a tap or by none (then dx = beta * C) */
    P2(2, 9, 1, 32, 40, 3, 3, 1, 1, 1, 1, 1, 2, 1, 1),        /* W = 1, stride 2: tap 1 reaches it */
    AB(3, 1, 20, 1, 32, 120, 1, 4, 3, V3(0, 0, 4), V3(0, 0, 4), V3(1, 1, 3), V3(1, 1, 3), 1.875f, 0.125f),
    /* ^ W = 1, stride 3, dilation 3: no tap reaches it */
};

static const shape dgrad_1d[] = {
    P1(1, 5, 8, 8, 3, 1, 1, 1, 1),
    P1(2, 37, 16, 24, 3, 1, 1, 1, 1),
    P1(3, 143, 136, 72, 3, 1, 1, 1, 1),      /* M, N tails */
    P1(2, 81, 48, 200, 3, 1, 1, 1, 1),       /* K = 200 */
    P1(1, 64, 64, 64, 3, 2, 2, 1, 2),        /* dilation 2 */
    P1(1, 100, 32, 40, 3, 3, 3, 1, 3),       /* dilation 3 */
    P1(1, 300, 16, 32, 9, 4, 4, 1, 3),       /* 9 taps, dilation 3 */
    P1(2, 50, 24, 32, 3, 0, 2, 1, 1),        /* asymmetric padding */
    P1(4, 196, 128, 256, 1, 0, 0, 1, 1),     /* 1 tap */
    P1(64, 4096, 48, 16, 1, 0, 0, 1, 1),     /* 1 tap, few channels: B once a ring slot */
    P1(1, 400, 40, 56, 5, 2, 2, 1, 1),       /* 5 taps */
    P1(2, 529, 8, 64, 7, 3, 3, 1, 1),        /* 7 taps, C = 8 */
    P1(2, 99, 32, 32, 4, 1, 2, 1, 1),        /* even taps */
    P1(2, 100, 24, 40, 2, 0, 1, 1, 2),       /* even taps, dilation 2 */
    P1(16, 4096, 64, 64, 3, 1, 1, 1, 1),     /* large M */
    P1(2, 196, 512, 512, 3, 1, 1, 1, 1),     /* large N and K */
    P1(64, 49, 256, 128, 3, 1, 1, 1, 1),
    P1(1, 2, 16, 16, 3, 1, 1, 1, 1),         /* filter wider than the signal */
    P1(2, 81, 48, 48, 3, 0, 0, 1, 1),        /* no padding */
    P1(1, 1, 8, 8, 1, 0, 0, 1, 1),           /* M = 1 */
    P1(3, 36, 16, 8, 3, 1, 1, 1, 1),         /* K = 8 */
    AB(2, 1, 1, 256, 64, 64, 1, 1, 3, V3(0, 0, 1), V3(0, 0, 1), V3(1, 1, 1), V3(1, 1, 1), 0.5f, 0.75f),  /* residual */
    AB(2, 1, 1, 99, 72, 136, 1, 1, 3, V3(0, 0, 1), V3(0, 0, 1), V3(1, 1, 1), V3(1, 1, 1), 1.0f, 1.0f),   /* accumulate */
    /* strided */
    P1(2, 101, 32, 40, 3, 1, 1, 2, 1),       /* stride 2 */
    P1(1, 64, 16, 16, 1, 0, 0, 2, 1),        /* 1 tap, stride 2 */
    P1(1, 1089, 64, 192, 3, 1, 1, 3, 1),     /* stride 3 */
    P1(2, 961, 32, 64, 3, 1, 1, 8, 1),       /* stride 8 */
    P1(2, 529, 8, 64, 7, 3, 3, 2, 1),        /* 7 taps, stride 2, C = 8 */
    P1(1, 300, 16, 32, 9, 4, 4, 3, 3),       /* 9 taps, stride 3, dilation 3 */
    AB(2, 1, 1, 99, 72, 136, 1, 1, 4, V3(0, 0, 1), V3(0, 0, 2), V3(1, 1, 2), V3(1, 1, 1), 0.5f, 0.75f),  /* residual */
};

static const shape dgrad_3d[] = {
    P3(1, 3, 3, 3, 8, 8, 3, 3, 3, 1, 1, 1),
    {1, 7, 1, 2, 72, 104, 4, 2, 3, {3, 1, 1}, {3, 1, 1}, {1, 3, 1}, {1, 2, 1}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE},
    /* ^ H = 1, stride 3, dilation 2: the one phase no tap reaches */
    P3(2, 5, 7, 9, 16, 24, 3, 3, 3, 1, 1, 1),
    P3(3, 5, 11, 13, 136, 72, 3, 3, 3, 1, 1, 1),     /* M, N tails */
    P3(2, 4, 9, 9, 48, 200, 3, 3, 3, 1, 1, 1),       /* K = 200 */
    P3(1, 8, 10, 10, 64, 64, 3, 3, 3, 2, 1, 2),      /* dilation 2 */
    P3(1, 12, 12, 12, 32, 32, 3, 3, 3, 3, 1, 3),     /* dilation 3 */
    P3(2, 6, 14, 14, 128, 256, 1, 1, 1, 0, 1, 1),    /* 1x1x1 */
    P3(2, 8, 16, 16, 64, 128, 1, 1, 1, 0, 1, 1),
    P3(2, 9, 15, 15, 8, 64, 5, 5, 5, 2, 1, 1),       /* 5x5x5, C = 8 */
    P3(3, 4, 6, 6, 16, 8, 3, 3, 3, 1, 1, 1),         /* K = 8 */
    P3(2, 16, 28, 28, 64, 64, 3, 3, 3, 1, 1, 1),     /* large M */
    P3(1, 4, 7, 7, 512, 256, 3, 3, 3, 1, 1, 1),      /* large N and K */
    P3(1, 2, 2, 2, 16, 16, 3, 3, 3, 1, 1, 1),        /* filter larger than the volume */
    P3(2, 5, 9, 9, 48, 48, 3, 3, 3, 0, 1, 1),        /* no padding */
    P3(1, 1, 1, 1, 8, 8, 1, 1, 1, 0, 1, 1),          /* M = 1 */
    AB(2, 4, 9, 11, 24, 32, 3, 3, 3, V3(0, 1, 2), V3(2, 1, 0), V3(1, 1, 1), V3(2, 1, 1), 1.0f, 0.0f), /* asymmetric, mixed dilation */
    AB(1, 6, 10, 10, 32, 48, 2, 3, 4, V3(1, 1, 2), V3(0, 1, 1), V3(1, 1, 1), V3(1, 2, 1), 1.0f, 0.0f), /* even taps */
    AB(1, 4, 12, 12, 16, 32, 3, 7, 7, V3(1, 3, 3), V3(1, 3, 3), V3(1, 1, 1), V3(1, 1, 1), 1.0f, 0.0f), /* 3x7x7 */
    AB(2, 4, 8, 8, 64, 64, 3, 3, 3, V3(1, 1, 1), V3(1, 1, 1), V3(1, 1, 1), V3(1, 1, 1), 0.5f, 0.75f), /* residual */
    AB(1, 3, 5, 7, 72, 136, 3, 3, 3, V3(1, 1, 1), V3(1, 1, 1), V3(1, 1, 1), V3(1, 1, 1), 1.0f, 1.0f),  /* accumulate */
    /* strided */
    P3(2, 9, 11, 13, 32, 40, 3, 3, 3, 1, 2, 1),      /* stride 2 */
    P3(2, 8, 16, 16, 64, 128, 1, 1, 1, 0, 2, 1),     /* 1x1x1 stride 2 */
    P3(4, 16, 56, 56, 32, 48, 1, 1, 1, 0, 1, 1),     /* 1x1x1 of few channels: B once a ring slot */
    P3(1, 10, 17, 17, 64, 192, 3, 3, 3, 1, 3, 1),    /* stride 3 */
    P3(2, 9, 15, 15, 8, 64, 5, 5, 5, 2, 2, 1),       /* 5x5x5 stride 2, C = 8 */
    AB(2, 9, 11, 13, 32, 40, 3, 3, 3, V3(1, 1, 1), V3(1, 1, 1), V3(2, 1, 1), V3(1, 1, 1), 0.5f, 0.75f), /* stride along D only */
};

/* ---- wgrad: dw = conv^T(dy, x) --------------------------------------------- */
/* GEMM M = K, N = T*R*S*C, K = N*Z*P*Q (large: split-K). */

static const shape wgrad_2d[] = {
    P2(1, 3, 3, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),          /* tiny */
    P2(2, 7, 9, 16, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),        /* odd sizes */
    P2(2, 15, 17, 32, 40, 3, 3, 1, 1, 1, 1, 2, 2, 1, 1),      /* stride 2 */
    P2(1, 33, 33, 64, 192, 3, 3, 1, 1, 1, 1, 3, 3, 1, 1),     /* stride 3 */
    P2(2, 31, 31, 32, 64, 3, 3, 1, 1, 1, 1, 8, 8, 1, 1),      /* stride 8 */
    P2(1, 16, 16, 64, 64, 3, 3, 2, 2, 2, 2, 1, 1, 2, 2),      /* dilation 2 */
    P2(1, 20, 20, 32, 40, 3, 3, 3, 3, 3, 3, 1, 1, 3, 3),      /* dilation 3 */
    P2(2, 10, 12, 24, 32, 3, 3, 0, 2, 2, 0, 1, 1, 1, 1),      /* asymmetric padding */
    P2(4, 14, 14, 256, 128, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),    /* 1x1 */
    P2(3, 11, 13, 72, 136, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),     /* M (= K = 136) and N tails, C = 72 */
    P2(2, 9, 9, 200, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),       /* C = 200 */
    P2(2, 23, 23, 8, 64, 7, 7, 3, 3, 3, 3, 2, 2, 1, 1),       /* 7x7 stride 2, C = 8 */
    P2(2, 23, 23, 64, 8, 7, 7, 3, 3, 3, 3, 1, 1, 1, 1),       /* 7x7, K = 8 */
    P2(1, 20, 20, 40, 56, 5, 5, 2, 2, 2, 2, 1, 1, 1, 1),      /* 5x5 */
    P2(32, 28, 28, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),     /* N*P*Q = 25088: split-K */
    P2(8, 56, 56, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),      /* N*P*Q = 25088 */
    P2(32, 28, 28, 256, 128, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),   /* 1x1, large GEMM K */
    P2(8, 56, 56, 64, 128, 1, 1, 0, 0, 0, 0, 2, 2, 1, 1),     /* 1x1 stride 2 */
    P2(2, 12, 17, 32, 32, 2, 4, 0, 1, 1, 2, 1, 2, 1, 1),      /* even taps, mixed strides */
    P2(2, 12, 17, 32, 32, 3, 5, 1, 2, 1, 2, 1, 2, 2, 1),      /* mixed strides and dilations */
    P2(1, 2, 2, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),        /* filter larger than the image */
    P2(2, 9, 9, 48, 48, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1),        /* no padding */
    P2(1, 1, 1, 8, 8, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),          /* GEMM K = 1 */
    P2(2, 14, 14, 512, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),    /* large M and N */
    AB(2, 1, 16, 16, 64, 64, 1, 3, 3, V3(0, 1, 1), V3(0, 1, 1), V3(1, 1, 1), V3(1, 1, 1), 0.5f, 0.75f),  /* residual */
    AB(16, 1, 28, 28, 72, 136, 1, 3, 3, V3(0, 1, 1), V3(0, 1, 1), V3(1, 1, 1), V3(1, 1, 1), 1.0f, 1.0f), /* accumulate, split-K */
    AB(2, 1, 11, 13, 72, 136, 1, 3, 3, V3(0, 1, 1), V3(0, 1, 1), V3(1, 1, 1), V3(1, 1, 1), 0.5f, 0.0f),  /* alpha alone */
};

static const shape wgrad_1d[] = {
    P1(1, 5, 8, 8, 3, 1, 1, 1, 1),
    P1(2, 37, 16, 24, 3, 1, 1, 1, 1),
    P1(2, 101, 32, 40, 3, 1, 1, 2, 1),       /* stride 2 */
    P1(1, 1089, 64, 192, 3, 1, 1, 3, 1),     /* stride 3 */
    P1(2, 961, 32, 64, 3, 1, 1, 8, 1),       /* stride 8 */
    P1(1, 64, 64, 64, 3, 2, 2, 1, 2),        /* dilation 2 */
    P1(1, 300, 16, 32, 9, 4, 4, 1, 3),       /* 9 taps, dilation 3 */
    P1(2, 50, 24, 32, 3, 0, 2, 1, 1),        /* asymmetric padding */
    P1(4, 196, 256, 128, 1, 0, 0, 1, 1),     /* 1 tap */
    P1(3, 143, 72, 136, 3, 1, 1, 1, 1),      /* M, N tails */
    P1(2, 81, 200, 48, 3, 1, 1, 1, 1),       /* C = 200 */
    P1(2, 529, 8, 64, 7, 3, 3, 2, 1),        /* 7 taps, stride 2, C = 8 */
    P1(2, 529, 64, 8, 7, 3, 3, 1, 1),        /* 7 taps, K = 8 */
    P1(1, 400, 40, 56, 5, 2, 2, 1, 1),
    P1(32, 784, 64, 64, 3, 1, 1, 1, 1),      /* N*Q = 25088: split-K */
    P1(8, 3136, 64, 64, 3, 1, 1, 1, 1),
    P1(2, 784, 64, 128, 1, 0, 0, 2, 1),      /* 1 tap, stride 2 */
    P1(2, 99, 32, 32, 4, 1, 2, 1, 1),        /* even taps */
    P1(1, 2, 16, 16, 3, 1, 1, 1, 1),         /* filter wider than the signal */
    P1(2, 81, 48, 48, 3, 0, 0, 1, 1),        /* no padding */
    P1(1, 1, 8, 8, 1, 0, 0, 1, 1),           /* GEMM K = 1 */
    P1(2, 196, 512, 512, 3, 1, 1, 1, 1),     /* large M and N */
    AB(2, 1, 1, 256, 64, 64, 1, 1, 3, V3(0, 0, 1), V3(0, 0, 1), V3(1, 1, 1), V3(1, 1, 1), 0.5f, 0.75f),  /* residual */
    AB(16, 1, 1, 784, 72, 136, 1, 1, 3, V3(0, 0, 1), V3(0, 0, 1), V3(1, 1, 1), V3(1, 1, 1), 1.0f, 1.0f), /* accumulate, split-K */
};

static const shape wgrad_3d[] = {
    P3(1, 3, 3, 3, 8, 8, 3, 3, 3, 1, 1, 1),
    P3(2, 5, 7, 9, 16, 24, 3, 3, 3, 1, 1, 1),
    P3(2, 9, 11, 13, 32, 40, 3, 3, 3, 1, 2, 1),      /* stride 2 */
    P3(1, 10, 17, 17, 64, 192, 3, 3, 3, 1, 3, 1),    /* stride 3 */
    P3(1, 8, 10, 10, 64, 64, 3, 3, 3, 2, 1, 2),      /* dilation 2 */
    P3(1, 12, 12, 12, 32, 32, 3, 3, 3, 3, 1, 3),     /* dilation 3 */
    P3(2, 6, 14, 14, 256, 128, 1, 1, 1, 0, 1, 1),    /* 1x1x1 */
    P3(3, 5, 11, 13, 72, 136, 3, 3, 3, 1, 1, 1),     /* M, N tails */
    P3(2, 4, 9, 9, 200, 48, 3, 3, 3, 1, 1, 1),       /* C = 200 */
    P3(2, 9, 15, 15, 8, 64, 5, 5, 5, 2, 2, 1),       /* 5x5x5 stride 2, C = 8 */
    P3(3, 4, 6, 6, 16, 8, 3, 3, 3, 1, 1, 1),         /* K = 8 */
    P3(2, 16, 28, 28, 64, 64, 3, 3, 3, 1, 1, 1),     /* N*Z*P*Q = 25088: split-K */
    P3(2, 8, 16, 16, 64, 128, 1, 1, 1, 0, 2, 1),     /* 1x1x1 stride 2 */
    P3(1, 2, 2, 2, 16, 16, 3, 3, 3, 1, 1, 1),        /* filter larger than the volume */
    P3(2, 5, 9, 9, 48, 48, 3, 3, 3, 0, 1, 1),        /* no padding */
    P3(1, 1, 1, 1, 8, 8, 1, 1, 1, 0, 1, 1),          /* GEMM K = 1 */
    P3(1, 4, 7, 7, 512, 256, 3, 3, 3, 1, 1, 1),      /* large M and N */
    AB(2, 4, 9, 11, 24, 32, 3, 3, 3, V3(0, 1, 2), V3(2, 1, 0), V3(1, 2, 1), V3(2, 1, 1), 1.0f, 0.0f), /* mixed */
    AB(1, 6, 10, 10, 32, 48, 2, 3, 4, V3(1, 1, 2), V3(0, 1, 1), V3(2, 1, 3), V3(1, 2, 1), 1.0f, 0.0f), /* even taps */
    AB(2, 4, 16, 16, 16, 32, 3, 7, 7, V3(1, 3, 3), V3(1, 3, 3), V3(1, 2, 2), V3(1, 1, 1), 1.0f, 0.0f), /* 3x7x7 stride 2 */
    AB(2, 4, 8, 8, 64, 64, 3, 3, 3, V3(1, 1, 1), V3(1, 1, 1), V3(1, 1, 1), V3(1, 1, 1), 0.5f, 0.75f), /* residual */
    AB(4, 4, 14, 14, 72, 136, 3, 3, 3, V3(1, 1, 1), V3(1, 1, 1), V3(1, 1, 1), V3(1, 1, 1), 1.0f, 1.0f), /* accumulate */
};

/* ---- grouped wgrad: K == C, c = C / groups channels per group ------------------ */

/* G(n, d, h, w, C = K, groups, t, r, s, pad, stride, dilation, alpha, beta): the same padding, stride and
 * dilation along every axis the problem has. */
typedef struct grouped_shape {
    int groups;
    shape sh;
} grouped_shape;

#define G2(n, h, w, c, g, r, s, pad, st, dl, alpha, beta) \
    {g, {n, 1, h, w, c, c, 1, r, s, {0, pad, pad}, {0, pad, pad}, {1, st, st}, {1, dl, dl}, alpha, beta, 0, CONVCAT_ACT_NONE}}
#define G1(n, w, c, g, s, pad, st, dl, alpha, beta) \
    {g, {n, 1, 1, w, c, c, 1, 1, s, {0, 0, pad}, {0, 0, pad}, {1, 1, st}, {1, 1, dl}, alpha, beta, 0, CONVCAT_ACT_NONE}}
#define G3(n, d, h, w, c, g, t, pad, st, dl, alpha, beta) \
    {g, {n, d, h, w, c, c, t, t, t, {pad, pad, pad}, {pad, pad, pad}, {st, st, st}, {dl, dl, dl}, alpha, beta, 0, \
         CONVCAT_ACT_NONE}}

static const grouped_shape grouped_2d[] = {
    G2(2, 9, 11, 64, 8, 3, 3, 1, 1, 1, 1.0f, 0.0f),       /* c = 8, odd sizes */
    G2(2, 7, 13, 48, 3, 3, 3, 1, 1, 1, 1.0f, 0.0f),       /* c = 16, C not a multiple of 64 */
    G2(2, 15, 17, 128, 4, 3, 3, 1, 2, 1, 1.0f, 0.0f),     /* c = 32, stride 2 */
    G2(1, 16, 16, 128, 2, 3, 3, 2, 1, 2, 1.0f, 0.0f),     /* c = 64, dilation 2 */
    G2(2, 11, 9, 192, 3, 3, 3, 1, 1, 1, 1.0f, 0.0f),      /* c = 64, K = 192: a half-empty 128-row tile */
    G2(2, 10, 12, 72, 9, 3, 3, 1, 1, 1, 0.5f, 0.75f),     /* c = 8, C = 72 (tile tails), residual */
    G2(2, 19, 19, 256, 16, 5, 5, 2, 2, 1, 1.0f, 1.0f),    /* c = 16, 5x5 stride 2, accumulate */
    G2(2, 6, 6, 16, 2, 3, 3, 1, 1, 1, 1.0f, 0.0f),        /* c = 8, C = 16: less than one tile */
    G2(8, 28, 28, 64, 4, 3, 3, 1, 1, 1, 1.0f, 0.0f),      /* c = 16, N*P*Q = 6272: a long reduction, split */
    G2(16, 28, 28, 128, 16, 3, 3, 1, 1, 1, 0.5f, 0.75f),  /* c = 8, N*P*Q = 12544, split, residual */
    G2(2, 9, 9, 32, 1, 3, 3, 0, 1, 1, 1.0f, 0.0f),        /* groups 1 beside them: dense, K == C */
    {2, {2, 1, 12, 17, 64, 64, 1, 2, 4, {0, 0, 1}, {0, 1, 2}, {1, 1, 2}, {1, 2, 1}, 1.0f, 0.5f, 0, CONVCAT_ACT_NONE}},
    /* ^ c = 32, even taps, asymmetric padding, mixed stride and dilation, beta */
    G2(1, 7, 7, 512, 8, 1, 1, 0, 1, 1, 1.0f, 0.0f),       /* c = 64, 1x1, four 128-row tiles */
    G2(2, 9, 11, 32, 8, 3, 3, 1, 1, 1, 1.0f, 0.0f),       /* c = 4 (half 16-byte units), odd sizes */
    G2(2, 10, 12, 40, 10, 3, 3, 1, 1, 1, 0.5f, 0.75f),    /* c = 4, C = 40 (tile tails), residual */
    G2(2, 15, 17, 64, 16, 3, 3, 1, 2, 1, 1.0f, 1.0f),     /* c = 4, stride 2, accumulate */
    G2(16, 28, 28, 128, 32, 3, 3, 1, 1, 1, 0.5f, 0.75f),  /* c = 4, N*P*Q = 12544, split, residual */
};

static const grouped_shape grouped_1d[] = {
    G1(2, 101, 64, 8, 3, 1, 1, 1, 1.0f, 0.0f),            /* c = 8 */
    G1(2, 57, 48, 3, 3, 1, 2, 1, 1.0f, 0.0f),             /* c = 16, stride 2 */
    G1(1, 200, 128, 4, 5, 4, 1, 2, 1.0f, 0.0f),           /* c = 32, 5 taps, dilation 2 */
    G1(2, 99, 192, 3, 3, 1, 1, 1, 0.5f, 0.75f),           /* c = 64, residual */
    G1(2, 529, 72, 9, 7, 3, 2, 1, 1.0f, 1.0f),            /* c = 8, C = 72, 7 taps, stride 2, accumulate */
    G1(16, 784, 32, 2, 3, 1, 1, 1, 1.0f, 0.0f),           /* c = 16, N*Q = 12544 */
    G1(2, 101, 32, 8, 3, 1, 1, 1, 0.5f, 0.75f),           /* c = 4, residual */
};

static const grouped_shape grouped_3d[] = {
    G3(1, 5, 7, 9, 64, 8, 3, 1, 1, 1, 1.0f, 0.0f),        /* c = 8, odd sizes */
    G3(2, 9, 11, 13, 32, 2, 3, 1, 2, 1, 1.0f, 0.0f),      /* c = 16, stride 2 */
    G3(1, 8, 10, 10, 96, 3, 3, 2, 1, 2, 1.0f, 0.0f),      /* c = 32, dilation 2, C = 96 */
    G3(2, 4, 8, 8, 128, 2, 3, 1, 1, 1, 0.5f, 0.75f),      /* c = 64, residual */
    G3(2, 6, 14, 14, 24, 3, 1, 0, 1, 1, 1.0f, 1.0f),      /* c = 8, 1x1x1, accumulate */
    G3(1, 5, 7, 9, 32, 8, 3, 1, 1, 1, 0.5f, 0.75f),       /* c = 4, residual */
};

/* tf32 wgrad kernels also run these: channels in 4s (16-byte f32 rows) but not
 * 8s, which the 16-bit kernels refuse, and C = 96, a multiple of tf32's
 * 32-channel column box but not of 64, where tiles run flat and span taps. */
static const shape wgrad_tf32_2d[] = {
    P2(2, 9, 11, 12, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),       /* C = 12 */
    P2(2, 15, 17, 36, 40, 3, 3, 1, 1, 1, 1, 2, 2, 1, 1),      /* C = 36, stride 2 */
    P2(4, 14, 14, 4, 64, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),       /* C = 4, 1x1 */
    P2(2, 14, 14, 96, 136, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),     /* C = 96: flat, tiles span taps */
    AB(16, 1, 28, 28, 20, 24, 1, 3, 3, V3(0, 1, 1), V3(0, 1, 1), V3(1, 1, 1), V3(1, 1, 1), 0.5f, 0.75f), /* split-K, beta */
};

static const shape wgrad_tf32_1d[] = {
    P1(2, 101, 12, 24, 3, 1, 1, 1, 1),       /* C = 12 */
    P1(1, 300, 28, 32, 9, 4, 4, 2, 3),       /* C = 28, 9 taps, stride 2, dilation 3 */
    P1(2, 196, 96, 64, 3, 1, 1, 1, 1),       /* C = 96: flat */
    AB(16, 1, 1, 784, 36, 40, 1, 1, 3, V3(0, 0, 1), V3(0, 0, 1), V3(1, 1, 1), V3(1, 1, 1), 1.0f, 1.0f), /* split-K, accumulate */
};

static const shape wgrad_tf32_3d[] = {
    P3(2, 5, 7, 9, 12, 16, 3, 3, 3, 1, 1, 1),        /* C = 12 */
    P3(2, 8, 16, 16, 4, 8, 1, 1, 1, 0, 2, 1),        /* C = 4, 1x1x1 stride 2 */
    P3(1, 4, 7, 7, 96, 64, 3, 3, 3, 1, 1, 1),        /* C = 96: flat */
    AB(2, 8, 14, 14, 20, 24, 3, 3, 3, V3(1, 1, 1), V3(1, 1, 1), V3(1, 1, 1), V3(1, 1, 1), 0.5f, 0.75f), /* beta */
};

/* ---- the gather family: grouped problems of any c and k per group (every op) -------- */

/* GK(n, d, h, w, C, K, groups, t, r, s, pad, stride, dilation): the same padding, stride and dilation
 * along every axis the problem has (t = 1 and d = 1 for 2D; also r = 1, h = 1 for 1D). */
#define GK2(n, h, w, c, k, g, r, s, pad, st, dl) \
    {g, {n, 1, h, w, c, k, 1, r, s, {0, pad, pad}, {0, pad, pad}, {1, st, st}, {1, dl, dl}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE}}
#define GK1(n, w, c, k, g, s, pad, st, dl) \
    {g, {n, 1, 1, w, c, k, 1, 1, s, {0, 0, pad}, {0, 0, pad}, {1, 1, st}, {1, 1, dl}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE}}
#define GK3(n, d, h, w, c, k, g, t, pad, st, dl) \
    {g, {n, d, h, w, c, k, t, t, t, {pad, pad, pad}, {pad, pad, pad}, {st, st, st}, {dl, dl, dl}, 1.0f, 0.0f, 0, \
         CONVCAT_ACT_NONE}}

static const grouped_shape any_groups_2d[] = {
    GK2(2, 9, 11, 16, 32, 16, 3, 3, 1, 1, 1),       /* c = 1, k = 2 */
    GK2(2, 10, 9, 32, 32, 16, 3, 3, 1, 1, 1),       /* c = 2 */
    GK2(2, 9, 9, 16, 32, 8, 3, 3, 1, 1, 1),         /* c = 2, k = 4 */
    GK2(4, 14, 14, 128, 128, 32, 3, 3, 1, 1, 1),    /* c = 4: ResNeXt's first stage */
    GK2(2, 15, 17, 128, 128, 32, 3, 3, 1, 2, 1),    /* c = 4, stride 2 */
    GK2(2, 11, 13, 64, 128, 8, 3, 3, 1, 1, 1),      /* c = 8, k = 16 */
    GK2(2, 12, 12, 96, 192, 4, 3, 3, 2, 1, 2),      /* c = 24, k = 48, dilation 2 */
    GK2(2, 9, 9, 128, 64, 2, 1, 1, 0, 1, 1),        /* c = 64, k = 32, 1x1 */
    GK2(2, 8, 8, 16, 32, 4, 2, 2, 0, 2, 1),         /* c = 4, k = 8, 2x2 patches */
    GK2(2, 8, 9, 9, 15, 3, 3, 3, 1, 1, 1),          /* c = 3, k = 5 */
    GK2(2, 13, 11, 40, 60, 5, 5, 5, 2, 2, 1),       /* c = 8, k = 12, 5x5 stride 2 */
    GK2(8, 28, 28, 64, 64, 16, 3, 3, 1, 1, 1),      /* c = 4, long pixel reduction (wgrad splits) */
    {8, {2, 1, 9, 11, 64, 64, 1, 3, 3, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 0, CONVCAT_ACT_NONE}},
    /* ^ c = 8, alpha and beta */
    GK2(8, 3, 3, 256, 256, 4, 3, 3, 1, 1, 1),       /* c = 64, 72 pixels: fprop and dgrad split K */
    {4, {2, 1, 7, 9, 48, 96, 1, 2, 4, {0, 0, 1}, {0, 1, 2}, {1, 1, 2}, {1, 2, 1}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE}},
    /* ^ c = 12, k = 24, even taps, asymmetric padding, mixed stride and dilation */
    GK2(8, 14, 14, 512, 512, 32, 3, 3, 1, 1, 1),    /* c = 16: ResNeXt's third stage (packed groups) */
    GK2(4, 16, 16, 256, 256, 32, 3, 3, 1, 2, 1),    /* c = 8, stride 2 */
    GK2(4, 7, 7, 1024, 1024, 32, 3, 3, 1, 1, 1),    /* c = 32 */
};

static const grouped_shape any_groups_1d[] = {
    GK1(2, 57, 16, 32, 16, 3, 1, 1, 1),             /* c = 1, k = 2 */
    GK1(2, 99, 32, 32, 8, 5, 2, 2, 1),              /* c = 4, stride 2 */
    GK1(2, 64, 96, 96, 2, 128, 64, 1, 1),           /* c = 48: wav2vec2's positional convolution */
    GK1(2, 81, 24, 40, 4, 7, 3, 1, 2),              /* c = 6, k = 10, dilation 2 */
    GK1(16, 784, 32, 64, 4, 3, 1, 1, 1),            /* c = 8, k = 16, long pixel reduction */
    GK1(8, 256, 256, 256, 16, 5, 2, 1, 1),          /* c = 16 (packed groups) */
};

static const grouped_shape any_groups_3d[] = {
    GK3(2, 5, 7, 9, 16, 32, 8, 3, 1, 1, 1),         /* c = 2, k = 4 */
    GK3(2, 6, 9, 11, 96, 48, 4, 3, 1, 2, 1),        /* c = 24, k = 12, stride 2 */
    GK3(1, 4, 6, 6, 12, 12, 12, 3, 1, 1, 1),        /* c = 1 */
    GK3(2, 4, 8, 8, 64, 64, 2, 1, 0, 1, 1),         /* c = 32, 1x1x1 */
};

/* ---- grouped fprop by TMA (schedule grouped): a tile column of one group, or a pack of groups ---- */
static const grouped_shape packed_groups_2d[] = {
    GK2(4, 14, 14, 512, 512, 32, 3, 3, 1, 1, 1),    /* c = k = 16: packs of 4 (tile N 64) */
    GK2(2, 9, 11, 64, 64, 4, 3, 3, 1, 2, 1),        /* c = k = 16, stride 2 */
    GK2(2, 9, 9, 48, 48, 3, 3, 3, 1, 1, 1),         /* c = k = 16, a part pack (K < tile N) */
    GK2(4, 7, 7, 1024, 1024, 32, 3, 3, 1, 1, 1),    /* c = k = 32: packs of 2 */
    GK2(2, 10, 9, 64, 128, 4, 3, 3, 2, 1, 2),       /* c = 16, k = 32, dilation 2 */
    GK2(2, 11, 13, 128, 256, 8, 1, 1, 0, 1, 1),     /* c = 16, k = 32, 1x1: packs of 4 at tile N 128 */
    GK2(2, 9, 9, 256, 256, 2, 3, 3, 1, 1, 1),       /* c = k = 128: a group two or one tile columns */
    GK2(2, 12, 10, 96, 256, 2, 3, 3, 1, 2, 1),      /* c = 48, k = 128: a stage reads the next group's channels */
    GK2(2, 9, 7, 160, 512, 2, 5, 5, 2, 1, 1),       /* c = 80, k = 256: two channel blocks, the second part */
    {32, {2, 1, 9, 11, 512, 512, 1, 3, 3, {0, 1, 1}, {0, 1, 2}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 1,
          CONVCAT_ACT_GELU}},
    /* ^ c = k = 16, asymmetric padding, alpha, beta, bias and GELU */
    {2, {2, 1, 8, 9, 1024, 1024, 1, 3, 3, {0, 1, 1}, {0, 1, 1}, {1, 2, 2}, {1, 1, 1}, 1.0f, 0.5f, 1,
         CONVCAT_ACT_RELU}},
    /* ^ c = k = 512, stride 2, beta, bias and ReLU */
    GK2(2, 9, 8, 256, 128, 2, 3, 3, 1, 1, 1),       /* c = 128, k = 64; its dgrad: a group a 128-wide column */
    GK2(2, 9, 9, 256, 128, 8, 3, 3, 1, 1, 1),       /* c = 32, k = 16; its dgrad: packs of 4 at tile N 128 */
    /* groups narrower than a pack, run widened (WIDENS_GROUPS), fprop and unit-stride dgrad alike */
    GK2(2, 14, 14, 256, 256, 32, 3, 3, 1, 1, 1),    /* c = k = 8 (ResNeXt-50's 28 x 28 stage): 2 groups as one */
    GK2(2, 11, 9, 128, 128, 32, 3, 3, 1, 1, 1),     /* c = k = 4: 4 as one */
    GK2(2, 9, 9, 64, 64, 32, 3, 3, 1, 2, 1),        /* c = k = 2, stride 2: 8 as one */
    GK2(2, 10, 12, 64, 128, 8, 3, 3, 1, 1, 1),      /* c = 8, k = 16: groups of 16 and 32; its dgrad no pack */
    GK2(2, 9, 10, 96, 96, 12, 3, 3, 1, 1, 1),       /* c = k = 8 in 12 groups */
    {32, {2, 1, 9, 11, 256, 256, 1, 3, 3, {0, 1, 1}, {0, 1, 2}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 1,
          CONVCAT_ACT_GELU}},
    /* ^ c = k = 8, asymmetric padding, alpha, beta, bias and GELU */
};

static const grouped_shape packed_groups_1d[] = {
    GK1(8, 256, 256, 256, 16, 5, 2, 1, 1),          /* c = k = 16 */
    GK1(2, 99, 64, 64, 2, 3, 1, 2, 1),              /* c = k = 32, stride 2 */
    GK1(2, 64, 256, 512, 2, 7, 3, 1, 2),            /* c = 128, k = 256, dilation 2 */
    GK1(2, 81, 64, 128, 4, 3, 1, 1, 1),             /* c = 16, k = 32 */
    GK1(2, 50, 96, 256, 2, 3, 1, 1, 1),             /* c = 48, k = 128: a stage reads the next group's channels */
    GK1(2, 60, 256, 128, 2, 3, 1, 1, 1),            /* c = 128, k = 64; its dgrad: a group a 128-wide column */
    GK1(2, 77, 128, 128, 16, 3, 1, 1, 1),           /* c = k = 8, widened */
    GK1(2, 64, 64, 64, 16, 5, 2, 1, 2),             /* c = k = 4, widened, dilation 2 */
};

static const grouped_shape packed_groups_3d[] = {
    GK3(2, 5, 7, 9, 128, 128, 8, 3, 1, 1, 1),       /* c = k = 16 */
    GK3(2, 4, 6, 6, 64, 128, 4, 3, 1, 2, 1),        /* c = 16, k = 32, stride 2 */
    GK3(2, 4, 8, 8, 256, 256, 2, 1, 0, 1, 1),       /* c = k = 128, 1x1x1 */
    GK3(1, 4, 6, 7, 64, 64, 2, 3, 1, 1, 1),         /* c = k = 32 */
    GK3(1, 3, 5, 6, 192, 256, 2, 3, 1, 1, 1),       /* c = 96, k = 128: two channel blocks, the second part */
    GK3(1, 3, 5, 6, 256, 128, 2, 3, 1, 1, 1),       /* c = 128, k = 64; its dgrad: a group a 128-wide column */
    GK3(2, 4, 6, 7, 64, 64, 8, 3, 1, 1, 1),         /* c = k = 8, widened */
    GK3(1, 4, 5, 6, 64, 64, 16, 3, 1, 1, 1),        /* c = k = 4, widened */
};

/* ---- odd and small channel counts (groups 1): the stems, squeeze-and-excite, classifiers -- */

static const shape odd_channels_2d[] = {
    P2(2, 9, 9, 1, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),          /* C = 1 */
    P2(2, 37, 35, 3, 64, 7, 7, 3, 3, 3, 3, 2, 2, 1, 1),       /* the ResNet stem: C = 3, 7x7 stride 2 */
    P2(2, 32, 32, 3, 96, 4, 4, 0, 0, 0, 0, 4, 4, 1, 1),       /* ConvNeXt's: 4x4 stride 4 */
    P2(2, 48, 48, 3, 64, 16, 16, 0, 0, 0, 0, 16, 16, 1, 1),   /* ViT's patches: 16x16 stride 16 */
    P2(2, 12, 9, 5, 7, 3, 3, 0, 0, 0, 0, 3, 3, 1, 1),         /* patches of an odd row (S*C = 15) */
    P2(2, 10, 10, 3, 5, 2, 2, 0, 0, 0, 0, 2, 2, 2, 2),        /* 2x2 stride 2, dilation 2: taps overlap */
    {2, 1, 12, 8, 3, 8, 1, 4, 2, {0, 0, 0}, {0, 0, 0}, {1, 4, 2}, {1, 1, 1}, 0.5f, 0.75f, 0, CONVCAT_ACT_NONE},
    /* ^ 4x2 patches, alpha and beta */
    P2(2, 11, 13, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),        /* C = 5, K = 3 */
    P2(2, 10, 10, 12, 45, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),      /* C = 12, K = 45 */
    P2(2, 9, 9, 45, 1, 3, 3, 1, 1, 1, 1, 2, 2, 1, 1),         /* C = 45, K = 1, stride 2 */
    P2(64, 1, 1, 96, 4, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),        /* squeeze: 1x1 on 1x1, K = 4 */
    P2(64, 1, 1, 6, 144, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),       /* excite: C = 6 */
    {64, 1, 1, 1, 672, 28, 1, 1, 1, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 1, CONVCAT_ACT_RELU},
    /* ^ squeeze, C = 672: fprop splits K (the reduction applies alpha, bias, beta and ReLU) */
    {64, 1, 1, 1, 28, 672, 1, 1, 1, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 0, CONVCAT_ACT_NONE},
    /* ^ excite, K = 672: dgrad splits K, alpha and beta */
    P2(4, 5, 5, 13, 200, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),       /* C = 13, K = 200, 5x5: dgrad splits K */
    P2(4, 5, 5, 200, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),       /* C = 200, K = 13: fprop splits K (tile K 64 too) */
    P2(2, 16, 16, 256, 21, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),     /* a classifier: K = 21 */
    P2(2, 12, 12, 3, 3, 5, 5, 2, 2, 2, 2, 1, 1, 2, 2),        /* C = K = 3, dilation 2 */
    {2, 1, 11, 9, 3, 5, 1, 3, 3, {0, 1, 0}, {0, 0, 2}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 0, CONVCAT_ACT_NONE},
    /* ^ asymmetric padding, alpha, beta */
    {2, 1, 9, 9, 5, 45, 1, 3, 3, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1.0f, 0.0f, 1, CONVCAT_ACT_RELU},
    /* ^ bias and ReLU (fprop; dgrad and wgrad run it plain) */
};

static const shape odd_channels_1d[] = {
    P1(2, 1605, 1, 64, 10, 0, 0, 5, 1),      /* wav2vec2's front end: C = 1, 10 taps, stride 5 */
    P1(2, 101, 3, 5, 3, 1, 1, 1, 1),         /* C = 3, K = 5 */
    P1(2, 64, 45, 12, 5, 2, 2, 2, 1),        /* C = 45, K = 12, stride 2 */
    P1(2, 99, 12, 1, 3, 2, 2, 1, 2),         /* K = 1, dilation 2 */
    P1(2, 100, 1, 16, 5, 0, 0, 5, 1),        /* C = 1 patches: 5 taps, stride 5 */
    P1(64, 1, 480, 20, 1, 0, 0, 1, 1),       /* squeeze, C = 480: fprop splits K */
    P1(64, 1, 20, 480, 1, 0, 0, 1, 1),       /* excite, K = 480: dgrad splits K */
};

static const shape odd_channels_3d[] = {
    {2, 4, 19, 17, 3, 64, 1, 7, 7, {0, 3, 3}, {0, 3, 3}, {1, 2, 2}, {1, 1, 1}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE},
    /* ^ S3D's stem: C = 3, 1x7x7, stride 1x2x2 */
    P3(2, 5, 7, 9, 5, 12, 3, 3, 3, 1, 1, 1),         /* C = 5, K = 12 */
    P3(2, 4, 6, 6, 45, 3, 1, 1, 1, 0, 1, 1),         /* C = 45, K = 3, 1x1x1 */
    P3(2, 4, 6, 6, 4, 8, 2, 2, 2, 0, 2, 1),          /* C = 4 patches: 2x2x2, stride 2 */
    P3(2, 2, 3, 3, 200, 13, 3, 3, 3, 1, 1, 1),       /* C = 200, 36 pixels: fprop splits K */
    P3(2, 2, 3, 3, 13, 200, 3, 3, 3, 1, 1, 1),       /* K = 200: dgrad splits K */
};

/* ---- input-tile gather kernels (flag INPUT_TILE): fprop, dgrad and wgrad of at most 4 channels ---- */

static const shape input_tile_2d[] = {
    P2(2, 37, 35, 3, 64, 7, 7, 3, 3, 3, 3, 2, 2, 1, 1),       /* the ResNet stem: C = 3, 7x7 stride 2 */
    P2(3, 41, 29, 3, 32, 3, 3, 1, 1, 1, 1, 2, 2, 1, 1),       /* MobileNet's: 3x3 stride 2, K = 32 */
    P2(2, 9, 9, 1, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),          /* C = 1, K = 5 */
    P2(2, 32, 32, 3, 96, 4, 4, 0, 0, 0, 0, 4, 4, 1, 1),       /* ConvNeXt's: 4x4 stride 4, two filter blocks */
    P2(2, 12, 12, 3, 3, 5, 5, 2, 2, 2, 2, 1, 1, 2, 2),        /* C = K = 3, 5x5 at dilation 2 */
    P2(2, 20, 150, 2, 33, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),      /* C = 2, K = 33: a wide image */
    P2(2, 150, 6, 4, 130, 3, 5, 1, 2, 1, 2, 1, 1, 1, 1),      /* C = 4, K = 130, 3x5: a narrow image */
    P2(2, 51, 47, 3, 64, 11, 11, 2, 2, 2, 2, 4, 4, 1, 1),     /* AlexNet's: 11x11 stride 4 */
    P2(1, 5, 300, 1, 8, 1, 7, 0, 3, 0, 3, 1, 3, 1, 1),        /* 1x7, stride 3 along W only */
    P2(2, 21, 19, 4, 24, 7, 9, 3, 4, 3, 4, 2, 2, 1, 1),       /* C = 4, 7x9: rows of 36 columns (dgrad: passes) */
    P2(2, 30, 26, 3, 16, 5, 11, 4, 10, 4, 10, 3, 2, 2, 2),    /* 5x11, strides 3 x 2, dilation 2 (dgrad: passes) */
    {2, 1, 11, 9, 3, 5, 1, 3, 3, {0, 1, 0}, {0, 0, 2}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 0, CONVCAT_ACT_NONE},
    /* ^ asymmetric padding, alpha, beta */
    {2, 1, 23, 19, 3, 45, 1, 7, 7, {0, 3, 3}, {0, 3, 3}, {1, 2, 2}, {1, 1, 1}, 1.0f, 0.5f, 1, CONVCAT_ACT_GELU},
    /* ^ K = 45, bias, beta and GELU */
    {2, 1, 17, 15, 3, 64, 1, 7, 7, {0, 3, 3}, {0, 3, 3}, {1, 2, 2}, {1, 1, 1}, 1.0f, 0.0f, 1, CONVCAT_ACT_RELU},
    /* ^ bias and ReLU */
    {1, 1, 8, 16, 2, 7, 1, 3, 3, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 0, CONVCAT_ACT_NONE},
    /* ^ one block of 8 x 16 outputs (wgrad: one slice, dw stored by the kernel itself), alpha, beta */
};

static const shape input_tile_1d[] = {
    P1(2, 1605, 1, 64, 10, 0, 0, 5, 1),      /* wav2vec2's front end: C = 1, 10 taps, stride 5 */
    P1(2, 101, 3, 5, 3, 1, 1, 1, 1),         /* C = 3, K = 5 */
    P1(3, 777, 2, 100, 31, 15, 15, 1, 1),    /* C = 2, 31 taps, two filter blocks */
    P1(2, 99, 4, 64, 5, 2, 2, 2, 2),         /* C = 4, stride 2, dilation 2 */
    P1(2, 100, 1, 16, 5, 0, 0, 5, 1),        /* C = 1 patches: 5 taps, stride 5 */
    {2, 1, 1, 300, 3, 70, 1, 1, 9, {0, 0, 4}, {0, 0, 4}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 1, CONVCAT_ACT_SILU},
    /* ^ K = 70, alpha, beta, bias and SiLU */
};

/* ---- depthwise (the direct family; gather kernels run them too): groups = C -------------- */

/* DW(n, d, h, w, C, mult, t, r, s, pad_lo, pad_hi, stride, dilation): K = mult * C, D/T/pads
 * given per axis D, H, W. */
#define DW(n, d, h, w, c, mult, t, r, s, lo, hi, st, dl) {c, {n, d, h, w, c, (c) * (mult), t, r, s, lo, hi, st, dl, \
                                                           1.0f, 0.0f, 0, CONVCAT_ACT_NONE}}

static const grouped_shape depthwise_2d[] = {
    DW(2, 1, 14, 15, 32, 1, 1, 3, 3, V3(0, 1, 1), V3(0, 1, 1), V3(1, 1, 1), V3(1, 1, 1)),   /* 3x3 */
    DW(2, 1, 17, 19, 96, 1, 1, 3, 3, V3(0, 1, 1), V3(0, 1, 1), V3(1, 2, 2), V3(1, 1, 1)),   /* 3x3 stride 2 */
    DW(2, 1, 13, 12, 144, 1, 1, 5, 5, V3(0, 2, 2), V3(0, 2, 2), V3(1, 1, 1), V3(1, 1, 1)),  /* 5x5 */
    DW(2, 1, 21, 23, 64, 1, 1, 5, 5, V3(0, 2, 2), V3(0, 2, 2), V3(1, 2, 2), V3(1, 1, 1)),   /* 5x5 stride 2 */
    DW(2, 1, 14, 14, 96, 1, 1, 7, 7, V3(0, 3, 3), V3(0, 3, 3), V3(1, 1, 1), V3(1, 1, 1)),   /* 7x7 */
    DW(2, 1, 19, 17, 64, 1, 1, 7, 7, V3(0, 3, 3), V3(0, 3, 3), V3(1, 2, 2), V3(1, 1, 1)),   /* 7x7 stride 2 */
    DW(2, 1, 16, 16, 40, 1, 1, 3, 3, V3(0, 2, 2), V3(0, 2, 2), V3(1, 1, 1), V3(1, 2, 2)),   /* dilation 2 */
    DW(2, 1, 13, 11, 24, 1, 1, 3, 3, V3(0, 0, 2), V3(0, 2, 0), V3(1, 1, 1), V3(1, 1, 1)),   /* asymmetric padding */
    DW(2, 1, 12, 12, 32, 2, 1, 3, 3, V3(0, 1, 1), V3(0, 1, 1), V3(1, 1, 1), V3(1, 1, 1)),   /* multiplier 2 */
    DW(2, 1, 11, 9, 16, 1, 1, 4, 6, V3(0, 1, 2), V3(0, 2, 3), V3(1, 1, 1), V3(1, 1, 1)),    /* even taps, 4x6 */
    DW(2, 1, 9, 10, 45, 1, 1, 3, 3, V3(0, 1, 1), V3(0, 1, 1), V3(1, 1, 1), V3(1, 1, 1)),    /* C = 45 */
    DW(2, 1, 10, 10, 7, 3, 1, 3, 3, V3(0, 1, 1), V3(0, 1, 1), V3(1, 2, 2), V3(1, 1, 1)),    /* C = 7, multiplier 3, stride 2 */
    DW(4, 1, 56, 56, 96, 1, 1, 3, 3, V3(0, 1, 1), V3(0, 1, 1), V3(1, 1, 1), V3(1, 1, 1)),   /* large */
    DW(3, 1, 3, 2, 24, 1, 1, 3, 3, V3(0, 1, 1), V3(0, 1, 1), V3(1, 1, 1), V3(1, 1, 1)),     /* 3x3 on a 3x2 image */
    DW(2, 1, 21, 18, 16, 1, 1, 3, 3, V3(0, 0, 1), V3(0, 2, 1), V3(1, 1, 1), V3(1, 1, 1)),   /* 3x3, rows padded below */
    DW(2, 1, 15, 13, 48, 1, 1, 3, 3, V3(0, 0, 1), V3(0, 1, 0), V3(1, 2, 2), V3(1, 1, 1)),   /* stride 2, asymmetric pads */
    DW(2, 1, 9, 14, 32, 1, 1, 3, 3, V3(0, 1, 1), V3(0, 1, 1), V3(1, 1, 2), V3(1, 1, 1)),    /* strides 1 x 2 */
    DW(2, 1, 12, 12, 16, 1, 1, 4, 4, V3(0, 1, 1), V3(0, 1, 1), V3(1, 2, 2), V3(1, 1, 1)),   /* 4x4 stride 2 */
    DW(2, 1, 15, 15, 48, 1, 1, 6, 6, V3(0, 2, 2), V3(0, 3, 3), V3(1, 3, 3), V3(1, 1, 1)),   /* 6x6 stride 3 */
    DW(2, 1, 9, 13, 8, 1, 1, 3, 5, V3(0, 1, 2), V3(0, 1, 2), V3(1, 2, 1), V3(1, 1, 2)),     /* mixed strides, dilations */
    DW(2, 1, 22, 37, 40, 1, 1, 5, 3, V3(0, 4, 1), V3(0, 3, 1), V3(1, 2, 1), V3(1, 2, 1)),   /* 5x3, H stride and dilation 2, C = 40 */
    DW(3, 1, 6, 70, 24, 1, 1, 1, 7, V3(0, 0, 3), V3(0, 0, 2), V3(1, 1, 2), V3(1, 1, 1)),    /* 1x7, W stride 2, wide rows */
    {64, {2, 1, 12, 14, 64, 64, 1, 3, 3, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 0, CONVCAT_ACT_NONE}},
    /* ^ alpha and beta */
    {32, {2, 1, 12, 14, 32, 32, 1, 7, 7, {0, 3, 3}, {0, 3, 3}, {1, 1, 1}, {1, 1, 1}, 1.0f, 0.0f, 1, CONVCAT_ACT_GELU}},
    /* ^ bias and GELU (fprop; dgrad and wgrad run it plain) */
    {16, {2, 1, 9, 9, 16, 16, 1, 3, 3, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1.0f, 1.0f, 1, CONVCAT_ACT_SILU}},
    /* ^ bias, residual and SiLU */
    {48, {2, 1, 23, 21, 48, 48, 1, 5, 5, {0, 2, 2}, {0, 2, 2}, {1, 2, 2}, {1, 1, 1}, 0.5f, 0.75f, 1, CONVCAT_ACT_SILU}},
    /* ^ 5x5 stride 2 (fprop's column path) with alpha, bias, residual and SiLU */
    {32, {2, 1, 5, 9, 32, 32, 1, 7, 7, {0, 3, 3}, {0, 2, 3}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 0, CONVCAT_ACT_NONE}},
    /* ^ 7x7 on 5 rows (shorter than a column segment), asymmetric padding, alpha and beta */
    {64, {3, 1, 26, 13, 64, 64, 1, 7, 7, {0, 3, 3}, {0, 3, 3}, {1, 2, 2}, {1, 1, 1}, 1.0f, 0.0f, 1, CONVCAT_ACT_RELU}},
    /* ^ 7x7 stride 2, bias and ReLU */
    {24, {2, 1, 19, 16, 24, 24, 1, 5, 5, {0, 1, 2}, {0, 3, 2}, {1, 1, 1}, {1, 1, 1}, 1.0f, 0.5f, 0, CONVCAT_ACT_NONE}},
    /* ^ 5x5, asymmetric rows of padding, beta */
};

static const grouped_shape depthwise_1d[] = {
    DW(2, 1, 1, 200, 64, 1, 1, 1, 31, V3(0, 0, 15), V3(0, 0, 15), V3(1, 1, 1), V3(1, 1, 1)),   /* Conformer's 31 taps */
    DW(2, 1, 1, 101, 48, 1, 1, 1, 3, V3(0, 0, 1), V3(0, 0, 1), V3(1, 1, 1), V3(1, 1, 1)),
    DW(2, 1, 1, 99, 32, 1, 1, 1, 5, V3(0, 0, 2), V3(0, 0, 2), V3(1, 1, 2), V3(1, 1, 1)),      /* stride 2 */
    DW(2, 1, 1, 120, 24, 1, 1, 1, 15, V3(0, 0, 14), V3(0, 0, 14), V3(1, 1, 1), V3(1, 1, 2)),  /* dilation 2 */
    DW(2, 1, 1, 64, 1, 1, 1, 1, 3, V3(0, 0, 1), V3(0, 0, 1), V3(1, 1, 1), V3(1, 1, 1)),       /* C = 1 */
    DW(2, 1, 1, 77, 7, 2, 1, 1, 9, V3(0, 0, 3), V3(0, 0, 5), V3(1, 1, 1), V3(1, 1, 1)),       /* C = 7, multiplier 2 */
    DW(8, 1, 1, 400, 128, 1, 1, 1, 7, V3(0, 0, 3), V3(0, 0, 3), V3(1, 1, 1), V3(1, 1, 1)),    /* larger */
};

static const grouped_shape depthwise_3d[] = {
    DW(2, 5, 7, 9, 32, 1, 3, 3, 3, V3(1, 1, 1), V3(1, 1, 1), V3(1, 1, 1), V3(1, 1, 1)),     /* 3x3x3 */
    DW(2, 9, 11, 13, 24, 1, 5, 5, 5, V3(2, 2, 2), V3(2, 2, 2), V3(2, 2, 2), V3(1, 1, 1)),   /* 5x5x5 stride 2 */
    DW(1, 8, 9, 9, 16, 1, 7, 7, 7, V3(3, 3, 3), V3(3, 3, 3), V3(1, 1, 1), V3(1, 1, 1)),     /* 7x7x7 */
    DW(2, 4, 10, 10, 48, 1, 1, 3, 3, V3(0, 1, 1), V3(0, 1, 1), V3(1, 1, 1), V3(1, 1, 1)),   /* 1x3x3 */
    DW(2, 3, 13, 11, 32, 1, 1, 5, 5, V3(0, 2, 2), V3(0, 2, 2), V3(2, 2, 2), V3(1, 1, 1)),   /* 1x5x5, stride 2 */
    DW(2, 6, 6, 6, 40, 1, 3, 1, 1, V3(1, 0, 0), V3(1, 0, 0), V3(1, 1, 1), V3(1, 1, 1)),     /* 3x1x1 */
    DW(2, 6, 8, 8, 16, 2, 3, 3, 3, V3(2, 2, 2), V3(2, 2, 2), V3(1, 1, 1), V3(2, 2, 2)),     /* dilation 2, multiplier 2 */
    DW(2, 5, 6, 7, 5, 1, 3, 3, 3, V3(1, 1, 1), V3(1, 1, 1), V3(1, 2, 2), V3(1, 1, 1)),      /* C = 5, stride 2 */
};

/* ---- small groups (the direct family): c = k = 2, 4 or 8 channels a group --------------------- */

static const grouped_shape small_groups_2d[] = {
    GK2(4, 14, 14, 128, 128, 32, 3, 3, 1, 1, 1),    /* c = 4: ResNeXt's first stage */
    GK2(2, 15, 17, 128, 128, 32, 3, 3, 1, 2, 1),    /* c = 4, stride 2 */
    GK2(2, 11, 13, 64, 64, 8, 3, 3, 1, 1, 1),       /* c = 8 */
    GK2(2, 16, 15, 256, 256, 32, 3, 3, 1, 2, 1),    /* c = 8, stride 2 */
    GK2(2, 10, 9, 32, 32, 16, 3, 3, 1, 1, 1),       /* c = 2 */
    GK2(2, 12, 12, 64, 64, 16, 5, 5, 4, 1, 2),      /* c = 4, 5x5 dilation 2 */
    GK2(2, 9, 11, 12, 12, 3, 3, 3, 1, 1, 1),        /* c = 4, C = 12: channels in no whole vectors */
    GK2(2, 13, 9, 24, 24, 3, 3, 3, 1, 1, 1),        /* c = 8, C = 24 */
    GK2(2, 11, 10, 32, 32, 8, 4, 4, 1, 3, 1),       /* c = 4, 4x4 stride 3 */
    {16, {2, 1, 9, 11, 64, 64, 1, 3, 3, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 0, CONVCAT_ACT_NONE}},
    /* ^ c = 4, alpha and beta */
    {8, {2, 1, 9, 9, 64, 64, 1, 3, 3, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1.0f, 0.0f, 1, CONVCAT_ACT_RELU}},
    /* ^ c = 8, bias and ReLU (fprop; dgrad runs it plain) */
    {32, {2, 1, 13, 11, 128, 128, 1, 3, 3, {0, 0, 1}, {0, 2, 1}, {1, 2, 1}, {1, 1, 1}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE}},
    /* ^ c = 4, asymmetric padding, strides 2 x 1 */
};

static const grouped_shape small_groups_1d[] = {
    GK1(2, 57, 64, 64, 16, 3, 1, 1, 1),             /* c = 4 */
    GK1(2, 99, 64, 64, 8, 5, 2, 2, 1),              /* c = 8, stride 2 */
    GK1(2, 64, 32, 32, 16, 7, 6, 1, 2),             /* c = 2, dilation 2 */
};

static const grouped_shape small_groups_3d[] = {
    GK3(2, 5, 7, 9, 64, 64, 16, 3, 1, 1, 1),        /* c = 4, 3x3x3 */
    GK3(2, 6, 9, 11, 64, 64, 8, 3, 1, 2, 1),        /* c = 8, stride 2 */
};

/* ---- the lists by op and dims, and the problems of the checker and autotune tests */

typedef struct shape_list {
    const shape *shapes;
    size_t count;
} shape_list;

#define LIST(a) {a, sizeof a / sizeof a[0]}
/* 3D problems that 2D kernels take folded into the 2D problem over the same memory (problem.c,
 * cvc_folded_view): T = 1 (D joins the batch: the 2D lists' odd-sized 3x3 and 1x1 problems), and
 * 3 x 1 x 1 with padding 1 along D (D x (H*W) images, a 3 x 1 filter).  Every 2D TMA and gather
 * kernel runs them as 3D problems (problems 980..). */
static const shape folded_3d[] = {
    {1, 2, 7, 9, 16, 24, 1, 3, 3, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 0, CONVCAT_ACT_NONE},
    {2, 2, 14, 14, 256, 128, 1, 1, 1, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE},
    {2, 5, 6, 7, 16, 24, 3, 1, 1, {1, 0, 0}, {1, 0, 0}, {1, 1, 1}, {1, 1, 1}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE},
};

static const shape_list lists[3][3] = {   /* [op][dims - 1] */
    [CONVCAT_FPROP] = {LIST(shapes_1d), LIST(shapes_2d), LIST(shapes_3d)},
    [CONVCAT_DGRAD] = {LIST(dgrad_1d), LIST(dgrad_2d), LIST(dgrad_3d)},
    [CONVCAT_WGRAD] = {LIST(wgrad_1d), LIST(wgrad_2d), LIST(wgrad_3d)},
};
typedef struct grouped_list {
    const grouped_shape *shapes;
    size_t count;
} grouped_list;
static const grouped_list grouped[3] = {LIST(grouped_1d), LIST(grouped_2d), LIST(grouped_3d)};   /* [dims - 1] */
static const shape_list wgrad_tf32_lists[3] = {LIST(wgrad_tf32_1d), LIST(wgrad_tf32_2d), LIST(wgrad_tf32_3d)};
static const grouped_list any_groups[3] = {LIST(any_groups_1d), LIST(any_groups_2d), LIST(any_groups_3d)};
static const grouped_list packed_groups[3] = {LIST(packed_groups_1d), LIST(packed_groups_2d), LIST(packed_groups_3d)};
static const shape_list odd_channels[3] = {LIST(odd_channels_1d), LIST(odd_channels_2d), LIST(odd_channels_3d)};
static const shape_list input_tile_lists[2] = {LIST(input_tile_1d), LIST(input_tile_2d)};
static const grouped_list depthwise[3] = {LIST(depthwise_1d), LIST(depthwise_2d), LIST(depthwise_3d)};
static const grouped_list small_groups[3] = {LIST(small_groups_1d), LIST(small_groups_2d), LIST(small_groups_3d)};

/* The checker's problems: many outputs (>= 100k), each a sum of few enough
 * terms (|ref| ~ 10) that a wrong 100 is always an outlier. */
static const shape checker_shapes[3][3] = {
    [CONVCAT_FPROP] = {P1(16, 4096, 64, 64, 3, 1, 1, 1, 1), P2(8, 56, 56, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),
                       P3(4, 16, 28, 28, 64, 64, 3, 3, 3, 1, 1, 1)},
    [CONVCAT_DGRAD] = {P1(16, 4096, 64, 64, 3, 1, 1, 1, 1), P2(8, 56, 56, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),
                       P3(2, 16, 28, 28, 64, 64, 3, 3, 3, 1, 1, 1)},
    [CONVCAT_WGRAD] = {P1(2, 196, 512, 512, 3, 1, 1, 1, 1), P2(2, 14, 14, 512, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),
                       P3(1, 4, 7, 7, 512, 256, 3, 3, 3, 1, 1, 1)},
};

/* Chained runs (cvc_verify_chained): y1 = conv(x), y2 = conv(y1) back to back on one stream,
 * 3-wide filters (3, 3x3, 1x3x3), C == K == 256, the output the input's size.  Sized per kernel
 * (chained_shape): about 100 tiles, fewer than the SMs, so the second kernel's CTAs find idle
 * SMs while the first still computes its single tiles of 36 K stages; without its wait the
 * second reads y1 unwritten (NaN).  Enough tiles that a TMA plan does not split K (a split adds
 * a reduction launch between the two, which would hide a missing wait); a gather plan may split
 * (its kernels do not launch early: nothing to hide). */
#define CHAINED_TILES 100

static shape chained_shape(const convcat_entry_info *e)
{
    const int channels = 256, tiles_n = (channels + e->tile_n - 1) / e->tile_n;
    const int rows = (CHAINED_TILES + tiles_n - 1) / tiles_n;   /* tile rows: one image row each */
    switch (e->dims) {
    case 1: { const shape sh = P1(rows, e->tile_m, channels, channels, 3, 1, 1, 1, 1); return sh; }
    case 2: { const shape sh = P2(1, rows, e->tile_m, channels, channels, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1); return sh; }
    default: {   /* 1x3x3 over one frame: a 3x3x3 filter's 27 taps let a tile of 32 filters split K */
        const shape sh = {1, 1, rows, e->tile_m, channels, channels, 1, 3, 3, {0, 1, 1}, {0, 1, 1}, {1, 1, 1},
                          {1, 1, 1}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE};
        return sh;
    }
    }
}

/* Autotune's problems: large enough for the kernels to differ; for wgrad a
 * large GEMM K, so that split-K kernels ask for a workspace. */
static const shape autotune_shapes[3][3] = {
    [CONVCAT_FPROP] = {P1(2, 196, 512, 512, 3, 1, 1, 1, 1), P2(2, 14, 14, 512, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),
                       P3(1, 4, 7, 7, 512, 256, 3, 3, 3, 1, 1, 1)},
    [CONVCAT_DGRAD] = {P1(2, 196, 512, 512, 3, 1, 1, 1, 1), P2(2, 14, 14, 512, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),
                       P3(1, 4, 7, 7, 512, 256, 3, 3, 3, 1, 1, 1)},
    [CONVCAT_WGRAD] = {P1(32, 784, 64, 64, 3, 1, 1, 1, 1), P2(32, 28, 28, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),
                       P3(2, 16, 28, 28, 64, 64, 3, 3, 3, 1, 1, 1)},
};

static const convcat_catalog *catalog;
static unsigned base_seed;
static long long runs, failures, by_design;   /* by_design: strided problems a kernel's rules refuse by design */
static long long halo_by_design;   /* strides and wide filters halo kernels refuse (their input tile's reach) */
static long long tile_by_design;   /* few-channel dgrad an input-tile dgrad kernel refuses (its phases' columns, its shared memory) */
static long long raster_runs;   /* runs with CONVCAT_RASTER_BAND=3 */
static long long chained_runs;  /* fprop pairs run back to back, the second reading the first's output */
static long long grouped_runs, grouped_by_design;   /* grouped wgrad: run, refused by kernels not made for it */
static long long family_runs[4];     /* problems run per kernel family (CONVCAT_FAMILY_*) */
static long long folded_runs;       /* 3D problems run folded on 2D kernels */
static long long gather_split_runs;  /* gather fprop and dgrad runs whose plan split K (a workspace) */
static long long gather_packed_runs; /* gather runs whose plan packed groups a CTA (dgrad kernels of PACKS_GROUPS) */
static long long cluster_split_runs; /* TMA runs whose slices of a tile were a cluster (flag CLUSTER_SPLITS) */
static long long direct_by_design;   /* depthwise problems a direct kernel's tile or thread budget refuses */
/* [op][dims - 1][A type][problem]: a direct kernel of that op, dims and type ran the depthwise problem
 * (and passed); and which (op, dims, type) have direct kernels.  Every depthwise problem must have
 * run on one of its family's kernels: a refusal by design is only a refusal of one block size. */
static char direct_ran[3][3][8][32], direct_kernels[3][3][8];
/* The same for the small-group problems on direct kernels, [op][dims - 1][A type][problem]. */
static char group_ran[3][3][8][16];
static size_t first_kernel[3] = {(size_t)-1, (size_t)-1, (size_t)-1};   /* per op: the checker's and autotune's */

static const char *const op_names[3] = {"fprop", "dgrad", "wgrad"};

static convcat_problem problem_for(convcat_op op, int dims, convcat_dtype a, convcat_dtype b, convcat_dtype out,
                                   const shape *sh)
{
    convcat_problem p;
    convcat_problem_init(&p);
    p.op = op;
    p.dims = dims;
    p.a_type = a, p.b_type = b, p.out_type = out;
    p.n = sh->n, p.d = sh->d, p.h = sh->h, p.w = sh->w, p.c = sh->c, p.k = sh->k;
    p.t = sh->t, p.r = sh->r, p.s = sh->s;
    for (int ax = 0; ax < 3; ++ax) {
        p.pad_lo[ax] = sh->lo[ax], p.pad_hi[ax] = sh->hi[ax];
        p.stride[ax] = sh->stride[ax], p.dilation[ax] = sh->dil[ax];
    }
    return p;
}

static convcat_problem entry_problem(const convcat_entry_info *e, const shape *sh)
{
    return problem_for(e->op, e->dims, e->a_type, e->b_type, e->out_type, sh);
}

/* One problem of op `op` on one kernel (a kernel of DGRAD_AS_FPROP runs dgrad too); 1 if it ran
 * (passed or not), 0 if refused or an error. */
static int check_op_dims(size_t index, const convcat_entry_info *e, const shape *sh, int groups, int no, convcat_op op,
                         int dims)
{
    convcat_problem p = problem_for(op, dims, e->a_type, e->b_type, e->out_type, sh);
    p.groups = groups;
    char why[192];
    const unsigned seed = base_seed + (unsigned)(index * 131 + (size_t)no);
    const int strided = p.stride[0] > 1 || p.stride[1] > 1 || p.stride[2] > 1;
    if (convcat_check(catalog, index, &p, why, sizeof why) != CONVCAT_OK && e->op == CONVCAT_DGRAD && strided &&
        strstr(why, "has no strided (row-scattering) epilogue")) {
        ++by_design;   /* 128-accumulator dgrad kernels run unit stride only (the rules say so) */
        return 0;
    }
    if (convcat_check(catalog, index, &p, why, sizeof why) != CONVCAT_OK && e->schedule == CONVCAT_HALO &&
        (strstr(why, "a halo kernel reads each output block's input pixels as one tile") ||
         strstr(why, "halo kernel's input tile reaches"))) {
        ++halo_by_design;   /* halo kernels: unit stride, filters reaching 2 pixels past a block */
        return 0;
    }
    if (p.groups > 1 && convcat_check(catalog, index, &p, why, sizeof why) != CONVCAT_OK &&
        (strstr(why, "this kernel takes groups = 1") ||
         (e->schedule == CONVCAT_GROUPED && (strstr(why, "a tile column takes one group of k a multiple of") ||
                                             strstr(why, "nor does a pack take 2, 4, ... of these groups") ||
                                             strstr(why, "runs unit-stride dgrad only"))))) {
        ++grouped_by_design;   /* wgrad TMA kernels of tile M == N, cluster M 1 run grouped problems, and
                                  the grouped schedule's fprop kernels those of whole groups a tile column,
                                  or whose packs take them widened */
        return 0;
    }
    if (e->family == CONVCAT_FAMILY_GATHER && e->stages == 1 && e->op == CONVCAT_DGRAD &&
        convcat_check(catalog, index, &p, why, sizeof why) != CONVCAT_OK &&
        (strstr(why, "stride phase columns, more than this dgrad kernel's") ||
         strstr(why, "the filters and a block's dy region take"))) {
        ++tile_by_design;   /* a wider input-tile dgrad kernel, or the pipelined ones, take it */
        return 0;
    }
    if (e->family == CONVCAT_FAMILY_DIRECT && convcat_check(catalog, index, &p, why, sizeof why) != CONVCAT_OK &&
        (strstr(why, "bytes of shared memory") || strstr(why, "units of taps, more than") ||
         strstr(why, "this staged direct kernel") || (e->stages > 1 && strstr(why, "a depthwise kernel takes 1")) ||
         (p.groups > 1 && strstr(why, "this direct kernel takes one channel per group, or")))) {
        ++direct_by_design;   /* a smaller block (or fewer channels a block, or an unstaged kernel) of the family takes it */
        return 0;
    }
    grouped_runs += p.groups > 1;
    ++runs;
    ++family_runs[e->family & 3];
    if (convcat_check(catalog, index, &p, why, sizeof why) != CONVCAT_OK) {
        ++failures;
        printf("\n  %s problem %d refused: %s", e->key, no, why);
        CU_FAIL("a test problem was refused");
        return 0;
    }
    cvc_verify v;
    const cvc_epilogue epi = {.alpha = sh->alpha, .beta = sh->beta, .bias = sh->bias, .activation = sh->act};
    const convcat_status st = cvc_verify_run(catalog, &p, index, seed, &epi, CVC_SABOTAGE_NONE, &v);
    if (st != CONVCAT_OK || !v.passed) {
        ++failures;
        if (st != CONVCAT_OK)
            printf("\n  %s problem %d (seed %u): %s: %s", e->key, no, seed, convcat_status_string(st),
                   convcat_last_error());
        else
            printf("\n  %s problem %d (seed %u): rel. error %.3e (bound %.3e), %lld non-finite, %lld outliers"
                   " (worst at %.2g of its bound; workspace %zu bytes)",
                   e->key, no, seed, v.rel_err, v.tolerance, v.nonfinite, v.outliers, v.worst, v.workspace_bytes);
    }
    CU_ASSERT_EQUAL(st, CONVCAT_OK);
    CU_ASSERT_TRUE(st == CONVCAT_OK && v.passed);
    gather_split_runs += st == CONVCAT_OK && e->family == CONVCAT_FAMILY_GATHER && e->op != CONVCAT_WGRAD &&
                         v.workspace_bytes > 0;
    gather_packed_runs += st == CONVCAT_OK && v.groups_per_cta > 1;
    cluster_split_runs += st == CONVCAT_OK && v.cluster > e->cluster_m * e->cluster_n;
    return st == CONVCAT_OK;
}

static int check_op(size_t index, const convcat_entry_info *e, const shape *sh, int groups, int no, convcat_op op)
{
    return check_op_dims(index, e, sh, groups, no, op, e->dims);
}

static int check_one(size_t index, const convcat_entry_info *e, const shape *sh, int groups, int no)
{
    return check_op(index, e, sh, groups, no, e->op);
}

/* Direct kernels' chained runs: depthwise 3-wide filters over C == K == 256 channels, large enough
 * that every CTA runs several blocks, so that the second kernel launches (once every CTA of the first
 * is on its last block) while the first still computes; and the input-tile kernels' (few channels:
 * C == K == 4). */
static const shape direct_chained[3] = {P1(8, 3136, 256, 256, 3, 1, 1, 1, 1),
                                        P2(4, 56, 56, 256, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),
                                        P3(2, 4, 28, 28, 256, 256, 3, 3, 3, 1, 1, 1)};
static const shape tile_chained[2] = {P1(8, 12544, 4, 4, 3, 1, 1, 1, 1),
                                      P2(8, 112, 112, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1)};

/* Two runs chained on one stream, the second reading the first's output (fprop, C == K): the
 * second must wait for the first (sm90a launches with programmatic dependent launch).  Direct
 * kernels run a depthwise problem (groups = C). */
static void check_chained(size_t index, const convcat_entry_info *e)
{
    const bool direct = e->family == CONVCAT_FAMILY_DIRECT;
    const bool tile = e->family == CONVCAT_FAMILY_GATHER && e->stages == 1;
    const shape sh = direct ? direct_chained[e->dims - 1] : tile ? tile_chained[e->dims - 1] : chained_shape(e);
    convcat_problem p = entry_problem(e, &sh);
    if (direct)
        p.groups = p.c;
    const unsigned seed = base_seed + (unsigned)(index * 131 + 300);
    cvc_verify v;
    int first_passed = 0;
    const convcat_status st = cvc_verify_chained(catalog, &p, index, seed, &v, &first_passed);
    ++runs, ++chained_runs;
    const int split = v.workspace_bytes && e->family != CONVCAT_FAMILY_GATHER;
    if (st == CONVCAT_OK && split)
        printf("\n  %s chained problem: the plan splits K (%zu bytes of workspace)", e->key, v.workspace_bytes);
    CU_ASSERT_FALSE(split);   /* no reduction launch between the two, which would hide a race */
    if (st != CONVCAT_OK || !first_passed || !v.passed || split) {
        ++failures;
        if (st != CONVCAT_OK)
            printf("\n  %s chained (seed %u): %s: %s", e->key, seed, convcat_status_string(st), convcat_last_error());
        else
            printf("\n  %s chained (seed %u): first run %s; second: rel. error %.3e (bound %.3e), %lld non-finite, "
                   "%lld outliers", e->key, seed, first_passed ? "passed" : "FAILED", v.rel_err, v.tolerance,
                   v.nonfinite, v.outliers);
    }
    CU_ASSERT_EQUAL(st, CONVCAT_OK);
    CU_ASSERT_TRUE(first_passed);
    CU_ASSERT_TRUE(v.passed);
}

/* The check itself must be able to fail: one damaged output element, NaN or
 * wrong, among >= 100k correct ones must be caught, on the first kernel of
 * each op in the catalog and a problem it passes. */
static void checker_catches_one_bad_element(convcat_op op)
{
    convcat_entry_info e;
    convcat_entry_info_get(catalog, first_kernel[op], &e);
    convcat_problem p = entry_problem(&e, &checker_shapes[op][e.dims - 1]);
    cvc_verify v;
    const cvc_epilogue plain = {.alpha = 1.0f};
    CU_ASSERT_EQUAL_FATAL(cvc_verify_run(catalog, &p, first_kernel[op], base_seed, &plain, CVC_SABOTAGE_NONE, &v),
                          CONVCAT_OK);
    CU_ASSERT_TRUE(v.passed);
    CU_ASSERT_EQUAL(cvc_verify_run(catalog, &p, first_kernel[op], base_seed, &plain, CVC_SABOTAGE_UNWRITTEN, &v),
                    CONVCAT_OK);
    CU_ASSERT_FALSE(v.passed);
    CU_ASSERT_EQUAL(v.nonfinite, 1);
    CU_ASSERT_EQUAL(cvc_verify_run(catalog, &p, first_kernel[op], base_seed, &plain, CVC_SABOTAGE_WRONG, &v),
                    CONVCAT_OK);
    CU_ASSERT_FALSE(v.passed);
    CU_ASSERT_EQUAL(v.outliers, 1);
    printf("(%s: wrong element gives rel. error %.2e, %lld outlier at %.3g times its bound) ", e.key, v.rel_err,
           v.outliers, v.worst);
}

/* tf32 sums that cancel: one output of 16 terms (1x1 filter; 16 pixels, channels or filters),
 * where the error of the operands' rounding is of the size of the terms, not of the result (the
 * bounds of reference.h).  Every seed must pass, on the first two tf32 kernels of each op and
 * family that take the problem. */
#define TF32_KERNELS 4096
static size_t tf32_kernels[TF32_KERNELS];   /* the registered tf32 kernels */
static int tf32_count;

static void test_cancelling_tf32_sums(void)
{
    static const shape shapes[3] = {
        [CONVCAT_FPROP] = P2(1, 1, 1, 16, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),    /* 1 output, 16 channels */
        [CONVCAT_DGRAD] = P2(1, 1, 1, 1, 16, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),    /* 1 output, 16 filters */
        [CONVCAT_WGRAD] = P2(1, 4, 4, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),     /* 1 output, 16 pixels */
    };
    int ran = 0, taken[3][4] = {{0}};   /* per op and family */
    for (int j = 0; j < tf32_count; ++j) {
        const size_t index = tf32_kernels[j];
        convcat_entry_info e;
        convcat_entry_info_get(catalog, index, &e);
        int *fam = &taken[e.op][e.family & 3];
        if (*fam >= 2)
            continue;
        shape sh = shapes[e.op];
        if (e.dims != 2)   /* the same sums along W */
            sh.w *= sh.h, sh.h = 1;
        const convcat_problem p = entry_problem(&e, &sh);
        if (convcat_check(catalog, index, &p, NULL, 0) != CONVCAT_OK)
            continue;
        ++ran, ++*fam;
        const cvc_epilogue plain = {.alpha = 1.0f};
        for (unsigned s = 0; s < 64; ++s) {
            cvc_verify v;
            const convcat_status st = cvc_verify_run(catalog, &p, index, base_seed + s, &plain, CVC_SABOTAGE_NONE, &v);
            if (st != CONVCAT_OK || !v.passed)
                printf("\n  %s (seed %u): %s, rel. error %.3e (bound %.3e), worst at %.2g of its bound", e.key,
                       base_seed + s, convcat_status_string(st), v.rel_err, v.tolerance, v.worst);
            CU_ASSERT_TRUE(st == CONVCAT_OK && v.passed);
        }
    }
    printf("(%d tf32 kernels, 64 seeds each) ", ran);
}

static void test_checker_fprop(void) { checker_catches_one_bad_element(CONVCAT_FPROP); }
static void test_checker_dgrad(void) { checker_catches_one_bad_element(CONVCAT_DGRAD); }
static void test_checker_wgrad(void) { checker_catches_one_bad_element(CONVCAT_WGRAD); }

/* convcat_autotune: the winner is a kernel that can run the problem and
 * passes the reference check; a cache remembers it (no timing the second
 * time: the same index and time come back) and survives a save and load.
 * The tensors (and the largest workspace of the candidates) come from
 * cvc_verify_autotune. */
static void autotune_picks_a_verified_kernel_and_remembers_it(convcat_op op)
{
    convcat_entry_info e;
    convcat_entry_info_get(catalog, first_kernel[op], &e);
    convcat_problem p = entry_problem(&e, &autotune_shapes[op][e.dims - 1]);
    char path[] = "/tmp/convcat-gpu-tune-XXXXXX";
    const int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    unlink(path);
    convcat_tune_cache *cache;
    CU_ASSERT_EQUAL_FATAL(convcat_tune_cache_load(path, &cache, NULL, 0), CONVCAT_OK);
    size_t index = (size_t)-1, again = (size_t)-2;
    double ms = 0, ms_again = 0;
    const convcat_status st = cvc_verify_autotune(catalog, &p, cache, 10, &index, &ms);
    if (st != CONVCAT_OK)
        printf("\n  autotune %s: %s: %s", op_names[op], convcat_status_string(st), convcat_last_error());
    CU_ASSERT_EQUAL_FATAL(st, CONVCAT_OK);
    CU_ASSERT_EQUAL(convcat_tune_cache_count(cache), 1);
    CU_ASSERT_TRUE(ms > 0);
    CU_ASSERT_EQUAL(convcat_check(catalog, index, &p, NULL, 0), CONVCAT_OK);
    CU_ASSERT_EQUAL(convcat_tune_cache_save(cache, path), CONVCAT_OK);
    convcat_tune_cache_free(cache);
    CU_ASSERT_EQUAL_FATAL(convcat_tune_cache_load(path, &cache, NULL, 0), CONVCAT_OK);
    CU_ASSERT_EQUAL(cvc_verify_autotune(catalog, &p, cache, 10, &again, &ms_again), CONVCAT_OK);
    CU_ASSERT_EQUAL(again, index);
    CU_ASSERT_DOUBLE_EQUAL(ms_again, ms, 1e-5);   /* from the cache, not timed again */
    convcat_tune_cache_free(cache);
    unlink(path);
    const cvc_epilogue plain = {.alpha = 1.0f};
    cvc_verify v;
    CU_ASSERT_EQUAL(cvc_verify_run(catalog, &p, index, base_seed, &plain, CVC_SABOTAGE_NONE, &v), CONVCAT_OK);
    CU_ASSERT_TRUE(v.passed);
    convcat_entry_info w;
    convcat_entry_info_get(catalog, index, &w);
    printf("(winner %s, %.4f ms, workspace %zu bytes) ", w.key, ms, v.workspace_bytes);
}

static void test_autotune_fprop(void) { autotune_picks_a_verified_kernel_and_remembers_it(CONVCAT_FPROP); }
static void test_autotune_dgrad(void) { autotune_picks_a_verified_kernel_and_remembers_it(CONVCAT_DGRAD); }
static void test_autotune_wgrad(void) { autotune_picks_a_verified_kernel_and_remembers_it(CONVCAT_WGRAD); }

/* The current test's name is the kernel key. */
/* Dynamic-cluster entries (sm100a) on a device of another arch: the plan is refused
 * with the arch reason before anything launches (on an sm_100 device they are
 * registered and verified as every other kernel of its arch). */
static void test_dynamic_entries_of_another_arch_are_refused(void)
{
    convcat_arch arch;
    convcat_device_arch(&arch, NULL);
    size_t seen = 0;
    for (size_t i = 0; i < convcat_count(catalog); ++i) {
        convcat_entry_info e;
        convcat_entry_info_get(catalog, i, &e);
        if (!e.fallback_m || e.arch == arch)
            continue;
        ++seen;
        const shape sh = P2(2, 16, 16, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1);
        const convcat_problem p = entry_problem(&e, &sh);
        char why[192];
        CU_ASSERT_EQUAL(convcat_check(catalog, i, &p, why, sizeof why), CONVCAT_OK);
        convcat_plan *plan = NULL;
        const convcat_status st = convcat_plan_create(catalog, &p, i, &plan);
        CU_ASSERT_EQUAL(st, CONVCAT_ERR_NO_DEVICE);
        CU_ASSERT_PTR_NULL(plan);
        CU_ASSERT_PTR_NOT_NULL(strstr(convcat_last_error(), "is sm100a code"));
        if (st != CONVCAT_ERR_NO_DEVICE)
            printf("\n  %s: %s", e.key, convcat_last_error());
    }
    printf(" (%zu dynamic-cluster entries of another arch)", seen);
}

/* A grouped list on a kernel (problems numbered from `first`; dgrad and wgrad without fprop's bias
 * and activation): how many ran and passed, each of those marked in passed[problem] (NULL: none). */
static int run_grouped_as(size_t index, const convcat_entry_info *e, const grouped_list *g, int first, char *passed,
                          convcat_op op)
{
    int ran = 0;
    for (size_t i = 0; i < g->count; ++i) {
        shape sh = g->shapes[i].sh;
        if (op != CONVCAT_FPROP)
            sh.bias = 0, sh.act = CONVCAT_ACT_NONE;
        const long long before = failures;
        if (check_op(index, e, &sh, g->shapes[i].groups, first + (int)i, op) && failures == before) {
            ++ran;
            if (passed)
                passed[i] = 1;
        }
    }
    return ran;
}

static int run_grouped(size_t index, const convcat_entry_info *e, const grouped_list *g, int first, char *passed)
{
    return run_grouped_as(index, e, g, first, passed, e->op);
}

static int run_list(size_t index, const convcat_entry_info *e, const shape_list *l, int first)
{
    int ran = 0;
    for (size_t i = 0; i < l->count; ++i) {
        shape sh = l->shapes[i];
        if (e->op != CONVCAT_FPROP)
            sh.bias = 0, sh.act = CONVCAT_ACT_NONE;
        ran += check_one(index, e, &sh, 1, first + (int)i);
    }
    return ran;
}

static void test_kernel(void)
{
    const char *key = CU_get_current_test()->pName;
    size_t index;
    convcat_entry_info e;
    CU_ASSERT_EQUAL_FATAL(convcat_find(catalog, key, &index), CONVCAT_OK);
    convcat_entry_info_get(catalog, index, &e);
    CU_ASSERT_FATAL((int)e.op >= 0 && (int)e.op < 3 && e.dims >= 1 && e.dims <= 3);
    const shape_list *set = &lists[e.op][e.dims - 1];
    int ran = 0;
    if (e.schedule == CONVCAT_GROUPED) {   /* grouped problems only (900..): its groups = 1 twin is coop */
        ran = run_grouped(index, &e, &packed_groups[e.dims - 1], 900, NULL);
        /* ... and the unit-stride ones as dgrad, run as the fprop of dy (DGRAD_AS_FPROP; 950..) */
        const int dgrad = run_grouped_as(index, &e, &packed_groups[e.dims - 1], 950, NULL, CONVCAT_DGRAD);
        if (ran < 3 || dgrad < 2) {
            ++failures;
            printf("\n  %s ran %d packed-group fprop and %d dgrad problems: fewer than 3 and 2", key, ran, dgrad);
        }
        CU_ASSERT_TRUE(ran >= 3 && dgrad >= 2);
        printf("(%d grouped fprop, %d dgrad problems run) ", ran, dgrad);
        return;
    }
    if (e.family == CONVCAT_FAMILY_DIRECT) {   /* depthwise problems (400..) and small groups (450..) only */
        ran = run_grouped(index, &e, &depthwise[e.dims - 1], 400, direct_ran[e.op][e.dims - 1][e.a_type & 7]);
        direct_kernels[e.op][e.dims - 1][e.a_type & 7] = 1;
        if (ran < 3) {
            ++failures;
            printf("\n  %s ran %d depthwise problems: fewer than 3", key, ran);
        }
        CU_ASSERT_TRUE(ran >= 3);
        const int small = run_grouped(index, &e, &small_groups[e.dims - 1], 450, group_ran[e.op][e.dims - 1][e.a_type & 7]);
        printf("(%d small-group problems run) ", small);
        if (e.op == CONVCAT_FPROP && e.a_type == e.out_type)
            check_chained(index, &e);
        return;
    }
    if (e.family == CONVCAT_FAMILY_GATHER && e.stages == 1) {   /* input tile: few-channel problems only (1000..) */
        const shape_list *l = &input_tile_lists[e.dims - 1];
        const long long skipped_before = tile_by_design;
        ran = run_list(index, &e, l, 1000);
        const int skipped = (int)(tile_by_design - skipped_before);   /* dgrad: more columns than the tile's */
        if (ran + skipped != (int)l->count || ran < 3) {
            ++failures;
            printf("\n  %s ran %d of its %zu few-channel problems (%d refused by design)", key, ran, l->count, skipped);
        }
        CU_ASSERT_TRUE(ran + skipped == (int)l->count && ran >= 3);
        if (e.op == CONVCAT_FPROP && e.a_type == e.out_type)
            check_chained(index, &e);
        return;
    }
    for (size_t i = 0; i < set->count; ++i)
        ran += check_one(index, &e, &set->shapes[i], 1, (int)i);
    if (e.dims == 2) {   /* 3D problems that fold, as 3D problems */
        int folded = 0;
        for (size_t i = 0; i < sizeof folded_3d / sizeof folded_3d[0]; ++i)
            folded += check_op_dims(index, &e, &folded_3d[i], 1, 980 + (int)i, e.op, 3);
        if (!folded) {
            ++failures;
            printf("\n  %s ran no 3D problem folded into 2D", key);
        }
        CU_ASSERT_TRUE(folded > 0);
        folded_runs += folded;
    }
    if (e.op == CONVCAT_WGRAD && e.a_type == CONVCAT_TF32) {   /* problems numbered on after the op's list */
        const shape_list *extra = &wgrad_tf32_lists[e.dims - 1];
        for (size_t i = 0; i < extra->count; ++i)
            ran += check_one(index, &e, &extra->shapes[i], 1, (int)(set->count + i));
    }
    if (ran < MIN_RUNS) {
        ++failures;
        printf("\n  %s ran %d problems of %zu: fewer than %d", key, ran, set->count, MIN_RUNS);
    }
    CU_ASSERT_TRUE(ran >= MIN_RUNS);
    if (e.family == CONVCAT_FAMILY_GATHER) {   /* any groups, odd channels, depthwise (problems 500..) */
        const long long splits_before = gather_split_runs;
        int more = run_grouped(index, &e, &any_groups[e.dims - 1], 500, NULL);
        if (e.op != CONVCAT_WGRAD) {   /* the same problems again, groups packed wherever the kernel can */
            const long long packed_before = gather_packed_runs;
            setenv("CONVCAT_GATHER_PACK", "1", 1);
            more += run_grouped(index, &e, &any_groups[e.dims - 1], 800, NULL);
            unsetenv("CONVCAT_GATHER_PACK");
            /* dgrad kernels of 16-bit types and 64 columns or more pack (gather.py packs_groups; the
             * lists hold groups of 1 and 2 channels), the others never */
            const int packs = e.op == CONVCAT_DGRAD && e.a_type != CONVCAT_TF32 && e.tile_n >= 64;
            if ((gather_packed_runs > packed_before) != packs) {
                ++failures;
                printf("\n  %s: %s of its grouped list packed groups", key, packs ? "no problem" : "problems");
                CU_FAIL("a gather kernel of PACKS_GROUPS never ran a packed-group plan, or another one did");
            }
        }
        more += run_list(index, &e, &odd_channels[e.dims - 1], 600);
        if (e.op != CONVCAT_WGRAD && gather_split_runs == splits_before) {   /* the lists hold long-K, few-tile problems */
            ++failures;
            printf("\n  %s: no problem of its lists split K", key);
            CU_FAIL("a gather fprop or dgrad kernel never ran a split-K plan");
        }
        more += run_grouped(index, &e, &depthwise[e.dims - 1], 700, NULL);
        if (e.op == CONVCAT_WGRAD)
            more += run_grouped(index, &e, &grouped[e.dims - 1], 100, NULL);
        printf("(%d grouped, odd-channel and depthwise problems run) ", more);
        if (e.op == CONVCAT_FPROP && e.a_type == e.out_type)
            check_chained(index, &e);
        return;
    }
    /* The op's list again with the sm90a tiles walked in raster bands of 3 rows (the rule keeps
     * these sizes N-fastest): fresh data, problems numbered from 200. */
    setenv("CONVCAT_RASTER_BAND", "3", 1);
    for (size_t i = 0; i < set->count; ++i)
        raster_runs += check_one(index, &e, &set->shapes[i], 1, 200 + (int)i);
    unsetenv("CONVCAT_RASTER_BAND");
    if (e.op == CONVCAT_FPROP && e.a_type == e.out_type)
        check_chained(index, &e);
    if (e.op != CONVCAT_WGRAD)
        return;
    if (cvc_has(&catalog->entries[index], CVC_F_CLUSTER_SPLITS)) {
        /* The list again with the slices of a tile as a cluster wherever the kernel can split
         * (CONVCAT_CLUSTER_SPLITS=1; the lists hold long pixel reductions): problems from 300. */
        const long long before = cluster_split_runs;
        setenv("CONVCAT_CLUSTER_SPLITS", "1", 1);
        for (size_t i = 0; i < set->count; ++i)
            check_one(index, &e, &set->shapes[i], 1, 300 + (int)i);
        unsetenv("CONVCAT_CLUSTER_SPLITS");
        if (cluster_split_runs == before) {
            ++failures;
            printf("\n  %s: no problem of its list split K in clusters", key);
            CU_FAIL("a CLUSTER_SPLITS kernel never ran a cluster split-K plan");
        }
        printf("(%lld cluster split-K runs) ", cluster_split_runs - before);
    }
    /* Grouped wgrad: a kernel made for it runs every problem; the others refuse every one. */
    const grouped_list *g = &grouped[e.dims - 1];
    int grouped_ran = 0;
    for (size_t i = 0; i < g->count; ++i)
        grouped_ran += check_one(index, &e, &g->shapes[i].sh, g->shapes[i].groups, 100 + (int)i);
    printf("(%d grouped problems run) ", grouped_ran);
}

/* Every list's problems are valid (output extents >= 1), and dgrad and wgrad
 * ask for no bias or activation; checked on the CPU, before any GPU work. */
static int lists_are_valid(void)
{
    int bad = 0;
    for (int op = 0; op < 3; ++op)
        for (int dims = 1; dims <= 3; ++dims) {
            const shape_list *l = &lists[op][dims - 1];
            const shape *extra[] = {&checker_shapes[op][dims - 1], &autotune_shapes[op][dims - 1]};
            for (size_t i = 0; i < l->count + 2; ++i) {
                const shape *sh = i < l->count ? &l->shapes[i] : extra[i - l->count];
                const convcat_problem p = problem_for((convcat_op)op, dims, CONVCAT_BF16, CONVCAT_BF16,
                                                      CONVCAT_BF16, sh);
                if (convcat_problem_output(&p, NULL, NULL, NULL) != CONVCAT_OK) {
                    fprintf(stderr, "test_gpu: %s %dD problem %zu: %s\n", op_names[op], dims, i, convcat_last_error());
                    ++bad;
                } else if (op != CONVCAT_FPROP && (sh->bias || sh->act != CONVCAT_ACT_NONE)) {
                    fprintf(stderr, "test_gpu: %s %dD problem %zu: bias and activation are fprop-only\n",
                            op_names[op], dims, i);
                    ++bad;
                }
            }
            if (op == CONVCAT_WGRAD)
                for (size_t i = 0; i < grouped[dims - 1].count; ++i) {
                    const grouped_shape *gs = &grouped[dims - 1].shapes[i];
                    const convcat_problem p = problem_for(CONVCAT_WGRAD, dims, CONVCAT_BF16, CONVCAT_BF16,
                                                          CONVCAT_BF16, &gs->sh);
                    if (convcat_problem_output(&p, NULL, NULL, NULL) != CONVCAT_OK || gs->sh.k != gs->sh.c ||
                        gs->groups < 1 || gs->sh.c % gs->groups) {
                        fprintf(stderr, "test_gpu: grouped wgrad %dD problem %zu is not valid\n", dims, i);
                        ++bad;
                    }
                }
            for (size_t i = 0; op == CONVCAT_WGRAD && i < wgrad_tf32_lists[dims - 1].count; ++i) {
                const convcat_problem p = problem_for(CONVCAT_WGRAD, dims, CONVCAT_TF32, CONVCAT_TF32, CONVCAT_F32,
                                                      &wgrad_tf32_lists[dims - 1].shapes[i]);
                if (convcat_problem_output(&p, NULL, NULL, NULL) != CONVCAT_OK) {
                    fprintf(stderr, "test_gpu: tf32 wgrad %dD problem %zu: %s\n", dims, i, convcat_last_error());
                    ++bad;
                }
            }
            const grouped_list *gl[3] = {&any_groups[dims - 1], &depthwise[dims - 1], &small_groups[dims - 1]};
            for (int j = 0; j < 3; ++j)
                for (size_t i = 0; i < gl[j]->count; ++i) {
                    const grouped_shape *gs = &gl[j]->shapes[i];
                    convcat_problem p = problem_for((convcat_op)op, dims, CONVCAT_BF16, CONVCAT_BF16, CONVCAT_BF16,
                                                    &gs->sh);
                    p.groups = gs->groups;
                    if (convcat_problem_output(&p, NULL, NULL, NULL) != CONVCAT_OK ||
                        (j == 1 && gs->groups != gs->sh.c) ||
                        (j == 2 && (gs->sh.c != gs->sh.k || gs->sh.c / gs->groups > 8 ||
                                    i >= sizeof group_ran[0][0][0]))) {
                        fprintf(stderr, "test_gpu: %s %dD %s problem %zu is not valid: %s\n", op_names[op], dims,
                                j == 2 ? "small-group" : j ? "depthwise" : "grouped", i, convcat_last_error());
                        ++bad;
                    }
                }
            for (size_t i = 0; i < odd_channels[dims - 1].count; ++i) {
                const convcat_problem p = problem_for((convcat_op)op, dims, CONVCAT_BF16, CONVCAT_BF16, CONVCAT_BF16,
                                                      &odd_channels[dims - 1].shapes[i]);
                if (convcat_problem_output(&p, NULL, NULL, NULL) != CONVCAT_OK) {
                    fprintf(stderr, "test_gpu: odd-channel %dD problem %zu: %s\n", dims, i, convcat_last_error());
                    ++bad;
                }
            }
            if (l->count < MIN_RUNS + 5) {
                fprintf(stderr, "test_gpu: %s %dD: only %zu problems\n", op_names[op], dims, l->count);
                ++bad;
            }
        }
    return bad == 0;
}

/* After the kernels: each depthwise problem ran on at least one direct kernel of every op, dims and
 * type the catalog has direct kernels for. */
static void test_every_depthwise_problem_ran_on_a_direct_kernel(void)
{
    int checked = 0;
    for (int op = 0; op < 3; ++op)
        for (int d = 0; d < 3; ++d)
            for (int t = 0; t < 8; ++t) {
                if (!direct_kernels[op][d][t])
                    continue;
                for (size_t i = 0; i < depthwise[d].count; ++i, ++checked)
                    if (!direct_ran[op][d][t][i]) {
                        printf("\n  %s %dD %s depthwise problem %zu ran on no direct kernel", op_names[op], d + 1,
                               convcat_dtype_name((convcat_dtype)t), 400 + i);
                        CU_FAIL("a depthwise problem no direct kernel ran");
                    }
            }
    printf("(%d problem x kernel kinds) ", checked);
}

/* After the kernels: each small-group problem ran on at least one direct kernel of every op, dims
 * and type the catalog has direct kernels for, where fprop's and dgrad's 16-byte vectors hold whole
 * groups (c = 8: 16-bit types only; wgrad takes every even c). */
static void test_every_small_group_problem_ran_on_a_direct_kernel(void)
{
    int checked = 0;
    for (int op = 0; op < 3; ++op)
        for (int d = 0; d < 3; ++d)
            for (int t = 0; t < 8; ++t) {
                if (!direct_kernels[op][d][t])
                    continue;
                const int vec = op == CONVCAT_WGRAD ? 8 : t == CONVCAT_F32 || t == CONVCAT_TF32 ? 4 : 8;
                for (size_t i = 0; i < small_groups[d].count; ++i) {
                    const grouped_shape *gs = &small_groups[d].shapes[i];
                    if (vec % (gs->sh.c / gs->groups))
                        continue;
                    ++checked;
                    if (!group_ran[op][d][t][i]) {
                        printf("\n  %s %dD %s small-group problem %zu ran on no direct kernel", op_names[op], d + 1,
                               convcat_dtype_name((convcat_dtype)t), 450 + i);
                        CU_FAIL("a small-group problem no direct kernel ran");
                    }
                }
            }
    printf("(%d problem x kernel kinds) ", checked);
}

/* Does `key` contain one of the comma-separated texts of `match`? */
static int matches(const char *key, const char *match)
{
    for (const char *t = match; *t;) {   /* any length: a list of whole keys is a selection too */
        const size_t n = strcspn(t, ",");
        if (n > 0 && n <= strlen(key))
            for (const char *k = key; *k; ++k)
                if (strncmp(k, t, n) == 0)
                    return 1;
        t += n + (t[n] == ',');
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = getenv("CONVCAT_TEST_CATALOG"), *match = NULL;
    long seed = -1;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--match") == 0 && i + 1 < argc)
            match = argv[++i];
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            char *end;
            seed = strtol(argv[++i], &end, 10);
            if (*end || seed < 0 || seed > 0xffffffffL) {
                fprintf(stderr, "test_gpu: --seed takes 0..4294967295\n");
                return 2;
            }
        } else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "test_gpu: no catalog (argument or CONVCAT_TEST_CATALOG)\n");
        return 99;
    }
    if (!lists_are_valid())
        return 1;
    char name[128];
    convcat_status st = cvc_verify_device(0, name, sizeof name);
    if (st == CONVCAT_ERR_NO_DRIVER || st == CONVCAT_ERR_NO_DEVICE) {
        printf("SKIP: no GPU to run the kernels on: %s\n", convcat_last_error());
        return 77;
    }
    if (st != CONVCAT_OK) {
        fprintf(stderr, "test_gpu: %s\n", convcat_last_error());
        return 99;
    }
    convcat_catalog *cat;
    if ((st = convcat_open(path, &cat)) != CONVCAT_OK) {
        fprintf(stderr, "test_gpu: %s\n", convcat_last_error());
        return 99;
    }
    catalog = cat;
    convcat_arch arch;
    convcat_device_arch(&arch, NULL);
    base_seed = seed >= 0 ? (unsigned)seed : (unsigned)time(NULL);
    printf("device %s, catalog %s, base seed %u\n", name, path, base_seed);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 99;
    CU_pSuite suites[3] = {CU_add_suite("gpu_fprop", NULL, NULL), CU_add_suite("gpu_dgrad", NULL, NULL),
                           CU_add_suite("gpu_wgrad", NULL, NULL)};
    size_t registered = 0, per_op[3] = {0, 0, 0};
    for (size_t i = 0; i < convcat_count(cat); ++i) {
        convcat_entry_info e;
        convcat_entry_info_get(cat, i, &e);
        if ((int)e.op < 0 || (int)e.op > 2 || e.arch != arch || (match && !matches(e.key, match)))
            continue;
        CU_add_test(suites[e.op], e.key, test_kernel);
        if (first_kernel[e.op] == (size_t)-1 && e.family != CONVCAT_FAMILY_DIRECT &&
            e.schedule != CONVCAT_GROUPED &&
            !(e.family == CONVCAT_FAMILY_GATHER && e.stages == 1))   /* dense problems of any C (no input tile) */
            first_kernel[e.op] = i;
        if (e.a_type == CONVCAT_TF32 && tf32_count < TF32_KERNELS)
            tf32_kernels[tf32_count++] = i;
        ++per_op[e.op];
        ++registered;
    }
    static const CU_TestFunc checkers[3] = {test_checker_fprop, test_checker_dgrad, test_checker_wgrad};
    static const CU_TestFunc tuners[3] = {test_autotune_fprop, test_autotune_dgrad, test_autotune_wgrad};
    if (registered) {
        CU_pSuite checks = CU_add_suite("checker and autotune", NULL, NULL);
        for (int op = 0; op < 3; ++op) {
            if (first_kernel[op] == (size_t)-1)
                continue;
            char n1[96], n2[96];
            snprintf(n1, sizeof n1, "checker_catches_one_bad_element_%s", op_names[op]);
            snprintf(n2, sizeof n2, "autotune_picks_a_verified_kernel_and_remembers_it_%s", op_names[op]);
            CU_add_test(checks, strdup(n1), checkers[op]);
            CU_add_test(checks, strdup(n2), tuners[op]);
        }
        if (tf32_count)
            CU_add_test(checks, "cancelling_tf32_sums_pass", test_cancelling_tf32_sums);
    }
    CU_add_test(CU_add_suite("dynamic clusters", NULL, NULL), "dynamic_entries_of_another_arch_are_refused",
                test_dynamic_entries_of_another_arch_are_refused);
    CU_add_test(CU_add_suite("depthwise coverage", NULL, NULL), "every_depthwise_problem_ran_on_a_direct_kernel",
                test_every_depthwise_problem_ran_on_a_direct_kernel);
    CU_add_test(CU_add_suite("small-group coverage", NULL, NULL), "every_small_group_problem_ran_on_a_direct_kernel",
                test_every_small_group_problem_ran_on_a_direct_kernel);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    const unsigned failed = CU_get_number_of_tests_failed();
    printf("\n%zu kernels (%zu fprop, %zu dgrad, %zu wgrad), %lld problem runs, %lld failed runs, %u failed tests"
           " (%lld strided dgrad problems refused by design: 128-accumulator kernels)\n"
           "raster bands of 3 tile rows: %lld of those runs; chained fprop pairs: %lld\n"
           "grouped wgrad: %lld runs, %lld problems refused by design (kernels of tile M != N or cluster M > 1)\n"
           "halo kernels: %lld problems refused by design (strided, or filters reaching past the input tile)\n"
           "input-tile dgrad kernels: %lld problems refused by design (more columns or shared memory than the tile's)\n"
           "by family: %lld TMA, %lld gather, %lld direct problem runs; %lld depthwise problems refused by design "
           "(a direct block's tile or threads; other direct kernels take them)\n"
           "gather fprop and dgrad runs that split K: %lld; that packed groups: %lld\n"
           "TMA wgrad runs whose slices of a tile were a cluster: %lld; 3D problems run folded on 2D kernels: %lld\n",
           registered, per_op[0], per_op[1], per_op[2], runs, failures, failed, by_design, raster_runs, chained_runs,
           grouped_runs, grouped_by_design, halo_by_design, tile_by_design, family_runs[CONVCAT_FAMILY_TMA],
           family_runs[CONVCAT_FAMILY_GATHER], family_runs[CONVCAT_FAMILY_DIRECT], direct_by_design,
           gather_split_runs, gather_packed_runs, cluster_split_runs, folded_runs);
    CU_cleanup_registry();
    convcat_close(cat);
    return failed || registered == 0 ? 1 : 0;
}
