/* problem.c: convolution problems, resolved once into what every later step reads.
 *
 * cvc_view_make checks a problem's own validity (extents, padding, strides,
 * groups dividing C and K, 64-bit products) and derives its output extents,
 * pixel and tap counts, per-group channels, element sizes, stride phases and
 * GEMM view; convcat_check, convcat_query and convcat_plan_create call it once
 * and pass the view down.
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

/* The 2D problem a 3D one is over the same memory (cvc_folded_view), or false: D into the batch
 * where the filter is trivial along D, else H and W into one axis where it is trivial along both. */
static bool fold_problem(const convcat_problem *p, convcat_problem *f)
{
    const bool flat_d = p->t == 1 && !p->pad_lo[0] && !p->pad_hi[0] && p->stride[0] == 1;
    const bool flat_hw = p->r == 1 && p->s == 1 && !p->pad_lo[1] && !p->pad_hi[1] && !p->pad_lo[2] &&
                         !p->pad_hi[2] && p->stride[1] == 1 && p->stride[2] == 1;
    if (p->dims != 3 || (!flat_d && !flat_hw))
        return false;
    *f = *p;
    f->dims = 2;
    f->d = f->t = 1;
    f->pad_lo[0] = f->pad_hi[0] = 0;
    f->stride[0] = f->dilation[0] = 1;
    if (flat_d) {   /* N x D images of H x W */
        if ((int64_t)p->n * p->d > INT32_MAX)
            return false;
        f->n = p->n * p->d;
        return true;
    }
    if ((int64_t)p->h * p->w > INT32_MAX)   /* D x (H*W) images, a T x 1 filter */
        return false;
    f->h = p->d, f->w = p->h * p->w;
    f->r = p->t, f->s = 1;
    f->pad_lo[1] = p->pad_lo[0], f->pad_hi[1] = p->pad_hi[0];
    f->stride[1] = p->stride[0], f->dilation[1] = p->dilation[0];
    f->pad_lo[2] = f->pad_hi[2] = 0;
    f->stride[2] = f->dilation[2] = 1;
    return true;
}

/* Phases per axis of a dgrad problem: residues modulo the stride that have dx pixels. */
static int axis_phases(int in, int stride) { return stride < in ? stride : in; }

convcat_status cvc_view_make(const convcat_problem *p, cvc_view *v, char *why, size_t n)
{
    if (!p) {
        cvc_say(why, n, "problem is NULL");
        return CONVCAT_ERR_INVALID_ARGUMENT;
    }
    memset(v, 0, sizeof *v);
    v->p = *p;
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
    if (p->c % p->groups || p->k % p->groups) {
        cvc_say(why, n, "groups = %d must divide C = %d and K = %d", p->groups, p->c, p->k);
        return CONVCAT_ERR_UNSUPPORTED;
    }
    const int in[3] = {p->d, p->h, p->w}, filt[3] = {p->t, p->r, p->s};
    for (int a = 0; a < 3; ++a) {
        v->in[a] = in[a];
        v->filt[a] = filt[a];
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
        v->reach[a] = (int64_t)(filt[a] - 1) * p->dilation[a];
        const int64_t out = out_extent(in[a], filt[a], p->pad_lo[a], p->pad_hi[a], p->stride[a], p->dilation[a]);
        if (out < 1) {
            cvc_say(why, n, "the filter (%d taps, dilation %d) does not fit the padded input along %s (%d + %d + %d)",
                    filt[a], p->dilation[a], axis_name[a], in[a], p->pad_lo[a], p->pad_hi[a]);
            return CONVCAT_ERR_UNSUPPORTED;
        }
        /* Padding can make an output longer than its input: it must still be an int. */
        if (out > INT32_MAX) {
            cvc_say(why, n, "the output extent along %s is %lld: more than 2^31 - 1", axis_name[a], (long long)out);
            return CONVCAT_ERR_UNSUPPORTED;
        }
        v->out[a] = (int)out;
        v->strided |= p->stride[a] > 1;
    }
    /* Products of ints: check, do not wrap (a wrapped extent would slip past the 32-bit rules). */
    int64_t pix, inpix, taps, kdense;
    if (__builtin_mul_overflow((int64_t)p->n, (int64_t)v->out[0], &pix) || __builtin_mul_overflow(pix, (int64_t)v->out[1], &pix) ||
        __builtin_mul_overflow(pix, (int64_t)v->out[2], &pix) ||
        __builtin_mul_overflow((int64_t)p->n, (int64_t)p->d, &inpix) || __builtin_mul_overflow(inpix, (int64_t)p->h, &inpix) ||
        __builtin_mul_overflow(inpix, (int64_t)p->w, &inpix) ||
        __builtin_mul_overflow((int64_t)p->t, (int64_t)p->r, &taps) || __builtin_mul_overflow(taps, (int64_t)p->s, &taps) ||
        __builtin_mul_overflow(taps, (int64_t)(p->c > p->k ? p->c : p->k), &kdense)) {
        cvc_say(why, n, "the problem's pixel or filter counts overflow 64 bits");
        return CONVCAT_ERR_UNSUPPORTED;
    }
    v->pixels = pix;
    v->in_pixels = inpix;
    v->taps = taps;
    v->cg = p->c / p->groups;
    v->kg = p->k / p->groups;
    v->a_bytes = cvc_dtype_bytes(p->a_type);
    v->b_bytes = cvc_dtype_bytes(p->b_type);
    v->out_bytes = cvc_dtype_bytes(p->out_type);
    v->phases = 1;
    v->axis_phases[0] = v->axis_phases[1] = v->axis_phases[2] = 1;
    if (p->op == CONVCAT_DGRAD) {   /* a product of three ints: in 64 bits, held at INT32_MAX past it */
        int64_t phases = 1;
        v->axis_phases[0] = axis_phases(p->w, p->stride[2]);
        v->axis_phases[1] = axis_phases(p->h, p->stride[1]);
        v->axis_phases[2] = axis_phases(p->d, p->stride[0]);
        for (int a = 0; a < 3; ++a) {
            phases *= v->axis_phases[a];
            if (phases > INT32_MAX)
                phases = INT32_MAX;
        }
        v->phases = (int)phases;
    }
    v->patch = v->strided;
    for (int a = 0; a < 3; ++a)
        v->patch &= p->stride[a] == filt[a] && p->pad_lo[a] == 0 && p->pad_hi[a] == 0 &&
                    (p->dilation[a] == 1 || filt[a] == 1) && (int64_t)v->out[a] * p->stride[a] == in[a];
    switch (p->op) {
    case CONVCAT_DGRAD:   /* dx pixels x input channels, reduced over dy channels and taps */
        v->gemm = (cvc_gemm){.m = inpix, .n = p->c, .k = taps * p->k};
        break;
    case CONVCAT_WGRAD:   /* filters x (taps, channels), reduced over output pixels */
        v->gemm = (cvc_gemm){.m = p->k, .n = taps * v->cg, .k = pix};
        break;
    default:
        v->gemm = (cvc_gemm){.m = pix, .n = p->k, .k = taps * v->cg};
    }
    convcat_problem f;
    v->folds = fold_problem(p, &f);
    return CONVCAT_OK;
}

convcat_status convcat_problem_folded(const convcat_problem *p, convcat_problem *folded_out)
{
    if (!p || !folded_out)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_problem_folded: NULL argument");
    cvc_view v;
    char why[192];
    const convcat_status st = cvc_view_make(p, &v, why, sizeof why);
    if (st != CONVCAT_OK)
        return cvc_fail(st, "%s", why);
    if (!fold_problem(p, folded_out))
        return cvc_fail(CONVCAT_ERR_UNSUPPORTED, "the problem is not a 3D one whose filter is 1 along D, or 1 x 1 along "
                        "H and W, without padding or stride there");
    return CONVCAT_OK;
}

convcat_status cvc_folded_view(const cvc_view *v, cvc_view *out)
{
    convcat_problem f;
    if (!fold_problem(&v->p, &f))
        return CONVCAT_ERR_UNSUPPORTED;
    return cvc_view_make(&f, out, NULL, 0);
}

convcat_status cvc_turned_view(const cvc_view *v, cvc_view *out, char *why, size_t n)
{
    const convcat_problem *p = &v->p;
    convcat_problem f = *p;
    f.op = CONVCAT_FPROP;
    f.c = p->k, f.k = p->c;
    f.d = v->out[0], f.h = v->out[1], f.w = v->out[2];
    for (int a = 0; a < 3; ++a) {
        if (p->stride[a] != 1) {
            cvc_say(why, n, "stride %d along %s: this kernel runs unit-stride dgrad only (as the fprop of dy)",
                    p->stride[a], axis_name[a]);
            return CONVCAT_ERR_UNSUPPORTED;
        }
        if (p->pad_lo[a] > v->reach[a] || p->pad_hi[a] > v->reach[a]) {
            cvc_say(why, n, "padding (%d, %d) along %s passes the filter's reach %lld: the fprop of dy would pad "
                    "negatively", p->pad_lo[a], p->pad_hi[a], axis_name[a], (long long)v->reach[a]);
            return CONVCAT_ERR_UNSUPPORTED;
        }
        f.pad_lo[a] = (int)(v->reach[a] - p->pad_lo[a]);
        f.pad_hi[a] = (int)(v->reach[a] - p->pad_hi[a]);
    }
    return cvc_view_make(&f, out, why, n);
}

convcat_status cvc_widened_view(const cvc_view *v, int widen, cvc_view *out)
{
    if (widen < 1 || v->p.groups % widen)
        return CONVCAT_ERR_UNSUPPORTED;
    convcat_problem f = v->p;
    f.groups /= widen;
    return cvc_view_make(&f, out, NULL, 0);
}

convcat_status cvc_run_view(const cvc_entry *e, const cvc_view *v, cvc_run *run, char *why, size_t n)
{
    run->v = *v;
    run->turned = false;
    run->widen = 1;
    if (cvc_folds(e, v) && cvc_folded_view(v, &run->v) != CONVCAT_OK) {
        cvc_say(why, n, "kernel is 2D, problem is 3D");
        return CONVCAT_ERR_UNSUPPORTED;
    }
    if (cvc_turns(e, &run->v)) {
        cvc_view turned;
        if (cvc_turned_view(&run->v, &turned, why, n) != CONVCAT_OK)
            return CONVCAT_ERR_UNSUPPORTED;
        run->v = turned;
        run->turned = true;
    }
    run->widen = cvc_widening(e, &run->v);
    if (run->widen > 1 && cvc_widened_view(&run->v, run->widen, &run->v) != CONVCAT_OK) {
        cvc_say(why, n, "groups = %d: %d of them as one do not divide them", run->v.p.groups, run->widen);
        return CONVCAT_ERR_UNSUPPORTED;
    }
    return CONVCAT_OK;
}

convcat_status convcat_problem_output(const convcat_problem *p, int *z, int *pp, int *q)
{
    cvc_view v;
    char why[192];
    const convcat_status st = cvc_view_make(p, &v, why, sizeof why);
    if (st != CONVCAT_OK)
        return cvc_fail(st, "%s", why);
    if (z)
        *z = v.out[0];
    if (pp)
        *pp = v.out[1];
    if (q)
        *q = v.out[2];
    return CONVCAT_OK;
}

double convcat_problem_flops(const convcat_problem *p)
{
    cvc_view v;
    if (cvc_view_make(p, &v, NULL, 0) != CONVCAT_OK)
        return 0.0;
    /* The forward convolution's multiply-adds, for every op (dgrad's GEMM also
     * multiplies the zeros past the padding; those are not counted). */
    return 2.0 * (double)v.pixels * (double)p->k * (double)v.taps * (double)v.cg;
}
