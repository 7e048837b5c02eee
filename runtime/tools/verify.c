/* verify.c: fresh random inputs, a poisoned output, one kernel run, the reference, a norm. */
#include <stdlib.h>
#include <string.h>

#include "../src/driver.h"
#include "../src/internal.h"
#include "reference.h"
#include "verify.h"

extern const unsigned char cvc_reference_fatbin[];
extern const size_t cvc_reference_fatbin_size;

typedef struct reference {
    CUmodule module;
    CUfunction fill, fprop, compare;
} reference;

static convcat_status load_reference(const cvc_driver *drv, reference *ref)
{
    static reference cached;   /* the tools use one context per process */
    if (cached.module) {
        *ref = cached;
        return CONVCAT_OK;
    }
    convcat_status st = cvc_cuda_check(drv->cuModuleLoadData(&cached.module, cvc_reference_fatbin),
                                       "loading the reference kernels");
    if (st == CONVCAT_OK)
        st = cvc_cuda_check(drv->cuModuleGetFunction(&cached.fill, cached.module, "cvc_ref_fill"), "cvc_ref_fill");
    if (st == CONVCAT_OK)
        st = cvc_cuda_check(drv->cuModuleGetFunction(&cached.fprop, cached.module, "cvc_ref_fprop"), "cvc_ref_fprop");
    if (st == CONVCAT_OK)
        st = cvc_cuda_check(drv->cuModuleGetFunction(&cached.compare, cached.module, "cvc_ref_compare"),
                            "cvc_ref_compare");
    if (st != CONVCAT_OK) {
        memset(&cached, 0, sizeof cached);
        return st;
    }
    *ref = cached;
    return CONVCAT_OK;
}

convcat_status cvc_verify_device(int ordinal, char *name, size_t name_size)
{
    const cvc_driver *drv;
    convcat_status st = cvc_driver_get(&drv);
    if (st != CONVCAT_OK)
        return st;
    int count = 0;
    drv->cuDeviceGetCount(&count);
    if (ordinal < 0 || ordinal >= count)
        return cvc_fail(CONVCAT_ERR_NO_DEVICE, "no CUDA device %d (%d present)", ordinal, count);
    CUdevice dev;
    CUcontext ctx;
    if ((st = cvc_cuda_check(drv->cuDeviceGet(&dev, ordinal), "cuDeviceGet")) != CONVCAT_OK ||
        (st = cvc_cuda_check(drv->cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain")) != CONVCAT_OK ||
        (st = cvc_cuda_check(drv->cuCtxSetCurrent(ctx), "cuCtxSetCurrent")) != CONVCAT_OK)
        return st;
    if (name)
        drv->cuDeviceGetName(name, (int)name_size, dev);
    return CONVCAT_OK;
}

static unsigned grid_for(long long n)
{
    long long g = (n + 255) / 256;
    return (unsigned)(g < 1 ? 1 : g > 8192 ? 8192 : g);
}

static convcat_status fill(const cvc_driver *drv, const reference *ref, CUdeviceptr p, long long n,
                           convcat_dtype t, unsigned seed)
{
    int type = (int)t;
    float lo = -1.0f, hi = 1.0f;
    void *args[] = {&p, &n, &type, &seed, &lo, &hi};
    return cvc_cuda_check(drv->cuLaunchKernel(ref->fill, grid_for(n), 1, 1, 256, 1, 1, 0, NULL, args, NULL),
                          "cvc_ref_fill");
}

typedef struct buffers {
    CUdeviceptr x, w, y, c, bias, ref, sums;
    long long nx, nw, ny;
} buffers;

static void free_buffers(const cvc_driver *drv, buffers *b)
{
    CUdeviceptr *all[] = {&b->x, &b->w, &b->y, &b->c, &b->bias, &b->ref, &b->sums};
    for (size_t i = 0; i < CVC_ARRAY_LEN(all); ++i)
        if (*all[i])
            drv->cuMemFree(*all[i]);
    memset(b, 0, sizeof *b);
}

static convcat_status alloc(const cvc_driver *drv, CUdeviceptr *p, size_t bytes, const char *what)
{
    return cvc_cuda_check(drv->cuMemAlloc(p, bytes ? bytes : 16), what);
}

/* Allocate x, w, y (and c, bias, ref) for p and fill x, w, c, bias with fresh random data. */
static convcat_status make_buffers(const cvc_driver *drv, const reference *ref, const convcat_problem *p,
                                   unsigned seed, int with_c, int with_bias, int with_ref, buffers *b)
{
    cvc_gemm g;
    char why[192];
    memset(b, 0, sizeof *b);
    if (cvc_problem_gemm(p, &g, why, sizeof why) != CONVCAT_OK)
        return cvc_fail(CONVCAT_ERR_UNSUPPORTED, "%s", why);
    b->nx = (long long)p->n * p->d * p->h * p->w * p->c;
    b->nw = (long long)p->k * p->t * p->r * p->s * (p->c / p->groups);
    b->ny = g.m * g.n;
    const int ob = cvc_dtype_bytes(p->out_type);
    convcat_status st = alloc(drv, &b->x, (size_t)b->nx * cvc_dtype_bytes(p->a_type), "allocating x");
    if (st == CONVCAT_OK)
        st = alloc(drv, &b->w, (size_t)b->nw * cvc_dtype_bytes(p->b_type), "allocating w");
    if (st == CONVCAT_OK)
        st = alloc(drv, &b->y, (size_t)b->ny * ob, "allocating y");
    if (st == CONVCAT_OK && with_c)
        st = alloc(drv, &b->c, (size_t)b->ny * ob, "allocating c");
    if (st == CONVCAT_OK && with_bias)
        st = alloc(drv, &b->bias, (size_t)g.n * ob, "allocating the bias");
    if (st == CONVCAT_OK && with_ref)
        st = alloc(drv, &b->ref, (size_t)b->ny * sizeof(float), "allocating the reference");
    if (st == CONVCAT_OK && with_ref)
        st = alloc(drv, &b->sums, 4 * sizeof(double), "allocating sums");
    if (st == CONVCAT_OK)
        st = fill(drv, ref, b->x, b->nx, p->a_type, seed);
    if (st == CONVCAT_OK)
        st = fill(drv, ref, b->w, b->nw, p->b_type, seed + 1);
    if (st == CONVCAT_OK && with_c)
        st = fill(drv, ref, b->c, b->ny, p->out_type, seed + 2);
    if (st == CONVCAT_OK && with_bias)
        st = fill(drv, ref, b->bias, g.n, p->out_type, seed + 3);
    /* Poison: all-ones bytes are NaN in f16, bf16 and f32. */
    if (st == CONVCAT_OK)
        st = cvc_cuda_check(drv->cuMemsetD32(b->y, 0xFFFFFFFFu, (size_t)b->ny * ob / 4), "poisoning y");
    if (st != CONVCAT_OK)
        free_buffers(drv, b);
    return st;
}

/* Bounds per output type.  Norm-wise: the output's rounding dominates (bf16
 * keeps 8 bits, f16 11); f32 output differs from the reference only in
 * summation order.  Element-wise, relative to |ref| + rms(ref): a few units
 * of the output's last place, so that one wrong element among millions is
 * still caught. */
static void tolerances(convcat_dtype out, double *norm, double *elem)
{
    switch (out) {
    case CONVCAT_BF16: *norm = 1e-2, *elem = 1.0 / 64; break;
    case CONVCAT_F16: *norm = 3e-3, *elem = 1.0 / 256; break;
    default: *norm = 1e-4, *elem = 1e-3;
    }
}

/* Damage one element of y (n elements of type t) at a seeded position. */
static convcat_status sabotage_output(const cvc_driver *drv, CUdeviceptr y, long long n, convcat_dtype t,
                                      unsigned seed, cvc_sabotage how)
{
    const int bytes = cvc_dtype_bytes(t);
    const long long at = (long long)(((unsigned long long)seed * 2654435761u) % (unsigned long long)n);
    /* 100.0 in f16 (0x5640), bf16 (0x42C8), f32 (0x42C80000); all-ones bytes are NaN. */
    const uint32_t hundred = t == CONVCAT_F16 ? 0x5640u : t == CONVCAT_BF16 ? 0x42C8u : 0x42C80000u;
    const uint32_t value = how == CVC_SABOTAGE_UNWRITTEN ? 0xFFFFFFFFu : hundred;
    return cvc_cuda_check(drv->cuMemcpyHtoD(y + (CUdeviceptr)(at * bytes), &value, (size_t)bytes),
                          "sabotaging y");
}

static convcat_status compare(const cvc_driver *drv, const reference *ref, const buffers *b,
                              const convcat_problem *p, const cvc_epilogue *epi, float rms, float rel,
                              double sums[4])
{
    memset(sums, 0, 4 * sizeof *sums);
    convcat_status st = cvc_cuda_check(drv->cuMemcpyHtoD(b->sums, sums, 4 * sizeof *sums), "clearing sums");
    if (st == CONVCAT_OK) {
        int yt = (int)p->out_type, k = p->k, act = (int)epi->activation;
        long long n = b->ny;
        float alpha = epi->alpha, beta = epi->beta;
        CUdeviceptr y = b->y, r = b->ref, c = b->c, bias = b->bias, out = b->sums;
        void *args[] = {&y, &yt, &r, &c, &bias, &k, &act, &alpha, &beta, &n, &rms, &rel, &out};
        st = cvc_cuda_check(drv->cuLaunchKernel(ref->compare, grid_for(n), 1, 1, 256, 1, 1, 0, NULL, args, NULL),
                            "cvc_ref_compare");
    }
    if (st == CONVCAT_OK)
        st = cvc_cuda_check(drv->cuMemcpyDtoH(sums, b->sums, 4 * sizeof *sums), "reading sums");
    return st;
}

/* The driver, the reference kernels, a plan for p (entry index or CONVCAT_AUTO,
 * the chosen one in *chosen) and its buffers.  On failure nothing is left to free. */
static convcat_status prepare(const convcat_catalog *cat, const convcat_problem *p, size_t index, unsigned seed,
                              int with_c, int with_bias, int with_ref, const cvc_driver **drv, reference *ref,
                              convcat_plan **plan, buffers *b, size_t *chosen)
{
    convcat_status st = cvc_driver_get(drv);
    if (st == CONVCAT_OK)
        st = load_reference(*drv, ref);
    if (st == CONVCAT_OK)
        st = convcat_plan_create(cat, p, index, plan);
    if (st != CONVCAT_OK)
        return st;
    convcat_plan_info info;
    convcat_plan_info_get(*plan, &info);
    *chosen = info.index;
    if ((st = make_buffers(*drv, ref, p, seed, with_c, with_bias, with_ref, b)) != CONVCAT_OK) {
        convcat_plan_destroy(*plan);
        *plan = NULL;
    }
    return st;
}

convcat_status cvc_verify_run(const convcat_catalog *cat, const convcat_problem *p, size_t index,
                              unsigned seed, const cvc_epilogue *epi, cvc_sabotage sabotage, cvc_verify *out)
{
    const cvc_driver *drv;
    reference ref;
    buffers b;
    convcat_plan *plan = NULL;
    memset(out, 0, sizeof *out);
    convcat_status st = prepare(cat, p, index, seed, epi->beta != 0.0f, epi->bias, 1, &drv, &ref, &plan, &b,
                                &out->index);
    if (st != CONVCAT_OK)
        return st;
    convcat_tensors t = {.x = (const void *)b.x, .w = (const void *)b.w, .y = (void *)b.y,
                         .c = (const void *)b.c, .alpha = epi->alpha, .beta = epi->beta,
                         .bias = (const void *)b.bias, .activation = epi->activation};
    st = convcat_plan_run(plan, &t, NULL);
    if (st == CONVCAT_OK)
        st = cvc_cuda_check(drv->cuCtxSynchronize(), "the convcat kernel");
    if (st == CONVCAT_OK && sabotage != CVC_SABOTAGE_NONE)
        st = sabotage_output(drv, b.y, b.ny, p->out_type, seed, sabotage);
    int z, pp, q;
    convcat_problem_output(p, &z, &pp, &q);
    cvc_ref_conv cv = {p->n, p->d, p->h, p->w, p->c, p->k, p->t, p->r, p->s, z, pp, q,
                       p->pad_lo[0], p->pad_lo[1], p->pad_lo[2], p->stride[0], p->stride[1], p->stride[2],
                       p->dilation[0], p->dilation[1], p->dilation[2], (int)p->a_type, (int)p->b_type};
    if (st == CONVCAT_OK) {
        void *args[] = {&b.x, &b.w, &b.ref, &cv};
        st = cvc_cuda_check(drv->cuLaunchKernel(ref.fprop, grid_for(b.ny), 1, 1, 256, 1, 1, 0, NULL, args, NULL),
                            "cvc_ref_fprop");
    }
    /* Two passes: the norms first, then the outliers against the reference's rms. */
    double sums[4];
    tolerances(p->out_type, &out->tolerance, &out->elem_tolerance);
    if (st == CONVCAT_OK)
        st = compare(drv, &ref, &b, p, epi, 0.0f, 0.0f, sums);
    const double rms = __builtin_sqrt(sums[1] / (double)b.ny);
    if (st == CONVCAT_OK)
        st = compare(drv, &ref, &b, p, epi, (float)rms, (float)out->elem_tolerance, sums);
    if (st == CONVCAT_OK) {
        out->rel_err = sums[1] > 0 ? __builtin_sqrt(sums[0] / sums[1]) : __builtin_sqrt(sums[0]);
        out->nonfinite = (long long)sums[2];
        out->outliers = (long long)sums[3];
        out->passed = out->nonfinite == 0 && out->outliers == 0 && out->rel_err <= out->tolerance;
    }
    free_buffers(drv, &b);
    convcat_plan_destroy(plan);
    return st;
}

convcat_status cvc_verify_autotune(const convcat_catalog *cat, const convcat_problem *p, convcat_tune_cache *cache,
                                   int iters, size_t *index_out, double *ms_out)
{
    const cvc_driver *drv;
    reference ref;
    buffers b;
    convcat_status st = cvc_driver_get(&drv);
    if (st == CONVCAT_OK)
        st = load_reference(drv, &ref);
    if (st == CONVCAT_OK)
        st = make_buffers(drv, &ref, p, 4321, 0, 0, 0, &b);
    if (st != CONVCAT_OK)
        return st;
    convcat_tensors t = {.x = (const void *)b.x, .w = (const void *)b.w, .y = (void *)b.y, .alpha = 1.0f};
    st = convcat_autotune(cat, p, &t, NULL, iters, cache, index_out, ms_out);
    free_buffers(drv, &b);
    return st;
}

convcat_status cvc_time_run(const convcat_catalog *cat, const convcat_problem *p, size_t index, int iters,
                            double *ms_out, size_t *index_out)
{
    const cvc_driver *drv;
    reference ref;
    buffers b;
    convcat_plan *plan = NULL;
    convcat_status st = prepare(cat, p, index, 1234, 0, 0, 0, &drv, &ref, &plan, &b, index_out);
    if (st != CONVCAT_OK)
        return st;
    convcat_tensors t = {.x = (const void *)b.x, .w = (const void *)b.w, .y = (void *)b.y, .alpha = 1.0f};
    st = cvc_time_plan(plan, &t, NULL, iters < 1 ? 1 : iters, ms_out);
    free_buffers(drv, &b);
    convcat_plan_destroy(plan);
    return st;
}
