/* test_tma.c: tensor-map parameters (runtime/src/tma.c), computed and checked on the CPU.
 *
 * cvc_tma_operands must give, for known 1D/2D/3D problems, the numbers
 * cuTensorMapEncodeIm2col/Tiled take: extents innermost first, byte strides,
 * im2col corners W first, traversal strides, boxes from the entry.  The two
 * validators must accept each TMA limit exactly and refuse one past it, with
 * a reason naming the limit.
 */
#include "internal.h"
#include "unit.h"

#define TWO32 (UINT64_C(1) << 32)
#define TWO40 (UINT64_C(1) << 40)


#define ASSERT_U64S(got, ...)                                                        \
    do {                                                                             \
        const uint64_t want_[] = {__VA_ARGS__};                                      \
        for (size_t i_ = 0; i_ < sizeof want_ / sizeof *want_; ++i_) {               \
            if ((uint64_t)(got)[i_] != want_[i_])                                    \
                printf("\n    %s:%d: %s[%zu] = %llu, wanted %llu", __FILE__, __LINE__, #got, i_, \
                       (unsigned long long)(got)[i_], (unsigned long long)want_[i_]);            \
            CU_ASSERT_EQUAL((uint64_t)(got)[i_], want_[i_]);                         \
        }                                                                            \
    } while (0)

#define ASSERT_INTS(got, ...)                                                        \
    do {                                                                             \
        const int want_[] = {__VA_ARGS__};                                           \
        for (size_t i_ = 0; i_ < sizeof want_ / sizeof *want_; ++i_) {               \
            if ((got)[i_] != want_[i_])                                              \
                printf("\n    %s:%d: %s[%zu] = %d, wanted %d", __FILE__, __LINE__, #got, i_, \
                       (int)(got)[i_], want_[i_]);                                   \
            CU_ASSERT_EQUAL((got)[i_], want_[i_]);                                   \
        }                                                                            \
    } while (0)

/* ---- cvc_tma_operands on known problems ------------------------------------------- */

static void test_fprop_1d_descriptors(void)
{
    const cvc_entry e = unit_entry("sm90a_fprop_1d_f16_f16_f32_f32_128x64x64_s3_c1x2_coop");
    convcat_problem p;
    convcat_problem_init(&p);
    p.dims = 1, p.a_type = p.b_type = CONVCAT_F16, p.out_type = CONVCAT_F32;
    p.n = 3, p.w = 100, p.c = 32, p.k = 16, p.s = 5;
    p.pad_lo[2] = 2, p.pad_hi[2] = 1, p.stride[2] = 2, p.dilation[2] = 3;
    cvc_im2col_desc a;
    cvc_tiled_desc b;
    unit_fprop_descs(&e, &p, &a, &b);
    CU_ASSERT_EQUAL(a.rank, 3);
    CU_ASSERT_EQUAL(a.elem_bytes, 2);
    ASSERT_U64S(a.dims, 32, 100, 3);                 /* C, W, N */
    ASSERT_U64S(a.strides, 64, 6400);                /* bytes of W, N */
    ASSERT_INTS(a.lower, -2);                        /* -pad_lo */
    ASSERT_INTS(a.upper, 1 - 4 * 3);                 /* pad_hi - (S - 1) * dil */
    ASSERT_U64S(a.max_offset, 12);
    ASSERT_U64S(a.elem_strides, 1, 2, 1);            /* the conv stride on W only */
    CU_ASSERT_EQUAL(a.channels_per_pixel, 64);       /* tile K */
    CU_ASSERT_EQUAL(a.pixels_per_column, 64);        /* tile M / cluster N */
    CU_ASSERT_EQUAL(a.swizzle_bytes, 128);
    CU_ASSERT_EQUAL(b.rank, 3);
    CU_ASSERT_EQUAL(b.elem_bytes, 2);
    ASSERT_U64S(b.dims, 32, 5, 16);                  /* C, S, K */
    ASSERT_U64S(b.strides, 64, 320);
    ASSERT_U64S(b.box, 64, 1, 64);                   /* tile K, one tap, tile N / cluster M */
    ASSERT_U64S(b.elem_strides, 1, 1, 1);
    CU_ASSERT_EQUAL(b.swizzle_bytes, 128);
    CU_ASSERT_TRUE(cvc_im2col_desc_valid(&a, NULL, 0));
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&b, NULL, 0));
}

/* The epilogue's store: a (K, N*Z*P*Q) view of the output in 64-row x 128-byte boxes. */
static void test_output_descriptor(void)
{
    const char *keys[] = {"sm90a_fprop_1d_f16_f16_f32_f32_128x64x64_s3_c1x2_coop",
                          "sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_coop"};
    for (size_t i = 0; i < CVC_ARRAY_LEN(keys); ++i) {
        const cvc_entry e = unit_entry(keys[i]);
        convcat_problem p;
        convcat_problem_init(&p);
        p.dims = e.k.dims, p.a_type = e.k.a, p.b_type = e.k.b, p.out_type = e.k.out;
        p.n = 3, p.h = e.k.dims == 2 ? 7 : 1, p.w = 100, p.c = 32, p.k = 24, p.s = 3;
        p.pad_lo[2] = p.pad_hi[2] = 1;
        const uint64_t m = 3 * (uint64_t)p.h * 100, ob = e.k.out == CONVCAT_F32 ? 4 : 2;
        cvc_tiled_desc y;
        cvc_tma_output(&e, unit_view(&p), 1, &y);
        CU_ASSERT_EQUAL(y.rank, 2);
        CU_ASSERT_EQUAL(y.elem_bytes, (int)ob);
        ASSERT_U64S(y.dims, 24, m);                  /* K innermost, then the output pixels */
        ASSERT_U64S(y.strides, 24 * ob);
        ASSERT_U64S(y.box, 128 / ob, 64);            /* one 128-byte swizzle row x 64 rows */
        ASSERT_U64S(y.elem_strides, 1, 1);
        CU_ASSERT_EQUAL(y.swizzle_bytes, 128);
        CU_ASSERT_TRUE(cvc_tiled_desc_valid(&y, NULL, 0));
    }
    /* Tile N 160 of bf16: chunks of 32 columns, 64-byte rows under a 64-byte swizzle. */
    {
        const cvc_entry e = unit_entry("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x160x64_s4_c1x1_coop");
        convcat_problem p;
        convcat_problem_init(&p);
        p.a_type = p.b_type = p.out_type = CONVCAT_BF16;
        p.n = 2, p.h = 8, p.w = 8, p.c = 64, p.k = 320;
        cvc_tiled_desc y;
        cvc_tma_output(&e, unit_view(&p), 1, &y);
        ASSERT_U64S(y.dims, 320, 128);
        ASSERT_U64S(y.box, 32, 64);
        CU_ASSERT_EQUAL(y.swizzle_bytes, 64);
        CU_ASSERT_TRUE(cvc_tiled_desc_valid(&y, NULL, 0));
    }
    /* fprop split-K: the f32 slices as (K, M, splits), one slice deep. */
    {
        const cvc_entry e = unit_entry(keys[1]);
        convcat_problem p;
        convcat_problem_init(&p);
        p.n = 3, p.h = 7, p.w = 100, p.c = 32, p.k = 24, p.s = 3, p.r = 3;
        p.pad_lo[2] = p.pad_hi[2] = p.pad_lo[1] = p.pad_hi[1] = 1;
        cvc_tiled_desc y;
        cvc_tma_output(&e, unit_view(&p), 4, &y);
        CU_ASSERT_EQUAL(y.rank, 3);
        CU_ASSERT_EQUAL(y.elem_bytes, 4);
        ASSERT_U64S(y.dims, 24, 3 * 7 * 100, 4);
        ASSERT_U64S(y.strides, 96, 96 * 2100);
        ASSERT_U64S(y.box, 32, 64, 1);
        CU_ASSERT_TRUE(cvc_tiled_desc_valid(&y, NULL, 0));
    }
    /* A box wider than the swizzle span is refused. */
    cvc_entry e = unit_entry(keys[1]);
    e.y_box_cols = 128;
    convcat_problem p;
    convcat_problem_init(&p);
    p.k = 256;
    cvc_tiled_desc y;
    cvc_tma_output(&e, unit_view(&p), 1, &y);
    char why[160];
    CU_ASSERT_FALSE(cvc_tiled_desc_valid(&y, why, sizeof why));
    UNIT_ASSERT_MENTIONS(why, "swizzle span");
}

/* Dgrad (unit stride): A is dy im2col over dx's pixel grid, its bounding box
 * starting (taps - 1) * dil - pad_lo before each dx pixel; B is the filter
 * read MN-major: 64 input channels x (tile K / cluster M) dy channels. */
static void test_dgrad_2d_descriptors(void)
{
    const cvc_entry e = unit_entry("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_coop");
    convcat_problem p;
    convcat_problem_init(&p);
    p.op = CONVCAT_DGRAD;
    p.n = 2, p.h = 10, p.w = 12, p.c = 48, p.k = 24, p.r = 3, p.s = 5;
    p.pad_lo[1] = 1, p.pad_lo[2] = 2, p.pad_hi[1] = 3, p.pad_hi[2] = 4, p.dilation[1] = 2;
    /* Forward output: P = 10 + 4 - 5 + 1 = 10, Q = 12 + 6 - 5 + 1 = 14. */
    cvc_operand_desc a, b;
    cvc_tma_operands(&e, unit_view(&p), &a, &b);
    CU_ASSERT_TRUE(a.im2col);
    CU_ASSERT_FALSE(b.im2col);
    ASSERT_U64S(a.i.dims, 24, 14, 10, 2);            /* dy: K, Q, P, N */
    ASSERT_U64S(a.i.strides, 48, 672, 6720);
    ASSERT_INTS(a.i.lower, 2 - 4, 1 - 4);            /* pad_lo - (taps - 1) * dil, W first */
    ASSERT_INTS(a.i.upper, -4, -3);                  /* -pad_hi */
    ASSERT_U64S(a.i.max_offset, 4, 4);
    ASSERT_U64S(a.i.elem_strides, 1, 1, 1, 1);
    CU_ASSERT_EQUAL(a.i.channels_per_pixel, 64);
    CU_ASSERT_EQUAL(a.i.pixels_per_column, 128);
    /* The box walks dx's grid: extent + upper - lower = W and H. */
    CU_ASSERT_EQUAL((int64_t)a.i.dims[1] + a.i.upper[0] - a.i.lower[0], 12);
    CU_ASSERT_EQUAL((int64_t)a.i.dims[2] + a.i.upper[1] - a.i.lower[1], 10);
    ASSERT_U64S(b.t.dims, 48, 5, 3, 24);             /* w: C, S, R, K */
    ASSERT_U64S(b.t.box, 64, 1, 1, 32);              /* 64 channels x tile K / cluster M rows of K */
    CU_ASSERT_TRUE(cvc_im2col_desc_valid(&a.i, NULL, 0));
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&b.t, NULL, 0));
    cvc_tiled_desc y;
    cvc_tma_output(&e, unit_view(&p), 1, &y);
    ASSERT_U64S(y.dims, 48, 2 * 10 * 12);           /* dx: C, N*H*W */
}

/* The kernels divide by multiply and shift (cvc_divider): exact for every x
 * in 0..2^31 - 1, checked here on edges and a sweep for many divisors. */
static uint32_t fast_div(uint32_t x, const uint32_t m[2])
{
    return (uint32_t)((((uint64_t)x * m[0]) >> 32) + x) >> m[1];
}

static void test_divider_is_exact(void)
{
    const uint32_t ds[] = {1, 2, 3, 5, 7, 14, 28, 56, 100, 196, 784, 3136, 12544, 50176, 65535, 1u << 20, 1000003,
                           (1u << 31) - 1};
    for (size_t i = 0; i < CVC_ARRAY_LEN(ds); ++i) {
        uint32_t m[2];
        cvc_divider(ds[i], m);
        int bad = 0;
        const uint32_t xs[] = {0, 1, ds[i] - 1, ds[i], ds[i] + 1, 2 * ds[i] - 1, (1u << 31) - 1, (1u << 31) - 2};
        for (size_t j = 0; j < CVC_ARRAY_LEN(xs); ++j)
            bad += xs[j] < (1u << 31) && fast_div(xs[j], m) != xs[j] / ds[i];
        for (uint32_t x = 0; x < (1u << 31) - 40000u; x += 40000u + i)
            bad += fast_div(x, m) != x / ds[i];
        if (bad)
            printf("\n    divisor %u: %d wrong quotients", ds[i], bad);
        CU_ASSERT_EQUAL(bad, 0);
    }
}

/* tf32 dgrad: B is the filter's K-major copy in the workspace, (K, C, S, R) for
 * 2D, read in boxes of 32 K x (tile N / cluster M) C per tap. */
static void test_dgrad_tf32_descriptors(void)
{
    const cvc_entry e = unit_entry("sm90a_dgrad_2d_tf32_tf32_f32_f32_128x128x32_s4_c2x1_coop");
    convcat_problem p;
    convcat_problem_init(&p);
    p.op = CONVCAT_DGRAD, p.a_type = p.b_type = CONVCAT_TF32, p.out_type = CONVCAT_F32;
    p.n = 2, p.h = 10, p.w = 12, p.c = 48, p.k = 24, p.r = 3, p.s = 5;
    p.pad_lo[1] = p.pad_hi[1] = 1, p.pad_lo[2] = p.pad_hi[2] = 2;
    cvc_operand_desc a, b;
    cvc_tma_operands(&e, unit_view(&p), &a, &b);
    CU_ASSERT_TRUE(a.im2col);
    CU_ASSERT_FALSE(b.im2col);
    CU_ASSERT_EQUAL(b.t.elem_bytes, 4);
    ASSERT_U64S(b.t.dims, 24, 48, 5, 3);             /* K, C, S, R */
    ASSERT_U64S(b.t.strides, 96, 96 * 48, 96 * 48 * 5);
    ASSERT_U64S(b.t.box, 32, 64, 1, 1);              /* 128 bytes of K x 128 / 2 rows of C */
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&b.t, NULL, 0));
    CU_ASSERT_EQUAL(a.i.channels_per_pixel, 32);
    CU_ASSERT_TRUE(cvc_im2col_desc_valid(&a.i, NULL, 0));
}

/* Strided dgrad: the stride phases of dx, each a dense problem over the taps
 * that reach it.  1D, W 10, S 3, pad 1, stride 2 (Q 5): even dx pixels get
 * tap 1 at dy[j], odd ones taps 2 and 0 at dy[j] and dy[j + 1]. */
static void test_dgrad_stride_phases(void)
{
    const cvc_entry e = unit_entry("sm90a_dgrad_1d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop");
    convcat_problem p;
    convcat_problem_init(&p);
    p.op = CONVCAT_DGRAD, p.dims = 1;
    p.n = 2, p.w = 10, p.c = 16, p.k = 24, p.s = 3, p.pad_lo[2] = p.pad_hi[2] = 1, p.stride[2] = 2;
    CU_ASSERT_EQUAL(unit_view(&p)->phases, 2);
    cvc_dgrad_phase ph;
    cvc_dgrad_phase_at(unit_view(&p), 0, &ph);
    const cvc_phase_axis *w = &ph.axis[0];
    ASSERT_INTS(((int[]){w->ph, w->pixels, w->taps, w->tap0, w->tap_step, w->dil, w->lower, w->upper}),
                0, 5, 1, 1, 2, 1, 0, 0);
    cvc_dgrad_phase_at(unit_view(&p), 1, &ph);
    ASSERT_INTS(((int[]){w->ph, w->pixels, w->taps, w->tap0, w->tap_step, w->dil, w->lower, w->upper}),
                1, 5, 2, 2, 2, 1, 0, 0);
    cvc_im2col_desc a;
    cvc_tma_dgrad_a(&e, unit_view(&p), &ph, &a);
    ASSERT_U64S(a.dims, 24, 5, 2);                   /* dy: K, Q, N */
    ASSERT_INTS(a.lower, 0);
    ASSERT_U64S(a.max_offset, 1);                    /* two taps, one dy pixel apart */
    ASSERT_U64S(a.elem_strides, 1, 1, 1);
    CU_ASSERT_TRUE(cvc_im2col_desc_valid(&a, NULL, 0));
    /* Dilation 2 and stride 2: odd dx pixels get no tap (dx = beta * C there), even
     * ones all three, one dy pixel apart.  W 9, S 3, pad 2: Q 5. */
    p.w = 9, p.dilation[2] = 2, p.pad_lo[2] = p.pad_hi[2] = 2;
    cvc_dgrad_phase_at(unit_view(&p), 0, &ph);
    ASSERT_INTS(((int[]){w->ph, w->pixels, w->taps, w->tap0, w->tap_step, w->dil, w->lower, w->upper}),
                0, 5, 3, 2, 1, 1, -1, -1);
    cvc_dgrad_phase_at(unit_view(&p), 1, &ph);
    CU_ASSERT_EQUAL(w->pixels, 4);
    CU_ASSERT_EQUAL(w->taps, 0);
    /* Unit stride is one phase: the filter turned around. */
    p.stride[2] = 1;
    CU_ASSERT_EQUAL(unit_view(&p)->phases, 1);
    cvc_dgrad_phase_at(unit_view(&p), 0, &ph);
    ASSERT_INTS(((int[]){w->pixels, w->taps, w->tap0, w->tap_step, w->dil, w->lower}), 9, 3, 2, 1, 2, 2 - 4);
    /* 2D, stride 2 x 3 over a 5 x 4 dx: phases for every residue with pixels, W fastest. */
    convcat_problem q;
    convcat_problem_init(&q);
    q.op = CONVCAT_DGRAD, q.n = 1, q.h = 5, q.w = 2, q.c = 8, q.k = 8, q.r = 3, q.s = 3;
    q.pad_lo[1] = q.pad_hi[1] = q.pad_lo[2] = q.pad_hi[2] = 1, q.stride[1] = 2, q.stride[2] = 3;
    CU_ASSERT_EQUAL(unit_view(&q)->phases, 2 * 2);   /* W 2 < stride 3: residues 0, 1 */
    cvc_dgrad_phase_at(unit_view(&q), 3, &ph);
    CU_ASSERT_EQUAL(ph.axis[0].ph, 1);
    CU_ASSERT_EQUAL(ph.axis[1].ph, 1);
    CU_ASSERT_EQUAL(ph.axis[1].pixels, 2);
}

/* Each phase's taps are exactly the r < S with r * dil = ph + pad (mod stride), every such r,
 * counted here one by one over small strides, dilations, pads and filters.  And a filter and
 * stride in the millions is solved at once, not searched tap by tap. */
static void test_dgrad_phase_taps_by_count(void)
{
    convcat_problem p;
    convcat_problem_init(&p);
    p.op = CONVCAT_DGRAD, p.dims = 1, p.n = 1, p.c = 8, p.k = 8;
    int checked = 0;
    for (int st = 1; st <= 7; ++st)
        for (int dil = 1; dil <= 6; ++dil)
            for (int s = 1; s <= 5; ++s)
                for (int pad = 0; pad <= (s - 1) * dil; ++pad) {
                    p.w = 3 * st + 2, p.s = s, p.stride[2] = st, p.dilation[2] = dil;
                    p.pad_lo[2] = pad, p.pad_hi[2] = 0;
                    cvc_view view;
                    if (cvc_view_make(&p, &view, NULL, 0) != CONVCAT_OK)
                        continue;   /* the filter reaches past the padded input */
                    const cvc_view *v = &view;
                    for (int i = 0; i < v->phases; ++i) {
                        cvc_dgrad_phase ph;
                        cvc_dgrad_phase_at(v, i, &ph);
                        const cvc_phase_axis *w = &ph.axis[0];
                        int taps = 0, last = -1, first = -1;
                        for (int r = 0; r < s; ++r)
                            if ((r * dil - w->ph - pad) % st == 0)
                                first = first < 0 ? r : first, last = r, ++taps;
                        CU_ASSERT_EQUAL(w->taps, taps);
                        if (taps) {
                            CU_ASSERT_EQUAL(w->tap0, last);
                            CU_ASSERT_EQUAL(w->tap0 - (w->taps - 1) * w->tap_step, first);
                            CU_ASSERT_EQUAL((w->ph + pad - w->tap0 * dil) % st, 0);
                        }
                        ++checked;
                    }
                }
    CU_ASSERT_TRUE(checked > 1000);
    /* S 10486271 at stride 50331647, dilation 16, pad 2: 16 r = ph + 2 (mod the stride) has its
     * least solution below S for ph 0, 1 and 14 to 17 (r 6291456, 9437184, 1, ...), one tap each. */
    p.w = 24, p.s = 10486271, p.stride[2] = 50331647, p.dilation[2] = 16, p.pad_lo[2] = 2;
    p.pad_hi[2] = 178956971;
    const cvc_view *v = unit_view(&p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_EQUAL(v->phases, 24);
    int reached = 0;
    for (int i = 0; i < v->phases; ++i) {
        cvc_dgrad_phase ph;
        cvc_dgrad_phase_at(v, i, &ph);
        const cvc_phase_axis *w = &ph.axis[0];
        if (w->taps) {
            CU_ASSERT_EQUAL(((int64_t)w->tap0 * 16 - w->ph - 2) % 50331647, 0);
            CU_ASSERT_EQUAL(w->taps, 1);
            CU_ASSERT_TRUE(w->tap0 < p.s);
            CU_ASSERT_TRUE(w->ph <= 1 || (w->ph >= 14 && w->ph <= 17));
            CU_ASSERT_TRUE(w->ph != 14 || w->tap0 == 1);
            ++reached;
        }
    }
    CU_ASSERT_EQUAL(reached, 6);
}

/* Wgrad: A is dy as (K, N*Z*P*Q) tiles of 64 x (tile K / cluster N); B is x
 * im2col as for fprop, 64 channels x (tile K / cluster M) pixels; the output
 * is dw as (C, T*R*S, K), or the f32 split-K workspace with a splits axis. */
static void test_wgrad_3d_descriptors(void)
{
    const cvc_entry e = unit_entry("sm90a_wgrad_3d_f16_f16_f32_f16_128x128x64_s4_c1x2_coop");
    convcat_problem p;
    convcat_problem_init(&p);
    p.op = CONVCAT_WGRAD, p.dims = 3, p.a_type = p.b_type = p.out_type = CONVCAT_F16;
    p.n = 2, p.d = 5, p.h = 6, p.w = 7, p.c = 16, p.k = 40, p.t = 3, p.r = 3, p.s = 3;
    for (int i = 0; i < 3; ++i)
        p.pad_lo[i] = p.pad_hi[i] = 1;
    p.stride[2] = 2;   /* Q = (7 + 2 - 3) / 2 + 1 = 4 */
    cvc_operand_desc a, b;
    cvc_tma_operands(&e, unit_view(&p), &a, &b);
    CU_ASSERT_FALSE(a.im2col);
    CU_ASSERT_TRUE(b.im2col);
    ASSERT_U64S(a.t.dims, 40, 2 * 5 * 6 * 4);        /* dy: K, N*Z*P*Q */
    ASSERT_U64S(a.t.box, 64, 32);                    /* 64 filters x tile K / cluster N pixels */
    ASSERT_U64S(b.i.dims, 16, 7, 6, 5, 2);           /* x: C, W, H, D, N */
    ASSERT_INTS(b.i.lower, -1, -1, -1);
    ASSERT_INTS(b.i.upper, 1 - 2, 1 - 2, 1 - 2);
    ASSERT_U64S(b.i.elem_strides, 1, 2, 1, 1, 1);
    CU_ASSERT_EQUAL(b.i.channels_per_pixel, 64);
    CU_ASSERT_EQUAL(b.i.pixels_per_column, 64);      /* cluster M 1 */
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&a.t, NULL, 0));
    CU_ASSERT_TRUE(cvc_im2col_desc_valid(&b.i, NULL, 0));
    cvc_tiled_desc y;
    cvc_tma_output(&e, unit_view(&p), 1, &y);
    CU_ASSERT_EQUAL(y.rank, 3);
    CU_ASSERT_EQUAL(y.elem_bytes, 2);
    ASSERT_U64S(y.dims, 16, 27, 40);                 /* dw: C, T*R*S, K */
    ASSERT_U64S(y.box, 64, 1, 64);
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&y, NULL, 0));
    /* C a multiple of 64: GEMM N runs flat over T*R*S*C, the output is (T*R*S*C, 1, K). */
    convcat_problem q = p;
    q.c = 128;
    cvc_tma_output(&e, unit_view(&q), 1, &y);
    ASSERT_U64S(y.dims, 27 * 128, 1, 40);
    ASSERT_U64S(y.box, 64, 1, 64);
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&y, NULL, 0));
    cvc_tma_output(&e, unit_view(&p), 5, &y);
    CU_ASSERT_EQUAL(y.rank, 4);
    CU_ASSERT_EQUAL(y.elem_bytes, 4);
    ASSERT_U64S(y.dims, 16, 27, 40, 5);              /* f32 partial sums, one slice per split */
    ASSERT_U64S(y.strides, 64, 64 * 27, 64 * 27 * 40);
    ASSERT_U64S(y.box, 32, 1, 64, 1);
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&y, NULL, 0));
    /* Grouped (K == C = 128, 16 groups of 8): x and dy as ungrouped, over all channels; dw is
     * (c, T*R*S, K), its map's box no wider than c (the kernel stores the diagonal blocks itself). */
    q.k = 128, q.groups = 16;
    cvc_tma_operands(&e, unit_view(&q), &a, &b);
    ASSERT_U64S(a.t.dims, 128, 2 * 5 * 6 * 4);
    ASSERT_U64S(b.i.dims, 128, 7, 6, 5, 2);
    CU_ASSERT_EQUAL(b.i.channels_per_pixel, 64);
    cvc_tma_output(&e, unit_view(&q), 1, &y);
    ASSERT_U64S(y.dims, 8, 27, 128);
    ASSERT_U64S(y.strides, 16, 16 * 27);
    ASSERT_U64S(y.box, 8, 1, 64);
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&y, NULL, 0));
    /* Its split-K slices hold the diagonal blocks' f32 sums in dw's layout: (c, T*R*S, K, splits). */
    cvc_tma_output(&e, unit_view(&q), 3, &y);
    CU_ASSERT_EQUAL(y.rank, 4);
    CU_ASSERT_EQUAL(y.elem_bytes, 4);
    ASSERT_U64S(y.dims, 8, 27, 128, 3);
    ASSERT_U64S(y.strides, 8 * 4, 8 * 4 * 27, 8 * 4 * 27 * 128);
    ASSERT_U64S(y.box, 8, 1, 64, 1);
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&y, NULL, 0));
    q.groups = 2;   /* c = 64: a whole 128-byte box */
    cvc_tma_output(&e, unit_view(&q), 1, &y);
    ASSERT_U64S(y.dims, 64, 27, 128);
    ASSERT_U64S(y.box, 64, 1, 64);
}

/* tf32 wgrad: the same operands in column boxes of 32 f32 channels (128 bytes)
 * x 32 pixels (tile K 32), which the consumers copy K-major; C = 32 is one
 * whole box per tap, so tiles run flat over T*R*S*C. */
static void test_wgrad_tf32_descriptors(void)
{
    const cvc_entry e = unit_entry("sm90a_wgrad_2d_tf32_tf32_f32_f32_128x64x32_s4_c1x1_coop");
    convcat_problem p;
    convcat_problem_init(&p);
    p.op = CONVCAT_WGRAD, p.dims = 2, p.a_type = p.b_type = CONVCAT_TF32, p.out_type = CONVCAT_F32;
    p.n = 2, p.h = 6, p.w = 7, p.c = 36, p.k = 40, p.r = 3, p.s = 3;
    p.pad_lo[1] = p.pad_hi[1] = p.pad_lo[2] = p.pad_hi[2] = 1;
    cvc_operand_desc a, b;
    cvc_tma_operands(&e, unit_view(&p), &a, &b);
    CU_ASSERT_EQUAL(a.t.elem_bytes, 4);
    ASSERT_U64S(a.t.dims, 40, 2 * 6 * 7);            /* dy: K, N*P*Q */
    ASSERT_U64S(a.t.box, 32, 32);                    /* 32 filters x 32 pixels */
    ASSERT_U64S(b.i.dims, 36, 7, 6, 2);              /* x: C, W, H, N */
    CU_ASSERT_EQUAL(b.i.channels_per_pixel, 32);
    CU_ASSERT_EQUAL(b.i.pixels_per_column, 32);
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&a.t, NULL, 0));
    CU_ASSERT_TRUE(cvc_im2col_desc_valid(&b.i, NULL, 0));
    cvc_tiled_desc y;
    cvc_tma_output(&e, unit_view(&p), 1, &y);
    ASSERT_U64S(y.dims, 36, 9, 40);                  /* C = 36: per tap, dw as (C, R*S, K) */
    p.c = 32;
    CU_ASSERT_TRUE(cvc_wgrad_flat(&e, unit_view(&p)));
    cvc_tma_output(&e, unit_view(&p), 1, &y);
    ASSERT_U64S(y.dims, 9 * 32, 1, 40);
    ASSERT_U64S(y.box, 32, 1, 64);
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&y, NULL, 0));
}

static void test_fprop_2d_descriptors(void)
{
    const cvc_entry e = unit_entry("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_coop");
    convcat_problem p;
    convcat_problem_init(&p);
    p.n = 2, p.h = 10, p.w = 12, p.c = 64, p.k = 24, p.r = 3, p.s = 5;
    p.pad_lo[1] = 1, p.pad_lo[2] = 2, p.pad_hi[1] = 3, p.pad_hi[2] = 4;
    p.stride[1] = 2, p.stride[2] = 3, p.dilation[1] = 2, p.dilation[2] = 1;
    cvc_im2col_desc a;
    cvc_tiled_desc b;
    unit_fprop_descs(&e, &p, &a, &b);
    CU_ASSERT_EQUAL(a.rank, 4);
    ASSERT_U64S(a.dims, 64, 12, 10, 2);              /* C, W, H, N */
    ASSERT_U64S(a.strides, 128, 1536, 15360);
    ASSERT_INTS(a.lower, -2, -1);                    /* W, H */
    ASSERT_INTS(a.upper, 4 - 4 * 1, 3 - 2 * 2);
    ASSERT_U64S(a.max_offset, 4, 4);
    ASSERT_U64S(a.elem_strides, 1, 3, 2, 1);
    CU_ASSERT_EQUAL(a.channels_per_pixel, 64);
    CU_ASSERT_EQUAL(a.pixels_per_column, 128);       /* cluster N 1: the whole tile */
    CU_ASSERT_EQUAL(b.rank, 4);
    ASSERT_U64S(b.dims, 64, 5, 3, 24);               /* C, S, R, K */
    ASSERT_U64S(b.strides, 128, 640, 1920);
    ASSERT_U64S(b.box, 64, 1, 1, 64);                /* cluster M 2: half the tile's N */
    ASSERT_U64S(b.elem_strides, 1, 1, 1, 1);
    CU_ASSERT_TRUE(cvc_im2col_desc_valid(&a, NULL, 0));
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&b, NULL, 0));
}

/* Schedule halo: A is x as a tiled (C, W, H, N) map whose box is one output block's
 * input tile (tile M / 8 + 2 rows of 8 + 2 pixels, one image), and the output a
 * (K, Q, P, N) map whose box is one epilogue chunk (rows of 8 pixels). */
static void test_halo_descriptors(void)
{
    const cvc_entry e = unit_entry("sm90a_fprop_2d_bf16_bf16_f32_bf16_224x64x64_s8_c1x1_halo");
    convcat_problem p;
    convcat_problem_init(&p);
    p.n = 3, p.h = 56, p.w = 54, p.c = 72, p.k = 136, p.r = 3, p.s = 3;
    p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = 1;
    cvc_operand_desc a, b;
    cvc_tma_operands(&e, unit_view(&p), &a, &b);
    CU_ASSERT_FALSE(a.im2col);
    CU_ASSERT_FALSE(b.im2col);
    CU_ASSERT_EQUAL(a.t.rank, 4);
    ASSERT_U64S(a.t.dims, 72, 54, 56, 3);            /* C, W, H, N */
    ASSERT_U64S(a.t.strides, 144, 144 * 54, 144 * 54 * 56);
    ASSERT_U64S(a.t.box, 64, 10, 30, 1);             /* 28 rows x 8 columns, 2 more each way */
    ASSERT_U64S(a.t.elem_strides, 1, 1, 1, 1);
    CU_ASSERT_EQUAL(a.t.swizzle_bytes, 128);
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&a.t, NULL, 0));
    ASSERT_U64S(b.t.dims, 72, 3, 3, 136);            /* C, S, R, K */
    ASSERT_U64S(b.t.box, 64, 1, 1, 64);
    cvc_tiled_desc y;
    cvc_tma_output(&e, unit_view(&p), 1, &y);
    CU_ASSERT_EQUAL(y.rank, 4);
    ASSERT_U64S(y.dims, 136, 54, 56, 3);             /* K, Q, P, N */
    ASSERT_U64S(y.box, 64, 8, 14, 1);               /* a chunk: 14 of the block's 28 rows */
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&y, NULL, 0));
    /* The persistent grid walks every image's blocks: 2 of 28 rows x 7 of 8 columns. */
    const cvc_view *v = unit_view(&p);   /* the GEMM view: M pixels, N filters, K taps x channels */
    CU_ASSERT_TRUE(v->gemm.m == 3 * 56 * 54 && v->gemm.n == 136 && v->gemm.k == 9 * 72);
    CU_ASSERT_TRUE(v->out[1] == 56 && v->out[2] == 54 && v->pixels == 3 * 56 * 54 && v->taps == 9);
    CU_ASSERT_TRUE(cvc_has(&e, CVC_F_HALO) && e.halo_cols == 8 && e.halo_reach == 2 && e.halo_tile_rows == 30);
    int64_t tm, tn;
    cvc_cluster_tiles(&e, unit_view(&p), &tm, &tn);
    CU_ASSERT_EQUAL(tm, 3 * 2 * 7);
    CU_ASSERT_EQUAL(tn, 3);
}

/* Tile K 128 (f16/bf16): a K-major operand arrives as two loads a stage, one per
 * 128-byte span of K (channels c.. and c + 64..), so its boxes stay 64 channels
 * wide; MN-major ones get 128 K rows per 64-wide column (a slice per cluster CTA). */
static void test_tile_k_128_descriptors(void)
{
    const cvc_entry e = unit_entry("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x128_s3_c2x1_coop");
    convcat_problem p;
    convcat_problem_init(&p);
    p.n = 2, p.h = 10, p.w = 12, p.c = 200, p.k = 24, p.r = 3, p.s = 3;
    p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = 1;
    cvc_im2col_desc a;
    cvc_tiled_desc b;
    unit_fprop_descs(&e, &p, &a, &b);
    ASSERT_U64S(a.dims, 200, 12, 10, 2);             /* C, W, H, N */
    CU_ASSERT_EQUAL(a.channels_per_pixel, 64);       /* one span; the kernel loads c and c + 64 */
    CU_ASSERT_EQUAL(a.pixels_per_column, 128);
    ASSERT_U64S(b.box, 64, 1, 1, 64);                /* one span x tile N / cluster M */
    CU_ASSERT_TRUE(cvc_im2col_desc_valid(&a, NULL, 0));
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&b, NULL, 0));
    CU_ASSERT_EQUAL(cvc_k_iters(&e, unit_view(&p)), 9 * 2);   /* taps x 128-channel blocks (200: 2) */

    const cvc_entry d = unit_entry("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x128x128_s2_c2x1_coop");
    convcat_problem q = p;
    q.op = CONVCAT_DGRAD;
    cvc_operand_desc da, db;
    cvc_tma_operands(&d, unit_view(&q), &da, &db);
    CU_ASSERT_EQUAL(da.i.channels_per_pixel, 64);    /* dy: one span of its K channels */
    CU_ASSERT_EQUAL(da.i.pixels_per_column, 128);
    ASSERT_U64S(db.t.box, 64, 1, 1, 64);             /* 64 channels x 128 / cluster M rows of K */
    CU_ASSERT_TRUE(cvc_im2col_desc_valid(&da.i, NULL, 0));
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&db.t, NULL, 0));
    CU_ASSERT_EQUAL(unit_view(&q)->gemm.k, 9 * 24);   /* dgrad: taps x dy's K */
    CU_ASSERT_EQUAL(cvc_k_iters(&d, unit_view(&q)), 9 * 1);   /* K = 24: one block, zero-filled past 24 */

    const cvc_entry w = unit_entry("sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x128_s3_c1x1_coop");
    q.op = CONVCAT_WGRAD;
    cvc_tma_operands(&w, unit_view(&q), &da, &db);
    ASSERT_U64S(da.t.box, 64, 128);                  /* dy: 64 filters x 128 pixels */
    CU_ASSERT_EQUAL(db.i.channels_per_pixel, 64);
    CU_ASSERT_EQUAL(db.i.pixels_per_column, 128);    /* x: 128 pixels of a 64-channel column */
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&da.t, NULL, 0));
    CU_ASSERT_TRUE(cvc_im2col_desc_valid(&db.i, NULL, 0));
    CU_ASSERT_EQUAL(unit_view(&q)->gemm.k, 2 * 10 * 12);   /* wgrad: the output pixels */
    CU_ASSERT_EQUAL(cvc_k_iters(&w, unit_view(&q)), (2 * 10 * 12 + 127) / 128);
}

/* Tile K 32 of bf16: K-major boxes of one 64-byte row take a 64-byte swizzle (the kernel's wgmma
 * descriptors read 64-byte rows), an MN-major one (dgrad's B) keeps the 128-byte span of its
 * 64-channel columns.  DenseNet's 3x3 dgrad of 32 filters: a tap a stage, no zero-fill. */
static void test_tile_k_32_descriptors(void)
{
    const cvc_entry e = unit_entry("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x64x32_s8_c1x1_coop");
    convcat_problem p;
    convcat_problem_init(&p);
    p.n = 2, p.h = 10, p.w = 12, p.c = 24, p.k = 48, p.r = p.s = 3;
    p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = 1;
    cvc_im2col_desc a;
    cvc_tiled_desc b;
    unit_fprop_descs(&e, &p, &a, &b);
    CU_ASSERT_EQUAL(a.channels_per_pixel, 32);
    CU_ASSERT_EQUAL(a.swizzle_bytes, 64);
    ASSERT_U64S(b.box, 32, 1, 1, 64);                /* 32 channels x tile N */
    CU_ASSERT_EQUAL(b.swizzle_bytes, 64);
    CU_ASSERT_TRUE(cvc_im2col_desc_valid(&a, NULL, 0));
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&b, NULL, 0));
    CU_ASSERT_EQUAL(cvc_k_iters(&e, unit_view(&p)), 9);   /* a tap a stage */

    const cvc_entry d = unit_entry("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x128x32_s8_c1x1_coop");
    convcat_problem q = p;
    q.op = CONVCAT_DGRAD, q.c = 128, q.k = 32;
    cvc_operand_desc da, db;
    cvc_tma_operands(&d, unit_view(&q), &da, &db);
    CU_ASSERT_EQUAL(da.i.channels_per_pixel, 32);    /* dy: the tap's 32 filters */
    CU_ASSERT_EQUAL(da.i.swizzle_bytes, 64);
    ASSERT_U64S(db.t.box, 64, 1, 1, 32);             /* 64 channels x 32 rows of K */
    CU_ASSERT_EQUAL(db.t.swizzle_bytes, 128);
    CU_ASSERT_TRUE(cvc_im2col_desc_valid(&da.i, NULL, 0));
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&db.t, NULL, 0));
    CU_ASSERT_EQUAL(cvc_k_iters(&d, unit_view(&q)), 9);
    /* A tile K 64 kernel on the same problem: 128-byte spans, half of each stage zero-fill. */
    const cvc_entry d64 = unit_entry("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop");
    cvc_tma_operands(&d64, unit_view(&q), &da, &db);
    CU_ASSERT_EQUAL(da.i.channels_per_pixel, 64);
    CU_ASSERT_EQUAL(da.i.swizzle_bytes, 128);
    CU_ASSERT_EQUAL(db.t.swizzle_bytes, 128);
}

static void test_fprop_3d_descriptors(void)
{
    const cvc_entry e = unit_entry("sm90a_fprop_3d_f16_f16_f32_f32_64x128x64_s3_c1x2_coop");
    convcat_problem p;
    convcat_problem_init(&p);
    p.dims = 3, p.a_type = p.b_type = CONVCAT_F16, p.out_type = CONVCAT_F32;
    p.n = 1, p.d = 6, p.h = 7, p.w = 8, p.c = 16, p.k = 8, p.t = 2, p.r = 3, p.s = 4;
    const int lo[3] = {1, 2, 3}, hi[3] = {0, 1, 2}, st[3] = {2, 1, 3}, dil[3] = {3, 1, 2};
    memcpy(p.pad_lo, lo, sizeof lo);
    memcpy(p.pad_hi, hi, sizeof hi);
    memcpy(p.stride, st, sizeof st);
    memcpy(p.dilation, dil, sizeof dil);
    cvc_im2col_desc a;
    cvc_tiled_desc b;
    unit_fprop_descs(&e, &p, &a, &b);
    CU_ASSERT_EQUAL(a.rank, 5);
    ASSERT_U64S(a.dims, 16, 8, 7, 6, 1);             /* C, W, H, D, N */
    ASSERT_U64S(a.strides, 32, 256, 1792, 10752);
    ASSERT_INTS(a.lower, -3, -2, -1);                /* W, H, D */
    ASSERT_INTS(a.upper, 2 - 3 * 2, 1 - 2 * 1, 0 - 1 * 3);
    ASSERT_U64S(a.max_offset, 6, 2, 3);
    ASSERT_U64S(a.elem_strides, 1, 3, 1, 2, 1);
    CU_ASSERT_EQUAL(a.pixels_per_column, 32);        /* tile M 64 / cluster N 2 */
    CU_ASSERT_EQUAL(b.rank, 5);
    ASSERT_U64S(b.dims, 16, 4, 3, 2, 8);             /* C, S, R, T, K */
    ASSERT_U64S(b.strides, 32, 128, 384, 768);
    ASSERT_U64S(b.box, 64, 1, 1, 1, 128);
    CU_ASSERT_TRUE(cvc_im2col_desc_valid(&a, NULL, 0));
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&b, NULL, 0));
}

/* Element sizes other than 2: 8-bit (sm100a; sm90a has no fp8 kernels) and tf32 entries of the space. */
static void test_fprop_element_sizes(void)
{
    const struct {
        const char *key;
        convcat_dtype ab;
        int bytes;
    } cases[] = {
        {"sm100a_fprop_2d_e4m3_e4m3_f32_bf16_128x256x128_s4_c2x1_2sm", CONVCAT_E4M3, 1},
        {"sm90a_fprop_2d_tf32_tf32_f32_f32_128x128x32_s4_c1x1_coop", CONVCAT_TF32, 4},
    };
    for (size_t i = 0; i < CVC_ARRAY_LEN(cases); ++i) {
        const cvc_entry e = unit_entry(cases[i].key);
        convcat_problem p;
        convcat_problem_init(&p);
        p.a_type = p.b_type = cases[i].ab;
        p.n = 1, p.h = 4, p.w = 4, p.c = 32, p.k = 16;
        cvc_im2col_desc a;
        cvc_tiled_desc b;
        unit_fprop_descs(&e, &p, &a, &b);
        const uint64_t row = 32u * (unsigned)cases[i].bytes;
        CU_ASSERT_EQUAL(a.elem_bytes, cases[i].bytes);
        CU_ASSERT_EQUAL(b.elem_bytes, cases[i].bytes);
        ASSERT_U64S(a.strides, row, row * 4, row * 16);
        ASSERT_U64S(b.strides, row, row, row);
        CU_ASSERT_EQUAL(a.channels_per_pixel * (unsigned)cases[i].bytes, 128);
        CU_ASSERT_TRUE(cvc_im2col_desc_valid(&a, NULL, 0));
        CU_ASSERT_TRUE(cvc_tiled_desc_valid(&b, NULL, 0));
    }
}

/* ---- validators: helpers ------------------------------------------------------------ */

/* A valid im2col descriptor of `rank`: 2-byte elements, C 64, spatial 32, N 4, packed. */
static cvc_im2col_desc im2col_base(int rank)
{
    cvc_im2col_desc d;
    memset(&d, 0, sizeof d);
    d.rank = rank;
    d.elem_bytes = 2;
    uint64_t bytes = 2;
    for (int i = 0; i < rank; ++i) {
        d.dims[i] = i == 0 ? 64 : i == rank - 1 ? 4 : 32;
        bytes *= d.dims[i];
        if (i + 1 < rank)
            d.strides[i] = bytes;
        d.elem_strides[i] = 1;
    }
    d.channels_per_pixel = 64;
    d.pixels_per_column = 128;
    d.swizzle_bytes = 128;
    return d;
}

/* A valid tiled descriptor of `rank`: 2-byte elements, dims 64, 3, ..., 128, box 64, 1, ..., 128. */
static cvc_tiled_desc tiled_base(int rank)
{
    cvc_tiled_desc d;
    memset(&d, 0, sizeof d);
    d.rank = rank;
    d.elem_bytes = 2;
    uint64_t bytes = 2;
    for (int i = 0; i < rank; ++i) {
        d.dims[i] = i == 0 ? 64 : i == rank - 1 ? 128 : 3;
        d.box[i] = i == 0 ? 64 : i == rank - 1 ? 128 : 1;
        bytes *= d.dims[i];
        if (i + 1 < rank)
            d.strides[i] = bytes;
        d.elem_strides[i] = 1;
    }
    d.swizzle_bytes = 128;
    return d;
}

/* Packed byte strides for the current extents and element size. */
static void repack_i2c(cvc_im2col_desc *d)
{
    uint64_t bytes = (uint64_t)d->elem_bytes;
    for (int i = 0; i + 1 < d->rank; ++i)
        d->strides[i] = bytes *= d->dims[i];
}

static void repack_tiled(cvc_tiled_desc *d)
{
    uint64_t bytes = (uint64_t)d->elem_bytes;
    for (int i = 0; i + 1 < d->rank; ++i)
        d->strides[i] = bytes *= d->dims[i];
}

static void expect_i2c(int line, const cvc_im2col_desc *d, bool want, const char *mention)
{
    char why[256] = "";
    const bool ok = cvc_im2col_desc_valid(d, why, sizeof why);
    if (ok != want)
        printf("\n    test_tma.c:%d: im2col descriptor %s (%s)", line, ok ? "accepted" : "refused", why);
    CU_ASSERT_EQUAL(ok, want);
    if (want)
        return;
    CU_ASSERT_TRUE(why[0] != '\0');
    if (mention && !strstr(why, mention))
        printf("\n    test_tma.c:%d: \"%s\" does not mention \"%s\"", line, why, mention);
    CU_ASSERT_TRUE(!mention || strstr(why, mention));
}

static void expect_tiled(int line, const cvc_tiled_desc *d, bool want, const char *mention)
{
    char why[256] = "";
    const bool ok = cvc_tiled_desc_valid(d, why, sizeof why);
    if (ok != want)
        printf("\n    test_tma.c:%d: tiled descriptor %s (%s)", line, ok ? "accepted" : "refused", why);
    CU_ASSERT_EQUAL(ok, want);
    if (want)
        return;
    CU_ASSERT_TRUE(why[0] != '\0');
    if (mention && !strstr(why, mention))
        printf("\n    test_tma.c:%d: \"%s\" does not mention \"%s\"", line, why, mention);
    CU_ASSERT_TRUE(!mention || strstr(why, mention));
}

/* `field` = good is accepted, = bad refused with `mention`; the rest from `base`. */
#define I2C_BOTH(base, field, good, bad, mention)                         \
    do {                                                                  \
        cvc_im2col_desc d_ = (base);                                      \
        d_.field = (good);                                                \
        expect_i2c(__LINE__, &d_, true, NULL);                            \
        d_.field = (bad);                                                 \
        expect_i2c(__LINE__, &d_, false, (mention));                      \
    } while (0)

#define TILED_BOTH(base, field, good, bad, mention)                       \
    do {                                                                  \
        cvc_tiled_desc d_ = (base);                                       \
        d_.field = (good);                                                \
        expect_tiled(__LINE__, &d_, true, NULL);                          \
        d_.field = (bad);                                                 \
        expect_tiled(__LINE__, &d_, false, (mention));                    \
    } while (0)

/* ---- im2col limits ----------------------------------------------------------------------- */

static void test_im2col_rank_is_3_to_5(void)
{
    for (int rank = 3; rank <= 5; ++rank) {
        const cvc_im2col_desc d = im2col_base(rank);
        expect_i2c(__LINE__, &d, true, NULL);
    }
    cvc_im2col_desc d = im2col_base(3);
    d.rank = 2;
    expect_i2c(__LINE__, &d, false, "im2col rank 2");
    d = im2col_base(5);
    d.rank = 6;
    expect_i2c(__LINE__, &d, false, "im2col rank 6");
    I2C_BOTH(im2col_base(4), elem_bytes, 2, 0, "rank");
}

static void test_im2col_extents_up_to_2_32(void)
{
    for (int rank = 3; rank <= 5; ++rank) {
        const cvc_im2col_desc base = im2col_base(rank);
        I2C_BOTH(base, dims[rank - 1], TWO32, TWO32 + 1, "outside 1..2^32");
        I2C_BOTH(base, dims[rank - 1], 1, 0, "tensor extent 0");
    }
    /* An inner extent: its stride and all above grow with it. */
    cvc_im2col_desc d = im2col_base(3);
    d.dims[0] = 8;                       /* 16-byte rows */
    d.channels_per_pixel = 8;
    d.dims[1] = TWO32;
    d.strides[0] = 16;
    d.strides[1] = 16 * TWO32;
    expect_i2c(__LINE__, &d, true, NULL);
    d.dims[1] = TWO32 + 1;
    expect_i2c(__LINE__, &d, false, "tensor extent 4294967297 of dimension 1");
}

static void test_im2col_strides_multiple_of_16_below_2_40(void)
{
    for (int rank = 3; rank <= 5; ++rank) {
        const cvc_im2col_desc base = im2col_base(rank);
        const uint64_t top = base.strides[rank - 2];
        I2C_BOTH(base, strides[rank - 2], top + 16, top + 8, "must be a multiple of 16");
        I2C_BOTH(base, strides[rank - 2], TWO40 - 16, TWO40, "below 2^40");
        /* Each stride covers the dimensions inside it. */
        I2C_BOTH(base, strides[rank - 2], top, top - 16, "cover the inner dimensions");
        I2C_BOTH(base, strides[0], 128, 112, "byte stride 112 of dimension 1");
    }
}

/* A stride that covers its inner dimensions only once the product wraps at 2^64 is refused. */
static void test_im2col_strides_do_not_wrap(void)
{
    cvc_im2col_desc d = im2col_base(4);
    d.dims[0] = 1u << 20;                      /* C: 2 MiB rows */
    d.channels_per_pixel = 64;
    d.dims[1] = (1u << 19) - 1;                /* W */
    d.strides[0] = 1u << 21;
    d.strides[1] = TWO40 - 16;                 /* H stride: the largest, it covers W */
    d.dims[2] = (UINT64_C(1) << 24) + 1;       /* H: (2^40 - 16) * H passes 2^64 ... */
    d.strides[2] = d.strides[1] * d.dims[2];   /* ... and wraps to 2^40 - 2^28 - 16 */
    d.dims[3] = 1;
    CU_ASSERT_EQUAL(d.strides[2], TWO40 - (UINT64_C(1) << 28) - 16);
    expect_i2c(__LINE__, &d, false, "byte stride");
    d.dims[2] = 1u << 23;                      /* neighbour: 2^63 - 2^27 bytes, but still >= 2^40 */
    d.strides[2] = d.strides[1] * d.dims[2];
    expect_i2c(__LINE__, &d, false, "below 2^40");
    d.dims[2] = 1;                             /* and one that fits */
    d.strides[2] = d.strides[1];
    expect_i2c(__LINE__, &d, true, NULL);
}

/* Corners are signed 16/8/5-bit per spatial axis; offsets unsigned 16/8/5-bit. */
static void test_im2col_corner_and_offset_ranges_per_rank(void)
{
    static const struct {
        int rank, lo, hi;
        uint32_t off;
        const char *range;
    } ranks[] = {{3, -32768, 32767, 65535, "[-32768, 32767] for a 1D tensor"},
                 {4, -128, 127, 255, "[-128, 127] for a 2D tensor"},
                 {5, -16, 15, 31, "[-16, 15] for a 3D tensor"}};
    static const char *const axis[3] = {"along W", "along H", "along D"};
    for (size_t r = 0; r < CVC_ARRAY_LEN(ranks); ++r) {
        cvc_im2col_desc base = im2col_base(ranks[r].rank);
        for (int i = 0; i < ranks[r].rank - 2; ++i)
            base.dims[1 + i] = 2 * (uint64_t)-ranks[r].lo;   /* a bounding box for either corner at a limit */
        repack_i2c(&base);
        expect_i2c(__LINE__, &base, true, NULL);
        for (int i = 0; i < ranks[r].rank - 2; ++i) {
            I2C_BOTH(base, lower[i], ranks[r].lo, ranks[r].lo - 1, axis[i]);
            I2C_BOTH(base, lower[i], ranks[r].lo, ranks[r].lo - 1, ranks[r].range);
            I2C_BOTH(base, lower[i], ranks[r].hi, ranks[r].hi + 1, ranks[r].range);
            I2C_BOTH(base, upper[i], ranks[r].hi, ranks[r].hi + 1, axis[i]);
            I2C_BOTH(base, upper[i], ranks[r].lo, ranks[r].lo - 1, ranks[r].range);
            I2C_BOTH(base, max_offset[i], ranks[r].off, ranks[r].off + 1, "im2col offset");
            I2C_BOTH(base, max_offset[i], ranks[r].off, UINT32_MAX, axis[i]);
        }
    }
}

static void test_im2col_bounding_box_not_empty(void)
{
    cvc_im2col_desc d = im2col_base(4);
    d.dims[2] = 4;                             /* H */
    repack_i2c(&d);
    d.lower[1] = 0;
    I2C_BOTH(d, upper[1], -3, -4, "bounding box along H is empty");
    d.upper[1] = 0;
    I2C_BOTH(d, lower[1], 3, 4, "bounding box along H is empty");
}

static void test_im2col_channels_per_pixel(void)
{
    const cvc_im2col_desc base = im2col_base(4);           /* 2-byte elements, 128-byte swizzle */
    I2C_BOTH(base, channels_per_pixel, 64, 72, "within the 128-byte swizzle span");
    I2C_BOTH(base, channels_per_pixel, 8, 4, "a multiple of 16 bytes");
    I2C_BOTH(base, channels_per_pixel, 16, 12, "channelsPerPixel 12 (24 bytes)");
    I2C_BOTH(base, channels_per_pixel, 8, 0, "channelsPerPixel 0");
    cvc_im2col_desc d = base;
    d.swizzle_bytes = 64;
    I2C_BOTH(d, channels_per_pixel, 32, 40, "within the 64-byte swizzle span");
    d.swizzle_bytes = 32;
    I2C_BOTH(d, channels_per_pixel, 16, 24, "within the 32-byte swizzle span");
    /* Without swizzling, 1-byte elements: the 256-channel limit itself. */
    d = base;
    d.swizzle_bytes = 0;
    d.elem_bytes = 1;
    d.dims[0] = 512;
    repack_i2c(&d);
    I2C_BOTH(d, channels_per_pixel, 256, 272, "must be 1..256");
}

static void test_im2col_pixels_per_column(void)
{
    const cvc_im2col_desc base = im2col_base(3);
    I2C_BOTH(base, pixels_per_column, 1024, 1025, "pixelsPerColumn 1025 is outside 1..1024");
    I2C_BOTH(base, pixels_per_column, 1, 0, "pixelsPerColumn 0");
}

static void test_im2col_element_strides_1_to_8(void)
{
    for (int rank = 3; rank <= 5; ++rank) {
        const cvc_im2col_desc base = im2col_base(rank);
        for (int i = 0; i < rank; ++i) {
            char says[64];
            snprintf(says, sizeof says, "element stride 9 of dimension %d is outside 1..8", i);
            I2C_BOTH(base, elem_strides[i], 8, 9, says);
            I2C_BOTH(base, elem_strides[i], 1, 0, "element stride 0");
        }
    }
}

/* ---- tiled limits ------------------------------------------------------------------------- */

static void test_tiled_rank_is_1_to_5(void)
{
    for (int rank = 1; rank <= 5; ++rank) {
        const cvc_tiled_desc d = tiled_base(rank);
        expect_tiled(__LINE__, &d, true, NULL);
    }
    cvc_tiled_desc d = tiled_base(1);
    d.rank = 0;
    expect_tiled(__LINE__, &d, false, "tiled rank 0");
    d = tiled_base(5);
    d.rank = 6;
    expect_tiled(__LINE__, &d, false, "tiled rank 6");
    TILED_BOTH(tiled_base(2), elem_bytes, 2, 0, "rank");
}

static void test_tiled_extents_and_strides(void)
{
    for (int rank = 2; rank <= 5; ++rank) {
        const cvc_tiled_desc base = tiled_base(rank);
        const uint64_t top = base.strides[rank - 2];
        TILED_BOTH(base, dims[rank - 1], TWO32, TWO32 + 1, "outside 1..2^32");
        TILED_BOTH(base, dims[rank - 1], 1, 0, "tensor extent 0");
        TILED_BOTH(base, strides[rank - 2], top + 16, top + 8, "multiple of 16");
        TILED_BOTH(base, strides[rank - 2], TWO40 - 16, TWO40, "below 2^40");
        TILED_BOTH(base, strides[rank - 2], top, top - 16, "cover the inner dimensions");
    }
    /* The wrap-around of test_im2col_strides_do_not_wrap, on a tiled tensor. */
    cvc_tiled_desc d = tiled_base(3);
    d.dims[1] = (UINT64_C(1) << 24) + 1;
    d.strides[0] = TWO40 - 16;
    d.strides[1] = d.strides[0] * d.dims[1];
    expect_tiled(__LINE__, &d, false, "byte stride");
    d.dims[1] = 1;
    d.strides[1] = d.strides[0];
    expect_tiled(__LINE__, &d, true, NULL);
}

static void test_tiled_box_1_to_256(void)
{
    for (int rank = 1; rank <= 5; ++rank) {
        cvc_tiled_desc base = tiled_base(rank);
        base.swizzle_bytes = 0;                /* box[0] = 256 is 512 bytes */
        for (int i = 0; i < rank; ++i) {
            char says[64];
            snprintf(says, sizeof says, "box extent 257 of dimension %d is outside 1..256", i);
            TILED_BOTH(base, box[i], 256, 257, says);
            TILED_BOTH(base, box[i], i == 0 ? 8 : 1, 0, "box extent 0");
        }
    }
}

static void test_tiled_inner_box_bytes(void)
{
    const cvc_tiled_desc base = tiled_base(4);             /* 2-byte elements, 128-byte swizzle */
    TILED_BOTH(base, box[0], 8, 4, "box inner extent is 8 bytes");
    TILED_BOTH(base, box[0], 64, 72, "144 bytes: a multiple of 16 within the 128-byte swizzle span");
    TILED_BOTH(base, box[0], 16, 12, "24 bytes");
    cvc_tiled_desc d = base;
    d.elem_bytes = 4;
    repack_tiled(&d);
    TILED_BOTH(d, box[0], 4, 2, "8 bytes");
    d.elem_bytes = 1;
    repack_tiled(&d);
    TILED_BOTH(d, box[0], 16, 8, "8 bytes");
    d.swizzle_bytes = 64;
    TILED_BOTH(d, box[0], 64, 80, "within the 64-byte swizzle span");
    d.swizzle_bytes = 0;
    TILED_BOTH(d, box[0], 256, 8, "8 bytes");
}

static void test_tiled_element_strides_1_to_8(void)
{
    const cvc_tiled_desc base = tiled_base(5);
    for (int i = 0; i < 5; ++i) {
        TILED_BOTH(base, elem_strides[i], 8, 9, "outside 1..8");
        TILED_BOTH(base, elem_strides[i], 1, 0, "element stride 0");
    }
}

/* The reason buffer is optional and bounded. */
static void test_reason_buffer_is_optional(void)
{
    cvc_im2col_desc a = im2col_base(4);
    a.pixels_per_column = 0;
    CU_ASSERT_FALSE(cvc_im2col_desc_valid(&a, NULL, 0));
    char small[10];
    CU_ASSERT_FALSE(cvc_im2col_desc_valid(&a, small, sizeof small));
    CU_ASSERT_EQUAL(strlen(small), sizeof small - 1);
    cvc_tiled_desc b = tiled_base(2);
    b.box[1] = 0;
    CU_ASSERT_FALSE(cvc_tiled_desc_valid(&b, NULL, 0));
    CU_ASSERT_FALSE(cvc_tiled_desc_valid(&b, small, sizeof small));
    CU_ASSERT_EQUAL(strlen(small), sizeof small - 1);
}

int main(void)
{
    CU_TestInfo tests[] = {
        {"fprop 1D descriptors", test_fprop_1d_descriptors},
        {"fprop 2D descriptors", test_fprop_2d_descriptors},
        {"tile K 128 descriptors", test_tile_k_128_descriptors},
        {"tile K 32 descriptors", test_tile_k_32_descriptors},
        {"halo descriptors", test_halo_descriptors},
        {"fprop 3D descriptors", test_fprop_3d_descriptors},
        {"fprop element sizes", test_fprop_element_sizes},
        {"dgrad 2D descriptors", test_dgrad_2d_descriptors},
        {"wgrad 3D descriptors", test_wgrad_3d_descriptors},
        {"wgrad tf32 descriptors", test_wgrad_tf32_descriptors},
        {"dgrad stride phases", test_dgrad_stride_phases},
        {"dgrad phase taps by count", test_dgrad_phase_taps_by_count},
        {"dgrad tf32 descriptors", test_dgrad_tf32_descriptors},
        {"divider is exact", test_divider_is_exact},
        {"output descriptor", test_output_descriptor},
        {"im2col rank is 3 to 5", test_im2col_rank_is_3_to_5},
        {"im2col extents up to 2^32", test_im2col_extents_up_to_2_32},
        {"im2col strides multiple of 16 below 2^40", test_im2col_strides_multiple_of_16_below_2_40},
        {"im2col strides do not wrap", test_im2col_strides_do_not_wrap},
        {"im2col corner and offset ranges per rank", test_im2col_corner_and_offset_ranges_per_rank},
        {"im2col bounding box not empty", test_im2col_bounding_box_not_empty},
        {"im2col channels per pixel", test_im2col_channels_per_pixel},
        {"im2col pixels per column", test_im2col_pixels_per_column},
        {"im2col element strides 1 to 8", test_im2col_element_strides_1_to_8},
        {"tiled rank is 1 to 5", test_tiled_rank_is_1_to_5},
        {"tiled extents and strides", test_tiled_extents_and_strides},
        {"tiled box 1 to 256", test_tiled_box_1_to_256},
        {"tiled inner box bytes", test_tiled_inner_box_bytes},
        {"tiled element strides 1 to 8", test_tiled_element_strides_1_to_8},
        {"reason buffer is optional", test_reason_buffer_is_optional},
        CU_TEST_INFO_NULL,
    };
    return unit_main("tma", tests, NULL, NULL);
}
