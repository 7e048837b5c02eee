/* test_sm100.c: sm100a entries under the runtime's problem rules and TMA parameters.
 *
 * The sm100a kernels have never run (no Blackwell GPU here), so what can be
 * checked is that the runtime treats them exactly as it treats sm90a ones:
 * for a sm90a and a sm100a entry of the same op, tile and cluster, every
 * problem of a table of good and bad ones (strided ones included) gets the
 * same answer and the same reason, the same operand descriptors (every dgrad
 * stride phase's too) and the same output descriptor but for the sm100a
 * store box (32 rows, one TMEM lane quarter).  The one other difference is
 * stated where it arises: a 2sm MN-major B (dgrad filter, wgrad x) loads
 * every K row of its CTA's half of N, a 2x1 sm90a cluster half of them.
 * tf32 and fp8 entries (sm100a fprop only) get their own channel rules.
 * Finally every sm100a entry of the built catalog passes its base problem
 * with valid descriptors, and arch filters keep the families apart.
 */
#include "internal.h"
#include "unit.h"


/* An sm100a TMA entry of the test index (sm100.derive's fields: the boxes of sm90a, but a 2sm
 * MN-major B of tile K rows, each CTA of the pair loading its half of N whole), with what every
 * one has: 192 threads, 32-row stores, the scattering epilogue in the kernel itself. */
static void sm100_invariants(const cvc_entry *e)
{
    CU_ASSERT_EQUAL(e->k.arch, CONVCAT_ARCH_SM100A);
    CU_ASSERT_EQUAL(e->family, CVC_FAMILY_TMA);
    CU_ASSERT_EQUAL(e->threads, 192);
    CU_ASSERT_EQUAL(e->y_box_rows, 32);
    CU_ASSERT_EQUAL(e->y_box_cols * cvc_dtype_bytes(e->k.out), 128);
    CU_ASSERT_EQUAL(e->swizzle_bytes, 128);
    CU_ASSERT_EQUAL(e->wg_n, 0);   /* no warpgroups: the accumulators live in TMEM */
    CU_ASSERT_EQUAL(cvc_has(e, CVC_F_SCATTERS), e->k.op == CONVCAT_DGRAD);   /* every dgrad has KEY_fill */
    CU_ASSERT_FALSE(cvc_has(e, CVC_F_STRIDED_KERNEL) || cvc_has(e, CVC_F_CHAINED) ||
                    cvc_has(e, CVC_F_GROUPED_SPLITS) || cvc_has(e, CVC_F_VERIFIED));
    CU_ASSERT_EQUAL(cvc_has(e, CVC_F_SPLITS_K), e->k.op == CONVCAT_WGRAD);
    CU_ASSERT_EQUAL(cvc_key_dynamic(&e->k), e->fb_a_box_rows > 0 && e->fb_b_box_rows > 0);
}

static cvc_entry sm100_entry(const char *key)
{
    const cvc_entry e = unit_entry(key);
    sm100_invariants(&e);
    return e;
}


/* Mutations of a base problem: the first passes, the others break one rule each. */
enum { MUTATIONS = 15 };
static convcat_problem mutate(convcat_problem p, int m)
{
    const int ax = 3 - p.dims;   /* the outermost spatial axis present (D, H or W) */
    switch (m) {
    case 1: p.c = 12; break;                                /* 16-byte channel rows */
    case 2: p.k = 12; break;                                /* output channels */
    case 3: p.stride[2] = 9; break;                         /* traversal stride */
    case 4: p.pad_lo[ax] = p.pad_hi[ax] = 40000; break;     /* im2col corner range */
    case 5: p.dilation[2] = 300, p.w = 1000; break;         /* im2col offset range (2D/3D) */
    case 6: p.groups = 2; break;
    case 7: p.mode = CONVCAT_CONVOLUTION; break;
    case 8: p.n = 0; break;
    case 9: p.pad_lo[2] = -1; break;
    case 10: p.op = CONVCAT_DGRAD; break;
    case 11: p.k = 1 << 20, p.n = 1 << 12, p.w = 1 << 12; break;   /* large, still fine or refused alike */
    case 12: p.out_type = CONVCAT_F32 + (p.out_type == CONVCAT_F32); break;
    case 13:                                                /* strided: dgrad stride phases */
        for (int a = ax; a < 3; ++a)
            p.stride[a] = 2;
        break;
    case 14: p.stride[2] = 3, p.s = 1, p.pad_lo[2] = p.pad_hi[2] = 0; break;   /* tap-less phases (KEY_fill) */
    default: break;
    }
    return p;
}

/* The operand descriptors of both entries agree, but for the documented 2sm MN-major B box. */
static void same_operands(const cvc_entry *e90, const cvc_entry *e100, const convcat_problem *p)
{
    cvc_operand_desc a90, a100, b90, b100;
    memset(&a90, 0, sizeof a90), memset(&a100, 0, sizeof a100);
    memset(&b90, 0, sizeof b90), memset(&b100, 0, sizeof b100);
    const cvc_view *v = unit_view(p);
    cvc_tma_operands(e90, v, &a90, &b90);
    cvc_tma_operands(e100, v, &a100, &b100);
    CU_ASSERT_EQUAL(memcmp(&a90, &a100, sizeof a90), 0);
    if (e100->k.schedule == CONVCAT_2SM && e100->k.op != CONVCAT_FPROP) {
        /* sm90a 2x1: tile K / 2 K rows per CTA; the 2sm pair: all tile K rows of half of N. */
        if (b100.im2col) {
            CU_ASSERT_EQUAL(b100.i.pixels_per_column, (uint32_t)e100->k.tile_k);
            CU_ASSERT_EQUAL(b90.i.pixels_per_column, (uint32_t)e90->k.tile_k / 2);
            b100.i.pixels_per_column = b90.i.pixels_per_column;
        } else {
            CU_ASSERT_EQUAL(b100.t.box[b100.t.rank - 1], (uint32_t)e100->k.tile_k);
            CU_ASSERT_EQUAL(b90.t.box[b90.t.rank - 1], (uint32_t)e90->k.tile_k / 2);
            b100.t.box[b100.t.rank - 1] = b90.t.box[b90.t.rank - 1];
        }
    }
    CU_ASSERT_EQUAL(memcmp(&b90, &b100, sizeof b90), 0);
    char why[160];
    CU_ASSERT_TRUE(a100.im2col ? cvc_im2col_desc_valid(&a100.i, why, sizeof why)
                               : cvc_tiled_desc_valid(&a100.t, why, sizeof why));
    CU_ASSERT_TRUE(b100.im2col ? cvc_im2col_desc_valid(&b100.i, why, sizeof why)
                               : cvc_tiled_desc_valid(&b100.t, why, sizeof why));
    if (p->op == CONVCAT_DGRAD)   /* every stride phase's dy map */
        for (int i = 0; i < v->phases; ++i) {
            cvc_dgrad_phase ph;
            cvc_dgrad_phase_at(v, i, &ph);
            cvc_im2col_desc d90, d100;
            memset(&d90, 0, sizeof d90), memset(&d100, 0, sizeof d100);
            cvc_tma_dgrad_a(e90, v, &ph, &d90);
            cvc_tma_dgrad_a(e100, v, &ph, &d100);
            CU_ASSERT_EQUAL(memcmp(&d90, &d100, sizeof d90), 0);
        }
}

/* The output descriptors agree but for the store box's rows: 32 (sm100a) and 64 (sm90a). */
static void same_output(const cvc_entry *e90, const cvc_entry *e100, const convcat_problem *p, int splits)
{
    cvc_tiled_desc y90, y100;
    memset(&y90, 0, sizeof y90), memset(&y100, 0, sizeof y100);
    const cvc_view *v = unit_view(p);
    cvc_tma_output(e90, v, splits, &y90);
    cvc_tma_output(e100, v, splits, &y100);
    const int rows = p->op == CONVCAT_WGRAD ? 2 : 1;   /* wgrad: (C, taps, K[, splits]) */
    CU_ASSERT_EQUAL(y100.box[rows], 32);
    CU_ASSERT_EQUAL(y90.box[rows], 64);
    y100.box[rows] = y90.box[rows];
    CU_ASSERT_EQUAL(memcmp(&y90, &y100, sizeof y90), 0);
    CU_ASSERT_TRUE(cvc_tiled_desc_valid(&y100, NULL, 0));
}

/* Both keys are valid kernels (the test index holds only those), of the same op, tile and cluster. */
static void same_answers(const char *k90, const char *k100)
{
    const cvc_entry e90 = unit_entry(k90), e100 = sm100_entry(k100);
    CU_ASSERT_EQUAL_FATAL(e90.k.op, e100.k.op);
    CU_ASSERT_EQUAL(e90.family, CVC_FAMILY_TMA);
    /* The strided-dgrad rule reads the index's CVC_F_SCATTERS: every sm100a dgrad kernel carries
     * the scatter epilogue (sm100_entry); an sm90a one whose warpgroups hold 128 accumulators does
     * not (its registers), and its refusal of strided problems is the one answer the pair may
     * differ in. */
    for (int m = 0; m < MUTATIONS; ++m) {
        const convcat_problem p = mutate(unit_problem(e90.k.op, e90.k.dims, e90.k.a, e90.k.out), m);
        char w90[192] = "", w100[192] = "";
        const convcat_status s90 = unit_check(&e90, &p, w90, sizeof w90);
        const convcat_status s100 = unit_check(&e100, &p, w100, sizeof w100);
        if (!cvc_has(&e90, CVC_F_SCATTERS) && e90.k.op == CONVCAT_DGRAD &&
            strstr(w90, "has no strided (row-scattering) epilogue")) {
            UNIT_ASSERT_STATUS(s100, CONVCAT_OK);
            continue;
        }
        if (s90 != s100 || strcmp(w90, w100) != 0)
            printf("\n    mutation %d: %s says %d '%s', %s says %d '%s'", m, k90, s90, w90, k100, s100, w100);
        CU_ASSERT_EQUAL(s90, s100);
        CU_ASSERT_STRING_EQUAL(w90, w100);
        if (m == 0 || m >= 13)
            UNIT_ASSERT_STATUS(s100, CONVCAT_OK);
        if (s100 != CONVCAT_OK || p.op != e100.k.op)
            continue;
        same_operands(&e90, &e100, &p);
        same_output(&e90, &e100, &p, 1);
        if (p.op == CONVCAT_WGRAD)   /* the split-K f32 slices */
            same_output(&e90, &e100, &p, 3);
    }
}

static void test_1sm_answers_as_sm90a(void)
{
    same_answers("sm90a_fprop_1d_f16_f16_f32_f32_128x128x64_s4_c1x2_coop",
                 "sm100a_fprop_1d_f16_f16_f32_f32_128x128x64_s4_c1x2_1sm");
    same_answers("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x256x64_s4_c1x1_coop",
                 "sm100a_fprop_2d_bf16_bf16_f32_bf16_128x256x64_s4_c1x1_1sm");
    same_answers("sm90a_fprop_3d_f16_f16_f32_f16_128x128x64_s4_c2x2_coop",
                 "sm100a_fprop_3d_f16_f16_f32_f16_128x128x64_s5_c2x2_1sm");
}

static void test_2sm_answers_as_sm90a(void)
{
    /* tile M is per CTA, so a 2sm pair's boxes are those of a 2x1 sm90a cluster. */
    same_answers("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x256x64_s4_c2x1_coop",
                 "sm100a_fprop_2d_bf16_bf16_f32_bf16_128x256x64_s6_c2x1_2sm");
    same_answers("sm90a_fprop_3d_bf16_bf16_f32_bf16_128x128x64_s4_c2x2_coop",
                 "sm100a_fprop_3d_bf16_bf16_f32_bf16_128x128x64_s5_c2x2_2sm");
    same_answers("sm90a_fprop_1d_f16_f16_f32_f16_128x256x64_s4_c2x1_coop",
                 "sm100a_fprop_1d_f16_f16_f32_f16_128x256x64_s6_c2x1_2sm");
}

static void test_dgrad_answers_as_sm90a(void)
{
    same_answers("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop",
                 "sm100a_dgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_1sm");
    same_answers("sm90a_dgrad_1d_f16_f16_f32_f32_128x128x64_s4_c2x1_coop",
                 "sm100a_dgrad_1d_f16_f16_f32_f32_128x128x64_s4_c2x1_1sm");
    same_answers("sm90a_dgrad_3d_bf16_bf16_f32_bf16_128x128x64_s4_c2x2_coop",
                 "sm100a_dgrad_3d_bf16_bf16_f32_bf16_128x128x64_s5_c2x2_1sm");
    same_answers("sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x256x64_s4_c2x1_coop",
                 "sm100a_dgrad_2d_bf16_bf16_f32_bf16_128x256x64_s6_c2x1_2sm");
    same_answers("sm90a_dgrad_3d_f16_f16_f32_f32_128x128x64_s4_c2x2_coop",
                 "sm100a_dgrad_3d_f16_f16_f32_f32_128x128x64_s5_c2x2_2sm");
}

static void test_wgrad_answers_as_sm90a(void)
{
    same_answers("sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop",
                 "sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_1sm");
    same_answers("sm90a_wgrad_1d_f16_f16_f32_f32_128x64x64_s4_c1x2_coop",
                 "sm100a_wgrad_1d_f16_f16_f32_f32_128x64x64_s4_c1x2_1sm");
    same_answers("sm90a_wgrad_3d_bf16_bf16_f32_bf16_128x128x64_s4_c2x2_coop",
                 "sm100a_wgrad_3d_bf16_bf16_f32_bf16_128x128x64_s5_c2x2_1sm");
    /* (sm90a has no 128x256 wgrad kernel of a 2x1 cluster: its warpgroups would spill) */
    same_answers("sm90a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_coop",
                 "sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_2sm");
    same_answers("sm90a_wgrad_3d_f16_f16_f32_f32_128x128x64_s4_c2x2_coop",
                 "sm100a_wgrad_3d_f16_f16_f32_f32_128x128x64_s5_c2x2_2sm");
}

/* tf32 (4-byte) and fp8 (1-byte) operands: 128-byte rows of 32 / 128 channels. */
static void test_tf32_and_fp8_channel_rules(void)
{
    struct { const char *key; convcat_dtype t, out; int align; uint32_t cpp; int eb; } cases[] = {
        {"sm100a_fprop_2d_tf32_tf32_f32_f32_128x128x32_s4_c1x1_1sm", CONVCAT_TF32, CONVCAT_F32, 4, 32, 4},
        {"sm100a_fprop_2d_e4m3_e4m3_f32_bf16_128x256x128_s4_c2x1_2sm", CONVCAT_E4M3, CONVCAT_BF16, 16, 128, 1},
    };
    for (size_t i = 0; i < CVC_ARRAY_LEN(cases); ++i) {
        const cvc_entry e = sm100_entry(cases[i].key);
        convcat_problem p = unit_problem(CONVCAT_FPROP, 2, cases[i].t, cases[i].out);
        char why[192] = "";
        CU_ASSERT_EQUAL(e.c_align, cases[i].align);
        UNIT_ASSERT_STATUS(unit_check(&e, &p, why, sizeof why), CONVCAT_OK);
        cvc_im2col_desc a;
        cvc_tiled_desc b, y;
        unit_fprop_descs(&e, &p, &a, &b);
        cvc_tma_output(&e, unit_view(&p), 1, &y);
        CU_ASSERT_EQUAL(a.elem_bytes, cases[i].eb);
        CU_ASSERT_EQUAL(a.channels_per_pixel, cases[i].cpp);
        CU_ASSERT_EQUAL(a.channels_per_pixel * (uint32_t)a.elem_bytes, 128);
        CU_ASSERT_EQUAL(b.box[0] * (uint32_t)b.elem_bytes, 128);
        CU_ASSERT_TRUE(cvc_im2col_desc_valid(&a, why, sizeof why));
        CU_ASSERT_TRUE(cvc_tiled_desc_valid(&b, why, sizeof why));
        CU_ASSERT_TRUE(cvc_tiled_desc_valid(&y, why, sizeof why));
        p.c = cases[i].align + cases[i].align / 2;   /* half a 16-byte row too many */
        UNIT_ASSERT_STATUS(unit_check(&e, &p, why, sizeof why), CONVCAT_ERR_UNSUPPORTED);
        char want[48];
        snprintf(want, sizeof want, "a multiple of %d", cases[i].align);
        UNIT_ASSERT_MENTIONS(why, want);
        p.c = 2 * cases[i].align;
        UNIT_ASSERT_STATUS(unit_check(&e, &p, why, sizeof why), CONVCAT_OK);
    }
}

/* Dynamic clusters: the shape rules of sm100.why_invalid, with its reasons (tests/test_sm100.py,
 * test_rules_both_ways, holds the same keys). */
static void test_dynamic_rules(void)
{
    static const struct { const char *key, *reason; } cases[] = {
        {"sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1f1x1_1sm", NULL},
        {"sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x2f1x1_1sm", NULL},
        {"sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x2f1x1_1sm", NULL},
        {"sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x2f2x1_1sm", NULL},
        {"sm100a_fprop_2d_bf16_bf16_f32_bf16_128x256x64_s6_c2x2f2x1_2sm", NULL},
        {"sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_1sm", NULL},   /* static */
        {"sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1f1x1_coop", "sm90a has no preferred-cluster launch"},
        {"sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1f2x1_1sm", "must be smaller than the preferred one"},
        {"sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1f1x1_1sm", "must be smaller than the preferred one"},
        {"sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x2f1x2_1sm", "consecutive ranks (x fastest)"},
        {"sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x2f3x1_1sm", "must tile the preferred cluster"},
        {"sm100a_fprop_2d_bf16_bf16_f32_bf16_128x256x64_s6_c2x2f1x1_2sm", "fallback cluster 1x1: a 2sm MMA pairs"},
    };
    for (size_t i = 0; i < CVC_ARRAY_LEN(cases); ++i) {
        cvc_key k;
        char why[192] = "";
        CU_ASSERT_TRUE_FATAL(cvc_key_parse(cases[i].key, &k, why, sizeof why));
        const bool ok = cvc_dynamic_cluster_valid(&k, why, sizeof why);
        CU_ASSERT_EQUAL(ok, cases[i].reason == NULL);
        if (cases[i].reason)
            UNIT_ASSERT_MENTIONS(why, cases[i].reason);
    }
}

/* A dynamic entry's two descriptor sets: the preferred shape's boxes (as its static
 * twin's) and the fallback shape's (as the fallback's static twin's); the problem
 * rules check both, and the persistent grid is a multiple of the preferred cluster. */
static void check_two_sets(const char *dyn, const char *pref_key, const char *fb_key, convcat_op op)
{
    const cvc_entry e = sm100_entry(dyn), pref = sm100_entry(pref_key), fbk = sm100_entry(fb_key);
    const cvc_entry fb = cvc_entry_fallback(&e);
    CU_ASSERT_EQUAL(fb.k.cluster_m, fbk.k.cluster_m);
    CU_ASSERT_EQUAL(fb.k.cluster_n, fbk.k.cluster_n);
    CU_ASSERT_FALSE(cvc_key_dynamic(&fb.k));
    convcat_problem p = unit_problem(op, 2, CONVCAT_BF16, CONVCAT_BF16);
    for (int m = 0; m < MUTATIONS; ++m) {
        const convcat_problem q = mutate(p, m);
        char w[192] = "", wp[192] = "";
        const convcat_status s = unit_check(&e, &q, w, sizeof w);
        CU_ASSERT_EQUAL(s, unit_check(&pref, &q, wp, sizeof wp));   /* boxes never decide here */
        if (s != CONVCAT_OK || q.op != op)
            continue;
        cvc_operand_desc a[4], b[4];
        memset(a, 0, sizeof a), memset(b, 0, sizeof b);
        const cvc_view *v = unit_view(&q);
        cvc_tma_operands(&e, v, &a[0], &b[0]);
        cvc_tma_operands(&pref, v, &a[1], &b[1]);
        cvc_tma_operands(&fb, v, &a[2], &b[2]);
        cvc_tma_operands(&fbk, v, &a[3], &b[3]);
        CU_ASSERT_EQUAL(memcmp(&a[0], &a[1], sizeof a[0]), 0);
        CU_ASSERT_EQUAL(memcmp(&b[0], &b[1], sizeof b[0]), 0);
        CU_ASSERT_EQUAL(memcmp(&a[2], &a[3], sizeof a[0]), 0);
        CU_ASSERT_EQUAL(memcmp(&b[2], &b[3], sizeof b[0]), 0);
        if (q.op == CONVCAT_DGRAD)
            for (int i = 0; i < v->phases; ++i) {
                cvc_dgrad_phase ph;
                cvc_dgrad_phase_at(v, i, &ph);
                cvc_im2col_desc d0, d1;
                memset(&d0, 0, sizeof d0), memset(&d1, 0, sizeof d1);
                cvc_tma_dgrad_a(&fb, v, &ph, &d0);
                cvc_tma_dgrad_a(&fbk, v, &ph, &d1);
                CU_ASSERT_EQUAL(memcmp(&d0, &d1, sizeof d0), 0);
            }
    }
}

static void test_dynamic_descriptor_sets(void)
{
    check_two_sets("sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1f1x1_1sm",
                   "sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_1sm",
                   "sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_1sm", CONVCAT_FPROP);
    check_two_sets("sm100a_dgrad_2d_bf16_bf16_f32_bf16_128x128x64_s5_c2x2f2x1_1sm",
                   "sm100a_dgrad_2d_bf16_bf16_f32_bf16_128x128x64_s5_c2x2_1sm",
                   "sm100a_dgrad_2d_bf16_bf16_f32_bf16_128x128x64_s5_c2x1_1sm", CONVCAT_DGRAD);
    check_two_sets("sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x256x64_s6_c2x2f2x1_2sm",
                   "sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x256x64_s6_c2x2_2sm",
                   "sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x256x64_s6_c2x1_2sm", CONVCAT_WGRAD);

    /* Box sizes per shape, by hand: 2x1 fprop splits B (64 rows) and falls back to whole tiles. */
    const cvc_entry e = sm100_entry("sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1f1x1_1sm");
    const convcat_problem p = unit_problem(CONVCAT_FPROP, 2, CONVCAT_BF16, CONVCAT_BF16);
    cvc_im2col_desc a;
    cvc_tiled_desc b;
    unit_fprop_descs(&e, &p, &a, &b);
    CU_ASSERT_EQUAL(a.pixels_per_column, 128);
    CU_ASSERT_EQUAL(b.box[b.rank - 1], 64);
    const cvc_entry fb = cvc_entry_fallback(&e);
    unit_fprop_descs(&fb, &p, &a, &b);
    CU_ASSERT_EQUAL(a.pixels_per_column, 128);
    CU_ASSERT_EQUAL(b.box[b.rank - 1], 128);

    /* The fallback set is checked too: a fallback box the TMA unit refuses refuses the problem. */
    cvc_entry broken = e;
    broken.fb_b_box_rows = 512;
    char why[192] = "";
    UNIT_ASSERT_STATUS(unit_check(&broken, &p, why, sizeof why), CONVCAT_ERR_UNSUPPORTED);
    UNIT_ASSERT_MENTIONS(why, "fallback cluster 1x1: filters: box extent 512");

    /* Persistent grid: whole preferred clusters; fallback clusters count when they place more CTAs. */
    cvc_params k;
    memset(&k, 0, sizeof k);
    k.cluster_tiles_m = 10, k.cluster_tiles_n = 10, k.splits = 1;
    CU_ASSERT_EQUAL(cvc_dynamic_fit(60, 0, 2, 0), 60);        /* static */
    CU_ASSERT_EQUAL(cvc_dynamic_fit(60, 148, 2, 1), 74);      /* 148 single CTAs = 74 pairs */
    CU_ASSERT_EQUAL(cvc_dynamic_fit(37, 70, 4, 2), 37);       /* 2x2 preferred, 2x1 fallback */
    CU_ASSERT_EQUAL(cvc_dynamic_fit(30, 70, 4, 2), 35);
    CU_ASSERT_EQUAL(cvc_grid_for(&k, cvc_dynamic_fit(30, 70, 4, 2), 4) % 4, 0);
    CU_ASSERT_EQUAL(cvc_grid_for(&k, 35, 4), 140);
    CU_ASSERT_EQUAL(cvc_grid_for(&k, 500, 4), 400);           /* at most one cluster per cluster tile */
}

/* Every field of a built catalog's record but its code and registers, as the test index has it
 * for the same key: both are pack.py's, from space.index_values. */
static void same_record(const cvc_entry *got, const cvc_entry *want)
{
#define SAME_FIELD(f)                                                                              \
    do {                                                                                           \
        if ((int64_t)got->f != (int64_t)want->f)                                                   \
            printf("\n    %s: %s %lld in the catalog, %lld in the test index", got->key, #f,       \
                   (long long)got->f, (long long)want->f);                                         \
        CU_ASSERT_EQUAL((int64_t)got->f, (int64_t)want->f);                                        \
    } while (0)
    CU_ASSERT_STRING_EQUAL(got->key, want->key);
    CU_ASSERT_EQUAL(memcmp(&got->k, &want->k, sizeof got->k), 0);
    SAME_FIELD(family);
    SAME_FIELD(threads);
    SAME_FIELD(smem_bytes);
    SAME_FIELD(a_box_rows);
    SAME_FIELD(a_box_cols);
    SAME_FIELD(b_box_rows);
    SAME_FIELD(b_box_cols);
    SAME_FIELD(y_box_rows);
    SAME_FIELD(y_box_cols);
    SAME_FIELD(swizzle_bytes);
    SAME_FIELD(fb_a_box_rows);
    SAME_FIELD(fb_b_box_rows);
    SAME_FIELD(flags);
    SAME_FIELD(acc_regs);
    SAME_FIELD(wg_n);
    SAME_FIELD(mma_n);
    SAME_FIELD(c_align);
    SAME_FIELD(k_align);
    SAME_FIELD(max_stride);
    SAME_FIELD(groups_mode);
    SAME_FIELD(group_c_mask);
    SAME_FIELD(halo_cols);
    SAME_FIELD(halo_reach);
    SAME_FIELD(halo_tile_rows);
    SAME_FIELD(vec_mask);
    SAME_FIELD(block_vec);
    SAME_FIELD(block_strip);
    SAME_FIELD(max_taps);
    SAME_FIELD(a_stage_bytes);
    SAME_FIELD(b_stage_bytes);
    SAME_FIELD(epi_bytes);
#undef SAME_FIELD
}

/* Every sm100a entry of the built catalog: what every sm100a kernel of its family has, the same
 * record as the test index's where that holds the key, base problem accepted. */
static void test_catalog_entries(void)
{
    const char *path = unit_env_path("CONVCAT_TEST_CATALOG"), *index_path = unit_env_path("CONVCAT_UNIT_INDEX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(index_path);
    convcat_catalog *cat = NULL, *index = NULL;
    UNIT_ASSERT_STATUS(convcat_open(path, &cat), CONVCAT_OK);
    UNIT_ASSERT_STATUS(convcat_open(index_path, &index), CONVCAT_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cat);
    CU_ASSERT_PTR_NOT_NULL_FATAL(index);
    size_t n100 = 0, n_dynamic = 0, n_tma = 0, compared = 0;
    for (size_t i = 0; i < cat->count; ++i) {
        const cvc_entry *e = &cat->entries[i];
        if (e->k.arch != CONVCAT_ARCH_SM100A)
            continue;
        ++n100;
        CU_ASSERT_TRUE(e->smem_bytes > 0 && e->smem_bytes <= 232448);
        convcat_problem p = unit_problem(e->k.op, e->k.dims, e->k.a, e->k.out);
        p.b_type = e->k.b;
        char why[192] = "";
        /* Listing and querying need no GPU; a plan needs an sm_100 device, which this machine lacks. */
        convcat_entry_info info;
        UNIT_ASSERT_STATUS(convcat_entry_info_get(cat, i, &info), CONVCAT_OK);
        CU_ASSERT_EQUAL(info.arch, CONVCAT_ARCH_SM100A);
        CU_ASSERT_EQUAL((int)info.family, e->family);
        CU_ASSERT_EQUAL(info.groups_mode, e->groups_mode);
        CU_ASSERT_FALSE(info.verified);   /* the GPU suite has run no sm100a kernel */
        size_t at;
        if (convcat_find(index, e->key, &at) == CONVCAT_OK) {
            same_record(e, &index->entries[at]);
            ++compared;
        }
        if (e->family != CVC_FAMILY_TMA) {   /* the pointer families: the same code on both arches */
            CU_ASSERT_TRUE(e->k.schedule == CONVCAT_GATHER || e->k.schedule == CONVCAT_DIRECT);
            CU_ASSERT_TRUE(e->swizzle_bytes == 0 && e->vec_mask >= 1);
            if (e->family == CVC_FAMILY_DIRECT)
                p.groups = p.c;
            if (cvc_has(e, CVC_F_INPUT_TILE))   /* fprop of at most 4 channels */
                p.c = 3;
            UNIT_ASSERT_STATUS(cvc_check_entry(e, unit_view(&p), why, sizeof why, NULL), CONVCAT_OK);
            continue;
        }
        ++n_tma;
        CU_ASSERT_TRUE(e->k.schedule == CONVCAT_1SM || e->k.schedule == CONVCAT_2SM);
        CU_ASSERT_TRUE(e->k.schedule != CONVCAT_2SM || e->k.cluster_m == 2);
        sm100_invariants(e);   /* 192 threads, 32-row stores, its flags */
        CU_ASSERT_TRUE(cvc_dynamic_cluster_valid(&e->k, NULL, 0));
        CU_ASSERT_EQUAL(info.fallback_m, e->k.fallback_m);
        CU_ASSERT_EQUAL(info.fallback_n, e->k.fallback_n);
        const cvc_view *v = unit_view(&p);
        UNIT_ASSERT_STATUS(cvc_check_entry(e, v, why, sizeof why, NULL), CONVCAT_OK);
        cvc_operand_desc a, b;
        cvc_tiled_desc y;
        cvc_tma_operands(e, v, &a, &b);
        cvc_tma_output(e, v, 1, &y);
        CU_ASSERT_TRUE(a.im2col ? cvc_im2col_desc_valid(&a.i, why, sizeof why) : cvc_tiled_desc_valid(&a.t, why, sizeof why));
        CU_ASSERT_TRUE(b.im2col ? cvc_im2col_desc_valid(&b.i, why, sizeof why) : cvc_tiled_desc_valid(&b.t, why, sizeof why));
        CU_ASSERT_TRUE(cvc_tiled_desc_valid(&y, why, sizeof why));
        n_dynamic += cvc_key_dynamic(&e->k);
    }
    if (n_tma)
        CU_ASSERT_TRUE(n_dynamic > 0);   /* the ci and default specs hold dynamic-cluster kernels */
    if (n100 == 0)
        printf("\n    (no sm100a entries in this catalog: built with -Darches=sm90a)");
    else
        CU_ASSERT_TRUE(compared > 0);   /* the suites name some of the ci catalog's kernels */
    convcat_close(index);
    convcat_close(cat);
}

int main(void)
{
    CU_TestInfo tests[] = {
        {"1sm entries answer as sm90a ones", test_1sm_answers_as_sm90a},
        {"2sm entries answer as sm90a ones", test_2sm_answers_as_sm90a},
        {"dgrad entries answer as sm90a ones", test_dgrad_answers_as_sm90a},
        {"wgrad entries answer as sm90a ones", test_wgrad_answers_as_sm90a},
        {"tf32 and fp8 channel rules", test_tf32_and_fp8_channel_rules},
        {"dynamic cluster rules", test_dynamic_rules},
        {"dynamic cluster descriptor sets", test_dynamic_descriptor_sets},
        {"sm100a entries of the catalog", test_catalog_entries},
        CU_TEST_INFO_NULL,
    };
    return unit_main("sm100", tests, NULL, NULL);
}
