/* test_rules.c: the problem rules (runtime/src/problem.c, cvc_view_make) and the kernel
 * rules (runtime/src/rules.c, gather.c, direct.c), each both ways.
 *
 * Entries come from the test index (tests/unit.h, unit_entry): the fields the generator
 * derives for each key, so any kernel of the space can be tested, not only those of the
 * built catalog.  Every refusal is paired with the neighbouring problem that passes, and its
 * reason must name what broke.  The output-shape and FLOP helpers, and convcat_check on the
 * real catalog, are here too.
 */
#include <limits.h>

#include "internal.h"
#include "unit.h"

/* ---- entries and problems --------------------------------------------------------- */


#define E2_KEY "sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop"
#define E2C_KEY "sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_coop"
#define E1_KEY "sm90a_fprop_1d_f16_f16_f32_f32_128x64x64_s3_c1x2_coop"
#define E3_KEY "sm90a_fprop_3d_f16_f16_f32_f32_64x128x64_s3_c1x2_coop"

static convcat_problem problem(int dims, convcat_dtype ab, convcat_dtype out)
{
    return unit_problem(CONVCAT_FPROP, dims, ab, out);
}

static convcat_problem p1(void) { return problem(1, CONVCAT_F16, CONVCAT_F32); }
static convcat_problem p2(void) { return problem(2, CONVCAT_BF16, CONVCAT_BF16); }
static convcat_problem p3(void) { return problem(3, CONVCAT_F16, CONVCAT_F32); }

/* ---- expectations ------------------------------------------------------------------- */

static void expect(int line, const cvc_entry *e, const convcat_problem *p, convcat_status want,
                   const char *mention)
{
    char why[192] = "";
    const convcat_status st = unit_check(e, p, why, sizeof why);
    if (st != want)
        printf("\n    test_rules.c:%d: %s: %s (%s), wanted %s", line, e->key, convcat_status_string(st), why,
               convcat_status_string(want));
    CU_ASSERT_EQUAL(st, want);
    if (want == CONVCAT_OK)
        return;
    CU_ASSERT_TRUE(why[0] != '\0');
    if (mention && !strstr(why, mention))
        printf("\n    test_rules.c:%d: \"%s\" does not mention \"%s\"", line, why, mention);
    CU_ASSERT_TRUE(!mention || strstr(why, mention));
}

#define ACCEPT(e, p) expect(__LINE__, &(e), &(p), CONVCAT_OK, NULL)
#define REFUSE(e, p, mention) expect(__LINE__, &(e), &(p), CONVCAT_ERR_UNSUPPORTED, (mention))

/* `field` = good passes, `field` = bad is refused with `mention`; everything else from `base`. */
#define BOTH(e, base, field, good, bad, mention)                                  \
    do {                                                                          \
        convcat_problem both_ = (base);                                           \
        both_.field = (good);                                                     \
        expect(__LINE__, &(e), &both_, CONVCAT_OK, NULL);                         \
        both_.field = (bad);                                                      \
        expect(__LINE__, &(e), &both_, CONVCAT_ERR_UNSUPPORTED, (mention));       \
    } while (0)

/* ---- what the kernel is ------------------------------------------------------------- */

static void test_base_problems_pass(void)
{
    const cvc_entry e1 = unit_entry(E1_KEY), e2 = unit_entry(E2_KEY), e2c = unit_entry(E2C_KEY), e3 = unit_entry(E3_KEY);
    const convcat_problem a = p1(), b = p2(), c = p3();
    ACCEPT(e1, a);
    ACCEPT(e2, b);
    ACCEPT(e2c, b);
    ACCEPT(e3, c);
}

static void test_op_must_match(void)
{
    const cvc_entry e = unit_entry(E2_KEY);
    const convcat_problem base = p2();
    BOTH(e, base, op, CONVCAT_FPROP, CONVCAT_DGRAD, "kernel computes fprop, problem is dgrad");
    BOTH(e, base, op, CONVCAT_FPROP, CONVCAT_WGRAD, "problem is wgrad");
    BOTH(e, base, op, CONVCAT_FPROP, (convcat_op)7, "unknown op");
    /* dgrad and wgrad kernels run problems of their op. */
    const cvc_entry dg = unit_entry("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop");
    const cvc_entry wg = unit_entry("sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop");
    convcat_problem p = base;
    p.stride[1] = p.stride[2] = 1;
    BOTH(dg, p, op, CONVCAT_DGRAD, CONVCAT_FPROP, "kernel computes dgrad, problem is fprop");
    BOTH(wg, p, op, CONVCAT_WGRAD, CONVCAT_DGRAD, "kernel computes wgrad, problem is dgrad");
}

/* Dgrad runs strided problems phase by phase, up to the TMA traversal limit of 8. */
static void test_dgrad_strides(void)
{
    const cvc_entry e2 = unit_entry("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop");
    const cvc_entry e3 = unit_entry("sm90a_dgrad_3d_f16_f16_f32_f16_128x128x64_s4_c1x1_coop");
    convcat_problem p = p2();
    p.op = CONVCAT_DGRAD;
    BOTH(e2, p, stride[2], 2, 9, "stride 9 along W");
    BOTH(e2, p, stride[1], 8, 9, "stride 9 along H");
    convcat_problem q = p3();
    q.op = CONVCAT_DGRAD, q.a_type = q.b_type = q.out_type = CONVCAT_F16;
    BOTH(e3, q, stride[0], 3, 9, "stride 9 along D");
    /* Pingpong warpgroups of 128 accumulators have no scattering epilogue (space.dgrad_scatters):
     * their index record lacks CVC_F_SCATTERS. */
    const cvc_entry pp = unit_entry("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_pingpong");
    const cvc_entry pp_small = unit_entry("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x64x64_s4_c1x1_pingpong");
    CU_ASSERT_FALSE(cvc_has(&pp, CVC_F_SCATTERS));
    BOTH(pp, p, stride[2], 1, 2, "has no strided (row-scattering) epilogue (its warpgroups hold 128 accumulators)");
    const cvc_entry big = unit_entry("sm90a_dgrad_2d_bf16_bf16_f32_bf16_256x128x64_s4_c1x1_coop");
    CU_ASSERT_FALSE(cvc_has(&big, CVC_F_SCATTERS));
    BOTH(big, p, stride[1], 1, 2, "strides (1, 2, 1): this dgrad kernel has no strided (row-scattering) epilogue");
    const cvc_entry b100 = unit_entry("sm100a_dgrad_2d_bf16_bf16_f32_bf16_128x256x64_s4_c1x1_1sm");
    CU_ASSERT_TRUE(cvc_has(&b100, CVC_F_SCATTERS));   /* every sm100a dgrad kernel scatters ... */
    CU_ASSERT_FALSE(cvc_has(&b100, CVC_F_STRIDED_KERNEL));   /* ... in the kernel itself */
    p.stride[1] = p.stride[2] = 2;
    ACCEPT(b100, p);
    p.stride[1] = p.stride[2] = 1;
    CU_ASSERT_TRUE(cvc_has(&pp_small, CVC_F_SCATTERS) && cvc_has(&pp_small, CVC_F_STRIDED_KERNEL));
    ACCEPT(pp_small, p);
    p.stride[2] = 2;
    ACCEPT(pp_small, p);
}

/* Dgrad reads dy through im2col with the filter turned around: its corner is
 * pad_lo - (taps - 1) * dilation, which must fit the rank's range. */
static void test_dgrad_corner_ranges(void)
{
    const cvc_entry e3 = unit_entry("sm90a_dgrad_3d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop");
    convcat_problem p;
    convcat_problem_init(&p);
    p.op = CONVCAT_DGRAD, p.dims = 3;
    p.n = 1, p.d = 40, p.h = 8, p.w = 8, p.c = 16, p.k = 16, p.t = 5, p.r = 1, p.s = 1;
    /* corner along D = 0 - 4 * dil: -16 fits a 3D map, -20 does not */
    BOTH(e3, p, dilation[0], 4, 5, "dy: im2col corner along D");
    /* the offset (taps - 1) * dilation is 5 bits in 3D: 28 fits, 32 does not */
    p.pad_lo[0] = p.pad_hi[0] = 14;
    BOTH(e3, p, dilation[0], 7, 8, "im2col");
}

/* Wgrad: the pixel reduction is the GEMM K; C and K keep 16-byte rows. */
static void test_wgrad_rules(void)
{
    const cvc_entry e = unit_entry("sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop");
    convcat_problem p = p2();
    p.op = CONVCAT_WGRAD;
    ACCEPT(e, p);
    BOTH(e, p, c, 72, 76, "C = 76");
    BOTH(e, p, k, 40, 44, "K = 44");
    BOTH(e, p, groups, 8, 3, "groups = 3 must divide C = 64 and K = 64");
    BOTH(e, p, stride[2], 8, 9, "stride 9");
    /* tf32 (the consumers copy each stage K-major for wgmma): channels in 4s, and
     * column boxes of 32 f32 channels, so C = 32, 64, ... runs flat over the taps. */
    const cvc_entry t = unit_entry("sm90a_wgrad_2d_tf32_tf32_f32_f32_128x128x32_s4_c1x1_coop");
    convcat_problem q = problem(2, CONVCAT_TF32, CONVCAT_F32);
    q.op = CONVCAT_WGRAD;
    ACCEPT(t, q);
    BOTH(t, q, c, 36, 34, "C = 34: channels must be a multiple of 4");
    BOTH(t, q, k, 40, 44, "K = 44");
    q.c = 96;
    CU_ASSERT_TRUE(cvc_wgrad_flat(&t, unit_view(&q)));
    q.c = 48;
    CU_ASSERT_FALSE(cvc_wgrad_flat(&t, unit_view(&q)));
    CU_ASSERT_FALSE(cvc_wgrad_flat(&e, unit_view(&p)) && p.c % 64);
    p.c = 128;
    CU_ASSERT_TRUE(cvc_wgrad_flat(&e, unit_view(&p)));
    p.c = p.k = 128, p.groups = 2;   /* grouped: per tap, never flat */
    CU_ASSERT_FALSE(cvc_wgrad_flat(&e, unit_view(&p)));
}

/* Tile K 128 (two 128-byte spans of K a stage, f16/bf16): no rule of its own.  A
 * stage is one tap's channels c..c+127 (fprop C, dgrad dy's K) or 128 pixels
 * (wgrad); whatever lies past the tensor, a whole second span included, is
 * zero-filled by TMA, so the 16-byte-row rules are the tile-K-64 kernels' ones. */
/* Cluster split-K (flag CLUSTER_SPLITS, sm90a TMA wgrad of 1x1 clusters): a long pixel reduction
 * splits into a power of two of equal slices, at most CVC_CLUSTER_SPLITS_MAX, a cluster a tile;
 * never with CONVCAT_CLUSTER_SPLITS=0, never for grouped problems; the grid is every tile's
 * slices (not persistent). */
static void test_cluster_splits(void)
{
    const cvc_entry w = unit_entry("sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop");
    const cvc_entry pp = unit_entry("sm90a_wgrad_2d_bf16_bf16_f32_bf16_64x128x64_s4_c1x1_pingpong");
    const cvc_entry c2 = unit_entry("sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x64x64_s4_c2x1_coop");
    const cvc_entry f = unit_entry("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop");
    CU_ASSERT_TRUE(cvc_has(&w, CVC_F_CLUSTER_SPLITS) && cvc_has(&pp, CVC_F_CLUSTER_SPLITS));
    CU_ASSERT_FALSE(cvc_has(&c2, CVC_F_CLUSTER_SPLITS) || cvc_has(&f, CVC_F_CLUSTER_SPLITS));
    convcat_problem p = unit_problem(CONVCAT_WGRAD, 2, CONVCAT_BF16, CONVCAT_BF16);
    p.n = 64, p.h = p.w = 14, p.c = 832, p.k = 128, p.r = p.s = 1;   /* a 1x1 layer: 12544 pixels */
    p.pad_lo[1] = p.pad_hi[1] = p.pad_lo[2] = p.pad_hi[2] = 0;
    const cvc_view *v = unit_view(&p);
    const int64_t k_iters = cvc_k_iters(&w, v);
    setenv("CONVCAT_CLUSTER_SPLITS", "1", 1);
    const cvc_split s = cvc_split_for(&w, v, 132, true), t = cvc_split_for(&c2, v, 132, true),
                    u = cvc_split_for(&w, v, 132, false);
    CU_ASSERT_TRUE(s.cluster && s.splits >= 2 && s.splits <= CVC_CLUSTER_SPLITS_MAX && !(s.splits & (s.splits - 1)));
    CU_ASSERT_TRUE((int64_t)s.splits * s.split_iters >= k_iters && (int64_t)(s.splits - 1) * s.split_iters < k_iters);
    CU_ASSERT_FALSE(t.cluster || u.cluster);
    const cvc_params k = {.cluster_tiles_m = 1, .cluster_tiles_n = 7, .splits = s.splits, .cluster_splits = 1};
    CU_ASSERT_EQUAL(cvc_grid_for(&k, 16, s.splits), 7 * s.splits);   /* every tile's slices */
    convcat_problem g = p;
    g.groups = 2, g.c = g.k = 128;   /* grouped wgrad: through the workspace, KEY_reduce */
    CU_ASSERT_FALSE(cvc_split_for(&w, unit_view(&g), 132, true).cluster);
    setenv("CONVCAT_CLUSTER_SPLITS", "0", 1);
    CU_ASSERT_FALSE(cvc_split_for(&w, v, 132, true).cluster);
    /* 132 SMs hold 66 clusters of 2, but 30 of 4 and 15 of 8 (GPCs): one more takes a second wave. */
    CU_ASSERT_EQUAL(cvc_cluster_split_waves(66, 132, 2), 1);
    CU_ASSERT_EQUAL(cvc_cluster_split_waves(67, 132, 2), 2);
    CU_ASSERT_EQUAL(cvc_cluster_split_waves(30, 132, 4), 1);
    CU_ASSERT_EQUAL(cvc_cluster_split_waves(31, 132, 4), 2);
    CU_ASSERT_EQUAL(cvc_cluster_split_waves(15, 132, 8), 1);
    CU_ASSERT_EQUAL(cvc_cluster_split_waves(16, 132, 8), 2);
    CU_ASSERT_EQUAL(cvc_cluster_split_waves(3, 4, 8), 3);   /* fewer SMs than a cluster: one at a time */
    setenv("CONVCAT_CLUSTER_SPLITS", "auto", 1);   /* the model's choice: a valid split either way */
    const cvc_split m = cvc_split_for(&w, v, 132, true);
    CU_ASSERT_TRUE((int64_t)m.splits * m.split_iters >= k_iters && (!m.cluster || m.splits <= CVC_CLUSTER_SPLITS_MAX));
    unsetenv("CONVCAT_CLUSTER_SPLITS");
    /* Short slices: a grid of a tenth of the SMs (S3D's last 1x1, 16 images of 7x7 -> 784
     * pixels, 832 -> 32 channels: 13 tiles of 13 stages) splits in clusters of slices shorter than
     * the workspace's 8 stages, which it could not split at all; where the unsplit tiles fill the
     * SMs (832 -> 640 channels, 130 tiles), it stays whole. */
    const cvc_entry q = unit_entry("sm90a_wgrad_2d_bf16_bf16_f32_bf16_64x64x64_s4_c1x1_pingpong");
    CU_ASSERT_TRUE(cvc_has(&q, CVC_F_CLUSTER_SPLITS));
    p.n = 16, p.h = p.w = 7, p.k = 32;
    const cvc_split few = cvc_split_for(&q, unit_view(&p), 132, true);
    CU_ASSERT_TRUE(few.cluster && few.splits >= 2 && few.split_iters < 8);
    CU_ASSERT_EQUAL(cvc_split_for(&q, unit_view(&p), 132, false).splits, 1);   /* 13 stages: no workspace split */
    p.k = 640;   /* 10 x 13 tiles */
    CU_ASSERT_EQUAL(cvc_split_for(&q, unit_view(&p), 132, true).splits, 1);
}

/* sm90a wgrad rings deeper than WGRAD_SPLIT_STAGES: the split-K is the one the 4-stage twin
 * chooses (priced at their own depth, 8 stages chose fewer slices on small grids, which ran slower),
 * the time of that split is the deeper ring's: never above the twin's, below it on a long K loop. */
static void test_deep_wgrad_rings_split_as_four_stages(void)
{
    const char *twins[][2] = {   /* (4 stages, 8 stages) */
        {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_64x64x64_s4_c1x1_pingpong",
         "sm90a_wgrad_2d_bf16_bf16_f32_bf16_64x64x64_s8_c1x1_pingpong"},
        {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x64x64_s4_c1x1_coop", "sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x64x64_s8_c1x1_coop"},
        {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_64x128x64_s4_c1x1_pingpong",
         "sm90a_wgrad_2d_bf16_bf16_f32_bf16_64x128x64_s8_c1x1_pingpong"},
    };
    convcat_problem p = unit_problem(CONVCAT_WGRAD, 2, CONVCAT_BF16, CONVCAT_BF16);
    p.r = p.s = 1;
    p.pad_lo[1] = p.pad_hi[1] = p.pad_lo[2] = p.pad_hi[2] = 0;
    for (size_t t = 0; t < sizeof twins / sizeof *twins; ++t) {
        const cvc_entry e4 = unit_entry(twins[t][0]), e8 = unit_entry(twins[t][1]);
        /* S3D's last 1x1 (784 pixels, 13 stages: a tenth of the SMs unsplit), DenseNet's 128 x 768 dw
         * (12544 pixels), ResNeXt's 512 x 512 (50176) */
        const int shapes[][4] = {{16, 7, 832, 32}, {64, 14, 768, 128}, {64, 28, 512, 512}};
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; ++i) {
            p.n = shapes[i][0], p.h = p.w = shapes[i][1], p.c = shapes[i][2], p.k = shapes[i][3];
            const cvc_view *v = unit_view(&p);
            const cvc_split s4 = cvc_split_for(&e4, v, 132, true), s8 = cvc_split_for(&e8, v, 132, true);
            CU_ASSERT_TRUE(s4.splits == s8.splits && s4.split_iters == s8.split_iters && s4.cluster == s8.cluster);
            CU_ASSERT_TRUE(s8.compute_us <= s4.compute_us);
            if (s8.split_iters >= 64)   /* a long K loop: the deeper ring is priced faster */
                CU_ASSERT_TRUE(s8.compute_us < s4.compute_us);
        }
    }
}

static void test_tile_k_128_rules(void)
{
    const cvc_entry f = unit_entry("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x128_s3_c2x1_coop");
    const cvc_entry d = unit_entry("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x128x128_s2_c1x1_coop");
    const cvc_entry w = unit_entry("sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x128_s3_c1x1_coop");
    convcat_problem p = p2();
    ACCEPT(f, p);   /* C = 64: the second span all zeros */
    BOTH(f, p, c, 8, 12, "C = 12: channels must be a multiple of 8");
    BOTH(f, p, c, 136, 68, "C = 68");
    BOTH(f, p, k, 200, 20, "K = 20");
    p.op = CONVCAT_DGRAD;
    ACCEPT(d, p);
    BOTH(d, p, k, 72, 76, "K = 76");
    BOTH(d, p, stride[2], 2, 9, "stride 9 along W");   /* 64 accumulators a warpgroup: it scatters */
    p.op = CONVCAT_WGRAD;
    ACCEPT(w, p);
    BOTH(w, p, c, 200, 76, "C = 76");
    p.n = 1, p.h = p.w = 3;   /* 9 pixels: one stage of 128, zero-filled past them */
    ACCEPT(w, p);
}

/* A 3D problem whose filter is 1 along D (no padding or stride there) or 1 x 1 along H and W
 * (likewise) is the 2D problem over the same memory: 2D kernels take it, with the 2D problem's
 * rules and prediction; the 3D kernels still take it as given. */
static void test_3d_problems_fold_into_2d(void)
{
    const cvc_entry e2 = unit_entry(E2_KEY);
    convcat_problem p = p2();
    p.dims = 3, p.d = 5;   /* 2 x 5 frames of 16 x 16, a 1 x 3 x 3 filter */
    ACCEPT(e2, p);
    BOTH(e2, p, pad_lo[0], 0, 1, "kernel is 2D, problem is 3D (a 3D problem runs on 2D kernels");
    BOTH(e2, p, pad_hi[0], 0, 1, "kernel is 2D, problem is 3D");
    BOTH(e2, p, stride[0], 1, 2, "kernel is 2D, problem is 3D");
    BOTH(e2, p, t, 1, 3, "kernel is 2D, problem is 3D");
    cvc_view v, f, two;
    CU_ASSERT_EQUAL_FATAL(cvc_view_make(&p, &v, NULL, 0), CONVCAT_OK);
    CU_ASSERT_TRUE(v.folds);
    CU_ASSERT_TRUE(cvc_folds(&e2, &v));
    CU_ASSERT_EQUAL_FATAL(cvc_folded_view(&v, &f), CONVCAT_OK);
    convcat_problem q = p2();
    q.n = 10;   /* N x D images */
    CU_ASSERT_EQUAL_FATAL(cvc_view_make(&q, &two, NULL, 0), CONVCAT_OK);
    CU_ASSERT_EQUAL(f.p.dims, 2);
    CU_ASSERT_EQUAL(f.p.n, 10);
    CU_ASSERT_EQUAL(f.p.d, 1);
    CU_ASSERT_EQUAL(f.p.t, 1);
    CU_ASSERT_EQUAL(f.in[1], two.in[1]);
    CU_ASSERT_EQUAL(f.out[2], two.out[2]);
    CU_ASSERT_EQUAL(f.pixels, v.pixels);
    CU_ASSERT_EQUAL(f.gemm.m, v.gemm.m);
    CU_ASSERT_EQUAL(f.gemm.k, v.gemm.k);
    CU_ASSERT_FALSE(f.folds);
    CU_ASSERT_DOUBLE_EQUAL(cvc_predict_us(&e2, &v, 132), cvc_predict_us(&e2, &two, 132), 1e-9);
    convcat_problem pub;   /* the public form: the same 2D problem */
    UNIT_ASSERT_STATUS(convcat_problem_folded(&p, &pub), CONVCAT_OK);
    CU_ASSERT_EQUAL(pub.dims, 2);
    CU_ASSERT_EQUAL(pub.n, 10);
    CU_ASSERT_EQUAL(pub.h, f.p.h);
    UNIT_ASSERT_STATUS(convcat_problem_folded(&q, &pub), CONVCAT_ERR_UNSUPPORTED);   /* already 2D */
    UNIT_ASSERT_MENTIONS(convcat_last_error(), "1 along D");
    UNIT_ASSERT_STATUS(convcat_problem_folded(NULL, &pub), CONVCAT_ERR_INVALID_ARGUMENT);
    /* a T x 1 x 1 filter: D x (H*W) images and a T x 1 filter, D's padding and stride on H */
    convcat_problem t = p2();
    t.dims = 3, t.d = 8, t.t = 3, t.pad_lo[0] = 1, t.pad_hi[0] = 2, t.stride[0] = 2;
    t.r = t.s = 1, t.pad_lo[1] = t.pad_hi[1] = t.pad_lo[2] = t.pad_hi[2] = 0;
    ACCEPT(e2, t);
    BOTH(e2, t, stride[2], 1, 2, "kernel is 2D, problem is 3D");
    BOTH(e2, t, pad_lo[1], 0, 1, "kernel is 2D, problem is 3D");
    BOTH(e2, t, s, 1, 3, "kernel is 2D, problem is 3D");
    CU_ASSERT_EQUAL_FATAL(cvc_view_make(&t, &v, NULL, 0), CONVCAT_OK);
    CU_ASSERT_EQUAL_FATAL(cvc_folded_view(&v, &f), CONVCAT_OK);
    CU_ASSERT_EQUAL(f.p.h, 8);
    CU_ASSERT_EQUAL(f.p.w, 16 * 16);
    CU_ASSERT_EQUAL(f.p.r, 3);
    CU_ASSERT_EQUAL(f.p.s, 1);
    CU_ASSERT_EQUAL(f.p.pad_lo[1], 1);
    CU_ASSERT_EQUAL(f.p.pad_hi[1], 2);
    CU_ASSERT_EQUAL(f.p.stride[1], 2);
    CU_ASSERT_EQUAL(f.out[1], v.out[0]);
    CU_ASSERT_EQUAL(f.pixels, v.pixels);
    /* a 2D problem does not fold, and a 3D kernel takes a foldable problem as it is */
    CU_ASSERT_EQUAL_FATAL(cvc_view_make(&q, &v, NULL, 0), CONVCAT_OK);
    CU_ASSERT_FALSE(v.folds);
    CU_ASSERT_EQUAL(cvc_folded_view(&v, &f), CONVCAT_ERR_UNSUPPORTED);
    const cvc_entry e3 = unit_entry(E3_KEY);
    convcat_problem p3f = p3();
    p3f.t = 1, p3f.pad_lo[0] = p3f.pad_hi[0] = 0;
    ACCEPT(e3, p3f);
    CU_ASSERT_EQUAL_FATAL(cvc_view_make(&p3f, &v, NULL, 0), CONVCAT_OK);
    CU_ASSERT_TRUE(v.folds);
    CU_ASSERT_FALSE(cvc_folds(&e3, &v));
}

static void test_dims_must_match(void)
{
    const cvc_entry e2 = unit_entry(E2_KEY), e1 = unit_entry(E1_KEY), e3 = unit_entry(E3_KEY);
    convcat_problem deep = p2();   /* a 3D problem of depth 3 whose filter spans it */
    deep.dims = 3, deep.d = 3, deep.t = 3;
    REFUSE(e2, deep, "kernel is 2D, problem is 3D");
    BOTH(e1, p1(), dims, 1, 2, "kernel is 1D, problem is 2D");
    BOTH(e1, p1(), dims, 1, 3, "kernel is 1D, problem is 3D");
    convcat_problem one = problem(1, CONVCAT_BF16, CONVCAT_BF16);
    REFUSE(e2, one, "kernel is 2D, problem is 1D");
    convcat_problem two = problem(2, CONVCAT_F16, CONVCAT_F32);
    REFUSE(e3, two, "kernel is 3D, problem is 2D");
    const convcat_problem three = p3();
    ACCEPT(e3, three);
    /* dims outside 1..3 are the problem's own fault, whatever the kernel. */
    BOTH(e2, p2(), dims, 2, 0, "dims 0: a problem has 1, 2 or 3 spatial dimensions");
    BOTH(e3, p3(), dims, 3, 4, "dims 4: a problem has 1, 2 or 3 spatial dimensions");
    /* A 2D problem called 1D still has its H axis: refused as a problem. */
    BOTH(e2, p2(), dims, 2, 1, "a 1D problem has no H axis");
    /* The problem's own rule, without a kernel. */
    convcat_problem p = p2();
    int q;
    for (int dims = -1; dims <= 5; dims += 1) {
        p.dims = dims;
        if (dims >= 1 && dims <= 3) {
            p.d = p.h = p.w = 1;
            p.t = p.r = p.s = 1;
            memset(p.pad_lo, 0, sizeof p.pad_lo);
            memset(p.pad_hi, 0, sizeof p.pad_hi);
            UNIT_ASSERT_STATUS(convcat_problem_output(&p, NULL, NULL, &q), CONVCAT_OK);
        } else {
            UNIT_ASSERT_STATUS(convcat_problem_output(&p, NULL, NULL, &q), CONVCAT_ERR_UNSUPPORTED);
            UNIT_ASSERT_MENTIONS(convcat_last_error(), "1, 2 or 3 spatial dimensions");
        }
    }
}

static void test_dtypes_must_match(void)
{
    const cvc_entry e = unit_entry(E2_KEY);
    const char *says = "kernel takes bf16 x bf16 -> bf16";
    BOTH(e, p2(), a_type, CONVCAT_BF16, CONVCAT_F16, says);
    BOTH(e, p2(), b_type, CONVCAT_BF16, CONVCAT_F16, "problem is bf16 x f16 -> bf16");
    BOTH(e, p2(), out_type, CONVCAT_BF16, CONVCAT_F32, "problem is bf16 x bf16 -> f32");
    BOTH(e, p2(), a_type, CONVCAT_BF16, (convcat_dtype)0, "problem is ? x bf16 -> bf16");
    BOTH(e, p2(), out_type, CONVCAT_BF16, (convcat_dtype)99, "-> ?");
    const cvc_entry f = unit_entry(E1_KEY);
    BOTH(f, p1(), out_type, CONVCAT_F32, CONVCAT_F16, "kernel takes f16 x f16 -> f32");
}

/* ---- extents, padding, strides, dilations ------------------------------------------------ */

static void test_extents_must_be_at_least_one(void)
{
    const cvc_entry e2 = unit_entry(E2_KEY), e3 = unit_entry(E3_KEY);
    const char *says = "extents must be >= 1";
    BOTH(e2, p2(), n, 1, 0, says);
    BOTH(e2, p2(), n, 1, -1, says);
    BOTH(e2, p2(), h, 1, 0, says);
    BOTH(e2, p2(), w, 1, 0, says);
    BOTH(e2, p2(), w, 1, INT_MIN, says);
    BOTH(e2, p2(), c, 8, 0, says);
    BOTH(e2, p2(), c, 8, -8, says);
    BOTH(e2, p2(), k, 8, 0, says);
    BOTH(e2, p2(), r, 1, 0, says);
    BOTH(e2, p2(), s, 1, 0, says);
    BOTH(e2, p2(), s, 1, -3, says);
    BOTH(e2, p2(), groups, 1, 0, says);
    BOTH(e2, p2(), groups, 1, -1, says);
    BOTH(e3, p3(), d, 1, 0, says);
    BOTH(e3, p3(), t, 1, 0, says);
    /* An absent axis's extent must be 1 too, not 0. */
    BOTH(e2, p2(), d, 1, 0, says);
    BOTH(e2, p2(), t, 1, 0, says);
}

static void test_padding_must_not_be_negative(void)
{
    const cvc_entry e2 = unit_entry(E2_KEY), e3 = unit_entry(E3_KEY), e1 = unit_entry(E1_KEY);
    BOTH(e2, p2(), pad_lo[1], 0, -1, "padding along H is negative");
    BOTH(e2, p2(), pad_hi[1], 0, -1, "padding along H is negative");
    BOTH(e2, p2(), pad_lo[2], 0, -1, "padding along W is negative");
    BOTH(e2, p2(), pad_hi[2], 0, INT_MIN, "padding along W is negative");
    BOTH(e3, p3(), pad_lo[0], 0, -1, "padding along D is negative");
    BOTH(e3, p3(), pad_hi[0], 0, -2, "padding along D is negative");
    BOTH(e1, p1(), pad_lo[2], 0, -1, "padding along W is negative");
}

static void test_stride_and_dilation_must_be_at_least_one(void)
{
    const cvc_entry e2 = unit_entry(E2_KEY), e3 = unit_entry(E3_KEY);
    const char *h = "stride and dilation along H must be >= 1", *w = "along W must be >= 1";
    BOTH(e2, p2(), stride[1], 1, 0, h);
    BOTH(e2, p2(), stride[2], 1, -1, w);
    BOTH(e2, p2(), dilation[1], 1, 0, h);
    BOTH(e2, p2(), dilation[2], 1, -2, w);
    BOTH(e3, p3(), stride[0], 1, 0, "along D must be >= 1");
    BOTH(e3, p3(), dilation[0], 1, 0, "along D must be >= 1");
}

static void test_absent_axes_must_be_trivial(void)
{
    const cvc_entry e2 = unit_entry(E2_KEY), e1 = unit_entry(E1_KEY);
    const char *no_d = "a 2D problem has no D axis", *no_h = "a 1D problem has no H axis",
               *no_d1 = "a 1D problem has no D axis";
    BOTH(e2, p2(), d, 1, 2, no_d);
    BOTH(e2, p2(), t, 1, 2, no_d);
    BOTH(e2, p2(), pad_lo[0], 0, 1, no_d);
    BOTH(e2, p2(), pad_hi[0], 0, 1, no_d);
    BOTH(e2, p2(), stride[0], 1, 2, no_d);
    BOTH(e2, p2(), dilation[0], 1, 2, no_d);
    BOTH(e1, p1(), h, 1, 2, no_h);
    BOTH(e1, p1(), r, 1, 3, no_h);
    BOTH(e1, p1(), pad_lo[1], 0, 1, no_h);
    BOTH(e1, p1(), pad_hi[1], 0, 1, no_h);
    BOTH(e1, p1(), stride[1], 1, 2, no_h);
    BOTH(e1, p1(), dilation[1], 1, 2, no_h);
    BOTH(e1, p1(), d, 1, 2, no_d1);
    BOTH(e1, p1(), t, 1, 2, no_d1);
    BOTH(e1, p1(), stride[0], 1, 3, no_d1);
}

static void test_filter_must_fit_the_padded_input(void)
{
    const cvc_entry e2 = unit_entry(E2_KEY), e1 = unit_entry(E1_KEY), e3 = unit_entry(E3_KEY);
    convcat_problem p = p2();
    p.pad_lo[1] = p.pad_hi[1] = 0;
    BOTH(e2, p, h, 3, 2, "does not fit the padded input along H (2 + 0 + 0)");
    p.dilation[1] = 2;   /* reach 5 */
    BOTH(e2, p, h, 5, 4, "(3 taps, dilation 2) does not fit");
    p = p2();
    p.h = 1;             /* 1 + 1 + 1 = 3 taps exactly */
    BOTH(e2, p, pad_hi[1], 1, 0, "along H (1 + 1 + 0)");
    p = p1();
    p.pad_lo[2] = p.pad_hi[2] = 0;
    BOTH(e1, p, s, p.w, p.w + 1, "along W");
    p = p3();
    p.pad_lo[0] = p.pad_hi[0] = 0;
    BOTH(e3, p, d, 3, 2, "along D");
}

/* ---- what the kernels support --------------------------------------------------------------- */

static void test_only_cross_correlation(void)
{
    const cvc_entry e = unit_entry(E2_KEY);
    BOTH(e, p2(), mode, CONVCAT_CROSS_CORRELATION, CONVCAT_CONVOLUTION, "convolution mode");
    BOTH(e, p2(), mode, CONVCAT_CROSS_CORRELATION, (convcat_mode)5, "convolution mode");
}

/* A TMA kernel that is not a grouped wgrad one takes groups = 1; the gather family runs the rest. */
static void test_fprop_groups_are_refused(void)
{
    const cvc_entry e = unit_entry(E2_KEY);
    BOTH(e, p2(), groups, 1, 2, "groups = 2: this kernel takes groups = 1 (the gather family runs grouped problems; 16-bit fprop and unit-stride dgrad also the grouped schedule)");
    BOTH(e, p2(), groups, 1, 64, "groups = 64: this kernel takes groups = 1");
    const cvc_entry dg = unit_entry("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop");
    convcat_problem p = p2();
    p.op = CONVCAT_DGRAD;
    BOTH(dg, p, groups, 1, 8, "groups = 8: this kernel takes groups = 1");
    /* The problem's own rule comes first, whatever the kernel. */
    convcat_problem q = p2();
    q.groups = 3;
    REFUSE(e, q, "groups = 3 must divide C = 64 and K = 64");
    q.groups = 1;
    q.k = 96;
    BOTH(e, q, groups, 1, 64, "groups = 64 must divide C = 64 and K = 96");
}

/* Grouped problems on TMA kernels: wgrad kernels of groups_mode diagonal (tile M == tile N,
 * cluster M 1: space.groups_wgrad) take K == C with c = C / groups channels per group in their
 * group_c_mask (8, 16, 32 or 64) dividing tile N; every other TMA kernel takes groups = 1.
 * Each case runs on a small padded problem of the key's op, dims and types (tests/unit.h,
 * unit_problem) with its K, C and groups: NULL, it runs; else the reason mentions that text. */
typedef struct group_case {
    const char *key;
    int k, c, groups;
    const char *refused;
} group_case;

static const group_case group_cases[] = {
    /* c = 8 and 16 on the kernels of tile M == tile N, cluster M 1 (32 and 64: group_cases_wide) */
    {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop", 128, 128, 16, NULL},
    {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop", 128, 128, 8, NULL},
    {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop", 128, 128, 1, NULL},
    {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x2_coop", 256, 256, 16, NULL},
    {"sm90a_wgrad_1d_f16_f16_f32_f16_64x64x64_s4_c1x1_pingpong", 64, 64, 8, NULL},
    {"sm90a_wgrad_1d_f16_f16_f32_f16_64x64x64_s4_c1x1_pingpong", 64, 64, 1, NULL},
    {"sm90a_wgrad_3d_bf16_bf16_f32_f32_128x128x64_s4_c1x1_coop", 72, 72, 9, NULL},
    {"sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_1sm", 256, 256, 32, NULL},
    {"sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_1sm", 128, 128, 16, NULL},
    {"sm100a_wgrad_3d_f16_f16_f32_f32_128x128x64_s4_c1x2_1sm", 96, 96, 6, NULL},
    /* fprop and dgrad kernels take groups = 1 */
    {"sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop", 128, 128, 2,
     "groups = 2: this kernel takes groups = 1 (the gather family runs grouped problems; 16-bit fprop and unit-stride dgrad also the grouped schedule)"},
    {"sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop", 128, 128, 2, "this kernel takes groups = 1"},
    {"sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_1sm", 128, 128, 16, "groups = 16: this kernel takes groups = 1"},
    /* wgrad kernels of tile M != tile N or cluster M 2 (B follows the M tile's channels; a 2sm pair shares B) */
    {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x64x64_s4_c1x1_coop", 128, 128, 2, "groups = 2: this kernel takes groups = 1"},
    {"sm90a_wgrad_2d_f16_f16_f32_f16_64x128x64_s4_c1x1_pingpong", 64, 64, 8, "groups = 8: this kernel takes groups = 1"},
    {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_coop", 128, 128, 2, "this kernel takes groups = 1"},
    {"sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_2sm", 128, 128, 2, "this kernel takes groups = 1"},
    {"sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x256x64_s6_c2x1_2sm", 128, 128, 2, "this kernel takes groups = 1"},
    /* the problem: K == C, groups divide C, c in 8, 16, 32, 64 */
    {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop", 64, 128, 2,
     "groups = 2: this kernel's grouped wgrad needs K == C (K = 64, C = 128)"},
    {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop", 64, 64, 3, "groups = 3 must divide C = 64 and K = 64"},
    {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop", 32, 32, 16,
     "C / groups = 2 channels per group: this kernel's grouped wgrad takes 4, 8, 16, 32, 64"},
    {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop", 32, 32, 8, NULL},   /* c = 4: half units */
    {"sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_1sm", 32, 32, 8,
     "C / groups = 4 channels per group: this kernel's grouped wgrad takes 8, 16, 32, 64"},
    {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop", 48, 48, 2, "C / groups = 24 channels per group"},
    {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop", 256, 256, 2, "C / groups = 128 channels per group"},
    {"sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_1sm", 24, 24, 8, "C / groups = 3 channels per group"},
};

/* c = 32 and 64, the widest groups the diagonal kernels take (their group_c_mask has bits 5 and 6:
 * space.GROUP_CHANNELS), on the kernels of tile M == tile N, cluster M 1. */
static const group_case group_cases_wide[] = {
    {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop", 128, 128, 4, NULL},
    {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop", 128, 128, 2, NULL},
    {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x2_coop", 256, 256, 8, NULL},
    {"sm90a_wgrad_1d_f16_f16_f32_f16_64x64x64_s4_c1x1_pingpong", 128, 128, 2, NULL},
    {"sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_1sm", 256, 256, 4, NULL},
    {"sm100a_wgrad_3d_f16_f16_f32_f32_128x128x64_s4_c1x2_1sm", 192, 192, 6, NULL},
};

/* Runs `cases`; how many of them run. */
static int run_group_cases(const group_case *cases, size_t count)
{
    int ok = 0;
    for (size_t i = 0; i < count; ++i) {
        const cvc_entry e = unit_entry(cases[i].key);
        convcat_problem p = unit_problem(e.k.op, e.k.dims, e.k.a, e.k.out);
        p.k = cases[i].k, p.c = cases[i].c, p.groups = cases[i].groups;
        if (cases[i].refused) {
            expect(__LINE__, &e, &p, CONVCAT_ERR_UNSUPPORTED, cases[i].refused);
            continue;
        }
        if (unit_check(&e, &p, NULL, 0) != CONVCAT_OK)
            printf("\n    %s, K %d, C %d, groups %d (c = %d)", e.key, p.k, p.c, p.groups, p.c / p.groups);
        expect(__LINE__, &e, &p, CONVCAT_OK, NULL);
        ok += 1;
        if (p.groups == 1)
            continue;
        /* A grouped plan is one tile per tap; split only where the kernel says (sm90a), each
         * slice the diagonal blocks' f32 sums in dw's layout, (c, T*R*S, K), and so is the
         * workspace's tensor map (its box no wider than c). */
        const cvc_view *v = unit_view(&p);
        CU_ASSERT_EQUAL(e.groups_mode, CVC_GROUPS_DIAGONAL);
        CU_ASSERT_EQUAL(cvc_tiles_n(&e, v), v->taps);
        int iters;
        const int splits = cvc_splits(&e, v, 132, &iters);
        const int64_t k_iters = cvc_k_iters(&e, v);
        CU_ASSERT_TRUE(splits >= 1 && (int64_t)splits * iters >= k_iters && (int64_t)(splits - 1) * iters < k_iters);
        CU_ASSERT_EQUAL(cvc_has(&e, CVC_F_GROUPED_SPLITS), e.k.arch == CONVCAT_ARCH_SM90A);
        if (!cvc_has(&e, CVC_F_GROUPED_SPLITS))
            CU_ASSERT_EQUAL(splits, 1);
        CU_ASSERT_EQUAL(cvc_workspace_bytes(v, splits),
                        splits > 1 ? (size_t)splits * p.k * v->taps * (p.c / p.groups) * sizeof(float) : 0);
        if (splits > 1) {
            cvc_tiled_desc y;
            cvc_tma_output(&e, v, splits, &y);
            CU_ASSERT_TRUE(y.rank == 4 && y.dims[0] == (uint64_t)(p.c / p.groups) && y.dims[1] == (uint64_t)v->taps &&
                           y.dims[2] == (uint64_t)p.k && y.dims[3] == (uint64_t)splits);
            CU_ASSERT_TRUE(y.box[0] <= (uint32_t)(p.c / p.groups));
        }
    }
    return ok;
}

static void test_grouped_wgrad_cases(void)
{
    const int ok = run_group_cases(group_cases, CVC_ARRAY_LEN(group_cases));
    CU_ASSERT_TRUE(ok >= 8 && CVC_ARRAY_LEN(group_cases) - ok >= 8);
    /* c must divide tile N: no generated diagonal kernel has a tile N that some c of its mask does
     * not divide, so here an entry with its tile N changed (the rule reads the entry's fields). */
    cvc_entry odd = unit_entry("sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop");
    odd.k.tile_n = 72;
    convcat_problem p = unit_problem(CONVCAT_WGRAD, 2, CONVCAT_BF16, CONVCAT_BF16);
    p.c = p.k = 144;
    BOTH(odd, p, groups, 18, 9, "C / groups = 16 channels per group do not divide tile N 72");
    /* ... and the mask is the entry's: without c = 8 in it, c = 8 is refused. */
    cvc_entry narrow = unit_entry("sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop");
    narrow.group_c_mask &= ~(1u << 3);
    p.c = p.k = 128;
    BOTH(narrow, p, groups, 8, 16, "C / groups = 8 channels per group: this kernel's grouped wgrad takes 4, 16");
}

/* Grouped fprop by TMA (schedule grouped, groups_mode packed: space.groups_fprop): a tile column
 * within one group (k = K / groups a multiple of tile N), or a pack of tile N / k whole groups of k
 * and c in the kernel's mask (16, 32) whose P x c channels fit tile K (64); groups = 1 and other
 * groups refused.  The plan's K loop runs over a group's channels. */
#define G64 "sm90a_fprop_2d_bf16_bf16_f32_bf16_128x64x64_s4_c1x1_grouped"
#define G128 "sm90a_fprop_2d_f16_f16_f32_f16_128x128x64_s4_c1x1_grouped"
static const group_case packed_cases[] = {
    {G64, 512, 512, 32, NULL},     /* c = k = 16: packs of 4 */
    {G64, 1024, 1024, 32, NULL},   /* c = k = 32: packs of 2 */
    {G64, 128, 64, 4, NULL},       /* c = 16, k = 32 */
    {G64, 48, 48, 3, NULL},        /* c = k = 16, a part pack (K < tile N) */
    {G64, 256, 256, 2, NULL},      /* c = k = 128: two tile columns a group */
    {G64, 256, 96, 2, NULL},       /* c = 48, k = 128: a group's stage reads the next group's channels */
    {G128, 256, 128, 8, NULL},     /* c = 16, k = 32: packs of 4 at tile N 128 */
    {G128, 512, 160, 2, NULL},     /* c = 80, k = 256 */
    {G64, 64, 64, 1, "groups = 1: this kernel runs grouped problems"},
    {G64, 24, 24, 3, "groups = 3: k = 8 filters, c = 8 channels a group; a tile column takes one group of k a "
                     "multiple of 64, or a pack of groups of k and c in 16, 32 within a 64-channel stage"},
    {G64, 192, 192, 8, "k = 24 filters, c = 24 channels a group"},
    {G64, 512, 1024, 16, "k = 32 filters, c = 64 channels a group"},   /* 2 x 64 channels > tile K */
    {G64, 96, 96, 2, "k = 48 filters, c = 48 channels a group"},
    {G64, 12, 12, 3, "C / groups = 4 channels per group: a multiple of 8"},   /* 3 groups: none widened */
    {G128, 512, 512, 32, "k = 16 filters, c = 16 channels a group"},   /* 8 groups of 16 channels > tile K */
    {G128, 512, 512, 16, "within a 64-channel stage"},                 /* 4 x 32 channels */
    {G128, 128, 128, 2, "k = 64 filters, c = 64 channels a group"},    /* no n64 pack compiled */
};

static void test_grouped_fprop_cases(void)
{
    int ok = 0;
    for (size_t i = 0; i < CVC_ARRAY_LEN(packed_cases); ++i) {
        const group_case *gc = &packed_cases[i];
        const cvc_entry e = unit_entry(gc->key);
        convcat_problem p = unit_problem(e.k.op, e.k.dims, e.k.a, e.k.out);
        p.k = gc->k, p.c = gc->c, p.groups = gc->groups;
        expect(__LINE__, &e, &p, gc->refused ? CONVCAT_ERR_UNSUPPORTED : CONVCAT_OK, gc->refused);
        if (gc->refused)
            continue;
        ++ok;
        const cvc_view *v = unit_view(&p);
        CU_ASSERT_EQUAL(e.groups_mode, CVC_GROUPS_PACKED);
        CU_ASSERT_TRUE(cvc_has(&e, CVC_F_VERIFIED));   /* the GPU suite runs the schedule */
        CU_ASSERT_EQUAL(cvc_k_iters(&e, v), v->taps * cvc_ceil_div(p.c / p.groups, e.k.tile_k));
        CU_ASSERT_EQUAL(cvc_tiles_n(&e, v), cvc_ceil_div(p.k, e.k.tile_n));
        int iters;
        CU_ASSERT_EQUAL(cvc_splits(&e, v, 132, &iters), 1);
        cvc_im2col_desc a;
        cvc_tiled_desc b;
        unit_fprop_descs(&e, &p, &a, &b);
        CU_ASSERT_EQUAL(a.dims[0], (uint64_t)p.c);            /* x: all channels, read at a column's groups' */
        CU_ASSERT_EQUAL(b.dims[0], (uint64_t)(p.c / p.groups));   /* the filters: (c, taps, K) */
    }
    CU_ASSERT_EQUAL(ok, 8);
    /* The mask is the entry's: without 32 in it, packs of 32 filters are refused (3 groups: none
     * widened to a 64-filter column). */
    cvc_entry narrow = unit_entry(G64);
    narrow.group_c_mask &= ~(1u << 5);
    convcat_problem p = unit_problem(CONVCAT_FPROP, 2, CONVCAT_BF16, CONVCAT_BF16);
    p.c = p.k = 96, p.groups = 3;
    const cvc_entry whole = unit_entry(G64);
    expect(__LINE__, &whole, &p, CONVCAT_OK, NULL);
    expect(__LINE__, &narrow, &p, CONVCAT_ERR_UNSUPPORTED, "k = 32 filters, c = 32 channels a group");
    /* Unit-stride grouped dgrad runs as the fprop of dy (DGRAD_AS_FPROP): C and K exchanged, the
     * padding turned around, dx's extents its output; strides, paddings past the reach and wgrad are
     * refused, and coop fprop kernels still refuse dgrad. */
    const cvc_entry g64 = unit_entry(G64);
    CU_ASSERT_TRUE(cvc_has(&g64, CVC_F_DGRAD_AS_FPROP));
    convcat_problem d = unit_problem(CONVCAT_DGRAD, 2, CONVCAT_BF16, CONVCAT_BF16);
    d.c = 512, d.k = 256, d.groups = 16;   /* dx's 32 and dy's 16 channels a group: fprop packs of 2 */
    d.pad_hi[1] = 2, d.r = 3, d.h = 15;
    expect(__LINE__, &g64, &d, CONVCAT_OK, NULL);
    cvc_view turned;
    CU_ASSERT_EQUAL(cvc_turned_view(unit_view(&d), &turned, NULL, 0), CONVCAT_OK);
    CU_ASSERT_TRUE(turned.p.op == CONVCAT_FPROP && turned.p.c == 256 && turned.p.k == 512 && turned.p.groups == 16);
    CU_ASSERT_TRUE(turned.out[1] == d.h && turned.out[2] == d.w);   /* the fprop of dy writes dx's pixels */
    CU_ASSERT_TRUE(turned.p.pad_lo[1] == 1 && turned.p.pad_hi[1] == 0 && turned.p.h == unit_view(&d)->out[1]);
    BOTH(g64, d, stride[2], 1, 2, "as the fprop of dy");
    BOTH(g64, d, stride[2], 1, 2, "runs unit-stride dgrad only");
    BOTH(g64, d, pad_lo[2], 1, 3, "passes the filter's reach 2");
    convcat_problem odd = d;   /* dy's 4 channels a group, 3 groups: none widened */
    odd.c = 24, odd.k = 12, odd.groups = 3;
    expect(__LINE__, &g64, &odd, CONVCAT_ERR_UNSUPPORTED, "as the fprop of dy: C / groups = 4 channels per group");
    convcat_problem wg = d;
    wg.op = CONVCAT_WGRAD;
    expect(__LINE__, &g64, &wg, CONVCAT_ERR_UNSUPPORTED, "kernel computes fprop, problem is wgrad");
    const cvc_entry coop_fprop = unit_entry("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x64x64_s4_c1x1_coop");
    expect(__LINE__, &coop_fprop, &d, CONVCAT_ERR_UNSUPPORTED, "kernel computes fprop, problem is dgrad");
    const double turned_us = cvc_predict_us(&g64, unit_view(&d), 132), fprop_us = cvc_predict_us(&g64, &turned, 132);
    CU_ASSERT_TRUE(turned_us > fprop_us + 1.0);   /* KEY_regroup's launch on top of the fprop of dy */
    /* Coop fprop kernels still refuse grouped problems; their grouped twin is a kernel of its own. */
    const cvc_entry coop = unit_entry("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x64x64_s4_c1x1_coop");
    p.c = p.k = 512;
    BOTH(coop, p, groups, 1, 32, "groups = 32: this kernel takes groups = 1");
}

/* Groups narrower than the packs (WIDENS_GROUPS): F adjacent groups run as one block-diagonal group
 * of F x c channels and F x k filters, F the smallest power of two dividing groups whose widened
 * groups a pack takes; the plan's filter is KEY_regroup's.  Both ways, for fprop and for unit-stride
 * dgrad (turned, then widened). */
static void test_widened_groups(void)
{
    static const struct {
        int c, k, groups, widen;   /* widen 0: refused, for `why` */
        const char *why;
    } cases[] = {
        {256, 256, 32, 2, NULL},   /* c = k = 8 (ResNeXt-50's 28 x 28 stage): 16 groups of 16 */
        {128, 128, 32, 4, NULL},   /* c = k = 4: 8 groups of 16 */
        {128, 128, 64, 8, NULL},   /* c = k = 2 */
        {256, 512, 32, 2, NULL},   /* c = 8, k = 16: 16 groups of 16 channels and 32 filters */
        {96, 96, 12, 2, NULL},     /* c = k = 8 in 12 groups */
        {24, 24, 3, 0, "k = 8 filters, c = 8 channels a group"},   /* 3 groups: no power of two divides them */
        {16, 16, 2, 0, "k = 8 filters, c = 8 channels a group"},   /* 2 groups: one, widened, is not grouped */
        {40, 40, 10, 0, "C / groups = 4 channels per group: a multiple of 8"},   /* 2 as one: no pack takes 8 */
    };
    const cvc_entry g64 = unit_entry(G64);
    CU_ASSERT_TRUE(cvc_has(&g64, CVC_F_WIDENS_GROUPS));
    for (size_t i = 0; i < CVC_ARRAY_LEN(cases); ++i) {
        convcat_problem p = unit_problem(CONVCAT_FPROP, 2, CONVCAT_BF16, CONVCAT_BF16);
        p.c = cases[i].c, p.k = cases[i].k, p.groups = cases[i].groups;
        const cvc_view *v = unit_view(&p);
        CU_ASSERT_EQUAL(cvc_widening(&g64, v), cases[i].widen ? cases[i].widen : 1);
        expect(__LINE__, &g64, &p, cases[i].widen ? CONVCAT_OK : CONVCAT_ERR_UNSUPPORTED, cases[i].why);
        if (!cases[i].widen)
            continue;
        cvc_view wide;
        CU_ASSERT_EQUAL(cvc_widened_view(v, cases[i].widen, &wide), CONVCAT_OK);
        CU_ASSERT_TRUE(wide.p.groups * cases[i].widen == p.groups && wide.cg == v->cg * cases[i].widen &&
                       wide.kg == v->kg * cases[i].widen && wide.p.c == p.c && wide.p.k == p.k);
        CU_ASSERT_EQUAL(cvc_widening(&g64, &wide), 1);   /* a pack takes the widened groups as they are */
        /* priced as the widened problem after KEY_regroup's copy */
        CU_ASSERT_TRUE(cvc_predict_us(&g64, v, 132) > cvc_predict_us(&g64, &wide, 132) + 1.0);
    }
    /* The mask is the entry's: without 16 in it, c = 8 widens to packs of 2 groups of 32. */
    cvc_entry narrow = unit_entry(G64);
    narrow.group_c_mask &= ~(1u << 4);
    convcat_problem p = unit_problem(CONVCAT_FPROP, 2, CONVCAT_BF16, CONVCAT_BF16);
    p.c = p.k = 256, p.groups = 32;
    CU_ASSERT_EQUAL(cvc_widening(&narrow, unit_view(&p)), 4);
    expect(__LINE__, &narrow, &p, CONVCAT_OK, NULL);
    /* Without the flag, nothing widens. */
    narrow = unit_entry(G64);
    narrow.flags &= ~CVC_F_WIDENS_GROUPS;
    CU_ASSERT_EQUAL(cvc_widening(&narrow, unit_view(&p)), 1);
    expect(__LINE__, &narrow, &p, CONVCAT_ERR_UNSUPPORTED, "k = 8 filters, c = 8 channels a group");
    /* Unit-stride dgrad: turned (the fprop of dy, 8 channels and 8 filters a group), then widened by 2;
     * dx's 4 channels and dy's 8 a group widen to no pack (8 filters, or 4 x 32 channels > tile K). */
    convcat_problem d = unit_problem(CONVCAT_DGRAD, 2, CONVCAT_BF16, CONVCAT_BF16);
    d.c = 256, d.k = 256, d.groups = 32, d.r = d.s = 3, d.pad_lo[1] = d.pad_lo[2] = d.pad_hi[1] = d.pad_hi[2] = 1;
    expect(__LINE__, &g64, &d, CONVCAT_OK, NULL);
    cvc_view turned;
    CU_ASSERT_EQUAL(cvc_turned_view(unit_view(&d), &turned, NULL, 0), CONVCAT_OK);
    CU_ASSERT_EQUAL(cvc_widening(&g64, &turned), 2);
    d.c = 128;
    expect(__LINE__, &g64, &d, CONVCAT_ERR_UNSUPPORTED, "as the fprop of dy");
    d.c = 256;
    /* A strided one is still refused, as the fprop of dy. */
    d.stride[1] = 2;
    expect(__LINE__, &g64, &d, CONVCAT_ERR_UNSUPPORTED, "runs unit-stride dgrad only");
}

/* 32 and 64 channels per group: in every diagonal kernel's group_c_mask, so they run. */
static void test_grouped_wgrad_of_32_and_64_channels(void)
{
    const cvc_entry e = unit_entry("sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop");
    CU_ASSERT_TRUE((e.group_c_mask >> 5 & 1u) && (e.group_c_mask >> 6 & 1u));
    CU_ASSERT_EQUAL(run_group_cases(group_cases_wide, CVC_ARRAY_LEN(group_cases_wide)),
                    (int)CVC_ARRAY_LEN(group_cases_wide));
}

/* How each kernel takes groups, as its index record says (groups_mode). */
static void test_groups_mode_of_kernels(void)
{
    static const struct {
        const char *key;
        int mode;
    } cases[] = {
        {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop", CVC_GROUPS_DIAGONAL},
        {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x2_coop", CVC_GROUPS_DIAGONAL},
        {"sm90a_wgrad_2d_f16_f16_f32_f16_64x64x64_s4_c1x1_pingpong", CVC_GROUPS_DIAGONAL},
        {"sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_1sm", CVC_GROUPS_DIAGONAL},
        {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_coop", CVC_GROUPS_NONE},
        {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x64x64_s4_c1x1_coop", CVC_GROUPS_NONE},
        {"sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_2sm", CVC_GROUPS_NONE},
        {"sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop", CVC_GROUPS_NONE},
        {"sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop", CVC_GROUPS_NONE},
        {"sm90a_fprop_2d_bf16_bf16_f32_bf16_128x64x32_s3_c1x1_gather", CVC_GROUPS_ANY},
        {"sm90a_wgrad_1d_f16_f16_f32_f16_32x64x32_s3_c1x1_gather", CVC_GROUPS_ANY},
        {"sm100a_fprop_2d_bf16_bf16_f32_bf16_128x64x32_s3_c1x1_gather", CVC_GROUPS_ANY},
        {"sm90a_fprop_2d_bf16_bf16_f32_bf16_4x16x64_s1_c1x1_direct", CVC_GROUPS_DEPTHWISE},
        {"sm90a_wgrad_2d_bf16_bf16_f32_bf16_4x16x64_s1_c1x1_direct", CVC_GROUPS_DEPTHWISE},
        {"sm90a_dgrad_2d_f32_f32_f32_f32_4x16x32_s1_c1x1_direct", CVC_GROUPS_DEPTHWISE},
    };
    for (size_t i = 0; i < CVC_ARRAY_LEN(cases); ++i) {
        const cvc_entry e = unit_entry(cases[i].key);
        if (e.groups_mode != cases[i].mode)
            printf("\n    %s: groups_mode %d, wanted %d", e.key, e.groups_mode, cases[i].mode);
        CU_ASSERT_EQUAL(e.groups_mode, cases[i].mode);
        /* The diagonal mask holds c = 8, 16, 32, 64 (space.GROUP_CHANNELS), and 4 on sm90a; a direct kernel's holds 1
         * and the c dividing fprop's and dgrad's 16-byte vector (bf16 2, 4, 8; f32 2, 4), wgrad's even c;
         * no other mode has one. */
        const unsigned direct = e.k.op != CONVCAT_WGRAD && e.k.a == CONVCAT_F32 ? 0x7u : 0xfu;
        const unsigned diagonal = e.k.arch == CONVCAT_ARCH_SM90A ? 0x7cu : 0x78u;
        CU_ASSERT_EQUAL(e.group_c_mask, cases[i].mode == CVC_GROUPS_DIAGONAL    ? diagonal
                                        : cases[i].mode == CVC_GROUPS_DEPTHWISE ? direct
                                                                                : 0u);
    }
}

/* Halo kernels read one input tile per output block for every tap: unit stride, and
 * filters reaching at most the entry's halo_reach pixels past the block (3x3, or 2x2 at
 * dilation 2, or 1x1). */
static void test_halo_rules(void)
{
    const cvc_entry e = unit_entry("sm90a_fprop_2d_bf16_bf16_f32_bf16_224x64x64_s8_c1x1_halo");
    const convcat_problem p = p2();
    ACCEPT(e, p);
    BOTH(e, p, stride[2], 1, 2, "strides (1, 2): a halo kernel");
    BOTH(e, p, stride[1], 1, 3, "at unit stride only");
    BOTH(e, p, dilation[1], 1, 2, "reaches 4 x 2 pixels past an output block");
    BOTH(e, p, s, 3, 5, "filter 3x5 at dilation (1, 1) reaches 2 x 4 pixels");
    convcat_problem q = p;
    q.r = q.s = 2, q.dilation[1] = q.dilation[2] = 2;   /* reach 2 */
    ACCEPT(e, q);
    q.r = q.s = 1, q.pad_lo[1] = q.pad_lo[2] = q.pad_hi[1] = q.pad_hi[2] = 0;
    ACCEPT(e, q);
    /* The reach (R - 1) * dilation past an int: 3 * 715827883 wraps to -2147483647 in 32 bits, which
     * passed "reaches at most 2" (issue 20's problem, from `convcat query`). */
    convcat_problem o = p;
    o.n = 1, o.h = 147483650, o.w = 1, o.c = 8, o.k = 64, o.r = 4, o.s = 1;
    memset(o.pad_lo, 0, sizeof o.pad_lo);
    memset(o.pad_hi, 0, sizeof o.pad_hi);
    o.pad_lo[1] = o.pad_hi[1] = 1000000000;
    o.dilation[1] = 715827883;
    REFUSE(e, o, "reaches 2147483649 x 0 pixels past an output block");
    /* Other kernels take strided problems. */
    const cvc_entry swap = unit_entry("sm90a_fprop_2d_bf16_bf16_f32_bf16_256x64x64_s5_c1x1_swap");
    q = p;
    q.stride[1] = q.stride[2] = 2;
    ACCEPT(swap, q);
}

static void test_traversal_stride_at_most_8(void)
{
    const cvc_entry e2 = unit_entry(E2_KEY), e1 = unit_entry(E1_KEY), e3 = unit_entry(E3_KEY);
    BOTH(e2, p2(), stride[1], 8, 9, "stride 9 along H: TMA traversal strides are 1..8");
    BOTH(e2, p2(), stride[2], 8, 9, "stride 9 along W");
    BOTH(e2, p2(), stride[2], 8, INT_MAX, "along W: TMA traversal strides");
    BOTH(e1, p1(), stride[2], 8, 9, "stride 9 along W");
    BOTH(e3, p3(), stride[0], 8, 9, "stride 9 along D");
    /* Dilation is not a traversal stride: large dilations are limited by the offsets only. */
    convcat_problem p = p2();
    p.h = 40;
    p.dilation[1] = 9;
    ACCEPT(e2, p);
}

static void test_channels_must_fill_16_byte_rows(void)
{
    const cvc_entry e2 = unit_entry(E2_KEY), e1 = unit_entry(E1_KEY);
    BOTH(e2, p2(), c, 8, 12, "C = 12: channels must be a multiple of 8");
    BOTH(e2, p2(), c, 16, 4, "C = 4");
    BOTH(e2, p2(), c, 72, 68, "multiple of 8 (16-byte TMA rows of bf16 and bf16)");
    BOTH(e1, p1(), c, 8, 9, "of f16");
    /* 8-bit inputs need 16 channels (sm100a e4m3 kernels), tf32 4: the index's c_align. */
    const cvc_entry e8 = unit_entry("sm100a_fprop_3d_e4m3_e4m3_f32_bf16_128x256x128_s4_c2x2_2sm");
    const cvc_entry e32 = unit_entry("sm90a_fprop_2d_tf32_tf32_f32_f32_128x128x32_s4_c1x1_coop");
    CU_ASSERT_EQUAL(e8.c_align, 16);
    CU_ASSERT_EQUAL(e32.c_align, 4);
    CU_ASSERT_EQUAL(e2.c_align, 8);
    BOTH(e8, problem(3, CONVCAT_E4M3, CONVCAT_BF16), c, 16, 8, "C = 8: channels must be a multiple of 16");
    BOTH(e8, problem(3, CONVCAT_E4M3, CONVCAT_BF16), c, 48, 40, "C = 40: channels must be a multiple of 16");
    BOTH(e32, problem(2, CONVCAT_TF32, CONVCAT_F32), c, 4, 2, "C = 2: channels must be a multiple of 4");
    /* Three channels (an RGB stem) fill no 16-byte row of any type. */
    BOTH(e2, p2(), c, 8, 3, "C = 3: channels must be a multiple of 8");
    BOTH(e32, problem(2, CONVCAT_TF32, CONVCAT_F32), c, 4, 3, "C = 3: channels must be a multiple of 4");
}

static void test_output_channels_multiple_of_8(void)
{
    const cvc_entry e2 = unit_entry(E2_KEY), e1 = unit_entry(E1_KEY);
    BOTH(e2, p2(), k, 8, 12, "K = 12: output channels must be a multiple of 8");
    BOTH(e2, p2(), k, 16, 4, "K = 4");
    BOTH(e1, p1(), k, 24, 20, "K = 20");   /* f32 output: 8 still */
    /* 8-bit inputs to bf16: 8 as well (the filter's K rows are 16 bytes from 16 channels on). */
    const cvc_entry e8 = unit_entry("sm100a_fprop_3d_e4m3_e4m3_f32_bf16_128x256x128_s4_c2x2_2sm");
    CU_ASSERT_EQUAL(e8.k_align, 8);
    BOTH(e8, problem(3, CONVCAT_E4M3, CONVCAT_BF16), k, 8, 12, "K = 12: output channels must be a multiple of 8");
    /* The rule is the index's k_align: 16 (what an 8-bit output's 16-byte rows would need; no generated
     * kernel writes one) refuses K = 8. */
    cvc_entry e16 = unit_entry(E2_KEY);
    e16.k_align = 16;
    BOTH(e16, p2(), k, 16, 8, "K = 8: output channels must be a multiple of 16");
}

/* M = N*Z*P*Q plus the last cluster's padding tiles must fit the kernel's int32 pixel index. */
static void test_gemm_m_fits_32_bits(void)
{
    const cvc_entry e1 = unit_entry(E1_KEY);   /* tile M 128, cluster M 1 */
    convcat_problem p = p1();
    p.n = 1, p.c = 8, p.k = 8, p.s = 1;
    p.pad_lo[2] = p.pad_hi[2] = 0;
    BOTH(e1, p, w, INT32_MAX - 128, INT32_MAX - 127, "exceeds the kernel's 32-bit pixel index");
    const cvc_entry e2c = unit_entry(E2C_KEY);   /* tile M 128, cluster M 2 */
    convcat_problem q = p2();
    q.n = 1, q.h = 1, q.c = 8, q.k = 8, q.r = q.s = 1;
    memset(q.pad_lo, 0, sizeof q.pad_lo);
    memset(q.pad_hi, 0, sizeof q.pad_hi);
    BOTH(e2c, q, w, INT32_MAX - 256, INT32_MAX - 255, "GEMM M = N*Z*P*Q = 2147483392");
    /* Spread over N and H: (N*P) * Q. */
    q.n = 1 << 15, q.h = 1 << 8, q.w = 1 << 8;   /* M = 2^31 */
    REFUSE(e2c, q, "32-bit pixel index");
    q.n = (1 << 15) - 1;                         /* M = 2^31 - 2^16 */
    ACCEPT(e2c, q);
}

/* ---- TMA: im2col corners and offsets, per rank ---------------------------------------------------- */

/* A problem of `dims` dimensions with 1-tap filters on a large input, the axis under test W (or D/H). */
static convcat_problem wide(int dims)
{
    convcat_problem p = dims == 1 ? p1() : dims == 2 ? p2() : p3();
    p.n = 1, p.c = 16, p.k = 16;
    p.t = p.r = p.s = 1;
    memset(p.pad_lo, 0, sizeof p.pad_lo);
    memset(p.pad_hi, 0, sizeof p.pad_hi);
    if (dims == 1)
        p.w = 1 << 17;
    else if (dims == 2)
        p.h = p.w = 300;
    else
        p.d = p.h = p.w = 64;
    return p;
}

static int *extent_of(convcat_problem *p, int axis) { return axis == 0 ? &p->d : axis == 1 ? &p->h : &p->w; }
static int *filter_of(convcat_problem *p, int axis) { return axis == 0 ? &p->t : axis == 1 ? &p->r : &p->s; }

static const char *const axis_name[3] = {"D", "H", "W"};

/* The corner rule for one axis: lower = -pad_lo, upper = pad_hi - (taps - 1) * dilation, in [lo, hi]. */
static void corners_of_axis(const cvc_entry *e, int dims, int axis, int lo, int hi)
{
    char says[64];
    snprintf(says, sizeof says, "corner along %s", axis_name[axis]);
    char range[32];
    snprintf(range, sizeof range, "[%d, %d]", lo, hi);
    convcat_problem base = wide(dims);
    int *filt = filter_of(&base, axis);

    BOTH(*e, base, pad_lo[axis], -lo, -lo + 1, says);     /* lower corner = -pad_lo */
    BOTH(*e, base, pad_lo[axis], -lo, -lo + 1, range);
    BOTH(*e, base, pad_hi[axis], hi, hi + 1, says);       /* upper corner with a 1-tap filter */
    /* Upper corner pulled down by the filter's reach: 2 taps, dilation -lo (accepted) / -lo + 1. */
    *filt = 2;
    BOTH(*e, base, dilation[axis], -lo, -lo + 1, says);
    /* ...and pushed back up by padding: pad_hi = hi + reach is the largest accepted. */
    base.dilation[axis] = 3;
    BOTH(*e, base, pad_hi[axis], hi + 3, hi + 4, says);
}

static void test_im2col_corner_ranges_per_rank(void)
{
    const cvc_entry e1 = unit_entry(E1_KEY), e2 = unit_entry(E2_KEY), e3 = unit_entry(E3_KEY);
    corners_of_axis(&e1, 1, 2, -32768, 32767);
    corners_of_axis(&e2, 2, 1, -128, 127);
    corners_of_axis(&e2, 2, 2, -128, 127);
    corners_of_axis(&e3, 3, 0, -16, 15);
    corners_of_axis(&e3, 3, 1, -16, 15);
    corners_of_axis(&e3, 3, 2, -16, 15);
}

/* The filter offset (taps - 1) * dilation is a u16/u8/u5 field: 65535, 255, 31.  Padding
 * keeps the upper corner in range, so only the offset rule can refuse. */
static void offsets_of_axis(const cvc_entry *e, int dims, int axis, int lo, int max_offset)
{
    char says[96];
    snprintf(says, sizeof says, "im2col offset (filter - 1) x dilation = %d along %s exceeds %d",
             max_offset + 1, axis_name[axis], max_offset);
    convcat_problem base = wide(dims);
    *extent_of(&base, axis) = max_offset + 2;
    base.pad_hi[axis] = max_offset + lo + 1;   /* upper corner = lo for reach max + 1 */
    /* With dilation 1: taps = max_offset + 1 (accepted), + 2 (refused). */
    convcat_problem p = base;
    *filter_of(&p, axis) = max_offset + 1;
    expect(__LINE__, e, &p, CONVCAT_OK, NULL);
    *filter_of(&p, axis) = max_offset + 2;
    expect(__LINE__, e, &p, CONVCAT_ERR_UNSUPPORTED, says);
    /* With 2 taps: dilation = max_offset, max_offset + 1. */
    *filter_of(&base, axis) = 2;
    BOTH(*e, base, dilation[axis], max_offset, max_offset + 1, says);
}

static void test_im2col_offset_ranges_per_rank(void)
{
    const cvc_entry e1 = unit_entry(E1_KEY), e2 = unit_entry(E2_KEY), e3 = unit_entry(E3_KEY);
    offsets_of_axis(&e1, 1, 2, -32768, 65535);
    offsets_of_axis(&e2, 2, 1, -128, 255);
    offsets_of_axis(&e2, 2, 2, -128, 255);
    offsets_of_axis(&e3, 3, 0, -16, 31);
    offsets_of_axis(&e3, 3, 1, -16, 31);
    offsets_of_axis(&e3, 3, 2, -16, 31);
}

/* A reach (taps - 1) * dilation beyond an int, with padding to fit it: refused (the padded
 * input is past 32-bit coordinates), computed without overflow (the sanitizer build checks
 * the latter). */
static void test_filter_reach_beyond_int_is_refused(void)
{
    const cvc_entry e1 = unit_entry(E1_KEY);
    convcat_problem p = wide(1);
    p.w = INT_MAX;
    p.pad_hi[2] = INT_MAX;
    p.s = 3;
    p.dilation[2] = INT_MAX - 1;   /* reach 2^32 - 4, output Q = 2 */
    int q = 0;
    UNIT_ASSERT_STATUS(convcat_problem_output(&p, NULL, NULL, &q), CONVCAT_OK);
    CU_ASSERT_EQUAL(q, 2);
    REFUSE(e1, p, "the input along W padded by 0 + 2147483647 is 4294967294 pixels");
    p.pad_lo[2] = INT_MAX;        /* the same reach from the other side: upper = 0 - reach < INT_MIN */
    p.pad_hi[2] = 0;
    UNIT_ASSERT_STATUS(convcat_problem_output(&p, NULL, NULL, &q), CONVCAT_OK);
    CU_ASSERT_EQUAL(q, 2);
    REFUSE(e1, p, "the input along W padded by 2147483647 + 0 is 4294967294 pixels");
}

/* ---- TMA: the descriptors' own limits, reached through entries and problems ------------------------- */

static void test_tma_box_and_stride_limits(void)
{
    const convcat_problem p = p2();
    cvc_entry e = unit_entry(E2_KEY);
    e.a_box_rows = 1024;
    ACCEPT(e, p);
    e.a_box_rows = 1025;
    REFUSE(e, p, "activations: pixelsPerColumn 1025 is outside 1..1024");
    e = unit_entry(E2_KEY);
    e.a_box_cols = 32;
    ACCEPT(e, p);
    e.a_box_cols = 4;   /* 8 bytes: not a multiple of 16 */
    REFUSE(e, p, "activations: channelsPerPixel 4");
    e.a_box_cols = 128; /* 256 bytes: wider than the swizzle span */
    REFUSE(e, p, "128-byte swizzle span");
    e = unit_entry(E2_KEY);
    e.b_box_rows = 256;
    ACCEPT(e, p);
    e.b_box_rows = 257;
    REFUSE(e, p, "filters: box extent 257 of dimension 3 is outside 1..256");
    e = unit_entry(E2_KEY);
    e.b_box_cols = 4;
    REFUSE(e, p, "filters: box inner extent is 8 bytes");
    e.swizzle_bytes = 64;
    e.b_box_cols = 32;
    e.a_box_cols = 32;
    e.y_box_cols = 32;   /* the output's store box shares the swizzle */
    ACCEPT(e, p);
    e.b_box_cols = 64;
    REFUSE(e, p, "filters: box inner extent is 128 bytes: a multiple of 16 within the 64-byte swizzle span");
    /* Byte strides below 2^40: C * 2 bytes * W of the activations. */
    e = unit_entry(E2_KEY);
    convcat_problem q = p2();
    q.n = 1, q.h = 1, q.c = 1 << 20, q.k = 8, q.r = q.s = 1;
    memset(q.pad_lo, 0, sizeof q.pad_lo);
    memset(q.pad_hi, 0, sizeof q.pad_hi);
    BOTH(e, q, w, (1 << 19) - 1, 1 << 19, "activations: byte stride 1099511627776 of dimension 2");
}

/* An activation tensor of more than 2^64 bytes whose N stride, computed mod 2^64, lands
 * below 2^40: every other rule passes (M = 12.6M, 2^25 K iterations). */
static void test_tensor_past_2_64_bytes_is_refused(void)
{
    const cvc_entry e3 = unit_entry(E3_KEY);
    convcat_problem p = p3();
    p.n = 1, p.h = 17, p.w = 15, p.c = INT_MAX - 7 - 256, p.k = 8;   /* a tile of 256 short of 2^31 */
    p.t = p.r = p.s = 1;
    memset(p.pad_lo, 0, sizeof p.pad_lo);
    memset(p.pad_hi, 0, sizeof p.pad_hi);
    p.stride[0] = p.stride[1] = p.stride[2] = 8;
    BOTH(e3, p, d, 1, 16843012, "activations: byte stride");
}

/* A strided dgrad's phases are checked one distinct dy box at a time: on problems drawn over
 * strides, filters, padding, dilation and extents, a TMA dgrad kernel accepts a problem only where
 * every phase's dy box is valid (checked here phase by phase), refuses it where one is not, and a
 * phase its reason names is one of those. */
static void test_dgrad_phase_boxes_stand_for_every_phase(void)
{
    const char *keys[] = {"sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x64x64_s4_c1x1_coop",
                          "sm90a_dgrad_3d_f16_f16_f32_f16_128x64x64_s4_c1x1_coop",
                          "sm90a_dgrad_1d_bf16_bf16_f32_bf16_128x64x64_s4_c1x1_coop"};
    uint64_t r = 12345;
    int refused = 0, accepted = 0;   /* refused: some phase's box invalid */
    for (size_t k = 0; k < CVC_ARRAY_LEN(keys); ++k) {
        const cvc_entry e = unit_entry(keys[k]);
        for (int n = 0; n < 2000; ++n) {
            convcat_problem p = unit_problem(CONVCAT_DGRAD, e.k.dims, e.k.a, e.k.out);
            int *ext[3] = {&p.d, &p.h, &p.w}, *filt[3] = {&p.t, &p.r, &p.s};
            for (int a = 3 - p.dims; a < 3; ++a) {
                r = r * 6364136223846793005ull + 1442695040888963407ull;
                *ext[a] = 1 + (int)((r >> 33) % 60), *filt[a] = 1 + (int)((r >> 20) % 7);
                p.stride[a] = 1 + (int)((r >> 45) % 8), p.dilation[a] = 1 + (int)((r >> 52) % 6);
                const uint64_t reach = (uint64_t)(*filt[a] - 1) * p.dilation[a];
                p.pad_lo[a] = (int)((r >> 10) % (reach + 1)), p.pad_hi[a] = (int)((r >> 16) % (reach + 1));
            }
            p.c = p.k = 64;
            cvc_view v;
            if (cvc_view_make(&p, &v, NULL, 0) != CONVCAT_OK)
                continue;
            bool bad = false;
            for (int i = 0; i < v.phases && !bad; ++i) {
                cvc_dgrad_phase ph;
                cvc_dgrad_phase_at(&v, i, &ph);
                cvc_im2col_desc d;
                cvc_tma_dgrad_a(&e, &v, &ph, &d);
                bad = !cvc_im2col_desc_valid(&d, NULL, 0);
            }
            char why[192] = "";
            const convcat_status st = unit_check(&e, &p, why, sizeof why);
            CU_ASSERT_TRUE(bad ? st != CONVCAT_OK : st == CONVCAT_OK || !strstr(why, "dy"));
            accepted += st == CONVCAT_OK, refused += bad;
            if (st != CONVCAT_OK && strstr(why, "stride phase")) {   /* the phase it names is a bad one */
                int i = -1;
                CU_ASSERT_EQUAL_FATAL(sscanf(strstr(why, "stride phase"), "stride phase %d", &i), 1);
                CU_ASSERT_TRUE_FATAL(i >= 0 && i < v.phases);
                cvc_dgrad_phase ph;
                cvc_dgrad_phase_at(&v, i, &ph);
                cvc_im2col_desc d;
                cvc_tma_dgrad_a(&e, &v, &ph, &d);
                CU_ASSERT_FALSE(cvc_im2col_desc_valid(&d, NULL, 0));
            }
        }
    }
    CU_ASSERT_TRUE(refused > 0 && accepted > 0);   /* both kinds drawn */
    /* ViT's 16x16 stride-16 patches: 256 phases, one box on each axis. */
    convcat_problem p = unit_problem(CONVCAT_DGRAD, 2, CONVCAT_BF16, CONVCAT_BF16);
    p.n = 64, p.h = p.w = 224, p.c = 3, p.k = 768, p.r = p.s = 16;
    memset(p.pad_lo, 0, sizeof p.pad_lo);
    memset(p.pad_hi, 0, sizeof p.pad_hi);
    p.stride[1] = p.stride[2] = 16;
    cvc_phase_classes boxes;
    cvc_dgrad_phase_classes(unit_view(&p), CVC_PHASE_BOX, &boxes);
    CU_ASSERT_TRUE(boxes.n[0] == 1 && boxes.n[1] == 1 && boxes.visits == 1);
}

/* The query model prices a strided dgrad's phases by their axes' distinct (pixels, taps): the
 * classes' counts add up to the axis's residues, the visits stand for every phase once, every
 * residue's sizes are one class, and a phase's index comes back from the phase. */
static void test_dgrad_phase_sizes_count_every_residue(void)
{
    uint64_t r = 777;
    for (int n = 0; n < 2000; ++n) {
        convcat_problem p = unit_problem(CONVCAT_DGRAD, 1, CONVCAT_BF16, CONVCAT_BF16);
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        p.w = 1 + (int)((r >> 33) % 200), p.s = 1 + (int)((r >> 20) % 9);
        p.stride[2] = 1 + (int)((r >> 45) % 40), p.dilation[2] = 1 + (int)((r >> 52) % 4);
        const uint64_t reach = (uint64_t)(p.s - 1) * p.dilation[2];
        p.pad_lo[2] = (int)((r >> 10) % (reach + 1)), p.pad_hi[2] = (int)((r >> 16) % (reach + 1));
        cvc_view v;
        if (cvc_view_make(&p, &v, NULL, 0) != CONVCAT_OK)
            continue;
        cvc_phase_classes sizes;
        cvc_dgrad_phase_classes(&v, CVC_PHASE_SIZE, &sizes);
        const int classes = sizes.n[0], residues = v.phases;
        CU_ASSERT_TRUE_FATAL(classes >= 1 && classes <= CVC_PHASE_CLASSES && !sizes.every);
        int total = 0;
        for (int k = 0; k < classes; ++k)
            total += sizes.count[0][k];
        CU_ASSERT_EQUAL(total, residues);
        int64_t visited = 0;   /* the visits stand for every phase once */
        for (int i = 0; i < sizes.visits; ++i) {
            cvc_dgrad_phase ph;
            visited += cvc_dgrad_phase_visit(&v, &sizes, i, &ph);
        }
        CU_ASSERT_EQUAL(visited, residues);
        for (int i = 0; i < residues; ++i) {
            cvc_dgrad_phase ph;
            cvc_dgrad_phase_at(&v, i, &ph);
            CU_ASSERT_EQUAL(cvc_dgrad_phase_index(&v, &ph), i);
            int hits = 0;
            for (int k = 0; k < classes; ++k)
                hits += sizes.axis[0][k].pixels == ph.axis[0].pixels && sizes.axis[0][k].taps == ph.axis[0].taps;
            CU_ASSERT_EQUAL(hits, 1);
        }
    }
}

/* ---- the gather and direct families ---------------------------------------------------------- */

#define G_FPROP "sm90a_fprop_2d_bf16_bf16_f32_bf16_128x64x32_s3_c1x1_gather"
#define G_DGRAD "sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x64x32_s3_c1x1_gather"
#define G_WGRAD "sm90a_wgrad_3d_f16_f16_f32_f16_32x64x32_s3_c1x1_gather"
#define G_WGRAD_1D "sm90a_wgrad_1d_f16_f16_f32_f16_32x64x32_s3_c1x1_gather"
#define G_TF32 "sm90a_fprop_3d_tf32_tf32_f32_f32_64x32x16_s3_c1x1_gather"
#define G_SM100 "sm100a_fprop_2d_bf16_bf16_f32_bf16_128x64x32_s3_c1x1_gather"
#define D_FPROP "sm90a_fprop_2d_bf16_bf16_f32_bf16_4x16x64_s1_c1x1_direct"
#define D_DGRAD "sm90a_dgrad_2d_bf16_bf16_f32_bf16_4x16x64_s1_c1x1_direct"
#define D_WGRAD "sm90a_wgrad_2d_bf16_bf16_f32_bf16_4x16x64_s1_c1x1_direct"
#define D_1D "sm90a_fprop_1d_bf16_bf16_f32_bf16_1x64x64_s1_c1x1_direct"

/* The index fields the rules of the pointer families read: any channels, any stride, no TMA. */
static void test_pointer_family_index_fields(void)
{
    const char *gather[] = {G_FPROP, G_DGRAD, G_WGRAD, G_WGRAD_1D, G_TF32, G_SM100};
    for (size_t i = 0; i < CVC_ARRAY_LEN(gather); ++i) {
        const cvc_entry e = unit_entry(gather[i]);
        CU_ASSERT_EQUAL(e.family, CVC_FAMILY_GATHER);
        CU_ASSERT_EQUAL(e.groups_mode, CVC_GROUPS_ANY);
        CU_ASSERT_TRUE(e.c_align == 1 && e.k_align == 1 && e.max_stride == 0);
        CU_ASSERT_TRUE(e.vec_mask >= 1 && e.vec_mask <= 15);
        CU_ASSERT_TRUE(e.swizzle_bytes == 0 && e.a_box_rows == 0 && e.y_box_rows == 0);   /* no tensor maps */
        CU_ASSERT_TRUE(cvc_has(&e, CVC_F_SPLITS_K) && cvc_has(&e, CVC_F_GROUPED_SPLITS));   /* every op */
        CU_ASSERT_FALSE(cvc_has(&e, CVC_F_SCATTERS) || cvc_has(&e, CVC_F_HALO) || cvc_has(&e, CVC_F_SWAPS));
    }
    const char *direct[] = {D_FPROP, D_DGRAD, D_WGRAD, D_1D};
    for (size_t i = 0; i < CVC_ARRAY_LEN(direct); ++i) {
        const cvc_entry e = unit_entry(direct[i]);
        CU_ASSERT_EQUAL(e.family, CVC_FAMILY_DIRECT);
        CU_ASSERT_EQUAL(e.groups_mode, CVC_GROUPS_DEPTHWISE);
        CU_ASSERT_TRUE(e.c_align == 1 && e.k_align == 1 && e.max_stride == 0);
        CU_ASSERT_TRUE(e.block_vec >= 1 && e.k.tile_k % e.block_vec == 0);
        CU_ASSERT_TRUE(e.block_strip >= 1 && e.k.tile_n % e.block_strip == 0);
        CU_ASSERT_TRUE(e.smem_bytes > 0 && e.swizzle_bytes == 0);
        CU_ASSERT_EQUAL(cvc_has(&e, CVC_F_SPLITS_K), e.k.op == CONVCAT_WGRAD);
    }
}

/* A gather kernel runs any groups (c = 4 channels and k = 2 filters per group), odd channel
 * counts (an RGB stem's 3), strided dgrad past the TMA traversal limit, and tf32. */
static void test_gather_runs_any_groups_and_channels(void)
{
    const char *keys[] = {G_FPROP, G_DGRAD, G_WGRAD, G_WGRAD_1D, G_TF32, G_SM100};
    for (size_t i = 0; i < CVC_ARRAY_LEN(keys); ++i) {
        const cvc_entry e = unit_entry(keys[i]);
        const convcat_problem base = unit_problem(e.k.op, e.k.dims, e.k.a, e.k.out);
        convcat_problem p = base;
        ACCEPT(e, p);
        p.c = 128, p.k = 64;
        BOTH(e, p, groups, 32, 3, "groups = 3 must divide C = 128 and K = 64");   /* c 4, k 2 */
        p.groups = 32;
        CU_ASSERT_TRUE(unit_view(&p)->cg == 4 && unit_view(&p)->kg == 2);
        p.k = 96;   /* k = 3 filters per group */
        ACCEPT(e, p);
        /* Odd channel counts: C = 3, K = 21, and groups of one channel. */
        p = base;
        p.c = 3, p.k = 21;
        ACCEPT(e, p);
        BOTH(e, p, groups, 3, 2, "groups = 2 must divide C = 3 and K = 21");
        p.c = 5, p.k = 7, p.groups = 1;
        ACCEPT(e, p);
        /* Strides: any (dgrad phase by phase), 9 and beyond too. */
        p = base;
        p.c = 3, p.k = 21;
        for (int a = 3 - p.dims; a < 3; ++a)
            p.stride[a] = 2;
        ACCEPT(e, p);
        p.stride[2] = 9;
        p.w = 40;
        ACCEPT(e, p);
        p.dilation[2] = 7;
        ACCEPT(e, p);
    }
    /* The same problems on a TMA kernel of the same op, dims and types: refused, and why. */
    const cvc_entry t = unit_entry(E2_KEY), g = unit_entry(G_FPROP);
    convcat_problem p = p2();
    p.c = 128, p.k = 64, p.groups = 32;
    ACCEPT(g, p);
    REFUSE(t, p, "groups = 32: this kernel takes groups = 1 (the gather family runs grouped problems; 16-bit fprop and unit-stride dgrad also the grouped schedule)");
    p.groups = 1;
    ACCEPT(t, p);
    p.c = 3, p.k = 21;
    ACCEPT(g, p);
    REFUSE(t, p, "C = 3: channels must be a multiple of 8");
    p.c = 8, p.k = 21;
    REFUSE(t, p, "K = 21: output channels must be a multiple of 8");
    p.k = 24;
    ACCEPT(t, p);
    p.stride[2] = 9;
    ACCEPT(g, p);
    REFUSE(t, p, "stride 9 along W: TMA traversal strides are 1..8");
}

/* A patch convolution's dgrad (stride = filter, no padding, whole patches: ViT's 16x16 stride
 * 16 over 224 x 224, C = 3) is one gather GEMM over dy's pixels, N = T*R*S*c; anything else
 * strided (padding, a partial patch, a stride past the filter) runs phase by phase. */
static void test_gather_patch_dgrad_is_one_gemm(void)
{
    const cvc_entry e = unit_entry(G_DGRAD);
    convcat_problem p = unit_problem(CONVCAT_DGRAD, 2, CONVCAT_BF16, CONVCAT_BF16);
    p.n = 64, p.h = p.w = 224, p.c = 3, p.k = 768, p.r = p.s = 16;
    memset(p.pad_lo, 0, sizeof p.pad_lo);
    memset(p.pad_hi, 0, sizeof p.pad_hi);
    p.stride[1] = p.stride[2] = 16;
    CU_ASSERT_TRUE(unit_view(&p)->patch);
    CU_ASSERT_EQUAL(unit_view(&p)->phases, 256);
    ACCEPT(e, p);
    cvc_launches ls;
    CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&e, unit_view(&p), 132, &ls), CONVCAT_OK);
    CU_ASSERT_EQUAL(ls.count, 1);
    const cvc_gather_params *g = &ls.l[0].u.g;
    CU_ASSERT_TRUE(g->patch == 1 && g->gemm_m == 64 * 14 * 14 && g->gemm_n == 16 * 16 * 3 && g->gemm_k == 768);
    CU_ASSERT_TRUE(g->out_step[2] == 16 && g->out_ext[2] == 224 && g->ldy == 3);
    CU_ASSERT_EQUAL(g->vec_b, 8);   /* w's rows (768 elements) read whole */
    free(ls.l);
    /* Not patches: padding, a partial last patch, a stride past the filter. */
    convcat_problem q = p;
    q.pad_lo[2] = q.pad_hi[2] = 1;
    CU_ASSERT_FALSE(unit_view(&q)->patch);
    q = p, q.w = 230;
    CU_ASSERT_FALSE(unit_view(&q)->patch);
    q = p, q.stride[2] = 17;
    CU_ASSERT_FALSE(unit_view(&q)->patch);
    /* fprop and wgrad of the same patches read x along a filter row's S x C = 48 contiguous
     * elements, 16 bytes a load; the ResNet stem (7x7 stride 2, padding 3) element by element. */
    const cvc_entry f = unit_entry(G_FPROP), w = unit_entry("sm90a_wgrad_2d_bf16_bf16_f32_bf16_64x64x32_s3_c1x1_gather");
    q = p, q.op = CONVCAT_FPROP;
    CU_ASSERT_TRUE(unit_view(&q)->patch);
    CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&f, unit_view(&q), 132, &ls), CONVCAT_OK);
    CU_ASSERT_EQUAL(ls.l[0].u.g.vec_a, 8);
    free(ls.l);
    q.op = CONVCAT_WGRAD;
    CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&w, unit_view(&q), 132, &ls), CONVCAT_OK);
    CU_ASSERT_EQUAL(ls.l[0].u.g.vec_b, 8);
    free(ls.l);
    q.op = CONVCAT_FPROP, q.r = q.s = 7, q.stride[1] = q.stride[2] = 2, q.pad_lo[1] = q.pad_lo[2] = 3;
    q.pad_hi[1] = q.pad_hi[2] = 3;
    CU_ASSERT_FALSE(unit_view(&q)->patch);
    CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&f, unit_view(&q), 132, &ls), CONVCAT_OK);
    CU_ASSERT_EQUAL(ls.l[0].u.g.vec_a, 1);
    free(ls.l);
    /* A patch dgrad's GEMM runs over dy's pixels, but it writes dx pixel m * stride: dx's pixels
     * must fit 32 bits too (N = 2^25 images of 1 x 64 are 2^31 dx pixels, 2^30 dy pixels). */
    q = p, q.h = 1, q.w = 64, q.r = 1, q.s = 2, q.stride[1] = 1, q.stride[2] = 2, q.c = 8, q.k = 8;
    BOTH(e, q, n, (1 << 25) - 1, 1 << 25, "dx pixels: past the gather kernel's 32-bit pixel index");
}

/* fprop and a one-launch dgrad split their K loop where the tiles leave the GPU idle (EfficientNet's
 * squeeze-and-excite 1x1s: 64 pixels, C = 672, K = 28): slices of whole k-tiles, none empty, f32
 * sums of the output's shape in the workspace, KEY_reduce after; never on a layer that fills the
 * GPU, nor over a strided dgrad's phases (launches of their own). */
static void test_gather_splits_fprop_and_dgrad(void)
{
    const cvc_entry f = unit_entry(G_FPROP), d = unit_entry(G_DGRAD);
    convcat_problem p = unit_problem(CONVCAT_FPROP, 2, CONVCAT_BF16, CONVCAT_BF16);
    p.n = 64, p.h = p.w = 1, p.r = p.s = 1, p.c = 672, p.k = 28;
    memset(p.pad_lo, 0, sizeof p.pad_lo);
    memset(p.pad_hi, 0, sizeof p.pad_hi);
    for (int op = 0; op < 2; ++op) {
        convcat_problem q = p;
        if (op)   /* dgrad: dx of C = 28 channels from dy's K = 672 */
            q.op = CONVCAT_DGRAD, q.c = 28, q.k = 672;
        const cvc_entry *e = op ? &d : &f;
        ACCEPT(*e, q);
        cvc_launches ls;
        CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(e, unit_view(&q), 132, &ls), CONVCAT_OK);
        CU_ASSERT_EQUAL_FATAL(ls.count, 1);
        const cvc_gather_params *g = &ls.l[0].u.g;
        CU_ASSERT_TRUE(g->gemm_k == 672 && g->splits > 1 && g->split_k % e->k.tile_k == 0);
        CU_ASSERT_TRUE((int64_t)g->split_k * (g->splits - 1) < g->gemm_k && (int64_t)g->split_k * g->splits >= g->gemm_k);
        CU_ASSERT_TRUE(g->split_k / e->k.tile_k >= 2);   /* MIN_SLICE_KTILES */
        CU_ASSERT_EQUAL(g->out_elems, 64 * 28);
        CU_ASSERT_EQUAL(ls.l[0].grid, (unsigned)(g->tiles_m * g->tiles_n * g->splits));
        CU_ASSERT_EQUAL(ls.workspace_bytes, (size_t)g->splits * 64 * 28 * sizeof(float));
        CU_ASSERT_TRUE(ls.reduce_grid > 0);
        free(ls.l);
        /* 64 x 56 x 56 pixels fill the GPU: one slice, no workspace, no reduction. */
        q.h = q.w = 56;
        CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(e, unit_view(&q), 132, &ls), CONVCAT_OK);
        CU_ASSERT_TRUE(ls.l[0].u.g.splits == 1 && ls.l[0].u.g.split_k == 672 && !ls.workspace_bytes && !ls.reduce_grid);
        free(ls.l);
    }
    /* A stride-2 dgrad runs its four phases one launch each, unsplit. */
    convcat_problem q = p;
    q.op = CONVCAT_DGRAD, q.c = 28, q.k = 672, q.h = q.w = 4, q.stride[1] = q.stride[2] = 2;
    cvc_launches ls;
    CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&d, unit_view(&q), 132, &ls), CONVCAT_OK);
    CU_ASSERT_EQUAL(ls.count, 4);
    for (int i = 0; i < ls.count; ++i)
        CU_ASSERT_EQUAL(ls.l[i].u.g.splits, 1);
    CU_ASSERT_TRUE(!ls.workspace_bytes && !ls.reduce_grid);
    free(ls.l);
}

/* REUSES_B: the sm90a TMA fprop and dgrad kernels (not halo ones, not wgrad, not sm100a) load B once
 * a ring slot where every tile runs the same K stages of one tile column and those divide the ring;
 * the model prices such a stage without B's bytes.  A 1x1 fprop of 24 -> 144 channels (one K stage,
 * one tile column of 160) and its dgrad of 64 filters are cheaper with the flag than without; a 3x3 (9 stages a tile, a ring of 4),
 * K = 200 (two tile columns), a dgrad of 144 filters (3 stages) and a strided dgrad are priced the same. */
static void test_tma_reuses_b(void)
{
    const cvc_entry f = unit_entry("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x160x64_s4_c1x1_coop");
    const cvc_entry d = unit_entry("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x128x64_s5_c1x1_coop");
    const cvc_entry w = unit_entry("sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop");
    const cvc_entry h = unit_entry("sm90a_fprop_2d_bf16_bf16_f32_bf16_224x64x64_s8_c1x1_halo");
    const cvc_entry b = unit_entry("sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_1sm");
    CU_ASSERT_TRUE(cvc_has(&f, CVC_F_REUSES_B) && cvc_has(&d, CVC_F_REUSES_B));
    CU_ASSERT_FALSE(cvc_has(&w, CVC_F_REUSES_B) || cvc_has(&h, CVC_F_REUSES_B) || cvc_has(&b, CVC_F_REUSES_B));
    cvc_entry f0 = f, d0 = d;   /* the same kernels priced as if they loaded B every stage */
    f0.flags &= ~CVC_F_REUSES_B, d0.flags &= ~CVC_F_REUSES_B;
    convcat_problem p = unit_problem(CONVCAT_FPROP, 2, CONVCAT_BF16, CONVCAT_BF16);
    p.n = 64, p.h = p.w = 56, p.c = 24, p.k = 144, p.r = p.s = 1;
    ACCEPT(f, p);
    CU_ASSERT_TRUE(cvc_predict_us(&f, unit_view(&p), 132) < cvc_predict_us(&f0, unit_view(&p), 132));
    convcat_problem q = p;   /* dgrad: GEMM N = C = 24 (one column), K = 144 filters (3 stages: no) */
    q.op = CONVCAT_DGRAD;
    ACCEPT(d, q);
    CU_ASSERT_DOUBLE_EQUAL(cvc_predict_us(&d, unit_view(&q), 132), cvc_predict_us(&d0, unit_view(&q), 132), 0.0);
    q.k = 64;   /* one K stage */
    CU_ASSERT_TRUE(cvc_predict_us(&d, unit_view(&q), 132) < cvc_predict_us(&d0, unit_view(&q), 132));
    q.stride[1] = q.stride[2] = 2;   /* phases: priced with B */
    ACCEPT(d, q);
    CU_ASSERT_DOUBLE_EQUAL(cvc_predict_us(&d, unit_view(&q), 132), cvc_predict_us(&d0, unit_view(&q), 132), 0.0);
    convcat_problem r = p;
    r.r = r.s = 3, r.pad_lo[1] = r.pad_lo[2] = r.pad_hi[1] = r.pad_hi[2] = 1;
    ACCEPT(f, r);
    CU_ASSERT_DOUBLE_EQUAL(cvc_predict_us(&f, unit_view(&r), 132), cvc_predict_us(&f0, unit_view(&r), 132), 0.0);
    r = p, r.k = 200;
    ACCEPT(f, r);
    CU_ASSERT_DOUBLE_EQUAL(cvc_predict_us(&f, unit_view(&r), 132), cvc_predict_us(&f0, unit_view(&r), 132), 0.0);
}

/* Tile K 32 (stages of one 64-byte row of K): priced ahead of its tile K 64 twin where a filter tap
 * has 32 channels (DenseNet's 3x3 dgrad of 32 filters: half of each 64-channel stage zero-fill; 2x
 * on the H200) and behind it where a tap has 64 or more (the stages beyond the twin's each pay a
 * stage's fixed latency, ROW_STAGE_US: S3D's 1x1x1 fprop of 832 channels at 8x2x7x7 ran 1.2-1.4x
 * slower on it). */
static void test_tile_k_32_pricing(void)
{
    const cvc_entry d32 = unit_entry("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x128x32_s8_c1x1_coop");
    const cvc_entry d64 = unit_entry("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop");
    convcat_problem p = unit_problem(CONVCAT_DGRAD, 2, CONVCAT_BF16, CONVCAT_BF16);
    p.n = 64, p.h = p.w = 56, p.c = 128, p.k = 32, p.r = p.s = 3;
    p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = 1;
    ACCEPT(d32, p);
    ACCEPT(d64, p);
    CU_ASSERT_TRUE(cvc_predict_us(&d32, unit_view(&p), 132) < cvc_predict_us(&d64, unit_view(&p), 132));
    p.k = 128;
    CU_ASSERT_TRUE(cvc_predict_us(&d32, unit_view(&p), 132) > cvc_predict_us(&d64, unit_view(&p), 132));
    const cvc_entry f32 = unit_entry("sm90a_fprop_3d_bf16_bf16_f32_bf16_128x64x32_s8_c1x1_coop");
    const cvc_entry f64 = unit_entry("sm90a_fprop_3d_bf16_bf16_f32_bf16_128x64x64_s4_c1x1_coop");
    convcat_problem q = unit_problem(CONVCAT_FPROP, 3, CONVCAT_BF16, CONVCAT_BF16);
    q.n = 8, q.d = 2, q.h = q.w = 7, q.c = 832, q.k = 192;
    ACCEPT(f32, q);
    ACCEPT(f64, q);
    CU_ASSERT_TRUE(cvc_predict_us(&f32, unit_view(&q), 132) > cvc_predict_us(&f64, unit_view(&q), 132));
}

/* Packed groups: ResNeXt's stride-2 3x3 dgrad of 32 groups of 16 channels (28 x 28, batch 64) runs 4
 * groups a CTA column on the 64-wide tile, one block-diagonal GEMM of 64 channels and filters a
 * phase: the model prices it faster (one group leaves a phase's K mostly empty and the tile's N
 * three quarters empty).  CONVCAT_GATHER_PACK=1 packs wherever the kernel can (B's loads within a
 * group's channels), =0 never.  Never where no pack of 2 or more divides the groups, nor where one
 * group fills the tile's N, nor on kernels without the flag (fprop, wgrad, tf32, narrow tiles). */
static void test_gather_packs_groups(void)
{
    const cvc_entry f = unit_entry(G_FPROP), d = unit_entry(G_DGRAD), t = unit_entry(G_TF32);
    const cvc_entry w = unit_entry("sm90a_wgrad_2d_bf16_bf16_f32_bf16_64x64x32_s3_c1x1_gather");
    const cvc_entry narrow = unit_entry("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x16x32_s3_c1x1_gather");
    CU_ASSERT_TRUE(cvc_has(&d, CVC_F_PACKS_GROUPS));
    CU_ASSERT_FALSE(cvc_has(&f, CVC_F_PACKS_GROUPS) || cvc_has(&t, CVC_F_PACKS_GROUPS) ||
                    cvc_has(&w, CVC_F_PACKS_GROUPS) || cvc_has(&narrow, CVC_F_PACKS_GROUPS));
    convcat_problem p = unit_problem(CONVCAT_DGRAD, 2, CONVCAT_BF16, CONVCAT_BF16);
    p.n = 64, p.h = p.w = 28, p.c = p.k = 512, p.groups = 32, p.r = p.s = 3;
    p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = 1;
    p.stride[1] = p.stride[2] = 2;
    ACCEPT(d, p);
    cvc_launches ls;
    for (int force = -1; force <= 0; ++force) {
        if (force == 0)
            setenv("CONVCAT_GATHER_PACK", "0", 1);
        CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&d, unit_view(&p), 132, &ls), CONVCAT_OK);
        CU_ASSERT_EQUAL(ls.count, 4);
        for (int i = 0; i < ls.count; ++i) {
            const cvc_gather_params *g = &ls.l[i].u.g;
            if (force < 0) {
                CU_ASSERT_TRUE(g->packed == 1 && g->groups == 8 && g->cg == 64 && g->kg == 64 && g->wc == 16 &&
                               g->gk == 16 && g->gn == 16 && g->gemm_n == 64 && g->vec_a == 8 && g->vec_b == 8);
            } else {
                CU_ASSERT_TRUE(!g->packed && g->groups == 32 && g->cg == 16 && g->gemm_n == 16);
            }
        }
        free(ls.l);
    }
    /* the unit-stride layer (14 x 14), packing forced: K over the pack's 64 filters a tap */
    setenv("CONVCAT_GATHER_PACK", "1", 1);
    p.h = p.w = 14, p.stride[1] = p.stride[2] = 1;
    ACCEPT(d, p);
    CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&d, unit_view(&p), 132, &ls), CONVCAT_OK);
    const cvc_gather_params *g = &ls.l[0].u.g;
    CU_ASSERT_TRUE(g->packed == 1 && g->groups == 8 && g->gemm_n == 64 && g->gemm_k == 9 * 64);
    CU_ASSERT_EQUAL(ls.l[0].grid, (unsigned)(8 * g->tiles_m * g->splits));
    free(ls.l);
    /* c = 12, k = 24: 5 groups of 12 channels fit 64 columns, but 32 % 5 != 0: packs of 4, B in
     * 4-element loads (within a group's 12 channels), K over 4 x 24 filters */
    convcat_problem q = p;
    q.c = 12 * 32, q.k = 24 * 32;
    CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&d, unit_view(&q), 132, &ls), CONVCAT_OK);
    g = &ls.l[0].u.g;
    CU_ASSERT_TRUE(g->packed == 1 && g->groups == 8 && g->cg == 48 && g->kg == 96 && g->gk == 24 && g->gn == 12 &&
                   g->vec_b == 4 && g->gemm_k == 9 * 96);
    free(ls.l);
    /* 31 groups (prime), and 64 channels a group (one fills the tile): a group a CTA, even forced */
    for (int i = 0; i < 2; ++i) {
        q = p;
        if (i == 0)
            q.groups = 31, q.c = q.k = 31 * 16;
        else
            q.groups = 8, q.c = q.k = 8 * 64;
        CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&d, unit_view(&q), 132, &ls), CONVCAT_OK);
        g = &ls.l[0].u.g;
        CU_ASSERT_TRUE(!g->packed && g->groups == q.groups && g->wc == g->cg && g->gk == g->kg);
        free(ls.l);
    }
    /* kernels without the flag: a group a CTA, even forced */
    const cvc_entry *none[] = {&f, &w, &narrow};
    for (int i = 0; i < 3; ++i) {
        q = p, q.op = none[i]->k.op;
        CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(none[i], unit_view(&q), 132, &ls), CONVCAT_OK);
        CU_ASSERT_TRUE(!ls.l[0].u.g.packed && ls.l[0].u.g.groups == 32);
        free(ls.l);
    }
    unsetenv("CONVCAT_GATHER_PACK");
}

/* Coordinates inside a gather kernel stay below 2^30: extents of 2^29 or more are refused. */
static void test_gather_coordinates_below_2_29(void)
{
    const char *says = "along W of 2^29 or more: the gather kernel's coordinates are below 2^30";
    const cvc_entry f = unit_entry(G_FPROP), d = unit_entry(G_DGRAD), w = unit_entry(G_WGRAD_1D);
    convcat_problem p = p2();
    p.n = 1, p.h = 1, p.c = 8, p.k = 8, p.r = p.s = 1;
    memset(p.pad_lo, 0, sizeof p.pad_lo);
    memset(p.pad_hi, 0, sizeof p.pad_hi);
    BOTH(f, p, w, (1 << 29) - 1, 1 << 29, says);
    p.op = CONVCAT_DGRAD;
    BOTH(d, p, w, (1 << 29) - 1, 1 << 29, says);
    BOTH(d, p, w, (1 << 29) - 1, INT_MAX, says);
    /* The output's extent times the stride counts too: Q = 2^28 at stride 2 reaches 2^29. */
    p.op = CONVCAT_FPROP;
    p.w = (1 << 29) - 1;
    BOTH(f, p, stride[2], 1, 2, says);
    /* wgrad: the pixel reduction is the GEMM K. */
    convcat_problem q = unit_problem(CONVCAT_WGRAD, 1, CONVCAT_F16, CONVCAT_F16);
    q.n = 1, q.c = q.k = 8, q.s = 1, q.pad_lo[2] = q.pad_hi[2] = 0;
    BOTH(w, q, w, (1 << 29) - 1, 1 << 29, says);
    q.w = 1 << 20;
    BOTH(w, q, pad_hi[2], (1 << 28), 1 << 29, "padding or filter reach along W");
}

/* Channel counters of the pointer families are ints too: a direct block's channels k0 + lane*vec and
 * a gather tile's columns pass C and K by up to a tile (a depthwise C = 2^31 - 8 was accepted). */
static void test_pointer_family_channels_fit_32_bits(void)
{
    const char *says = "the kernel's 32-bit channel counters step up to 64";
    const cvc_entry d = unit_entry(D_1D);   /* tile K 64 */
    convcat_problem p = unit_problem(CONVCAT_FPROP, 1, CONVCAT_BF16, CONVCAT_BF16);
    p.n = 1, p.w = 4, p.s = 1, p.pad_lo[2] = p.pad_hi[2] = 0;
    p.c = p.k = p.groups = INT32_MAX - 7 - 64;
    ACCEPT(d, p);
    p.c = p.k = p.groups = INT32_MAX - 7;
    REFUSE(d, p, says);
    const cvc_entry g = unit_entry(G_FPROP);   /* tile 128 x 64 x 32 */
    convcat_problem q = p2();
    q.n = 1, q.h = 1, q.w = 4, q.c = 8, q.r = q.s = 1;
    memset(q.pad_lo, 0, sizeof q.pad_lo);
    memset(q.pad_hi, 0, sizeof q.pad_hi);
    BOTH(g, q, k, INT32_MAX - 7 - 128, INT32_MAX - 7, "the kernel's 32-bit channel counters step up to 128");
}

/* A strided dgrad runs a launch per stride phase: at most 4096 phases (64 x 64; the bench networks
 * have at most 256).  A gather dgrad of strides (4096, 4096) was accepted and its time model
 * allocated 17 GB of launches (found by tests/fuzz/fuzz_rules); in 3D the phase count, a product
 * of three ints, wrapped. */
static void test_dgrad_stride_phases_are_bounded(void)
{
    const cvc_entry g = unit_entry(G_DGRAD);
    convcat_problem p = unit_problem(CONVCAT_DGRAD, 2, CONVCAT_BF16, CONVCAT_BF16);
    p.n = 1, p.h = p.w = 128, p.c = p.k = 8, p.r = p.s = 1;
    memset(p.pad_lo, 0, sizeof p.pad_lo);
    memset(p.pad_hi, 0, sizeof p.pad_hi);
    p.stride[1] = p.stride[2] = 64;
    ACCEPT(g, p);
    BOTH(g, p, stride[2], 64, 65, "4160 stride phases");
    p.stride[1] = p.stride[2] = 4096;   /* 128 x 128 phases: one a pixel */
    REFUSE(g, p, "16384 stride phases");
    p.h = p.w = 1;   /* phases with pixels only: 1 */
    ACCEPT(g, p);
    const cvc_entry g3 = unit_entry("sm90a_dgrad_3d_tf32_tf32_f32_f32_64x32x16_s3_c1x1_gather");
    convcat_problem q = unit_problem(CONVCAT_DGRAD, 3, CONVCAT_TF32, CONVCAT_F32);
    q.n = 1, q.d = q.h = q.w = 2048, q.c = q.k = 4, q.t = q.r = q.s = 1;
    memset(q.pad_lo, 0, sizeof q.pad_lo);
    memset(q.pad_hi, 0, sizeof q.pad_hi);
    q.stride[0] = q.stride[1] = q.stride[2] = 2048;   /* 2^33 phases: an int product wraps to 0 */
    REFUSE(g3, q, NULL);
    cvc_view v;
    char why[192];
    UNIT_ASSERT_STATUS(cvc_view_make(&q, &v, why, sizeof why), CONVCAT_OK);
    CU_ASSERT_TRUE(v.phases > 4096);
}

/* A direct kernel runs depthwise problems (groups = C, K = C * mult) of its op, strided or not,
 * and groups of c = k = 2, 4 or 8 channels (bf16); any other grouping is refused. */
static void test_direct_runs_depthwise_problems(void)
{
    const char *keys[] = {D_FPROP, D_DGRAD, D_WGRAD, D_1D};
    for (size_t i = 0; i < CVC_ARRAY_LEN(keys); ++i) {
        const cvc_entry e = unit_entry(keys[i]);
        convcat_problem p = unit_problem(e.k.op, e.k.dims, e.k.a, e.k.out);
        p.c = 64, p.k = 128, p.groups = 64;   /* a multiplier of 2 */
        ACCEPT(e, p);
        p.k = 64;
        ACCEPT(e, p);
        p.c = p.k = p.groups = 3;   /* any channel count */
        ACCEPT(e, p);
        p.c = p.groups = 64, p.k = 128;
        for (int a = 3 - p.dims; a < 3; ++a)
            p.stride[a] = 2;
        ACCEPT(e, p);   /* dgrad: the strided mode */
        p.stride[2] = 3;
        ACCEPT(e, p);
        p = unit_problem(e.k.op, e.k.dims, e.k.a, e.k.out);
        p.c = 64, p.k = 128;
        BOTH(e, p, groups, 64, 1, "64 channels and 128 filters per group; this direct kernel takes one "
                                  "channel per group, or 2, 4, 8 of each");
        BOTH(e, p, groups, 64, 32, "2 channels and 4 filters per group");
        BOTH(e, p, groups, 64, 3, "groups = 3 must divide C = 64 and K = 128");
        p.k = 64;   /* c = k */
        for (int c = 2; c <= 16; c *= 2) {
            p.groups = 64 / c;
            if (c <= 8)
                ACCEPT(e, p);
            else
                REFUSE(e, p, "this direct kernel takes one channel per group, or 2, 4, 8 of each");
        }
        p.c = p.k = 12, p.groups = 3;   /* c = 4, channels in no whole vectors of 8: whole groups still */
        ACCEPT(e, p);
    }
}

/* A direct fprop/dgrad kernel of two or more block rows takes its 3x3 column segments a run of
 * blocks at a time (block_run, a divisor of the block's rows): the planner's runs are whole
 * multiples of it, small problems and large; wgrad and 1D kernels have none. */
static void test_direct_runs_are_whole_units(void)
{
    const cvc_entry f = unit_entry(D_FPROP), d = unit_entry(D_DGRAD), w = unit_entry(D_WGRAD), o = unit_entry(D_1D);
    CU_ASSERT_FATAL(f.block_run > 1 && f.k.tile_m % f.block_run == 0);
    CU_ASSERT_EQUAL_FATAL(d.block_run, f.block_run);
    CU_ASSERT_EQUAL(w.block_run, 0);
    CU_ASSERT_EQUAL(o.block_run, 0);
    const int sizes[][2] = {{1, 8}, {2, 28}, {64, 112}, {256, 224}};
    for (size_t i = 0; i < CVC_ARRAY_LEN(sizes); ++i) {
        for (int op = CONVCAT_FPROP; op <= CONVCAT_DGRAD; ++op) {
            const cvc_entry *e = op == CONVCAT_FPROP ? &f : &d;
            convcat_problem p = unit_problem((convcat_op)op, 2, CONVCAT_BF16, CONVCAT_BF16);
            p.n = sizes[i][0], p.h = p.w = sizes[i][1], p.c = p.k = p.groups = 64;
            p.r = p.s = 3;
            cvc_launches ls;
            CU_ASSERT_EQUAL_FATAL(cvc_direct_launches(e, unit_view(&p), 132, &ls), CONVCAT_OK);
            CU_ASSERT_EQUAL(ls.l[0].u.d.blocks_per_slice % e->block_run, 0);
        }
    }
}

/* A staged direct kernel (stages 2) runs 2D depthwise fprop and unit-stride dgrad of one channel and
 * one filter a group, channels in whole 16-byte vectors, on the filter rows it has compiled in (3, 5
 * or 7 taps at W stride 1 or 2, W dilation 1; any height and H dilation), and its input tiles must fit
 * its shared memory; the rest it refuses with the reason (the unstaged kernels run them). */
#define D_STAGED_FPROP "sm90a_fprop_2d_bf16_bf16_f32_bf16_8x16x32_s2_c1x1_direct"
#define D_STAGED_DGRAD "sm90a_dgrad_2d_f16_f16_f32_f16_8x8x32_s2_c1x1_direct"
static void test_direct_staged_rules(void)
{
    const cvc_entry f = unit_entry(D_STAGED_FPROP), d = unit_entry(D_STAGED_DGRAD);
    const cvc_entry unstaged[2] = {unit_entry(D_FPROP), unit_entry("sm90a_dgrad_2d_f16_f16_f32_f16_8x8x32_s1_c1x1_direct")};
    CU_ASSERT_TRUE(f.stage_pixel_bytes >= 64 && f.stage_pixel_bytes % 16 == 0);
    CU_ASSERT_EQUAL(unstaged[0].stage_pixel_bytes, 0);
    const char *rows = "this staged direct kernel has filter rows (taps/W stride, dilation 1) of 3/1, 5/1, 7/1, 3/2, 5/2, "
                       "7/2 compiled in";
    for (int i = 0; i < 2; ++i) {
        const cvc_entry *e = i ? &d : &f, *u = &unstaged[i];
        convcat_problem p = unit_problem(e->k.op, 2, e->k.a, e->k.out);
        p.n = 2, p.h = 30, p.w = 31, p.c = p.k = p.groups = 96, p.r = p.s = 3;
        for (int s = 3; s <= 7; s += 2) {
            p.s = s;
            ACCEPT(*e, p);
        }
        p.s = 3;
        BOTH(*e, p, s, 3, 4, "filter width 4 at W stride 1");
        BOTH(*e, p, s, 3, 1, rows);
        for (int r = 1; r <= 7; ++r) {   /* any filter height */
            convcat_problem h = p;
            h.r = r;
            ACCEPT(*e, h);
        }
        convcat_problem q = p;
        q.dilation[1] = 2;   /* H dilation: the tile's rows */
        ACCEPT(*e, q);
        q = p, q.dilation[2] = 2;
        REFUSE(*e, q, "W dilation 2: this staged direct kernel");
        ACCEPT(*u, q);
        BOTH(*e, p, c, 96, 12, NULL);   /* groups = C = 12: 12 channels, no whole vector of 8 */
        q = p, q.c = q.k = q.groups = 12;
        REFUSE(*e, q, "C = 12: this staged direct kernel copies whole vectors of 8 channels");
        q = p, q.k = 192;   /* a multiplier of 2 */
        REFUSE(*e, q, "C / groups = 1, K / groups = 2: this staged direct kernel takes one channel and one filter");
        q = p, q.groups = 24;   /* 4 channels a group */
        REFUSE(*e, q, "4 channels per group");
        ACCEPT(*u, q);
        q = p, q.stride[1] = q.stride[2] = 2;
        if (e->k.op == CONVCAT_FPROP)
            ACCEPT(*e, q);
        else
            REFUSE(*e, q, "stride 2x2: this staged direct kernel computes unit-stride dgrad only");
        q.stride[2] = 3;
        if (e->k.op == CONVCAT_FPROP)
            REFUSE(*e, q, "filter width 3 at W stride 3");
    }
    /* sm90a: the tile by one TMA copy, unpadded 64-byte pixels. Two stages of the 8x16 block's input
     * tile and the filter table in 113 KiB: 7x7 at stride 2 needs a 21 x 37 tile, at H dilation 3 a
     * 33 x 37 one, 2 x 78,208 bytes with the table: too many; at H stride 1, 14 rows. */
    convcat_problem p = unit_problem(CONVCAT_FPROP, 2, CONVCAT_BF16, CONVCAT_BF16);
    p.n = 2, p.h = p.w = 64, p.c = p.k = p.groups = 96, p.r = p.s = 7;
    p.stride[1] = 1, p.stride[2] = 2;
    CU_ASSERT_TRUE_FATAL(cvc_has(&f, CVC_F_TMA_TILE) && cvc_has(&d, CVC_F_TMA_TILE));
    CU_ASSERT_EQUAL_FATAL(f.stage_pixel_bytes, 64);
    ACCEPT(f, p);
    p.stride[1] = 2;
    ACCEPT(f, p);
    p.dilation[1] = 3;
    REFUSE(f, p, "bytes of shared memory");
    /* A tile of more than 256 rows is past a TMA box: refused by that rule first. */
    convcat_problem tall = p;
    tall.h = 400, tall.r = 7, tall.stride[1] = 1, tall.dilation[1] = 50;   /* 7 + 300 + 1 rows */
    REFUSE(f, tall, "input tile (TMA copy): box extent 308 of dimension 2 is outside 1..256");
    /* The launch: the tile's extents in the parameters and the input's map with the tile as its box,
     * one wave of CTAs, runs covering every block. */
    p.stride[1] = 1, p.dilation[1] = 1;
    cvc_launches ls;
    CU_ASSERT_EQUAL_FATAL(cvc_direct_launches(&f, unit_view(&p), 132, &ls), CONVCAT_OK);
    const cvc_direct_params *dp = &ls.l[0].u.d;
    CU_ASSERT_EQUAL(dp->tile_ext[1], 7 * 1 + 7);
    CU_ASSERT_EQUAL(dp->tile_ext[2], 15 * 2 + 7);
    CU_ASSERT_EQUAL(ls.l[0].smem, 6272 + 2 * 33152);   /* 49 taps x 32 channels x 4 bytes; 14 x 37 x 64 to 128 bytes */
    CU_ASSERT_TRUE((int64_t)dp->slices * dp->blocks_per_slice >= (int64_t)p.n * dp->blocks[1] * dp->blocks[2]);
    CU_ASSERT_TRUE(ls.l[0].grid <= 132u * 32u);
    const cvc_tiled_desc *m = &ls.l[0].map;   /* C x W x H x N, boxes of the tile's 32 channels */
    CU_ASSERT_EQUAL(m->rank, 4);
    CU_ASSERT_TRUE(m->dims[0] == 96 && m->dims[1] == 64 && m->dims[2] == 64 && m->dims[3] == 2);
    CU_ASSERT_TRUE(m->strides[0] == 96 * 2 && m->strides[1] == 64 * 96 * 2 && m->strides[2] == 64 * 64 * 96 * 2);
    CU_ASSERT_TRUE(m->box[0] == 32 && m->box[1] == 37 && m->box[2] == 14 && m->box[3] == 1);
    free(ls.l);
    /* 3x3 at unit stride: the tile's 18 columns become an odd row pitch of 19 (the kernel's quarter
     * warps read consecutive rows: distinct bank groups). */
    p.r = p.s = 3, p.stride[2] = 1;
    CU_ASSERT_EQUAL_FATAL(cvc_direct_launches(&f, unit_view(&p), 132, &ls), CONVCAT_OK);
    CU_ASSERT_EQUAL(ls.l[0].u.d.tile_ext[1], 10);
    CU_ASSERT_EQUAL(ls.l[0].u.d.tile_ext[2], 19);
    CU_ASSERT_EQUAL(ls.l[0].map.box[1], 19);
    free(ls.l);
    /* An output smaller than a block: the tile covers its 7 rows and its 7 columns in whole strips
     * of 4 (3x3 stride 2 on 14 x 14: 15 x 17 pixels, not the block's 17 x 33). */
    p.h = p.w = 14, p.r = p.s = 3, p.stride[1] = p.stride[2] = 2;
    p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = 1;
    CU_ASSERT_EQUAL_FATAL(f.block_strip, 4);
    CU_ASSERT_EQUAL_FATAL(cvc_direct_launches(&f, unit_view(&p), 132, &ls), CONVCAT_OK);
    dp = &ls.l[0].u.d;
    CU_ASSERT_TRUE(dp->tile_ext[1] == 15 && dp->tile_ext[2] == 17);
    CU_ASSERT_EQUAL(ls.l[0].smem, 1152 + 2 * 16384);   /* 9 taps x 32 x 4; 15 x 17 x 64 to 128 bytes */
    free(ls.l);
    /* unit-stride dgrad, 5 x 5 dx on the 8 x 8 block: 5 + 2 rows, 2 strips + 2 columns, and one for an
     * odd pitch */
    convcat_problem q = unit_problem(CONVCAT_DGRAD, 2, CONVCAT_F16, CONVCAT_F16);
    q.n = 2, q.h = q.w = 5, q.c = q.k = q.groups = 96, q.r = q.s = 3;
    q.pad_lo[1] = q.pad_lo[2] = q.pad_hi[1] = q.pad_hi[2] = 1;
    ACCEPT(d, q);
    CU_ASSERT_EQUAL_FATAL(cvc_direct_launches(&d, unit_view(&q), 132, &ls), CONVCAT_OK);
    CU_ASSERT_TRUE(ls.l[0].u.d.tile_ext[1] == 7 && ls.l[0].u.d.tile_ext[2] == 11);
    free(ls.l);
}

/* Staged wgrad (depthwise, 2D): filter rows of 3, 5, 7 taps at W stride 1 or 2 (W dilation 1), any H
 * stride and dilation, a thread of each channel vector per filter row; the launch sizes the dy blocks
 * to the image and makes the x tile's row pitch odd. */
#define D_STAGED_WGRAD "sm90a_wgrad_2d_bf16_bf16_f32_bf16_8x32x32_s2_c1x1_direct"

static void test_direct_staged_wgrad_rules(void)
{
    const cvc_entry e = unit_entry(D_STAGED_WGRAD), u = unit_entry("sm90a_wgrad_2d_bf16_bf16_f32_bf16_4x16x32_s1_c1x1_direct");
    CU_ASSERT_EQUAL_FATAL(e.stage_pixel_bytes, 64);
    CU_ASSERT_EQUAL_FATAL(e.block_vec * 8, e.k.tile_k);   /* 8 channel vectors, 32 threads each */
    convcat_problem p = unit_problem(CONVCAT_WGRAD, 2, CONVCAT_BF16, CONVCAT_BF16);
    p.n = 2, p.h = p.w = 30, p.c = p.k = p.groups = 96, p.r = p.s = 3;
    p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = 1;
    for (int st = 1; st <= 2; ++st)
        for (int s = 3; s <= 7; s += 2) {
            convcat_problem q = p;
            q.s = s, q.stride[2] = st;
            ACCEPT(e, q);
        }
    BOTH(e, p, s, 3, 4, "filter width 4 at W stride 1, W dilation 1: this staged direct kernel has filter rows");
    convcat_problem q = p;
    q.h = 80, q.w = 8;   /* tall and narrow: a tile of 39 rows of 11 pixels */
    BOTH(e, q, r, 32, 33, "filter height 33: this staged direct kernel (wgrad) takes filters of at most 32 rows");
    q = p;
    q.dilation[1] = 2, q.stride[1] = 2;   /* H stride and dilation: the tile's rows */
    ACCEPT(e, q);
    q = p, q.dilation[2] = 2;
    REFUSE(e, q, "W dilation 2: this staged direct kernel");
    ACCEPT(u, q);
    q = p, q.stride[2] = 3;
    REFUSE(e, q, "filter width 3 at W stride 3");
    q = p, q.c = q.k = q.groups = 12;
    REFUSE(e, q, "C = 12: this staged direct kernel copies whole vectors of 8 channels");
    ACCEPT(u, q);
    q = p, q.k = 192;   /* a multiplier of 2 */
    REFUSE(e, q, "this staged direct kernel takes one channel and one filter");
    ACCEPT(u, q);
    /* 7x7 at stride 2 on a 64 x 64 image: two stages of a 21 x 69-pixel x tile and 8 x 32 dy pixels,
     * 2 x 109,184 bytes; on a 30 x 30 image the blocks shrink to 8 x 16 and fit */
    q = p, q.r = q.s = 7, q.stride[1] = q.stride[2] = 2, q.h = q.w = 64;
    REFUSE(e, q, "218368 bytes of shared memory");
    q.h = q.w = 30;
    ACCEPT(e, q);
    /* The launch: 30 rows in blocks of 8, 30 columns in 4 segments of 8; x tile 10 rows of 34 columns,
     * the pitch 35; 32 segments a block in 4 rounds of 8 pixel groups (10 fit a channel vector's 32
     * threads at 3 filter rows). */
    cvc_launches ls;
    CU_ASSERT_EQUAL_FATAL(cvc_direct_launches(&e, unit_view(&p), 132, &ls), CONVCAT_OK);
    const cvc_direct_params *dp = &ls.l[0].u.d;
    CU_ASSERT_EQUAL(dp->tile_ext[0], 8);
    CU_ASSERT_EQUAL(dp->tile_ext[1], 10);
    CU_ASSERT_EQUAL(dp->tile_ext[2], 35);
    CU_ASSERT_EQUAL(dp->units, 4);
    CU_ASSERT_EQUAL(dp->pixel_groups, 8);
    CU_ASSERT_EQUAL(dp->blocks[1], 4);
    CU_ASSERT_EQUAL(dp->blocks[2], 1);
    CU_ASSERT_EQUAL(ls.l[0].smem, 2 * (22400 + 16384));
    CU_ASSERT_EQUAL(dp->out_elems, 96 * 9);
    CU_ASSERT_EQUAL(ls.workspace_bytes, (size_t)dp->slices * 96 * 9 * 4);
    CU_ASSERT_TRUE((int64_t)dp->slices * dp->blocks_per_slice >= (int64_t)p.n * dp->blocks[1] * dp->blocks[2]);
    CU_ASSERT_TRUE(ls.reduce_grid > 0);
    free(ls.l);
    /* a 7 x 7 image: one block of 7 rows and one segment, 7 pixel groups of one round */
    q = p, q.h = q.w = 7;
    CU_ASSERT_EQUAL_FATAL(cvc_direct_launches(&e, unit_view(&q), 132, &ls), CONVCAT_OK);
    CU_ASSERT_EQUAL(ls.l[0].u.d.tile_ext[0], 7);
    CU_ASSERT_EQUAL(ls.l[0].u.d.units, 1);
    CU_ASSERT_EQUAL(ls.l[0].u.d.pixel_groups, 7);
    CU_ASSERT_EQUAL(ls.l[0].u.d.tile_ext[2], 11);
    free(ls.l);
}

/* A direct fprop/dgrad kernel holds its channels' filters (f32, every tap) in shared memory, a
 * wgrad kernel its input tile and dy block: a filter that needs more than the kernel's
 * smem_bytes is refused with the bytes it would need. */
static void test_direct_tile_must_fit_shared_memory(void)
{
    const char *need = "bytes of shared memory";
    const cvc_entry e1 = unit_entry(D_1D), e2 = unit_entry(D_FPROP);
    convcat_problem p = unit_problem(CONVCAT_FPROP, 1, CONVCAT_BF16, CONVCAT_BF16);
    p.n = 1, p.w = 1024, p.c = p.k = p.groups = 64;
    p.pad_lo[2] = p.pad_hi[2] = 0;
    p.s = 31;
    ACCEPT(e1, p);
    p.dilation[2] = 2;   /* the table holds taps, whatever their reach */
    ACCEPT(e1, p);
    p.dilation[2] = 1;
    /* 64 channels x 4 bytes a tap: 452 taps fit the 113 KiB the index gives the kernel. */
    CU_ASSERT_EQUAL(e1.smem_bytes, 113 * 1024);
    BOTH(e1, p, s, 452, 453, need);
    /* 2D: 7x7 fits; 31x31 (961 taps) does not, at any dilation. */
    convcat_problem q = unit_problem(CONVCAT_FPROP, 2, CONVCAT_BF16, CONVCAT_BF16);
    q.n = 1, q.h = q.w = 256, q.c = q.k = q.groups = 64;
    memset(q.pad_lo, 0, sizeof q.pad_lo);
    memset(q.pad_hi, 0, sizeof q.pad_hi);
    q.r = q.s = 7;
    ACCEPT(e2, q);
    q.r = q.s = 31, q.dilation[1] = q.dilation[2] = 8;
    REFUSE(e2, q, "filter 1x31x31 of 1 filters a group: this kernel's table of its 64 channels' filters needs 246016");
    q.dilation[1] = q.dilation[2] = 1;
    REFUSE(e2, q, need);
    /* wgrad: a thread group per unit of taps (a filter row, or 8 taps of a longer one) while
     * there are threads, more units a thread past them; the sums of every unit (8 taps x 64
     * channels x 4 bytes) must fit: 55 units, not 56. */
    const cvc_entry w = unit_entry(D_WGRAD);
    convcat_problem r = unit_problem(CONVCAT_WGRAD, 2, CONVCAT_BF16, CONVCAT_BF16);
    r.n = 1, r.h = 80, r.w = 16, r.c = r.k = r.groups = 64, r.s = 8;
    memset(r.pad_lo, 0, sizeof r.pad_lo);
    memset(r.pad_hi, 0, sizeof r.pad_hi);
    r.r = 33;   /* 33 units: more than the kernel's 8 threads a channel vector */
    ACCEPT(w, r);
    BOTH(w, r, r, 56, 57, "filter 1x57x8: this wgrad kernel's sums of its units of taps need 116736 bytes");
}

/* The rule a refusal names (the query ranks refused kernels by it). */
static void test_refusals_name_their_rule(void)
{
    const struct {
        const char *key;
        int field;   /* what to break: 0 op, 1 dims, 2 types, 3 C, 4 groups, 5 stride, 6 smem, 7 mode */
        cvc_rule rule;
    } cases[] = {
        {E2_KEY, 0, CVC_RULE_OP}, {E2_KEY, 1, CVC_RULE_DIMS}, {E2_KEY, 2, CVC_RULE_TYPES},
        {E2_KEY, 3, CVC_RULE_CHANNELS}, {E2_KEY, 4, CVC_RULE_GROUPS}, {E2_KEY, 5, CVC_RULE_STRIDE},
        {E2_KEY, 7, CVC_RULE_MODE}, {G_FPROP, 0, CVC_RULE_OP}, {G_FPROP, 2, CVC_RULE_TYPES},
        {D_FPROP, 4, CVC_RULE_GROUPS}, {D_FPROP, 6, CVC_RULE_TILE},
    };
    for (size_t i = 0; i < CVC_ARRAY_LEN(cases); ++i) {
        const cvc_entry e = unit_entry(cases[i].key);
        convcat_problem p = p2();
        if (e.family == CVC_FAMILY_DIRECT)
            p.groups = p.c;
        char why[192] = "";
        cvc_rule rule = CVC_RULE_COUNT;
        UNIT_ASSERT_STATUS(cvc_check_entry(&e, unit_view(&p), why, sizeof why, &rule), CONVCAT_OK);
        CU_ASSERT_EQUAL(rule, CVC_RULE_NONE);
        switch (cases[i].field) {
        case 0: p.op = CONVCAT_WGRAD; break;
        case 1: p = p3(), p.groups = e.family == CVC_FAMILY_DIRECT ? p.c : 1; break;
        case 2: p.a_type = p.b_type = CONVCAT_F16; break;
        case 3: p.c = 12; break;
        case 4: p.groups = e.family == CVC_FAMILY_DIRECT ? 1 : 2; break;
        case 5: p.stride[2] = 9; break;
        case 6: p.h = p.w = 256, p.r = p.s = 31, p.dilation[1] = p.dilation[2] = 8; break;
        default: p.mode = CONVCAT_CONVOLUTION;
        }
        rule = CVC_RULE_NONE;
        UNIT_ASSERT_STATUS(cvc_check_entry(&e, unit_view(&p), why, sizeof why, &rule), CONVCAT_ERR_UNSUPPORTED);
        if (rule != cases[i].rule)
            printf("\n    case %zu (%s): rule %d, wanted %d (%s)", i, e.key, (int)rule, (int)cases[i].rule, why);
        CU_ASSERT_EQUAL(rule, cases[i].rule);
        CU_ASSERT_EQUAL(cvc_check_entry(&e, unit_view(&p), why, sizeof why, NULL), CONVCAT_ERR_UNSUPPORTED);
    }
}

/* ---- problem helpers and the public check ------------------------------------------------------------ */

/* cvc_view_make resolves a problem once: its extents, counts, per-group channels, element sizes,
 * stride phases and GEMM view, for each op. */
static void test_view_of_known_problems(void)
{
    convcat_problem p;
    convcat_problem_init(&p);
    p.n = 2, p.h = 10, p.w = 12, p.c = 48, p.k = 24, p.r = 3, p.s = 5, p.groups = 4;
    p.pad_lo[1] = 1, p.pad_lo[2] = 2, p.pad_hi[1] = 3, p.pad_hi[2] = 4;
    p.stride[1] = 2, p.stride[2] = 3, p.dilation[1] = 2;
    /* P = (10 + 4 - 5) / 2 + 1 = 5, Q = (12 + 6 - 5) / 3 + 1 = 5 */
    const cvc_view *v = unit_view(&p);
    CU_ASSERT_EQUAL(memcmp(&v->p, &p, sizeof p), 0);
    CU_ASSERT_TRUE(v->out[0] == 1 && v->out[1] == 5 && v->out[2] == 5);
    CU_ASSERT_TRUE(v->in[0] == 1 && v->in[1] == 10 && v->in[2] == 12);
    CU_ASSERT_TRUE(v->filt[0] == 1 && v->filt[1] == 3 && v->filt[2] == 5);
    CU_ASSERT_TRUE(v->reach[0] == 0 && v->reach[1] == 4 && v->reach[2] == 4);
    CU_ASSERT_TRUE(v->pixels == 2 * 5 * 5 && v->in_pixels == 2 * 10 * 12 && v->taps == 15);
    CU_ASSERT_TRUE(v->cg == 12 && v->kg == 6);
    CU_ASSERT_TRUE(v->a_bytes == 2 && v->b_bytes == 2 && v->out_bytes == 2);
    CU_ASSERT_TRUE(v->strided);
    CU_ASSERT_EQUAL(v->phases, 1);   /* fprop: one launch */
    CU_ASSERT_TRUE(v->gemm.m == 50 && v->gemm.n == 24 && v->gemm.k == 15 * 12);   /* N*Z*P*Q, K, T*R*S*C/groups */
    p.op = CONVCAT_DGRAD;
    v = unit_view(&p);
    CU_ASSERT_EQUAL(v->phases, 3 * 2);   /* residues of W mod 3 and of H mod 2 */
    CU_ASSERT_TRUE(v->gemm.m == 240 && v->gemm.n == 48 && v->gemm.k == 15 * 24);   /* N*D*H*W, C, T*R*S*K */
    p.w = 2;   /* fewer pixels than the stride: residues 0 and 1 only */
    p.pad_hi[2] = 7;
    CU_ASSERT_EQUAL(unit_view(&p)->phases, 2 * 2);
    p.w = 12, p.pad_hi[2] = 4;
    p.op = CONVCAT_WGRAD;
    v = unit_view(&p);
    CU_ASSERT_EQUAL(v->phases, 1);
    CU_ASSERT_TRUE(v->gemm.m == 24 && v->gemm.n == 15 * 12 && v->gemm.k == 50);   /* K, T*R*S*C/groups, N*Z*P*Q */
    /* Unit strides; element sizes of tf32 -> f32 and e4m3 -> bf16; 3D extents. */
    convcat_problem q = problem(3, CONVCAT_TF32, CONVCAT_F32);
    q.op = CONVCAT_DGRAD;
    v = unit_view(&q);
    CU_ASSERT_FALSE(v->strided);
    CU_ASSERT_EQUAL(v->phases, 1);
    CU_ASSERT_TRUE(v->a_bytes == 4 && v->b_bytes == 4 && v->out_bytes == 4);
    CU_ASSERT_TRUE(v->out[0] == 8 && v->out[1] == 16 && v->out[2] == 16 && v->taps == 27);
    CU_ASSERT_TRUE(v->reach[0] == 2 && v->reach[1] == 2 && v->reach[2] == 2);
    q = problem(2, CONVCAT_E4M3, CONVCAT_BF16);
    v = unit_view(&q);
    CU_ASSERT_TRUE(v->a_bytes == 1 && v->out_bytes == 2 && v->cg == 64 && v->kg == 64);
    /* A depthwise problem: one channel per group, K / groups filters each. */
    q.c = q.groups = 32, q.k = 96;
    v = unit_view(&q);
    CU_ASSERT_TRUE(v->cg == 1 && v->kg == 3 && v->gemm.k == 9);
    /* Invalid problems have no view, and say why; NULL is an invalid argument. */
    cvc_view w;
    char why[192] = "";
    q.groups = 5;
    UNIT_ASSERT_STATUS(cvc_view_make(&q, &w, why, sizeof why), CONVCAT_ERR_UNSUPPORTED);
    UNIT_ASSERT_MENTIONS(why, "groups = 5 must divide C = 32 and K = 96");
    UNIT_ASSERT_STATUS(cvc_view_make(NULL, &w, why, sizeof why), CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_MENTIONS(why, "problem is NULL");
    UNIT_ASSERT_STATUS(cvc_view_make(&q, &w, NULL, 0), CONVCAT_ERR_UNSUPPORTED);
}

static void test_problem_init_defaults(void)
{
    convcat_problem p;
    memset(&p, 0x5A, sizeof p);
    convcat_problem_init(&p);
    CU_ASSERT_EQUAL(p.op, CONVCAT_FPROP);
    CU_ASSERT_EQUAL(p.dims, 2);
    CU_ASSERT_TRUE(p.n == 1 && p.d == 1 && p.h == 1 && p.w == 1 && p.c == 1);
    CU_ASSERT_TRUE(p.k == 1 && p.t == 1 && p.r == 1 && p.s == 1);
    for (int a = 0; a < 3; ++a) {
        CU_ASSERT_TRUE(p.pad_lo[a] == 0 && p.pad_hi[a] == 0 && p.stride[a] == 1 && p.dilation[a] == 1);
    }
    CU_ASSERT_EQUAL(p.groups, 1);
    CU_ASSERT_EQUAL(p.mode, CONVCAT_CROSS_CORRELATION);
    CU_ASSERT_TRUE(p.a_type == CONVCAT_BF16 && p.b_type == CONVCAT_BF16 && p.out_type == CONVCAT_BF16);
    convcat_problem_init(NULL);
    int z = 0, pp = 0, q = 0;
    UNIT_ASSERT_STATUS(convcat_problem_output(&p, &z, &pp, &q), CONVCAT_OK);
    CU_ASSERT_TRUE(z == 1 && pp == 1 && q == 1);
    CU_ASSERT_DOUBLE_EQUAL(convcat_problem_flops(&p), 2.0, 0.0);
}

typedef struct shape {
    int dims, n, d, h, w, c, k, t, r, s, pad, stride, dil;
    int z, p, q;     /* expected output */
    double flops;    /* expected 2 * M * N * K */
} shape;

static void test_output_and_flops_of_known_shapes(void)
{
    static const shape shapes[] = {
        /* ResNet-50 stem: 224x224x3 -> 7x7/2 pad 3 -> 112x112x64 */
        {2, 1, 1, 224, 224, 8, 64, 1, 7, 7, 3, 2, 1, 1, 112, 112, 2.0 * 112 * 112 * 64 * 49 * 8},
        {2, 8, 1, 56, 56, 64, 64, 1, 3, 3, 1, 1, 1, 1, 56, 56, 2.0 * 8 * 56 * 56 * 64 * 9 * 64},
        {2, 8, 1, 56, 56, 64, 128, 1, 3, 3, 1, 2, 1, 1, 28, 28, 2.0 * 8 * 28 * 28 * 128 * 9 * 64},
        {2, 2, 1, 32, 32, 16, 16, 1, 3, 3, 2, 1, 2, 1, 32, 32, 2.0 * 2 * 32 * 32 * 16 * 9 * 16},   /* dilation 2 */
        {2, 1, 1, 7, 9, 8, 8, 1, 3, 3, 0, 2, 1, 1, 3, 4, 2.0 * 12 * 8 * 9 * 8},
        {1, 4, 1, 1, 100, 32, 16, 1, 1, 5, 0, 3, 2, 1, 1, 31, 2.0 * 4 * 31 * 16 * 5 * 32},          /* (100-9)/3+1 */
        {1, 1, 1, 1, 10, 8, 8, 1, 1, 10, 0, 1, 1, 1, 1, 1, 2.0 * 1 * 8 * 80},
        {3, 2, 8, 8, 8, 16, 16, 3, 3, 3, 0, 1, 1, 6, 6, 6, 2.0 * 2 * 216 * 16 * 27 * 16},
        {3, 1, 16, 16, 16, 8, 8, 3, 3, 3, 1, 2, 1, 8, 8, 8, 2.0 * 512 * 8 * 27 * 8},
    };
    for (size_t i = 0; i < CVC_ARRAY_LEN(shapes); ++i) {
        const shape *s = &shapes[i];
        convcat_problem p;
        convcat_problem_init(&p);
        p.dims = s->dims, p.n = s->n, p.d = s->d, p.h = s->h, p.w = s->w, p.c = s->c, p.k = s->k;
        p.t = s->t, p.r = s->r, p.s = s->s;
        for (int a = 3 - s->dims; a < 3; ++a) {
            p.pad_lo[a] = p.pad_hi[a] = s->pad;
            p.stride[a] = s->stride;
            p.dilation[a] = s->dil;
        }
        int z = -1, pp = -1, q = -1;
        UNIT_ASSERT_STATUS(convcat_problem_output(&p, &z, &pp, &q), CONVCAT_OK);
        if (z != s->z || pp != s->p || q != s->q)
            printf("\n    shape %zu: output %dx%dx%d, wanted %dx%dx%d", i, z, pp, q, s->z, s->p, s->q);
        CU_ASSERT_TRUE(z == s->z && pp == s->p && q == s->q);
        CU_ASSERT_DOUBLE_EQUAL(convcat_problem_flops(&p), s->flops, 0.0);
    }
}

static void test_output_and_flops_of_bad_problems(void)
{
    convcat_problem p = p2();
    int z = 7, pp = 7, q = 7;
    p.h = 1;
    p.pad_lo[1] = p.pad_hi[1] = 0;   /* 3 taps on 1 row */
    UNIT_ASSERT_STATUS(convcat_problem_output(&p, &z, &pp, &q), CONVCAT_ERR_UNSUPPORTED);
    UNIT_ASSERT_MENTIONS(convcat_last_error(), "does not fit");
    CU_ASSERT_TRUE(z == 7 && pp == 7 && q == 7);
    CU_ASSERT_DOUBLE_EQUAL(convcat_problem_flops(&p), 0.0, 0.0);
    UNIT_ASSERT_STATUS(convcat_problem_output(NULL, &z, &pp, &q), CONVCAT_ERR_INVALID_ARGUMENT);
    CU_ASSERT_TRUE(convcat_last_error()[0] != '\0');
    CU_ASSERT_DOUBLE_EQUAL(convcat_problem_flops(NULL), 0.0, 0.0);
    /* Groups divide the GEMM K. */
    p = p2();
    const double dense = convcat_problem_flops(&p);
    p.groups = 4;
    CU_ASSERT_DOUBLE_EQUAL(convcat_problem_flops(&p), dense / 4, 0.0);
}

/* The output extents are ints: one that does not fit is refused, never wrapped. */
static void test_output_extent_beyond_int_is_refused(void)
{
    convcat_problem p = p1();
    p.s = 1, p.w = INT_MAX;
    p.pad_lo[2] = p.pad_hi[2] = 0;
    int q = 0;
    UNIT_ASSERT_STATUS(convcat_problem_output(&p, NULL, NULL, &q), CONVCAT_OK);
    CU_ASSERT_EQUAL(q, INT_MAX);
    p.pad_hi[2] = 1;
    q = 0;
    const convcat_status st = convcat_problem_output(&p, NULL, NULL, &q);
    if (st == CONVCAT_OK)
        printf("\n    output extent %d for W = INT_MAX, padding 1", q);
    UNIT_ASSERT_STATUS(st, CONVCAT_ERR_UNSUPPORTED);
    UNIT_ASSERT_MENTIONS(convcat_last_error(), "output extent along W is 2147483648");
    /* GEMM M and K are products of four ints: beyond 64 bits they are refused, not wrapped. */
    convcat_problem g = p3();
    g.n = g.d = g.h = g.w = INT_MAX;
    g.t = g.r = g.s = 1;
    memset(g.pad_lo, 0, sizeof g.pad_lo);
    memset(g.pad_hi, 0, sizeof g.pad_hi);
    UNIT_ASSERT_STATUS(convcat_problem_output(&g, NULL, NULL, NULL), CONVCAT_ERR_UNSUPPORTED);
    UNIT_ASSERT_MENTIONS(convcat_last_error(), "overflow 64 bits");
    CU_ASSERT_DOUBLE_EQUAL(convcat_problem_flops(&g), 0.0, 0.0);
    const cvc_entry e3 = unit_entry(E3_KEY);
    REFUSE(e3, g, "overflow 64 bits");
    g.n = 1, g.d = g.h = g.w = 1 << 20;   /* M = 2^60 fits 64 bits: refused by the 32-bit rule */
    REFUSE(e3, g, "32-bit pixel index");
    CU_ASSERT_DOUBLE_EQUAL(convcat_problem_flops(&g), 2.0 * 0x1p60 * 64 * 64, 0.0);
    g.n = g.d = g.h = g.w = 1;
    g.t = g.r = g.s = g.c = INT_MAX - 7;   /* K = (2^31 - 8)^4: the same for the filter */
    g.pad_hi[0] = g.pad_hi[1] = g.pad_hi[2] = INT_MAX - 8;
    REFUSE(e3, g, "overflow 64 bits");
}

/* The kernel counts its K loop (taps x channel blocks) in an int32. */
/* The TMA kernels' own int arithmetic: an input pixel's coordinate q*stride - pad + s*dilation
 * (the padded input must fit 32 bits), the channel counter c += tile K and the epilogue column
 * k0 + n (C and K a tile short of 2^31).  Problems past these were accepted and would have wrapped. */
static void test_tma_coordinates_and_channels_fit_32_bits(void)
{
    const char *coords = "past the kernel's 32-bit coordinates";
    const cvc_entry e1 = unit_entry(E1_KEY);   /* tiles 128 x 64 x 64, cluster 1x2: 128 of room */
    convcat_problem p = p1();
    p.n = 1, p.c = p.k = 8, p.s = 1;
    p.pad_lo[2] = p.pad_hi[2] = 0;
    p.w = INT32_MAX, p.stride[2] = 8;   /* Q = 2^28: q*8 stays below 2^31 */
    BOTH(e1, p, pad_hi[2], 0, 1, coords);
    BOTH(e1, p, pad_hi[2], 0, INT32_MAX, "the input along W padded by 0 + 2147483647 is 4294967294 pixels");
    BOTH(e1, p, pad_lo[2], 0, 7, coords);
    /* 2D: H = 2^31 - 1 with padding. */
    const cvc_entry e2 = unit_entry(E2_KEY);
    convcat_problem q = p2();
    q.n = 1, q.w = 1, q.c = q.k = 8, q.r = q.s = 1;
    memset(q.pad_lo, 0, sizeof q.pad_lo);
    memset(q.pad_hi, 0, sizeof q.pad_hi);
    q.h = INT32_MAX - 256, q.stride[1] = 2;
    BOTH(e2, q, pad_lo[1], 0, 257, "the input along H padded by 257 + 0");
    /* Channels near 2^31: C on a 1D kernel (tile K loop), K on a tile-N-160 kernel (epilogue columns). */
    convcat_problem c = p1();
    c.n = 1, c.w = 4, c.s = 1, c.k = 8;
    c.pad_lo[2] = c.pad_hi[2] = 0;
    BOTH(e1, c, c, INT32_MAX - 7 - 128, INT32_MAX - 7, "the kernel's 32-bit channel counters step up to 128");
    const cvc_entry n160 = unit_entry("sm90a_fprop_2d_f16_f16_f32_f16_128x160x64_s4_c1x1_coop");
    convcat_problem k = problem(2, CONVCAT_F16, CONVCAT_F16);
    k.n = 1, k.h = 1, k.w = 4, k.c = 8, k.r = k.s = 1;
    memset(k.pad_lo, 0, sizeof k.pad_lo);
    memset(k.pad_hi, 0, sizeof k.pad_hi);
    BOTH(n160, k, k, INT32_MAX - 7 - 160, INT32_MAX - 7,
         "K = 2147483640: the kernel's 32-bit channel counters step up to 160");
}

static void test_gemm_k_iterations_fit_32_bits(void)
{
    const cvc_entry e1 = unit_entry(E1_KEY);
    convcat_problem p = p1();
    p.n = 1, p.k = 8, p.w = 1;
    p.c = 1 << 20;                         /* 2^14 channel blocks of 64 */
    p.pad_lo[2] = 32768, p.pad_hi[2] = 32767;
    p.s = 65536;                           /* the most taps the offsets allow: 2^30 iterations */
    ACCEPT(e1, p);
    p.c = 1 << 23;                         /* 2^17 blocks: 16384 taps is 2^31 iterations */
    p.s = 16383;
    ACCEPT(e1, p);
    p.s = 16384;
    REFUSE(e1, p, "32-bit");
}

/* The built default catalog (CONVCAT_TEST_CATALOG), open; the test stops where it cannot be. */
static convcat_catalog *real_catalog(void)
{
    const char *path = unit_env_path("CONVCAT_TEST_CATALOG");
    CU_ASSERT_PTR_NOT_NULL_FATAL(path);
    convcat_catalog *cat = NULL;
    UNIT_ASSERT_STATUS(convcat_open(path, &cat), CONVCAT_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cat);
    return cat;
}

/* Every 2D kernel of the real catalog takes a 3D problem that folds exactly when it takes the 2D
 * problem it folds into, for the same reason.  Shapes: D into the
 * batch (3x3, 1x1; groups of 8 channels and depthwise where the kernel runs groups), and a
 * T x 1 x 1 filter at stride 2 along D. */
static void test_folds_on_the_real_catalog(void)
{
    convcat_catalog *cat = real_catalog();
    int compared = 0, taken = 0;
    for (size_t i = 0; i < convcat_count(cat); ++i) {
        convcat_entry_info e;
        convcat_entry_info_get(cat, i, &e);
        if (e.dims != 2)
            continue;
        for (int shape = 0; shape < 5; ++shape) {
            convcat_problem p3 = problem(3, e.a_type, e.out_type), p2;
            p3.op = e.op, p3.b_type = e.b_type;
            p3.n = 2, p3.d = 3, p3.h = 9, p3.w = 11, p3.c = 64, p3.k = 72, p3.t = 1;
            p3.pad_lo[0] = p3.pad_hi[0] = 0;
            if (shape == 1)   /* 1x1x1 */
                p3.r = p3.s = 1, p3.pad_lo[1] = p3.pad_hi[1] = p3.pad_lo[2] = p3.pad_hi[2] = 0;
            if (shape == 2)
                p3.groups = 8;
            if (shape == 3)
                p3.k = p3.groups = p3.c;
            p2 = p3;
            p2.dims = 2, p2.n = p3.n * p3.d, p2.d = 1;
            if (shape == 4) {   /* 3 x 1 x 1, stride 2 and padding 1 along D */
                p3.d = 7, p3.t = 3, p3.r = p3.s = 1, p3.stride[0] = 2, p3.pad_lo[0] = p3.pad_hi[0] = 1;
                p3.pad_lo[1] = p3.pad_hi[1] = p3.pad_lo[2] = p3.pad_hi[2] = 0;
                p2 = p3;
                p2.dims = 2, p2.d = 1, p2.t = 1, p2.h = 7, p2.w = 9 * 11, p2.r = 3, p2.s = 1;
                p2.stride[0] = 1, p2.stride[1] = 2, p2.pad_lo[0] = p2.pad_hi[0] = 0, p2.pad_lo[1] = p2.pad_hi[1] = 1;
            }
            char why3[192] = "", why2[192] = "";
            const convcat_status s3 = convcat_check(cat, i, &p3, why3, sizeof why3);
            const convcat_status s2 = convcat_check(cat, i, &p2, why2, sizeof why2);
            if (s3 != s2 || strcmp(why3, why2))
                printf("\n    %s, shape %d: folded %s (%s), 2D %s (%s)", e.key, shape, convcat_status_string(s3), why3,
                       convcat_status_string(s2), why2);
            CU_ASSERT_EQUAL(s3, s2);
            CU_ASSERT_STRING_EQUAL(why3, why2);
            ++compared, taken += s3 == CONVCAT_OK;
        }
    }
    printf("(%d kernel x problem pairs, %d taken) ", compared, taken);
    CU_ASSERT_TRUE(taken > compared / 4);
    convcat_close(cat);
}

/* convcat_check on every entry of the built catalog: its base problem (depthwise for a direct
 * kernel, two groups for a grouped one) runs; C = 6 (6 a group) is refused by a TMA kernel (no 16-byte row of any type) and by a staged direct
 * one (whole 16-byte vectors) and run by a gather one; another direct kernel takes C = 6 as groups =
 * C = 6 and refuses groups = 2 (3 channels a group).  An input-tile gather kernel (one stage) takes C = 3
 * as its base problem and refuses C = 6 (more channels than its tile pixel). */
static void test_check_on_the_real_catalog(void)
{
    convcat_catalog *cat = real_catalog();
    int families[4] = {0};
    for (size_t i = 0; i < convcat_count(cat); ++i) {
        convcat_entry_info e;
        convcat_entry_info_get(cat, i, &e);
        CU_ASSERT_FATAL(e.family >= CONVCAT_FAMILY_TMA && e.family <= CONVCAT_FAMILY_DIRECT);
        families[e.family]++;
        const bool direct = e.family == CONVCAT_FAMILY_DIRECT;
        convcat_problem p = problem(e.dims, e.a_type, e.out_type);
        p.op = e.op;   /* unit strides: every op's kernels run it */
        p.b_type = e.b_type;
        const bool grouped = e.schedule == CONVCAT_GROUPED;   /* grouped problems only */
        if (direct)
            p.groups = p.c;
        if (grouped)   /* two groups of tile N filters and channels */
            p.groups = 2, p.c = p.k = 2 * e.tile_n;
        const bool input_tile = e.family == CONVCAT_FAMILY_GATHER && e.stages == 1;
        if (input_tile)
            p.c = 3;
        char why[192] = "";
        UNIT_ASSERT_STATUS(convcat_check(cat, i, &p, why, sizeof why), CONVCAT_OK);
        CU_ASSERT_STRING_EQUAL(why, "ok");
        UNIT_ASSERT_STATUS(convcat_check(cat, i, &p, NULL, 0), CONVCAT_OK);
        p.c = grouped ? 12 : 6;   /* not a 16-byte row for any input type (tf32 needs multiples of 4) */
        if (input_tile) {
            UNIT_ASSERT_STATUS(convcat_check(cat, i, &p, why, sizeof why), CONVCAT_ERR_UNSUPPORTED);
            UNIT_ASSERT_MENTIONS(why, "C = 6 channels: this kernel stages input pixels of at most");
            continue;
        }
        if (direct)
            p.k = p.groups = 6;
        why[0] = '\0';
        if (e.family == CONVCAT_FAMILY_TMA) {
            const char *six = grouped ? "C / groups = 6" : "C = 6";
            UNIT_ASSERT_STATUS(convcat_check(cat, i, &p, why, sizeof why), CONVCAT_ERR_UNSUPPORTED);
            UNIT_ASSERT_MENTIONS(why, six);
            UNIT_ASSERT_MENTIONS(convcat_last_error(), e.key);
            UNIT_ASSERT_MENTIONS(convcat_last_error(), six);
            char tiny[6];
            UNIT_ASSERT_STATUS(convcat_check(cat, i, &p, tiny, sizeof tiny), CONVCAT_ERR_UNSUPPORTED);
            CU_ASSERT_EQUAL(strlen(tiny), sizeof tiny - 1);
        } else if (direct && e.stages > 1) {   /* staged direct kernels copy whole 16-byte vectors */
            UNIT_ASSERT_STATUS(convcat_check(cat, i, &p, why, sizeof why), CONVCAT_ERR_UNSUPPORTED);
            UNIT_ASSERT_MENTIONS(why, "C = 6: this staged direct kernel copies whole vectors");
        } else {   /* the pointer families take any channel count */
            UNIT_ASSERT_STATUS(convcat_check(cat, i, &p, why, sizeof why), CONVCAT_OK);
            if (direct) {
                p.groups = 2;   /* 3 channels a group: no direct kernel's */
                UNIT_ASSERT_STATUS(convcat_check(cat, i, &p, why, sizeof why), CONVCAT_ERR_UNSUPPORTED);
                UNIT_ASSERT_MENTIONS(why, "groups = 2: ");
                UNIT_ASSERT_MENTIONS(why, "3 channels");
                UNIT_ASSERT_MENTIONS(convcat_last_error(), e.key);
                p.groups = 6;
            }
        }
        /* A valid problem of other dims: the kernel's own rule. */
        convcat_problem q = problem(e.dims % 3 + 1, e.a_type, e.out_type);
        q.op = e.op, q.b_type = e.b_type, q.groups = direct ? q.c : 1;
        char says[48];
        snprintf(says, sizeof says, "kernel is %dD, problem is %dD", e.dims, q.dims);
        UNIT_ASSERT_STATUS(convcat_check(cat, i, &q, why, sizeof why), CONVCAT_ERR_UNSUPPORTED);
        UNIT_ASSERT_MENTIONS(why, says);
    }
    /* The ci and default catalogs hold kernels of every family. */
    CU_ASSERT_TRUE(families[CONVCAT_FAMILY_TMA] > 0 && families[CONVCAT_FAMILY_GATHER] > 0 &&
                   families[CONVCAT_FAMILY_DIRECT] > 0);
    convcat_problem p = p2();
    UNIT_ASSERT_STATUS(convcat_check(cat, convcat_count(cat), &p, NULL, 0), CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_STATUS(convcat_check(cat, 0, NULL, NULL, 0), CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_STATUS(convcat_check(NULL, 0, &p, NULL, 0), CONVCAT_ERR_INVALID_ARGUMENT);
    CU_ASSERT_TRUE(convcat_last_error()[0] != '\0');
    convcat_close(cat);
}

/* The sm90a raster band: 8 tile rows where a row has more than half a wave of tiles and the
 * filters exceed half the L2; else 1 (N fastest).  CONVCAT_RASTER_BAND overrides, clamped. */
static void test_raster_band_rule_and_override(void)
{
    unsetenv("CONVCAT_RASTER_BAND");
    const cvc_entry e = unit_entry("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x256x64_s4_c1x1_coop");
    convcat_problem p = p2();   /* 1x1, C 512, K 32768, 8 x 32 x 32 pixels: 32 MiB of filters */
    p.n = 8, p.h = p.w = 32, p.c = 512, p.k = 32768, p.r = p.s = 1;
    memset(p.pad_lo, 0, sizeof p.pad_lo);
    memset(p.pad_hi, 0, sizeof p.pad_hi);
    cvc_params k = {.cluster_tiles_m = 64, .cluster_tiles_n = 128};
    CU_ASSERT_EQUAL(cvc_raster_band(&e, unit_view(&p), &k, 132), 8);
    k.cluster_tiles_m = 5;   /* clamped to the tile rows */
    CU_ASSERT_EQUAL(cvc_raster_band(&e, unit_view(&p), &k, 132), 5);
    k.cluster_tiles_m = 64;
    k.cluster_tiles_n = 66;  /* a row of half a wave: rows already share B */
    CU_ASSERT_EQUAL(cvc_raster_band(&e, unit_view(&p), &k, 132), 1);
    k.cluster_tiles_n = 128;
    p.k = 16384;             /* 16 MiB of filters stay in L2 */
    CU_ASSERT_EQUAL(cvc_raster_band(&e, unit_view(&p), &k, 132), 1);
    p.k = 32768;
    const cvc_entry w = unit_entry("sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop");
    CU_ASSERT_EQUAL(cvc_raster_band(&w, unit_view(&p), &k, 132), 1);
    setenv("CONVCAT_RASTER_BAND", "3", 1);
    CU_ASSERT_EQUAL(cvc_raster_band(&w, unit_view(&p), &k, 132), 3);
    setenv("CONVCAT_RASTER_BAND", "1000", 1);
    CU_ASSERT_EQUAL(cvc_raster_band(&e, unit_view(&p), &k, 132), 64);
    setenv("CONVCAT_RASTER_BAND", "0", 1);   /* not a band: the rule */
    CU_ASSERT_EQUAL(cvc_raster_band(&e, unit_view(&p), &k, 132), 8);
    setenv("CONVCAT_RASTER_BAND", "2x", 1);
    CU_ASSERT_EQUAL(cvc_raster_band(&e, unit_view(&p), &k, 132), 8);
    unsetenv("CONVCAT_RASTER_BAND");
}

/* The ResNet stem as `op`, bf16: 64 x 224 x 224 x 3 -> 64 filters, 7x7, stride 2, padding 3. */
static convcat_problem resnet_stem(convcat_op op)
{
    convcat_problem p = unit_problem(op, 2, CONVCAT_BF16, CONVCAT_BF16);
    p.n = 64, p.h = p.w = 224, p.c = 3, p.k = 64, p.r = p.s = 7;
    p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = 3, p.stride[1] = p.stride[2] = 2;
    return p;
}

/* Input-tile gather kernels (flag INPUT_TILE): fprop of at most CVC_TILE_MAX_CHANNELS channels, groups
 * 1, filters and input tile within the kernel's shared memory; the launch is one persistent grid of
 * whole filter blocks, its geometry the block's. */
static void test_input_tile(void)
{
    const cvc_entry e = unit_entry("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x64x16_s1_c1x1_gather");
    const cvc_entry e1 = unit_entry("sm90a_fprop_1d_f16_f16_f32_f16_128x32x16_s1_c1x1_gather");
    CU_ASSERT_TRUE(cvc_has(&e, CVC_F_INPUT_TILE) && cvc_has(&e1, CVC_F_INPUT_TILE));
    CU_ASSERT_TRUE(e.family == CVC_FAMILY_GATHER && e.groups_mode == CVC_GROUPS_NONE && e.k.stages == 1);
    CU_ASSERT_FALSE(cvc_has(&e, CVC_F_SPLITS_K));
    CU_ASSERT_TRUE(cvc_has(&e, CVC_F_CHAINED) && cvc_has(&e1, CVC_F_CHAINED));
    convcat_problem p = resnet_stem(CONVCAT_FPROP);
    ACCEPT(e, p);
    BOTH(e, p, c, 4, 5, "C = 5 channels: this kernel stages input pixels of at most 4 channels");
    BOTH(e, p, groups, 1, 3, "groups");
    convcat_problem big = p;   /* 16x16 taps of 4 channels: 64 x 2064 bytes of filters alone */
    big.r = big.s = 16, big.stride[1] = big.stride[2] = 16;
    memset(big.pad_lo, 0, sizeof big.pad_lo), memset(big.pad_hi, 0, sizeof big.pad_hi);
    REFUSE(e, big, "bytes of shared memory, more than this kernel's");
    cvc_launches ls;
    CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&e, unit_view(&p), 132, &ls), CONVCAT_OK);
    CU_ASSERT_TRUE(ls.count == 1 && !ls.workspace_bytes && !ls.reduce_grid);
    const cvc_gather_params *g = &ls.l[0].u.g;
    CU_ASSERT_TRUE(g->tile_cp == 4 && g->tile_kp == 208);   /* 49 taps x 4 channels, padded to 16 */
    /* 112 x 112 outputs: blocks of 8 x 16 or 16 x 8, 98 an image; input tiles 21 x 37 or 37 x 21 */
    CU_ASSERT_TRUE(g->block_q == 8 || g->block_q == 16);
    CU_ASSERT_EQUAL(g->blocks[0] * g->blocks[1], 98);
    CU_ASSERT_EQUAL(g->tile_ext[0] * g->tile_ext[1], 21 * 37);
    CU_ASSERT_EQUAL(g->tile_ext[0], (128 / g->block_q - 1) * 2 + 7);
    CU_ASSERT_TRUE(g->tiles_m == 64 * 98 && g->tiles_n == 1 && g->splits == 1);
    CU_ASSERT_EQUAL(ls.l[0].smem, 64u * (208 * 2 + 16) + 104 * 4 + 21 * 37 * 4 * 2);
    CU_ASSERT_TRUE(ls.l[0].grid >= 132 && ls.l[0].grid % g->tiles_n == 0 && ls.l[0].grid <= (unsigned)g->tiles_m);
    free(ls.l);
    /* wav2vec2's front end: C = 1 (pairs of 2 channels), a 1D block of the tile's 128 columns */
    convcat_problem w = unit_problem(CONVCAT_FPROP, 1, CONVCAT_F16, CONVCAT_F16);
    w.n = 8, w.w = 64000, w.c = 1, w.k = 512, w.s = 10, w.stride[2] = 5;
    memset(w.pad_lo, 0, sizeof w.pad_lo), memset(w.pad_hi, 0, sizeof w.pad_hi);
    ACCEPT(e1, w);
    CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&e1, unit_view(&w), 132, &ls), CONVCAT_OK);
    g = &ls.l[0].u.g;
    CU_ASSERT_TRUE(g->tile_cp == 2 && g->tile_kp == 32 && g->block_q == 128);
    CU_ASSERT_TRUE(g->tile_ext[0] == 1 && g->tile_ext[1] == 127 * 5 + 10);
    CU_ASSERT_TRUE(g->tiles_n == 16 && ls.l[0].grid % 16 == 0);   /* 512 filters in blocks of 32 */
    CU_ASSERT_EQUAL(g->tiles_m, 8 * 100);                         /* 12800 outputs an image */
    free(ls.l);
    /* its price is its own: far below a pipelined gather kernel's on the stem */
    const cvc_entry pipelined = unit_entry("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x64x32_s3_c1x1_gather");
    CU_ASSERT_TRUE(cvc_predict_us(&e, unit_view(&p), 132) < 0.5 * cvc_predict_us(&pipelined, unit_view(&p), 132));
}

/* Input-tile wgrad kernels (flags INPUT_TILE, SPLITS_K): dw of at most CVC_TILE_MAX_CHANNELS channels,
 * groups 1, a block's dy rows and input tile within the kernel's shared memory; a CTA for each filter
 * block, column block and slice of the blocks, the slices' sums through the workspace. */
static void test_input_tile_wgrad(void)
{
    const cvc_entry e = unit_entry("sm90a_wgrad_2d_bf16_bf16_f32_bf16_64x128x16_s1_c1x1_gather");
    const cvc_entry e1 = unit_entry("sm90a_wgrad_1d_f16_f16_f32_f16_64x64x16_s1_c1x1_gather");
    CU_ASSERT_TRUE(cvc_has(&e, CVC_F_INPUT_TILE) && cvc_has(&e, CVC_F_SPLITS_K) && cvc_has(&e1, CVC_F_INPUT_TILE));
    CU_ASSERT_TRUE(e.family == CVC_FAMILY_GATHER && e.groups_mode == CVC_GROUPS_NONE && e.k.stages == 1);
    CU_ASSERT_FALSE(cvc_has(&e, CVC_F_GROUPED_SPLITS));
    CU_ASSERT_TRUE(cvc_has(&e, CVC_F_CHAINED));
    convcat_problem p = resnet_stem(CONVCAT_WGRAD);
    ACCEPT(e, p);
    BOTH(e, p, c, 4, 5, "C = 5 channels: this kernel stages input pixels of at most 4 channels");
    BOTH(e, p, groups, 1, 3, "groups");
    convcat_problem big = p;   /* 16x16 patches at stride 16: 128 x 256 input pixels a block */
    big.r = big.s = 16, big.stride[1] = big.stride[2] = 16;
    memset(big.pad_lo, 0, sizeof big.pad_lo), memset(big.pad_hi, 0, sizeof big.pad_hi);
    REFUSE(e, big, "a block's dy rows and input tile take");
    cvc_launches ls;
    CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&e, unit_view(&p), 132, &ls), CONVCAT_OK);
    CU_ASSERT_EQUAL_FATAL(ls.count, 1);
    const cvc_gather_params *g = &ls.l[0].u.g;
    CU_ASSERT_TRUE(g->gemm_m == 64 && g->gemm_n == 147 && g->gemm_k == 64 * 112 * 112);
    CU_ASSERT_TRUE(g->ldy == 147 && g->out_elems == 64 * 147 && g->vec_a == 8);
    CU_ASSERT_TRUE(g->tile_cp == 3 && g->tile_kp == 152);   /* 49 taps x 3 channels, padded to 8 */
    CU_ASSERT_TRUE(g->tiles_m == 1 && g->tiles_n == 2);     /* 152 columns in blocks of 128 */
    /* blocks of 128 of the 112 x 112 outputs: 8 x 16 or 16 x 8, 98 an image; input tiles 21 x 37 */
    CU_ASSERT_TRUE(g->block_q == 8 || g->block_q == 16);
    CU_ASSERT_EQUAL(g->blocks[0] * g->blocks[1], 98);
    CU_ASSERT_EQUAL(g->tile_ext[0] * g->tile_ext[1], 21 * 37);
    CU_ASSERT_EQUAL(ls.l[0].smem, 128u * (64 * 2 + 16) + 21 * 37 * 3 * 2);
    /* every block in exactly one slice, none empty; a CTA a (column block, slice) */
    const int64_t blocks = 64 * 98;
    CU_ASSERT_TRUE(g->splits > 1 && (int64_t)g->splits * g->split_k >= blocks &&
                   (int64_t)(g->splits - 1) * g->split_k < blocks);
    CU_ASSERT_EQUAL(ls.l[0].grid, 2u * (unsigned)g->splits);
    CU_ASSERT_EQUAL(ls.workspace_bytes, (size_t)g->splits * 64 * 147 * sizeof(float));
    CU_ASSERT_TRUE(ls.reduce_grid > 0);
    free(ls.l);
    p.k = 45;   /* dy rows of odd length: loaded an element at a time */
    CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&e, unit_view(&p), 132, &ls), CONVCAT_OK);
    CU_ASSERT_TRUE(ls.l[0].u.g.vec_a == 1 && ls.l[0].u.g.tiles_m == 1);
    free(ls.l);
    p.k = 64;
    /* one SM: one slice, no workspace (the sums go straight to dw) */
    CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&e, unit_view(&p), 1, &ls), CONVCAT_OK);
    CU_ASSERT_TRUE(ls.l[0].u.g.splits >= 1);
    CU_ASSERT_EQUAL(ls.workspace_bytes == 0, ls.l[0].u.g.splits == 1);
    free(ls.l);
    /* wav2vec2's front end: C = 1, a 1D block of 128 outputs; 512 filters in blocks of 64 */
    convcat_problem w = unit_problem(CONVCAT_WGRAD, 1, CONVCAT_F16, CONVCAT_F16);
    w.n = 8, w.w = 64000, w.c = 1, w.k = 512, w.s = 10, w.stride[2] = 5;
    memset(w.pad_lo, 0, sizeof w.pad_lo), memset(w.pad_hi, 0, sizeof w.pad_hi);
    ACCEPT(e1, w);
    CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&e1, unit_view(&w), 132, &ls), CONVCAT_OK);
    g = &ls.l[0].u.g;
    CU_ASSERT_TRUE(g->tile_cp == 1 && g->tile_kp == 16 && g->block_q == 128);
    CU_ASSERT_TRUE(g->tile_ext[0] == 1 && g->tile_ext[1] == 127 * 5 + 10);
    CU_ASSERT_TRUE(g->tiles_m == 8 && g->tiles_n == 1 && g->blocks[1] == 100);   /* 12800 outputs an image */
    CU_ASSERT_EQUAL(ls.l[0].grid, 8u * (unsigned)g->splits);
    free(ls.l);
    /* its price is its own: far below the pipelined gather kernels' on the stem */
    const cvc_entry pipelined = unit_entry("sm90a_wgrad_2d_bf16_bf16_f32_bf16_64x32x64_s4_c1x1_gather");
    CU_ASSERT_TRUE(cvc_predict_us(&e, unit_view(&p), 132) < 0.5 * cvc_predict_us(&pipelined, unit_view(&p), 132));
}

/* Input-tile dgrad kernels (flag INPUT_TILE): dx of at most CVC_TILE_MAX_CHANNELS channels in one
 * launch, the stride phases side by side: stride_h x stride_w x C columns within the tile's N, the
 * filters at every dy offset and a block's dy region within the kernel's shared memory. */
static void test_input_tile_dgrad(void)
{
    const cvc_entry e = unit_entry("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x16x16_s1_c1x1_gather");
    const cvc_entry wide = unit_entry("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x48x16_s1_c1x1_gather");
    CU_ASSERT_TRUE(cvc_has(&e, CVC_F_INPUT_TILE) && !cvc_has(&e, CVC_F_SPLITS_K) && e.groups_mode == CVC_GROUPS_NONE);
    convcat_problem p = resnet_stem(CONVCAT_DGRAD);
    ACCEPT(e, p);
    BOTH(e, p, c, 4, 5, "C = 5 channels: this kernel stages input pixels of at most 4 channels");
    BOTH(e, p, stride[2], 2, 3, "strides (2, 3) x 3 channels: 24 stride phase columns, more than this dgrad kernel's 16");
    convcat_problem big = p;   /* K = 1024 filters: the filters at 16 offsets and the region, rows of 2064 bytes */
    BOTH(e, big, k, 96, 1024, "the filters and a block's dy region take");
    BOTH(e, p, pad_lo[1], 3, 1 << 27, "blocks of positions: more than this kernel's 2^31 - 1 work items");
    cvc_launches ls;
    CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&e, unit_view(&p), 132, &ls), CONVCAT_OK);
    CU_ASSERT_TRUE(ls.count == 1 && !ls.workspace_bytes && !ls.reduce_grid);
    const cvc_gather_params *g = &ls.l[0].u.g;
    /* 2 x 2 phases of 3 channels: 12 columns, padded to 16; 7 taps at stride 2: 4 dy offsets an axis */
    CU_ASSERT_TRUE(g->tile_cp == 3 && g->tile_kp == 16 && g->gemm_k == 64 && g->cg == 3 && g->kg == 64);
    CU_ASSERT_TRUE(g->tile_pass[0] == 4 && g->tile_pass[1] == 4 && g->vec_a == 8);
    CU_ASSERT_TRUE(g->grid_ext[1] == 224 && g->src_ext[1] == 112);   /* dx; dy's region */
    /* (224 - 1 + 3) / 2 + 1 = 114 positions an axis, blocks of 16 x 8: 8 x 15 an image, regions 19 x 11 */
    CU_ASSERT_TRUE(g->blocks[0] == 8 && g->blocks[1] == 15 && g->block_q == 8);
    CU_ASSERT_TRUE(g->tile_ext[0] == 19 && g->tile_ext[1] == 11);
    CU_ASSERT_EQUAL(ls.l[0].smem, (16u * 16 + 19 * 11) * (64 + 8) * 2);
    CU_ASSERT_TRUE(g->tiles_m == 64 * 120 && ls.l[0].grid > 0 && ls.l[0].grid <= (unsigned)g->tiles_m);
    free(ls.l);
    /* AlexNet's 11x11 at stride 4: 4 x 4 phases of 3 channels, 48 columns; 3 dy offsets an axis */
    convcat_problem alex = p;
    alex.r = alex.s = 11, alex.stride[1] = alex.stride[2] = 4;
    alex.pad_lo[1] = alex.pad_hi[1] = alex.pad_lo[2] = alex.pad_hi[2] = 2;
    REFUSE(e, alex, "strides (4, 4) x 3 channels: 48 stride phase columns");
    CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&wide, unit_view(&alex), 132, &ls), CONVCAT_OK);
    CU_ASSERT_TRUE(ls.l[0].u.g.tile_kp == 48 && ls.l[0].u.g.tile_pass[0] == 3 && ls.l[0].u.g.tile_pass[1] == 3);
    free(ls.l);
    /* dilation 2 at stride 2: (7 - 1) 2 / 2 + 1 = 7 dy offsets an axis, the odd phases' columns zero */
    p.dilation[1] = p.dilation[2] = 2, p.pad_lo[1] = p.pad_hi[1] = p.pad_lo[2] = p.pad_hi[2] = 6;
    CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&e, unit_view(&p), 132, &ls), CONVCAT_OK);
    CU_ASSERT_TRUE(ls.l[0].u.g.tile_pass[0] == 7 && ls.l[0].u.g.tile_pass[1] == 7);
    free(ls.l);
    p.dilation[1] = p.dilation[2] = 1, p.pad_lo[1] = p.pad_hi[1] = p.pad_lo[2] = p.pad_hi[2] = 3;
    /* wav2vec2's front end (1D, C = 1, K = 512, 10 taps at stride 5): 5 phase columns, 2 dy offsets; one
     * row of 64 positions reads 65 dy pixels of 1040-byte rows, 128 positions would take 150800 bytes */
    const cvc_entry w64 = unit_entry("sm90a_dgrad_1d_bf16_bf16_f32_bf16_64x8x16_s1_c1x1_gather");
    const cvc_entry w128 = unit_entry("sm90a_dgrad_1d_bf16_bf16_f32_bf16_128x8x16_s1_c1x1_gather");
    convcat_problem wave = unit_problem(CONVCAT_DGRAD, 1, CONVCAT_BF16, CONVCAT_BF16);
    wave.n = 8, wave.w = 64000, wave.c = 1, wave.k = 512, wave.s = 10, wave.stride[2] = 5;
    wave.pad_lo[2] = wave.pad_hi[2] = 0;
    REFUSE(w128, wave, "K = 512 filters at 1 x 2 dy offsets: the filters and a block's dy region take 150800 bytes");
    CU_ASSERT_EQUAL_FATAL(cvc_gather_launches(&w64, unit_view(&wave), 132, &ls), CONVCAT_OK);
    g = &ls.l[0].u.g;
    CU_ASSERT_TRUE(g->tile_kp == 8 && g->tile_pass[0] == 1 && g->tile_pass[1] == 2 && g->block_q == 64);
    CU_ASSERT_TRUE(g->blocks[0] == 1 && g->blocks[1] == 200 && g->tile_ext[0] == 1 && g->tile_ext[1] == 65);
    CU_ASSERT_EQUAL(ls.l[0].smem, (2u * 8 + 65) * (512 + 8) * 2);
    free(ls.l);
    /* its price is its own: below the pipelined gather kernels' phases on the stem */
    const cvc_entry pipelined = unit_entry("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x8x32_s4_c1x1_gather");
    CU_ASSERT_TRUE(cvc_predict_us(&e, unit_view(&p), 132) < 0.9 * cvc_predict_us(&pipelined, unit_view(&p), 132));
}

int main(void)
{
    CU_TestInfo tests[] = {
        {"base problems pass", test_base_problems_pass},
        {"op must match", test_op_must_match},
        {"dgrad strides", test_dgrad_strides},
        {"dgrad corner ranges", test_dgrad_corner_ranges},
        {"wgrad rules", test_wgrad_rules},
        {"tile K 128 rules", test_tile_k_128_rules},
        {"cluster split-K", test_cluster_splits},
        {"deep wgrad rings split as four stages", test_deep_wgrad_rings_split_as_four_stages},
        {"dims must match", test_dims_must_match},
        {"3D problems fold into 2D", test_3d_problems_fold_into_2d},
        {"dtypes must match", test_dtypes_must_match},
        {"extents must be at least one", test_extents_must_be_at_least_one},
        {"padding must not be negative", test_padding_must_not_be_negative},
        {"stride and dilation must be at least one", test_stride_and_dilation_must_be_at_least_one},
        {"absent axes must be trivial", test_absent_axes_must_be_trivial},
        {"filter must fit the padded input", test_filter_must_fit_the_padded_input},
        {"only cross-correlation", test_only_cross_correlation},
        {"fprop groups are refused", test_fprop_groups_are_refused},
        {"grouped wgrad cases", test_grouped_wgrad_cases},
        {"grouped wgrad of 32 and 64 channels", test_grouped_wgrad_of_32_and_64_channels},
        {"groups mode of kernels", test_groups_mode_of_kernels},
        {"halo rules", test_halo_rules},
        {"traversal stride at most 8", test_traversal_stride_at_most_8},
        {"channels must fill 16-byte rows", test_channels_must_fill_16_byte_rows},
        {"output channels multiple of 8", test_output_channels_multiple_of_8},
        {"GEMM M fits 32 bits", test_gemm_m_fits_32_bits},
        {"im2col corner ranges per rank", test_im2col_corner_ranges_per_rank},
        {"im2col offset ranges per rank", test_im2col_offset_ranges_per_rank},
        {"filter reach beyond int is refused", test_filter_reach_beyond_int_is_refused},
        {"TMA box and stride limits", test_tma_box_and_stride_limits},
        {"tensor past 2^64 bytes is refused", test_tensor_past_2_64_bytes_is_refused},
        {"view of known problems", test_view_of_known_problems},
        {"problem init defaults", test_problem_init_defaults},
        {"output and flops of known shapes", test_output_and_flops_of_known_shapes},
        {"output and flops of bad problems", test_output_and_flops_of_bad_problems},
        {"output extent beyond int is refused", test_output_extent_beyond_int_is_refused},
        {"GEMM K iterations fit 32 bits", test_gemm_k_iterations_fit_32_bits},
        {"TMA coordinates and channels fit 32 bits", test_tma_coordinates_and_channels_fit_32_bits},
        {"pointer-family channels fit 32 bits", test_pointer_family_channels_fit_32_bits},
        {"dgrad stride phases are bounded", test_dgrad_stride_phases_are_bounded},
        {"pointer family index fields", test_pointer_family_index_fields},
        {"gather runs any groups and channels", test_gather_runs_any_groups_and_channels},
        {"gather coordinates below 2^29", test_gather_coordinates_below_2_29},
        {"gather patch dgrad is one GEMM", test_gather_patch_dgrad_is_one_gemm},
        {"gather splits fprop and dgrad", test_gather_splits_fprop_and_dgrad},
        {"gather packs groups", test_gather_packs_groups},
        {"tma reuses B", test_tma_reuses_b},
        {"grouped fprop: whole groups a tile column", test_grouped_fprop_cases},
        {"grouped fprop and dgrad: narrow groups widened", test_widened_groups},
        {"tile K 32 pricing", test_tile_k_32_pricing},
        {"dgrad phase boxes stand for every phase", test_dgrad_phase_boxes_stand_for_every_phase},
        {"dgrad phase sizes count every residue", test_dgrad_phase_sizes_count_every_residue},
        {"direct runs depthwise problems", test_direct_runs_depthwise_problems},
        {"direct tile must fit shared memory", test_direct_tile_must_fit_shared_memory},
        {"staged direct kernels' rules", test_direct_staged_rules},
        {"staged direct wgrad rules", test_direct_staged_wgrad_rules},
        {"direct runs are whole units", test_direct_runs_are_whole_units},
        {"refusals name their rule", test_refusals_name_their_rule},
        {"check on the real catalog", test_check_on_the_real_catalog},
        {"folds on the real catalog", test_folds_on_the_real_catalog},
        {"raster band rule and override", test_raster_band_rule_and_override},
        {"input-tile gather kernels", test_input_tile},
        {"input-tile wgrad kernels", test_input_tile_wgrad},
        {"input-tile dgrad kernels", test_input_tile_dgrad},
        CU_TEST_INFO_NULL,
    };
    return unit_main("rules", tests, NULL, NULL);
}
