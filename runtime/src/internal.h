/* internal.h: what the runtime's modules share and the public header hides. */
#ifndef CONVCAT_INTERNAL_H
#define CONVCAT_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>

#include "catalog_format.h"
#include "convcat.h"
#include "convcat_kernel_abi.h"

#define CVC_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- errors (error.c) ----------------------------------------------------- */

/* Record `fmt` as this thread's convcat_last_error() and return `status`. */
convcat_status cvc_fail(convcat_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cvc_set_cuda_error(int result);
/* snprintf into a caller's optional buffer. */
void cvc_say(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- sizes --------------------------------------------------------------- */

int cvc_dtype_bytes(convcat_dtype t);

/* Multiply-and-shift division by d >= 1, exact for 0 <= x < 2^31:
 * x / d == (umulhi(x, m[0]) + x) >> m[1] (Granlund and Montgomery). */
static inline void cvc_divider(uint32_t d, uint32_t m[2])
{
    uint32_t shift = 0;
    while (shift < 32 && (UINT64_C(1) << shift) < d)
        ++shift;
    m[0] = (uint32_t)(((UINT64_C(1) << 32) * ((UINT64_C(1) << shift) - d)) / d + 1);
    m[1] = shift;
}

/* ---- keys (key.c) --------------------------------------------------------- */

typedef struct cvc_key {
    convcat_arch arch;
    convcat_op op;
    int dims;
    convcat_dtype a, b, acc, out;
    int tile_m, tile_n, tile_k;
    int stages;
    int cluster_m, cluster_n;
    convcat_schedule schedule;
    int fallback_m, fallback_n;   /* a dynamic cluster's fallback shape ("_cMxNfMxN_"); 0, 0: static */
} cvc_key;

/* Parse a canonical key; false with a reason on failure. */
bool cvc_key_parse(const char *text, cvc_key *out, char *why, size_t why_size);
/* Print the canonical key; returns the length (snprintf semantics). */
int cvc_key_print(const cvc_key *k, char *buf, size_t size);

static inline bool cvc_key_dynamic(const cvc_key *k) { return k->fallback_m > 0 || k->fallback_n > 0; }
/* Can a kernel prefer cluster_m x cluster_n and fall back to fallback_m x fallback_n?
 * The shape rules of sm100.why_invalid (the generator refuses such keys; the
 * runtime refuses a catalog entry that breaks them), with the same reasons. */
bool cvc_dynamic_cluster_valid(const cvc_key *k, char *why, size_t why_size);

/* ---- catalog (catalog.c) -------------------------------------------------- */

typedef struct cvc_entry {
    char key[CVC_KEY_BYTES];
    cvc_key k;
    int threads, smem_bytes, registers;
    int a_box_rows, a_box_cols, b_box_rows, b_box_cols, y_box_rows, y_box_cols, swizzle_bytes;
    int fb_a_box_rows, fb_b_box_rows;   /* dynamic cluster: the fallback shape's box rows (0: static) */
    const uint8_t *code;
    size_t code_size;
    /* Lazily loaded code (context-independent CUlibrary / CUkernel). */
    void *library;
    void *kernel;
    void *helper;        /* wgrad: KEY_reduce, the split-K reduction; dgrad: KEY_fill, a tap-less phase */
    void *transpose;     /* tf32 dgrad: KEY_transpose, the filter's K-major copy */
    void *strided;       /* sm90a scattering dgrad: KEY_strided, the kernel of a stride phase */
} cvc_entry;

struct convcat_catalog {
    uint8_t *data;       /* the whole file, mapped or copied */
    size_t size;
    bool mapped;
    cvc_entry *entries;
    size_t count;
    uint32_t id;          /* the index CRC: names this catalog's contents in tune caches */
    pthread_mutex_t lock; /* guards lazy code loading */
};

/* A dynamic-cluster entry as its fallback shape sees it: the same kernel with
 * cluster = fallback and the fallback's box rows, so that cvc_tma_operands and
 * cvc_tma_dgrad_a give the fallback descriptor set. */
static inline cvc_entry cvc_entry_fallback(const cvc_entry *e)
{
    cvc_entry f = *e;
    f.k.cluster_m = e->k.fallback_m, f.k.cluster_n = e->k.fallback_n;
    f.k.fallback_m = f.k.fallback_n = 0;
    f.a_box_rows = e->fb_a_box_rows, f.b_box_rows = e->fb_b_box_rows;
    f.fb_a_box_rows = f.fb_b_box_rows = 0;
    return f;
}

/* Load the entry's code once; *kernel_out is a CUkernel (and e->helper, for wgrad and dgrad). */
convcat_status cvc_entry_kernel(convcat_catalog *cat, cvc_entry *e, void **kernel_out);

/* ---- problems and rules (problem.c) -------------------------------------- */

/* Extents of the GEMM the kernel runs, derived from a problem. */
typedef struct cvc_gemm {
    int64_t m, n, k;          /* fprop: N*Z*P*Q, K, T*R*S*C; dgrad: N*D*H*W, C, T*R*S*K;
                                 wgrad: K, T*R*S*C, N*Z*P*Q */
    int64_t pixels;           /* N*Z*P*Q: the forward output's pixels */
    int64_t taps;             /* T*R*S */
    int z, p, q;              /* forward output extents */
} cvc_gemm;

convcat_status cvc_problem_gemm(const convcat_problem *p, cvc_gemm *g, char *why, size_t why_size);

static inline int64_t cvc_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Stages of K per tile: fprop and dgrad, whole channel blocks of the im2col
 * operand (C, or dy's K) for every filter tap; wgrad, blocks of pixels. */
static inline int64_t cvc_k_iters(const cvc_entry *e, const convcat_problem *p, const cvc_gemm *g)
{
    switch (e->k.op) {
    case CONVCAT_DGRAD: return g->taps * cvc_ceil_div(p->k, e->k.tile_k);
    case CONVCAT_WGRAD: return cvc_ceil_div(g->pixels, e->k.tile_k);
    default: return g->taps * cvc_ceil_div(p->c, e->k.tile_k);
    }
}

/* Wgrad's GEMM N is T*R*S*C.  With C a multiple of a 128-byte column (64
 * 16-bit channels) every TMA column box lies within one filter tap and tiles
 * run over it flat; otherwise each tile is a channel block of one tap.  A
 * grouped wgrad is never flat: its tile is one tap of the M tile's channels. */
static inline bool cvc_wgrad_flat(const cvc_entry *e, const convcat_problem *p)
{
    return p->groups == 1 && p->c % (e->swizzle_bytes / cvc_dtype_bytes(p->b_type)) == 0;
}

/* Can a wgrad kernel run grouped problems (groups > 1, K == C)?  Its tile is
 * Tile_M filters by the same Tile_N channels (tile M == tile N: whole c x c
 * diagonal blocks), and no CTA shares its B, x at the M tile's channels,
 * along cluster M (cluster M 1; no sm100a 2sm pair).  space.groups_wgrad. */
static inline bool cvc_groups_wgrad(const cvc_key *k)
{
    return k->op == CONVCAT_WGRAD && k->tile_m == k->tile_n && k->cluster_m == 1;
}

/* Tiles along GEMM N: grouped wgrad, one per filter tap. */
static inline int64_t cvc_tiles_n(const cvc_entry *e, const convcat_problem *p, const cvc_gemm *g)
{
    if (e->k.op == CONVCAT_WGRAD && !cvc_wgrad_flat(e, p))
        return g->taps * (p->groups > 1 ? 1 : cvc_ceil_div(p->c, e->k.tile_n));
    return cvc_ceil_div(g->n, e->k.tile_n);
}

/* Schedule halo (space.halo_tiles): a tile is tile_m / CVC_HALO_COLS output rows x CVC_HALO_COLS
 * columns of one image, and its input tile reaches CVC_HALO_REACH pixels further down and right. */
#define CVC_HALO_COLS 8
#define CVC_HALO_REACH 2

/* A halo kernel's input tile: its rows (space.derive's a_box_rows) and its pixels per row. */
static inline int cvc_halo_tile_rows(const cvc_key *k) { return k->tile_m / CVC_HALO_COLS + CVC_HALO_REACH; }
#define CVC_HALO_TILE_COLS (CVC_HALO_COLS + CVC_HALO_REACH)

/* Tiles along GEMM M: runs of tile_m pixels, or (halo) output blocks of every image. */
static inline int64_t cvc_tiles_m(const cvc_entry *e, const convcat_problem *p, const cvc_gemm *g)
{
    if (e->k.schedule == CONVCAT_HALO)
        return (int64_t)p->n * g->z * cvc_ceil_div(g->p, e->k.tile_m / CVC_HALO_COLS) * cvc_ceil_div(g->q, CVC_HALO_COLS);
    return cvc_ceil_div(g->m, e->k.tile_m);
}

/* Cluster tiles along GEMM M and N: what the persistent grid walks (times wgrad's splits). */
static inline void cvc_cluster_tiles(const cvc_entry *e, const convcat_problem *p, const cvc_gemm *g, int64_t *m,
                                     int64_t *n)
{
    *m = cvc_ceil_div(cvc_tiles_m(e, p, g), e->k.cluster_m);
    *n = cvc_ceil_div(cvc_tiles_n(e, p, g), e->k.cluster_n);
}

/* Split-K (query.c; wgrad and the fprop kernels of cvc_splits_k): the number of slices of the K loop that
 * minimizes the time model's waves x (stages per slice + a tile's fixed cost)
 * plus the reduction's traffic on `sms` SMs, each slice at least 8 stages
 * long; *split_iters is the stages per slice.  1 for dgrad and sm100a grouped wgrad. */
int cvc_splits(const cvc_entry *e, const convcat_problem *p, const cvc_gemm *g, int sms, int *split_iters);

/* Device scratch a plan with `splits` slices needs: the f32 partial sums, of whole tiles
 * (grouped wgrad: (C, T*R*S, K), every group's channels, not only the diagonal blocks). */
static inline size_t cvc_workspace_bytes(const convcat_problem *p, const cvc_gemm *g, int splits)
{
    const size_t n = p->op == CONVCAT_WGRAD && p->groups > 1 ? (size_t)g->taps * (size_t)p->c : (size_t)g->n;
    return splits > 1 ? (size_t)splits * (size_t)g->m * n * sizeof(float) : 0;
}
convcat_status cvc_check_entry(const cvc_entry *e, const convcat_problem *p, char *why, size_t why_size);

/* ---- TMA descriptor parameters (tma.c), pure C, tested on the CPU -------- */

typedef struct cvc_im2col_desc {
    int rank;                 /* 3, 4, 5 */
    int elem_bytes;
    uint64_t dims[5];         /* innermost first: C, W, (H, (D,)) N */
    uint64_t strides[4];      /* bytes of dims 1..rank-1 */
    int lower[3], upper[3];   /* rank-2 corners, W first */
    uint32_t max_offset[3];   /* largest im2col offset (tap x dilation) the kernel passes, W first */
    uint32_t channels_per_pixel, pixels_per_column;
    uint32_t elem_strides[5];
    int swizzle_bytes;
} cvc_im2col_desc;

typedef struct cvc_tiled_desc {
    int rank;
    int elem_bytes;
    uint64_t dims[5];
    uint64_t strides[4];
    uint32_t box[5];
    uint32_t elem_strides[5];
    int swizzle_bytes;
} cvc_tiled_desc;

/* Strided dgrad: dx splits into stride phases, the dx pixels ph + stride * j
 * of a residue ph per axis.  Each is a dense problem over the filter taps that
 * reach it, tap0, tap0 - tap_step, ... (taps of them), read from dy at
 * j + lower + i * dil for tap i.  Unit stride is one phase of every tap. */
typedef struct cvc_phase_axis {
    int ph;          /* residue of dx pixels modulo the stride */
    int pixels;      /* dx pixels of the phase along the axis */
    int taps;        /* filter taps that reach them (0: none, dx there is beta * C) */
    int tap0, tap_step;
    int dil;         /* dy step between consecutive taps */
    int lower, upper;   /* the phase's im2col bounding box over dy */
} cvc_phase_axis;

typedef struct cvc_dgrad_phase {
    cvc_phase_axis axis[3];   /* W, H, D */
} cvc_dgrad_phase;

/* tf32 dgrad reads B from a K-major copy of the filter, (T, R, S, C, K) with K
 * innermost, that KEY_transpose writes into the workspace first
 * (space.transposes_filter). */
static inline bool cvc_transposes_filter(const cvc_key *k)
{
    return k->op == CONVCAT_DGRAD && k->a == CONVCAT_TF32;
}

/* wgmma's operands swapped, M = the filters, N = the tile's pixels (space.swaps_operands): the
 * sm90a schedules swap and halo. */
static inline bool cvc_swaps_operands(const cvc_key *k)
{
    return k->schedule == CONVCAT_SWAP || k->schedule == CONVCAT_HALO;
}

/* One consumer warpgroup's columns of an sm90a tile, as space.derive splits
 * it: pingpong and coop of tile M >= 128 keep whole rows, coop of tile M 64
 * halves them; swap and halo give each warpgroup 64 filters (all of tile N 64,
 * half of 128). */
static inline int cvc_sm90_wg_n(const cvc_key *k)
{
    if (cvc_swaps_operands(k))
        return 64;
    return k->schedule == CONVCAT_PINGPONG || k->tile_m >= 128 ? k->tile_n : k->tile_n / 2;
}

/* f32 accumulators per consumer thread of an sm90a kernel, as space.derive
 * splits the tile between its two warpgroups (coop) or not (pingpong; swap
 * keeps every pixel of the tile in each warpgroup). */
static inline int cvc_sm90_acc_regs(const cvc_key *k)
{
    if (cvc_swaps_operands(k))
        return k->tile_m / 2;   /* one m64 atom of filters over all the tile's pixels (wgmma N) */
    const bool whole_rows = k->schedule == CONVCAT_PINGPONG;
    const int wg_m = whole_rows ? k->tile_m : k->tile_m >= 128 ? k->tile_m / 2 : k->tile_m;
    return (wg_m / 64) * (cvc_sm90_wg_n(k) / 2);
}

/* Can the kernel split its K loop (f32 partial sums, KEY_reduce)?  wgrad
 * always; sm90a fprop with fewer than 128 accumulators per thread
 * (space.splits_k: a second epilogue beside 128 spills), but for swap and
 * halo (their transposing epilogue has no f32 form). */
static inline bool cvc_splits_k(const cvc_key *k)
{
    if (k->op == CONVCAT_WGRAD)
        return true;
    return k->op == CONVCAT_FPROP && k->arch == CONVCAT_ARCH_SM90A && !cvc_swaps_operands(k) &&
           cvc_sm90_acc_regs(k) < 128;
}

/* Does a dgrad kernel carry the strided (row-scattering) epilogue?  Not an
 * sm90a one whose warpgroups hold 128 accumulators (space.dgrad_scatters:
 * ptxas spills there). */
static inline bool cvc_dgrad_scatters(const cvc_key *k)
{
    if (k->op != CONVCAT_DGRAD)
        return false;
    return k->arch != CONVCAT_ARCH_SM90A || cvc_sm90_acc_regs(k) < 128;
}

/* The stride phases of a dgrad problem that have dx pixels (at most 8*8*8;
 * 0 for an invalid problem), and phase `index` of them, W fastest. */
int cvc_dgrad_phase_count(const convcat_problem *p);
void cvc_dgrad_phase_at(const convcat_problem *p, int index, cvc_dgrad_phase *out);
/* The kernel parameters of one stride phase (plan.c): its grid, taps, dy corner,
 * scatter into dx, K loop and cluster tiles, over the rest of `k`. */
void cvc_phase_params(const cvc_entry *e, const convcat_problem *p, const cvc_dgrad_phase *ph, cvc_params *k);
/* The sm90a raster band of a plan's launch (cvc_params.raster_band; plan.c says the rule). */
int cvc_raster_band(const cvc_entry *e, const convcat_problem *p, const cvc_params *k, int sms);
/* Persistent grid (plan.c): CTAs for `fit` clusters of `cluster` CTAs at once, at most one per
 * cluster tile; a multiple of `cluster` (the preferred shape of a dynamic cluster, as the
 * driver requires).  Dynamic: `fit` counts the CTAs `active_fb` fallback clusters of `fallback`
 * CTAs place, in whole preferred clusters, when more than `active` preferred ones fit. */
int cvc_grid_for(const cvc_params *k, int64_t fit, int cluster);
int64_t cvc_dynamic_fit(int active, int active_fb, int cluster, int fallback);
/* The im2col map of dy for one phase. */
void cvc_tma_dgrad_a(const cvc_entry *e, const convcat_problem *p, const cvc_dgrad_phase *ph, cvc_im2col_desc *a);

/* One GEMM operand's tensor map: im2col (the activations) or tiled. */
typedef struct cvc_operand_desc {
    bool im2col;
    cvc_im2col_desc i;
    cvc_tiled_desc t;
} cvc_operand_desc;

/* The operand descriptors of an entry for a problem (pointers come at run time):
 * fprop  A = x im2col, B = w tiled (C, S, R, T, K), box rows of K
 * dgrad  A = dy im2col (the filter turned around; the first stride phase's), B = w tiled, box rows of dy's K
 * wgrad  A = dy tiled (K, N*Z*P*Q), B = x im2col */
void cvc_tma_operands(const cvc_entry *e, const convcat_problem *p, cvc_operand_desc *a, cvc_operand_desc *b);
/* The output as the epilogue's TMA store sees it: fprop and dgrad a 2D
 * (GEMM N, GEMM M) tensor, wgrad dw as 3D (C, T*R*S, K) or, with split-K,
 * the f32 workspace as 4D (C, T*R*S, K, splits); boxes of the entry's output box. */
void cvc_tma_output(const cvc_entry *e, const convcat_problem *p, int splits, cvc_tiled_desc *y);
/* Every TMA limit, with a reason for the first one broken. */
bool cvc_im2col_desc_valid(const cvc_im2col_desc *d, char *why, size_t why_size);
bool cvc_tiled_desc_valid(const cvc_tiled_desc *d, char *why, size_t why_size);

/* ---- query heuristic (query.c) ------------------------------------------- */

/* Predicted microseconds of entry e on a problem that passed its rules. */
double cvc_predict_us(const cvc_entry *e, const convcat_problem *p, int sm_count);

/* ---- autotune cache (tune.c) --------------------------------------------- */

/* Remember `key` (`ms`) as the winner for a problem on an arch with a catalog. */
convcat_status cvc_tune_cache_put(convcat_tune_cache *c, uint32_t catalog_id, convcat_arch arch,
                                  const convcat_problem *p, const char *key, double ms);
/* The remembered winner's key and time, or false. */
bool cvc_tune_cache_get(convcat_tune_cache *c, uint32_t catalog_id, convcat_arch arch,
                        const convcat_problem *p, char *key, size_t key_size, double *ms);

/* Median milliseconds of `iters` launches of a plan on `stream` (CUDA events,
 * after two warm-up launches). */
convcat_status cvc_time_plan(const convcat_plan *plan, const convcat_tensors *t, void *stream, int iters,
                             double *ms);


#endif
