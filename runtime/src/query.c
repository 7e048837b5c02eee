/* query.c: which kernels can run a problem, ranked by a time model (no timing).
 *
 * The model of a TMA-family kernel: a persistent grid gives each SM
 * ceil(tiles / SMs) tiles; a tile costs k_iters stages plus a fixed
 * prologue/epilogue cost.
 *  - A stage costs the larger of its MMA time (at the measured GEMM peak per
 *    SM; warpgroups 256 wide reach only MMA_EFF_N256 of it) and its operand
 *    load time (CVC_LOAD_BYTES_PER_SM_US from L2, where small tiles sit, and at most
 *    stages - 1 stages in flight per load latency: deeper pipelines feed faster;
 *    LOAD_L2_BYTES_PER_SM_US where a filter of several taps re-reads operands
 *    that fit in L2), with a latency factor for shallow pipelines.  A 2-CTA
 *    cluster adds a fixed per-stage latency.
 *  - The prologue/epilogue cost grows with the tile's output bytes (staged
 *    through shared memory and stored by TMA).
 *  - Nothing beats moving the tensors once through DRAM, and compute overlaps
 *    that traffic only in part: half the smaller of the two adds on.  An
 *    output written in row segments narrower than its rows (tile N < GEMM N)
 *    moves slower, in the epilogue's cost and in the DRAM traffic.
 *  - Pingpong kernels are priced like coop ones with their warpgroup shape.
 *    One warpgroup stores a pingpong tile alone, where coop's two share the
 *    work, and half of that hides under the other's mainloop: fprop's
 *    epilogue cost is ALONE_EPILOGUE times coop's for the bytes.  Swap kernels
 *    of 64 filters are their pingpong twins with a slightly cheaper stage;
 *    those of 128 are priced like coop ones of their wgmma width (192 or 256
 *    pixels wide reach MMA_EFF_N256 of the peak).
 *  - Grouped kernels (tile columns of whole groups) are priced as the coop kernels of their tile:
 *    a pack's MMAs are 1 / (groups a column) of the tile's, but its stages wait on their loads.
 *    A unit-stride dgrad they run as the fprop of dy, and groups narrower than their packs widened:
 *    the problem run, plus KEY_regroup's launch and the filter's bytes read and written.
 *  - Halo kernels: a stage is one tap's filters and 1 / (R*S) of the block's
 *    input tile (which loads once per channel block); their tiles are output
 *    blocks of every image, part-blocks at its edges counting whole; their
 *    stage is priced at HALO_STAGE of the model's where the filter has several
 *    taps, which share the input tile.  A filter of one tap shares nothing, and
 *    there a halo kernel's stage is the model's (on 1x1 layers the halo
 *    kernels took 1.2-1.5x the coop kernels' time, measured).
 *  - wgrad: both operands MN-major, B by im2col at a new pixel split every
 *    stage: a slower operand feed, no 256-wide penalty; its split-K count is
 *    the one this model predicts fastest, plus the reduction's traffic.
 *  - Strided dgrad: the sum of its stride phases, a launch each; a phase no
 *    tap reaches is a fill at DRAM speed.
 * The gather and direct families price themselves (gather.c, direct.c).
 * Constants were measured on the H200 with bench/bench.py (docs/experiments.md):
 * 787 TFLOP/s bf16 GEMM, 4.3 TB/s copy, and per-stage / per-tile costs fitted
 * over the layer suites' kernels; bench/model_check.py judges a changed model
 * against recorded runs offline, and convcat_autotune times the candidates.
 *
 * Refused kernels follow the runnable ones: first those closest to the
 * problem (same op, dims and types), and among them the rule that refuses
 * most of them first, so that the first reason shown is the one that matters.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MMA_EFF 1.08                              /* measured stage rate over the GEMM peak */
#define MMA_EFF_N256 0.93                         /* ... for warpgroups 256 columns wide */
#define LOAD_L2_BYTES_PER_SM_US 120e3            /* the operand feed of filters of several taps whose operands fit in L2 */
#define L2_RESIDENT_BYTES 24e6                    /* operands (x and w) that stay in L2: half the H200's 50 MB */
#define LOAD_LATENCY_US 1.2                       /* a stage's loads, issue to full barrier, under load */
#define DGRAD_LOAD_LATENCY_US 0.8                 /* ... dgrad's: its deeper pipelines won nothing on the H100
                                                     (S3D's 1x3x3 and 3x1x1 dgrad folded to 2D, 65 rows, 12
                                                     kernels each: 5 and 6 stages ran 1.0-1.1x the time of 4),
                                                     where 1.2 priced them 10-20% faster */
#define DGRAD_64_ROW_TAPS 1.3                     /* a 64-row tile's stage of a dgrad of several taps over the
                                                     model's: measured / predicted 1.37-1.55 there against
                                                     1.0-1.12 for 128x128 (H200: networks.txt, 39 rows; H100:
                                                     S3D, 61 rows) */
#define CLUSTER_STAGE_US 0.035                    /* extra per-stage latency of a 2-CTA cluster */
#define SWAP_STAGE 0.96                           /* a 64-filter swap kernel's stage over its pingpong twin's: wgmma
                                                     reads 40 KiB of shared memory a 256x64x64 stage, not 64 */
#define HALO_STAGE 0.92                           /* a halo kernel's stage over the model's */
#define ROW_STAGE_US 0.2                          /* a stage of one 64-byte row of K (tile K 32 of f16/bf16) that
                                                     a full-row twin would not run: a stage's fixed latency (fitted
                                                     on the H200, networks.txt's rows where the two differ) */
#define EPILOGUE_US_PER_KB 0.035                  /* per KiB of output tile */
#define TILE_FIXED_US 0.3
#define ALONE_EPILOGUE 1.5                        /* fprop: the epilogue of a tile one warpgroup stores alone
                                                     (pingpong, swap of 64 filters) over coop's, for its bytes */
#define WGRAD_LOAD_PER_SM_US 80e3                 /* wgrad's operand feed */
#define WGRAD_LOAD_64_PER_SM_US 64e3              /* ... for 64-row tiles */
#define WGRAD_SPLIT_STAGES 4                      /* sm90a wgrad: a deeper ring's split-K chosen as this deep
                                                     (split_ring): priced at their own depth, 6 and 8 stages chose
                                                     fewer slices on small grids and ran 0.70-0.86x as fast (H100,
                                                     docs/experiments.md) */
#define PHASE_LAUNCH_US 2.0                       /* a strided dgrad phase's launch and tail */
#define REGROUP_LAUNCH_US 2.0                     /* KEY_regroup's launch (turned or widened), as a phase's */
#define OVERLAP_REST 0.5
#define SEG_COST_BYTES 128.0                      /* output rows in tile-N segments: 1 + this / segment bytes */
#define MAX_SPLITS 64                             /* wgrad split-K slices at most */
#define MIN_SPLIT_STAGES 8                        /* ... each at least this many stages long */
#define MIN_CLUSTER_SPLIT_STAGES 2                /* ... in clusters (no reduction launch to amortize) */
#define SHORT_SLICE_US 2.0                        /* a cluster split-K grid of slices shorter than
                                                     MIN_SPLIT_STAGES over the model: such splits of 64x64
                                                     and 128x64 tiles (2-7 stages) ran 2.2-2.5 us above their
                                                     prediction, unsplit twins 0.5 (H200, S3D's 7x7 wgrad) */
#define CLUSTER_SUMS_BYTES_PER_US 16e3            /* cluster split-K: a CTA's f32 sums written to its ring and
                                                     the slab's read from the cluster's (distributed shared
                                                     memory), per SM (fitted on the H100: 20 rows run both ways
                                                     on one kernel) */
#define CLUSTER_GPC_FILL 0.9375                   /* clusters of 4 and 8 CTAs are placed within a GPC: on 132
                                                     SMs 30 of 4 and 15 of 8 ran at once, 32 and 16 took two
                                                     waves (H100) */

/* DRAM cost factor of an fprop or dgrad output written in row segments narrower than its
 * rows (tile N < GEMM N): 1 + 128 B / segment bytes (fitted with bench/model_check.py). */
static double segment_cost(const cvc_key *k, const cvc_view *v)
{
    const int64_t n = k->op == CONVCAT_FPROP ? v->p.k : v->p.c;
    if (k->op == CONVCAT_WGRAD || k->tile_n >= n)
        return 1.0;
    return 1.0 + SEG_COST_BYTES / ((double)k->tile_n * v->out_bytes);
}

/* Does entry e load B (the filters) once per ring slot on v, unsplit (flag REUSES_B): one tile
 * column, and a tile's K stages divide the ring, so that slot s always holds the same stage of B.
 * (Strided dgrad's phases are priced with B.) */
static bool b_once(const cvc_entry *e, const cvc_view *v)
{
    if (!cvc_has(e, CVC_F_REUSES_B) || (e->k.op == CONVCAT_DGRAD && v->strided))
        return false;
    int64_t tm, tn;
    cvc_cluster_tiles(e, v, &tm, &tn);
    const int64_t k_iters = cvc_k_iters(e, v);
    return tn == 1 && k_iters > 0 && e->k.stages % k_iters == 0;
}

/* One stage of K and a tile's fixed part (pipeline fill, epilogue) of entry e, in microseconds;
 * b_loaded: whether a stage loads B (see b_once); ring: the stages in its ring, as priced. */
static void tile_costs(const cvc_entry *e, const cvc_view *v, bool b_loaded, int ring, double *stage_us,
                       double *fixed_us)
{
    const cvc_key *k = &e->k;
    const convcat_problem *p = &v->p;
    const int in_bytes = v->a_bytes, out_bytes = v->out_bytes;
    const bool wgrad = k->op == CONVCAT_WGRAD;
    const bool halo = cvc_has(e, CVC_F_HALO);
    /* Wgrad loads both operands MN-major in 64-wide column boxes, B by im2col at a new pixel
     * split every stage: it feeds slower, and its 256-wide warpgroups lose nothing.  Swap
     * kernels of 128 filters: the warpgroups' wgmma is as wide as the tile's pixels, and 192
     * or 256 of them are priced as 256 (the one width measured below the peak).  Halo kernels'
     * warpgroups (64 filters each) are priced at the full rate. */
    const bool swap = cvc_has(e, CVC_F_SWAPS) && !halo;
    const bool swap64 = swap && k->tile_n == 64;   /* one warpgroup's tile, in turns */
    const bool wide = swap && k->tile_n == 128 ? e->mma_n >= 192 : e->wg_n == 256;
    const double mma_eff = wide && !wgrad ? MMA_EFF_N256 : MMA_EFF;
    /* A filter of several taps reads each input pixel once per tap within a few stages: where both
     * operands fit in L2, those reads hit and the feed is faster. */
    const double operand_bytes = (double)v->in_pixels * p->c * in_bytes + (double)p->k * v->taps * v->cg * in_bytes;
    const bool l2_fed = v->taps > 1 && operand_bytes <= L2_RESIDENT_BYTES;
    const double load_rate = wgrad ? (k->tile_m == 64 ? WGRAD_LOAD_64_PER_SM_US : WGRAD_LOAD_PER_SM_US)
                                   : l2_fed ? LOAD_L2_BYTES_PER_SM_US : CVC_LOAD_BYTES_PER_SM_US;
    const double mma_us = 2.0 * k->tile_m * k->tile_n * k->tile_k / CVC_PEAK_FLOP_PER_SM_US / mma_eff;
    /* The feed: at most load_rate, and at most the stages - 1 in flight per load latency.  Halo: a
     * stage is one tap's filters, and the block's input tile loads once per channel block, for all taps. */
    double stage_bytes = (double)(k->tile_m + (b_loaded ? k->tile_n : 0)) * k->tile_k * in_bytes;
    if (halo)
        stage_bytes = (double)k->tile_n * k->tile_k * in_bytes +
                      (double)e->halo_tile_rows * (e->halo_cols + e->halo_reach) * k->tile_k * in_bytes /
                          ((double)p->r * p->s);
    const double latency_us = k->op == CONVCAT_DGRAD ? DGRAD_LOAD_LATENCY_US : LOAD_LATENCY_US;
    const double load_us = fmax(stage_bytes / load_rate, latency_us / (ring > 1 ? ring - 1 : 1));
    *stage_us = fmax(mma_us, load_us) * (ring <= 2 ? 1.25 : ring == 3 ? 1.08 : 1.0) *
                (swap64 ? SWAP_STAGE : 1.0) * (halo && v->taps > 1 ? HALO_STAGE : 1.0);
    if (k->op == CONVCAT_DGRAD && v->taps > 1 && k->tile_m == 64)
        *stage_us *= DGRAD_64_ROW_TAPS;
    if (k->cluster_m * k->cluster_n > 1)
        *stage_us += CLUSTER_STAGE_US;
    if (k->tile_k * in_bytes < e->swizzle_bytes) {   /* a K row narrower than the swizzle span */
        /* The stages it runs beyond those of a full-row twin (a tap's channels past one narrow
         * row) each pay a stage's fixed latency, which does not halve with the row. */
        const int64_t ch = v->gemm.k / v->taps;   /* a tap's channels: the GEMM's K per tap */
        const int64_t narrow = cvc_ceil_div(ch, k->tile_k), full = cvc_ceil_div(ch, e->swizzle_bytes / in_bytes);
        *stage_us += ROW_STAGE_US * (double)(narrow - full) / (double)narrow;
    }
    /* One warpgroup stores a pingpong tile (and a 64-filter swap one) alone, where coop's two share it. */
    const bool alone = k->op == CONVCAT_FPROP && (k->schedule == CONVCAT_PINGPONG || swap64);
    *fixed_us = EPILOGUE_US_PER_KB * k->tile_m * k->tile_n * out_bytes / 1024.0 * segment_cost(k, v) *
                    (alone ? ALONE_EPILOGUE : 1.0) +
                TILE_FIXED_US;
}

/* Waves of a persistent grid over `ctas` CTAs: fewer SMs than a cluster has CTAs runs one
 * cluster at a time (never divide by 0). */
static int64_t waves_of(int64_t ctas, int sms, int cluster)
{
    return cvc_ceil_div(ctas, sms >= cluster ? sms / cluster * cluster : cluster);
}

/* The reduction of `slices` f32 partial sums of an M x N output (one more launch). */
static double reduce_us(const cvc_gemm *g, int slices, int out_bytes)
{
    return slices > 1 ? (double)g->m * g->n * (8.0 * slices + out_bytes) / CVC_DRAM_BYTES_PER_US + 2.0 : 0.0;
}

/* Split-K in clusters (flag CLUSTER_SPLITS): where the model prices it faster than through the
 * workspace (plans and the query's prices alike); CONVCAT_CLUSTER_SPLITS=1 wherever a kernel can (at
 * least two slices), =0 never (the GPU suite runs both ways).  -1: the model's choice. */
static int cluster_override(void)
{
    const char *env = getenv("CONVCAT_CLUSTER_SPLITS");
    return env && (env[0] == '0' || env[0] == '1') && !env[1] ? env[0] - '0' : -1;
}

int64_t cvc_cluster_split_waves(int64_t tiles, int sms, int slices)
{
    return waves_of(tiles * slices, slices > 2 ? (int)(sms * CLUSTER_GPC_FILL) : sms, slices);
}

/* A cluster split-K tile's fixed part besides its stages: its f32 sums into the ring, the
 * slab's sums read from the cluster's rings, the slab stored. */
static double cluster_fixed_us(const cvc_entry *e, const cvc_view *v, int slices)
{
    const double tile = (double)e->k.tile_m * e->k.tile_n;
    return tile * 4.0 / CLUSTER_SUMS_BYTES_PER_US + EPILOGUE_US_PER_KB * tile * v->out_bytes / slices / 1024.0 +
           TILE_FIXED_US;
}

/* A cluster split-K grid's time: tiles, each `slices` CTAs of per stages. */
static double cluster_split_us(const cvc_entry *e, const cvc_view *v, int sms, int64_t tiles, int slices, int64_t per,
                               double stage_us)
{
    return (double)cvc_cluster_split_waves(tiles, sms, slices) * ((double)per * stage_us + cluster_fixed_us(e, v, slices)) +
           (per < MIN_SPLIT_STAGES ? SHORT_SLICE_US : 0.0);
}

/* A tile's costs at one ring depth: a stage loading both operands, one of an unsplit tile (B maybe
 * loaded once a slot, b_once), and its fixed part. */
typedef struct ring_costs {
    double stage_us, once_us, fixed_us;
} ring_costs;

static ring_costs ring_costs_of(const cvc_entry *e, const cvc_view *v, int ring)
{
    ring_costs c;
    tile_costs(e, v, true, ring, &c.stage_us, &c.fixed_us);
    tile_costs(e, v, !b_once(e, v), ring, &c.once_us, &c.fixed_us);
    return c;
}

/* A split-K grid through the workspace: `tiles` tiles of `cluster` CTAs, each in `slices` slices of
 * per stages (KEY_reduce's time apart). */
static double workspace_split_us(const ring_costs *c, int64_t tiles, int cluster, int sms, int64_t slices, int64_t per)
{
    return (double)waves_of(tiles * cluster * slices, sms, cluster) *
           ((double)per * (slices == 1 ? c->once_us : c->stage_us) + c->fixed_us);
}

/* The ring depth at which a kernel's split-K is chosen: sm90a wgrad's deeper rings as
 * WGRAD_SPLIT_STAGES deep (their own depth prices the time of the split chosen). */
static int split_ring(const cvc_key *k)
{
    return k->op == CONVCAT_WGRAD && k->arch == CONVCAT_ARCH_SM90A && k->stages > WGRAD_SPLIT_STAGES ? WGRAD_SPLIT_STAGES
                                                                                                   : k->stages;
}

cvc_split cvc_split_for(const cvc_entry *e, const cvc_view *v, int sms, bool allow_cluster)
{
    if (sms <= 0)
        sms = CVC_MODEL_SMS;
    const int64_t k_iters = cvc_k_iters(e, v);
    const int cluster = e->k.cluster_m * e->k.cluster_n;
    int64_t tm, tn;
    cvc_cluster_tiles(e, v, &tm, &tn);
    /* The split is chosen at the ring depth split_ring prices; the time at the kernel's own. */
    const int ring = e->k.stages, choice_ring = split_ring(&e->k);
    const ring_costs choice = ring_costs_of(e, v, choice_ring);
    /* Grouped problems split only where the kernel says so (sm90a): its slices store the
     * diagonal blocks, dw's layout, and KEY_reduce adds them. */
    const bool splits = cvc_has(e, CVC_F_SPLITS_K) && (v->p.groups == 1 || cvc_has(e, CVC_F_GROUPED_SPLITS));
    cvc_split best = {0};
    double best_us = INFINITY;
    for (int64_t s = 1; s <= (splits ? MAX_SPLITS : 1) && (s == 1 || k_iters / s >= MIN_SPLIT_STAGES); ++s) {
        const int64_t per = cvc_ceil_div(k_iters, s), slices = cvc_ceil_div(k_iters, per);
        const double us = workspace_split_us(&choice, tm * tn, cluster, sms, slices, per);
        const double reduce = reduce_us(&v->gemm, (int)slices, v->out_bytes);
        if (us + reduce < best_us * 0.99) {   /* fewer slices unless more win clearly */
            best = (cvc_split){.splits = (int)slices, .split_iters = (int)per, .compute_us = us, .reduce_us = reduce};
            best_us = best.compute_us + reduce;
        }
    }
    /* Cluster split-K: the slices of a tile are a cluster (a power of two of them, at most
     * CVC_CLUSTER_SPLITS_MAX, every slice as long), a tile a CTA; no reduction launch. */
    const int force = cluster_override();
    if (splits && allow_cluster && cvc_has(e, CVC_F_CLUSTER_SPLITS) && v->p.groups == 1 && force != 0) {
        if (force == 1)
            best_us = INFINITY;
        for (int s = 2; s <= CVC_CLUSTER_SPLITS_MAX && k_iters / s >= MIN_CLUSTER_SPLIT_STAGES; s *= 2) {
            const int64_t per = cvc_ceil_div(k_iters, s);
            if (cvc_ceil_div(k_iters, per) != s)
                continue;
            const double us = cluster_split_us(e, v, sms, tm * tn, s, per, choice.stage_us);
            if (us < best_us * 0.99) {
                best = (cvc_split){.splits = s, .split_iters = (int)per, .cluster = true, .compute_us = us};
                best_us = us;
            }
        }
    }
    if (ring != choice_ring) {   /* the chosen split's time on the kernel's own ring */
        const ring_costs own = ring_costs_of(e, v, ring);
        best.compute_us = best.cluster ? cluster_split_us(e, v, sms, tm * tn, best.splits, best.split_iters, own.stage_us)
                                       : workspace_split_us(&own, tm * tn, cluster, sms, best.splits, best.split_iters);
    }
    return best;
}

int cvc_splits(const cvc_entry *e, const cvc_view *v, int sms, int *split_iters)
{
    const cvc_split s = cvc_split_for(e, v, sms, true);
    *split_iters = s.split_iters;
    return s.splits;
}

static double tma_predict_us(const cvc_entry *e, const cvc_view *v, int sms)
{
    const cvc_key *k = &e->k;
    const convcat_problem *p = &v->p;
    const cvc_split sp = cvc_split_for(e, v, sms, true);
    double compute_us = sp.compute_us;
    if (k->op == CONVCAT_DGRAD && v->strided) {   /* strided dgrad: a launch per stride phase */
        cvc_phase_classes sizes;   /* a launch's cost depends on its phase's sizes alone */
        cvc_dgrad_phase_classes(v, CVC_PHASE_SIZE, &sizes);
        const int cluster = k->cluster_m * k->cluster_n;
        double stage_us, fixed_us;
        tile_costs(e, v, sp.splits > 1 || !b_once(e, v), k->stages, &stage_us, &fixed_us);
        compute_us = 0.0;
        for (int i = 0; i < sizes.visits; ++i) {
            cvc_dgrad_phase ph;
            const double phases = (double)cvc_dgrad_phase_visit(v, &sizes, i, &ph);
            cvc_params kp = {0};
            cvc_phase_params(e, v, &ph, &kp);   /* the plan's own numbers for the launch */
            if (kp.k_iters == 0) {   /* KEY_fill writes the phase's dx pixels */
                compute_us += phases * ((double)kp.gemm_m * p->c * v->out_bytes / CVC_DRAM_BYTES_PER_US + PHASE_LAUNCH_US);
                continue;
            }
            const int64_t ctas = (int64_t)kp.cluster_tiles_m * kp.cluster_tiles_n * cluster;
            compute_us += phases * ((double)waves_of(ctas, sms, cluster) * ((double)kp.k_iters * stage_us + fixed_us) +
                                    PHASE_LAUNCH_US);
        }
    }
    /* x, w and y each move once (one of them is the op's output, its rows maybe in segments). */
    const double seg_cost = segment_cost(k, v);
    const double bytes = (double)v->in_pixels * p->c * v->a_bytes * (k->op == CONVCAT_DGRAD ? seg_cost : 1.0) +
                         cvc_filter_bytes(v) +
                         (double)v->pixels * p->k * v->out_bytes * (k->op == CONVCAT_FPROP ? seg_cost : 1.0);
    /* Compute and DRAM traffic overlap only in part: half the smaller still counts (it also breaks
     * the ties at the DRAM floor that memory-bound layers, wgrad's 1x1 ones above all, produced). */
    const double dram_us = bytes / CVC_DRAM_BYTES_PER_US;
    return fmax(compute_us, dram_us) + OVERLAP_REST * fmin(compute_us, dram_us) +
           sp.reduce_us;
}

double cvc_predict_us(const cvc_entry *e, const cvc_view *v, int sms)
{
    if (sms <= 0)
        sms = CVC_MODEL_SMS;
    /* The problem run: folded into 2D, a unit-stride dgrad as the fprop of dy, narrow groups widened;
     * turned or widened, after KEY_regroup's copy of the filter (read once, written as the kernel
     * reads it). */
    cvc_run run;
    if (cvc_run_view(e, v, &run, NULL, 0) != CONVCAT_OK)
        return INFINITY;
    if (cvc_regroups(&run))
        return tma_predict_us(e, &run.v, sms) + REGROUP_LAUNCH_US +
               (cvc_filter_bytes(v) + cvc_filter_bytes(&run.v)) / CVC_DRAM_BYTES_PER_US;
    v = &run.v;
    switch (e->family) {
    case CVC_FAMILY_GATHER: return cvc_gather_predict_us(e, v, sms);
    case CVC_FAMILY_DIRECT: return cvc_direct_predict_us(e, v, sms);
    default: return tma_predict_us(e, v, sms);
    }
}

/* A candidate, its pipeline depth (the ranking's tie-break), how close a refused kernel is to
 * the problem (same op, dims and types: 3) and the rule that refused it. */
typedef struct ranked {
    convcat_candidate c;
    int stages;
    int closeness;
    cvc_rule rule;
    int rule_count;   /* kernels of the same closeness this rule refuses */
} ranked;

/* Runnable first, fastest predicted first; at equal predictions (a feed-bound tile priced past
 * the latency term at 4 stages and at 5) the deeper pipeline first.  Then the refused: the
 * closest kernels first, the most common rule among them first.  Then catalog order. */
static int by_rank(const void *x, const void *y)
{
    const ranked *ra = x, *rb = y;
    const convcat_candidate *a = &ra->c, *b = &rb->c;
    if (a->ok != b->ok)
        return b->ok - a->ok;
    if (a->ok && a->predicted_us != b->predicted_us)
        return a->predicted_us < b->predicted_us ? -1 : 1;
    if (a->ok && ra->stages != rb->stages)
        return rb->stages - ra->stages;
    if (!a->ok && ra->closeness != rb->closeness)
        return rb->closeness - ra->closeness;
    if (!a->ok && ra->rule_count != rb->rule_count)
        return rb->rule_count - ra->rule_count;
    if (!a->ok && ra->rule != rb->rule)
        return (int)ra->rule - (int)rb->rule;
    return a->index < b->index ? -1 : a->index > b->index;
}

convcat_status convcat_query(const convcat_catalog *cat, const convcat_problem *p, convcat_arch arch,
                             int sm_count, convcat_candidate *out, size_t capacity, size_t *count_out,
                             size_t *ok_out)
{
    if (!cat || !p || !count_out || (!out && capacity))
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_query: NULL argument");
    if (arch != CONVCAT_ARCH_ANY && arch != CONVCAT_ARCH_SM90A && arch != CONVCAT_ARCH_SM100A)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_query: %d is not a convcat_arch", (int)arch);
    /* The model multiplies SM counts in int (waves, reduction grids): a machine of at most 4096. */
    if (sm_count > CVC_MAX_SM_COUNT)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_query: sm_count %d is more than the %d SMs the model "
                        "sizes", sm_count, CVC_MAX_SM_COUNT);
    ranked *all = calloc(cat->count ? cat->count : 1, sizeof *all);
    if (!all)
        return cvc_fail(CONVCAT_ERR_NO_MEMORY, "convcat_query: out of memory");
    char invalid[192];
    cvc_view v;
    const bool valid = cvc_view_make(p, &v, invalid, sizeof invalid) == CONVCAT_OK;
    size_t rows = 0, ok = 0;
    int counts[4][CVC_RULE_COUNT] = {{0}};
    for (size_t i = 0; i < cat->count; ++i) {
        const cvc_entry *e = &cat->entries[i];
        if (arch != CONVCAT_ARCH_ANY && e->k.arch != arch)
            continue;
        ranked *r = &all[rows++];
        r->stages = e->k.stages;
        r->closeness = (e->k.op == p->op) + (e->k.dims == p->dims) + (e->k.a == p->a_type && e->k.out == p->out_type);
        convcat_candidate *c = &r->c;
        c->index = i;
        if (!valid) {
            snprintf(c->reason, sizeof c->reason, "%s", invalid);
            r->rule = CVC_RULE_EXTENTS;
        } else {
            c->ok = cvc_check_entry(e, &v, c->reason, sizeof c->reason, &r->rule) == CONVCAT_OK;
        }
        if (c->ok) {
            c->predicted_us = cvc_predict_us(e, &v, sm_count);
            c->reason[0] = '\0';
            ++ok;
        } else {
            ++counts[r->closeness][r->rule];
        }
    }
    for (size_t i = 0; i < rows; ++i)
        all[i].rule_count = all[i].c.ok ? 0 : counts[all[i].closeness][all[i].rule];
    qsort(all, rows, sizeof *all, by_rank);
    const size_t n = rows < capacity ? rows : capacity;
    for (size_t i = 0; i < n; ++i)
        out[i] = all[i].c;
    free(all);
    *count_out = n;
    if (ok_out)
        *ok_out = ok;
    return CONVCAT_OK;
}

convcat_status cvc_rank(const convcat_catalog *cat, const convcat_problem *p, convcat_arch arch, int sms,
                        convcat_candidate **ranked, size_t *ok)
{
    *ranked = NULL;
    *ok = 0;
    convcat_candidate *c = malloc((cat->count ? cat->count : 1) * sizeof *c);
    if (!c)
        return cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory ranking kernels");
    size_t rows = 0;
    convcat_status st = convcat_query(cat, p, arch, sms, c, cat->count, &rows, ok);
    if (st == CONVCAT_OK && *ok == 0)
        st = rows ? cvc_fail(CONVCAT_ERR_NOT_FOUND, "no kernel can run the problem: none of the %zu %s kernels; e.g. %s: %s",
                             rows, convcat_arch_name(arch), cat->entries[c[0].index].key, c[0].reason)
                  : cvc_fail(CONVCAT_ERR_NOT_FOUND, "no kernel can run the problem: the catalog has no %s kernels",
                             convcat_arch_name(arch));
    if (st != CONVCAT_OK) {
        free(c);
        return st;
    }
    *ranked = c;
    return CONVCAT_OK;
}
