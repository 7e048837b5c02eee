/* test_verify.c: the verifier's bounds (runtime/tools/reference.h) on the CPU.
 *
 * The GPU check is cvc_ref_check_one per output (cvc_ref_compare) and cvc_verify_decide on the
 * sums; here the same two functions judge outputs of a CPU model of the kernels, on data drawn
 * as cvc_ref_fill draws it (uniform in [-1, 1]): operands stored in their type (f16, bf16) or
 * f32 (tf32, read by the tensor cores with the low 13 mantissa bits dropped), products summed in
 * f32 in blocks of 8, each add truncated toward zero (the tensor cores), or one product at a
 * time rounded to nearest (the direct kernels' FMAs), then the epilogue in f32 and one rounding
 * to the output type (two, as the sm90a kernels, with an activation or beta * c).  The
 * reference is the sums in double, as reference.cu's.
 *
 * Correct outputs pass, with cancelling sums among them (a tf32 wgrad of one output of 16
 * terms can be off by 3.4e-3 of its value, over a bound of 3e-3 relative to the result); one
 * wrong element among 100,000 fails, NaN or 100.0; so do a 1% error everywhere, a skipped
 * channel, a skipped filter tap and a forgotten bias.
 */
#include <math.h>

#include "unit.h"
#include "verify.h"

/* ---- data: splitmix64, uniform in [-1, 1) as f32 ----------------------------------------------- */

static uint64_t state;

static float uniform(void)
{
    uint64_t z = (state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return -1.0f + 2.0f * ((float)(uint32_t)(z >> 32) * (1.0f / 4294967296.0f));
}

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* f to the nearest value of type t (ties to even), as the kernels store it. */
static float round_to(float f, convcat_dtype t)
{
    switch (t) {
    case CONVCAT_F16: return (float)(_Float16)f;
    case CONVCAT_BF16: {
        const uint32_t u = bits(f);
        return from_bits((u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u);
    }
    default: return f;
    }
}

/* What the tensor cores read of an f32 operand in a tf32 MMA: the low 13 mantissa bits dropped. */
static float tf32_operand(float f) { return from_bits(bits(f) & 0xFFFFE000u); }

/* s to f32, toward zero. */
static float truncate_f32(double s)
{
    float f = (float)s;
    if (fabs((double)f) > fabs(s))
        f = nextafterf(f, 0.0f);
    return f;
}

/* ---- a problem: `outs` sums of `terms` products each, and the epilogue ------------------------ */

typedef struct model {
    convcat_dtype ab, out;   /* operand type (both), output type */
    int terms, outs;
    int tensor_core;         /* 1: blocks of 8, truncated adds; 0: one FMA at a time, to nearest */
    float alpha, beta;
    int bias;
    int act;                 /* convcat_activation */
    int twice;               /* alpha * acc + bias rounded to the output type before beta * c and act, and
                                the sum rounded again before act (the sm90a swap and halo epilogues) */
    /* Damage: */
    int skip_every;          /* > 0: the kernel skips the terms j with j % skip_every == skip_at */
    int skip_at;
    int skip_from, skip_to;  /* and those with skip_from <= j < skip_to */
    float scale;             /* the kernel's sums times this (1: none) */
    int forget_bias;
    long wrong_at;           /* >= 0: that output replaced by wrong_value */
    float wrong_value;
} model;

static model plain(convcat_dtype ab, convcat_dtype out, int terms, int outs)
{
    return (model){.ab = ab, .out = out, .terms = terms, .outs = outs, .tensor_core = 1, .alpha = 1.0f,
                   .scale = 1.0f, .wrong_at = -1};
}

static int skipped(const model *m, int j)
{
    return (m->skip_every && j % m->skip_every == m->skip_at) || (j >= m->skip_from && j < m->skip_to);
}

static float activate(float v, int act)
{
    switch (act) {
    case CONVCAT_ACT_RELU: return v > 0.0f ? v : 0.0f;
    case CONVCAT_ACT_GELU: return 0.5f * v * (1.0f + erff(v * 0.70710678f));
    case CONVCAT_ACT_SILU: return v / (1.0f + expf(-v));
    default: return v;
    }
}

/* Run m on fresh data (seed) and check it as the GPU does; the verdict in *v. */
static void check(const model *m, uint64_t seed, const cvc_ref_bounds *bounds, cvc_verify *v)
{
    state = seed;
    float *a = malloc(sizeof(float) * (size_t)m->terms), *b = malloc(sizeof(float) * (size_t)m->terms);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    cvc_ref_sums sums;
    memset(&sums, 0, sizeof sums);
    const float bias = m->bias ? round_to(uniform(), m->out) : 0.0f;
    for (int o = 0; o < m->outs; ++o) {
        for (int j = 0; j < m->terms; ++j)
            a[j] = round_to(uniform(), m->ab), b[j] = round_to(uniform(), m->ab);
        const float c = m->beta != 0.0f ? round_to(uniform(), m->out) : 0.0f;
        /* the reference */
        double r = 0, mag = 0, sq = 0;
        for (int j = 0; j < m->terms; ++j) {
            const double t = (double)a[j] * b[j];
            r += t, mag += fabs(t), sq += t * t;
        }
        /* the kernel */
        float acc = 0.0f;
        if (m->tensor_core) {
            for (int j0 = 0; j0 < m->terms; j0 += 8) {
                double block = 0;
                for (int j = j0; j < j0 + 8 && j < m->terms; ++j) {
                    if (skipped(m, j))
                        continue;
                    block += m->ab == CONVCAT_TF32 ? (double)tf32_operand(a[j]) * tf32_operand(b[j])
                                                   : (double)a[j] * b[j];
                }
                acc = truncate_f32((double)acc + block);
            }
        } else {
            for (int j = 0; j < m->terms; ++j)
                if (!skipped(m, j))
                    acc = fmaf(a[j], b[j], acc);
        }
        acc *= m->scale;
        float y = fmaf(m->alpha, acc, m->forget_bias ? 0.0f : bias);
        if (m->twice)
            y = round_to(y, m->out);
        if (m->beta != 0.0f)
            y = fmaf(m->beta, c, y);
        if (m->twice && m->beta != 0.0f && m->act != CONVCAT_ACT_NONE)
            y = round_to(y, m->out);
        y = round_to(activate(y, m->act), m->out);
        if (o == m->wrong_at)
            y = m->wrong_value;
        /* the check, as cvc_ref_compare makes it */
        const float rf = (float)r, bc = m->beta != 0.0f ? m->beta * c : 0.0f;
        const float pre = m->alpha * rf + bias + bc;
        const double p = fabs((double)m->alpha * rf) + fabs((double)bias) + fabs((double)bc);
        cvc_ref_check_one(bounds, y, activate(pre, m->act), pre, m->alpha, rf, (float)mag, (float)sq, p, &sums);
    }
    free(a);
    free(b);
    memset(v, 0, sizeof *v);
    cvc_verify_decide(bounds, &sums, v);
}

static cvc_ref_bounds bounds_of(const model *m)
{
    return cvc_ref_bounds_for((int)m->ab, (int)m->ab, (int)m->out, m->terms, m->act, m->beta != 0.0f);
}

static void expect(const model *m, uint64_t seed, int pass, const char *what)
{
    const cvc_ref_bounds bounds = bounds_of(m);
    cvc_verify v;
    check(m, seed, &bounds, &v);
    if (v.passed != pass)
        printf("\n    %s (%s -> %s, K %d, %d outputs): rel. error %.3e, bound %.3e, %lld non-finite, %lld outliers, "
               "worst %.3g: %s, wanted %s", what, convcat_dtype_name(m->ab), convcat_dtype_name(m->out), m->terms,
               m->outs, v.rel_err, v.tolerance, v.nonfinite, v.outliers, v.worst, v.passed ? "passed" : "failed",
               pass ? "pass" : "fail");
    CU_ASSERT_EQUAL(v.passed, pass);
}

/* The kernels' type combinations: operands, output. */
static const convcat_dtype combos[][2] = {
    {CONVCAT_TF32, CONVCAT_F32}, {CONVCAT_F16, CONVCAT_F16}, {CONVCAT_BF16, CONVCAT_BF16},
    {CONVCAT_F16, CONVCAT_F32},  {CONVCAT_BF16, CONVCAT_F32}, {CONVCAT_F32, CONVCAT_F32},
};
#define COMBOS (sizeof combos / sizeof combos[0])

/* ---- the tests ---------------------------------------------------------------------------------- */

/* The constants: the units of the types, tf32's operand truncation, growth with K. */
static void test_constants(void)
{
    const cvc_ref_bounds t = cvc_ref_bounds_for(CONVCAT_TF32, CONVCAT_TF32, CONVCAT_F32, 1, CONVCAT_ACT_NONE, 0);
    CU_ASSERT_TRUE(t.conv_elem >= ldexp(1, -9) + ldexp(1, -20) && t.conv_elem < 2.0e-3);
    CU_ASSERT_TRUE(t.conv_norm > 1.4 * ldexp(1, -9) && t.conv_norm < 3.0e-3);
    CU_ASSERT_DOUBLE_EQUAL(t.u_out, ldexp(1, -24), 0);
    const cvc_ref_bounds h = cvc_ref_bounds_for(CONVCAT_F16, CONVCAT_F16, CONVCAT_F16, 576, CONVCAT_ACT_RELU, 0);
    CU_ASSERT_DOUBLE_EQUAL(h.u_out, ldexp(1, -11), 0);
    CU_ASSERT_TRUE(h.conv_elem < 1e-4);   /* exact products: accumulation only */
    CU_ASSERT_DOUBLE_EQUAL(h.slope, 1.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(h.act, 0.0, 0);
    CU_ASSERT_TRUE(h.epi < ldexp(1, -20));   /* ReLU of a rounded value is the rounded ReLU */
    const cvc_ref_bounds hc = cvc_ref_bounds_for(CONVCAT_F16, CONVCAT_F16, CONVCAT_F16, 576, CONVCAT_ACT_NONE, 1);
    CU_ASSERT_TRUE(hc.epi > ldexp(1, -11));   /* beta * c may be added to a rounded value */
    const cvc_ref_bounds b = cvc_ref_bounds_for(CONVCAT_BF16, CONVCAT_BF16, CONVCAT_BF16, 576, CONVCAT_ACT_GELU, 0);
    CU_ASSERT_DOUBLE_EQUAL(b.u_out, ldexp(1, -8), 0);
    CU_ASSERT_TRUE(b.slope > 1.12 && b.act > 0 && b.epi > ldexp(1, -8));
    const cvc_ref_bounds big = cvc_ref_bounds_for(CONVCAT_F16, CONVCAT_F16, CONVCAT_F32, 1e6, CONVCAT_ACT_NONE, 0);
    CU_ASSERT_TRUE(big.conv_norm > h.conv_norm && big.conv_elem > h.conv_elem);
    /* K of each op, from the problem */
    convcat_problem p;
    convcat_problem_init(&p);
    p.op = CONVCAT_WGRAD, p.a_type = p.b_type = CONVCAT_TF32, p.out_type = CONVCAT_F32;
    p.n = 1, p.h = 4, p.w = 4, p.c = p.k = 1;
    const cvc_epilogue none = {.alpha = 1.0f};
    const cvc_ref_bounds w = cvc_verify_bounds(&p, &none);
    const cvc_ref_bounds w16 = cvc_ref_bounds_for(CONVCAT_TF32, CONVCAT_TF32, CONVCAT_F32, 16, CONVCAT_ACT_NONE, 0);
    CU_ASSERT_DOUBLE_EQUAL(w.conv_elem, w16.conv_elem, 0);
    p.op = CONVCAT_FPROP, p.c = 64, p.k = 32, p.r = p.s = 3, p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = 1;
    const cvc_ref_bounds f = cvc_verify_bounds(&p, &none);
    CU_ASSERT_DOUBLE_EQUAL(f.conv_norm,
                           cvc_ref_bounds_for(CONVCAT_TF32, CONVCAT_TF32, CONVCAT_F32, 576, 0, 0).conv_norm, 0);
    p.op = CONVCAT_DGRAD;
    const cvc_ref_bounds d = cvc_verify_bounds(&p, &none);
    CU_ASSERT_DOUBLE_EQUAL(d.conv_norm,
                           cvc_ref_bounds_for(CONVCAT_TF32, CONVCAT_TF32, CONVCAT_F32, 288, 0, 0).conv_norm, 0);
}

/* A tf32 wgrad of one output of 16 terms (1x1 filter, C = K = 1, 16 pixels).  Some of 20,000
 * draws are off by more than 3e-3 of their value (a bound relative to the result would fail
 * them); every draw passes, with room: the worst within 0.6 of the norm bound.  So do single
 * outputs of fewer and more terms. */
static void test_cancelling_sums_pass(void)
{
    static const int terms[] = {16, 1, 2, 3, 4, 8, 64};
    for (size_t k = 0; k < sizeof terms / sizeof terms[0]; ++k) {
        model m = plain(CONVCAT_TF32, CONVCAT_F32, terms[k], 1);
        convcat_problem p;
        convcat_problem_init(&p);
        p.op = CONVCAT_WGRAD, p.a_type = p.b_type = CONVCAT_TF32, p.out_type = CONVCAT_F32;
        p.n = 1, p.h = 1, p.w = terms[k], p.c = p.k = 1;
        const cvc_epilogue none = {.alpha = 1.0f};
        const cvc_ref_bounds bounds = cvc_verify_bounds(&p, &none);
        int over_relative = 0, failed = 0;
        double worst_norm = 0, worst_elem = 0;
        for (uint64_t seed = 1; seed <= 20000; ++seed) {
            cvc_verify v;
            check(&m, seed * 1000 + (uint64_t)k, &bounds, &v);
            over_relative += v.rel_err > 3e-3;
            failed += !v.passed;
            if (v.rel_err / v.tolerance > worst_norm)
                worst_norm = v.rel_err / v.tolerance;
            if (v.worst > worst_elem)
                worst_elem = v.worst;
        }
        printf("\n    K %2d: %5d of 20000 over 3e-3 of the value; the worst at %.2f of the norm bound, %.2f of the "
               "element bound", terms[k], over_relative, worst_norm, worst_elem);
        if (terms[k] == 16)
            CU_ASSERT_TRUE(over_relative > 0);
        CU_ASSERT_EQUAL(failed, 0);
        CU_ASSERT_TRUE(worst_norm < 0.6);
        CU_ASSERT_TRUE(worst_elem < 1.0);
    }
    printf("\n  ");
}

/* Correct outputs pass: every type combination, sums of 1 to 4608 terms, both accumulation
 * models, the epilogue's alpha, bias, beta * c and activations, applied to the f32 value or
 * (as the sm90a kernels do) to the value rounded to the output type. */
static void test_correct_outputs_pass(void)
{
    static const int terms[] = {1, 2, 3, 16, 72, 576, 4608};
    uint64_t seed = 100;
    for (size_t c = 0; c < COMBOS; ++c)
        for (size_t k = 0; k < sizeof terms / sizeof terms[0]; ++k)
            for (int variant = 0; variant < 7; ++variant) {
                model m = plain(combos[c][0], combos[c][1], terms[k], 200000 / terms[k] + 1);
                m.tensor_core = combos[c][0] != CONVCAT_F32;
                if (variant >= 1)
                    m.alpha = 1.5f, m.beta = -0.5f, m.bias = 1;
                if (variant >= 2)
                    m.act = variant % 2 ? CONVCAT_ACT_SILU : CONVCAT_ACT_GELU;
                if (variant == 1 || variant == 4)
                    m.act = CONVCAT_ACT_RELU;
                m.twice = variant >= 4;
                expect(&m, ++seed, 1, "correct outputs");
            }
}

/* One wrong element among 100,000 fails: NaN (non-finite) or 100.0 (an outlier). */
static void test_one_wrong_element_fails(void)
{
    for (size_t c = 0; c < COMBOS; ++c) {
        model m = plain(combos[c][0], combos[c][1], 576, 100000);
        const cvc_ref_bounds bounds = bounds_of(&m);
        cvc_verify v;
        m.wrong_at = 31337, m.wrong_value = 100.0f;
        check(&m, 7, &bounds, &v);
        CU_ASSERT_FALSE(v.passed);
        CU_ASSERT_EQUAL(v.outliers, 1);
        CU_ASSERT_EQUAL(v.nonfinite, 0);
        CU_ASSERT_TRUE(v.worst > 10);
        m.wrong_value = NAN;
        check(&m, 7, &bounds, &v);
        CU_ASSERT_FALSE(v.passed);
        CU_ASSERT_EQUAL(v.nonfinite, 1);
        CU_ASSERT_EQUAL(v.outliers, 0);
    }
}

/* Errors a little everywhere fail: 1% too large; one channel of 512 (3x3, terms in (tap,
 * channel) order: every 512th of 4608) or one tap of 9 (512 terms in a row) left out; the bias
 * forgotten. */
static void test_small_errors_everywhere_fail(void)
{
    for (size_t c = 0; c < COMBOS; ++c) {
        model m = plain(combos[c][0], combos[c][1], 576, 4000);
        m.tensor_core = combos[c][0] != CONVCAT_F32;
        m.scale = 1.01f;
        expect(&m, 11, 0, "1% too large");
        m = plain(combos[c][0], combos[c][1], 4608, 500);
        m.tensor_core = combos[c][0] != CONVCAT_F32;
        m.skip_every = 512, m.skip_at = 100;
        expect(&m, 12, 0, "one channel of 512 skipped");
        m.skip_every = 0;
        expect(&m, 12, 1, "the same, nothing skipped");
        m.skip_from = 4 * 512, m.skip_to = 5 * 512;
        expect(&m, 12, 0, "one tap of 9 skipped");
        m = plain(combos[c][0], combos[c][1], 576, 4000);
        m.tensor_core = combos[c][0] != CONVCAT_F32;
        m.bias = 1, m.forget_bias = 1;
        expect(&m, 13, 0, "bias forgotten");
    }
}

/* An f16 output in the subnormals, rounded before its activation and after: a fully padded window
 * (ref = mag = 0) with v = beta * c = 7.6e-7 and GELU, as an sm90a kernel gave it (y 4.17e-7 for
 * e = gelu(v) = 3.80e-7: 0.625 of a subnormal step off, rounded twice).  It passes; an output two
 * steps off fails. */
static void test_subnormal_roundings(void)
{
    const cvc_ref_bounds b = cvc_ref_bounds_for(CONVCAT_F16, CONVCAT_F16, CONVCAT_F16, 520, CONVCAT_ACT_GELU, 1);
    CU_ASSERT_DOUBLE_EQUAL(b.epi_tiny, 2 * ldexp(1, -25), 0);
    CU_ASSERT_DOUBLE_EQUAL(cvc_ref_bounds_for(CONVCAT_F16, CONVCAT_F16, CONVCAT_F16, 520, 0, 0).epi_tiny, 0, 0);
    const float v = 7.59959221e-07f, e = 3.79979838e-07f, step = ldexpf(1, -24);
    cvc_ref_sums s = {0};
    cvc_ref_check_one(&b, 4.17232513e-07f, e, v, 1.0f, 0.0f, 0.0f, 0.0f, fabs((double)v), &s);
    CU_ASSERT_EQUAL(s.outliers, 0);
    CU_ASSERT_TRUE(s.worst > 0.2 && s.worst < 1.0);
    cvc_ref_sums t = {0};
    cvc_ref_check_one(&b, e + 2 * step, e, v, 1.0f, 0.0f, 0.0f, 0.0f, fabs((double)v), &t);
    CU_ASSERT_EQUAL(t.outliers, 1);
}

int main(void)
{
    CU_TestInfo tests[] = {
        {"the constants per type and K per op", test_constants},
        {"cancelling tf32 sums of one output pass", test_cancelling_sums_pass},
        {"correct outputs pass", test_correct_outputs_pass},
        {"one wrong element fails", test_one_wrong_element_fails},
        {"small errors everywhere fail", test_small_errors_everywhere_fail},
        {"subnormal outputs rounded twice pass", test_subnormal_roundings},
        CU_TEST_INFO_NULL,
    };
    return unit_main("verify", tests, NULL, NULL);
}
