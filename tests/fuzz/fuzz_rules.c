/* fuzz_rules.c: libFuzzer harness for the problem rules (problem.c, rules.c, tma.c, gather.c,
 * direct.c) and the time model (query.c), over every entry of a real catalog's index.
 *
 * The input decodes into a convcat_problem, every field of it: small values, values at and past
 * the limits (0, negative, INT_MAX, INT_MIN, the overflow points of products), raw 32-bit words.
 * Often the problem takes the op, dims and types of one entry and trivial absent axes, so that
 * the family rules, not the first type check, decide.  Then convcat_problem_output,
 * convcat_problem_flops and convcat_query over the whole catalog.  Must never crash or trip
 * ASan/UBSan, and every problem an entry accepts must keep the documented limits, which this
 * harness recomputes on its own in 64 bits (oracle() below): a valid problem of the entry's op,
 * dims and types; every axis's padded input, output extent and the pixel counts inside 32-bit
 * indices; channels a tile short of 2^31; a halo kernel's filter within its reach.  The catalog
 * is CONVCAT_FUZZ_CATALOG, or the index-only catalog of the configured spec built beside this
 * harness.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#ifndef FUZZ_RULES_CATALOG
#define FUZZ_RULES_CATALOG ""
#endif

static convcat_catalog *cat;
static convcat_candidate *rows;
static size_t capacity;

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static uint8_t byte(reader *r)
{
    if (!r->n)
        return 0;
    --r->n;
    return *r->p++;
}

/* One int field: small (most bytes), a value at a limit, or a raw word. */
static int value(reader *r)
{
    static const int64_t edge[] = {
        0, 1, -1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 257, 1023, 1024,
        32767, 32768, 65535, 65536, 46340, 46341, 1 << 20, 1 << 24, 1 << 30, INT32_MAX, INT32_MAX - 1,
        INT32_MAX - 7, INT32_MAX - 63, INT32_MAX - 255, INT32_MAX / 2, INT32_MAX / 3, INT32_MAX / 8 + 1,
        INT32_MIN, INT32_MIN + 1, -2, -8, 147483650, 715827883, 1000000000, 2147483640, 1431655765,
        178956971, 1291, 1290, 2097152, 33554432};
    const uint8_t sel = byte(r);
    if (sel < 144)
        return sel & 31;
    if (sel < 240)
        return (int)edge[(sel - 144) % CVC_ARRAY_LEN(edge)];
    uint32_t w = 0;
    for (int i = 0; i < 4; ++i)
        w |= (uint32_t)byte(r) << 8 * i;
    return (int)w;
}

static void decode(reader *r, convcat_problem *p, int *sms)
{
    convcat_problem_init(p);
    const uint8_t flags = byte(r);
    const uint16_t pick = (uint16_t)(byte(r) | byte(r) << 8);
    p->op = (convcat_op)(byte(r) % 4);
    p->dims = byte(r) % 5;
    p->a_type = (convcat_dtype)(byte(r) % 8);
    p->b_type = (convcat_dtype)(byte(r) % 8);
    p->out_type = (convcat_dtype)(byte(r) % 8);
    p->mode = (convcat_mode)(byte(r) % 9 == 8);
    int *ints[] = {&p->n, &p->d, &p->h, &p->w, &p->c, &p->k, &p->t, &p->r, &p->s, &p->groups,
                   &p->pad_lo[0], &p->pad_lo[1], &p->pad_lo[2], &p->pad_hi[0], &p->pad_hi[1], &p->pad_hi[2],
                   &p->stride[0], &p->stride[1], &p->stride[2], &p->dilation[0], &p->dilation[1],
                   &p->dilation[2]};
    for (size_t i = 0; i < CVC_ARRAY_LEN(ints); ++i)
        *ints[i] = value(r);
    *sms = flags & 0x80 ? value(r) : 0;
    if ((flags & 3) != 0 && convcat_count(cat)) {   /* an entry's op, dims and types */
        convcat_entry_info e;
        convcat_entry_info_get(cat, pick % convcat_count(cat), &e);
        p->op = e.op, p->dims = e.dims, p->a_type = e.a_type, p->b_type = e.b_type, p->out_type = e.out_type;
        p->mode = CONVCAT_CROSS_CORRELATION;
        if (e.groups_mode == 3 && (flags & 0x10) && p->c > 0 && p->k > 0 && p->k <= INT32_MAX / p->c)
            p->groups = p->c, p->k *= p->c;   /* depthwise: groups = C, K a multiple of C */
        else if (e.groups_mode == 0 && !(flags & 0x20))
            p->groups = 1;
    }
    if (flags & 4 && p->dims >= 1 && p->dims <= 3) {   /* absent axes trivial, as a valid problem has them */
        int *ext[3] = {&p->d, &p->h, &p->w}, *filt[3] = {&p->t, &p->r, &p->s};
        for (int a = 0; a < 3 - p->dims; ++a) {
            *ext[a] = *filt[a] = 1;
            p->pad_lo[a] = p->pad_hi[a] = 0;
            p->stride[a] = p->dilation[a] = 1;
        }
    }
    if (flags & 8) {   /* no negative padding */
        for (int a = 0; a < 3; ++a) {
            if (p->pad_lo[a] < 0)
                p->pad_lo[a] = 0;
            if (p->pad_hi[a] < 0)
                p->pad_hi[a] = 0;
        }
    }
    if ((flags & 0x40) && p->groups > 1 && p->c > 0 && p->k > 0 && (p->c % p->groups || p->k % p->groups))
        p->groups = 1;
}

#define REQUIRE(cond)                                                                                        \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "fuzz_rules: %s accepted a problem that breaks '%s'\n", e->key, #cond);          \
            dump(p);                                                                                         \
            abort();                                                                                         \
        }                                                                                                    \
    } while (0)

static void dump(const convcat_problem *p)
{
    fprintf(stderr,
            "  op %d dims %d types %d %d %d mode %d n %d dhw %d %d %d c %d k %d trs %d %d %d groups %d\n"
            "  pad_lo %d %d %d pad_hi %d %d %d stride %d %d %d dilation %d %d %d\n",
            p->op, p->dims, p->a_type, p->b_type, p->out_type, p->mode, p->n, p->d, p->h, p->w, p->c, p->k, p->t,
            p->r, p->s, p->groups, p->pad_lo[0], p->pad_lo[1], p->pad_lo[2], p->pad_hi[0], p->pad_hi[1],
            p->pad_hi[2], p->stride[0], p->stride[1], p->stride[2], p->dilation[0], p->dilation[1],
            p->dilation[2]);
}

/* The documented limits, recomputed here, that a problem `e` accepts must keep. */
static void oracle(const cvc_entry *e, const convcat_problem *given)
{
    const cvc_key *k = &e->k;
    const convcat_problem *p = given;
    /* A 2D kernel takes a 3D problem whose filter is 1 along D, or 1 x 1 along H and W, with no padding
     * or stride there, as the 2D problem over the same memory; the limits are that problem's. */
    const bool flat_d = p->t == 1 && !p->pad_lo[0] && !p->pad_hi[0] && p->stride[0] == 1;
    const bool flat_hw = p->r == 1 && p->s == 1 && !p->pad_lo[1] && !p->pad_hi[1] && !p->pad_lo[2] &&
                         !p->pad_hi[2] && p->stride[1] == 1 && p->stride[2] == 1;
    REQUIRE(p->dims == k->dims || (p->dims == 3 && k->dims == 2 && (flat_d || flat_hw)));
    convcat_problem folded;
    if (p->dims != k->dims) {
        REQUIRE(convcat_problem_folded(given, &folded) == CONVCAT_OK && folded.dims == 2);
        REQUIRE(folded.c == given->c && folded.k == given->k && folded.groups == given->groups &&
                (int64_t)folded.n * folded.h * folded.w == (int64_t)given->n * given->d * given->h * given->w);
        p = &folded;
    }
    /* A kernel of DGRAD_AS_FPROP runs unit-stride dgrad as the fprop of dy, its padding turned around
     * (reach - pad, never negative). */
    const bool turned = p->op == CONVCAT_DGRAD && k->op == CONVCAT_FPROP && (e->flags & CVC_F_DGRAD_AS_FPROP);
    REQUIRE((p->op == k->op || turned) && p->dims == k->dims && p->a_type == k->a && p->b_type == k->b &&
            p->out_type == k->out);
    REQUIRE(!turned || (p->stride[0] == 1 && p->stride[1] == 1 && p->stride[2] == 1));
    for (int a = 0; turned && a < 3; ++a)
        REQUIRE(p->pad_lo[a] <= (int64_t)(a == 0 ? p->t - 1 : a == 1 ? p->r - 1 : p->s - 1) * p->dilation[a] &&
                p->pad_hi[a] <= (int64_t)(a == 0 ? p->t - 1 : a == 1 ? p->r - 1 : p->s - 1) * p->dilation[a]);
    REQUIRE(p->mode == CONVCAT_CROSS_CORRELATION);
    REQUIRE(p->n >= 1 && p->c >= 1 && p->k >= 1 && p->groups >= 1 && p->c % p->groups == 0 && p->k % p->groups == 0);
    const int in[3] = {p->d, p->h, p->w}, filt[3] = {p->t, p->r, p->s};
    int64_t out[3];
    for (int a = 0; a < 3; ++a) {
        REQUIRE(in[a] >= 1 && filt[a] >= 1 && p->pad_lo[a] >= 0 && p->pad_hi[a] >= 0);
        REQUIRE(p->stride[a] >= 1 && p->dilation[a] >= 1);
        if (a < 3 - p->dims)
            REQUIRE(in[a] == 1 && filt[a] == 1 && !p->pad_lo[a] && !p->pad_hi[a] && p->stride[a] == 1 &&
                    p->dilation[a] == 1);
        const int64_t padded = (int64_t)in[a] + p->pad_lo[a] + p->pad_hi[a];
        const int64_t reach = (int64_t)(filt[a] - 1) * p->dilation[a];
        REQUIRE(padded <= INT32_MAX);   /* input coordinates q*stride - pad + s*dilation in 32 bits */
        REQUIRE(padded - reach >= 1);
        out[a] = (padded - reach - 1) / p->stride[a] + 1;
        if (e->flags & CVC_F_HALO && a > 0)
            REQUIRE(reach <= e->halo_reach);
    }
    const int64_t pixels = (int64_t)p->n * out[0] * out[1] * out[2];   /* each factor < 2^31: no wrap below */
    const int64_t in_pixels = (int64_t)p->n * in[0] * in[1] * in[2];
    REQUIRE(p->op == CONVCAT_DGRAD ? in_pixels <= INT32_MAX : pixels <= INT32_MAX);
    const int64_t tile = k->tile_m > k->tile_n ? (k->tile_m > k->tile_k ? k->tile_m : k->tile_k)
                                               : (k->tile_n > k->tile_k ? k->tile_n : k->tile_k);
    REQUIRE((int64_t)p->c + tile <= INT32_MAX && (int64_t)p->k + tile <= INT32_MAX);   /* c += tile, k + column */
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *path = getenv("CONVCAT_FUZZ_CATALOG");
    if (!path || !*path)
        path = FUZZ_RULES_CATALOG;
    if (convcat_open(path, &cat) != CONVCAT_OK) {
        fprintf(stderr, "fuzz_rules: %s (set CONVCAT_FUZZ_CATALOG)\n", convcat_last_error());
        exit(2);
    }
    capacity = convcat_count(cat);
    rows = calloc(capacity ? capacity : 1, sizeof *rows);
    if (!rows)
        exit(2);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    convcat_problem p;
    int sms;
    decode(&r, &p, &sms);
    int z = -1, pp = -1, q = -1;
    const bool valid = convcat_problem_output(&p, &z, &pp, &q) == CONVCAT_OK;
    const double flops = convcat_problem_flops(&p);
    if (valid ? z < 1 || pp < 1 || q < 1 || !(flops > 0) : flops != 0.0)
        abort();
    size_t n = 0, ok = 0;
    const convcat_status st = convcat_query(cat, &p, CONVCAT_ARCH_ANY, sms, rows, capacity, &n, &ok);
    if (st != CONVCAT_OK)
        return 0;
    if (ok > n || n > capacity)
        abort();
    for (size_t i = 0; i < n; ++i) {
        const cvc_entry *e = &cat->entries[rows[i].index];
        if (rows[i].ok != (i < ok))
            abort();   /* runnable rows first */
        if (rows[i].ok) {
            if (!valid || !(rows[i].predicted_us >= 0))
                abort();
            oracle(e, &p);
        } else if (!rows[i].reason[0]) {
            abort();   /* every refusal says why */
        }
    }
    return 0;
}
