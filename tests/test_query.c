/* test_query.c: ranking a catalog's kernels for a problem (runtime/src/query.c), and
 * what plan creation answers on a machine without the CUDA driver (plan.c).
 *
 * Runs on the real built catalog ($CONVCAT_TEST_CATALOG).  Every row of a
 * query must agree with convcat_check on the same entry; runnable rows come
 * first, fastest predicted first; then the refused ones, those closest to the
 * problem (same op, dims and types) first, the rule refusing most of them first.
 */
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>

#include "internal.h"
#include "unit.h"

static convcat_catalog *cat;
static size_t total;        /* entries in the catalog */
static size_t total_2d;     /* of them, 2D bf16 -> bf16 fprop but depthwise and grouped (the problem_2d() runners) */
static size_t grouped_2d;   /* 2D bf16 -> bf16 fprop of schedule grouped (grouped problems only) */
static size_t gather_2d;    /* of those, gather kernels (any channels and groups) */
static size_t tile_2d;      /* 2D bf16 -> bf16 fprop input-tile kernels (C <= 4) */
static size_t tma_2d;       /* ... and TMA ones */
static size_t arch_total[3], arch_2d[3];   /* the same, per convcat_arch */

/* A 2D bf16 -> bf16 fprop entry. */
static bool bf16_fprop_2d(const cvc_entry *e)
{
    const cvc_key *k = &e->k;
    return k->op == CONVCAT_FPROP && k->dims == 2 && k->a == CONVCAT_BF16 && k->out == CONVCAT_BF16;
}

/* ... of `family` (0: any but direct), not of schedule grouped nor an input-tile kernel (C <= 4). */
static bool fprop_2d(const cvc_entry *e, int family)
{
    return bf16_fprop_2d(e) && e->k.schedule != CONVCAT_GROUPED && !cvc_has(e, CVC_F_INPUT_TILE) &&
           (family ? e->family == family : e->family != CVC_FAMILY_DIRECT);
}

/* Room for every row of the catalogs the tests run on (ci: 11, default: 172). */
#define MAX_ROWS 4096

static int setup(void)
{
    const char *path = unit_env_path("CONVCAT_TEST_CATALOG");
    if (!path)
        return -1;
    if (convcat_open(path, &cat) != CONVCAT_OK) {
        fprintf(stderr, "cannot open %s: %s\n", path, convcat_last_error());
        return -1;
    }
    total = convcat_count(cat);
    for (size_t i = 0; i < total; ++i) {
        const cvc_entry *e = &cat->entries[i];
        total_2d += fprop_2d(e, 0);
        gather_2d += fprop_2d(e, CVC_FAMILY_GATHER);
        tma_2d += fprop_2d(e, CVC_FAMILY_TMA);
        grouped_2d += bf16_fprop_2d(e) && e->k.schedule == CONVCAT_GROUPED;
        tile_2d += bf16_fprop_2d(e) && cvc_has(e, CVC_F_INPUT_TILE);
        arch_total[e->k.arch]++;
        arch_2d[e->k.arch] += fprop_2d(e, 0);
    }
    if (total > MAX_ROWS) {
        fprintf(stderr, "the test catalog has %zu entries; the suite makes room for %d\n", total, MAX_ROWS);
        return -1;
    }
    if (total < 2 || tma_2d < 1 || gather_2d < 1) {
        fprintf(stderr, "the test catalog needs 2D bf16 TMA and gather kernels and one other\n");
        return -1;
    }
    return 0;
}

static int teardown(void)
{
    convcat_close(cat);
    return 0;
}

/* A 2D bf16 problem that the 2D bf16 kernels run. */
static convcat_problem problem_2d(void)
{
    convcat_problem p;
    convcat_problem_init(&p);
    p.n = 4, p.h = 28, p.w = 28, p.c = 128, p.k = 256, p.r = 3, p.s = 3;
    p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = 1;
    return p;
}

/* How close a refused entry is to p (same op, dims and types: 3) and the rule that refuses it. */
static void refusal_of(const cvc_entry *e, const convcat_problem *p, int *closeness, cvc_rule *rule)
{
    *closeness = (e->k.op == p->op) + (e->k.dims == p->dims) + (e->k.a == p->a_type && e->k.out == p->out_type);
    cvc_view v;
    char why[192];
    *rule = CVC_RULE_EXTENTS;   /* an invalid problem refuses every kernel alike */
    if (cvc_view_make(p, &v, why, sizeof why) == CONVCAT_OK)
        cvc_check_entry(e, &v, why, sizeof why, rule);
}

/* Every row agrees with convcat_check; each index once; ordering; predictions.  Refused rows:
 * closest first, then the rule refusing most rows of their closeness, then the rule, then
 * catalog order. */
static void check_rows(const convcat_problem *p, const convcat_candidate *rows, size_t count, size_t ok,
                       int sm_count)
{
    bool *seen = calloc(total, 1);
    int *closeness = calloc(count ? count : 1, sizeof *closeness);
    cvc_rule *rule = calloc(count ? count : 1, sizeof *rule);
    CU_ASSERT_FATAL(seen && closeness && rule);
    int per_rule[4][CVC_RULE_COUNT] = {{0}};
    for (size_t i = 0; i < count; ++i) {
        const convcat_candidate *c = &rows[i];
        CU_ASSERT_FATAL(c->index < total);
        CU_ASSERT_FALSE(seen[c->index]);
        seen[c->index] = true;
        char why[192];
        const convcat_status st = convcat_check(cat, c->index, p, why, sizeof why);
        CU_ASSERT_EQUAL(c->ok, st == CONVCAT_OK);
        CU_ASSERT_EQUAL(c->ok, i < ok);   /* runnable rows first */
        if (c->ok) {
            CU_ASSERT_STRING_EQUAL(c->reason, "");
            CU_ASSERT_TRUE(isfinite(c->predicted_us) && c->predicted_us > 0);
            CU_ASSERT_DOUBLE_EQUAL(c->predicted_us, cvc_predict_us(&cat->entries[c->index], unit_view(p), sm_count), 0.0);
            if (i > 0 && rows[i - 1].ok)
                CU_ASSERT_TRUE(rows[i - 1].predicted_us <= c->predicted_us);
        } else {
            CU_ASSERT_TRUE(c->reason[0] != '\0');
            CU_ASSERT_STRING_EQUAL(c->reason, why);
            refusal_of(&cat->entries[c->index], p, &closeness[i], &rule[i]);
            CU_ASSERT_FATAL(rule[i] > CVC_RULE_NONE && rule[i] < CVC_RULE_COUNT);
            per_rule[closeness[i]][rule[i]]++;
        }
    }
    for (size_t i = ok + 1; i < count; ++i) {
        const int ca = closeness[i - 1], cb = closeness[i];
        const int na = per_rule[ca][rule[i - 1]], nb = per_rule[cb][rule[i]];
        const bool in_order = ca != cb ? ca > cb : na != nb ? na > nb : rule[i - 1] != rule[i] ? rule[i - 1] < rule[i]
                                                                                             : rows[i - 1].index < rows[i].index;
        if (!in_order)
            printf("\n    rows %zu, %zu: closeness %d, %d, rule %d (%d rows), %d (%d rows), entries %zu, %zu", i - 1, i, ca,
                   cb, (int)rule[i - 1], na, (int)rule[i], nb, rows[i - 1].index, rows[i].index);
        CU_ASSERT_TRUE(in_order);
    }
    free(rule);
    free(closeness);
    free(seen);
}

static void test_runnable_rows_first_fastest_first(void)
{
    const convcat_problem p = problem_2d();
    convcat_candidate rows[MAX_ROWS];
    size_t count = 99, ok = 99;
    CU_ASSERT_FATAL(total <= CVC_ARRAY_LEN(rows));
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, 0, rows, CVC_ARRAY_LEN(rows), &count, &ok),
                       CONVCAT_OK);
    CU_ASSERT_EQUAL(count, total);
    CU_ASSERT_EQUAL(ok, total_2d);
    check_rows(&p, rows, count, ok, 0);
    /* The others say why: their op, dims or data types, (depthwise and grouped kernels) the groups, or
     * (input-tile kernels) the channels. */
    for (size_t i = ok; i < count; ++i)
        CU_ASSERT_TRUE(strstr(rows[i].reason, "problem is 2D") || strstr(rows[i].reason, "kernel takes") ||
                       strstr(rows[i].reason, "kernel computes") ||
                       strstr(rows[i].reason, "this kernel stages input pixels of at most") ||
                       strstr(rows[i].reason, "a depthwise kernel takes one channel per group") ||
                       strstr(rows[i].reason, "this kernel runs grouped problems"));
    /* The closest refusals come first: those of the 2D bf16 fprop kernels (depthwise, grouped). */
    if (ok < count)
        CU_ASSERT_TRUE(cat->entries[rows[ok].index].k.op == CONVCAT_FPROP || total_2d == total);
}

static void test_query_is_deterministic(void)
{
    const convcat_problem p = problem_2d();
    convcat_candidate a[MAX_ROWS], b[MAX_ROWS];
    size_t na, nb, oka, okb;
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, 0, a, MAX_ROWS, &na, &oka), CONVCAT_OK);
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, 132, b, MAX_ROWS, &nb, &okb), CONVCAT_OK);
    CU_ASSERT_EQUAL(na, nb);
    CU_ASSERT_EQUAL(oka, okb);
    CU_ASSERT_EQUAL(memcmp(a, b, na * sizeof *a), 0);   /* sm_count 0 means 132 */
}

static void test_capacity_smaller_than_the_catalog(void)
{
    const convcat_problem p = problem_2d();
    convcat_candidate all[MAX_ROWS], few[4];
    size_t count, ok, n_all, ok_all;
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, 0, all, MAX_ROWS, &n_all, &ok_all), CONVCAT_OK);
    for (size_t cap = 0; cap < total && cap < CVC_ARRAY_LEN(few) - 1; ++cap) {
        memset(few, 0xA5, sizeof few);
        UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, 0, few, cap, &count, &ok), CONVCAT_OK);
        CU_ASSERT_EQUAL(count, cap);
        CU_ASSERT_EQUAL(ok, ok_all);   /* counts every runnable kernel, not only those returned */
        CU_ASSERT_EQUAL(memcmp(few, all, cap * sizeof *few), 0);
        const uint8_t *after = (const uint8_t *)&few[cap];
        CU_ASSERT_TRUE(after[0] == 0xA5 && after[sizeof *few - 1] == 0xA5);   /* nothing past capacity */
    }
    /* No buffer at all: just the count of runnable kernels. */
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, 0, NULL, 0, &count, &ok), CONVCAT_OK);
    CU_ASSERT_EQUAL(count, 0);
    CU_ASSERT_EQUAL(ok, ok_all);
    /* ok_out is optional. */
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, 0, few, 1, &count, NULL), CONVCAT_OK);
    CU_ASSERT_EQUAL(count, 1);
}

static void test_arch_filter(void)
{
    const convcat_problem p = problem_2d();
    convcat_candidate rows[MAX_ROWS];
    size_t count = 99, ok = 99;
    /* Each arch answers with its own entries only (the catalogs hold sm90a and sm100a side by side). */
    for (int arch = CONVCAT_ARCH_SM90A; arch <= CONVCAT_ARCH_SM100A; ++arch) {
        count = ok = 99;
        UNIT_ASSERT_STATUS(convcat_query(cat, &p, (convcat_arch)arch, 0, rows, MAX_ROWS, &count, &ok), CONVCAT_OK);
        CU_ASSERT_EQUAL(count, arch_total[arch]);
        CU_ASSERT_EQUAL(ok, arch_2d[arch]);
        for (size_t i = 0; i < count; ++i)
            CU_ASSERT_EQUAL(cat->entries[rows[i].index].k.arch, (convcat_arch)arch);
    }
    CU_ASSERT_EQUAL(arch_total[CONVCAT_ARCH_SM90A] + arch_total[CONVCAT_ARCH_SM100A], total);
    /* A value of no arch is a caller's mistake, not an empty answer. */
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, (convcat_arch)3, 0, rows, MAX_ROWS, &count, &ok),
                       CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, (convcat_arch)-1, 0, rows, MAX_ROWS, &count, &ok),
                       CONVCAT_ERR_INVALID_ARGUMENT);
}

static void test_a_problem_nothing_can_run(void)
{
    convcat_candidate rows[MAX_ROWS];
    size_t count, ok = 99;
    convcat_problem p = problem_2d();
    p.c = 12;   /* not a multiple of 8: the gather kernels only */
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, 0, rows, MAX_ROWS, &count, &ok), CONVCAT_OK);
    CU_ASSERT_EQUAL(count, total);
    CU_ASSERT_EQUAL(ok, gather_2d);
    check_rows(&p, rows, count, ok, 0);
    for (size_t i = 0; i < count; ++i) {
        CU_ASSERT_EQUAL(rows[i].ok, cat->entries[rows[i].index].family == CVC_FAMILY_GATHER && fprop_2d(&cat->entries[rows[i].index], 0));
        CU_ASSERT_TRUE(rows[i].ok || strstr(rows[i].reason, "C = 12") || strstr(rows[i].reason, "problem is 2D") ||
                       strstr(rows[i].reason, "kernel takes") || strstr(rows[i].reason, "kernel computes") ||
                       strstr(rows[i].reason, "one channel per group") ||
                       strstr(rows[i].reason, "this kernel runs grouped problems"));
    }
    /* The first refusal is the channel rule of a TMA kernel of the problem's op, dims and types. */
    CU_ASSERT_FATAL(ok < count);
    UNIT_ASSERT_MENTIONS(rows[ok].reason, "C = 12: channels must be a multiple of 8");
    CU_ASSERT_TRUE(fprop_2d(&cat->entries[rows[ok].index], CVC_FAMILY_TMA));
    /* Broken for every kernel in the same way: each row says so. */
    p = problem_2d();
    p.n = 0;
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, 0, rows, MAX_ROWS, &count, &ok), CONVCAT_OK);
    CU_ASSERT_EQUAL(count, total);
    CU_ASSERT_EQUAL(ok, 0);
    check_rows(&p, rows, count, ok, 0);
    for (size_t i = 0; i < count; ++i)
        UNIT_ASSERT_MENTIONS(rows[i].reason, "extents must be >= 1");
    /* Neighbour: N = 1 runs. */
    p.n = 1;
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, 0, rows, MAX_ROWS, &count, &ok), CONVCAT_OK);
    CU_ASSERT_EQUAL(ok, total_2d);
}

/* The ResNet-50 stem (224 x 224 x 3 -> 7x7 / 2, pad 3 -> 112 x 112 x 64): three channels fill no
 * 16-byte TMA row, so only a gather kernel runs it.  In tf32, which the catalog's gather kernels
 * do not take in 2D, nothing does, and the first reason shown is the channel rule of the TMA
 * kernel of the same op, dims and types, not that some other kernel computes dgrad. */
static convcat_problem stem(convcat_dtype ab, convcat_dtype out)
{
    convcat_problem p;
    convcat_problem_init(&p);
    p.a_type = p.b_type = ab, p.out_type = out;
    p.n = 1, p.h = p.w = 224, p.c = 3, p.k = 64, p.r = p.s = 7;
    p.stride[1] = p.stride[2] = 2;
    p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = 3;
    return p;
}

static void test_resnet_stem_query(void)
{
    convcat_candidate rows[MAX_ROWS];
    size_t count, ok = 0;
    convcat_problem p = stem(CONVCAT_BF16, CONVCAT_BF16);
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, 0, rows, MAX_ROWS, &count, &ok), CONVCAT_OK);
    CU_ASSERT_EQUAL(count, total);
    CU_ASSERT_TRUE(ok >= 1);
    CU_ASSERT_EQUAL(ok, gather_2d + tile_2d);
    check_rows(&p, rows, count, ok, 0);
    for (size_t i = 0; i < ok; ++i)
        CU_ASSERT_EQUAL(cat->entries[rows[i].index].family, CVC_FAMILY_GATHER);
    /* an input-tile kernel ranks first where the catalog has one */
    CU_ASSERT_EQUAL(cvc_has(&cat->entries[rows[0].index], CVC_F_INPUT_TILE), tile_2d > 0);
    CU_ASSERT_FATAL(ok < count);
    UNIT_ASSERT_MENTIONS(rows[ok].reason, "C = 3: channels must be a multiple of 8");
    /* Types that a 2D fprop TMA kernel takes and no gather kernel does: nothing runs the stem, and
     * the first reason is the channel rule of such a kernel (ci spec: tf32 -> f32; default: bf16 ->
     * f32).  A catalog with gather kernels of every such type has no case to check. */
    static const convcat_dtype types[3][2] = {{CONVCAT_TF32, CONVCAT_F32}, {CONVCAT_BF16, CONVCAT_F32},
                                              {CONVCAT_F16, CONVCAT_F32}};
    static const char *const rule[3] = {"C = 3: channels must be a multiple of 4", "C = 3: channels must be a multiple of 8",
                                        "C = 3: channels must be a multiple of 8"};
    int checked = 0;
    for (int t = 0; t < 3 && !checked; ++t) {
        size_t tma = 0, gather = 0;
        for (size_t i = 0; i < total; ++i) {
            const cvc_key *k = &cat->entries[i].k;
            const bool mine = k->op == CONVCAT_FPROP && k->dims == 2 && k->a == types[t][0] && k->out == types[t][1];
            tma += mine && cat->entries[i].family == CVC_FAMILY_TMA;
            gather += mine && cat->entries[i].family == CVC_FAMILY_GATHER;
        }
        if (!tma || gather)
            continue;
        p = stem(types[t][0], types[t][1]);
        UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, 0, rows, MAX_ROWS, &count, &ok), CONVCAT_OK);
        CU_ASSERT_EQUAL(count, total);
        CU_ASSERT_EQUAL(ok, 0);
        check_rows(&p, rows, count, ok, 0);
        const cvc_key *first = &cat->entries[rows[0].index].k;
        CU_ASSERT_TRUE(first->op == CONVCAT_FPROP && first->dims == 2 && first->a == types[t][0] &&
                       first->out == types[t][1]);
        UNIT_ASSERT_MENTIONS(rows[0].reason, rule[t]);
        checked = 1;
    }
    if (!checked)
        printf("(no type a 2D fprop TMA kernel takes without a gather kernel: the refusal order is not checked) ");
    CU_ASSERT_PTR_NULL(strstr(rows[0].reason, "kernel computes"));
    /* Types no 2D fprop kernel takes (ci spec: bf16 -> f32): the closest (2D fprop) kernels say so first. */
    size_t typed = 0;
    for (size_t i = 0; i < total; ++i) {
        const cvc_key *k = &cat->entries[i].k;
        typed += k->op == CONVCAT_FPROP && k->dims == 2 && k->a == CONVCAT_BF16 && k->out == CONVCAT_F32;
    }
    if (typed)
        return;
    p = stem(CONVCAT_BF16, CONVCAT_F32);
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, 0, rows, MAX_ROWS, &count, &ok), CONVCAT_OK);
    CU_ASSERT_EQUAL(ok, 0);
    check_rows(&p, rows, count, ok, 0);
    const cvc_key *first = &cat->entries[rows[0].index].k;
    CU_ASSERT_TRUE(first->op == CONVCAT_FPROP && first->dims == 2);
    UNIT_ASSERT_MENTIONS(rows[0].reason, "problem is bf16 x bf16 -> f32");
}

/* Queries p; how many kernels run it (*ok) and how many refuse it saying `text`. */
static size_t refusals_saying(const convcat_problem *p, const char *text, size_t *ok)
{
    static convcat_candidate rows[MAX_ROWS];
    size_t count, said = 0;
    UNIT_ASSERT_STATUS(convcat_query(cat, p, CONVCAT_ARCH_ANY, 0, rows, MAX_ROWS, &count, ok), CONVCAT_OK);
    for (size_t i = *ok; i < count; ++i)
        said += strstr(rows[i].reason, text) != NULL;
    return said;
}

/* A grouped wgrad problem (what `convcat query --op wgrad --groups 8 ...` asks): the wgrad kernels
 * of its dims and types with groups_mode diagonal (tile M == tile N, cluster M 1; the built
 * catalogs, default and ci, have some) or any (gather) run it; the other TMA wgrad kernels take
 * groups = 1 and the direct ones one channel per group (or 2, 4, 8), and say so.  Changing K != C leaves
 * the diagonal ones refusing, and fprop groups run on gather kernels only. */
static void test_grouped_wgrad_query(void)
{
    convcat_candidate rows[MAX_ROWS];
    size_t count, ok = 99, diagonal = 0, any = 0, others = 0, depthwise = 0;
    convcat_problem p = problem_2d();
    p.op = CONVCAT_WGRAD;
    p.c = p.k = 128, p.groups = 8;   /* 16 channels per group */
    for (size_t i = 0; i < total; ++i) {
        const cvc_entry *e = &cat->entries[i];
        const cvc_key *k = &e->k;
        const bool mine = k->op == CONVCAT_WGRAD && k->dims == 2 && k->a == CONVCAT_BF16 && k->out == CONVCAT_BF16;
        diagonal += mine && e->groups_mode == CVC_GROUPS_DIAGONAL;
        any += mine && e->groups_mode == CVC_GROUPS_ANY;
        others += mine && e->groups_mode == CVC_GROUPS_NONE;
        depthwise += mine && e->groups_mode == CVC_GROUPS_DEPTHWISE;
    }
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, 0, rows, MAX_ROWS, &count, &ok), CONVCAT_OK);
    CU_ASSERT_EQUAL(count, total);
    CU_ASSERT_TRUE(diagonal >= 1 && others >= 1 && depthwise >= 1);
    CU_ASSERT_EQUAL(ok, diagonal + any);
    check_rows(&p, rows, count, ok, 0);
    size_t said = 0, said_depthwise = 0;
    for (size_t i = 0; i < count; ++i) {
        const cvc_entry *e = &cat->entries[rows[i].index];
        const cvc_key *k = &e->k;
        CU_ASSERT_EQUAL(rows[i].ok, k->op == CONVCAT_WGRAD && k->dims == 2 && k->a == CONVCAT_BF16 &&
                                        k->out == CONVCAT_BF16 &&
                                        (e->groups_mode == CVC_GROUPS_DIAGONAL || e->groups_mode == CVC_GROUPS_ANY));
        said += strstr(rows[i].reason, "groups = 8: this kernel takes groups = 1 (the gather family runs grouped") != NULL;
        said_depthwise += strstr(rows[i].reason, "C / groups = 16 channels per group; a depthwise kernel takes 1") ||
                          strstr(rows[i].reason, "16 channels and 16 filters per group; this direct kernel takes one "
                                                 "channel per group, or 2, 4, 8 of each");
    }
    CU_ASSERT_EQUAL(said, others);
    CU_ASSERT_EQUAL(said_depthwise, depthwise);
    /* K != C: the diagonal blocks are square. */
    p.k = 64;
    CU_ASSERT_EQUAL(refusals_saying(&p, "grouped wgrad needs K == C (K = 64, C = 128)", &ok), diagonal);
    CU_ASSERT_EQUAL(ok, any);
    /* fprop: groups > 1 run on the gather kernels and the grouped schedule's (64 channels and 128
     * filters a group: whole tile columns of 64 and 128). */
    p = problem_2d();
    p.groups = 2;
    CU_ASSERT_EQUAL(refusals_saying(&p, "groups = 2: this kernel takes groups = 1", &ok), tma_2d + tile_2d);
    CU_ASSERT_EQUAL(ok, gather_2d + grouped_2d);
}

/* problem_2d() as entry e takes it: its op and types, depthwise for a direct kernel, two groups for a
 * grouped one. */
static convcat_problem problem_for(const cvc_entry *e, int n)
{
    convcat_problem p = problem_2d();
    p.n = n;
    p.op = e->k.op;
    p.a_type = e->k.a, p.b_type = e->k.b, p.out_type = e->k.out;
    if (e->family == CVC_FAMILY_DIRECT)
        p.groups = p.c;
    if (e->family == CVC_FAMILY_DIRECT && e->k.stages > 1)   /* staged: one filter a group */
        p.k = p.c;
    if (e->k.schedule == CONVCAT_GROUPED)   /* grouped problems only: 64 channels, 128 filters a group */
        p.groups = 2;
    if (cvc_has(e, CVC_F_INPUT_TILE))   /* at most 4 channels */
        p.c = 3;
    if (cvc_has(e, CVC_F_INPUT_TILE) && e->k.op == CONVCAT_DGRAD)   /* a block's dy region of K filters staged */
        p.k = 64;
    return p;
}

/* Every SM count works, including fewer SMs than a cluster has CTAs. */
static void test_any_sm_count(void)
{
    const convcat_problem p = problem_2d();
    convcat_candidate rows[MAX_ROWS];
    size_t count, ok;
    const int counts[] = {-5, 0, 1, 2, 3, 66, 132, 1000};
    for (size_t i = 0; i < CVC_ARRAY_LEN(counts); ++i) {
        UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, counts[i], rows, MAX_ROWS, &count, &ok), CONVCAT_OK);
        CU_ASSERT_EQUAL(ok, total_2d);
        check_rows(&p, rows, count, ok, counts[i]);
    }
    int priced = 0;
    for (size_t e = 0; e < total; ++e) {
        const cvc_entry *en = &cat->entries[e];
        if (en->k.dims != 2)
            continue;
        const convcat_problem q = problem_for(en, 4);
        const cvc_view *v = unit_view(&q);
        UNIT_ASSERT_STATUS(cvc_check_entry(en, v, NULL, 0, NULL), CONVCAT_OK);   /* priced only where it runs */
        const double t1 = cvc_predict_us(en, v, 1), t66 = cvc_predict_us(en, v, 66);
        const double t132 = cvc_predict_us(en, v, 132);
        CU_ASSERT_TRUE(isfinite(t1) && t1 > 0);
        if (!(t1 >= t66 && t66 >= t132))
            printf("\n    %s: %g us on 1 SM, %g on 66, %g on 132", en->key, t1, t66, t132);
        CU_ASSERT_TRUE(t1 >= t66 && t66 >= t132);   /* fewer SMs are never faster */
        CU_ASSERT_DOUBLE_EQUAL(cvc_predict_us(en, v, 0), t132, 0.0);
        CU_ASSERT_DOUBLE_EQUAL(cvc_predict_us(en, v, -1), t132, 0.0);
        ++priced;
    }
    CU_ASSERT_TRUE(priced > 0);
    /* Past 4096 SMs the model's int products (8 * SMs reduction grids) would overflow: refused. */
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, 4096, rows, MAX_ROWS, &count, &ok), CONVCAT_OK);
    const int too_many[] = {4097, 1 << 30, INT_MAX};
    for (size_t i = 0; i < CVC_ARRAY_LEN(too_many); ++i) {
        UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, too_many[i], rows, MAX_ROWS, &count, &ok),
                           CONVCAT_ERR_INVALID_ARGUMENT);
        UNIT_ASSERT_MENTIONS(convcat_last_error(), "SMs the model sizes");
    }
}

/* The model: more work takes longer; nothing beats one pass through DRAM; bad problems never rank. */
static void test_prediction_model_is_sane(void)
{
    for (size_t e = 0; e < total; ++e) {
        const cvc_entry *en = &cat->entries[e];
        if (en->k.dims != 2)
            continue;
        const convcat_problem small = problem_for(en, 4), big = problem_for(en, 64);
        const cvc_view *vs = unit_view(&small), *vb = unit_view(&big);
        UNIT_ASSERT_STATUS(cvc_check_entry(en, vb, NULL, 0, NULL), CONVCAT_OK);
        const double ts = cvc_predict_us(en, vs, 132), tb = cvc_predict_us(en, vb, 132);
        if (!(ts < tb))
            printf("\n    %s: %g us for N 4, %g for N 64", en->key, ts, tb);
        CU_ASSERT_TRUE(ts < tb);
        /* x, w and y once through DRAM at 4.3 TB/s */
        const double bytes = (double)vb->in_pixels * big.c * vb->a_bytes + (double)big.k * vb->taps * vb->cg * vb->b_bytes +
                             (double)vb->pixels * big.k * vb->out_bytes;
        if (!(tb >= bytes / 4.3e6))
            printf("\n    %s: %g us for %g bytes", en->key, tb, bytes);
        CU_ASSERT_TRUE(tb >= bytes / 4.3e6);
    }
    /* A problem without a view (H = 0) is refused before any kernel is priced. */
    convcat_problem bad = problem_2d();
    bad.h = 0;
    cvc_view v;
    CU_ASSERT_EQUAL(cvc_view_make(&bad, &v, NULL, 0), CONVCAT_ERR_UNSUPPORTED);
    convcat_candidate rows[MAX_ROWS];
    size_t count, ok = 99;
    UNIT_ASSERT_STATUS(convcat_query(cat, &bad, CONVCAT_ARCH_ANY, 0, rows, MAX_ROWS, &count, &ok), CONVCAT_OK);
    CU_ASSERT_EQUAL(ok, 0);
    for (size_t i = 0; i < count; ++i)
        CU_ASSERT_TRUE(!rows[i].ok && rows[i].predicted_us == 0.0);
}

/* For every 2D fprop kernel of schedule `first` whose twin (the same key, schedule `second`) is in
 * the catalog: the model prices it below the twin on p (in the pair's data type).  The pairs seen. */
/* Where entry `index` ranks among a query's `ok` runnable rows (SIZE_MAX: not among them). */
static size_t rank_of(const convcat_candidate *rows, size_t ok, size_t index)
{
    for (size_t j = 0; j < ok; ++j)
        if (rows[j].index == index)
            return j;
    return SIZE_MAX;
}

static int ranked_twins(convcat_problem p, convcat_schedule first, convcat_schedule second)
{
    int pairs = 0;
    for (size_t i = 0; i < total; ++i) {
        const cvc_entry *a = &cat->entries[i];
        if (a->k.schedule != first || a->k.op != CONVCAT_FPROP || a->k.dims != 2)
            continue;
        for (size_t j = 0; j < total; ++j) {
            const cvc_entry *b = &cat->entries[j];
            cvc_key twin = a->k;
            twin.schedule = second;
            if (memcmp(&twin, &b->k, sizeof twin) != 0)
                continue;
            p.a_type = p.b_type = a->k.a;
            p.out_type = a->k.out;
            const cvc_view *v = unit_view(&p);
            UNIT_ASSERT_STATUS(cvc_check_entry(a, v, NULL, 0, NULL), CONVCAT_OK);
            UNIT_ASSERT_STATUS(cvc_check_entry(b, v, NULL, 0, NULL), CONVCAT_OK);
            CU_ASSERT_TRUE(cvc_predict_us(a, v, 132) < cvc_predict_us(b, v, 132));
            ++pairs;
        }
    }
    return pairs;
}

/* A swap kernel ranks ahead of its pingpong twin (same tile and stages) on a
 * problem both run: the model prices its stage at SWAP_STAGE of the twin's. */
static void test_swap_ranks_ahead_of_its_pingpong_twin(void)
{
    convcat_problem p;
    convcat_problem_init(&p);
    p.n = 32, p.h = 56, p.w = 56, p.c = 64, p.k = 64, p.r = 3, p.s = 3;   /* ResNet's 3x3 64 -> 64 */
    p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = 1;
    const int pairs = ranked_twins(p, CONVCAT_SWAP, CONVCAT_PINGPONG);
    printf("(%d swap / pingpong pairs) ", pairs);
    CU_ASSERT_TRUE(pairs > 0);   /* the ci and default catalogs hold a pair */
}

/* On ResNet's 1x1 64 -> 64 (one channel block a tile, the epilogue is most of it) a pingpong
 * fprop kernel ranks behind its coop twin: one warpgroup stores its whole tile alone
 * (ALONE_EPILOGUE; on the H200 128x64 coop ran 54 us there, the pingpong twin 59). */
static void test_pingpong_ranks_behind_its_coop_twin_on_short_k(void)
{
    convcat_problem p;
    convcat_problem_init(&p);
    p.n = 256, p.h = 56, p.w = 56, p.c = 64, p.k = 64;
    const int pairs = ranked_twins(p, CONVCAT_COOP, CONVCAT_PINGPONG);
    printf("(%d coop / pingpong pairs) ", pairs);
    CU_ASSERT_TRUE(pairs > 0);   /* the ci and default catalogs hold a pair */
}

/* Where the catalog holds halo kernels, the model ranks one first on ResNet's 3x3 64 -> 64 at
 * 56 x 56 (one input tile serves all nine taps: 1.3x the best im2col kernel on the H200) and none
 * first at 7 x 7 (blocks of 8 columns waste most of a 7-pixel row, and there are few). */
static void test_halo_ranks_first_where_it_wins(void)
{
    convcat_candidate *rows = calloc(total, sizeof *rows);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rows);
    int checked = 0;
    for (int t = 0; t < 2; ++t) {
        const convcat_dtype type = t ? CONVCAT_F16 : CONVCAT_BF16;
        bool has_halo = false;
        for (size_t i = 0; i < total; ++i)
            has_halo |= cat->entries[i].k.schedule == CONVCAT_HALO && cat->entries[i].k.a == type;
        if (!has_halo)
            continue;
        convcat_problem p;
        convcat_problem_init(&p);
        p.a_type = p.b_type = p.out_type = type;
        p.n = 256, p.h = 56, p.w = 56, p.c = 64, p.k = 64, p.r = 3, p.s = 3;
        p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = 1;
        size_t count, ok;
        UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_SM90A, 132, rows, total, &count, &ok), CONVCAT_OK);
        CU_ASSERT_TRUE(ok > 0 && cat->entries[rows[0].index].k.schedule == CONVCAT_HALO);
        p.h = p.w = 7, p.c = p.k = 512;
        UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_SM90A, 132, rows, total, &count, &ok), CONVCAT_OK);
        CU_ASSERT_TRUE(ok > 0 && cat->entries[rows[0].index].k.schedule != CONVCAT_HALO);
        ++checked;
    }
    free(rows);
    printf("(%d types with halo kernels) ", checked);
    CU_ASSERT_TRUE(checked > 0);   /* the ci and default catalogs hold some */
}

/* Where both families run a problem, the model ranks them in one unit: layers whose TMA kernel ran
 * 3-4x faster than the gather kernel the query had ranked first (H200, bf16: S3D's 3x3 dgrad at
 * 8 x 2 x 7 x 7, 192 <- 384 channels, 74.7 against 23 us; MobileNetV2's last 1x1 dgrad, 320 <- 1280
 * at 64 x 7 x 7, 35.9 against 8.0 us; ResNeXt's 3x3 wgrad of 16 channels a group, 94 against 36 us
 * on a diagonal kernel) rank a TMA kernel first. */
static void test_tma_ranks_ahead_of_gather_where_it_is_faster(void)
{
    convcat_candidate *rows = calloc(total, sizeof *rows);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rows);
    convcat_problem ps[3];
    for (int i = 0; i < 3; ++i) {
        convcat_problem_init(&ps[i]);
        ps[i].a_type = ps[i].b_type = ps[i].out_type = CONVCAT_BF16;
    }
    ps[0].op = CONVCAT_DGRAD, ps[0].dims = 3, ps[0].n = 8, ps[0].d = 2, ps[0].h = ps[0].w = 7;
    ps[0].c = 192, ps[0].k = 384, ps[0].r = ps[0].s = 3, ps[0].pad_lo[1] = ps[0].pad_lo[2] = 1;
    ps[0].pad_hi[1] = ps[0].pad_hi[2] = 1;
    ps[1].op = CONVCAT_DGRAD, ps[1].n = 64, ps[1].h = ps[1].w = 7, ps[1].c = 320, ps[1].k = 1280;
    ps[2].op = CONVCAT_WGRAD, ps[2].n = 64, ps[2].h = ps[2].w = 14, ps[2].c = ps[2].k = 512, ps[2].groups = 32;
    ps[2].r = ps[2].s = 3, ps[2].pad_lo[1] = ps[2].pad_lo[2] = ps[2].pad_hi[1] = ps[2].pad_hi[2] = 1;
    int checked = 0;
    for (int i = 0; i < 3; ++i) {
        size_t count, ok;
        UNIT_ASSERT_STATUS(convcat_query(cat, &ps[i], CONVCAT_ARCH_SM90A, 132, rows, total, &count, &ok), CONVCAT_OK);
        bool tma = false, gather = false;
        for (size_t j = 0; j < ok; ++j) {
            tma |= cat->entries[rows[j].index].family == CVC_FAMILY_TMA;
            gather |= cat->entries[rows[j].index].family == CVC_FAMILY_GATHER;
        }
        if (!tma || !gather)   /* a catalog without both kinds for this problem */
            continue;
        if (cat->entries[rows[0].index].family != CVC_FAMILY_TMA)
            printf("\n    problem %d: %s ranks first", i, cat->entries[rows[0].index].key);
        CU_ASSERT_EQUAL(cat->entries[rows[0].index].family, CVC_FAMILY_TMA);
        ++checked;
    }
    free(rows);
    printf("(%d problems both families run) ", checked);
}

/* Groups of 4 channels run on direct kernels, and on their narrow channel blocks: ResNeXt's 3x3
 * layers (H200, bf16) ran 100-107 us on blocks of 16 channels, 146-153 us on blocks of 64; their
 * dgrad at the same rate (105-116 us), where gather kernels, packed or not, took 116-246.  Groups of
 * 8 run widened on the grouped schedule, 2 groups as one of 16 channels (H100: 48-56 us, the
 * direct kernels 103-116). */
static void test_small_groups_rank_a_narrow_direct_block_first(void)
{
    convcat_candidate *rows = calloc(total, sizeof *rows);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rows);
    int checked = 0;
    for (int i = 0; i < 4; ++i) {
        const int c = i % 2 ? 8 : 4;
        convcat_problem p;
        convcat_problem_init(&p);
        p.op = i < 2 ? CONVCAT_FPROP : CONVCAT_DGRAD;
        p.a_type = p.b_type = p.out_type = CONVCAT_BF16;
        p.n = 64, p.h = p.w = c == 4 ? 56 : 28, p.c = p.k = 32 * c, p.groups = 32;
        p.r = p.s = 3, p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = 1;
        size_t count, ok;
        UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_SM90A, 132, rows, total, &count, &ok), CONVCAT_OK);
        bool narrow = false, grouped = false;
        for (size_t j = 0; j < ok; ++j) {
            const cvc_entry *e = &cat->entries[rows[j].index];
            narrow |= e->family == CVC_FAMILY_DIRECT && e->k.tile_k <= 32;
            grouped |= e->k.schedule == CONVCAT_GROUPED;
        }
        if (!narrow || !grouped)   /* a catalog without narrow direct kernels or the grouped schedule */
            continue;
        const cvc_entry *first = &cat->entries[rows[0].index];
        const bool want = c == 4 ? first->family == CVC_FAMILY_DIRECT && first->k.tile_k <= 32
                                 : first->k.schedule == CONVCAT_GROUPED;
        if (!want)
            printf("\n    %s c = %d: %s ranks first", convcat_op_name(p.op), c, first->key);
        CU_ASSERT_TRUE(want);
        ++checked;
    }
    free(rows);
    printf("(%d group widths and ops) ", checked);
}

/* Gather kernels of few resident warps load slower: on MobileNetV2's stem (C = 3, K = 32, 3x3 stride 2)
 * the 64x32x32 fprop (4 CTAs an SM) ran 115 us where the 128x64x32 (2 CTAs by its registers) ran 197
 * (H200, bf16), and ranks first where the catalog holds both with their ptxas counts. */
static void test_gather_ranks_the_resident_tile_first_on_the_stem(void)
{
    size_t small, large;
    if (convcat_find(cat, "sm90a_fprop_2d_bf16_bf16_f32_bf16_64x32x32_s3_c1x1_gather", &small) != CONVCAT_OK ||
        convcat_find(cat, "sm90a_fprop_2d_bf16_bf16_f32_bf16_128x64x32_s3_c1x1_gather", &large) != CONVCAT_OK ||
        !cat->entries[small].registers || cat->entries[small].registers >= cat->entries[large].registers) {
        printf("(not in this catalog, or without their register counts) ");
        return;
    }
    convcat_candidate *rows = calloc(total, sizeof *rows);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rows);
    convcat_problem p;
    convcat_problem_init(&p);
    p.a_type = p.b_type = p.out_type = CONVCAT_BF16;
    p.n = 64, p.h = p.w = 224, p.c = 3, p.k = 32, p.r = p.s = 3;
    p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = 1, p.stride[1] = p.stride[2] = 2;
    size_t count, ok;
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_SM90A, 132, rows, total, &count, &ok), CONVCAT_OK);
    const size_t at_small = rank_of(rows, ok, small), at_large = rank_of(rows, ok, large);
    CU_ASSERT_TRUE(at_small != SIZE_MAX && at_large != SIZE_MAX);
    CU_ASSERT_TRUE(at_small < at_large);
    free(rows);
}

/* The stems' dgrad ranks an input-tile kernel first where the catalog has one (ResNet-50's 7x7 stride-2
 * stem: 858 us against the 8-wide pipelined tile's 4723, H100, bf16), else the 8-wide, 4-stage gather
 * tile (C = 3: N = 3 of each stride phase's GEMM; 1251 us where the 128x16x32 ran 1466, H200). */
static void test_stem_dgrad_ranks_the_narrow_tile_first(void)
{
    convcat_candidate *rows = calloc(total, sizeof *rows);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rows);
    convcat_problem p;
    convcat_problem_init(&p);
    p.op = CONVCAT_DGRAD, p.a_type = p.b_type = p.out_type = CONVCAT_BF16;
    p.n = 64, p.h = p.w = 224, p.c = 3, p.k = 64, p.r = p.s = 7;
    p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = 3, p.stride[1] = p.stride[2] = 2;
    size_t count, ok;
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_SM90A, 132, rows, total, &count, &ok), CONVCAT_OK);
    bool narrow = false, tile = false;
    for (size_t j = 0; j < ok; ++j) {
        const cvc_entry *e = &cat->entries[rows[j].index];
        narrow |= e->k.tile_n == 8 && e->family == CVC_FAMILY_GATHER;
        tile |= cvc_has(e, CVC_F_INPUT_TILE);
    }
    const cvc_entry *first = &cat->entries[rows[0].index];
    if (tile) {
        if (!cvc_has(first, CVC_F_INPUT_TILE))
            printf("\n    %s ranks first", first->key);
        CU_ASSERT_TRUE(cvc_has(first, CVC_F_INPUT_TILE));
    } else if (!narrow) {
        printf("(no input-tile or 8-wide gather dgrad in this catalog) ");
    } else {
        if (first->k.tile_n != 8)
            printf("\n    %s ranks first", first->key);
        CU_ASSERT_EQUAL(first->k.tile_n, 8);
    }
    free(rows);
}

/* Depthwise 16-bit layers: a 32-channel direct block (64-byte pixel reads) ranks ahead of its 16-channel
 * twin (H200, bf16: 1.05-1.10x the time on the 16-channel block over the 52 depthwise fprop and dgrad
 * rows of networks.txt), except where the channels fill only the narrow block. */
static void test_depthwise_ranks_64_byte_channel_blocks_first(void)
{
    static const char *const pairs[][2] = {
        {"sm90a_fprop_2d_bf16_bf16_f32_bf16_8x8x32_s1_c1x1_direct", "sm90a_fprop_2d_bf16_bf16_f32_bf16_8x8x16_s1_c1x1_direct"},
        {"sm90a_dgrad_2d_bf16_bf16_f32_bf16_8x16x32_s1_c1x1_direct",
         "sm90a_dgrad_2d_bf16_bf16_f32_bf16_8x16x16_s1_c1x1_direct"},
    };
    convcat_candidate *rows = calloc(total, sizeof *rows);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rows);
    int checked = 0;
    for (size_t i = 0; i < CVC_ARRAY_LEN(pairs); ++i) {
        size_t wide, narrow;
        if (convcat_find(cat, pairs[i][0], &wide) != CONVCAT_OK || convcat_find(cat, pairs[i][1], &narrow) != CONVCAT_OK)
            continue;
        for (int c = 96; c >= 16; c -= 80) {   /* 96 channels: the wide block first; 16: the narrow one */
            convcat_problem p;
            convcat_problem_init(&p);
            p.op = cat->entries[wide].k.op;
            p.a_type = p.b_type = p.out_type = CONVCAT_BF16;
            p.n = 32, p.h = p.w = 56, p.c = p.k = p.groups = c;
            p.r = p.s = 3, p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = 1;
            size_t count, ok;
            UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_SM90A, 132, rows, total, &count, &ok), CONVCAT_OK);
            const size_t at_wide = rank_of(rows, ok, wide), at_narrow = rank_of(rows, ok, narrow);
            CU_ASSERT_TRUE(at_wide != SIZE_MAX && at_narrow != SIZE_MAX);
            if (c == 96 ? at_wide > at_narrow : at_narrow > at_wide)
                printf("\n    %d channels: %s at rank %zu, %s at %zu", c, pairs[i][0], at_wide, pairs[i][1], at_narrow);
            CU_ASSERT_TRUE(c == 96 ? at_wide < at_narrow : at_narrow < at_wide);
            ++checked;
        }
    }
    free(rows);
    printf("(%d problems) ", checked);
}

/* On 5x5 and 7x7 depthwise layers the staged direct kernels ran 1.4-2.1x faster than the unstaged
 * ones (fprop and dgrad), 1.2-2.7x (wgrad; networks.txt, H200): they rank first there; strided dgrad,
 * which they do not run, ranks an unstaged kernel first. */
static void test_depthwise_ranks_staged_kernels_first(void)
{
    size_t staged = 0;
    for (size_t e = 0; e < total; ++e)
        staged += cat->entries[e].family == CVC_FAMILY_DIRECT && cat->entries[e].k.stages > 1;
    if (!staged) {
        printf("(the catalog has no staged kernels) ");
        return;
    }
    convcat_candidate *rows = calloc(total, sizeof *rows);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rows);
    int checked = 0;
    for (int op = CONVCAT_FPROP; op <= CONVCAT_WGRAD; ++op)
        for (int f = 5; f <= 7; f += 2)
            for (int stride = 1; stride <= 2; ++stride) {
                convcat_problem p;
                convcat_problem_init(&p);
                p.op = (convcat_op)op;
                p.a_type = p.b_type = p.out_type = CONVCAT_BF16;
                p.n = 64, p.h = p.w = 56, p.c = p.k = p.groups = 96;
                p.r = p.s = f, p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = f / 2;
                p.stride[1] = p.stride[2] = stride;
                if ((op == CONVCAT_FPROP && stride > 1) || (op == CONVCAT_WGRAD && f == 7 && stride > 1))
                    continue;   /* strided fprop: the two kinds are close (0.8-1.2x); 7x7 strided wgrad: not measured */
                size_t count, ok;
                UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_SM90A, 132, rows, total, &count, &ok), CONVCAT_OK);
                CU_ASSERT_TRUE_FATAL(ok > 0);
                const cvc_entry *first = &cat->entries[rows[0].index];
                /* strided dgrad has no staged kernel; staged wgrad takes strided rows too */
                const bool want_staged = op == CONVCAT_WGRAD || stride == 1;
                if ((first->k.stages > 1) != want_staged)
                    printf("\n    %s %dx%d stride %d: %s first", op == CONVCAT_FPROP ? "fprop" : op == CONVCAT_DGRAD ? "dgrad" : "wgrad", f, f, stride, first->key);
                CU_ASSERT_EQUAL(first->k.stages > 1, want_staged);
                ++checked;
            }
    free(rows);
    printf("(%d problems) ", checked);
}

static void test_null_arguments_are_invalid(void)
{
    const convcat_problem p = problem_2d();
    convcat_candidate rows[4];
    size_t count, ok;
    UNIT_ASSERT_STATUS(convcat_query(NULL, &p, CONVCAT_ARCH_ANY, 0, rows, 4, &count, &ok),
                       CONVCAT_ERR_INVALID_ARGUMENT);
    CU_ASSERT_TRUE(convcat_last_error()[0] != '\0');
    UNIT_ASSERT_STATUS(convcat_query(cat, NULL, CONVCAT_ARCH_ANY, 0, rows, 4, &count, &ok),
                       CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, 0, rows, 4, NULL, &ok),
                       CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, 0, NULL, 4, &count, &ok),
                       CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_STATUS(convcat_query(cat, &p, CONVCAT_ARCH_ANY, 0, rows, 4, &count, &ok), CONVCAT_OK);
}

/* ---- threads ------------------------------------------------------------------------------ */

typedef struct worker {
    int id;
    int failures;
} worker;

/* Each thread queries, then fails in its own way: its last error is its own. */
static void *work(void *arg)
{
    worker *w = arg;
    convcat_problem p = problem_2d();
    char mine[64];
    snprintf(mine, sizeof mine, "no kernel 'thread %d'", w->id);
    for (int round = 0; round < 200; ++round) {
        convcat_candidate rows[MAX_ROWS];
        size_t count, ok;
        if (convcat_query(cat, &p, CONVCAT_ARCH_ANY, 0, rows, MAX_ROWS, &count, &ok) != CONVCAT_OK || ok != total_2d)
            ++w->failures;
        char key[32];
        snprintf(key, sizeof key, "thread %d", w->id);
        size_t at;
        if (convcat_find(cat, key, &at) != CONVCAT_ERR_NOT_FOUND || !strstr(convcat_last_error(), mine))
            ++w->failures;
    }
    return NULL;
}

static void test_threads_share_a_catalog_and_keep_their_own_errors(void)
{
    pthread_t t[8];
    worker w[8];
    for (int i = 0; i < 8; ++i) {
        w[i] = (worker){.id = i};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < 8; ++i) {
        pthread_join(t[i], NULL);
        CU_ASSERT_EQUAL(w[i].failures, 0);
    }
}

/* ---- plans without a driver ------------------------------------------------------------ */

/* Is a CUDA driver library on this machine?  Then cuInit may still fail (no GPU). */
static bool driver_present(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib)
        dlclose(lib);
    return lib != NULL;
}

/* Without libcuda: NO_DRIVER with the loader's reason.  With one but no GPU or context on
 * this thread: NO_DRIVER (cuInit fails) or NO_DEVICE (no current context). */
static void expect_no_driver(convcat_status st)
{
    const bool drv = driver_present();
    if (drv)
        printf("(libcuda.so.1 present) ");
    CU_ASSERT_TRUE(st == CONVCAT_ERR_NO_DRIVER || (drv && st == CONVCAT_ERR_NO_DEVICE));
    CU_ASSERT_TRUE(convcat_last_error()[0] != '\0');
    if (!drv)
        UNIT_ASSERT_MENTIONS(convcat_last_error(), "libcuda.so.1");
}

static void test_plan_without_a_driver_is_no_driver(void)
{
    const convcat_problem p = problem_2d();
    size_t index;
    convcat_entry_info e;
    convcat_entry_info_get(cat, 0, &e);
    for (index = 0; index < total; ++index)
        if (convcat_check(cat, index, &p, NULL, 0) == CONVCAT_OK)
            break;
    CU_ASSERT_FATAL(index < total);
    convcat_plan *plan = (convcat_plan *)&plan;
    expect_no_driver(convcat_plan_create(cat, &p, index, &plan));
    CU_ASSERT_PTR_NULL(plan);
    plan = (convcat_plan *)&plan;
    expect_no_driver(convcat_plan_create(cat, &p, CONVCAT_AUTO, &plan));
    CU_ASSERT_PTR_NULL(plan);
    /* The answer is cached, and stays the same on the next call. */
    expect_no_driver(convcat_plan_create(cat, &p, index, &plan));
    convcat_arch arch = CONVCAT_ARCH_SM90A;
    int sms = 99;
    expect_no_driver(convcat_device_arch(&arch, &sms));
    CU_ASSERT_EQUAL(arch, CONVCAT_ARCH_ANY);
    CU_ASSERT_EQUAL(sms, 0);
    expect_no_driver(convcat_device_arch(NULL, NULL));
}

/* A probe that fails inside a call that goes on (the plan's cluster split-K falling back to the
 * workspace) leaves convcat_last_error() as it was: it names the last failing call. */
static void test_a_handled_probe_keeps_the_last_error(void)
{
    cvc_fail(CONVCAT_ERR_UNSUPPORTED, "the caller's own failure");
    cvc_set_cuda_error(700);
    cvc_error_state before;
    cvc_error_save(&before);
    cvc_fail(CONVCAT_ERR_NO_DEVICE, "no cluster of 8 CTAs fits");
    cvc_set_cuda_error(1);
    CU_ASSERT_STRING_EQUAL(convcat_last_error(), "no cluster of 8 CTAs fits");
    cvc_error_restore(&before);
    CU_ASSERT_STRING_EQUAL(convcat_last_error(), "the caller's own failure");
    CU_ASSERT_EQUAL(convcat_last_cuda_error(), 700);
}

static void test_plan_arguments_are_checked_first(void)
{
    const convcat_problem p = problem_2d();
    convcat_plan *plan = NULL;
    UNIT_ASSERT_STATUS(convcat_plan_create(NULL, &p, 0, &plan), CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_STATUS(convcat_plan_create(cat, NULL, 0, &plan), CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_STATUS(convcat_plan_create(cat, &p, 0, NULL), CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_STATUS(convcat_plan_create(cat, &p, total, &plan), CONVCAT_ERR_INVALID_ARGUMENT);
    CU_ASSERT_TRUE(convcat_last_error()[0] != '\0');
    convcat_plan_info info;
    UNIT_ASSERT_STATUS(convcat_plan_info_get(NULL, &info), CONVCAT_ERR_INVALID_ARGUMENT);
    const convcat_tensors t = {.x = (void *)16, .w = (void *)32, .y = (void *)48, .alpha = 1.0f};
    UNIT_ASSERT_STATUS(convcat_plan_run(NULL, &t, NULL), CONVCAT_ERR_INVALID_ARGUMENT);
    CU_ASSERT_TRUE(convcat_last_error()[0] != '\0');
    convcat_plan_destroy(NULL);
    CU_ASSERT_EQUAL(convcat_last_cuda_error(), 0);   /* no driver call was ever made */
}

int main(void)
{
    CU_TestInfo tests[] = {
        {"runnable rows first, fastest first", test_runnable_rows_first_fastest_first},
        {"query is deterministic", test_query_is_deterministic},
        {"capacity smaller than the catalog", test_capacity_smaller_than_the_catalog},
        {"arch filter", test_arch_filter},
        {"a problem nothing can run", test_a_problem_nothing_can_run},
        {"ResNet-50 stem query", test_resnet_stem_query},
        {"grouped wgrad query", test_grouped_wgrad_query},
        {"any SM count", test_any_sm_count},
        {"prediction model is sane", test_prediction_model_is_sane},
        {"swap ranks ahead of its pingpong twin", test_swap_ranks_ahead_of_its_pingpong_twin},
        {"pingpong ranks behind its coop twin on short K", test_pingpong_ranks_behind_its_coop_twin_on_short_k},
        {"halo ranks first where it wins", test_halo_ranks_first_where_it_wins},
        {"TMA ranks ahead of gather where it is faster", test_tma_ranks_ahead_of_gather_where_it_is_faster},
        {"small groups rank a narrow direct block first", test_small_groups_rank_a_narrow_direct_block_first},
        {"gather ranks the resident tile first on the stem", test_gather_ranks_the_resident_tile_first_on_the_stem},
        {"stem dgrad ranks the input tile, else the narrow tile, first", test_stem_dgrad_ranks_the_narrow_tile_first},
        {"depthwise ranks 64-byte channel blocks first", test_depthwise_ranks_64_byte_channel_blocks_first},
        {"depthwise ranks staged kernels first on 5x5 and 7x7 (all ops)", test_depthwise_ranks_staged_kernels_first},
        {"NULL arguments are invalid", test_null_arguments_are_invalid},
        {"threads share a catalog and keep their own errors", test_threads_share_a_catalog_and_keep_their_own_errors},
        {"plan without a driver is NO_DRIVER", test_plan_without_a_driver_is_no_driver},
        {"plan arguments are checked first", test_plan_arguments_are_checked_first},
        {"a handled probe keeps the last error", test_a_handled_probe_keeps_the_last_error},
        CU_TEST_INFO_NULL,
    };
    return unit_main("query", tests, setup, teardown);
}
