/* gather.c: the gather family (templates/gather_conv.cu.j2): its rules, its time model and the
 * parameters of its launches.
 *
 * A gather kernel runs any groups and channel counts: per group a GEMM whose operands its
 * threads copy in chunks of `vec` elements along the tensor's contiguous dimension.  The
 * runtime picks, per operand, the widest vec of the kernel's (vec_mask) that divides that
 * dimension, so every chunk is aligned and lies within one row.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Coordinates inside the kernel stay below 2^30 (its "past the tensor" marker is -2^30). */
#define COORD_LIMIT (INT64_C(1) << 29)

#define MMA_RATE 0.45               /* mma.sync's share of the wgmma GEMM peak a gather tile reaches */
/* Warps an SM needs resident for its gathered loads, which wait on memory's latency, to reach that
 * rate; with fewer they reach the fraction (H200, every gather candidate of networks.txt's fprop
 * and dgrad rows timed: 128x64x32 fprop, 2 CTAs an SM by its 224 registers, ran 1.37x the model
 * where the 4-CTA 64x32x32 ran 1.15x, and lost 1.6x to it on the C = 3 stems). */
#define LOAD_WARPS 16.0
#define TILE_FIXED_US 0.5
#define LAUNCH_US 2.0
/* The least time of a gather kernel over a TMA one's, which the tile model leaves out: on the
 * smallest rows of networks.txt (1.2-2 us in the model) gather kernels took 3.5 us and more, TMA
 * ones 2.7 (H200, bf16, every candidate timed). */
#define FIRST_LAUNCH_US 1.0
#define MIN_SPLIT_KTILES 8
/* fprop's and one-launch dgrad's K slices: at least this many k-tiles each, and at most this many
 * slices; split only while the tiles leave the SMs' resident CTAs idle (the model decides). */
#define MIN_SLICE_KTILES 2
#define MAX_SLICES 32
/* A split fprop's or dgrad's reduction launch (3 us).  Its slices are priced as the tiles they are:
 * every gather kernel timed on the 29 gather-picked fprop and dgrad rows of networks.txt and
 * sd_unet.txt with split prices scaled by 1, 1.5 and 2 (H100, bf16), the picks reached 0.972,
 * 0.962 and 0.959 of the best time (SD's 3x3 320 -> 4 output layer 21.5 us at 1, 26.9 at 2). */
#define SLICE_REDUCE_US 3.0
/* Measured kernel time over the tile model's, by op (H200; the heuristic's gather picks on the
 * stem, grouped and 1D rows of networks.txt, bf16 and fp16: fprop 2.3 (1.7-3.1 over 28 rows),
 * dgrad 2.0 (1.8-2.7), wgrad 2.8 (2.5-3.8)): the tiles reach these shares of the rates above.
 * Scaled, the family is priced in the unit of the TMA family (0.84-0.97 of measured on the same
 * run), which it competes with on grouped wgrad and on any problem both take. */
static const double TILE_SCALE[3] = {2.3, 2.0, 2.8};
/* A CTA's K step takes at least this long, whatever its MMAs and loads (a 3-stage cp.async ring
 * waits on global memory's latency): on the H200, S3D's small 3D layers (26-108 CTAs of 64x32x32,
 * one an SM) ran 0.69-0.78 us a k-tile.  CTAs resident on one SM overlap their waits. */
#define KTILE_LATENCY_US 0.7
/* A packed tile's K step over an unpacked one's of the same bytes: its B zero-filled off the
 * diagonal, its MMAs picked per step (H200, bf16: ResNeXt's and RegNet's 3x3 layers of c = 8..24
 * ran 1.1-1.4x slower packed than one group a CTA where both fill their tiles; packed won where one
 * group leaves the tile's N or K mostly empty, as in their stride-2 dgrad's phases, 1.3-3.9x). */
#define PACKED_KTILE_SCALE 1.5
/* A K step's own work besides its loads and MMAs (the barrier, the next MN-major row table, the
 * copies' commit and wait), which a deeper tile K spreads over more of K: with it the 7x7 C = 3
 * stems' wgrad ranks the 64x32x64 tile, measured 1.25x faster than the 64x64x32 one (H100 and H200);
 * bench/model_check.py on six candidate runs: wgrad pick / best 0.93-0.97 -> 0.98-1.00, the rest
 * within 0.001. */
#define KTILE_STEP_US 0.02
#define SM_THREADS 2048
#define SM_REGISTERS 65536
#define SM_SMEM_BYTES (227 * 1024)

/* Input-tile kernels (flag INPUT_TILE): microseconds of an SM per block's m16n8k16 MMA, per element of
 * its input tile's copy and per output it stores, and a launch's start (a CTA stages its filters before
 * its first block).  MMA and copy: least squares on 8 (row, tile) pairs of the stems of networks.txt
 * (H100, bf16: the 7x7, 3x3 and 4x4 C = 3 stems and wav2vec2's, both tiles).  Output and start: refit
 * after the plain epilogue (a pair of filters one 32-bit store) made the stems 1.2-1.4x faster, on
 * the stems of networks.txt, resnet50.txt and sd_unet.txt (H100, bf16, 10 rows on their picks):
 * measured over modelled 0.84-1.17, where the output term alone left Stable Diffusion's small conv_in
 * at 1.75. */
#define TILE_MMA_US 0.00099
#define TILE_COPY_US 0.000164
#define TILE_OUTPUT_US 0.00017
#define TILE_START_US 4.0
/* The input-tile wgrad kernels' terms: per m16n8k16 MMA of the busiest warp, per copied element (input
 * tile elements and dy chunks), per block (its copies' wait and barriers) and a launch's start.  Least
 * squares on the log of the time, every input-tile wgrad kernel on every row of bench/stem_rows.txt
 * (H100, bf16 and fp16, 224 (row, kernel) pairs, measured over modelled 0.79-1.25), where the terms of
 * the fprop kernels had modelled them at 0.3-0.5 of their time. */
#define TILE_WGRAD_MMA_US 0.00242
#define TILE_WGRAD_COPY_US 0.000261
#define TILE_WGRAD_BLOCK_US 0.141
#define TILE_WGRAD_START_US 5.66
/* The input-tile dgrad kernels' terms (the stride phases side by side): per MMA of a warp (with its
 * ldmatrix), per copied dy chunk (the copy waits for all of them), per stored output, per block and a
 * launch's start.  Least squares on the log of the time, every input-tile dgrad kernel on every row of
 * bench/stem_rows.txt it runs (H100, bf16, 131 (row, kernel) pairs, measured over modelled 0.79-1.59;
 * each row's fastest kernel ranked first among them). */
#define TILE_DGRAD_MMA_US 0.00582
#define TILE_DGRAD_COPY_US 0.00107
#define TILE_DGRAD_STORE_US 0.000143
#define TILE_DGRAD_BLOCK_US 0.233
#define TILE_DGRAD_START_US 7.42

/* CTAs one SM holds at once of a kernel of `smem` bytes of shared memory: by threads, registers
 * (ptxas's count, in the index) and shared memory. */
static int resident_ctas_with(const cvc_entry *e, int64_t smem)
{
    const int threads = e->threads > 0 ? e->threads : 128;
    const int regs = e->registers > 0 ? (e->registers + 7) / 8 * 8 : 255;
    int r = SM_THREADS / threads;
    const int by_regs = SM_REGISTERS / (regs * threads), by_smem = smem > 0 ? (int)(SM_SMEM_BYTES / (smem + 1024)) : r;
    r = by_regs < r ? by_regs : r;
    r = by_smem < r ? by_smem : r;
    return r < 1 ? 1 : r;
}

static int resident_ctas(const cvc_entry *e)
{
    return resident_ctas_with(e, e->smem_bytes);
}

/* ---- input-tile kernels (flag INPUT_TILE) ---------------------------------------------------- */

/* A block's geometry: tile_cp channels a tile pixel (fprop: C <= 2: 2, else 4; dgrad, wgrad: C),
 * the columns padded (fprop: (tap, channel), to tile K; wgrad: (tap, channel), to 8, an n8 atom;
 * dgrad: the stride phases' channels, to 8), block_q columns of the block (fprop: pixels, tile M;
 * wgrad: pixels, CVC_TILE_WGRAD_BLOCK_PIXELS; dgrad: positions, tile M; a 1D problem: all of them,
 * one row; 2D: a power of two from 8, the fewest blocks (dgrad: blocks x (tile M + region pixels)),
 * then the smallest tile), the rows and columns of its input tile (dgrad: of its dy region), and the
 * shared memory: fprop the filter block's rows (16 bytes past a multiple of 32), the tap table and the
 * input tile; wgrad the block's dy rows and the input tile; dgrad the filters at every offset and the
 * dy region.  dgrad's blocks cover positions: along each axis, u = (x + pad) / stride of dx coordinate
 * x; offsets[] = (R - 1) dil / stride + 1, the dy pixels u, u - 1, ... whose taps reach it. */
typedef struct tile_geometry {
    int cp, block_q, blocks[2], rows, cols, offsets[2];
    int64_t kp, smem;   /* 64-bit: the rules refuse what does not fit the kernel's shared memory */
} tile_geometry;

/* An extent clamped to INT32_MAX: products of two stay within 64 bits, and any such tile is refused. */
static int64_t clamp32(double x)
{
    return x > INT32_MAX ? INT32_MAX : (int64_t)x;
}

static tile_geometry tile_geometry_of(const cvc_entry *e, const cvc_view *v)
{
    const convcat_problem *p = &v->p;
    const bool wgrad = e->k.op == CONVCAT_WGRAD, dgrad = e->k.op == CONVCAT_DGRAD;
    const int eb = v->a_bytes, bm = wgrad ? CVC_TILE_WGRAD_BLOCK_PIXELS : e->k.tile_m;
    tile_geometry t = {0};
    t.cp = wgrad || dgrad ? p->c : p->c <= 2 ? 2 : CVC_TILE_MAX_CHANNELS;
    const int pad_to = wgrad || dgrad ? 8 : e->k.tile_k;
    const double columns = dgrad ? (double)p->stride[1] * p->stride[2] * t.cp : (double)v->taps * t.cp;
    t.kp = cvc_ceil_div(clamp32(columns), pad_to) * pad_to;
    int grid[3] = {v->out[0], v->out[1], v->out[2]};   /* the pixels (dgrad: positions) the blocks cover */
    if (dgrad)
        for (int a = 1; a < 3; ++a) {
            grid[a] = (int)clamp32(floor(((double)v->in[a] - 1 + p->pad_lo[a]) / p->stride[a]) + 1);
            t.offsets[a - 1] = (int)clamp32((double)v->reach[a] / p->stride[a] + 1);
        }
    double best_cost = INFINITY;
    int64_t best_pixels = INT64_MAX;
    for (int bq = e->k.dims == 1 ? bm : 8; bq <= bm; bq *= 2) {
        const int bp = bm / bq;
        const int64_t blocks = cvc_ceil_div(grid[1], bp) * cvc_ceil_div(grid[2], bq);
        /* fprop, wgrad: the input pixels the block's windows read; dgrad: the dy pixels its positions read */
        const int64_t rows = dgrad ? (int64_t)bp + t.offsets[0] - 1
                                   : clamp32((double)(bp - 1) * p->stride[1] + (double)v->reach[1] + 1);
        const int64_t cols = dgrad ? (int64_t)bq + t.offsets[1] - 1
                                   : clamp32((double)(bq - 1) * p->stride[2] + (double)v->reach[2] + 1);
        /* dgrad: the fewest positions and region pixels in all (every block runs tile M positions' MMAs) */
        const double cost = dgrad ? (double)blocks * (bm + (double)rows * cols) : (double)blocks;
        if (cost < best_cost || (cost == best_cost && rows * cols < best_pixels)) {
            best_cost = cost, best_pixels = rows * cols;
            t.block_q = bq;
            t.blocks[0] = (int)cvc_ceil_div(grid[1], bp), t.blocks[1] = (int)cvc_ceil_div(grid[2], bq);
            t.rows = (int)rows, t.cols = (int)cols;
        }
    }
    double staged;
    if (dgrad) {   /* the filters at every offset and the dy region, rows of K (padded to 16) */
        const double kp16 = (double)cvc_ceil_div(p->k, 16) * 16;
        staged = (CVC_TILE_DGRAD_FILTER_ROWS((double)t.offsets[0] * t.offsets[1], (double)t.kp, e->k.tile_n) +
                  (double)t.rows * t.cols) * CVC_TILE_DGRAD_ROW_BYTES(kp16, eb);
        t.smem = clamp32(staged);
        return t;
    }
    staged = wgrad ? (double)bm * CVC_TILE_DY_ROW_BYTES((double)e->k.tile_m, eb)
                   : (double)e->k.tile_n * CVC_TILE_FILTER_ROW_BYTES((double)t.kp, eb) + CVC_TILE_TABLE_BYTES(t.kp);
    t.smem = clamp32(staged + (double)t.rows * t.cols * t.cp * eb);
    return t;
}

static convcat_status tile_rules(const cvc_entry *e, const cvc_view *v, char *why, size_t n)
{
    const convcat_problem *p = &v->p;
    if (p->c > CVC_TILE_MAX_CHANNELS) {
        cvc_say(why, n, "C = %d channels: this kernel stages input pixels of at most %d channels", p->c,
                CVC_TILE_MAX_CHANNELS);
        return CONVCAT_ERR_UNSUPPORTED;
    }
    const tile_geometry t = tile_geometry_of(e, v);
    const double blocks = (double)p->n * t.blocks[0] * t.blocks[1];   /* a launch's work items: 32-bit */
    if (blocks > INT32_MAX) {
        cvc_say(why, n, "%.0f blocks of %s: more than this kernel's 2^31 - 1 work items", blocks,
                e->k.op == CONVCAT_DGRAD ? "positions" : "pixels");
        return CONVCAT_ERR_UNSUPPORTED;
    }
    if (e->k.op == CONVCAT_DGRAD && t.kp > e->k.tile_n) {
        cvc_say(why, n, "strides (%d, %d) x %d channels: %lld stride phase columns, more than this dgrad kernel's %d",
                p->stride[1], p->stride[2], p->c, (long long)t.kp, e->k.tile_n);
        return CONVCAT_ERR_UNSUPPORTED;
    }
    if (t.smem > e->smem_bytes) {
        if (e->k.op == CONVCAT_DGRAD)
            cvc_say(why, n, "K = %d filters at %d x %d dy offsets: the filters and a block's dy region take %lld bytes "
                    "of shared memory, more than this kernel's %d", p->k, t.offsets[0], t.offsets[1],
                    (long long)t.smem, e->smem_bytes);
        else
            cvc_say(why, n, "a %d x %d x %d filter at dilation (%d, %d) and strides (%d, %d): %s and input tile "
                    "take %lld bytes of shared memory, more than this kernel's %d", v->filt[0], v->filt[1], v->filt[2],
                    p->dilation[1], p->dilation[2], p->stride[1], p->stride[2],
                    e->k.op == CONVCAT_WGRAD ? "a block's dy rows" : "filters", (long long)t.smem, e->smem_bytes);
        return CONVCAT_ERR_UNSUPPORTED;
    }
    return CONVCAT_OK;
}

/* dgrad's and wgrad's dy rows: whole 16-byte chunks where K is a multiple of 8 (tensors are 16-byte
 * aligned), else single elements. */
static int tile_dy_vec(const convcat_problem *p)
{
    return p->k % 8 == 0 ? 8 : 1;
}

/* An input-tile launch's parameters that both ops share: the pixel grids, the block and its tile. */
static cvc_gather_params tile_params(const cvc_view *v, const tile_geometry *t)
{
    const convcat_problem *p = &v->p;
    cvc_gather_params g = {0};
    g.groups = 1, g.cg = p->c, g.kg = p->k, g.n = p->n;
    g.src_c = p->c;
    g.taps_total = (int32_t)v->taps;
    g.splits = 1;
    g.vec_a = g.vec_b = 1;
    for (int a = 0; a < 3; ++a) {
        g.src_ext[a] = v->in[a], g.grid_ext[a] = v->out[a];
        g.stride[a] = p->stride[a], g.pad[a] = p->pad_lo[a], g.dil[a] = p->dilation[a];
        g.taps[a] = g.filt[a] = v->filt[a];
    }
    g.block_q = t->block_q;
    g.blocks[0] = t->blocks[0], g.blocks[1] = t->blocks[1];
    g.tile_ext[0] = t->rows, g.tile_ext[1] = t->cols;
    g.tile_cp = t->cp, g.tile_kp = (int32_t)t->kp;
    g.tile_pass[0] = t->offsets[0], g.tile_pass[1] = t->offsets[1];
    return g;
}

/* An input-tile wgrad launch's GEMM and grid: a CTA for each filter block, column block and slice of
 * the blocks, as many slices as the SMs hold CTAs beside the other blocks (none empty); more than
 * one, their f32 sums go through the workspace to KEY_reduce. */
static void tile_wgrad_grid(const cvc_entry *e, const cvc_view *v, int sms, const tile_geometry *t,
                            cvc_gather_params *g, cvc_launches *out)
{
    const convcat_problem *p = &v->p;
    g->gemm_m = p->k, g->gemm_n = (int32_t)(v->taps * p->c), g->gemm_k = (int32_t)v->pixels;
    g->ldy = v->taps * p->c;
    g->out_elems = (int64_t)p->k * g->ldy;
    g->vec_a = tile_dy_vec(p);
    g->tiles_m = (int32_t)cvc_ceil_div(p->k, e->k.tile_m);
    g->tiles_n = (int32_t)cvc_ceil_div(t->kp, e->k.tile_n);
    const int64_t blocks = (int64_t)p->n * t->blocks[0] * t->blocks[1], columns = (int64_t)g->tiles_m * g->tiles_n;
    const int64_t slots = (int64_t)(sms > 0 ? sms : 1) * resident_ctas_with(e, t->smem);
    int64_t slices = slots / columns;
    slices = slices < 1 ? 1 : slices > blocks ? blocks : slices;
    const int64_t per = cvc_ceil_div(blocks, slices);
    g->splits = (int32_t)cvc_ceil_div(blocks, per), g->split_k = (int32_t)per;
    if (g->splits > 1) {
        out->workspace_bytes = (size_t)g->splits * (size_t)g->out_elems * sizeof(float);
        const int64_t reduce_blocks = cvc_ceil_div(g->out_elems, 8);   /* KEY_reduce: 8 outputs a CTA at most */
        out->reduce_grid = (unsigned)(reduce_blocks < 8 * sms ? reduce_blocks : 8 * sms);
    }
    out->l[0].grid = (unsigned)(columns * g->splits);
}

/* An input-tile fprop launch's GEMM and grid: persistent, a whole number of filter blocks. */
static void tile_fprop_grid(const cvc_entry *e, const cvc_view *v, int sms, const tile_geometry *t,
                            cvc_gather_params *g, cvc_launches *out)
{
    const convcat_problem *p = &v->p;
    g->gemm_m = (int32_t)v->pixels, g->gemm_n = p->k, g->gemm_k = (int32_t)t->kp;
    g->ldy = p->k;
    g->split_k = (int32_t)t->kp;
    g->tiles_m = (int32_t)((int64_t)p->n * t->blocks[0] * t->blocks[1]);
    g->tiles_n = (int32_t)cvc_ceil_div(p->k, e->k.tile_n);
    const int64_t items = (int64_t)g->tiles_m * g->tiles_n;
    int64_t slots = (int64_t)(sms > 0 ? sms : 1) * resident_ctas_with(e, t->smem);
    slots = slots / g->tiles_n * g->tiles_n;
    if (slots < g->tiles_n)
        slots = g->tiles_n;
    out->l[0].grid = (unsigned)(items < slots ? items : slots);
}

/* An input-tile dgrad launch's grid: persistent over the blocks of positions (the kernel reads gemm_k,
 * K padded to 16; its GEMM's M and N are the blocks' positions and tile_kp). */
static void tile_dgrad_grid(const cvc_entry *e, const cvc_view *v, int sms, const tile_geometry *t,
                            cvc_gather_params *g, cvc_launches *out)
{
    const convcat_problem *p = &v->p;
    g->src_c = p->k;   /* dy, the gathered activations */
    for (int a = 0; a < 3; ++a)
        g->src_ext[a] = v->out[a], g->grid_ext[a] = v->in[a];
    g->gemm_k = (int32_t)(cvc_ceil_div(p->k, 16) * 16);
    g->ldy = p->c;
    g->vec_a = tile_dy_vec(p);
    g->tiles_m = (int32_t)((int64_t)p->n * t->blocks[0] * t->blocks[1]);
    g->tiles_n = 1;
    const int64_t slots = (int64_t)(sms > 0 ? sms : 1) * resident_ctas_with(e, t->smem);
    out->l[0].grid = (unsigned)(g->tiles_m < slots ? g->tiles_m : slots);
}

/* The one launch of an input-tile kernel. */
static convcat_status tile_launches(const cvc_entry *e, const cvc_view *v, int sms, cvc_launches *out)
{
    const convcat_status st = cvc_launches_alloc(out, 1);
    if (st != CONVCAT_OK)
        return st;
    const tile_geometry t = tile_geometry_of(e, v);
    cvc_gather_params g = tile_params(v, &t);
    if (e->k.op == CONVCAT_WGRAD)
        tile_wgrad_grid(e, v, sms, &t, &g, out);
    else if (e->k.op == CONVCAT_DGRAD)
        tile_dgrad_grid(e, v, sms, &t, &g, out);
    else
        tile_fprop_grid(e, v, sms, &t, &g, out);
    out->l[0].block = (unsigned)e->threads;
    out->l[0].smem = (unsigned)t.smem;
    out->l[0].u.g = g;
    return CONVCAT_OK;
}

/* The model's time of an input-tile wgrad launch: per SM its CTAs one after the other, each its blocks'
 * MMAs, copies (the input tile's elements, the dy rows' chunks) and a fixed cost (TILE_WGRAD_*); the
 * tensors' and the slices' DRAM traffic; KEY_reduce's launch.  A block's MMAs take as long as its
 * busiest warp's at a quarter of the SM's rate: warp w of every CTA shares one of the SM's four
 * tensor-core quarters, and a column block past the columns leaves its last warps idle. */
static double tile_wgrad_us(const cvc_entry *e, const cvc_view *v, int sms, const cvc_launches *ls)
{
    const cvc_gather_params *g = &ls->l[0].u.g;
    const convcat_problem *p = &v->p;
    const int warp_atoms = e->k.tile_n / 32;                        /* n8 atoms a warp */
    const int64_t last = g->tile_kp / 8 - (int64_t)(g->tiles_n - 1) * (e->k.tile_n / 8);   /* the last block's */
    const double busiest = ((double)(g->tiles_n - 1) * warp_atoms + (double)(last < warp_atoms ? last : warp_atoms)) /
                           g->tiles_n;                              /* the busiest warp's atoms, on average */
    const double mmas = (double)e->k.tile_m / 16 * busiest * 4 * (CVC_TILE_WGRAD_BLOCK_PIXELS / 16);
    const double copies = (double)g->tile_ext[0] * g->tile_ext[1] * p->c +
                          (double)CVC_TILE_WGRAD_BLOCK_PIXELS * e->k.tile_m / (g->vec_a == 8 ? 8 : 2);
    const double cta_us = (double)g->split_k * (mmas * TILE_WGRAD_MMA_US + copies * TILE_WGRAD_COPY_US + TILE_WGRAD_BLOCK_US);
    const double us = ceil((double)ls->l[0].grid / (sms > 0 ? sms : 1)) * cta_us;
    const double bytes = (double)v->in_pixels * p->c * v->a_bytes + (double)v->pixels * p->k * v->a_bytes +
                         cvc_filter_bytes(v) + 2.0 * ls->workspace_bytes;
    const double dram_us = bytes / CVC_DRAM_BYTES_PER_US;
    return fmax(us, dram_us) + 0.5 * fmin(us, dram_us) + (ls->reduce_grid ? LAUNCH_US : 0.0) + FIRST_LAUNCH_US +
           TILE_WGRAD_START_US;
}

/* The model's time of an input-tile dgrad launch: per SM its blocks one after the other, each the dy
 * region's copy (16-byte chunks), its MMAs (a warp's, its quarter of the positions by every column at
 * every offset, at a quarter of the SM's rate), its outputs' stores and a fixed cost, and the tensors'
 * DRAM traffic. */
static double tile_dgrad_us(const cvc_entry *e, const cvc_view *v, int sms, const cvc_launches *ls)
{
    const cvc_gather_params *g = &ls->l[0].u.g;
    const convcat_problem *p = &v->p;
    const double mmas = (double)e->k.tile_m / 64 * (e->k.tile_n / 8) * g->tile_pass[0] * g->tile_pass[1] *
                        (g->gemm_k / 16);
    const double copies = (double)g->tile_ext[0] * g->tile_ext[1] * g->gemm_k / (g->vec_a == 8 ? 8 : 1);
    const double stores = (double)e->k.tile_m * p->stride[1] * p->stride[2] * p->c;
    const double block_us = mmas * TILE_DGRAD_MMA_US + copies * TILE_DGRAD_COPY_US + stores * TILE_DGRAD_STORE_US +
                            TILE_DGRAD_BLOCK_US;
    const double us = ceil((double)g->tiles_m / (sms > 0 ? sms : 1)) * block_us;
    const double bytes = (double)v->pixels * p->k * v->a_bytes + cvc_filter_bytes(v) +
                         (double)v->in_pixels * p->c * v->out_bytes;
    const double dram_us = bytes / CVC_DRAM_BYTES_PER_US;
    return fmax(us, dram_us) + 0.5 * fmin(us, dram_us) + FIRST_LAUNCH_US + TILE_DGRAD_START_US;
}

/* The model's time of an input-tile launch: per SM its share of the work items (each block's MMAs,
 * its input tile's copy, once per filter block, and its outputs), and the tensors' DRAM traffic. */
static double tile_us(const cvc_entry *e, const cvc_view *v, int sms, const cvc_launches *ls)
{
    if (e->k.op == CONVCAT_WGRAD)
        return tile_wgrad_us(e, v, sms, ls);
    if (e->k.op == CONVCAT_DGRAD)
        return tile_dgrad_us(e, v, sms, ls);
    const cvc_gather_params *g = &ls->l[0].u.g;
    const convcat_problem *p = &v->p;
    const double mmas = (double)g->tile_kp / e->k.tile_k * (e->k.tile_m / 16) * (e->k.tile_n / 8);
    const double copies = (double)g->tile_ext[0] * g->tile_ext[1] * p->c;
    const double items = (double)g->tiles_m * g->tiles_n;
    const double work_us = items * (mmas * TILE_MMA_US + copies * TILE_COPY_US) +
                           (double)g->tiles_m * e->k.tile_m * p->k * TILE_OUTPUT_US;
    const double us = ceil(items / (sms > 0 ? sms : 1)) * work_us / items;
    const double bytes = (double)v->in_pixels * p->c * v->a_bytes + cvc_filter_bytes(v) +
                         (double)v->pixels * p->k * v->out_bytes;
    const double dram_us = bytes / CVC_DRAM_BYTES_PER_US;
    return fmax(us, dram_us) + 0.5 * fmin(us, dram_us) + FIRST_LAUNCH_US + TILE_START_US;
}

/* The widest load (elements, a power of two of the kernel's vec_mask) dividing `run`. */
static int widest(const cvc_entry *e, int64_t run)
{
    for (int v = 8; v > 1; v /= 2)
        if ((e->vec_mask & v) && run % v == 0)
            return v;
    return 1;
}

/* The contiguous runs of A and B (see the template: what a chunk may not cross), with `pack`
 * groups a CTA column (dgrad): A runs over the pack's filters, B's rows over a group's channels. */
static void runs(const cvc_entry *e, const cvc_view *v, int pack, int64_t *a, int64_t *b)
{
    /* x along c; in a patch convolution of one group, along a filter row's S taps x C (no tap
     * reaches past the image, and the taps of a row are adjacent pixels) */
    const int64_t x_run = v->patch && v->p.groups == 1 ? (int64_t)v->filt[2] * v->cg : v->cg;
    switch (e->k.op) {
    case CONVCAT_FPROP: *a = x_run, *b = v->taps * v->cg; break;   /* x; w along T*R*S*c */
    case CONVCAT_DGRAD:   /* dy along k; w along c (a patch dgrad: along T*R*S*c) */
        *a = (int64_t)v->kg * pack, *b = v->patch ? v->taps * v->cg : v->cg;
        break;
    default: *a = v->kg, *b = x_run;                               /* dy along k; x */
    }
}

/* Groups a CTA column packs (dgrad kernels of flag PACKS_GROUPS, not a patch dgrad): the most that
 * divide the groups and whose N columns (c a group) fit the tile's N; 1 where fewer than 2. */
static int pack_of(const cvc_entry *e, const cvc_view *v)
{
    if (!cvc_has(e, CVC_F_PACKS_GROUPS) || v->p.groups == 1 || e->k.op != CONVCAT_DGRAD || v->patch)
        return 1;
    for (int g = e->k.tile_n / v->cg; g >= 2; --g)
        if (v->p.groups % g == 0 && v->taps * v->kg * g + e->k.tile_k <= INT32_MAX)   /* K of the pack, 32-bit */
            return g;
    return 1;
}

convcat_status cvc_gather_rules(const cvc_entry *e, const cvc_view *v, char *why, size_t n)
{
    const convcat_problem *p = &v->p;
    if (cvc_has(e, CVC_F_INPUT_TILE)) {
        const convcat_status st = tile_rules(e, v, why, n);
        if (st != CONVCAT_OK)
            return st;
    }
    static const char *const axis[3] = {"D", "H", "W"};
    for (int a = 0; a < 3; ++a) {
        if (v->in[a] >= COORD_LIMIT || v->out[a] >= COORD_LIMIT || p->pad_lo[a] >= COORD_LIMIT ||
            p->pad_hi[a] >= COORD_LIMIT || v->reach[a] >= COORD_LIMIT ||
            (int64_t)v->out[a] * p->stride[a] >= COORD_LIMIT) {
            cvc_say(why, n, "extents, padding or filter reach along %s of 2^29 or more: the gather kernel's "
                    "coordinates are below 2^30", axis[a]);
            return CONVCAT_ERR_UNSUPPORTED;
        }
    }
    /* 32-bit GEMM indices: rows (with a tile's room), K (with a stage's), the grid. */
    int64_t m = e->k.op == CONVCAT_WGRAD ? v->kg : e->k.op == CONVCAT_DGRAD ? v->in_pixels : v->pixels;
    int64_t kk = e->k.op == CONVCAT_WGRAD ? v->pixels : e->k.op == CONVCAT_DGRAD ? v->taps * v->kg : v->taps * v->cg;
    int64_t nn = e->k.op == CONVCAT_WGRAD ? v->taps * v->cg : e->k.op == CONVCAT_DGRAD ? v->cg : v->kg;
    if (e->k.op == CONVCAT_DGRAD && v->patch)   /* one GEMM over dy's pixels */
        m = v->pixels, kk = v->kg, nn = v->taps * v->cg;
    if (m + e->k.tile_m > INT32_MAX || kk + e->k.tile_k > INT32_MAX || nn + e->k.tile_n > INT32_MAX) {
        cvc_say(why, n, "GEMM M %lld, N %lld or K %lld is past the gather kernel's 32-bit indices", (long long)m,
                (long long)nn, (long long)kk);
        return CONVCAT_ERR_UNSUPPORTED;
    }
    if (e->k.op == CONVCAT_DGRAD && v->in_pixels > INT32_MAX) {   /* a patch dgrad writes dx pixel m * stride */
        cvc_say(why, n, "%lld dx pixels: past the gather kernel's 32-bit pixel index", (long long)v->in_pixels);
        return CONVCAT_ERR_UNSUPPORTED;
    }
    const int64_t blocks = (int64_t)p->groups * cvc_ceil_div(m, e->k.tile_m) * cvc_ceil_div(nn, e->k.tile_n);
    if (blocks > INT32_MAX / 64) {
        cvc_say(why, n, "%lld tiles of %d groups: more than the gather kernel's grid index allows", (long long)blocks,
                p->groups);
        return CONVCAT_ERR_UNSUPPORTED;
    }
    return CONVCAT_OK;
}

/* Wgrad's split of the pixel reduction: as many slices as fill the machine twice (4 CTAs an SM)
 * and no more, each at least MIN_SPLIT_KTILES stages.  Rounding the slices up put a few CTAs past
 * the 4 an SM (530 for 528 on 5 tiles), a round more for those SMs. */
static void wgrad_split(const cvc_entry *e, const cvc_view *v, int sms, int tiles, int *splits, int *split_k)
{
    const int64_t kt = cvc_ceil_div(v->pixels, e->k.tile_k);
    int64_t s = 2 * (int64_t)sms * 2 / (tiles > 0 ? tiles : 1);
    if (s > kt / MIN_SPLIT_KTILES)
        s = kt / MIN_SPLIT_KTILES;
    if (s > 256)
        s = 256;
    if (s < 1)
        s = 1;
    const int64_t per = cvc_ceil_div(kt, s) * e->k.tile_k;
    *split_k = (int)per;
    *splits = (int)cvc_ceil_div(v->pixels, per);
}

/* The dividers of the K loop's channel run `chan` (c; dgrad k: of a pack of `pack` groups), of the
 * taps and of the grid; and the group widths along that run and along N (gemm_n, set before): a
 * pack's group's, or, unpacked, the whole run and N (one group). */
static void set_dividers(cvc_gather_params *g, int chan, int pack)
{
    g->gk = chan / pack, g->gn = g->gemm_n / pack;
    cvc_divider((uint32_t)chan, g->div_chan);
    cvc_divider((uint32_t)g->gk, g->div_gk);
    cvc_divider((uint32_t)g->gn, g->div_gn);
    for (int a = 0; a < 3; ++a) {
        cvc_divider((uint32_t)(g->taps[a] > 0 ? g->taps[a] : 1), g->div_taps[a]);
        cvc_divider((uint32_t)g->grid_ext[a], g->div_grid[a]);
    }
}

/* The launches with fprop's or a one-launch dgrad's K loop in `slices` slices (wgrad: its own
 * split; the phases of a strided dgrad: none) and `pack` groups a CTA column (dgrad: pack_of, or 1). */
static convcat_status launches_with(const cvc_entry *e, const cvc_view *v, int sms, int slices, int pack,
                                    cvc_launches *out)
{
    const convcat_problem *p = &v->p;
    const cvc_key *k = &e->k;
    const int count = k->op == CONVCAT_DGRAD && !v->patch ? v->phases : 1;
    const convcat_status st = cvc_launches_alloc(out, count);
    if (st != CONVCAT_OK)
        return st;
    int64_t run_a, run_b;
    runs(e, v, pack, &run_a, &run_b);
    cvc_gather_params base = {0};
    /* a pack of groups is one group of pack * c channels and pack * k filters, B block diagonal */
    base.groups = p->groups / pack, base.cg = v->cg * pack, base.kg = v->kg * pack, base.n = p->n;
    base.packed = pack > 1, base.wc = v->cg;
    base.vec_a = widest(e, run_a), base.vec_b = widest(e, run_b);
    base.taps_total = (int32_t)v->taps;
    base.splits = 1;
    for (int a = 0; a < 3; ++a) {
        base.filt[a] = v->filt[a];
        base.out_step[a] = 1;
        base.tap_step[a] = -1;   /* fprop and wgrad: tap index u is tap u */
    }
    for (int i = 0; i < count; ++i) {
        cvc_gather_params g = base;
        if (k->op == CONVCAT_DGRAD && v->patch) {
            /* Row m: dy pixel m, whose patch starts at dx pixel m * stride; column (tap, ch). */
            for (int a = 0; a < 3; ++a) {
                g.src_ext[a] = v->out[a];
                g.grid_ext[a] = v->out[a];
                g.stride[a] = 1, g.pad[a] = 0, g.dil[a] = 1;
                g.taps[a] = 1, g.tap0[a] = 0, g.tap_step[a] = 1;
                g.ph[a] = 0;
                g.out_step[a] = p->stride[a];
                g.out_ext[a] = v->in[a];
            }
            g.patch = 1;
            g.src_c = p->k;
            g.gemm_m = (int32_t)v->pixels, g.gemm_n = (int32_t)(v->taps * v->cg), g.gemm_k = v->kg;
            g.ldy = p->c;
            set_dividers(&g, v->kg, 1);
        } else if (k->op == CONVCAT_DGRAD) {
            cvc_dgrad_phase ph;
            cvc_dgrad_phase_at(v, i, &ph);
            int64_t pix = p->n, taps = 1;
            for (int a = 0; a < 3; ++a) {
                const cvc_phase_axis *x = &ph.axis[2 - a];   /* phases are W first */
                g.src_ext[a] = v->out[a];
                g.grid_ext[a] = x->pixels;
                g.stride[a] = 1;
                g.pad[a] = -x->lower;
                g.dil[a] = x->dil;
                g.taps[a] = x->taps;
                g.tap0[a] = x->tap0;
                g.tap_step[a] = x->tap_step;
                g.ph[a] = x->ph;
                g.out_step[a] = p->stride[a];
                g.out_ext[a] = v->in[a];
                pix *= x->pixels;
                taps *= x->taps;
            }
            g.src_c = p->k;
            g.gemm_m = (int32_t)pix, g.gemm_n = g.cg, g.gemm_k = (int32_t)(taps * g.kg);
            g.ldy = p->c;
            set_dividers(&g, g.kg, pack);
        } else {
            for (int a = 0; a < 3; ++a) {
                g.src_ext[a] = v->in[a];
                g.grid_ext[a] = v->out[a];
                g.stride[a] = p->stride[a];
                g.pad[a] = p->pad_lo[a];
                g.dil[a] = p->dilation[a];
                g.taps[a] = v->filt[a];
            }
            g.src_c = p->c;
            if (k->op == CONVCAT_FPROP) {
                g.gemm_m = (int32_t)v->pixels, g.gemm_n = g.kg, g.gemm_k = (int32_t)(v->taps * g.cg);
                g.ldy = p->k;
            } else {
                g.gemm_m = v->kg, g.gemm_n = (int32_t)(v->taps * v->cg), g.gemm_k = (int32_t)v->pixels;
                g.ldy = v->taps * v->cg;
                g.out_elems = (int64_t)p->k * g.ldy;
            }
            set_dividers(&g, g.cg, pack);
        }
        g.tiles_m = (int32_t)cvc_ceil_div(g.gemm_m, k->tile_m);
        g.tiles_n = (int32_t)cvc_ceil_div(g.gemm_n, k->tile_n);
        g.split_k = g.gemm_k;
        if (k->op == CONVCAT_WGRAD)
            wgrad_split(e, v, sms, g.groups * g.tiles_m * g.tiles_n, &g.splits, &g.split_k);
        else if (slices > 1 && count == 1 && g.gemm_k > 0) {   /* slices of the output's shape */
            const int64_t kt = cvc_ceil_div(g.gemm_k, k->tile_k);
            g.split_k = (int32_t)(cvc_ceil_div(kt, slices) * k->tile_k);
            g.splits = (int32_t)cvc_ceil_div(g.gemm_k, g.split_k);   /* no empty slice */
            g.out_elems = k->op == CONVCAT_FPROP ? v->pixels * p->k : v->in_pixels * p->c;
        }
        if (g.splits > 1) {
            out->workspace_bytes = (size_t)g.splits * (size_t)g.out_elems * sizeof(float);
            /* KEY_reduce: 256 threads share 8 outputs at most (its slice lanes) */
            const int64_t blocks = cvc_ceil_div(g.out_elems, 8);
            out->reduce_grid = (unsigned)(blocks < 8 * sms ? blocks : 8 * sms);
        }
        cvc_launch *l = &out->l[i];
        l->grid = (unsigned)((int64_t)g.groups * g.tiles_m * g.tiles_n * g.splits);
        l->block = (unsigned)e->threads;
        l->smem = (unsigned)e->smem_bytes;
        l->u.g = g;
    }
    return CONVCAT_OK;
}

/* Share of the 16-byte load rate a chunk of `bytes` reaches. */
static double chunk_rate(int bytes)
{
    return bytes >= 16 ? 1.0 : bytes >= 8 ? 0.7 : bytes >= 4 ? 0.45 : 0.25;
}

/* The model's time of launches `ls` of kernel `e` (sms > 0). */
static double launches_us(const cvc_entry *e, const cvc_view *v, int sms, const cvc_launches *ls)
{
    const cvc_key *k = &e->k;
    const int eb = v->a_bytes;
    const double warps = (double)resident_ctas(e) * (e->threads > 0 ? e->threads : 128) / 32;
    double us = 0.0;
    for (int i = 0; i < ls->count; ++i) {
        const cvc_gather_params *g = &ls->l[i].u.g;
        const int64_t ktiles = cvc_ceil_div(g->split_k, k->tile_k);
        const double mma_us = 2.0 * k->tile_m * k->tile_n * k->tile_k / (CVC_PEAK_FLOP_PER_SM_US * MMA_RATE);
        /* packed groups: B's chunks off the diagonal blocks are zero-filled, not read */
        const double b_share = g->packed ? (double)g->wc / g->cg : 1.0;
        const double load_us = ((double)k->tile_m * k->tile_k * eb / (CVC_LOAD_BYTES_PER_SM_US * chunk_rate(g->vec_a * eb)) +
                                b_share * k->tile_n * k->tile_k * eb / (CVC_LOAD_BYTES_PER_SM_US * chunk_rate(g->vec_b * eb))) /
                               fmin(1.0, warps / LOAD_WARPS);
        const double tile_us = (double)ktiles * (fmax(mma_us, load_us) * (g->packed ? PACKED_KTILE_SCALE : 1.0) +
                                                 KTILE_STEP_US) +
                               TILE_FIXED_US;
        /* the SM's tiles one after the other at the rates, or its resident CTAs' K steps at the latency */
        const double rate_us = (double)cvc_ceil_div(ls->l[i].grid, sms) * tile_us * TILE_SCALE[k->op];
        const double wait_us = (double)cvc_ceil_div(ls->l[i].grid, (int64_t)sms * resident_ctas(e)) *
                               ((double)ktiles * KTILE_LATENCY_US + TILE_FIXED_US);
        us += fmax(rate_us, wait_us) + LAUNCH_US * (i > 0);
    }
    const bool sliced = ls->reduce_grid && k->op != CONVCAT_WGRAD;   /* TILE_SCALE's wgrad figure has its slices */
    const convcat_problem *p = &v->p;
    const double bytes = (double)v->in_pixels * p->c * v->a_bytes + cvc_filter_bytes(v) +
                         (double)v->pixels * p->k * v->out_bytes;
    const double dram_us = bytes / CVC_DRAM_BYTES_PER_US + (double)ls->workspace_bytes * 2.0 / CVC_DRAM_BYTES_PER_US;
    const double reduce_us = ls->reduce_grid ? (sliced ? SLICE_REDUCE_US : LAUNCH_US) : 0.0;
    return fmax(us, dram_us) + 0.5 * fmin(us, dram_us) + reduce_us + FIRST_LAUNCH_US;
}

/* The kernel's launches for the problem and (us, may be NULL) their modelled time.  Grouped dgrad
 * takes packed groups (pack_of) where the model prices them faster than one group a CTA
 * (`packing` 1: wherever they can, 0: never); fprop and a one-launch dgrad take the slices of the K
 * loop the model prices fastest: one, or more only where they win clearly. */
static convcat_status plan_launches(const cvc_entry *e, const cvc_view *v, int sms, int packing, cvc_launches *out,
                                    double *us)
{
    if (cvc_has(e, CVC_F_INPUT_TILE)) {
        const convcat_status st = tile_launches(e, v, sms, out);
        if (st == CONVCAT_OK && us)
            *us = tile_us(e, v, sms, out);
        return st;
    }
    int pack = packing == 0 ? 1 : pack_of(e, v);
    convcat_status st = launches_with(e, v, sms, 1, 1, out);
    if (st != CONVCAT_OK || sms <= 0)
        return st;
    double best_us = launches_us(e, v, sms, out);
    if (pack > 1) {
        cvc_launches ls;
        if ((st = launches_with(e, v, sms, 1, pack, &ls)) != CONVCAT_OK) {
            free(out->l);
            return st;
        }
        const double t = launches_us(e, v, sms, &ls);
        if (t < best_us || packing == 1) {
            free(out->l);
            *out = ls, best_us = t;
        } else {
            free(ls.l);
            pack = 1;
        }
    }
    /* one launch (not a strided dgrad's phases) whose tiles leave resident CTAs idle */
    const bool splits = e->k.op != CONVCAT_WGRAD && out->count == 1 &&
                        (int64_t)out->l[0].grid < (int64_t)sms * resident_ctas(e);
    const int64_t kt = splits ? cvc_ceil_div(out->l[0].u.g.gemm_k, e->k.tile_k) : 0;
    for (int s = 2; splits && s <= MAX_SLICES && kt / s >= MIN_SLICE_KTILES; s *= 2) {
        cvc_launches ls;
        if (launches_with(e, v, sms, s, pack, &ls) != CONVCAT_OK)
            break;
        const double t = launches_us(e, v, sms, &ls);
        if (t < best_us * 0.9) {
            free(out->l);
            *out = ls, best_us = t;
        } else {
            free(ls.l);
        }
    }
    if (us)
        *us = best_us;
    return CONVCAT_OK;
}

/* CONVCAT_GATHER_PACK=1 packs groups wherever a kernel can, =0 never (plans and the query's prices;
 * the GPU suite runs both ways); unset (-1), the model decides. */
static int packing_override(void)
{
    const char *env = getenv("CONVCAT_GATHER_PACK");
    return env && (env[0] == '0' || env[0] == '1') && !env[1] ? env[0] - '0' : -1;
}

convcat_status cvc_gather_launches(const cvc_entry *e, const cvc_view *v, int sms, cvc_launches *out)
{
    return plan_launches(e, v, sms, packing_override(), out, NULL);
}

double cvc_gather_predict_us(const cvc_entry *e, const cvc_view *v, int sms)
{
    cvc_launches ls;
    double us;
    if (sms <= 0 || plan_launches(e, v, sms, packing_override(), &ls, &us) != CONVCAT_OK)
        return INFINITY;
    free(ls.l);
    return us;
}
