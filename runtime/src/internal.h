/* internal.h: what the runtime's modules share and the public header hides.
 *
 * The modules, each using only those above it:
 *   error.c, crc32.c, key.c, driver.c   messages, checksums, the key grammar, the driver
 *   catalog.c                           the catalog file: open, verify, index, load code
 *   problem.c                           a problem resolved once (cvc_view)
 *   tma.c                               TMA descriptor parameters and limits; dgrad stride phases
 *   gather.c, direct.c                  the gather and direct families: rules, model, launch
 *   rules.c                             can a kernel run a problem (convcat_check)
 *   query.c                             the time model and the ranking (convcat_query)
 *   plan.c                              plans and launches (convcat_plan_*)
 *   tune.c                              autotuning and its cache
 * Every fact of the kernel space (what a kernel can do, its helper kernels, its geometry)
 * comes from the catalog index (cvc_entry), which the generator wrote: nothing here
 * restates a rule of generator/convcat_gen/.
 */
#ifndef CONVCAT_INTERNAL_H
#define CONVCAT_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>

#include "convcat.h"
#include "convcat_kernel_abi.h"
#include "cvc_index_layout.h"

#define CVC_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- errors (error.c) ----------------------------------------------------- */

/* Record `fmt` as this thread's convcat_last_error() and return `status`. */
convcat_status cvc_fail(convcat_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cvc_set_cuda_error(int result);
/* This thread's last error, kept across a probe whose failure the calling function handles and
 * goes on from (convcat_last_error() names the last failing call, not a probe inside one that
 * succeeded). */
typedef struct cvc_error_state {
    char text[512];
    int cuda;
} cvc_error_state;
void cvc_error_save(cvc_error_state *s);
void cvc_error_restore(const cvc_error_state *s);
/* snprintf into a caller's optional buffer. */
void cvc_say(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

uint32_t cvc_crc32(const void *data, size_t size);

/* ---- sizes --------------------------------------------------------------- */

int cvc_dtype_bytes(convcat_dtype t);

static inline int64_t cvc_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Greatest common divisor of two positive ints. */
static inline int cvc_gcd(int a, int b)
{
    while (b) {
        const int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

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

/* The most SMs the time model sizes a machine for (convcat_query's sm_count). */
#define CVC_MAX_SM_COUNT 4096

/* The machine the time model describes (query.c, gather.c, direct.c), fitted on the H200 and H100:
 * its SMs where the caller gives none, its dense bf16 GEMM peak an SM, the operand bytes an SM's
 * loads feed its MMAs, and DRAM's rate. */
#define CVC_MODEL_SMS 132
#define CVC_PEAK_FLOP_PER_SM_US (787e6 / CVC_MODEL_SMS)   /* per SM per microsecond */
#define CVC_LOAD_BYTES_PER_SM_US 85e3                     /* per SM per microsecond, 16-byte chunks */
#define CVC_DRAM_BYTES_PER_US 4.3e6

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

/* One index record (generator/convcat_gen/index.py says what each field holds). */
typedef struct cvc_entry {
    char key[CVC_KEY_BYTES];
    cvc_key k;
    int family;                 /* CVC_FAMILY_* */
    int threads, smem_bytes, registers;
    int a_box_rows, a_box_cols, b_box_rows, b_box_cols, y_box_rows, y_box_cols, swizzle_bytes;
    int fb_a_box_rows, fb_b_box_rows;   /* dynamic cluster: the fallback shape's box rows (0: static) */
    uint32_t flags;             /* CVC_F_* */
    int acc_regs, wg_n, mma_n;
    int c_align, k_align, max_stride, groups_mode;
    uint32_t group_c_mask;
    int halo_cols, halo_reach, halo_tile_rows;
    int vec_mask, block_vec, block_strip, block_run, max_taps;
    int row_mask, group_row_mask;   /* direct: filter rows with compiled-in taps (cvc_shape_bit) */
    int unit_taps, ring_taps;       /* direct wgrad: taps of a unit, a ring's taps a pass */
    int stage_pixel_bytes;          /* direct, stages > 1: bytes of a staged tile's pixel (0: not staged) */
    int a_stage_bytes, b_stage_bytes, epi_bytes;
    const uint8_t *code;
    size_t code_size;
    /* Lazily loaded code (context-independent CUlibrary / CUkernel). */
    void *library;
    void *kernel;
    void *helper;        /* KEY_reduce (split-K), KEY_fill (a tap-less stride phase) */
    void *transpose;     /* KEY_transpose: tf32 dgrad's K-major filter copy; KEY_regroup: the grouped schedule's turned or widened filter */
    void *strided;       /* KEY_strided: sm90a stride phases */
} cvc_entry;

static inline bool cvc_has(const cvc_entry *e, uint32_t flag) { return (e->flags & flag) != 0; }

/* Does a shape mask of the index (index.shape_bits) have filters of `taps` taps at stride `stride`? */
static inline bool cvc_shape_bit(int mask, int64_t taps, int64_t stride)
{
    return taps > 0 && taps < 8 && (stride == 1 || stride == 2) && (mask >> (taps + 8 * (stride - 1)) & 1);
}

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

/* Load the entry's code once; *kernel_out is a CUkernel (and its helpers, as its flags say). */
convcat_status cvc_entry_kernel(convcat_catalog *cat, cvc_entry *e, void **kernel_out);

/* ---- a problem, resolved once (problem.c) --------------------------------- */

/* Extents of the dense GEMM a TMA-family kernel runs. */
typedef struct cvc_gemm {
    int64_t m, n, k;          /* fprop: N*Z*P*Q, K, T*R*S*C; dgrad: N*D*H*W, C, T*R*S*K;
                                 wgrad: K, T*R*S*C/groups, N*Z*P*Q */
} cvc_gemm;

/* Everything the rules, the model and the planner derive from a problem, computed by
 * cvc_view_make at the start of convcat_check, convcat_query and convcat_plan_create. */
typedef struct cvc_view {
    convcat_problem p;
    int in[3], filt[3];       /* D, H, W and T, R, S */
    int out[3];               /* Z, P, Q: the forward output's extents */
    int64_t pixels;           /* N*Z*P*Q */
    int64_t in_pixels;        /* N*D*H*W */
    int64_t taps;             /* T*R*S */
    int64_t reach[3];         /* (filter - 1) * dilation per axis */
    int cg, kg;               /* channels and filters per group */
    int a_bytes, b_bytes, out_bytes;
    bool strided;             /* a stride > 1 */
    int phases;               /* dgrad: stride phases that have dx pixels (1 at unit stride) */
    int axis_phases[3];       /* dgrad: the residues of each axis, W, H, D, whose product `phases` is */
    bool patch;               /* a patch convolution (a stride > 1, stride = filter and input = output x
                               * stride on every axis, no padding, dilation only on 1-tap axes): each x
                               * pixel is in one tap of one output pixel, and a filter row's taps read
                               * S * C contiguous elements of x */
    bool folds;               /* a 3D problem that is a 2D one over the same memory (cvc_folded_view) */
    cvc_gemm gemm;
} cvc_view;

/* Resolve `p`; false (CONVCAT_ERR_UNSUPPORTED, with the reason) if its extents are invalid. */
convcat_status cvc_view_make(const convcat_problem *p, cvc_view *v, char *why, size_t why_size);
/* A unit-stride dgrad as the fprop of dy (kernels of flag DGRAD_AS_FPROP): input dy (K channels),
 * output dx (C), groups alike with c and k exchanged, the filters of each group transposed with
 * their taps reversed (KEY_regroup), padding reach - pad on each side.  CONVCAT_ERR_UNSUPPORTED with
 * the reason where a stride is > 1 or a padding passes the filter's reach. */
convcat_status cvc_turned_view(const cvc_view *v, cvc_view *out, char *why, size_t why_size);
/* A 3D problem whose filter is trivial along D (T = 1, no padding or stride along D: D joins the
 * batch, N x D images of H x W) or along H and W (R = S = 1, no padding or stride along them: a 2D
 * problem of D x (H*W) images and a T x 1 filter) as the 2D problem it is, NDHWC being N(DH)WC and
 * ND(HW)C; 2D kernels take it so (cvc_folds), 3D kernels as it was given. */
convcat_status cvc_folded_view(const cvc_view *v, cvc_view *out);
/* Does 2D entry e take the 3D problem v folded into 2D? */
static inline bool cvc_folds(const cvc_entry *e, const cvc_view *v)
{
    return v->folds && e->k.dims == 2;
}
/* Groups of c channels and k filters as `widen` times fewer groups of widen * c and widen * k (the
 * same tensors: adjacent groups' channels and filters are adjacent), run with a block-diagonal
 * filter (KEY_regroup).  CONVCAT_ERR_UNSUPPORTED where widen does not divide groups. */
convcat_status cvc_widened_view(const cvc_view *v, int widen, cvc_view *out);
/* The factor by which entry e widens the groups of fprop v (flag WIDENS_GROUPS): the smallest power
 * of two whose widened groups its packs take, where they do not take v's own, leaving at least 2
 * groups; 1 otherwise (rules.c). */
int cvc_widening(const cvc_entry *e, const cvc_view *v);
/* Does entry e take the dgrad problem v as the fprop of dy (flag DGRAD_AS_FPROP)? */
static inline bool cvc_turns(const cvc_entry *e, const cvc_view *v)
{
    return v->p.op == CONVCAT_DGRAD && e->k.op == CONVCAT_FPROP && cvc_has(e, CVC_F_DGRAD_AS_FPROP);
}
/* The problem a kernel runs for a problem whose rules it passed: v folded into 2D (cvc_folds), a
 * unit-stride dgrad turned into the fprop of dy (cvc_turns), then narrow groups widened
 * (cvc_widening), in that order, as the rules take them (cvc_check_entry).  Turned or widened, KEY_regroup
 * writes the filter the kernel reads first. */
typedef struct cvc_run {
    cvc_view v;     /* the problem run */
    bool turned;    /* a dgrad as the fprop of dy */
    int widen;      /* groups run `widen` as one (1: not) */
} cvc_run;
convcat_status cvc_run_view(const cvc_entry *e, const cvc_view *v, cvc_run *run, char *why, size_t why_size);
static inline bool cvc_regroups(const cvc_run *run)
{
    return run->turned || run->widen > 1;
}
/* Bytes of the filter tensor (K, T, R, S, C / groups). */
static inline double cvc_filter_bytes(const cvc_view *v)
{
    return (double)v->p.k * v->taps * v->cg * v->b_bytes;
}

/* ---- TMA descriptor parameters and stride phases (tma.c), pure C, tested on the CPU -- */

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

/* Phase `index` of the view's dgrad problem (0 <= index < v->phases), W fastest. */
void cvc_dgrad_phase_at(const cvc_view *v, int index, cvc_dgrad_phase *out);

/* A strided dgrad's phases grouped by what a use of them depends on: along each axis the
 * residues with distinct keys (CVC_PHASE_BOX: the dy box, (lower, upper) and the taps' reach;
 * CVC_PHASE_SIZE: the launch's (pixels, taps)), in residue order, each with how many residues
 * share it.  The phases are every combination of the axes' residues, so a visit of each
 * combination of classes, weighted by the phases it stands for, sees what every phase would; with
 * more than CVC_PHASE_CLASSES classes on an axis the visits are the phases themselves, weight 1. */
#define CVC_PHASE_CLASSES 16
typedef enum cvc_phase_key { CVC_PHASE_BOX, CVC_PHASE_SIZE } cvc_phase_key;
typedef struct cvc_phase_classes {
    cvc_phase_axis axis[3][CVC_PHASE_CLASSES];   /* W, H, D */
    int count[3][CVC_PHASE_CLASSES];
    int n[3];          /* classes an axis (more than CVC_PHASE_CLASSES: not all written) */
    int visits;        /* combinations of classes, or the phases */
    bool every;
} cvc_phase_classes;

void cvc_dgrad_phase_classes(const cvc_view *v, cvc_phase_key key, cvc_phase_classes *c);

/* Visit i (0 <= i < c->visits): a phase standing for its combination of classes; returns how many
 * phases it stands for. */
int64_t cvc_dgrad_phase_visit(const cvc_view *v, const cvc_phase_classes *c, int i, cvc_dgrad_phase *ph);

/* The index of phase `ph` (the inverse of cvc_dgrad_phase_at). */
int cvc_dgrad_phase_index(const cvc_view *v, const cvc_dgrad_phase *ph);

/* One GEMM operand's tensor map: im2col (the activations) or tiled. */
typedef struct cvc_operand_desc {
    bool im2col;
    cvc_im2col_desc i;
    cvc_tiled_desc t;
} cvc_operand_desc;

/* The operand descriptors of a TMA entry for a problem (pointers come at run time):
 * fprop  A = x im2col, B = w tiled (C, S, R, T, K), box rows of K
 * dgrad  A = dy im2col (the filter turned around; the first stride phase's), B = w tiled, box rows of dy's K
 * wgrad  A = dy tiled (K, N*Z*P*Q), B = x im2col */
void cvc_tma_operands(const cvc_entry *e, const cvc_view *v, cvc_operand_desc *a, cvc_operand_desc *b);
/* The im2col map of dy for one phase. */
void cvc_tma_dgrad_a(const cvc_entry *e, const cvc_view *v, const cvc_dgrad_phase *ph, cvc_im2col_desc *a);
/* The output as the epilogue's TMA store sees it: fprop and dgrad a 2D
 * (GEMM N, GEMM M) tensor, wgrad dw as 3D (C, T*R*S, K) or, with split-K,
 * the f32 workspace as 4D (C, T*R*S, K, splits); boxes of the entry's output box. */
void cvc_tma_output(const cvc_entry *e, const cvc_view *v, int splits, cvc_tiled_desc *y);
/* The dims and byte strides of a packed channel-innermost tensor of extents `ext`, innermost first. */
void cvc_packed_layout(int rank, int elem_bytes, const uint64_t *ext, uint64_t *dims, uint64_t *strides);
/* Every TMA limit, with a reason for the first one broken. */
bool cvc_im2col_desc_valid(const cvc_im2col_desc *d, char *why, size_t why_size);
bool cvc_tiled_desc_valid(const cvc_tiled_desc *d, char *why, size_t why_size);

/* TMA-family geometry: wgrad's tiles over T*R*S*C run flat when C is whole column boxes;
 * the K loop's stages; tiles along M (halo: output blocks) and N; cluster tiles. */
bool cvc_wgrad_flat(const cvc_entry *e, const cvc_view *v);
int64_t cvc_k_iters(const cvc_entry *e, const cvc_view *v);
int64_t cvc_tiles_m(const cvc_entry *e, const cvc_view *v);
int64_t cvc_tiles_n(const cvc_entry *e, const cvc_view *v);
void cvc_cluster_tiles(const cvc_entry *e, const cvc_view *v, int64_t *m, int64_t *n);
/* The kernel parameters of one stride phase: its grid, taps, dy corner, scatter into dx,
 * K loop and cluster tiles, over the rest of `k`. */
void cvc_phase_params(const cvc_entry *e, const cvc_view *v, const cvc_dgrad_phase *ph, cvc_params *k);
/* Device scratch a TMA plan with `splits` slices needs: the f32 partial sums, of whole tiles
 * (grouped wgrad: (C, T*R*S, K), every group's channels, not only the diagonal blocks). */
size_t cvc_workspace_bytes(const cvc_view *v, int splits);

/* ---- the gather and direct families (gather.c, direct.c) -------------------- */

/* The family's rules (after the common ones of rules.c); CONVCAT_OK or a reason. */
convcat_status cvc_gather_rules(const cvc_entry *e, const cvc_view *v, char *why, size_t why_size);
convcat_status cvc_direct_rules(const cvc_entry *e, const cvc_view *v, char *why, size_t why_size);
/* Predicted microseconds on `sms` SMs. */
double cvc_gather_predict_us(const cvc_entry *e, const cvc_view *v, int sms);
double cvc_direct_predict_us(const cvc_entry *e, const cvc_view *v, int sms);

/* A launch of a pointer-family kernel: its grid, block, shared memory and parameters. */
typedef struct cvc_launch {
    unsigned grid, block, smem;
    union {
        cvc_gather_params g;
        cvc_direct_params d;
    } u;
    cvc_tiled_desc map;   /* direct kernels of flag TMA_TILE: their input's tensor map (the kernel's first parameter) */
} cvc_launch;

/* The launches of a plan (dgrad: one per stride phase), without pointers and scalars;
 * `count` of them at most `cap` (NULL: count only); the workspace and the reduction's grid. */
typedef struct cvc_launches {
    int count;
    cvc_launch *l;
    size_t workspace_bytes;
    unsigned reduce_grid;     /* 0: no reduction */
} cvc_launches;
/* `out` cleared, with `count` zeroed launches (the gather and direct planners fill them). */
convcat_status cvc_launches_alloc(cvc_launches *out, int count);
convcat_status cvc_gather_launches(const cvc_entry *e, const cvc_view *v, int sms, cvc_launches *out);
convcat_status cvc_direct_launches(const cvc_entry *e, const cvc_view *v, int sms, cvc_launches *out);

/* ---- rules (rules.c) ------------------------------------------------------ */

/* Which rule refused a kernel: the query shows first the reasons of the kernels closest
 * to the problem, the rule that refuses most of them first. */
typedef enum cvc_rule {
    CVC_RULE_NONE = 0,
    CVC_RULE_OP, CVC_RULE_DIMS, CVC_RULE_TYPES,   /* the kernel is of another kind */
    CVC_RULE_EXTENTS, CVC_RULE_MODE, CVC_RULE_GROUPS, CVC_RULE_STRIDE, CVC_RULE_CHANNELS,
    CVC_RULE_INDEX, CVC_RULE_TMA, CVC_RULE_TILE, CVC_RULE_FILTER, CVC_RULE_SMEM,
    CVC_RULE_COUNT
} cvc_rule;

/* Can entry e run the problem?  CONVCAT_OK, or CONVCAT_ERR_UNSUPPORTED with the reason and
 * (rule_out, may be NULL) the rule. */
convcat_status cvc_check_entry(const cvc_entry *e, const cvc_view *v, char *why, size_t why_size,
                               cvc_rule *rule_out);

/* ---- query (query.c) ------------------------------------------------------ */

/* Split-K of a TMA kernel (wgrad and the fprop kernels of SPLITS_K): the number of slices of
 * the K loop that minimizes the time model's waves x (stages per slice + a tile's fixed cost)
 * plus the reduction's traffic on `sms` SMs, each slice at least 8 stages long; *split_iters
 * is the stages per slice.  1 for kernels that do not split. */
int cvc_splits(const cvc_entry *e, const cvc_view *v, int sms, int *split_iters);
/* ... and whether they run as clusters (flag CLUSTER_SPLITS: a cluster a tile, its CTAs the
 * slices, their sums added through distributed shared memory; no workspace, no KEY_reduce),
 * where the model prices them faster (CONVCAT_CLUSTER_SPLITS=1: wherever possible, =0: never;
 * query.c).  allow_cluster false: through the workspace only (a plan whose device cannot form
 * the cluster). */
typedef struct cvc_split {
    int splits, split_iters;
    bool cluster;
    double compute_us, reduce_us;   /* the model's time of the split's waves, and of its reduction launch */
} cvc_split;
cvc_split cvc_split_for(const cvc_entry *e, const cvc_view *v, int sms, bool allow_cluster);
/* Waves of a cluster split-K grid of `tiles` clusters of `slices` CTAs on `sms` SMs: clusters of 4
 * and 8 are placed within GPCs, which leave part of the SMs unused (query.c, CLUSTER_GPC_FILL). */
int64_t cvc_cluster_split_waves(int64_t tiles, int sms, int slices);
/* The sm90a raster band of a plan's launch (cvc_params.raster_band; plan.c says the rule). */
int cvc_raster_band(const cvc_entry *e, const cvc_view *v, const cvc_params *k, int sms);
/* Predicted microseconds of entry e on a problem that passed its rules. */
double cvc_predict_us(const cvc_entry *e, const cvc_view *v, int sm_count);
/* convcat_query over every kernel of `arch` into *ranked (malloc'd, cat->count rows, the `ok`
 * runnable ones first; the caller frees it); CONVCAT_ERR_NOT_FOUND, with the first refusal,
 * where none can run the problem (*ranked NULL then). */
convcat_status cvc_rank(const convcat_catalog *cat, const convcat_problem *p, convcat_arch arch, int sms,
                        convcat_candidate **ranked, size_t *ok);

/* ---- plans (plan.c) ------------------------------------------------------- */

/* Persistent grid: CTAs for `fit` clusters of `cluster` CTAs at once, at most one per
 * cluster tile; a multiple of `cluster` (the preferred shape of a dynamic cluster, as the
 * driver requires).  Dynamic: `fit` counts the CTAs `active_fb` fallback clusters of `fallback`
 * CTAs place, in whole preferred clusters, when more than `active` preferred ones fit. */
int cvc_grid_for(const cvc_params *k, int64_t fit, int cluster);
int64_t cvc_dynamic_fit(int active, int active_fb, int cluster, int fallback);

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
