/* plan.c: bind a kernel to a problem and a device; launch it.
 *
 * convcat_plan_create does every check that can fail before launch time:
 * the problem rules, the device's arch, shared memory and cluster support,
 * and the code load.  convcat_plan_run then only checks the caller's
 * pointers, encodes the two tensor maps (they hold the addresses) and
 * launches with cuLaunchKernelEx on the caller's stream.
 *
 * A dynamic-cluster kernel (sm100a, "_cMxNfMxN_") gets two descriptor sets,
 * the preferred shape's A and B maps and, after its parameter block, the
 * fallback shape's, and a launch that asks for the fallback
 * cluster dimension with the preferred one as CU_LAUNCH_ATTRIBUTE_PREFERRED_
 * CLUSTER_DIMENSION: the device forms each cluster in one of the two shapes,
 * and the kernel reads which.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "internal.h"
#include "log.h"

struct convcat_plan {
    size_t index;
    const cvc_entry *e;
    convcat_problem problem;
    cvc_view view;
    cvc_launches pointer;        /* gather and direct: their launches (grid, block, parameters) */
    cvc_params params;           /* everything but the pointers and scalars of a run */
    cvc_operand_desc a, b;
    cvc_operand_desc a_fb, b_fb; /* dynamic cluster: the fallback shape's operand maps */
    cvc_tiled_desc y;            /* the output, or wgrad's split-K workspace */
    CUkernel kernel, helper;     /* KEY (sm90a strided dgrad: KEY_strided); wgrad KEY_reduce or
                                  * strided dgrad KEY_fill (e->helper) */
    CUdevice device;
    int grid, cluster, helper_grid;
    int fallback;                /* dynamic cluster: CTAs of the fallback shape (0: static) */
    size_t workspace_bytes;
    bool chained;                /* launch with programmatic stream serialization (chained_launch) */
    bool turned;                 /* a unit-stride dgrad as the fprop of dy (DGRAD_AS_FPROP) */
    int widen;                   /* groups run `widen` as one (WIDENS_GROUPS; 1: not); turned or widened,
                                  * view is the problem run and KEY_regroup writes its filter into the
                                  * workspace first */
    /* Strided dgrad: one launch per stride phase, each with its dy map and parameters. */
    int phases;
    cvc_im2col_desc *phase_a, *phase_a_fb;
    cvc_params *phase_params;
    int *phase_grid;
};

_Static_assert(sizeof(CUtensorMap) == sizeof(cvc_tmap) && _Alignof(CUtensorMap) <= _Alignof(cvc_tmap),
               "the kernel ABI's tensor maps are CUtensorMaps");

static convcat_status current_device(const cvc_driver *drv, CUdevice *dev, convcat_arch *arch, int *sms)
{
    CUcontext ctx = NULL;
    convcat_status st = cvc_cuda_check(drv->cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
    if (st != CONVCAT_OK)
        return st;
    if (!ctx)
        return cvc_fail(CONVCAT_ERR_NO_DEVICE,
                        "no current CUDA context on this thread: make one current (cudaSetDevice, cuCtxSetCurrent)");
    if ((st = cvc_cuda_check(drv->cuCtxGetDevice(dev), "cuCtxGetDevice")) != CONVCAT_OK)
        return st;
    int major = 0, minor = 0;
    if ((st = cvc_cuda_check(drv->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, *dev),
                             "cuDeviceGetAttribute")) != CONVCAT_OK ||
        (st = cvc_cuda_check(drv->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, *dev),
                             "cuDeviceGetAttribute")) != CONVCAT_OK ||
        (st = cvc_cuda_check(drv->cuDeviceGetAttribute(sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, *dev),
                             "cuDeviceGetAttribute")) != CONVCAT_OK)
        return st;
    /* sm_90a code runs on compute capability 9.0 only, sm_100a on 10.0 only. */
    *arch = major == 9 && minor == 0 ? CONVCAT_ARCH_SM90A
          : major == 10 && minor == 0 ? CONVCAT_ARCH_SM100A : CONVCAT_ARCH_ANY;
    return CONVCAT_OK;
}

convcat_status convcat_device_arch(convcat_arch *arch_out, int *sm_count_out)
{
    const cvc_driver *drv;
    CUdevice dev;
    int sms = 0;
    convcat_arch arch = CONVCAT_ARCH_ANY;
    convcat_status st = cvc_driver_get(&drv);
    if (st == CONVCAT_OK)
        st = current_device(drv, &dev, &arch, &sms);
    if (arch_out)
        *arch_out = arch;
    if (sm_count_out)
        *sm_count_out = sms;
    return st;
}

/* Device limits a kernel needs: arch, opt-in shared memory, clusters. */
static convcat_status check_device(const cvc_driver *drv, const cvc_entry *e, CUdevice dev, convcat_arch arch)
{
    if (e->k.arch != arch)
        return cvc_fail(CONVCAT_ERR_NO_DEVICE, "%s is %s code; the current device is %s", e->key,
                        convcat_arch_name(e->k.arch),
                        arch == CONVCAT_ARCH_ANY ? "neither sm_90 nor sm_100" : convcat_arch_name(arch));
    int smem = 0, clusters = 0;
    convcat_status st = cvc_cuda_check(
        drv->cuDeviceGetAttribute(&smem, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev),
        "cuDeviceGetAttribute");
    if (st == CONVCAT_OK)
        st = cvc_cuda_check(drv->cuDeviceGetAttribute(&clusters, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, dev),
                            "cuDeviceGetAttribute");
    if (st != CONVCAT_OK)
        return st;
    if (e->smem_bytes > smem)
        return cvc_fail(CONVCAT_ERR_NO_DEVICE, "%s needs %d bytes of shared memory per block; the device allows %d",
                        e->key, e->smem_bytes, smem);
    if (e->k.cluster_m * e->k.cluster_n > 1 && !clusters)
        return cvc_fail(CONVCAT_ERR_NO_DEVICE, "%s launches clusters; the device cannot", e->key);
    return CONVCAT_OK;
}

static void fill_params(const cvc_entry *e, const cvc_view *v, int sms, bool allow_cluster, cvc_params *k)
{
    const convcat_problem *p = &v->p;
    memset(k, 0, sizeof *k);
    k->gemm_m = (int32_t)v->gemm.m;
    k->k_iters = (int32_t)cvc_k_iters(e, v);
    const cvc_split sp = cvc_split_for(e, v, sms, allow_cluster);
    k->splits = sp.splits;
    k->split_iters = sp.split_iters;
    k->cluster_splits = sp.cluster;
    k->out_q = v->out[2], k->out_p = v->out[1], k->out_z = v->out[0];
    k->stride_w = p->stride[2], k->stride_h = p->stride[1], k->stride_d = p->stride[0];
    k->pad_w = p->pad_lo[2], k->pad_h = p->pad_lo[1], k->pad_d = p->pad_lo[0];
    k->dil_w = p->dilation[2], k->dil_h = p->dilation[1], k->dil_d = p->dilation[0];
    k->filt_s = p->s, k->filt_r = p->r, k->filt_t = p->t;
    switch (e->k.op) {
    case CONVCAT_DGRAD:   /* the first stride phase; cvc_plan sets up the others */
        k->gemm_n = p->c;
        k->channels = p->k;
        k->ldy = p->c;
        break;
    case CONVCAT_WGRAD:
        /* Flat: GEMM N is T*R*S*C; per tap: C, with chan_tiles tiles per tap.  Grouped: dw is
         * (K, T*R*S, c), a tile per tap (chan_tiles 1) over the M tile's channels. */
        k->channels = p->c;
        k->ldy = v->gemm.n;   /* T*R*S*C (grouped: T*R*S*c) */
        k->gemm_n = cvc_wgrad_flat(e, v) ? (int32_t)v->gemm.n : p->c;
        k->chan_tiles = cvc_wgrad_flat(e, v) ? 0 : p->groups > 1 ? 1 : (int32_t)cvc_ceil_div(p->c, e->k.tile_n);
        k->group_channels = p->groups > 1 ? p->c / p->groups : 0;
        break;
    default:   /* grouped (schedule grouped): the K loop runs over a group's channels */
        k->gemm_n = p->k;
        k->channels = v->cg;
        k->ldy = p->k;
        if (p->groups > 1)
            k->group_channels = v->cg, k->group_filters = v->kg;
    }
    int64_t tiles_m, tiles_n;
    cvc_cluster_tiles(e, v, &tiles_m, &tiles_n);
    k->cluster_tiles_m = (int32_t)tiles_m;
    k->cluster_tiles_n = (int32_t)tiles_n;
    k->tap_step_w = k->tap_step_h = k->tap_step_d = 1;
    k->out_step_w = k->out_step_h = k->out_step_d = 1;
    k->dx_w = p->w, k->dx_h = p->h, k->dx_d = p->d;
    if (e->k.op == CONVCAT_DGRAD) {
        cvc_dgrad_phase ph;
        cvc_dgrad_phase_at(v, 0, &ph);
        cvc_phase_params(e, v, &ph, k);
    }
    k->raster_band = cvc_raster_band(e, v, k, sms);
}

/* The sm90a raster band (cvc_params.raster_band): tile rows the persistent schedule walks column
 * by column.  With N-tiles fastest, a wave of W clusters covers W / tiles_n rows and every row
 * sweeps all of B, which a later row finds in L2 only if B fits there.  Where a row has more
 * than half a wave of tiles and fprop's or dgrad's filters (B) exceed half the L2, bands of 8 rows
 * read each B column once per band instead of once per row.  Convolutions of up to ~20000 output
 * channels never meet the first condition on 132 SMs, so they run N-fastest (measured: bands of
 * 2-16 rows were within +-2% there).  CONVCAT_RASTER_BAND=n (n >= 1) overrides the rule. */
#define RASTER_BAND 8
#define RASTER_L2_BYTES (25 << 20)   /* half the H100/H200 L2 */

int cvc_raster_band(const cvc_entry *e, const cvc_view *v, const cvc_params *k, int sms)
{
    const char *env = getenv("CONVCAT_RASTER_BAND");
    const int rows = k->cluster_tiles_m > 1 ? k->cluster_tiles_m : 1;
    if (env && *env) {
        char *end;
        const long band = strtol(env, &end, 10);
        if (*end == '\0' && band >= 1)
            return band < rows ? (int)band : rows;
    }
    if (e->k.arch != CONVCAT_ARCH_SM90A || e->k.op == CONVCAT_WGRAD)
        return 1;
    const int64_t wave = sms / (e->k.cluster_m * e->k.cluster_n);
    if (2 * (int64_t)k->cluster_tiles_n <= wave || cvc_filter_bytes(v) <= RASTER_L2_BYTES)
        return 1;
    return RASTER_BAND < rows ? RASTER_BAND : rows;
}

convcat_status cvc_launches_alloc(cvc_launches *out, int count)
{
    memset(out, 0, sizeof *out);
    out->l = calloc((size_t)count, sizeof *out->l);
    if (!out->l)
        return cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory planning %d launch%s", count, count == 1 ? "" : "es");
    out->count = count;
    return CONVCAT_OK;
}

/* Kernels of flag CHAINED (sm90a TMA, gather and direct kernels, with their KEY_reduce) wait for the
 * stream's previous kernel before they touch global memory (kernel ABI 9), so they launch with
 * programmatic stream serialization: each may start as soon as the kernel before it allows (each
 * template says where), and back to back a launch's latency and prologue hide under the
 * previous kernel's tail.  Stride-phase launches of the TMA family have their own rule
 * (convcat_plan_run); sm100a kernels have no wait yet.  CONVCAT_PDL=0 turns it off for plans made
 * after. */
static bool chained_launch(const cvc_entry *e)
{
    const char *env = getenv("CONVCAT_PDL");
    return cvc_has(e, CVC_F_CHAINED) && !(env && strcmp(env, "0") == 0);
}

/* Clusters of `ctas` CTAs that fit on the device at once (at least one, or a reason). */
static convcat_status active_clusters(const cvc_driver *drv, const convcat_plan *pl, int sms, int ctas, int *active)
{
    const cvc_entry *e = pl->e;
    CUlaunchAttribute attr = {.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION};
    attr.value.clusterDim.x = (unsigned)ctas;
    attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
    CUlaunchConfig cfg = {.gridDimX = (unsigned)(sms / ctas * ctas), .gridDimY = 1, .gridDimZ = 1,
                          .blockDimX = (unsigned)e->threads, .blockDimY = 1, .blockDimZ = 1,
                          .sharedMemBytes = (unsigned)e->smem_bytes, .attrs = &attr, .numAttrs = 1};
    *active = 0;
    convcat_status st = cvc_cuda_check(drv->cuOccupancyMaxActiveClusters(active, (CUfunction)pl->kernel, &cfg),
                                       "cuOccupancyMaxActiveClusters");
    if (st == CONVCAT_OK && *active < 1)
        st = cvc_fail(CONVCAT_ERR_NO_DEVICE, "%s: no cluster of %d CTAs fits on the device", e->key, ctas);
    return st;
}

/* Persistent grid: as many (preferred) clusters as fit at once, at most one per cluster tile. */
static convcat_status clusters_that_fit(const cvc_driver *drv, const convcat_plan *pl, int sms, int64_t *fit)
{
    *fit = sms / pl->cluster;
    if (pl->cluster == 1)
        return CONVCAT_OK;
    int active = 0, active_fb = 0;
    convcat_status st = active_clusters(drv, pl, sms, pl->cluster, &active);
    if (st == CONVCAT_OK && pl->fallback)   /* both shapes must be launchable */
        st = active_clusters(drv, pl, sms, pl->fallback, &active_fb);
    if (st != CONVCAT_OK)
        return st;
    *fit = cvc_dynamic_fit(active, active_fb, pl->cluster, pl->fallback);
    return CONVCAT_OK;
}

int64_t cvc_dynamic_fit(int active, int active_fb, int cluster, int fallback)
{
    /* Where a preferred cluster does not fit, the device forms fallback ones: count the CTAs
     * the fallback shape places, in whole preferred clusters. */
    const int64_t by_fallback = fallback ? (int64_t)active_fb * fallback / cluster : 0;
    return by_fallback > active ? by_fallback : active;
}

int cvc_grid_for(const cvc_params *k, int64_t fit, int cluster)
{
    if (k->cluster_splits)   /* a cluster a tile, its CTAs the slices: every tile's, not persistent */
        return k->cluster_tiles_m * k->cluster_tiles_n * k->splits;
    const int64_t tiles = (int64_t)k->cluster_tiles_m * k->cluster_tiles_n * k->splits;
    return (int)((tiles < fit ? tiles : fit) * cluster);
}

/* Strided dgrad: a launch per stride phase (unit stride has one, in pl->params). */
static convcat_status plan_phases(convcat_plan *pl, const cvc_view *v, int64_t fit, int sms)
{
    /* A strided dgrad goes by its phases even where there is one (an axis no wider than its stride): the
     * problem's own geometry is not a phase's, and that phase may have no tap at all. */
    const int n = pl->e->k.op == CONVCAT_DGRAD && v->strided ? v->phases : 0;
    if (n < 1)
        return CONVCAT_OK;
    pl->phase_a = calloc((size_t)n, sizeof *pl->phase_a);
    pl->phase_a_fb = pl->fallback ? calloc((size_t)n, sizeof *pl->phase_a_fb) : NULL;
    pl->phase_params = calloc((size_t)n, sizeof *pl->phase_params);
    pl->phase_grid = calloc((size_t)n, sizeof *pl->phase_grid);
    if (!pl->phase_a || !pl->phase_params || !pl->phase_grid || (pl->fallback && !pl->phase_a_fb))
        return cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory planning %d stride phases", n);
    pl->phases = n;
    pl->helper_grid = 8 * sms;   /* the fill's grid cap */
    const cvc_entry f = cvc_entry_fallback(pl->e);
    for (int i = 0; i < n; ++i) {
        cvc_dgrad_phase ph;
        cvc_dgrad_phase_at(v, i, &ph);
        cvc_tma_dgrad_a(pl->e, v, &ph, &pl->phase_a[i]);
        if (pl->fallback)
            cvc_tma_dgrad_a(&f, v, &ph, &pl->phase_a_fb[i]);
        pl->phase_params[i] = pl->params;
        cvc_phase_params(pl->e, v, &ph, &pl->phase_params[i]);
        pl->phase_params[i].reverse_tiles = i % 2;   /* sm90a: start on the dy the last phase read last */
        pl->phase_grid[i] = cvc_grid_for(&pl->phase_params[i], fit, pl->cluster);
    }
    return CONVCAT_OK;
}

static convcat_status pick(const convcat_catalog *cat, const convcat_problem *p, convcat_arch arch, int sms,
                           size_t *index)
{
    convcat_candidate *c;
    size_t ok;
    const convcat_status st = cvc_rank(cat, p, arch, sms, &c, &ok);
    if (st == CONVCAT_OK)
        *index = c[0].index;
    free(c);
    return st;
}

/* The log line of a plan just made: its kernel, and why: `picked` by the model (its rank and prediction, the
 * runner-up) or the caller's pin. */
static void log_plan(const convcat_catalog *cat, const convcat_problem *p, const convcat_plan *plan, bool picked)
{
    if (!cvc_log_enabled())
        return;
    convcat_plan_info info;
    if (convcat_plan_info_get(plan, &info) != CONVCAT_OK)
        return;
    const cvc_entry *e = &cat->entries[info.index];
    char problem[256], why[512];
    cvc_problem_phrase(p, problem, sizeof problem);
    convcat_arch arch = e->k.arch;
    int sms = 0;
    convcat_device_arch(&arch, &sms);
    if (picked) {
        /* The ranking the pick came from, again: it costs a query, only when someone listens. */
        convcat_candidate *c = malloc((cat->count ? cat->count : 1) * sizeof *c);
        size_t rows = 0, ok = 0, rank = 0;
        if (c && convcat_query(cat, p, arch, sms, c, cat->count, &rows, &ok) == CONVCAT_OK) {
            while (rank < ok && c[rank].index != info.index)
                ++rank;
        }
        if (c && rank < ok) {
            int len = snprintf(why, sizeof why,
                               "picked by the time model: rank %zu of %zu %s kernels that can run it, predicted "
                               "%.1f us on %d SMs", rank + 1, ok, convcat_arch_name(arch), c[rank].predicted_us, sms);
            const size_t other = rank ? 0 : 1;   /* the runner-up, or the kernel ranked first */
            if (ok > 1 && len > 0 && (size_t)len < sizeof why)
                snprintf(why + len, sizeof why - (size_t)len, "; %s %s, %.1f us", rank ? "first" : "runner-up",
                         cat->entries[c[other].index].key, c[other].predicted_us);
        } else {
            snprintf(why, sizeof why, "picked by the time model");
        }
        free(c);
    } else {
        cvc_view v;
        const double us = cvc_view_make(p, &v, NULL, 0) == CONVCAT_OK ? cvc_predict_us(e, &v, sms) : 0.0;
        snprintf(why, sizeof why, "chosen by the caller (entry %zu), predicted %.1f us", info.index, us);
    }
    cvc_log("plan: %s (catalog %08x) for %s: %s; grid %d CTAs, clusters of %d, %d threads, %d bytes shared "
            "memory, %zu bytes workspace",
            e->key, cat->id, problem, why, info.grid, info.cluster, info.threads, info.smem_bytes,
            info.workspace_bytes);
}

convcat_status convcat_plan_create(const convcat_catalog *catalog, const convcat_problem *p, size_t index,
                                   convcat_plan **out)
{
    if (!catalog || !p || !out || (index != CONVCAT_AUTO && index >= catalog->count))
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_plan_create: NULL argument or no entry %zu", index);
    *out = NULL;
    const bool picked = index == CONVCAT_AUTO;
    convcat_catalog *cat = (convcat_catalog *)catalog;   /* lazy code loading is internally locked */
    const cvc_driver *drv;
    CUdevice dev;
    convcat_arch arch;
    int sms;
    convcat_status st = cvc_driver_get(&drv);
    if (st == CONVCAT_OK)
        st = current_device(drv, &dev, &arch, &sms);
    if (st == CONVCAT_OK && index == CONVCAT_AUTO)
        st = arch == CONVCAT_ARCH_ANY ? cvc_fail(CONVCAT_ERR_NO_DEVICE, "the current device is neither sm_90 nor sm_100")
                                      : pick(cat, p, arch, sms, &index);
    if (st != CONVCAT_OK)
        return st;
    const cvc_entry *e = &cat->entries[index];
    char why[192];
    cvc_view v;
    if (cvc_view_make(p, &v, why, sizeof why) != CONVCAT_OK || cvc_check_entry(e, &v, why, sizeof why, NULL) != CONVCAT_OK)
        return cvc_fail(CONVCAT_ERR_UNSUPPORTED, "%s cannot run the problem: %s", e->key, why);
    if ((st = check_device(drv, e, dev, arch)) != CONVCAT_OK)
        return st;
    /* The problem the kernel runs: folded, turned, widened (cvc_run_view; the rules took it). */
    cvc_run run;
    if (cvc_run_view(e, &v, &run, why, sizeof why) != CONVCAT_OK)
        return cvc_fail(CONVCAT_ERR_UNSUPPORTED, "%s cannot run the problem: %s", e->key, why);
    v = run.v;
    /* KEY_regroup's filter, the one the kernel reads (exact below 2^53) */
    const size_t run_filter = cvc_regroups(&run) ? (size_t)cvc_filter_bytes(&v) : 0;
    void *kernel = NULL;
    if ((st = cvc_entry_kernel(cat, (cvc_entry *)e, &kernel)) != CONVCAT_OK)
        return st;
    if (e->strided && v.strided)   /* sm90a: the stride phases' own kernel */
        kernel = e->strided;
    convcat_plan *pl = calloc(1, sizeof *pl);
    if (!pl)
        return cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory making a plan");
    pl->index = index;
    pl->e = e;
    pl->problem = *p;
    pl->view = v;
    pl->turned = run.turned;
    pl->widen = run.widen;
    pl->kernel = (CUkernel)kernel;
    pl->device = dev;
    pl->cluster = e->k.cluster_m * e->k.cluster_n;
    pl->fallback = e->k.fallback_m * e->k.fallback_n;
    pl->helper = (CUkernel)e->helper;
    if (e->family != CVC_FAMILY_TMA) {   /* gather and direct: their launches, each its own shared memory */
        st = e->family == CVC_FAMILY_GATHER ? cvc_gather_launches(e, &v, sms, &pl->pointer)
                                            : cvc_direct_launches(e, &v, sms, &pl->pointer);
        /* The attribute belongs to the kernel on this device, not to the plan: set it to the most
         * any problem's launch may take (the rules refuse more), so that a later plan of the same
         * kernel with a smaller launch does not lower it under this one's. */
        if (st == CONVCAT_OK)
            st = cvc_cuda_check(drv->cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                          e->smem_bytes, (CUkernel)kernel, dev),
                                "cuKernelSetAttribute(max dynamic shared memory)");
        if (st != CONVCAT_OK) {
            convcat_plan_destroy(pl);
            return st;
        }
        pl->workspace_bytes = pl->pointer.workspace_bytes;
        pl->grid = pl->pointer.count ? (int)pl->pointer.l[0].grid : 0;
        pl->chained = chained_launch(e);
        log_plan(cat, p, pl, picked);
        *out = pl;
        return CONVCAT_OK;
    }
    st = cvc_cuda_check(drv->cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                  e->smem_bytes, (CUkernel)kernel, dev),
                        "cuKernelSetAttribute(max dynamic shared memory)");
    if (st != CONVCAT_OK) {
        convcat_plan_destroy(pl);
        return st;
    }
    fill_params(e, &v, sms, true, &pl->params);
    if (pl->params.cluster_splits) {   /* clusters of the slices, where the device can form them */
        int active = 0;
        pl->cluster = pl->params.splits;
        cvc_error_state before;
        cvc_error_save(&before);
        if (active_clusters(drv, pl, sms, pl->cluster, &active) != CONVCAT_OK) {
            cvc_log("plan: %s: no cluster of %d CTAs fits (%s); split-K through the workspace", e->key, pl->cluster,
                    convcat_last_error());
            cvc_error_restore(&before);   /* the plan goes on: not this call's failure */
            pl->cluster = 1;
            fill_params(e, &v, sms, false, &pl->params);
        }
    }
    cvc_tma_operands(e, &v, &pl->a, &pl->b);
    if (pl->fallback) {
        const cvc_entry f = cvc_entry_fallback(e);
        cvc_tma_operands(&f, &v, &pl->a_fb, &pl->b_fb);
    }
    const bool partial = pl->params.splits > 1 && !pl->params.cluster_splits;
    cvc_tma_output(e, &v, partial ? pl->params.splits : 1, &pl->y);
    if (partial) {
        pl->workspace_bytes = cvc_workspace_bytes(&v, pl->params.splits);
        /* KEY_reduce: 256 threads share 16 float4 of the output at most (its slice lanes) */
        const int64_t blocks = cvc_ceil_div(v.gemm.m * v.gemm.n / 4, 16);
        pl->helper_grid = (int)(blocks < 8 * sms ? blocks : 8 * sms);
    }
    if (cvc_has(e, CVC_F_TRANSPOSES_FILTER))   /* tf32 dgrad: the filter's K-major copy */
        pl->workspace_bytes = (size_t)p->k * (size_t)p->c * (size_t)v.taps * sizeof(float);
    if (run_filter)   /* the turned or widened filter (no split-K on these kernels) */
        pl->workspace_bytes = run_filter;
    int64_t fit = 0;
    if ((st = clusters_that_fit(drv, pl, sms, &fit)) == CONVCAT_OK)
        st = plan_phases(pl, &v, fit, sms);
    if (st != CONVCAT_OK) {
        convcat_plan_destroy(pl);
        return st;
    }
    pl->grid = cvc_grid_for(&pl->params, fit, pl->cluster);
    pl->chained = chained_launch(e);
    log_plan(cat, p, pl, picked);
    *out = pl;
    return CONVCAT_OK;
}

convcat_status convcat_plan_info_get(const convcat_plan *pl, convcat_plan_info *info)
{
    if (!pl || !info)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_plan_info_get: NULL argument");
    *info = (convcat_plan_info){.index = pl->index, .grid = pl->grid, .cluster = pl->cluster,
                                .threads = pl->e->threads, .smem_bytes = pl->e->smem_bytes,
                                .workspace_bytes = pl->workspace_bytes, .groups_per_cta = 1, .splits = 1};
    if (pl->e->family == CVC_FAMILY_GATHER && pl->pointer.count > 0) {
        info->groups_per_cta = pl->problem.groups / pl->pointer.l[0].u.g.groups;
        info->splits = pl->pointer.l[0].u.g.splits;
    } else if (pl->e->family == CVC_FAMILY_DIRECT && pl->pointer.count > 0 && pl->pointer.reduce_grid) {
        info->splits = pl->pointer.l[0].u.d.slices;
    } else if (pl->e->family == CVC_FAMILY_TMA) {
        info->splits = pl->params.splits;
    }
    if (info->splits > 1)
        info->split_sums = pl->params.cluster_splits ? CONVCAT_SPLIT_CLUSTER : CONVCAT_SPLIT_REDUCE;
    return CONVCAT_OK;
}

void convcat_plan_destroy(convcat_plan *pl)
{
    if (!pl)
        return;
    free(pl->phase_a);
    free(pl->phase_a_fb);
    free(pl->phase_params);
    free(pl->phase_grid);
    free(pl->pointer.l);
    free(pl);
}

static CUtensorMapDataType map_type(convcat_dtype t)
{
    switch (t) {
    case CONVCAT_BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case CONVCAT_F32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case CONVCAT_TF32: return CU_TENSOR_MAP_DATA_TYPE_TFLOAT32;
    case CONVCAT_E4M3:
    case CONVCAT_E5M2: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    default: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    }
}

static CUtensorMapSwizzle map_swizzle(int bytes)
{
    return bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
         : bytes == 64  ? CU_TENSOR_MAP_SWIZZLE_64B
         : bytes == 32  ? CU_TENSOR_MAP_SWIZZLE_32B : CU_TENSOR_MAP_SWIZZLE_NONE;
}

static bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

_Static_assert((int)CVC_ACT_RELU == (int)CONVCAT_ACT_RELU && (int)CVC_ACT_GELU == (int)CONVCAT_ACT_GELU &&
                   (int)CVC_ACT_SILU == (int)CONVCAT_ACT_SILU, "kernel ABI and public activations agree");

static convcat_status encode_tiled(const cvc_driver *drv, CUtensorMap *map, convcat_dtype type, const cvc_tiled_desc *d,
                                   const void *ptr, CUtensorMapL2promotion l2, const char *what)
{
    return cvc_cuda_check(drv->cuTensorMapEncodeTiled(map, map_type(type), (cuuint32_t)d->rank, (void *)ptr, d->dims,
                                                      d->strides, d->box, d->elem_strides,
                                                      CU_TENSOR_MAP_INTERLEAVE_NONE, map_swizzle(d->swizzle_bytes),
                                                      l2, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                          what);
}

static convcat_status encode_operand(const cvc_driver *drv, CUtensorMap *map, convcat_dtype type,
                                     const cvc_operand_desc *d, const void *ptr, const char *what)
{
    if (!d->im2col)
        return encode_tiled(drv, map, type, &d->t, ptr, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, what);
    const cvc_im2col_desc *a = &d->i;
    return cvc_cuda_check(drv->cuTensorMapEncodeIm2col(
                              map, map_type(type), (cuuint32_t)a->rank, (void *)ptr, a->dims, a->strides, a->lower,
                              a->upper, a->channels_per_pixel, a->pixels_per_column, a->elem_strides,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, map_swizzle(a->swizzle_bytes),
                              CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                          what);
}

/* A launch without clusters, `smem` bytes of dynamic shared memory; `chained`: with programmatic
 * stream serialization (the kernel waits for its predecessor: flag CHAINED). */
static convcat_status launch_flat(const cvc_driver *drv, void *kernel, const unsigned grid[3], unsigned block_x,
                                  unsigned block_y, unsigned smem, void **args, void *stream, bool chained,
                                  const char *what)
{
    CUlaunchAttribute chain = {.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
                               .value.programmaticStreamSerializationAllowed = 1};
    CUlaunchConfig cfg = {.gridDimX = grid[0], .gridDimY = grid[1], .gridDimZ = grid[2], .blockDimX = block_x,
                          .blockDimY = block_y, .blockDimZ = 1, .sharedMemBytes = smem, .hStream = (CUstream)stream,
                          .attrs = &chain, .numAttrs = chained ? 1 : 0};
    return cvc_cuda_check(drv->cuLaunchKernelEx(&cfg, (CUfunction)kernel, args, NULL), what);
}

/* A helper kernel of the entry (KEY_transpose, KEY_fill, KEY_reduce): no cluster, no dynamic smem;
 * `chained` for sm90a KEY_reduce, which waits for the slices. */
static convcat_status launch_helper(const cvc_driver *drv, void *kernel, const unsigned grid[3], unsigned block_x,
                                    unsigned block_y, void **args, void *stream, bool chained, const char *what)
{
    return launch_flat(drv, kernel, grid, block_x, block_y, 0, args, stream, chained, what);
}

/* A gather or direct plan: its launches (dgrad: a stride phase each), then the reduction; chained
 * (programmatic stream serialization) where the kernel waits for its predecessor (flag CHAINED). */
static convcat_status run_pointer(const cvc_driver *drv, const convcat_plan *pl, const convcat_tensors *t,
                                  void *stream)
{
    const convcat_op op = pl->e->k.op;
    const void *in_a = op == CONVCAT_FPROP ? t->x : t->y;
    const void *in_b = op == CONVCAT_WGRAD ? t->x : t->w;
    void *out = op == CONVCAT_FPROP ? t->y : op == CONVCAT_DGRAD ? (void *)t->x : (void *)t->w;
    const void *c = t->beta != 0.0f ? t->c : NULL;
    convcat_status st = CONVCAT_OK;
    cvc_launch l = {0};
    for (int i = 0; i < pl->pointer.count && st == CONVCAT_OK; ++i) {
        l = pl->pointer.l[i];
        if (pl->e->family == CVC_FAMILY_GATHER) {
            cvc_gather_params *g = &l.u.g;
            g->a = in_a, g->b = in_b, g->y = out, g->c = c, g->bias = t->bias, g->workspace = (float *)t->workspace;
            g->alpha = t->alpha, g->beta = t->beta, g->activation = (int32_t)t->activation;
        } else {
            cvc_direct_params *d = &l.u.d;
            /* direct: fprop in = x, w = filters; dgrad in = dy, w = filters; wgrad in = x, w = dy */
            d->in = op == CONVCAT_DGRAD ? t->y : t->x;
            d->w = op == CONVCAT_WGRAD ? t->y : t->w;
            d->y = out, d->c = c, d->bias = t->bias, d->workspace = (float *)t->workspace;
            d->alpha = t->alpha, d->beta = t->beta, d->activation = (int32_t)t->activation;
        }
        const unsigned grid[3] = {l.grid, 1, 1};
        CUtensorMap map;
        void *args[] = {&l.u, NULL};
        if (cvc_has(pl->e, CVC_F_TMA_TILE)) {   /* the input tile's map comes first */
            st = encode_tiled(drv, &map, pl->problem.a_type, &l.map, l.u.d.in, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                              "cuTensorMapEncode (input tile)");
            args[0] = &map, args[1] = &l.u;
        }
        if (l.grid && st == CONVCAT_OK)
            st = launch_flat(drv, pl->kernel, grid, l.block, 1, l.smem, args, stream, pl->chained, pl->e->key);
    }
    if (st != CONVCAT_OK || !pl->pointer.reduce_grid)
        return st;
    const unsigned grid[3] = {pl->pointer.reduce_grid, 1, 1};
    void *rargs[] = {&l.u};   /* the last launch's parameters: its pointers, scalars and slices */
    return launch_helper(drv, pl->helper, grid, 256, 1, rargs, stream, pl->chained, "split-K reduction");
}

convcat_status convcat_plan_run(const convcat_plan *pl, const convcat_tensors *t, void *stream)
{
    if (!pl || !t)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_plan_run: NULL plan or tensors");
    if (!t->x || !t->w || !t->y)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_plan_run: x, w and y must be device pointers");
    if (t->beta != 0.0f && !t->c)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_plan_run: beta is %g but c is NULL", (double)t->beta);
    if (!aligned16(t->x) || !aligned16(t->w) || !aligned16(t->y) || (t->beta != 0.0f && !aligned16(t->c)))
        return cvc_fail(CONVCAT_ERR_MISALIGNED, "convcat_plan_run: x, w, y (and c) must be 16-byte aligned");
    if (!aligned16(t->bias))
        return cvc_fail(CONVCAT_ERR_MISALIGNED, "convcat_plan_run: bias must be 16-byte aligned");
    if ((unsigned)t->activation > CONVCAT_ACT_SILU)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_plan_run: unknown activation %d", (int)t->activation);
    const convcat_op op = pl->problem.op;   /* the problem's (a turned plan's kernel is fprop's) */
    if (op != CONVCAT_FPROP && (t->bias || t->activation != CONVCAT_ACT_NONE))
        return cvc_fail(CONVCAT_ERR_UNSUPPORTED, "convcat_plan_run: %s kernels fuse no bias or activation "
                        "(fprop only): pass bias NULL and CONVCAT_ACT_NONE", convcat_op_name(op));
    if (pl->workspace_bytes && (!t->workspace || t->workspace_bytes < pl->workspace_bytes))
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_plan_run: the plan needs %zu bytes of workspace; "
                        "got %zu at %p", pl->workspace_bytes, t->workspace ? t->workspace_bytes : 0, t->workspace);
    if (pl->workspace_bytes && !aligned16(t->workspace))
        return cvc_fail(CONVCAT_ERR_MISALIGNED, "convcat_plan_run: the workspace must be 16-byte aligned");
    const cvc_driver *drv;
    convcat_status st = cvc_driver_get(&drv);
    if (st != CONVCAT_OK)
        return st;
    CUdevice dev;
    if ((st = cvc_cuda_check(drv->cuCtxGetDevice(&dev), "cuCtxGetDevice")) != CONVCAT_OK)
        return st;
    if (dev != pl->device)
        return cvc_fail(CONVCAT_ERR_NO_DEVICE, "the plan was made for device %d; the current device is %d",
                        (int)pl->device, (int)dev);

    if (pl->e->family != CVC_FAMILY_TMA)
        return run_pointer(drv, pl, t, stream);
    /* Operands and output in forward terms: fprop x, w -> y; dgrad y (dy), w -> x (dx);
     * wgrad y (dy), x -> w (dw). */
    const convcat_problem *p = &pl->problem;
    const void *in_a = op == CONVCAT_FPROP ? t->x : t->y;
    const bool transpose = cvc_has(pl->e, CVC_F_TRANSPOSES_FILTER);
    const bool regroup = pl->turned || pl->widen > 1;
    const void *in_b = op == CONVCAT_WGRAD ? t->x : transpose || regroup ? t->workspace : t->w;
    void *out = op == CONVCAT_FPROP ? t->y : op == CONVCAT_DGRAD ? (void *)t->x : (void *)t->w;
    const bool partial = pl->params.splits > 1 && !pl->params.cluster_splits;
    if (regroup) {   /* the filter the kernel reads, turned (dgrad as the fprop of dy) or widened, into the workspace */
        const void *w = t->w;
        void *wt = t->workspace;
        const int kg = p->k / p->groups, cg = p->c / p->groups;
        int groups = p->groups, taps = p->t * p->r * p->s, turned = pl->turned, widen = pl->widen;
        int k = turned ? cg : kg, c = turned ? kg : cg;   /* of the problem run, before widening */
        void *targs[] = {&w, &wt, &groups, &k, &c, &taps, &turned, &widen};
        const int64_t blocks = cvc_ceil_div(pl->view.p.k * (int64_t)pl->view.cg * taps, 256);
        const unsigned grid[3] = {(unsigned)(blocks < 1024 ? blocks : 1024), 1, 1};
        if ((st = launch_helper(drv, pl->e->transpose, grid, 256, 1, targs, stream, false, "regrouped filter")) !=
            CONVCAT_OK)
            return st;
    }
    if (transpose) {   /* tf32 dgrad: the filter's K-major copy into the workspace, in stream order */
        int k_total = p->k, c_total = p->c, taps = p->t * p->r * p->s;
        const void *w = t->w;
        void *wt = t->workspace;
        void *targs[] = {&w, &wt, &k_total, &c_total, &taps};
        const unsigned grid[3] = {(unsigned)cvc_ceil_div(c_total, 32), (unsigned)cvc_ceil_div(k_total, 32),
                                  (unsigned)taps};
        if ((st = launch_helper(drv, pl->e->transpose, grid, 32, 8, targs, stream, false, "filter transpose")) != CONVCAT_OK)
            return st;
    }
    CUtensorMap map_a, map_b, map_y, map_a_fb, map_b_fb;   /* _Alignas(128) in CUDA 13's cuda.h */
    st = encode_operand(drv, &map_b, p->b_type, &pl->b, in_b, "cuTensorMapEncode (B operand)");
    if (st == CONVCAT_OK && pl->fallback)
        st = encode_operand(drv, &map_b_fb, p->b_type, &pl->b_fb, in_b, "cuTensorMapEncode (B operand, fallback cluster)");
    if (st == CONVCAT_OK)
        st = encode_tiled(drv, &map_y, partial ? CONVCAT_F32 : p->out_type, &pl->y, partial ? t->workspace : out,
                          CU_TENSOR_MAP_L2_PROMOTION_NONE, "cuTensorMapEncodeTiled (output)");
    if (st != CONVCAT_OK)
        return st;

    cvc_params params = pl->params;
    params.y = out;
    params.c = t->beta != 0.0f ? t->c : NULL;
    params.alpha = t->alpha;
    params.beta = t->beta;
    params.bias = t->bias;
    params.activation = (int32_t)t->activation;
    params.workspace = partial ? (float *)t->workspace : NULL;
    /* Clusters linear in x.  Dynamic: the fallback shape is the cluster dimension and the
     * preferred one (a multiple of it, dividing the grid) the preferred dimension.  The third
     * attribute, for chained launches, goes after those in use. */
    CUlaunchAttribute attrs[3] = {{.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION},
                                  {.id = CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION},
                                  {.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
                                   .value.programmaticStreamSerializationAllowed = 1}};
    attrs[0].value.clusterDim.x = (unsigned)(pl->fallback ? pl->fallback : pl->cluster);
    attrs[0].value.clusterDim.y = attrs[0].value.clusterDim.z = 1;
    attrs[1].value.preferredClusterDim.x = (unsigned)pl->cluster;
    attrs[1].value.preferredClusterDim.y = attrs[1].value.preferredClusterDim.z = 1;
    CUlaunchConfig cfg = {.gridDimX = (unsigned)pl->grid, .gridDimY = 1, .gridDimZ = 1,
                          .blockDimX = (unsigned)pl->e->threads, .blockDimY = 1, .blockDimZ = 1,
                          .sharedMemBytes = (unsigned)pl->e->smem_bytes, .hStream = (CUstream)stream,
                          .attrs = attrs, .numAttrs = pl->fallback ? 2 : pl->cluster > 1 ? 1 : 0};
    /* Dynamic-cluster kernels take the fallback shape's maps too; the others read the first four. */
    void *args[] = {&map_a, &map_b, &map_y, &params, &map_a_fb, &map_b_fb};
    if (pl->phases > 0) {   /* strided dgrad: one launch per stride phase, each with its dy map */
        for (int i = 0; i < pl->phases && st == CONVCAT_OK; ++i) {
            params = pl->phase_params[i];
            params.y = out, params.c = t->beta != 0.0f ? t->c : NULL, params.alpha = t->alpha, params.beta = t->beta;
            if (params.k_iters == 0) {   /* no tap reaches the phase: KEY_fill writes beta * C */
                const int64_t blocks = cvc_ceil_div(params.gemm_m, 8);   /* a warp a row */
                const unsigned grid[3] = {(unsigned)(blocks < pl->helper_grid ? blocks : pl->helper_grid), 1, 1};
                void *fargs[] = {&params};
                st = launch_helper(drv, pl->helper, grid, 256, 1, fargs, stream, false, "stride-phase fill");
                continue;
            }
            const cvc_operand_desc a = {.im2col = true, .i = pl->phase_a[i]};
            st = encode_operand(drv, &map_a, p->a_type, &a, in_a, "cuTensorMapEncodeIm2col (dy, stride phase)");
            if (st == CONVCAT_OK && pl->fallback) {
                const cvc_operand_desc a_fb = {.im2col = true, .i = pl->phase_a_fb[i]};
                st = encode_operand(drv, &map_a_fb, p->a_type, &a_fb, in_a,
                                    "cuTensorMapEncodeIm2col (dy, stride phase, fallback cluster)");
            }
            /* After the first phase, a phase may start on the SMs the previous one frees: the
             * phases write disjoint pixels, and each kernel waits for its predecessor before it
             * ends (griddepcontrol in the sm90a template), so the stream's order holds. */
            CUlaunchAttribute phase_attrs[3] = {attrs[0], attrs[1], attrs[2]};
            CUlaunchConfig phase_cfg = cfg;
            phase_cfg.gridDimX = (unsigned)pl->phase_grid[i];
            phase_cfg.attrs = phase_attrs;
            if (i > 0 && pl->e->k.arch == CONVCAT_ARCH_SM90A)   /* sm100a: no griddepcontrol yet */
                phase_attrs[phase_cfg.numAttrs++] = phase_attrs[2];
            if (st == CONVCAT_OK)
                st = cvc_cuda_check(drv->cuLaunchKernelEx(&phase_cfg, (CUfunction)pl->kernel, args, NULL), pl->e->key);
        }
        return st;
    }
    st = encode_operand(drv, &map_a, p->a_type, &pl->a, in_a, "cuTensorMapEncode (A operand)");
    if (st == CONVCAT_OK && pl->fallback)
        st = encode_operand(drv, &map_a_fb, p->a_type, &pl->a_fb, in_a, "cuTensorMapEncode (A operand, fallback cluster)");
    if (pl->chained)   /* sm90a: no preferred cluster dimension, so the slot after the used ones is free */
        attrs[cfg.numAttrs++] = attrs[2];
    if (st == CONVCAT_OK)
        st = cvc_cuda_check(drv->cuLaunchKernelEx(&cfg, (CUfunction)pl->kernel, args, NULL), pl->e->key);
    if (st != CONVCAT_OK || !partial)
        return st;
    /* Split-K: the reduction, in stream order after the slices. */
    const unsigned grid[3] = {(unsigned)pl->helper_grid, 1, 1};
    void *rargs[] = {&params};
    return launch_helper(drv, pl->helper, grid, 256, 1, rargs, stream, pl->chained, "split-K reduction");
}
