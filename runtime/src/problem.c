/* problem.c: convolution problems and the rules a kernel checks before it runs one.
 *
 * cvc_check_entry() is can_implement: the problem rules of DESIGN.md and of
 * the seed collective, each returning a sentence.  A problem is either
 * refused here (or by the device checks of convcat_plan_create) or computed
 * correctly: nothing a kernel cannot do may reach it.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const char *const axis_name[3] = {"D", "H", "W"};

void convcat_problem_init(convcat_problem *p)
{
    if (!p)
        return;
    *p = (convcat_problem){.op = CONVCAT_FPROP, .dims = 2, .n = 1, .d = 1, .h = 1, .w = 1, .c = 1,
                           .k = 1, .t = 1, .r = 1, .s = 1, .stride = {1, 1, 1},
                           .dilation = {1, 1, 1}, .groups = 1, .mode = CONVCAT_CROSS_CORRELATION,
                           .a_type = CONVCAT_BF16, .b_type = CONVCAT_BF16, .out_type = CONVCAT_BF16};
}

/* Output extent along one axis, or -1 when the window does not fit once. */
static int64_t out_extent(int in, int filt, int lo, int hi, int stride, int dil)
{
    const int64_t span = (int64_t)in + lo + hi - ((int64_t)(filt - 1) * dil + 1);
    return span < 0 ? -1 : span / stride + 1;
}

convcat_status cvc_problem_gemm(const convcat_problem *p, cvc_gemm *g, char *why, size_t n)
{
    if (!p) {
        cvc_say(why, n, "problem is NULL");
        return CONVCAT_ERR_INVALID_ARGUMENT;
    }
    if (p->dims < 1 || p->dims > 3) {
        cvc_say(why, n, "dims %d: a problem has 1, 2 or 3 spatial dimensions", p->dims);
        return CONVCAT_ERR_UNSUPPORTED;
    }
    if (p->n < 1 || p->c < 1 || p->k < 1 || p->d < 1 || p->h < 1 || p->w < 1 || p->t < 1 ||
        p->r < 1 || p->s < 1 || p->groups < 1) {
        cvc_say(why, n, "extents must be >= 1 (N %d D %d H %d W %d C %d K %d T %d R %d S %d groups %d)",
                p->n, p->d, p->h, p->w, p->c, p->k, p->t, p->r, p->s, p->groups);
        return CONVCAT_ERR_UNSUPPORTED;
    }
    const int in[3] = {p->d, p->h, p->w}, filt[3] = {p->t, p->r, p->s};
    int64_t out[3];
    for (int a = 0; a < 3; ++a) {
        if (p->pad_lo[a] < 0 || p->pad_hi[a] < 0) {
            cvc_say(why, n, "padding along %s is negative (%d, %d)", axis_name[a], p->pad_lo[a], p->pad_hi[a]);
            return CONVCAT_ERR_UNSUPPORTED;
        }
        if (p->stride[a] < 1 || p->dilation[a] < 1) {
            cvc_say(why, n, "stride and dilation along %s must be >= 1 (got %d, %d)", axis_name[a],
                    p->stride[a], p->dilation[a]);
            return CONVCAT_ERR_UNSUPPORTED;
        }
        /* Axes a problem of fewer dimensions does not have must be trivial. */
        if (a < 3 - p->dims && (in[a] != 1 || filt[a] != 1 || p->pad_lo[a] || p->pad_hi[a] ||
                                p->stride[a] != 1 || p->dilation[a] != 1)) {
            cvc_say(why, n, "a %dD problem has no %s axis: its extent, filter, padding, stride and "
                    "dilation must be 1/1/0/1/1", p->dims, axis_name[a]);
            return CONVCAT_ERR_UNSUPPORTED;
        }
        out[a] = out_extent(in[a], filt[a], p->pad_lo[a], p->pad_hi[a], p->stride[a], p->dilation[a]);
        if (out[a] < 1) {
            cvc_say(why, n, "the filter (%d taps, dilation %d) does not fit the padded input along %s (%d + %d + %d)",
                    filt[a], p->dilation[a], axis_name[a], in[a], p->pad_lo[a], p->pad_hi[a]);
            return CONVCAT_ERR_UNSUPPORTED;
        }
        /* Padding can make an output longer than its input: it must still be an int. */
        if (out[a] > INT32_MAX) {
            cvc_say(why, n, "the output extent along %s is %lld: more than 2^31 - 1", axis_name[a],
                    (long long)out[a]);
            return CONVCAT_ERR_UNSUPPORTED;
        }
    }
    /* Products of four ints: check, do not wrap (a wrapped M would slip past the 32-bit rule). */
    int64_t m, k;
    if (__builtin_mul_overflow((int64_t)p->n, out[0], &m) || __builtin_mul_overflow(m, out[1], &m) ||
        __builtin_mul_overflow(m, out[2], &m) || __builtin_mul_overflow((int64_t)p->t, (int64_t)p->r, &k) ||
        __builtin_mul_overflow(k, (int64_t)p->s, &k) || __builtin_mul_overflow(k, (int64_t)(p->c / p->groups), &k)) {
        cvc_say(why, n, "GEMM M = N*Z*P*Q or K = T*R*S*C/groups overflows 64 bits");
        return CONVCAT_ERR_UNSUPPORTED;
    }
    const int64_t taps = (int64_t)p->t * p->r * p->s, cg = p->c / p->groups;
    g->z = (int)out[0], g->p = (int)out[1], g->q = (int)out[2];
    g->pixels = m;
    g->taps = taps;
    switch (p->op) {
    case CONVCAT_DGRAD:   /* dx pixels x input channels, reduced over dy channels and taps */
        g->m = (int64_t)p->n * p->d * p->h * p->w;
        g->n = p->c;
        g->k = taps * p->k;
        break;
    case CONVCAT_WGRAD:   /* filters x (taps, channels), reduced over output pixels */
        g->m = p->k;
        g->n = taps * cg;
        g->k = m;
        break;
    default:
        g->m = m;
        g->n = p->k;
        g->k = k;
    }
    return CONVCAT_OK;
}

convcat_status convcat_problem_output(const convcat_problem *p, int *z, int *pp, int *q)
{
    cvc_gemm g;
    char why[192];
    const convcat_status st = cvc_problem_gemm(p, &g, why, sizeof why);
    if (st != CONVCAT_OK)
        return cvc_fail(st, "%s", why);
    if (z)
        *z = g.z;
    if (pp)
        *pp = g.p;
    if (q)
        *q = g.q;
    return CONVCAT_OK;
}

double convcat_problem_flops(const convcat_problem *p)
{
    cvc_gemm g;
    if (cvc_problem_gemm(p, &g, NULL, 0) != CONVCAT_OK)
        return 0.0;
    /* The forward convolution's multiply-adds, for every op (dgrad's GEMM also
     * multiplies the zeros past the padding; those are not counted). */
    return 2.0 * (double)g.pixels * (double)p->k * (double)g.taps * (double)(p->c / p->groups);
}

/* ---- the rules ------------------------------------------------------------ */

#define REFUSE(...)                                  \
    do {                                             \
        cvc_say(why, n, __VA_ARGS__);                \
        return CONVCAT_ERR_UNSUPPORTED;              \
    } while (0)

static convcat_status check_operands(const cvc_entry *e, const convcat_problem *p, char *why, size_t n)
{
    static const char *const role[3][2] = {{"activations", "filters"}, {"dy", "filters"}, {"dy", "activations"}};
    cvc_operand_desc a, b;
    cvc_tma_operands(e, p, &a, &b);
    const cvc_operand_desc *ops[2] = {&a, &b};
    char tma_why[160];
    for (int i = 0; i < 2; ++i)
        if (ops[i]->im2col ? !cvc_im2col_desc_valid(&ops[i]->i, tma_why, sizeof tma_why)
                           : !cvc_tiled_desc_valid(&ops[i]->t, tma_why, sizeof tma_why))
            REFUSE("%s: %s", role[e->k.op][i], tma_why);
    if (e->k.op == CONVCAT_DGRAD) {   /* every stride phase reads dy through its own box */
        const int phases = cvc_dgrad_phase_count(p);
        for (int i = 1; i < phases; ++i) {
            cvc_dgrad_phase ph;
            cvc_dgrad_phase_at(p, i, &ph);
            cvc_im2col_desc d;
            cvc_tma_dgrad_a(e, p, &ph, &d);
            if (!cvc_im2col_desc_valid(&d, tma_why, sizeof tma_why))
                REFUSE("dy, stride phase %d: %s", i, tma_why);
        }
    }
    cvc_tiled_desc y;
    cvc_tma_output(e, p, 1, &y);
    if (!cvc_tiled_desc_valid(&y, tma_why, sizeof tma_why))
        REFUSE("output: %s", tma_why);
    if (cvc_key_dynamic(&e->k)) {   /* a dynamic cluster's second descriptor set: the fallback shape's */
        const cvc_entry f = cvc_entry_fallback(e);
        char fb_why[176];
        if (check_operands(&f, p, fb_why, sizeof fb_why) != CONVCAT_OK)
            REFUSE("fallback cluster %dx%d: %s", e->k.fallback_m, e->k.fallback_n, fb_why);
    }
    return CONVCAT_OK;
}

/* The rules every op's kernels share, on the GEMM they run. */
static convcat_status check_gemm(const cvc_entry *e, const convcat_problem *p, const cvc_gemm *g,
                                 char *why, size_t n)
{
    const int eb = cvc_dtype_bytes(p->a_type);
    const int align = 16 / eb;
    if (p->c % align)
        REFUSE("C = %d: channels must be a multiple of %d (16-byte TMA rows of %s)", p->c, align,
               convcat_dtype_name(p->a_type));
    const int out_align = 16 / cvc_dtype_bytes(p->out_type);
    if (p->k % 8 || p->k % out_align)
        REFUSE("K = %d: output channels must be a multiple of 8 (16-byte filter and output rows)", p->k);
    if (p->c % out_align)
        REFUSE("C = %d: channels must be a multiple of %d (16-byte rows of the %s output)", p->c, out_align,
               convcat_dtype_name(p->out_type));
    /* 32-bit GEMM coordinates inside the kernel, with room for the last cluster's padding tiles. */
    const int64_t m_span = g->m + (int64_t)e->k.tile_m * e->k.cluster_m;
    static const char *const m_name[3] = {"N*Z*P*Q", "N*D*H*W", "K"};
    if (m_span > INT32_MAX || g->n > INT32_MAX)
        REFUSE("GEMM M = %s = %lld exceeds the kernel's 32-bit pixel index", m_name[e->k.op], (long long)g->m);
    if (e->k.op == CONVCAT_WGRAD && g->pixels + (int64_t)e->k.tile_k > INT32_MAX)
        REFUSE("N*Z*P*Q = %lld pixels exceed the wgrad kernel's 32-bit pixel index", (long long)g->pixels);
    if (e->k.op == CONVCAT_DGRAD && g->pixels + (int64_t)e->k.tile_m * e->k.cluster_m > INT32_MAX)
        REFUSE("N*Z*P*Q = %lld exceeds the kernel's 32-bit pixel index", (long long)g->pixels);
    /* The K loop is an int32 count; taps <= GEMM K, so no overflow here. */
    const int64_t k_iters = cvc_k_iters(e, p, g);
    if (k_iters > INT32_MAX)
        REFUSE("the GEMM K loop is %lld stages: more than the kernel's 32-bit count", (long long)k_iters);
    int64_t tm, tn;
    cvc_cluster_tiles(e, p, g, &tm, &tn);
    if (tm * tn > INT32_MAX / 64)
        REFUSE("%lld cluster tiles: more than the kernel's 32-bit tile index allows", (long long)(tm * tn));
    /* TMA descriptors: every limit of cuTensorMapEncodeIm2col / Tiled. */
    return check_operands(e, p, why, n);
}

/* Grouped problems (groups > 1): wgrad kernels of cvc_groups_wgrad, K == C,
 * c = C / groups channels per group in 8..64 (a power of two: the epilogue's
 * same-group test), dividing tile N.  space.why_not_grouped: the same rules
 * and sentences. */
static convcat_status check_groups(const cvc_key *k, const convcat_problem *p, char *why, size_t n)
{
    const int g = p->groups;
    if (g == 1)
        return CONVCAT_OK;
    if (k->op != CONVCAT_WGRAD)
        REFUSE("groups = %d: only wgrad kernels run grouped problems (fprop and dgrad take groups = 1)", g);
    if (!cvc_groups_wgrad(k))
        REFUSE("groups = %d: grouped wgrad needs a kernel of tile M == tile N and cluster M 1 "
               "(this one is %dx%d, cluster %dx%d)", g, k->tile_m, k->tile_n, k->cluster_m, k->cluster_n);
    if (p->k != p->c)
        REFUSE("groups = %d: grouped wgrad needs K == C (K = %d, C = %d)", g, p->k, p->c);
    if (p->c % g)
        REFUSE("groups = %d does not divide C = %d", g, p->c);
    const int cg = p->c / g;
    if (cg != 8 && cg != 16 && cg != 32 && cg != 64)
        REFUSE("C / groups = %d channels per group: grouped wgrad takes 8, 16, 32 or 64", cg);
    if (k->tile_n % cg)
        REFUSE("C / groups = %d channels per group do not divide tile N %d", cg, k->tile_n);
    return CONVCAT_OK;
}

convcat_status cvc_check_entry(const cvc_entry *e, const convcat_problem *p, char *why, size_t n)
{
    const cvc_key *k = &e->k;
    cvc_gemm g;
    if (!p)
        REFUSE("problem is NULL");
    if (p->op != k->op)
        REFUSE("kernel computes %s, problem is %s", convcat_op_name(k->op),
               convcat_op_name(p->op) ? convcat_op_name(p->op) : "an unknown op");
    if (p->dims != k->dims)
        REFUSE("kernel is %dD, problem is %dD", k->dims, p->dims);
    if (p->a_type != k->a || p->b_type != k->b || p->out_type != k->out)
        REFUSE("kernel takes %s x %s -> %s, problem is %s x %s -> %s", convcat_dtype_name(k->a),
               convcat_dtype_name(k->b), convcat_dtype_name(k->out),
               convcat_dtype_name(p->a_type) ? convcat_dtype_name(p->a_type) : "?",
               convcat_dtype_name(p->b_type) ? convcat_dtype_name(p->b_type) : "?",
               convcat_dtype_name(p->out_type) ? convcat_dtype_name(p->out_type) : "?");
    convcat_status st = cvc_problem_gemm(p, &g, why, n);
    if (st != CONVCAT_OK)
        return st;
    if (p->mode != CONVCAT_CROSS_CORRELATION)
        REFUSE("convolution mode (flipped filter) is not supported: flip the filter and use cross-correlation");
    if ((st = check_groups(k, p, why, n)) != CONVCAT_OK)
        return st;
    for (int a = 0; a < 3; ++a)
        if (p->stride[a] > 8)
            REFUSE("stride %d along %s: TMA traversal strides are 1..8", p->stride[a], axis_name[a]);
    if (k->op == CONVCAT_DGRAD && (p->stride[0] > 1 || p->stride[1] > 1 || p->stride[2] > 1) &&
        !cvc_dgrad_scatters(k))
        REFUSE("strides (%d, %d, %d): this dgrad kernel's warpgroups hold 128 accumulators and have no room for "
               "the strided (row-scattering) epilogue; kernels of smaller tiles run strided problems",
               p->stride[0], p->stride[1], p->stride[2]);
    if (k->schedule == CONVCAT_HALO) {   /* one input tile per output block serves every tap */
        if (p->stride[1] != 1 || p->stride[2] != 1)
            REFUSE("strides (%d, %d): a halo kernel reads each output block's input pixels as one tile, "
                   "at unit stride only", p->stride[1], p->stride[2]);
        const int reach_h = (p->r - 1) * p->dilation[1], reach_w = (p->s - 1) * p->dilation[2];
        if (reach_h > CVC_HALO_REACH || reach_w > CVC_HALO_REACH)
            REFUSE("filter %dx%d at dilation (%d, %d) reaches %d x %d pixels past an output block: a halo "
                   "kernel's input tile reaches %d (3x3 at dilation 1)", p->r, p->s, p->dilation[1],
                   p->dilation[2], reach_h, reach_w, CVC_HALO_REACH);
    }
    if (k->op != CONVCAT_FPROP && k->op != CONVCAT_DGRAD && k->op != CONVCAT_WGRAD)
        REFUSE("no %s kernels in this runtime", convcat_op_name(k->op) ? convcat_op_name(k->op) : "such");
    return check_gemm(e, p, &g, why, n);
}

convcat_status convcat_check(const convcat_catalog *cat, size_t index, const convcat_problem *p,
                             char *why, size_t why_size)
{
    if (!cat || index >= cat->count || !p)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_check: no entry %zu or NULL problem", index);
    char buf[192];
    const convcat_status st = cvc_check_entry(&cat->entries[index], p, buf, sizeof buf);
    if (st != CONVCAT_OK) {
        cvc_say(why, why_size, "%s", buf);
        return cvc_fail(st, "%s: %s", cat->entries[index].key, buf);
    }
    cvc_say(why, why_size, "ok");
    return CONVCAT_OK;
}
