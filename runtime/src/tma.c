/* tma.c: the TMA family: tensor-map parameters in pure C, every limit TMA puts on
 * them, dgrad's stride phases and the tile geometry of a plan.
 *
 * The runtime computes each descriptor's parameters here, checks them on the
 * CPU (these are the rules cuTensorMapEncodeIm2col/Tiled and the im2col
 * instruction enforce, from cuda.h and the PTX ISA), and only then, at
 * launch, hands them to the driver.  A problem that would break a limit is
 * refused by the problem rules with the limit's sentence.
 */
#include "internal.h"

#define TWO32 (UINT64_C(1) << 32)
#define TWO40 (UINT64_C(1) << 40)

void cvc_packed_layout(int rank, int elem_bytes, const uint64_t *ext, uint64_t *dims, uint64_t *strides)
{
    uint64_t bytes = (uint64_t)elem_bytes;
    for (int i = 0; i < rank; ++i) {
        dims[i] = ext[i];
        bytes *= ext[i];
        if (i + 1 < rank)
            strides[i] = bytes;
    }
}

/* An im2col map over an activation-like tensor (N, spatial..., channels):
 * `ext` its spatial extents W first, the bounding box [lower, extent - 1 + upper]
 * walked in steps of `step`, taps reaching `reach` further. */
static void im2col(const convcat_problem *p, int elem_bytes, int channels, const int *ext, const int64_t *lower,
                   const int64_t *upper, const int64_t *reach, const int *step, uint32_t box_channels,
                   uint32_t box_pixels, int swizzle, cvc_im2col_desc *a)
{
    const int sp = p->dims;
    *a = (cvc_im2col_desc){.rank = sp + 2, .elem_bytes = elem_bytes, .channels_per_pixel = box_channels,
                           .pixels_per_column = box_pixels, .swizzle_bytes = swizzle};
    uint64_t e[5] = {(uint64_t)channels};
    a->elem_strides[0] = 1;
    /* Corners and reaches can pass the int range (padding lets the filter fit): saturate; the
     * limits of cvc_im2col_desc_valid refuse anything that large. */
    for (int i = 0; i < sp; ++i) {
        e[1 + i] = (uint64_t)ext[i];
        a->lower[i] = lower[i] < INT32_MIN ? INT32_MIN : lower[i] > INT32_MAX ? INT32_MAX : (int)lower[i];
        a->upper[i] = upper[i] < INT32_MIN ? INT32_MIN : upper[i] > INT32_MAX ? INT32_MAX : (int)upper[i];
        a->max_offset[i] = reach[i] > UINT32_MAX ? UINT32_MAX : (uint32_t)reach[i];
        a->elem_strides[1 + i] = (uint32_t)step[i];
    }
    e[sp + 1] = (uint64_t)p->n;
    a->elem_strides[sp + 1] = 1;
    cvc_packed_layout(a->rank, a->elem_bytes, e, a->dims, a->strides);
}

static void tiled(int rank, int elem_bytes, const uint64_t *ext, uint32_t box_inner, uint32_t box_outer, int swizzle,
                  cvc_tiled_desc *t)
{
    *t = (cvc_tiled_desc){.rank = rank, .elem_bytes = elem_bytes, .swizzle_bytes = swizzle};
    cvc_packed_layout(rank, elem_bytes, ext, t->dims, t->strides);
    for (int i = 0; i < rank; ++i)
        t->box[i] = t->elem_strides[i] = 1;
    t->box[0] = box_inner;
    t->box[rank - 1] = box_outer;
}

/* The swizzle span of an operand map whose box rows are `row_bytes`: the entry's, or the row where
 * it is narrower (sm90a K-major stages of one 64-byte row: tile K 32 of f16/bf16). */
static int operand_swizzle(const cvc_entry *e, int row_bytes)
{
    return row_bytes < e->swizzle_bytes ? row_bytes : e->swizzle_bytes;
}

void cvc_tma_operands(const cvc_entry *e, const cvc_view *v, cvc_operand_desc *a, cvc_operand_desc *b)
{
    const convcat_problem *p = &v->p;
    const int sp = p->dims;
    const int in[3] = {p->w, p->h, p->d}, filt[3] = {p->s, p->r, p->t};   /* W first */
    int64_t lower[3], upper[3], reach[3];
    int step[3];
    for (int i = 0; i < sp; ++i) {
        const int ax = 2 - i;                     /* problem arrays are D, H, W */
        reach[i] = v->reach[ax];
        lower[i] = -p->pad_lo[ax];
        upper[i] = p->pad_hi[ax] - reach[i];
        step[i] = p->stride[ax];
    }
    /* The filter, innermost first (C, S, R, T, K): fprop reads boxes of
     * (channels, output channels), dgrad (input channels, dy channels). */
    uint64_t ext_w[5] = {(uint64_t)v->cg};
    for (int i = 0; i < sp; ++i)
        ext_w[1 + i] = (uint64_t)filt[i];
    ext_w[sp + 1] = (uint64_t)p->k;
    const int ab = v->a_bytes, bb = v->b_bytes;
    const int swz_a = operand_swizzle(e, e->a_box_cols * ab), swz_b = operand_swizzle(e, e->b_box_cols * bb);
    *a = (cvc_operand_desc){0};
    *b = (cvc_operand_desc){0};
    switch (e->k.op) {
    case CONVCAT_DGRAD: {
        cvc_dgrad_phase ph;
        cvc_dgrad_phase_at(v, 0, &ph);
        cvc_tma_dgrad_a(e, v, &ph, &a->i);
        a->im2col = true;
        if (cvc_has(e, CVC_F_TRANSPOSES_FILTER)) {   /* the K-major copy (K, C, S, R, T): K x C boxes per tap */
            uint64_t ext_t[5] = {(uint64_t)p->k, (uint64_t)p->c};
            for (int i = 0; i < sp; ++i)
                ext_t[2 + i] = (uint64_t)filt[i];
            tiled(sp + 2, bb, ext_t, (uint32_t)e->b_box_cols, 1, swz_b, &b->t);
            b->t.box[1] = (uint32_t)e->b_box_rows;
            break;
        }
        tiled(sp + 2, bb, ext_w, (uint32_t)e->b_box_cols, (uint32_t)e->b_box_rows, swz_b, &b->t);
        break;
    }
    case CONVCAT_WGRAD: {
        const uint64_t ext_dy[2] = {(uint64_t)p->k, (uint64_t)v->pixels};
        tiled(2, ab, ext_dy, (uint32_t)e->a_box_cols, (uint32_t)e->a_box_rows, swz_a, &a->t);
        b->im2col = true;
        im2col(p, bb, p->c, in, lower, upper, reach, step, (uint32_t)e->b_box_cols, (uint32_t)e->b_box_rows, swz_b,
               &b->i);
        break;
    }
    default:
        if (cvc_has(e, CVC_F_HALO)) {   /* x (C, W, H, N): one box is a block's input tile */
            const uint64_t ext_x[4] = {(uint64_t)p->c, (uint64_t)p->w, (uint64_t)p->h, (uint64_t)p->n};
            tiled(4, ab, ext_x, (uint32_t)e->a_box_cols, 1, swz_a, &a->t);
            a->t.box[1] = (uint32_t)(e->halo_cols + e->halo_reach);
            a->t.box[2] = (uint32_t)e->a_box_rows;
            tiled(sp + 2, bb, ext_w, (uint32_t)e->b_box_cols, (uint32_t)e->b_box_rows, swz_b, &b->t);
            break;
        }
        a->im2col = true;
        im2col(p, ab, p->c, in, lower, upper, reach, step, (uint32_t)e->a_box_cols, (uint32_t)e->a_box_rows, swz_a,
               &a->i);
        tiled(sp + 2, bb, ext_w, (uint32_t)e->b_box_cols, (uint32_t)e->b_box_rows, swz_b, &b->t);
    }
}

/* The inverse of a modulo m (a and m coprime, m >= 1), in [0, m): extended Euclid. */
static int64_t inverse_mod(int64_t a, int64_t m)
{
    int64_t r0 = m, r1 = a % m, t0 = 0, t1 = 1;
    while (r1) {
        const int64_t q = r0 / r1, r = r0 - q * r1, t = t0 - q * t1;
        r0 = r1, r1 = r, t0 = t1, t1 = t;
    }
    return ((t0 % m) + m) % m;
}

/* Axis i (W first) of a phase: dx pixels ph, ph + st, ... and the taps that reach them. */
static void phase_axis(const cvc_view *v, int i, int ph, cvc_phase_axis *x)
{
    const convcat_problem *p = &v->p;
    const int ax = 2 - i, st = p->stride[ax], dil = p->dilation[ax], pad = p->pad_lo[ax];
    const int in = v->in[ax], dy = v->out[ax], filt = v->filt[ax];
    const int gg = cvc_gcd(st, dil), step = st / gg;
    *x = (cvc_phase_axis){.ph = ph, .pixels = (in - ph + st - 1) / st, .tap_step = step, .dil = dil / gg};
    /* Taps r with r * dil = ph + pad (mod st): r0, r0 + step, ... below the filter's extent.  The
     * congruence has solutions where gg divides ph + pad; r0, the least, is (ph + pad) / gg times
     * the inverse of dil / gg modulo step. */
    const int64_t rest = ((int64_t)ph + pad) % st;
    int64_t r0 = -1;
    if (rest % gg == 0)
        r0 = rest / gg % step * inverse_mod(dil / gg, step) % step;
    if (r0 >= filt)
        r0 = -1;
    x->taps = r0 < 0 ? 0 : (int)((filt - 1 - r0) / step + 1);
    x->tap0 = r0 < 0 ? 0 : (int)(r0 + (int64_t)(x->taps - 1) * step);
    /* dy index of dx pixel ph + st * j at tap tap0 is j + lower; tap k adds k * dil. */
    x->lower = r0 < 0 ? 0 : (int)(((int64_t)ph + pad - (int64_t)x->tap0 * dil) / st);
    x->upper = x->pixels - dy + x->lower;
}

void cvc_dgrad_phase_at(const cvc_view *v, int index, cvc_dgrad_phase *out)
{
    for (int i = 0; i < 3; ++i) {
        const int n = v->axis_phases[i];
        phase_axis(v, i, index % n, &out->axis[i]);
        index /= n;
    }
}

static int64_t phase_reach(const cvc_phase_axis *x)
{
    return x->taps > 0 ? (int64_t)(x->taps - 1) * x->dil : 0;
}

static bool same_class(cvc_phase_key key, const cvc_phase_axis *a, const cvc_phase_axis *b)
{
    if (key == CVC_PHASE_SIZE)
        return a->pixels == b->pixels && a->taps == b->taps;
    return a->lower == b->lower && a->upper == b->upper && phase_reach(a) == phase_reach(b);
}

void cvc_dgrad_phase_classes(const cvc_view *v, cvc_phase_key key, cvc_phase_classes *c)
{
    c->every = false;
    for (int i = 0; i < 3; ++i) {
        int classes = 0;
        for (int ph = 0; ph < v->axis_phases[i]; ++ph) {
            cvc_phase_axis x;
            phase_axis(v, i, ph, &x);
            int k = 0;
            while (k < classes && k < CVC_PHASE_CLASSES && !same_class(key, &c->axis[i][k], &x))
                ++k;
            if (k < classes && k < CVC_PHASE_CLASSES) {
                ++c->count[i][k];
                continue;
            }
            if (classes < CVC_PHASE_CLASSES)
                c->axis[i][classes] = x, c->count[i][classes] = 1;
            ++classes;
        }
        c->n[i] = classes;
        c->every |= classes > CVC_PHASE_CLASSES;
    }
    c->visits = c->every ? v->phases : c->n[0] * c->n[1] * c->n[2];
}

int64_t cvc_dgrad_phase_visit(const cvc_view *v, const cvc_phase_classes *c, int i, cvc_dgrad_phase *ph)
{
    if (c->every) {
        cvc_dgrad_phase_at(v, i, ph);
        return 1;
    }
    int64_t phases = 1;
    for (int a = 0; a < 3; i /= c->n[a], ++a) {
        ph->axis[a] = c->axis[a][i % c->n[a]];
        phases *= c->count[a][i % c->n[a]];
    }
    return phases;
}

int cvc_dgrad_phase_index(const cvc_view *v, const cvc_dgrad_phase *ph)
{
    return ph->axis[0].ph + v->axis_phases[0] * (ph->axis[1].ph + v->axis_phases[1] * ph->axis[2].ph);
}

void cvc_tma_dgrad_a(const cvc_entry *e, const cvc_view *v, const cvc_dgrad_phase *ph, cvc_im2col_desc *a)
{
    const convcat_problem *p = &v->p;
    const int dy[3] = {v->out[2], v->out[1], v->out[0]};
    int64_t lower[3], upper[3], reach[3];
    const int ones[3] = {1, 1, 1};
    for (int i = 0; i < p->dims; ++i) {
        const cvc_phase_axis *x = &ph->axis[i];
        lower[i] = x->lower;
        upper[i] = x->upper;
        reach[i] = phase_reach(x);
    }
    /* dy, walked over the phase's dx grid (unit traversal): the box starts `lower` before
     * each pixel; a phase no tap reaches keeps a valid box and loads nothing. */
    im2col(p, v->a_bytes, p->k, dy, lower, upper, reach, ones, (uint32_t)e->a_box_cols, (uint32_t)e->a_box_rows,
           operand_swizzle(e, e->a_box_cols * v->a_bytes), a);
}

void cvc_tma_output(const cvc_entry *e, const cvc_view *v, int splits, cvc_tiled_desc *y)
{
    const convcat_problem *p = &v->p;
    const cvc_gemm *g = &v->gemm;
    const int ob = v->out_bytes;
    if (e->k.op == CONVCAT_WGRAD) {   /* (C, taps, K[, splits]): a box is one tap (and one slice) deep */
        const bool partial = splits > 1;
        const bool flat = cvc_wgrad_flat(e, v);   /* (T*R*S*C, 1, K[, splits]) */
        /* Grouped: dw is (c, taps, K), and so is each split-K slice.  The kernel stores its diagonal
         * blocks itself (no TMA); the map stays valid, its box no wider than c. */
        const int64_t cg = v->cg;
        if (p->groups > 1 && !partial && cg * ob % 16) {   /* c = 4 of a 16-bit dw: rows of 8 bytes, which no
                                                             * map describes; the unused map is dw as one row */
            const uint64_t all[1] = {(uint64_t)g->m * (uint64_t)v->taps * (uint64_t)cg};
            tiled(1, ob, all, (uint32_t)(16 / ob), (uint32_t)(16 / ob), e->swizzle_bytes, y);
            return;
        }
        const uint64_t ext[4] = {(uint64_t)(flat ? g->n : cg), (uint64_t)(flat ? 1 : v->taps), (uint64_t)g->m,
                                 (uint64_t)splits};
        const uint32_t box = (uint32_t)(partial ? e->swizzle_bytes / 4 : e->y_box_cols);
        tiled(partial ? 4 : 3, partial ? 4 : ob, ext, p->groups > 1 && cg < box ? (uint32_t)cg : box, 1,
              e->swizzle_bytes, y);
        y->box[2] = (uint32_t)e->y_box_rows;
        return;
    }
    if (splits > 1) {   /* fprop split-K: f32 partial sums as (K, M, splits), a box one slice deep */
        const uint64_t ext[3] = {(uint64_t)g->n, (uint64_t)g->m, (uint64_t)splits};
        tiled(3, 4, ext, (uint32_t)(e->swizzle_bytes / 4), 1, e->swizzle_bytes, y);
        y->box[1] = (uint32_t)e->y_box_rows;
        return;
    }
    if (cvc_has(e, CVC_F_HALO)) {   /* y (K, Q, P, N): a chunk is y_box_rows / halo_cols output rows x halo_cols */
        const uint64_t ext[4] = {(uint64_t)g->n, (uint64_t)v->out[2], (uint64_t)v->out[1], (uint64_t)p->n};
        tiled(4, ob, ext, (uint32_t)e->y_box_cols, 1, e->swizzle_bytes, y);
        y->box[1] = (uint32_t)e->halo_cols;
        y->box[2] = (uint32_t)(e->y_box_rows / e->halo_cols);
        return;
    }
    /* The swizzle span: the entry's, or a chunk row of 64 bytes (sm90a tile N 160 of f16/bf16). */
    const uint64_t ext[2] = {(uint64_t)g->n, (uint64_t)g->m};
    const int span = e->y_box_cols * ob == 64 ? 64 : e->swizzle_bytes;
    tiled(2, ob, ext, (uint32_t)e->y_box_cols, (uint32_t)e->y_box_rows, span, y);
}

/* ---- TMA-family geometry ------------------------------------------------------ */

/* Wgrad's GEMM N is T*R*S*C.  With C a multiple of a column box (swizzle span / element)
 * every TMA column box lies within one filter tap and tiles run over it flat; otherwise each
 * tile is a channel block of one tap.  A grouped wgrad is never flat: its tile is one tap of
 * the M tile's channels. */
bool cvc_wgrad_flat(const cvc_entry *e, const cvc_view *v)
{
    return v->p.groups == 1 && v->b_bytes > 0 && v->p.c % (e->swizzle_bytes / v->b_bytes) == 0;
}

/* Stages of K per tile: fprop and dgrad, whole channel blocks of the im2col operand (C, or
 * dy's K; grouped fprop: a group's c) for every filter tap; wgrad, blocks of pixels. */
int64_t cvc_k_iters(const cvc_entry *e, const cvc_view *v)
{
    switch (e->k.op) {
    case CONVCAT_DGRAD: return v->taps * cvc_ceil_div(v->p.k, e->k.tile_k);
    case CONVCAT_WGRAD: return cvc_ceil_div(v->pixels, e->k.tile_k);
    default: return v->taps * cvc_ceil_div(v->cg, e->k.tile_k);
    }
}

/* Tiles along GEMM N: grouped wgrad, one per filter tap. */
int64_t cvc_tiles_n(const cvc_entry *e, const cvc_view *v)
{
    if (e->k.op == CONVCAT_WGRAD && !cvc_wgrad_flat(e, v))
        return v->taps * (v->p.groups > 1 ? 1 : cvc_ceil_div(v->p.c, e->k.tile_n));
    return cvc_ceil_div(v->gemm.n, e->k.tile_n);
}

/* Tiles along GEMM M: runs of tile_m pixels, or (halo) output blocks of every image. */
int64_t cvc_tiles_m(const cvc_entry *e, const cvc_view *v)
{
    if (cvc_has(e, CVC_F_HALO))
        return (int64_t)v->p.n * v->out[0] * cvc_ceil_div(v->out[1], e->k.tile_m / e->halo_cols) *
               cvc_ceil_div(v->out[2], e->halo_cols);
    return cvc_ceil_div(v->gemm.m, e->k.tile_m);
}

/* Cluster tiles along GEMM M and N: what the persistent grid walks (times wgrad's splits). */
void cvc_cluster_tiles(const cvc_entry *e, const cvc_view *v, int64_t *m, int64_t *n)
{
    *m = cvc_ceil_div(cvc_tiles_m(e, v), e->k.cluster_m);
    *n = cvc_ceil_div(cvc_tiles_n(e, v), e->k.cluster_n);
}

/* A dgrad stride phase: the dense problem over the taps that reach it, on its
 * pixel grid, rows scattered into dx when the stride is > 1. */
void cvc_phase_params(const cvc_entry *e, const cvc_view *v, const cvc_dgrad_phase *ph, cvc_params *k)
{
    const convcat_problem *p = &v->p;
    const cvc_phase_axis *w = &ph->axis[0], *h = &ph->axis[1], *d = &ph->axis[2];
    const int64_t taps = (int64_t)w->taps * h->taps * d->taps;
    k->gemm_m = (int32_t)((int64_t)p->n * w->pixels * h->pixels * d->pixels);
    k->k_iters = k->split_iters = (int32_t)(taps * cvc_ceil_div(p->k, e->k.tile_k));
    k->splits = 1;
    k->out_q = w->pixels, k->out_p = h->pixels, k->out_z = d->pixels;
    k->stride_w = k->stride_h = k->stride_d = 1;
    k->pad_w = -w->lower, k->pad_h = -h->lower, k->pad_d = -d->lower;
    k->dil_w = w->dil, k->dil_h = h->dil, k->dil_d = d->dil;
    k->filt_s = w->taps ? w->taps : 1, k->filt_r = h->taps ? h->taps : 1, k->filt_t = d->taps ? d->taps : 1;
    k->tap0_w = w->tap0, k->tap0_h = h->tap0, k->tap0_d = d->tap0;
    k->tap_step_w = w->tap_step, k->tap_step_h = h->tap_step, k->tap_step_d = d->tap_step;
    k->ph_w = w->ph, k->ph_h = h->ph, k->ph_d = d->ph;
    k->out_step_w = p->stride[2], k->out_step_h = p->stride[1], k->out_step_d = p->stride[0];
    k->dx_w = p->w, k->dx_h = p->h, k->dx_d = p->d;
    cvc_divider((uint32_t)k->out_q, k->div_q);
    cvc_divider((uint32_t)k->out_q * (uint32_t)k->out_p, k->div_pq);
    cvc_divider((uint32_t)k->out_q * (uint32_t)k->out_p * (uint32_t)k->out_z, k->div_zpq);
    k->cluster_tiles_m = (int32_t)cvc_ceil_div(cvc_ceil_div(k->gemm_m, e->k.tile_m), e->k.cluster_m);
    k->cluster_tiles_n = (int32_t)cvc_ceil_div(cvc_ceil_div(p->c, e->k.tile_n), e->k.cluster_n);
}

size_t cvc_workspace_bytes(const cvc_view *v, int splits)
{
    const convcat_problem *p = &v->p;
    const size_t n = p->op == CONVCAT_WGRAD && p->groups > 1 ? (size_t)v->taps * (size_t)v->cg : (size_t)v->gemm.n;
    return splits > 1 ? (size_t)splits * (size_t)v->gemm.m * n * sizeof(float) : 0;
}

/* Extents and strides shared by both modes. */
static bool layout_valid(int rank, int elem_bytes, const uint64_t *dims, const uint64_t *strides,
                         const uint32_t *elem_strides, char *why, size_t n)
{
    for (int i = 0; i < rank; ++i) {
        if (dims[i] < 1 || dims[i] > TWO32) {
            cvc_say(why, n, "tensor extent %llu of dimension %d is outside 1..2^32",
                    (unsigned long long)dims[i], i);
            return false;
        }
        if (elem_strides[i] < 1 || elem_strides[i] > 8) {
            cvc_say(why, n, "element stride %u of dimension %d is outside 1..8", elem_strides[i], i);
            return false;
        }
    }
    for (int i = 0; i + 1 < rank; ++i) {
        /* A product past 2^64 must not wrap into something a stride "covers". */
        uint64_t inner = dims[0] * (uint64_t)elem_bytes;
        if (i > 0 && __builtin_mul_overflow(strides[i - 1], dims[i], &inner))
            inner = UINT64_MAX;
        if (strides[i] % 16 || strides[i] >= TWO40 || strides[i] < inner) {
            cvc_say(why, n, "byte stride %llu of dimension %d must be a multiple of 16, below 2^40, "
                    "and cover the inner dimensions", (unsigned long long)strides[i], i + 1);
            return false;
        }
    }
    return true;
}

bool cvc_im2col_desc_valid(const cvc_im2col_desc *d, char *why, size_t n)
{
    if (d->rank < 3 || d->rank > 5 || d->elem_bytes < 1) {
        cvc_say(why, n, "im2col rank %d: 3, 4 or 5 (NWC, NHWC, NDHWC)", d->rank);
        return false;
    }
    if (!layout_valid(d->rank, d->elem_bytes, d->dims, d->strides, d->elem_strides, why, n))
        return false;
    const int sp = d->rank - 2;
    /* Corners are signed 16/8/5-bit fields, offsets unsigned 16/8/5-bit (cuda.h, PTX ISA §5.5.4). */
    const int bits = 16 / sp;
    const int lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
    const uint32_t off_max = (1u << bits) - 1;
    static const char *const axis[3] = {"W", "H", "D"};
    for (int i = 0; i < sp; ++i) {
        if (d->lower[i] < lo || d->lower[i] > hi || d->upper[i] < lo || d->upper[i] > hi) {
            cvc_say(why, n, "im2col corner along %s (lower %d, upper %d) is outside [%d, %d] for a %dD tensor: "
                    "padding or filter reach too large", axis[i], d->lower[i], d->upper[i], lo, hi, sp);
            return false;
        }
        if (d->max_offset[i] > off_max) {
            cvc_say(why, n, "im2col offset (filter - 1) x dilation = %u along %s exceeds %u for a %dD tensor",
                    d->max_offset[i], axis[i], off_max, sp);
            return false;
        }
        if ((int64_t)d->dims[1 + i] + d->upper[i] - d->lower[i] <= 0) {
            cvc_say(why, n, "im2col bounding box along %s is empty", axis[i]);
            return false;
        }
    }
    const uint32_t row = d->channels_per_pixel * (uint32_t)d->elem_bytes;
    if (d->channels_per_pixel < 1 || d->channels_per_pixel > 256 || row % 16 ||
        (d->swizzle_bytes && row > (uint32_t)d->swizzle_bytes)) {
        cvc_say(why, n, "channelsPerPixel %u (%u bytes) must be 1..256, a multiple of 16 bytes and within "
                "the %d-byte swizzle span", d->channels_per_pixel, row, d->swizzle_bytes);
        return false;
    }
    if (d->pixels_per_column < 1 || d->pixels_per_column > 1024) {
        cvc_say(why, n, "pixelsPerColumn %u is outside 1..1024", d->pixels_per_column);
        return false;
    }
    return true;
}

bool cvc_tiled_desc_valid(const cvc_tiled_desc *d, char *why, size_t n)
{
    if (d->rank < 1 || d->rank > 5 || d->elem_bytes < 1) {
        cvc_say(why, n, "tiled rank %d: 1..5", d->rank);
        return false;
    }
    if (!layout_valid(d->rank, d->elem_bytes, d->dims, d->strides, d->elem_strides, why, n))
        return false;
    for (int i = 0; i < d->rank; ++i) {
        if (d->box[i] < 1 || d->box[i] > 256) {
            cvc_say(why, n, "box extent %u of dimension %d is outside 1..256", d->box[i], i);
            return false;
        }
    }
    const uint32_t row = d->box[0] * (uint32_t)d->elem_bytes;
    if (row % 16 || (d->swizzle_bytes && row > (uint32_t)d->swizzle_bytes)) {
        cvc_say(why, n, "box inner extent is %u bytes: a multiple of 16 within the %d-byte swizzle span", row,
                d->swizzle_bytes);
        return false;
    }
    return true;
}
