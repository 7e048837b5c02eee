/* query.c: which kernels can run a problem, ranked by a time model (no timing).
 *
 * The model: a persistent grid runs ceil(tiles / concurrent CTAs) waves; a
 * tile costs its MMA work at a per-SM rate scaled by the tile's arithmetic
 * intensity against shared memory (small tiles re-read operands more), plus
 * a fixed prologue/epilogue cost; shallow pipelines pay a latency factor;
 * nothing beats the time to move the tensors once through DRAM.  Figures are
 * the H200's (BENCHMARKS.md): 787 TFLOP/s bf16 GEMM, 4.3 TB/s copy.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define PEAK_FLOP_PER_US 787e6      /* whole GPU, bf16 dense */
#define DRAM_BYTES_PER_US 4.3e6
#define DEFAULT_SMS 132
#define TILE_FIXED_US 0.6           /* prologue fill + epilogue of one tile */

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

double cvc_predict_us(const cvc_entry *e, const convcat_problem *p, int sms)
{
    cvc_gemm g;
    if (cvc_problem_gemm(p, &g, NULL, 0) != CONVCAT_OK)
        return INFINITY;
    if (sms <= 0)
        sms = DEFAULT_SMS;
    const cvc_key *k = &e->k;
    const int cluster = k->cluster_m * k->cluster_n;
    const int64_t ctas = ceil_div(ceil_div(g.m, k->tile_m), k->cluster_m) * k->cluster_m *
                         ceil_div(ceil_div(g.n, k->tile_n), k->cluster_n) * k->cluster_n;
    const int64_t slots = sms / cluster * cluster;
    const int64_t waves = ceil_div(ctas, slots);
    /* K is padded to whole channel blocks per filter tap. */
    const int64_t taps = (int64_t)p->t * p->r * p->s;
    const int64_t k_iters = taps * ceil_div(p->c, k->tile_k);
    const double intensity = (double)k->tile_m * k->tile_n / (k->tile_m + k->tile_n);
    const double eff = fmin(0.9, intensity / 95.0);
    const double tile_flop = 2.0 * k->tile_m * k->tile_n * (double)k->tile_k * (double)k_iters;
    double tile_us = tile_flop / (PEAK_FLOP_PER_US / DEFAULT_SMS * eff) + TILE_FIXED_US;
    if (k->stages < 3)
        tile_us *= 1.15;
    else if (k->stages == 3)
        tile_us *= 1.03;
    double t = (double)waves * tile_us;
    /* Multicast halves one operand's L2 traffic; it pays only with several waves. */
    if (cluster > 1)
        t *= waves > 1 ? 0.99 : 1.01;
    const double bytes = (double)p->n * p->d * p->h * p->w * p->c * cvc_dtype_bytes(p->a_type) +
                         (double)p->k * taps * p->c * cvc_dtype_bytes(p->b_type) +
                         (double)g.m * g.n * cvc_dtype_bytes(p->out_type);
    return fmax(t, bytes / DRAM_BYTES_PER_US);
}

static int by_rank(const void *x, const void *y)
{
    const convcat_candidate *a = x, *b = y;
    if (a->ok != b->ok)
        return b->ok - a->ok;
    if (a->ok && a->predicted_us != b->predicted_us)
        return a->predicted_us < b->predicted_us ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

convcat_status convcat_query(const convcat_catalog *cat, const convcat_problem *p, convcat_arch arch,
                             int sm_count, convcat_candidate *out, size_t capacity, size_t *count_out,
                             size_t *ok_out)
{
    if (!cat || !p || !count_out || (!out && capacity))
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_query: NULL argument");
    convcat_candidate *all = calloc(cat->count ? cat->count : 1, sizeof *all);
    if (!all)
        return cvc_fail(CONVCAT_ERR_NO_MEMORY, "convcat_query: out of memory");
    size_t rows = 0, ok = 0;
    for (size_t i = 0; i < cat->count; ++i) {
        const cvc_entry *e = &cat->entries[i];
        if (arch != CONVCAT_ARCH_ANY && e->k.arch != arch)
            continue;
        convcat_candidate *c = &all[rows++];
        c->index = i;
        c->ok = cvc_check_entry(e, p, c->reason, sizeof c->reason) == CONVCAT_OK;
        if (c->ok) {
            c->predicted_us = cvc_predict_us(e, p, sm_count);
            c->reason[0] = '\0';
            ++ok;
        }
    }
    qsort(all, rows, sizeof *all, by_rank);
    const size_t n = rows < capacity ? rows : capacity;
    if (n)
        memcpy(out, all, n * sizeof *all);
    free(all);
    *count_out = n;
    if (ok_out)
        *ok_out = ok;
    return CONVCAT_OK;
}
