/* tma.c: tensor-map parameters in pure C, and every limit TMA puts on them.
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

/* Fill dims/strides of a packed channel-innermost tensor: extents innermost first. */
static void packed(int rank, int elem_bytes, const uint64_t *ext, uint64_t *dims, uint64_t *strides)
{
    uint64_t bytes = (uint64_t)elem_bytes;
    for (int i = 0; i < rank; ++i) {
        dims[i] = ext[i];
        bytes *= ext[i];
        if (i + 1 < rank)
            strides[i] = bytes;
    }
}

void cvc_tma_fprop(const cvc_entry *e, const convcat_problem *p, cvc_im2col_desc *a, cvc_tiled_desc *b)
{
    const int sp = p->dims;                       /* spatial axes, W first below */
    const int in[3] = {p->w, p->h, p->d};         /* W, H, D */
    const int filt[3] = {p->s, p->r, p->t};
    *a = (cvc_im2col_desc){.rank = sp + 2, .elem_bytes = cvc_dtype_bytes(p->a_type)};
    *b = (cvc_tiled_desc){.rank = sp + 2, .elem_bytes = cvc_dtype_bytes(p->b_type)};
    uint64_t ext_a[5] = {(uint64_t)p->c}, ext_b[5] = {(uint64_t)p->c};
    a->elem_strides[0] = 1;
    for (int i = 0; i < sp; ++i) {
        const int ax = 2 - i;                     /* problem arrays are D, H, W */
        ext_a[1 + i] = (uint64_t)in[i];
        ext_b[1 + i] = (uint64_t)filt[i];
        /* The reach (taps - 1) x dilation can pass INT_MAX (padding lets it fit): int64, then
         * saturate; the limits below refuse anything that large. */
        const int64_t reach = (int64_t)(filt[i] - 1) * p->dilation[ax];
        const int64_t upper = p->pad_hi[ax] - reach;
        a->lower[i] = -p->pad_lo[ax];
        a->upper[i] = upper < INT32_MIN ? INT32_MIN : (int)upper;
        a->max_offset[i] = reach > UINT32_MAX ? UINT32_MAX : (uint32_t)reach;
        a->elem_strides[1 + i] = (uint32_t)p->stride[ax];
    }
    ext_a[sp + 1] = (uint64_t)p->n;
    ext_b[sp + 1] = (uint64_t)p->k;
    a->elem_strides[sp + 1] = 1;
    packed(a->rank, a->elem_bytes, ext_a, a->dims, a->strides);
    packed(b->rank, b->elem_bytes, ext_b, b->dims, b->strides);
    a->channels_per_pixel = (uint32_t)e->a_box_cols;
    a->pixels_per_column = (uint32_t)e->a_box_rows;
    a->swizzle_bytes = e->swizzle_bytes;
    for (int i = 0; i < b->rank; ++i) {
        b->box[i] = 1;
        b->elem_strides[i] = 1;
    }
    b->box[0] = (uint32_t)e->b_box_cols;
    b->box[b->rank - 1] = (uint32_t)e->b_box_rows;
    b->swizzle_bytes = e->swizzle_bytes;
}

void cvc_tma_output(const cvc_entry *e, const convcat_problem *p, cvc_tiled_desc *y)
{
    cvc_gemm g;
    if (cvc_problem_gemm(p, &g, NULL, 0) != CONVCAT_OK)
        g.m = g.n = 0;   /* the validator refuses zero extents */
    *y = (cvc_tiled_desc){.rank = 2, .elem_bytes = cvc_dtype_bytes(p->out_type),
                          .dims = {(uint64_t)g.n, (uint64_t)g.m},
                          .box = {(uint32_t)e->y_box_cols, (uint32_t)e->y_box_rows},
                          .elem_strides = {1, 1}, .swizzle_bytes = e->swizzle_bytes};
    y->strides[0] = (uint64_t)g.n * (uint64_t)y->elem_bytes;
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
