/* test_property.c: random problems per kernel family, each refused with a reason or right.
 *
 *   test_property [CATALOG] [--seed N] [--count N] [--family tma|gather|direct|all] [--problem I]
 *                 [--dry-run [--arch sm90a|sm100a]]
 *
 * For each family (tma, gather, direct) --count problems (default 10000), problem i of family F
 * drawn from the seed alone (problem_seed(seed, F, i): --problem I runs that one again): a kernel
 * of F of the device's arch is drawn, and the problem takes its op, dims and types; then random
 * N, D/H/W, C, K, filter extents, strides, dilations, padding (each side drawn apart), groups
 * (grouped and depthwise where the kernel takes them, sometimes where it does not), an epilogue
 * (alpha, beta, fprop's bias and activation); one problem in 32 takes an extent, padding, stride or
 * dilation near the limits.  convcat_query ranks the catalog for it; the first runnable kernel of
 * F in that ranking (the heuristic's pick among F's kernels) runs it on fresh random data with its
 * output poisoned (cvc_verify_run, verify.c: the GPU reference, the bounds of reference.h), or, where no
 * kernel of F can run it, the problem counts as refused by rule and each of F's refusals must say
 * why.  Per family it prints: refused by rule, refused by the device (plan_create: shared memory,
 * clusters), too large to run here (accepted, more than 256 MiB of tensors: near-limit problems),
 * correct, wrong (must be 0) and errors (must be 0), and how many of the runs were 3D problems on
 * 2D kernels (folded: problem.c); every wrong answer or error prints its seed,
 * family and problem number.  Problems are small (at most a few MFLOP): 30,000 take about five
 * minutes on an H200.
 *
 * --dry-run needs no GPU: the same problems, queried on the CPU for --arch (default sm90a); it
 * checks that every problem is refused with a reason or has a runnable kernel of its family whose
 * convcat_check agrees, that a problem draws the same twice, and prints the counts and a digest of
 * the problems (the same seed gives the same digest).  Without
 * a GPU the test exits 77 (skip) and says why.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convcat.h"
#include "verify.h"

#define MAX_TENSOR_BYTES ((int64_t)256 << 20)   /* accepted problems larger than this are not run */

enum { FAM_TMA, FAM_GATHER, FAM_DIRECT, FAM_COUNT };
static const char *const family_name[FAM_COUNT] = {"tma", "gather", "direct"};
static const convcat_family family_id[FAM_COUNT] = {CONVCAT_FAMILY_TMA, CONVCAT_FAMILY_GATHER, CONVCAT_FAMILY_DIRECT};

/* ---- random numbers: splitmix64, one stream per problem ------------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r)
{
    uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static int uniform(rng *r, int lo, int hi)
{
    return lo + (int)(next(r) % (uint64_t)(hi - lo + 1));
}

static bool chance(rng *r, int percent) { return uniform(r, 1, 100) <= percent; }

static uint64_t problem_seed(unsigned seed, int family, long i)
{
    rng r = {((uint64_t)seed << 32) ^ ((uint64_t)family << 28) ^ (uint64_t)i};
    return next(&r);
}

/* ---- the problems ----------------------------------------------------------------------------- */

typedef struct drawn {
    convcat_problem p;
    cvc_epilogue epi;
    bool extreme;   /* one of the near-limit variants */
} drawn;

/* Channels: multiples of the TMA rows' 16 bytes mostly, any count sometimes. */
static int channels(rng *r, int family, convcat_dtype t)
{
    const int align = t == CONVCAT_TF32 || t == CONVCAT_F32 ? 4 : 8;
    if (family == FAM_TMA && !chance(r, 10))
        return align * uniform(r, 1, 128 / align);
    return chance(r, 30) ? uniform(r, 1, 8) : uniform(r, 1, 96);
}

/* A near-limit variant: coordinates, reaches and counts at the edges of the rules, on tensors that
 * stay small where they can (huge padding with huge strides keeps the output a few pixels). */
static void extreme(rng *r, convcat_problem *p)
{
    const int a = 3 - uniform(r, 1, p->dims);   /* an axis the problem has */
    int *ext = a == 0 ? &p->d : a == 1 ? &p->h : &p->w, *filt = a == 0 ? &p->t : a == 1 ? &p->r : &p->s;
    static const int big[] = {(1 << 29) - 1, 1 << 29, (1 << 30), INT32_MAX / 2, INT32_MAX - 8, INT32_MAX};
    const int v = big[uniform(r, 0, (int)(sizeof big / sizeof big[0]) - 1)];
    switch (uniform(r, 0, 5)) {
    case 0:   /* padding near 2^31 with a stride as large: an output of a few pixels */
        p->pad_lo[a] = v / 2, p->pad_hi[a] = v / 2 - uniform(r, 0, 3), p->stride[a] = v / 2;
        break;
    case 1:   /* a dilated filter reaching across huge padding */
        *filt = 2, p->dilation[a] = v / 2, p->pad_lo[a] = p->pad_hi[a] = v / 4 + 1;
        p->stride[a] = v / 4 + 1;
        break;
    case 2:   /* an extent near the limits, strided down to a few outputs */
        *ext = v, *filt = 1, p->pad_lo[a] = p->pad_hi[a] = 0, p->stride[a] = v / 3 + 1;
        break;
    case 3:   /* channels near 2^31 */
        if (chance(r, 50))
            p->c = v - v % 8, p->groups = 1;
        else
            p->k = v - v % 8, p->groups = 1;
        break;
    case 4:   /* the largest traversal strides and their neighbours */
        p->stride[a] = uniform(r, 7, 10);
        *ext = uniform(r, 1, 40);
        break;
    default:   /* N large */
        p->n = v;
    }
}

/* Problem i of a family: a kernel of the family drawn from `kinds` gives op, dims and types. */
static drawn draw(uint64_t seed, int family, const convcat_entry_info *kinds, size_t nkinds)
{
    rng r = {seed};
    drawn out;
    memset(&out, 0, sizeof out);   /* padding too: draws compare with memcmp */
    out.epi.alpha = 1.0f;
    convcat_problem *p = &out.p;
    const convcat_entry_info *e = &kinds[next(&r) % nkinds];
    for (int tries = 0;; ++tries) {
        convcat_problem_init(p);
        p->op = e->op, p->dims = e->dims, p->a_type = e->a_type, p->b_type = e->b_type, p->out_type = e->out_type;
        p->n = uniform(&r, 1, 4);
        int *ext[3] = {&p->d, &p->h, &p->w}, *filt[3] = {&p->t, &p->r, &p->s};
        const int max_ext = p->dims == 1 ? 200 : p->dims == 2 ? 28 : 10;
        const int max_filt = e->family == CONVCAT_FAMILY_DIRECT ? (p->dims == 1 ? 9 : 7) : 5;
        for (int a = 3 - p->dims; a < 3; ++a) {
            *ext[a] = uniform(&r, 1, max_ext);
            *filt[a] = chance(&r, 25) ? 1 : uniform(&r, 1, max_filt);
            p->dilation[a] = chance(&r, 75) ? 1 : uniform(&r, 2, 3);
            p->stride[a] = chance(&r, 60) ? 1 : chance(&r, 85) ? uniform(&r, 2, 3) : uniform(&r, 4, 8);
            const int reach = (*filt[a] - 1) * p->dilation[a];
            p->pad_lo[a] = chance(&r, 30) ? 0 : uniform(&r, 0, reach);
            p->pad_hi[a] = chance(&r, 70) ? p->pad_lo[a] : uniform(&r, 0, reach + 1);   /* asymmetric too */
        }
        if (chance(&r, 8))   /* a patch convolution: stride = filter, no padding, whole patches */
            for (int a = 3 - p->dims; a < 3; ++a) {
                *filt[a] = p->stride[a] = uniform(&r, 1, max_filt + 3);
                p->dilation[a] = 1, p->pad_lo[a] = p->pad_hi[a] = 0;
                *ext[a] = *filt[a] * uniform(&r, 1, max_ext / *filt[a] > 1 ? max_ext / *filt[a] : 1);
            }
        p->c = channels(&r, family, e->a_type);
        p->k = channels(&r, family, e->a_type);
        if (e->groups_mode == 3 && chance(&r, 35)) {   /* direct: c = k = 2, 4, 8 a group */
            static const int cg[] = {2, 4, 8};
            const int c = cg[uniform(&r, 0, 2)];
            p->groups = uniform(&r, 1, 12);
            p->c = p->k = c * p->groups;
        } else if (e->groups_mode == 3 || (family == FAM_DIRECT && !chance(&r, 5))) {   /* depthwise */
            p->groups = p->c;
            p->k = p->c * uniform(&r, 1, 3);
        } else if (e->groups_mode == 2 && chance(&r, 40)) {   /* gather: any groups dividing C and K */
            const int g = uniform(&r, 2, 8);
            p->groups = g;
            p->c = g * uniform(&r, 1, 12);
            p->k = g * uniform(&r, 1, 12);
        } else if (e->groups_mode == 1 && chance(&r, 30)) {   /* grouped wgrad: K == C, c channels a group */
            static const int cg[] = {8, 16, 32, 64};
            const int c = cg[uniform(&r, 0, 3)];
            p->groups = uniform(&r, 1, 4);
            p->c = p->k = c * p->groups;
        } else if (e->groups_mode == 4 && !chance(&r, 10)) {   /* grouped fprop: packs, or k a multiple of tile N */
            static const int cg[] = {8, 16, 32, 48, 80}, kg[] = {16, 32, 64, 128, 256};
            p->groups = uniform(&r, 2, 8);
            p->c = cg[uniform(&r, 0, 4)] * p->groups;
            p->k = kg[uniform(&r, 0, 4)] * p->groups;
        } else if (chance(&r, 3)) {   /* groups where the kernel does not take them: refused */
            p->groups = 2, p->c = 2 * uniform(&r, 1, 32), p->k = 2 * uniform(&r, 1, 32);
        }
        out.extreme = chance(&r, 3);
        if (out.extreme)
            extreme(&r, p);
        if (convcat_problem_output(p, NULL, NULL, NULL) == CONVCAT_OK || tries == 8)
            break;   /* a problem that does not fit once in 9 draws stays, as one refused before any kernel */
    }
    out.epi.alpha = chance(&r, 60) ? 1.0f : (float)uniform(&r, 1, 16) / 8.0f;
    out.epi.beta = chance(&r, 70) ? 0.0f : (float)uniform(&r, -8, 8) / 8.0f;
    if (p->op == CONVCAT_FPROP) {
        out.epi.bias = chance(&r, 30);
        out.epi.activation = (convcat_activation)(chance(&r, 60) ? 0 : uniform(&r, 1, 3));
    }
    return out;
}

/* Bytes of x, w and y at their types, or INT64_MAX past it. */
static int64_t tensor_bytes(const convcat_problem *p)
{
    int z, pp, q;
    if (convcat_problem_output(p, &z, &pp, &q) != CONVCAT_OK)
        return 0;
    const double x = (double)p->n * p->d * p->h * p->w * p->c;
    const double w = (double)p->k * p->t * p->r * p->s * (p->c / p->groups);
    const double y = (double)p->n * z * pp * q * p->k;
    const double bytes = 4.0 * (x + w + y);   /* the widest type; the reference adds three f32 an output */
    return bytes > 1e18 ? INT64_MAX : (int64_t)bytes;
}

static void print_problem(const convcat_problem *p, const cvc_epilogue *epi)
{
    printf("    %s %dD %s/%s/%s n %d d %d h %d w %d c %d k %d t %d r %d s %d pad %d.%d.%d-%d.%d.%d str %d.%d.%d "
           "dil %d.%d.%d groups %d, alpha %g beta %g bias %d act %d\n",
           convcat_op_name(p->op), p->dims, convcat_dtype_name(p->a_type), convcat_dtype_name(p->b_type),
           convcat_dtype_name(p->out_type), p->n, p->d, p->h, p->w, p->c, p->k, p->t, p->r, p->s, p->pad_lo[0],
           p->pad_lo[1], p->pad_lo[2], p->pad_hi[0], p->pad_hi[1], p->pad_hi[2], p->stride[0], p->stride[1],
           p->stride[2], p->dilation[0], p->dilation[1], p->dilation[2], p->groups, epi->alpha, epi->beta, epi->bias,
           (int)epi->activation);
}

/* ---- the run -------------------------------------------------------------------------------- */

typedef struct counts {
    long refused, device, large, correct, wrong, errors, extremes;
    long folded;   /* 3D problems whose pick is a 2D kernel (problem.c folds them) */
} counts;

typedef struct options {
    unsigned seed;
    long count, only;
    int family;   /* -1: all */
    bool dry;
    convcat_arch arch;
} options;

/* One problem: refused (every kernel of the family says why), or run on the family's pick. */
static void one(const convcat_catalog *cat, const options *o, int f, long i, const convcat_entry_info *kinds,
                size_t nkinds, convcat_candidate *rows, uint64_t *digest, counts *c)
{
    const uint64_t seed = problem_seed(o->seed, f, i);
    const drawn d = draw(seed, f, kinds, nkinds);
    c->extremes += d.extreme;
    for (size_t b = 0; b < sizeof d.p; ++b)   /* FNV-1a over the problems drawn */
        *digest = (*digest ^ ((const uint8_t *)&d.p)[b]) * UINT64_C(1099511628211);
    size_t n = 0, ok = 0;
    const convcat_status qs = convcat_query(cat, &d.p, o->arch, 0, rows, convcat_count(cat), &n, &ok);
    size_t pick = (size_t)-1;
    bool reasons = qs == CONVCAT_OK;
    for (size_t r = 0; qs == CONVCAT_OK && r < n; ++r) {
        convcat_entry_info e;
        convcat_entry_info_get(cat, rows[r].index, &e);
        if (e.family != family_id[f])
            continue;
        if (rows[r].ok && pick == (size_t)-1)
            pick = rows[r].index;
        if (!rows[r].ok && !rows[r].reason[0])
            reasons = false;
    }
    if (!reasons) {
        ++c->errors;
        printf("  %s problem %ld (seed %u): %s\n", family_name[f], i, o->seed,
               qs != CONVCAT_OK ? convcat_last_error() : "a refusal without a reason");
        print_problem(&d.p, &d.epi);
        return;
    }
    if (pick == (size_t)-1) {
        ++c->refused;
        return;
    }
    if (tensor_bytes(&d.p) > MAX_TENSOR_BYTES) {
        ++c->large;
        return;
    }
    convcat_entry_info picked;
    convcat_entry_info_get(cat, pick, &picked);
    c->folded += picked.dims < d.p.dims;
    if (o->dry) {   /* would run: the pick's own check agrees, and the problem draws again the same */
        const drawn again = draw(seed, f, kinds, nkinds);
        char why[192];
        if (convcat_check(cat, pick, &d.p, why, sizeof why) != CONVCAT_OK || memcmp(&again, &d, sizeof d) != 0) {
            ++c->errors;
            printf("  %s problem %ld (seed %u): the query's pick refuses it (%s) or it draws differently\n",
                   family_name[f], i, o->seed, why);
            print_problem(&d.p, &d.epi);
            return;
        }
        ++c->correct;
        return;
    }
    cvc_verify v;
    const convcat_status st = cvc_verify_run(cat, &d.p, pick, (unsigned)(seed ^ seed >> 32), &d.epi,
                                             CVC_SABOTAGE_NONE, &v);
    if (st == CONVCAT_ERR_NO_DEVICE || st == CONVCAT_ERR_UNSUPPORTED) {
        ++c->device;
    } else if (st != CONVCAT_OK) {
        ++c->errors;
        printf("  %s problem %ld (seed %u), %s: %s: %s\n", family_name[f], i, o->seed, picked.key,
               convcat_status_string(st), convcat_last_error());
        print_problem(&d.p, &d.epi);
    } else if (!v.passed) {
        ++c->wrong;
        printf("  %s problem %ld (seed %u), %s: WRONG: rel. error %.3e (bound %.3e), %lld non-finite, %lld outliers "
               "(worst at %.2g of its bound)\n",
               family_name[f], i, o->seed, picked.key, v.rel_err, v.tolerance, v.nonfinite, v.outliers, v.worst);
        print_problem(&d.p, &d.epi);
    } else {
        ++c->correct;
    }
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    const long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

int main(int argc, char **argv)
{
    const char *path = getenv("CONVCAT_TEST_CATALOG");
    options o = {.seed = 1, .count = 10000, .only = -1, .family = -1, .arch = CONVCAT_ARCH_SM90A};
    for (int i = 1; i < argc; ++i) {
        long v;
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--seed") == 0 && val && parse_long(val, 0, 0xffffffffL, &v))
            o.seed = (unsigned)v, ++i;
        else if (strcmp(a, "--count") == 0 && val && parse_long(val, 1, 100000000L, &v))
            o.count = v, ++i;
        else if (strcmp(a, "--problem") == 0 && val && parse_long(val, 0, 100000000L, &v))
            o.only = v, ++i;
        else if (strcmp(a, "--family") == 0 && val) {
            o.family = -2;
            for (int f = 0; f < FAM_COUNT; ++f)
                if (strcmp(val, family_name[f]) == 0)
                    o.family = f;
            if (strcmp(val, "all") == 0)
                o.family = -1;
            if (o.family == -2) {
                fprintf(stderr, "test_property: --family is tma, gather, direct or all\n");
                return 2;
            }
            ++i;
        } else if (strcmp(a, "--arch") == 0 && val && (strcmp(val, "sm90a") == 0 || strcmp(val, "sm100a") == 0))
            o.arch = strcmp(val, "sm90a") == 0 ? CONVCAT_ARCH_SM90A : CONVCAT_ARCH_SM100A, ++i;
        else if (strcmp(a, "--dry-run") == 0)
            o.dry = true;
        else if (a[0] != '-')
            path = a;
        else {
            fprintf(stderr, "usage: test_property [CATALOG] [--seed N] [--count N] [--family tma|gather|direct|all] "
                    "[--problem I] [--dry-run [--arch sm90a|sm100a]]\n");
            return 2;
        }
    }
    if (!path) {
        fprintf(stderr, "test_property: no catalog (argument or CONVCAT_TEST_CATALOG)\n");
        return 99;
    }
    char name[128] = "none (dry run)";
    if (!o.dry) {
        const convcat_status st = cvc_verify_device(0, name, sizeof name);
        if (st == CONVCAT_ERR_NO_DRIVER || st == CONVCAT_ERR_NO_DEVICE) {
            printf("SKIP: no GPU to run the problems on: %s\n", convcat_last_error());
            return 77;
        }
        if (st != CONVCAT_OK || convcat_device_arch(&o.arch, NULL) != CONVCAT_OK) {
            fprintf(stderr, "test_property: %s\n", convcat_last_error());
            return 99;
        }
    }
    convcat_catalog *cat;
    if (convcat_open(path, &cat) != CONVCAT_OK) {
        fprintf(stderr, "test_property: %s\n", convcat_last_error());
        return 99;
    }
    const size_t total = convcat_count(cat);
    convcat_entry_info *kinds = calloc(total ? total : 1, sizeof *kinds);
    convcat_candidate *rows = calloc(total ? total : 1, sizeof *rows);
    if (!kinds || !rows)
        return 99;
    printf("device %s, catalog %s, arch %s, seed %u, %ld problems a family\n", name, path, convcat_arch_name(o.arch),
           o.seed, o.only >= 0 ? 1 : o.count);
    int bad = 0, families = 0;
    for (int f = 0; f < FAM_COUNT; ++f) {
        if (o.family >= 0 && o.family != f)
            continue;
        size_t nkinds = 0;
        for (size_t i = 0; i < total; ++i) {
            convcat_entry_info e;
            convcat_entry_info_get(cat, i, &e);
            if (e.family == family_id[f] && e.arch == o.arch && (int)e.op >= 0 && (int)e.op <= 2)
                kinds[nkinds++] = e;
        }
        if (!nkinds) {
            printf("%-6s: no kernel of this family for %s in the catalog\n", family_name[f], convcat_arch_name(o.arch));
            continue;
        }
        ++families;
        counts c = {0};
        uint64_t digest = UINT64_C(14695981039346656037);
        const long first = o.only >= 0 ? o.only : 0, last = o.only >= 0 ? o.only + 1 : o.count;
        for (long i = first; i < last; ++i)
            one(cat, &o, f, i, kinds, nkinds, rows, &digest, &c);
        printf("%-6s: %ld problems (%ld near the limits): %ld refused by rule, %ld refused by the device, %ld too "
               "large to run, %ld %s, %ld wrong, %ld errors (%ld of the runs 3D problems on 2D kernels); digest %016"
               PRIx64 "\n",
               family_name[f], last - first, c.extremes, c.refused, c.device, c.large, c.correct,
               o.dry ? "runnable" : "correct", c.wrong, c.errors, c.folded, digest);
        /* Not vacuous: most problems of a long run reach a kernel of the family. */
        const bool vacuous = o.only < 0 && o.count >= 100 && c.correct + c.device < (last - first) / 4;
        if (vacuous)
            printf("%-6s: fewer than a quarter of the problems ran: the generator misses the family's kernels\n",
                   family_name[f]);
        if (c.wrong || c.errors || vacuous) {
            bad = 1;
            printf("%-6s: FAILED (seed %u; test_property --seed %u --family %s --problem I runs problem I again)\n",
                   family_name[f], o.seed, o.seed, family_name[f]);
        }
    }
    free(kinds);
    free(rows);
    convcat_close(cat);
    return bad || families == 0 ? 1 : 0;
}
