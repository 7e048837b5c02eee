/* verify.c: fresh random inputs, a poisoned output, one kernel run, the reference, the bounds.
 *
 * Every op, in forward terms (convcat.h): fprop reads x and w and writes y;
 * dgrad reads y (dy) and w and writes x (dx); wgrad reads y (dy) and x and
 * writes w (dw).  The op's two inputs get fresh seeded random data, its
 * output is poisoned with NaN, c (beta != 0) and bias have the output's
 * shape and type, and the plan's workspace (convcat_plan_info's
 * workspace_bytes) is allocated and passed.  The reference and the bounds it
 * is checked within are reference.cu's and reference.h's. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../src/driver.h"
#include "../src/internal.h"
#include "reference.h"
#include "verify.h"

extern const unsigned char cvc_reference_fatbin[];
extern const size_t cvc_reference_fatbin_size;

/* The reference kernels: a CUlibrary, which the driver loads into each context on its first
 * launch there, so one load serves every device and thread (the GPU tests run several). */
typedef struct reference {
    CUkernel fill, fprop, dgrad, wgrad, compare;   /* cuLaunchKernel takes a CUkernel as its function */
} reference;

static convcat_status load_reference(const cvc_driver *drv, reference *ref)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static CUlibrary library;
    static reference cached;
    static const char *const names[] = {"cvc_ref_fill", "cvc_ref_fprop", "cvc_ref_dgrad", "cvc_ref_wgrad",
                                        "cvc_ref_compare"};
    CUkernel *const slots[] = {&cached.fill, &cached.fprop, &cached.dgrad, &cached.wgrad, &cached.compare};
    convcat_status st = CONVCAT_OK;
    pthread_mutex_lock(&lock);
    if (!library) {
        CUlibrary lib = NULL;
        st = cvc_cuda_check(drv->cuLibraryLoadData(&lib, cvc_reference_fatbin, NULL, NULL, 0, NULL, NULL, 0),
                            "loading the reference kernels");
        for (size_t i = 0; st == CONVCAT_OK && i < CVC_ARRAY_LEN(names); ++i)
            st = cvc_cuda_check(drv->cuLibraryGetKernel(slots[i], lib, names[i]), names[i]);
        if (st == CONVCAT_OK)
            library = lib;
        else if (lib)
            drv->cuLibraryUnload(lib);
    }
    if (st == CONVCAT_OK)
        *ref = cached;
    pthread_mutex_unlock(&lock);
    return st;
}

convcat_status cvc_verify_device_count(int *count)
{
    const cvc_driver *drv;
    *count = 0;
    convcat_status st = cvc_driver_get(&drv);
    return st == CONVCAT_OK ? cvc_cuda_check(drv->cuDeviceGetCount(count), "cuDeviceGetCount") : st;
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
    return cvc_cuda_check(drv->cuLaunchKernel((CUfunction)ref->fill, grid_for(n), 1, 1, 256, 1, 1, 0, NULL, args, NULL),
                          "cvc_ref_fill");
}

/* The type of each tensor as stored, per op: the output is out_type; of the
 * inputs, a_type is the GEMM A operand (x for fprop, dy for dgrad and wgrad)
 * and b_type the B operand (w for fprop and dgrad, x for wgrad). */
static void tensor_types(const convcat_problem *p, convcat_dtype *x, convcat_dtype *w, convcat_dtype *y)
{
    switch (p->op) {
    case CONVCAT_DGRAD: *x = p->out_type, *w = p->b_type, *y = p->a_type; break;
    case CONVCAT_WGRAD: *x = p->b_type, *w = p->out_type, *y = p->a_type; break;
    default: *x = p->a_type, *w = p->b_type, *y = p->out_type;
    }
}

typedef struct buffers {
    CUdeviceptr x, w, y, c, bias, ref, sums, ws;
    long long nx, nw, ny;
    size_t ws_bytes;
    convcat_dtype tx, tw, ty;
    /* The op's output: one of x, w, y (and its count, type, innermost extent). */
    CUdeviceptr *out;
    long long nout;
    convcat_dtype tout;
    int out_channels;
} buffers;

static void free_buffers(const cvc_driver *drv, buffers *b)
{
    CUdeviceptr *all[] = {&b->x, &b->w, &b->y, &b->c, &b->bias, &b->ref, &b->sums, &b->ws};
    for (size_t i = 0; i < CVC_ARRAY_LEN(all); ++i)
        if (*all[i])
            drv->cuMemFree(*all[i]);
    memset(b, 0, sizeof *b);
}

static convcat_status alloc(const cvc_driver *drv, CUdeviceptr *p, size_t bytes, const char *what)
{
    /* Whole 16-byte rows, so that whole 4-byte words can be poisoned. */
    return cvc_cuda_check(drv->cuMemAlloc(p, bytes ? (bytes + 15) / 16 * 16 : 16), what);
}

/* Fresh random data (from `seed`) in the op's two inputs, c and bias; the output poisoned. */
static convcat_status fill_buffers(const cvc_driver *drv, const reference *ref, const convcat_problem *p,
                                   unsigned seed, buffers *b)
{
    /* The two inputs: seeds 0 and 1 for the op's first and second operand. */
    convcat_status st = CONVCAT_OK;
    if (p->op != CONVCAT_DGRAD)
        st = fill(drv, ref, b->x, b->nx, b->tx, p->op == CONVCAT_FPROP ? seed : seed + 1);
    if (st == CONVCAT_OK && p->op != CONVCAT_WGRAD)
        st = fill(drv, ref, b->w, b->nw, b->tw, seed + 1);
    if (st == CONVCAT_OK && p->op != CONVCAT_FPROP)
        st = fill(drv, ref, b->y, b->ny, b->ty, seed);
    if (st == CONVCAT_OK && b->c)
        st = fill(drv, ref, b->c, b->nout, b->tout, seed + 2);
    if (st == CONVCAT_OK && b->bias)
        st = fill(drv, ref, b->bias, b->out_channels, b->tout, seed + 3);
    /* Poison: all-ones bytes are NaN in f16, bf16 and f32. */
    if (st == CONVCAT_OK)
        st = cvc_cuda_check(drv->cuMemsetD32(*b->out, 0xFFFFFFFFu,
                                             ((size_t)b->nout * cvc_dtype_bytes(b->tout) + 3) / 4),
                            "poisoning the output");
    return st;
}

/* Allocate x, w, y (and c, bias, ref, a workspace of ws_bytes) for p, nothing filled; on failure
 * nothing is left allocated. */
static convcat_status alloc_buffers(const cvc_driver *drv, const convcat_problem *p, int with_c, int with_bias,
                                    int with_ref, size_t ws_bytes, buffers *b)
{
    int z, pp, q;
    memset(b, 0, sizeof *b);
    if (p->op != CONVCAT_FPROP && p->op != CONVCAT_DGRAD && p->op != CONVCAT_WGRAD)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "verify: unknown op %d", (int)p->op);
    if (p->mode != CONVCAT_CROSS_CORRELATION)
        return cvc_fail(CONVCAT_ERR_UNSUPPORTED, "verify: the reference computes cross-correlation");
    if (p->groups < 1 || p->c % p->groups || p->k % p->groups)
        return cvc_fail(CONVCAT_ERR_UNSUPPORTED, "verify: groups = %d must divide C = %d and K = %d", p->groups,
                        p->c, p->k);
    convcat_status st = convcat_problem_output(p, &z, &pp, &q);
    if (st != CONVCAT_OK)
        return st;
    tensor_types(p, &b->tx, &b->tw, &b->ty);
    b->nx = (long long)p->n * p->d * p->h * p->w * p->c;
    b->nw = (long long)p->k * p->t * p->r * p->s * (p->c / p->groups);
    b->ny = (long long)p->n * z * pp * q * p->k;
    b->ws_bytes = ws_bytes;
    switch (p->op) {
    case CONVCAT_DGRAD: b->out = &b->x, b->nout = b->nx, b->tout = b->tx, b->out_channels = p->c; break;
    case CONVCAT_WGRAD: b->out = &b->w, b->nout = b->nw, b->tout = b->tw, b->out_channels = p->c / p->groups; break;
    default: b->out = &b->y, b->nout = b->ny, b->tout = b->ty, b->out_channels = p->k;
    }
    const int ob = cvc_dtype_bytes(b->tout);
    st = alloc(drv, &b->x, (size_t)b->nx * cvc_dtype_bytes(b->tx), "allocating x");
    if (st == CONVCAT_OK)
        st = alloc(drv, &b->w, (size_t)b->nw * cvc_dtype_bytes(b->tw), "allocating w");
    if (st == CONVCAT_OK)
        st = alloc(drv, &b->y, (size_t)b->ny * cvc_dtype_bytes(b->ty), "allocating y");
    if (st == CONVCAT_OK && with_c)
        st = alloc(drv, &b->c, (size_t)b->nout * ob, "allocating c");
    if (st == CONVCAT_OK && with_bias)
        st = alloc(drv, &b->bias, (size_t)b->out_channels * ob, "allocating the bias");
    if (st == CONVCAT_OK && with_ref)   /* ref, mag and sq (reference.cu), one after the other */
        st = alloc(drv, &b->ref, 3 * (size_t)b->nout * sizeof(float), "allocating the reference");
    if (st == CONVCAT_OK && with_ref)
        st = alloc(drv, &b->sums, sizeof(cvc_ref_sums), "allocating sums");
    if (st == CONVCAT_OK && ws_bytes)
        st = alloc(drv, &b->ws, ws_bytes, "allocating the workspace");
    if (st != CONVCAT_OK)
        free_buffers(drv, b);
    return st;
}

/* alloc_buffers, then the op's two inputs, c and bias filled with fresh random data and the
 * output poisoned. */
static convcat_status make_buffers(const cvc_driver *drv, const reference *ref, const convcat_problem *p,
                                   unsigned seed, int with_c, int with_bias, int with_ref, size_t ws_bytes,
                                   buffers *b)
{
    convcat_status st = alloc_buffers(drv, p, with_c, with_bias, with_ref, ws_bytes, b);
    if (st == CONVCAT_OK && (st = fill_buffers(drv, ref, p, seed, b)) != CONVCAT_OK)
        free_buffers(drv, b);
    return st;
}

/* The tensors of a run on b. */
static convcat_tensors tensors_for(const buffers *b, float alpha, float beta, convcat_activation act)
{
    return (convcat_tensors){.x = (const void *)b->x, .w = (const void *)b->w, .y = (void *)b->y,
                             .c = (const void *)b->c, .alpha = alpha, .beta = beta, .bias = (const void *)b->bias,
                             .activation = act, .workspace = (void *)b->ws, .workspace_bytes = b->ws_bytes};
}

/* K: the terms of p's longest sum (the op's GEMM K), which the accumulation bounds grow with. */
static double terms(const convcat_problem *p)
{
    int z, pp, q;
    if (convcat_problem_output(p, &z, &pp, &q) != CONVCAT_OK)
        return 1.0;
    const double taps = (double)p->t * p->r * p->s;
    switch (p->op) {
    case CONVCAT_DGRAD: return taps * (p->k / p->groups);
    case CONVCAT_WGRAD: return (double)p->n * z * pp * q;
    default: return taps * (p->c / p->groups);
    }
}

/* Damage one element of the output (n elements of type t) at a seeded position. */
static convcat_status sabotage_output(const cvc_driver *drv, CUdeviceptr y, long long n, convcat_dtype t,
                                      unsigned seed, cvc_sabotage how)
{
    const int bytes = cvc_dtype_bytes(t);
    const long long at = (long long)(((unsigned long long)seed * 2654435761u) % (unsigned long long)n);
    /* 100.0 in f16 (0x5640), bf16 (0x42C8), f32 (0x42C80000); all-ones bytes are NaN. */
    const uint32_t hundred = t == CONVCAT_F16 ? 0x5640u : t == CONVCAT_BF16 ? 0x42C8u : 0x42C80000u;
    const uint32_t value = how == CVC_SABOTAGE_UNWRITTEN ? 0xFFFFFFFFu : hundred;
    return cvc_cuda_check(drv->cuMemcpyHtoD(y + (CUdeviceptr)(at * bytes), &value, (size_t)bytes),
                          "sabotaging the output");
}

/* The op's output against act(alpha * ref + bias + beta * c), within `bounds`: the sums of the check. */
static convcat_status compare(const cvc_driver *drv, const reference *ref, const buffers *b,
                              const cvc_epilogue *epi, const cvc_ref_bounds *bounds, cvc_ref_sums *sums)
{
    memset(sums, 0, sizeof *sums);
    convcat_status st = cvc_cuda_check(drv->cuMemcpyHtoD(b->sums, sums, sizeof *sums), "clearing sums");
    if (st == CONVCAT_OK) {
        int yt = (int)b->tout, k = b->out_channels, act = (int)epi->activation;
        long long n = b->nout;
        float alpha = epi->alpha, beta = epi->beta;
        cvc_ref_bounds bd = *bounds;
        CUdeviceptr y = *b->out, r = b->ref, mag = r + (CUdeviceptr)(n * 4), sq = mag + (CUdeviceptr)(n * 4);
        CUdeviceptr c = b->c, bias = b->bias, out = b->sums;
        void *args[] = {&y, &yt, &r, &mag, &sq, &c, &bias, &k, &act, &alpha, &beta, &n, &bd, &out};
        st = cvc_cuda_check(drv->cuLaunchKernel((CUfunction)ref->compare, grid_for(n), 1, 1, 256, 1, 1, 0, NULL, args, NULL),
                            "cvc_ref_compare");
    }
    if (st == CONVCAT_OK)
        st = cvc_cuda_check(drv->cuMemcpyDtoH(sums, b->sums, sizeof *sums), "reading sums");
    return st;
}

/* The reference of p's op on b's inputs, into b->ref: ref, mag and sq (f32, each the output's shape). */
static convcat_status run_reference(const cvc_driver *drv, const reference *ref, const convcat_problem *p,
                                    buffers *b)
{
    int z, pp, q;
    convcat_status st = convcat_problem_output(p, &z, &pp, &q);
    if (st != CONVCAT_OK)
        return st;
    cvc_ref_conv cv = {p->n, p->d, p->h, p->w, p->c, p->k, p->t, p->r, p->s, z, pp, q,
                       p->pad_lo[0], p->pad_lo[1], p->pad_lo[2], p->stride[0], p->stride[1], p->stride[2],
                       p->dilation[0], p->dilation[1], p->dilation[2], (int)b->tx, (int)b->tw, (int)b->ty,
                       p->groups};
    CUkernel fn;
    const char *name;
    void *args[6];
    CUdeviceptr mag = b->ref + (CUdeviceptr)(b->nout * 4), sq = mag + (CUdeviceptr)(b->nout * 4);
    switch (p->op) {
    case CONVCAT_DGRAD:
        fn = ref->dgrad, name = "cvc_ref_dgrad", args[0] = &b->y, args[1] = &b->w;
        break;
    case CONVCAT_WGRAD:
        fn = ref->wgrad, name = "cvc_ref_wgrad", args[0] = &b->y, args[1] = &b->x;
        break;
    default:
        fn = ref->fprop, name = "cvc_ref_fprop", args[0] = &b->x, args[1] = &b->w;
    }
    args[2] = &b->ref;
    args[3] = &mag;
    args[4] = &sq;
    args[5] = &cv;
    return cvc_cuda_check(drv->cuLaunchKernel((CUfunction)fn, grid_for(b->nout), 1, 1, 256, 1, 1, 0, NULL, args, NULL), name);
}

/* The driver, the reference kernels, a plan for p (entry index or CONVCAT_AUTO,
 * the chosen one in *chosen) and its buffers, with the workspace the plan asks
 * for.  On failure nothing is left to free. */
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
    if ((st = convcat_plan_info_get(*plan, &info)) == CONVCAT_OK) {
        *chosen = info.index;
        st = make_buffers(*drv, ref, p, seed, with_c, with_bias, with_ref, info.workspace_bytes, b);
    }
    if (st != CONVCAT_OK) {
        convcat_plan_destroy(*plan);
        *plan = NULL;
    }
    return st;
}

_Static_assert(sizeof(cvc_ref_sums) == CVC_REF_SUMS * sizeof(double), "cvc_ref_sums is the compare kernel's array");

cvc_ref_bounds cvc_verify_bounds(const convcat_problem *p, const cvc_epilogue *epi)
{
    return cvc_ref_bounds_for((int)p->a_type, (int)p->b_type, (int)p->out_type, terms(p), (int)epi->activation,
                              epi->beta != 0.0f);
}

void cvc_verify_decide(const cvc_ref_bounds *bounds, const cvc_ref_sums *s, cvc_verify *v)
{
    const double err = sqrt(s->err2), norm = sqrt(s->ref2), bound = cvc_ref_norm_bound(bounds, s);
    v->rel_err = norm > 0 ? err / norm : err;
    v->tolerance = norm > 0 ? bound / norm : bound;
    v->nonfinite = (long long)s->nonfinite;
    v->outliers = (long long)s->outliers;
    v->worst = s->worst;
    v->passed = v->nonfinite == 0 && v->outliers == 0 && err <= bound;
}

/* The op's output of b against the reference of b's inputs and the epilogue: into v. */
static convcat_status check_output(const cvc_driver *drv, const reference *ref, const convcat_problem *p, buffers *b,
                                   const cvc_epilogue *epi, cvc_verify *v)
{
    const cvc_ref_bounds bounds = cvc_verify_bounds(p, epi);
    cvc_ref_sums sums;
    convcat_status st = run_reference(drv, ref, p, b);
    if (st == CONVCAT_OK)
        st = compare(drv, ref, b, epi, &bounds, &sums);
    if (st == CONVCAT_OK)
        cvc_verify_decide(&bounds, &sums, v);
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
    out->workspace_bytes = b.ws_bytes;
    convcat_plan_info info;
    if (convcat_plan_info_get(plan, &info) == CONVCAT_OK) {
        out->groups_per_cta = info.groups_per_cta;
        out->cluster = info.cluster;
        out->splits = info.splits;
        out->split_sums = (int)info.split_sums;
    }
    const convcat_tensors t = tensors_for(&b, epi->alpha, epi->beta, epi->activation);
    st = convcat_plan_run(plan, &t, NULL);
    if (st == CONVCAT_OK)
        st = cvc_cuda_check(drv->cuCtxSynchronize(), "the convcat kernel");
    if (st == CONVCAT_OK && sabotage != CVC_SABOTAGE_NONE)
        st = sabotage_output(drv, *b.out, b.nout, b.tout, seed, sabotage);
    if (st == CONVCAT_OK)
        st = check_output(drv, &ref, p, &b, epi, out);
    free_buffers(drv, &b);
    convcat_plan_destroy(plan);
    return st;
}

convcat_status cvc_verify_chained(const convcat_catalog *cat, const convcat_problem *p, size_t index, unsigned seed,
                                  cvc_verify *out, int *first_passed)
{
    int z, pp, q;
    memset(out, 0, sizeof *out);
    *first_passed = 0;
    convcat_status st = convcat_problem_output(p, &z, &pp, &q);
    if (st != CONVCAT_OK)
        return st;
    if (p->op != CONVCAT_FPROP || p->c != p->k || z != p->d || pp != p->h || q != p->w || p->a_type != p->out_type)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "verify: a chained run needs an fprop problem that maps x's "
                        "shape and type onto itself");
    const cvc_driver *drv;
    reference ref;
    buffers b;
    convcat_plan *plan = NULL;
    if ((st = prepare(cat, p, index, seed, 0, 0, 1, &drv, &ref, &plan, &b, &out->index)) != CONVCAT_OK)
        return st;
    out->workspace_bytes = b.ws_bytes;
    const size_t y_bytes = (size_t)b.ny * cvc_dtype_bytes(b.ty);
    CUdeviceptr y2 = 0;
    CUstream stream = NULL;
    st = alloc(drv, &y2, y_bytes, "allocating the second output");
    if (st == CONVCAT_OK)
        st = cvc_cuda_check(drv->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    if (st == CONVCAT_OK)   /* y1 is poisoned already (make_buffers) */
        st = cvc_cuda_check(drv->cuMemsetD32Async(y2, 0xFFFFFFFFu, (y_bytes + 3) / 4, stream), "poisoning y2");
    if (st == CONVCAT_OK)
        st = cvc_cuda_check(drv->cuStreamSynchronize(stream), "poisoning y2");
    convcat_tensors t = tensors_for(&b, 1.0f, 0.0f, CONVCAT_ACT_NONE);
    if (st == CONVCAT_OK)
        st = convcat_plan_run(plan, &t, stream);
    t.x = (const void *)b.y, t.y = (void *)y2;
    if (st == CONVCAT_OK)
        st = convcat_plan_run(plan, &t, stream);
    if (st == CONVCAT_OK)
        st = cvc_cuda_check(drv->cuStreamSynchronize(stream), "the chained convcat kernels");
    const cvc_epilogue plain = {.alpha = 1.0f};
    cvc_verify first;
    if (st == CONVCAT_OK)
        st = check_output(drv, &ref, p, &b, &plain, &first);
    *first_passed = st == CONVCAT_OK && first.passed;
    /* The second run's input is the first's output: the same buffers, y1 as x and y2 as y. */
    buffers b2 = b;
    b2.x = b.y, b2.y = y2, b2.out = &b2.y;
    if (st == CONVCAT_OK)
        st = check_output(drv, &ref, p, &b2, &plain, out);
    if (stream)
        drv->cuStreamDestroy(stream);
    if (y2)
        drv->cuMemFree(y2);
    free_buffers(drv, &b);
    convcat_plan_destroy(plan);
    return st;
}

/* The largest workspace of the kernels convcat_autotune may time for p: every
 * runnable one (query order) that this device can plan. */
static convcat_status autotune_workspace(const convcat_catalog *cat, const convcat_problem *p, size_t *bytes)
{
    convcat_arch arch;
    int sms;
    *bytes = 0;
    convcat_status st = convcat_device_arch(&arch, &sms);
    if (st != CONVCAT_OK)
        return st;
    const size_t n = convcat_count(cat);
    convcat_candidate *c = malloc((n ? n : 1) * sizeof *c);
    if (!c)
        return cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory sizing the autotune workspace");
    size_t rows = 0, ok = 0;
    st = convcat_query(cat, p, arch, sms, c, n, &rows, &ok);
    for (size_t i = 0; st == CONVCAT_OK && i < ok; ++i) {
        convcat_plan *plan;
        const convcat_status pst = convcat_plan_create(cat, p, c[i].index, &plan);
        if (pst == CONVCAT_ERR_NO_DEVICE)
            continue;   /* convcat_autotune skips it too */
        if ((st = pst) != CONVCAT_OK)
            break;
        convcat_plan_info info;
        if ((st = convcat_plan_info_get(plan, &info)) == CONVCAT_OK && info.workspace_bytes > *bytes)
            *bytes = info.workspace_bytes;
        convcat_plan_destroy(plan);
    }
    free(c);
    return st;
}

convcat_status cvc_verify_autotune(const convcat_catalog *cat, const convcat_problem *p, convcat_tune_cache *cache,
                                   int iters, size_t *index_out, double *ms_out)
{
    const cvc_driver *drv;
    reference ref;
    buffers b;
    size_t ws = 0;
    convcat_status st = cvc_driver_get(&drv);
    if (st == CONVCAT_OK)
        st = load_reference(drv, &ref);
    if (st == CONVCAT_OK)
        st = autotune_workspace(cat, p, &ws);
    if (st == CONVCAT_OK)
        st = make_buffers(drv, &ref, p, 4321, 0, 0, 0, ws, &b);
    if (st != CONVCAT_OK)
        return st;
    const convcat_tensors t = tensors_for(&b, 1.0f, 0.0f, CONVCAT_ACT_NONE);
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
    const convcat_tensors t = tensors_for(&b, 1.0f, 0.0f, CONVCAT_ACT_NONE);
    st = cvc_time_plan(plan, &t, NULL, iters < 1 ? 1 : iters, ms_out);
    free_buffers(drv, &b);
    convcat_plan_destroy(plan);
    return st;
}

/* ---- a problem's tensors, for the caller's own plans and streams ---------------------------- */

struct cvc_verify_case {
    const cvc_driver *drv;
    reference ref;
    convcat_problem p;
    buffers b;
};

convcat_status cvc_verify_case_make(const convcat_problem *p, size_t workspace_bytes, cvc_verify_case **out)
{
    *out = NULL;
    cvc_verify_case *c = calloc(1, sizeof *c);
    if (!c)
        return cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory making a verify case");
    c->p = *p;
    convcat_status st = cvc_driver_get(&c->drv);
    if (st == CONVCAT_OK)
        st = load_reference(c->drv, &c->ref);
    if (st == CONVCAT_OK)
        st = alloc_buffers(c->drv, p, 0, 0, 1, workspace_bytes, &c->b);   /* filled by cvc_verify_case_fill */
    if (st != CONVCAT_OK) {
        free(c);
        return st;
    }
    *out = c;
    return CONVCAT_OK;
}

convcat_status cvc_verify_case_fill(cvc_verify_case *c, unsigned seed)
{
    convcat_status st = fill_buffers(c->drv, &c->ref, &c->p, seed, &c->b);
    return st == CONVCAT_OK ? cvc_cuda_check(c->drv->cuCtxSynchronize(), "filling a verify case") : st;
}

convcat_tensors cvc_verify_case_tensors(const cvc_verify_case *c)
{
    return tensors_for(&c->b, 1.0f, 0.0f, CONVCAT_ACT_NONE);
}

convcat_status cvc_verify_case_check(cvc_verify_case *c, cvc_verify *out)
{
    const cvc_epilogue plain = {.alpha = 1.0f};
    memset(out, 0, sizeof *out);
    out->index = CONVCAT_AUTO;
    out->workspace_bytes = c->b.ws_bytes;
    return check_output(c->drv, &c->ref, &c->p, &c->b, &plain, out);
}

convcat_status cvc_verify_case_output_poisoned(cvc_verify_case *c, int *poisoned)
{
    /* The first and last 4-byte words of the output still all-ones bytes (NaN). */
    const size_t bytes = (size_t)c->b.nout * cvc_dtype_bytes(c->b.tout), last = bytes >= 4 ? (bytes - 4) / 4 * 4 : 0;
    uint32_t w0 = 0, w1 = 0;
    convcat_status st = cvc_cuda_check(c->drv->cuCtxSynchronize(), "reading the output");
    if (st == CONVCAT_OK)
        st = cvc_cuda_check(c->drv->cuMemcpyDtoH(&w0, *c->b.out, 4), "reading the output");
    if (st == CONVCAT_OK)
        st = cvc_cuda_check(c->drv->cuMemcpyDtoH(&w1, *c->b.out + (CUdeviceptr)last, 4), "reading the output");
    *poisoned = st == CONVCAT_OK && w0 == 0xFFFFFFFFu && w1 == 0xFFFFFFFFu;
    return st;
}

void cvc_verify_case_free(cvc_verify_case *c)
{
    if (!c)
        return;
    free_buffers(c->drv, &c->b);
    free(c);
}
