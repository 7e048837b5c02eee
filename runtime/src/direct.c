/* direct.c: the direct family (templates/direct_conv.cu.j2: depthwise convolution, and groups of a
 * few channels, c = k): its rules, its time model and the parameters of its launches.
 *
 * fprop and dgrad compute output blocks (tile M rows x tile N columns x tile K channels), a run
 * of them per CTA, from their channels' filters in shared memory and the input read through
 * L1; wgrad sums slices of dy's rows, dy and x read through L1, into f32 partial sums in the
 * workspace, a tap's outputs dw's K x c (c channels a group).
 *
 * Staged kernels (stages > 1: 2D fprop and unit-stride dgrad, depthwise) copy each block's input
 * tile into shared memory, `stages` blocks in flight, a CTA's run of blocks one wave.  Staged
 * wgrad (2D, depthwise) copies each block's dy pixels and the x tile under them, one block ahead,
 * into shared memory; a thread sums a filter row's taps over segments of dy columns (the index's
 * block_strip) and the CTA's sums go to the workspace like the unstaged wgrad's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define FMA_PER_SM_US (128 * 1.6e3)   /* f32 FMAs per SM per microsecond */
#define FMA_OVERHEAD 2.2              /* instructions per useful FMA: loads, conversions, addresses */
#define SCALAR_FETCH 7.0              /* ... times this where inputs load one element at a time (multiplier
                                         > 1, or channels no whole vectors): wav2vec2's C = 1 stem, 1D
                                         filter 10 stride 5 to 512 filters, ran 1478 us on the H200 where
                                         this model without it said 198 (its wgrad: 5026 us) */
#define LAUNCH_US 2.0
#define COORD_LIMIT (INT64_C(1) << 29)
#define WGRAD_STEP 10.0               /* wgrad: instructions a thread spends on a dy pixel besides its FMAs
                                         (dy's load and conversion, a fast row's next x, the checks) */
#define WGRAD_TAP 5.0                 /* ... and per tap where a row goes tap by tap (an x load each) */
#define WGRAD_STRIDE_X 3.5            /* ... and per pass for each W stride past 1 (a ring's further new x: the
                                         stride-2 depthwise rows of networks.txt ran 1.15-1.2x the time the
                                         model gave them against the unit-stride ones, H200) */
#define WGRAD_ISSUE 0.45              /* wgrad: share of the issue slots the kernel keeps busy (ncu on the 3x3
                                         C = 32 row: 0.49 a scheduler, bound by load latency at 24 warps an SM);
                                         over the 26 depthwise wgrad rows of networks.txt the model without it
                                         said 0.44x the measured time (0.33-0.63) */
#define GROUP_WIDE_BLOCK 1.45         /* c > 1 channels a group: blocks of 128 bytes of channels or more ran
                                         1.45x the time of 32- and 64-byte ones (ResNeXt's 3x3 c = 4 and 8
                                         layers, fprop and dgrad, H200): their input tiles crowd L1 */
#define NARROW_BLOCK 0.1              /* blocks whose pixel reads are under 64 bytes (16 16-bit channels, 8
                                         f32): each such request costs the memory pipe what a 64-byte one
                                         does; 16-channel blocks ran 1.05-1.10x the time of 32-channel ones of
                                         the same shape (52 depthwise rows of networks.txt, bf16, H200) */
#define RUN_CTAS_PER_SM 16            /* fprop/dgrad: runs of blocks sized for this many CTAs an SM */
#define MAX_RUN 32                    /* ... and at most this many blocks a run */
/* Measured kernel time over the compute model's, by op (H200; the 26 depthwise rows of networks.txt,
 * bf16 and fp16, heuristic pick: fprop 2.4 (1.5-4.0), dgrad 3.2 (1.8-5.7), wgrad 1.5 (1.2-2.0);
 * ResNeXt's c = 4 and 8 rows the same within 1.4x): the issue rate the counts above assume is not
 * reached.  Scaled, the family is priced in the unit of the TMA and gather families. */
static const double COMPUTE_SCALE[3] = {2.4, 3.2, 1.5};
/* Depthwise fprop and unit-stride dgrad (one filter a group, whole vectors) on a filter row the kernel has
 * compiled in: per SM, microseconds a multiply-add and an output vector (16 bytes), unit-stride
 * fprop, strided fprop, dgrad.  Least squares on every unstaged kernel of the 52 depthwise fprop and
 * dgrad rows of networks.txt (bf16 and fp16, H200; measured less the launch / model 0.69-1.39, rms
 * of the log 0.11, alike for 3, 5 and 7 taps), where the scaled count above was 0.85-1.7x off by
 * filter, in the staged kernels' unit (the measured time). */
static const double DEPTHWISE_FMA_US[3] = {1.95e-5, 2.05e-5, 2.21e-5};
static const double DEPTHWISE_OUT_US[3] = {9.5e-4, 2.52e-3, 6.4e-4};
/* Staged kernels, per SM: microseconds a thread instruction, a 16-byte output vector stored, a 16-byte
 * input vector copied into a tile, and a block.  Least squares on the 52 depthwise fprop and unit-stride
 * dgrad rows of networks.txt (bf16 and fp16, every staged kernel, H200; measured less the launch / model
 * 0.74-1.16, rms of the log 0.07): the kernels run at the issue rate on their instructions, but each copied
 * vector costs 1.4 cycles of an SM and each stored one 0.8, so that the copies bound the 3x3 rows
 * (a third stage, copying two blocks ahead, was slower: 168 registers, fewer CTAs an SM). */
#define STAGED_INSTR_US 4.7e-6
#define STAGED_STORE_US 4.1e-4
#define STAGED_COPY_US 7.3e-4
#define STAGED_BLOCK_US 7.4e-3
/* ... and those of flag TMA_TILE (one TMA copy a tile, no copy instructions in the threads): the
 * constants above scaled so that the model moves by the measured time ratio of each kernel and row
 * (H100, the four staged tiles of the default catalog by TMA and by cp.async on the 88 depthwise
 * fprop and unit-stride dgrad row x type pairs of networks.txt, bf16 and fp16: TMA 1.15-1.23x faster a
 * tile; rms of the log 0.11); a tile's copy now costs an SM about 1.1 cycles a 16-byte vector. */
#define STAGED_TMA_INSTR_US 3.8e-6
#define STAGED_TMA_COPY_US 5.5e-4
#define STAGED_TMA_BLOCK_US 3.7e-3
/* Staged wgrad, per SM: microseconds a thread instruction, a 16-byte vector copied and a block (its dy
 * and x tile).  Least squares on the 26 depthwise wgrad rows of networks.txt (bf16 and fp16, every
 * staged wgrad kernel, H200; measured less the two launches and the workspace's traffic / model
 * 0.69-1.30, rms of the log 0.13, where the staged fprop's constants gave 0.24): a block costs 0.8 us of
 * an SM besides its instructions and copies, so that blocks of small images bound those rows. */
#define STAGED_WGRAD_INSTR_US 6.9e-6
#define STAGED_WGRAD_COPY_US 1.07e-4
#define STAGED_WGRAD_BLOCK_US 0.80

/* How a direct kernel computes a problem: the blocks' tensor, the input tile (the input a block
 * reads: wgrad's shared-memory tile, and the model's halo) and mode. */
typedef struct shape {
    int mode, flip;
    int stride[3], pad[3], dil[3];
    int tile[3];
    int out_ext[3], in_ext[3];
    int in_c, out_c;
} shape;

static void shape_of(const cvc_entry *e, const cvc_view *v, shape *s)
{
    const convcat_problem *p = &v->p;
    const int block[3] = {1, e->k.tile_m, e->k.tile_n};
    memset(s, 0, sizeof *s);
    const bool dgrad = e->k.op == CONVCAT_DGRAD;
    s->mode = dgrad && v->strided;
    s->flip = dgrad && !v->strided;
    for (int a = 0; a < 3; ++a) {
        s->dil[a] = p->dilation[a];
        s->in_ext[a] = dgrad ? v->out[a] : v->in[a];
        s->out_ext[a] = dgrad ? v->in[a] : v->out[a];
        if (!dgrad) {   /* fprop; wgrad: the blocks are dy's, the tile is x under them */
            s->stride[a] = p->stride[a];
            s->pad[a] = p->pad_lo[a];
            const int64_t tile = (int64_t)(block[a] - 1) * p->stride[a] + v->reach[a] + 1;
            s->tile[a] = tile > INT32_MAX ? INT32_MAX : (int)tile;
        } else if (!v->strided) {   /* the correlation of dy with the filter turned around */
            s->stride[a] = 1;
            s->pad[a] = (int)(v->reach[a] - p->pad_lo[a]);
            s->tile[a] = (int)(block[a] - 1 + v->reach[a] + 1);
        } else {   /* dx pixel h takes dy[(h + pad - tap * dil) / stride] where it divides */
            s->stride[a] = p->stride[a];
            s->pad[a] = p->pad_lo[a];
            s->tile[a] = (int)((block[a] - 1 + v->reach[a]) / p->stride[a] + 2);
        }
    }
    s->in_c = dgrad ? p->k : p->c;
    s->out_c = dgrad ? p->c : p->k;
    if (e->k.op != CONVCAT_WGRAD)   /* fprop and dgrad read one depth slice of the tile a pass */
        s->tile[0] = 1;
}

/* The CTAs an SM holds at once by the kernel's registers (ptxas's count, in the index; 8 a thread
 * where the index has none). */
static int ctas_by_registers(const cvc_entry *e)
{
    const int regs = (e->registers + 7) / 8 * 8, per_cta = (regs > 0 ? regs : 8) * e->threads;
    return 65536 / per_cta;
}

/* wgrad: the CTAs an SM holds at once (by registers, at most 8). */
static int wgrad_ctas_per_sm(const cvc_entry *e)
{
    const int ctas = ctas_by_registers(e);
    return ctas < 1 ? 1 : ctas > 8 ? 8 : ctas;
}

/* Staged kernels: the CTAs an SM holds at once by registers, threads and shared memory (228 KB an
 * SM, 1 KB of it reserved a CTA). */
static int staged_ctas_per_sm(const cvc_entry *e, int64_t smem)
{
    int ctas = ctas_by_registers(e);
    if (ctas > 2048 / e->threads)
        ctas = 2048 / e->threads;
    if (ctas > 32)
        ctas = 32;
    /* a TMA_TILE kernel's mbarriers, 8 bytes a stage, are static shared memory */
    const int64_t by_smem = (228 * 1024) / (smem + 1024 + (cvc_has(e, CVC_F_TMA_TILE) ? 8 * e->k.stages : 0));
    if (ctas > by_smem)
        ctas = (int)by_smem;
    return ctas < 1 ? 1 : ctas;
}

/* wgrad: units of taps (a filter row, or the index's unit_taps of a longer one) and thread groups: a
 * unit group per unit while they last (a thread takes units ug, ug + unit_groups, ... in turn),
 * the rest of a channel vector's threads split into pixel groups. */
static void wgrad_groups(const cvc_entry *e, const cvc_view *v, int *units, int *unit_groups, int *pixel_groups)
{
    const int lanes = e->k.tile_k / e->block_vec, per_lane = e->threads / lanes;
    *units = (int)(v->filt[0] * v->filt[1] * cvc_ceil_div(v->filt[2], e->unit_taps));
    *unit_groups = *units < per_lane ? *units : per_lane;
    *pixel_groups = *unit_groups > 0 ? per_lane / *unit_groups : 0;
}

/* Filters a group that a depthwise dgrad sums a plane each (the kernel's p.mult); groups of
 * c = k channels take theirs as the table's c inputs a tap. */
static int planes_of(const cvc_entry *e, const cvc_view *v)
{
    return e->k.op == CONVCAT_DGRAD && v->cg == 1 ? v->kg : 1;
}

/* Shared memory of a launch: fprop and dgrad, the f32 filter table of the CTA's channels (a
 * depthwise dgrad: one plane per filter of a group; c channels a group: c inputs a tap); wgrad,
 * the f32 sums of every pixel group and unit of taps (its taps x the CTA's channels), which the CTA
 * adds in order. */
static bool staged(const cvc_entry *e)
{
    return e->k.stages > 1;
}

/* A staged kernel's input tile: the block's rows and columns with the filter's reach (unit W
 * dilation), in pixels; where the output is smaller than a block (7 x 7 images on 8 x 8 blocks),
 * only its rows, and its columns in whole strips (a thread reads its strip's window whole; rows and
 * strips past the output are not read): less shared memory a CTA, more CTAs an SM. */
static void staged_tile(const cvc_entry *e, const shape *s, const cvc_view *v, int *rows, int *cols)
{
    const int strip = e->block_strip > 0 ? e->block_strip : 1;
    const int64_t strips = cvc_ceil_div(s->out_ext[2], strip) * strip;
    const int64_t out_rows = s->out_ext[1] < e->k.tile_m ? s->out_ext[1] : e->k.tile_m;
    const int64_t out_cols = strips < e->k.tile_n ? strips : e->k.tile_n;
    *rows = (int)((out_rows - 1) * s->stride[1] + v->reach[1] + 1);
    *cols = (int)((out_cols - 1) * s->stride[2] + v->reach[2] + 1);
    if (cvc_has(e, CVC_F_TMA_TILE))   /* an odd row pitch of the unpadded tile: the template's quarter warps read */
        *cols |= 1;                     /* consecutive rows, which then fall in distinct bank groups */
}

static int64_t round128(int64_t b)
{
    return (b + 127) / 128 * 128;
}

/* Staged kernels of flag TMA_TILE: `in` as their tile copy sees it, C x W x H x N (packed, channels
 * innermost), boxes of the block's tile (staged_tile) and of the kernel's channels; zeros outside. */
static void tile_map(const cvc_entry *e, const cvc_view *v, cvc_tiled_desc *m)
{
    shape s;
    shape_of(e, v, &s);
    int rows, cols;
    staged_tile(e, &s, v, &rows, &cols);
    memset(m, 0, sizeof *m);
    m->rank = 4;
    m->elem_bytes = v->a_bytes;
    const uint64_t ext[4] = {(uint64_t)s.in_c, (uint64_t)s.in_ext[2], (uint64_t)s.in_ext[1],
                             (uint64_t)v->p.n * (uint64_t)s.in_ext[0]};
    const uint32_t box[4] = {(uint32_t)e->k.tile_k, (uint32_t)cols, (uint32_t)rows, 1};
    cvc_packed_layout(m->rank, m->elem_bytes, ext, m->dims, m->strides);
    for (int i = 0; i < 4; ++i)
        m->box[i] = box[i], m->elem_strides[i] = 1;
}

/* Staged wgrad's blocks: dy rows and segments of block_strip columns a block (at most the tile's,
 * as even as they go across the image), the x tile's rows and row pitch in pixels (the columns under
 * the block, made odd so that consecutive rows of 64-byte pixels fall in alternate bank halves; the
 * kernel copies the pitch), the pixel groups (threads of a channel vector and filter row: the fewest
 * that take a block's segments in as few rounds as the CTA's threads allow; 0 where a channel
 * vector's threads are fewer than the filter's rows), the blocks along H and W, and the bytes of a
 * stage. */
typedef struct wgrad_blocks {
    int rows, segs, x_rows, pitch, pixel_groups;
    int64_t blocks_h, blocks_w, stage_bytes, x_bytes;
} wgrad_blocks;

static void staged_wgrad_blocks(const cvc_entry *e, const shape *s, const cvc_view *v, wgrad_blocks *b)
{
    const int seg = e->block_strip, max_segs = e->k.tile_n / seg;
    const int64_t cols = cvc_ceil_div(s->out_ext[2], seg);
    b->rows = (int)cvc_ceil_div(s->out_ext[1], cvc_ceil_div(s->out_ext[1], e->k.tile_m));
    b->segs = (int)cvc_ceil_div(cols, cvc_ceil_div(cols, max_segs));
    b->blocks_h = cvc_ceil_div(s->out_ext[1], b->rows);
    b->blocks_w = cvc_ceil_div(cols, b->segs);
    /* Extents and bytes clamped to INT32_MAX (a tile that large is refused: it passes shared memory),
     * so that no product overflows. */
    const int64_t x_rows = (int64_t)(b->rows - 1) * s->stride[1] + v->reach[1] + 1;
    const int64_t pitch = (int64_t)(b->segs * seg - 1) * s->stride[2] + v->reach[2] + 1;
    b->x_rows = (int)(x_rows < INT32_MAX ? x_rows : INT32_MAX);
    b->pitch = (int)(pitch < INT32_MAX ? pitch : INT32_MAX) | 1;
    const int items = b->rows * b->segs, most = e->threads / (e->k.tile_k / e->block_vec) / (int)v->filt[1];
    b->pixel_groups = most < 1 ? 0 : (int)cvc_ceil_div(items, cvc_ceil_div(items, most));
    const double x_bytes = (double)b->x_rows * b->pitch * e->stage_pixel_bytes;
    b->x_bytes = round128(x_bytes < INT32_MAX ? (int64_t)x_bytes : INT32_MAX);
    b->stage_bytes = b->x_bytes + round128((int64_t)items * seg * e->stage_pixel_bytes);
}

/* Staged wgrad's pixel groups for a problem (staged_wgrad_blocks). */
static int staged_wgrad_pixel_groups(const cvc_entry *e, const cvc_view *v)
{
    shape s;
    shape_of(e, v, &s);
    wgrad_blocks b;
    staged_wgrad_blocks(e, &s, v, &b);
    return b.pixel_groups;
}

static int64_t smem_of(const cvc_entry *e, const cvc_view *v)
{
    if (staged(e) && e->k.op == CONVCAT_WGRAD) {   /* `stages` copies of a block, or the pixel groups' sums */
        shape s;
        shape_of(e, v, &s);
        wgrad_blocks b;
        staged_wgrad_blocks(e, &s, v, &b);
        const int64_t sums = (int64_t)b.pixel_groups * v->taps * e->k.tile_k * 4;
        return e->k.stages * b.stage_bytes > sums ? e->k.stages * b.stage_bytes : sums;
    }
    if (staged(e)) {   /* the filter table, then `stages` input tiles */
        shape s;
        shape_of(e, v, &s);
        int rows, cols;
        staged_tile(e, &s, v, &rows, &cols);
        return round128(v->taps * e->k.tile_k * 4) + e->k.stages * round128((int64_t)rows * cols * e->stage_pixel_bytes);
    }
    if (e->k.op != CONVCAT_WGRAD)
        return (int64_t)planes_of(e, v) * v->cg * v->taps * e->k.tile_k * 4;
    int units, ug, pg;
    wgrad_groups(e, v, &units, &ug, &pg);
    return (int64_t)pg * units * e->unit_taps * e->k.tile_k * 4;
}

/* The widest load of the kernel's dividing the channels of `in` (and of dy for wgrad). */
static int load_vec(const cvc_entry *e, int chans)
{
    for (int v = 8; v > 1; v /= 2)
        if ((e->vec_mask & v) && chans % v == 0)
            return v;
    return 1;
}

convcat_status cvc_direct_rules(const cvc_entry *e, const cvc_view *v, char *why, size_t n)
{
    static const char *const axis[3] = {"D", "H", "W"};
    for (int a = 0; a < 3; ++a)
        if (v->in[a] >= COORD_LIMIT || v->out[a] >= COORD_LIMIT || v->reach[a] >= COORD_LIMIT ||
            v->p.pad_lo[a] >= COORD_LIMIT || (int64_t)v->out[a] * v->p.stride[a] >= COORD_LIMIT) {
            cvc_say(why, n, "extents, padding or filter reach along %s of 2^29 or more: the direct kernel's "
                    "coordinates are below 2^30", axis[a]);
            return CONVCAT_ERR_UNSUPPORTED;
        }
    if (v->pixels > INT32_MAX || v->in_pixels > INT32_MAX || (int64_t)v->p.k * v->taps * v->cg > INT32_MAX) {
        cvc_say(why, n, "%lld output pixels: past the direct kernel's 32-bit block index", (long long)v->pixels);
        return CONVCAT_ERR_UNSUPPORTED;
    }
    if (staged(e)) {
        const convcat_problem *p = &v->p;
        if (e->k.op == CONVCAT_DGRAD && v->strided) {
            cvc_say(why, n, "stride %dx%d: this staged direct kernel computes unit-stride dgrad only", p->stride[1],
                    p->stride[2]);
            return CONVCAT_ERR_UNSUPPORTED;
        }
        if (v->cg != 1 || v->kg != 1) {
            cvc_say(why, n, "C / groups = %d, K / groups = %d: this staged direct kernel takes one channel and one filter "
                    "a group", v->cg, v->kg);
            return CONVCAT_ERR_UNSUPPORTED;
        }
        if (!(e->vec_mask & load_vec(e, p->c))) {
            cvc_say(why, n, "C = %d: this staged direct kernel copies whole vectors of %d channels", p->c, e->vec_mask);
            return CONVCAT_ERR_UNSUPPORTED;
        }
        if (e->k.op == CONVCAT_WGRAD && staged_wgrad_pixel_groups(e, v) < 1) {
            cvc_say(why, n, "filter height %lld: this staged direct kernel (wgrad) takes filters of at most %d rows "
                    "(a thread of each channel vector a row)", (long long)v->filt[1], e->threads / (e->k.tile_k / e->block_vec));
            return CONVCAT_ERR_UNSUPPORTED;
        }
        const int sw = e->k.op == CONVCAT_DGRAD ? 1 : p->stride[2];   /* fprop, wgrad: the problem's */
        if (p->dilation[2] != 1 || !cvc_shape_bit(e->row_mask, p->s, sw)) {
            char rows[96] = "";
            for (int st = 1; st <= 2; ++st)
                for (int taps = 1; taps < 8; ++taps)
                    if (cvc_shape_bit(e->row_mask, taps, st))
                        snprintf(rows + strlen(rows), sizeof rows - strlen(rows), "%s%d/%d", rows[0] ? ", " : "", taps,
                                 st);
            cvc_say(why, n, "filter width %d at W stride %d, W dilation %d: this staged direct kernel has filter rows "
                    "(taps/W stride, dilation 1) of %s compiled in", p->s, sw, p->dilation[2], rows);
            return CONVCAT_ERR_UNSUPPORTED;
        }
    }
    if (cvc_has(e, CVC_F_TMA_TILE)) {
        cvc_tiled_desc m;
        tile_map(e, v, &m);
        char tma_why[160];
        if (!cvc_tiled_desc_valid(&m, tma_why, sizeof tma_why)) {
            cvc_say(why, n, "input tile (TMA copy): %s", tma_why);
            return CONVCAT_ERR_UNSUPPORTED;
        }
    }
    const int64_t smem = smem_of(e, v);
    if (smem > e->smem_bytes) {
        if (e->k.op != CONVCAT_WGRAD)
            cvc_say(why, n, "filter %dx%dx%d of %d filters a group: this kernel's table of its %d channels' filters "
                    "needs %lld bytes of shared memory, more than its %d", v->filt[0], v->filt[1], v->filt[2], (int)v->kg,
                    e->k.tile_k, (long long)smem, e->smem_bytes);
        else if (staged(e))
            cvc_say(why, n, "filter %dx%d at stride %dx%d: this staged direct kernel's wgrad blocks (dy and the x tile under "
                    "them, %d stages) need %lld bytes of shared memory, more than its %d", (int)v->filt[1],
                    (int)v->filt[2], v->p.stride[1], v->p.stride[2], e->k.stages, (long long)smem, e->smem_bytes);
        else
            cvc_say(why, n, "filter %dx%dx%d: this wgrad kernel's sums of its units of taps need %lld bytes of shared "
                    "memory, more than its %d", v->filt[0], v->filt[1], v->filt[2], (long long)smem, e->smem_bytes);
        return CONVCAT_ERR_UNSUPPORTED;
    }
    return CONVCAT_OK;
}

/* One wave of CTAs (`ctas_per_sm` an SM) over all channel blocks: `items` (blocks or dy rows) in
 * runs of blocks_per_slice, a CTA a run. */
static void one_wave(cvc_direct_params *d, int64_t items, int sms, int ctas_per_sm)
{
    int64_t slices = (int64_t)(sms > 0 ? sms : 1) * ctas_per_sm / d->chan_blocks;   /* no partial wave */
    slices = slices < 1 ? 1 : slices > items ? items : slices;
    d->blocks_per_slice = (int32_t)cvc_ceil_div(items, slices);
    d->slices = (int32_t)cvc_ceil_div(items, d->blocks_per_slice);
}

convcat_status cvc_direct_launches(const cvc_entry *e, const cvc_view *v, int sms, cvc_launches *out)
{
    const convcat_problem *p = &v->p;
    const convcat_status st = cvc_launches_alloc(out, 1);
    if (st != CONVCAT_OK)
        return st;
    shape s;
    shape_of(e, v, &s);
    cvc_direct_params d = {0};
    d.n = p->n;
    d.mult = v->cg == 1 ? v->kg : 1;   /* filters a group of one channel */
    d.cg = v->cg;
    d.in_c = s.in_c, d.out_c = s.out_c;
    d.mode = s.mode, d.flip = s.flip;
    for (int a = 0; a < 3; ++a) {
        d.in_ext[a] = s.in_ext[a], d.out_ext[a] = s.out_ext[a];
        d.filt[a] = v->filt[a];
        d.stride[a] = s.stride[a], d.pad[a] = s.pad[a], d.dil[a] = s.dil[a];
    }
    d.blocks[0] = s.out_ext[0];
    d.blocks[1] = (int32_t)cvc_ceil_div(s.out_ext[1], e->k.tile_m);
    d.blocks[2] = (int32_t)cvc_ceil_div(s.out_ext[2], e->k.tile_n);
    /* wgrad's channels are a tap's outputs, K x c */
    d.chan_blocks = (int32_t)cvc_ceil_div((int64_t)s.out_c * (e->k.op == CONVCAT_WGRAD ? v->cg : 1), e->k.tile_k);
    d.vec = load_vec(e, s.in_c);
    if (e->k.op == CONVCAT_WGRAD && staged(e)) {   /* blocks of dy, sized to the image */
        wgrad_blocks b;
        staged_wgrad_blocks(e, &s, v, &b);
        d.blocks[1] = (int32_t)b.blocks_h, d.blocks[2] = (int32_t)b.blocks_w;
        d.tile_ext[0] = b.rows, d.tile_ext[1] = b.x_rows, d.tile_ext[2] = b.pitch;
        d.units = b.segs, d.pixel_groups = b.pixel_groups;
        one_wave(&d, (int64_t)p->n * d.blocks[1] * d.blocks[2], sms, staged_ctas_per_sm(e, smem_of(e, v)));
    } else if (e->k.op == CONVCAT_WGRAD) {
        d.vec = load_vec(e, p->c) < load_vec(e, p->k) ? load_vec(e, p->c) : load_vec(e, p->k);
        wgrad_groups(e, v, &d.units, &d.unit_groups, &d.pixel_groups);
        /* Slices of dy rows (image, depth, row) */
        one_wave(&d, (int64_t)p->n * s.out_ext[0] * s.out_ext[1], sms, wgrad_ctas_per_sm(e));
    } else if (staged(e)) {   /* runs of blocks whose tiles a CTA copies `stages` ahead */
        int rows, cols;
        staged_tile(e, &s, v, &rows, &cols);
        d.tile_ext[1] = rows, d.tile_ext[2] = cols;
        one_wave(&d, (int64_t)p->n * d.blocks[1] * d.blocks[2], sms, staged_ctas_per_sm(e, smem_of(e, v)));
    } else {
        /* Runs of blocks a CTA, so that its filter table loads about RUN_CTAS_PER_SM times an SM. */
        const int64_t blocks = (int64_t)p->n * d.blocks[0] * d.blocks[1] * d.blocks[2];
        int64_t run = blocks * d.chan_blocks / ((int64_t)(sms > 0 ? sms : 1) * RUN_CTAS_PER_SM);
        run = run < 1 ? 1 : run > MAX_RUN ? MAX_RUN : run;
        if (e->block_run > 1)   /* whole runs of the kernel's unit (its 3x3 path keeps every row group busy) */
            run = cvc_ceil_div(run, e->block_run) * e->block_run;
        d.blocks_per_slice = (int32_t)run;
        d.slices = (int32_t)cvc_ceil_div(blocks, run);
    }
    if (e->k.op == CONVCAT_WGRAD) {
        /* each slice's sums one K x taps (x c) plane of the workspace; KEY_reduce a warp per output,
         * eight a CTA */
        d.out_elems = (int64_t)p->k * v->taps * v->cg;
        out->workspace_bytes = (size_t)d.slices * (size_t)d.out_elems * sizeof(float);
        const int64_t rblocks = cvc_ceil_div(d.out_elems, 8);
        out->reduce_grid = (unsigned)(rblocks < 16 * sms ? rblocks : 16 * sms);
    }
    out->l[0].grid = (unsigned)((int64_t)d.chan_blocks * d.slices);
    out->l[0].block = (unsigned)e->threads;
    out->l[0].smem = (unsigned)smem_of(e, v);
    out->l[0].u.d = d;
    if (cvc_has(e, CVC_F_TMA_TILE))
        tile_map(e, v, &out->l[0].map);
    return CONVCAT_OK;
}

double cvc_direct_predict_us(const cvc_entry *e, const cvc_view *v, int sms)
{
    const convcat_problem *p = &v->p;
    shape s;
    shape_of(e, v, &s);
    /* Work of whole blocks (part-blocks at the edges count whole) and whole channel blocks. */
    const int64_t blocks = (int64_t)p->n * s.out_ext[0] * cvc_ceil_div(s.out_ext[1], e->k.tile_m) *
                           cvc_ceil_div(s.out_ext[2], e->k.tile_n) * cvc_ceil_div(s.out_c, e->k.tile_k);
    const double outputs = (double)blocks * e->k.tile_m * e->k.tile_n * e->k.tile_k;
    /* strided dgrad: depthwise by phases, a dx pixel's taps only; c > 1 visits every tap */
    const double taps = e->k.op == CONVCAT_DGRAD && v->strided && v->cg == 1
                            ? (double)v->taps / ((double)p->stride[0] * p->stride[1] * p->stride[2])
                            : (double)v->taps;
    /* Filter rows with their taps compiled in, at dilation 1 (fprop/dgrad's fast rows, wgrad's rings;
     * strided dgrad has neither). */
    const bool row = p->dilation[2] == 1 && cvc_shape_bit(v->cg == 1 ? e->row_mask : e->group_row_mask, p->s,
                                                          p->stride[2]);
    const bool fast = e->k.op != CONVCAT_WGRAD && row && !(e->k.op == CONVCAT_DGRAD && v->strided);
    /* Whole-vector loads: one filter a group and channels in whole vectors (wgrad: of x and dy). */
    const bool vector = (v->kg == 1 || v->kg == v->cg) && load_vec(e, e->k.op == CONVCAT_DGRAD ? p->k : p->c) == e->block_vec &&
                        (e->k.op != CONVCAT_WGRAD || load_vec(e, p->k) == e->block_vec);
    /* Instructions a useful FMA: c channels a group share each input's load and conversion c ways
     * (the filter's loads from shared memory stay one a STRIP of FMAs). */
    const double per_fma = 1.0 + (FMA_OVERHEAD * (fast ? 0.6 : 1.0) - 1.0) / v->cg;
    double compute_us = outputs * taps * v->cg * per_fma * (vector ? 1.0 : SCALAR_FETCH) / (FMA_PER_SM_US * sms) *
                        (v->cg > 1 && e->k.tile_k * v->a_bytes >= 128 ? GROUP_WIDE_BLOCK : 1.0) *
                        (1.0 + NARROW_BLOCK * fmax(64.0 / (e->k.tile_k * v->a_bytes) - 1.0, 0.0));
    if (e->k.op == CONVCAT_WGRAD && !staged(e)) {
        /* A thread's steps: a dy pixel for its unit of taps and vector of outputs (K x c a tap);
         * its filter row's x window stays in registers where the template has the row compiled in
         * (`row`), else it loads an x pixel a tap.  Idle threads of the CTA (units x pixel groups
         * short of its threads) count. */
        int units, ug, pg;
        wgrad_groups(e, v, &units, &ug, &pg);
        const int lanes = e->k.tile_k / e->block_vec;
        const double used = pg > 0 ? (double)ug * pg * lanes / e->threads : 1.0;   /* busy threads */
        const double rounds = ug > 0 ? (double)cvc_ceil_div(units, ug) * ug / units : 1.0;   /* units a thread, rounded up */
        const double unit_taps = v->filt[2] < e->unit_taps ? v->filt[2] : e->unit_taps;
        const double steps = (double)v->pixels * units * cvc_ceil_div(p->k * v->cg, e->k.tile_k) * lanes;
        const double passes = row ? (double)cvc_ceil_div(p->s, e->ring_taps) : 1.0;
        const double per_step = unit_taps * e->block_vec + (WGRAD_STEP + WGRAD_STRIDE_X * (p->stride[2] - 1)) * passes +
                                (row ? 0.0 : WGRAD_TAP * unit_taps);
        compute_us = steps * rounds * per_step * (vector ? 1.0 : SCALAR_FETCH) / (FMA_PER_SM_US * sms * used * WGRAD_ISSUE);
    }
    if (staged(e) && e->k.op == CONVCAT_WGRAD) {
        /* Per SM: the threads' instructions (a segment of dy columns times a filter row's taps, the
         * segment's dy and x window read and converted once), the 16-byte vectors copied (the x tile
         * and dy), and the blocks (STAGED_WGRAD_*: fitted on the H200). */
        wgrad_blocks b;
        staged_wgrad_blocks(e, &s, v, &b);
        const double seg = e->block_strip, vec_ = e->block_vec, window = (seg - 1.0) * s.stride[2] + p->s;
        const double nblocks = (double)p->n * b.blocks_h * b.blocks_w * cvc_ceil_div(p->k, e->k.tile_k);
        const double per_seg = seg * p->s * vec_ + (seg + window) * (vec_ + 1.0) + 8.0;
        const double instr = nblocks * b.rows * b.segs * p->r * (e->k.tile_k / vec_) * per_seg;
        const double copies = nblocks * ((double)b.x_rows * b.pitch + (double)b.rows * b.segs * seg) *
                              (e->k.tile_k * v->a_bytes / 16.0);
        compute_us = (instr * STAGED_WGRAD_INSTR_US + copies * STAGED_WGRAD_COPY_US + nblocks * STAGED_WGRAD_BLOCK_US) / sms;
    } else if (staged(e)) {
        /* Per SM: the threads' instructions (a filter row's FMAs, its window of the tile read and
         * converted once a strip, its taps' filter vectors), and the 16-byte vectors of the output
         * stored and of the input tiles copied, and the blocks (STAGED_*: fitted on the H200). */
        const double strip = e->block_strip, vec_ = e->block_vec, vecs = outputs / vec_;
        const double window = (strip - 1.0) * s.stride[2] + p->s;
        const double instr = vecs * p->r * (vec_ * p->s + ((vec_ + 1.0) * window + 2.0 * p->s) / strip);
        int rows, cols;
        staged_tile(e, &s, v, &rows, &cols);
        const double block_count = outputs / ((double)e->k.tile_m * e->k.tile_n * e->k.tile_k);
        const double copies = block_count * rows * cols * (e->k.tile_k / vec_);
        const bool tma = cvc_has(e, CVC_F_TMA_TILE);
        compute_us = (instr * (tma ? STAGED_TMA_INSTR_US : STAGED_INSTR_US) + vecs * STAGED_STORE_US +
                      copies * (tma ? STAGED_TMA_COPY_US : STAGED_COPY_US) +
                      block_count * (tma ? STAGED_TMA_BLOCK_US : STAGED_BLOCK_US)) / sms;
    } else {
        /* unit-stride dgrad of groups of c > 1 runs fprop's code on the filter turned around (and ran
         * at fprop's rate: ResNeXt's c = 8 layers, H200), where COMPUTE_SCALE's dgrad figure is of
         * depthwise rows */
        const int as = e->k.op == CONVCAT_DGRAD && v->cg > 1 && !v->strided ? CONVCAT_FPROP : e->k.op;
        compute_us *= COMPUTE_SCALE[as];
        if (fast && vector && v->cg == 1 && v->kg == 1) {
            const int c = e->k.op == CONVCAT_DGRAD ? 2 : v->strided;
            compute_us = (outputs * taps * DEPTHWISE_FMA_US[c] + outputs / e->block_vec * DEPTHWISE_OUT_US[c]) *
                         (1.0 + NARROW_BLOCK * fmax(64.0 / (e->k.tile_k * v->a_bytes) - 1.0, 0.0)) / sms;
        }
    }
    /* The tensors once each; the input tiles' halos again (from L2, at half weight). */
    const double in_bytes = (double)(e->k.op == CONVCAT_DGRAD ? v->pixels * p->k : v->in_pixels * p->c) * v->a_bytes;
    const double out_bytes = (double)(e->k.op == CONVCAT_DGRAD ? v->in_pixels * p->c : v->pixels * p->k) * v->out_bytes;
    const double halo = (double)s.tile[1] * s.tile[2] / ((double)e->k.tile_m * e->k.tile_n * p->stride[1] * p->stride[2]);
    const double dram_us = (in_bytes * (1.0 + 0.5 * fmax(halo - 1.0, 0.0)) + out_bytes) / CVC_DRAM_BYTES_PER_US;
    double us = fmax(compute_us, dram_us) + (staged(e) ? 0.0 : 0.3 * fmin(compute_us, dram_us)) + LAUNCH_US;
    if (e->k.op == CONVCAT_WGRAD) {
        cvc_launches ls;
        if (cvc_direct_launches(e, v, sms, &ls) != CONVCAT_OK)
            return INFINITY;
        free(ls.l);
        us += (double)ls.workspace_bytes * 2.0 / CVC_DRAM_BYTES_PER_US + LAUNCH_US;
    }
    return us;
}
