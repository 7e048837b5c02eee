/* test_catalog_set.c: several catalogs queried as one (runtime/src/catalog_set.c), on the CPU.
 *
 * tests/meson.build packs the built catalog's kernels into two halves
 * ($CONVCAT_TEST_CATALOG_A, _B, by pack.py); a set of the halves must answer
 * every query as the whole catalog ($CONVCAT_TEST_CATALOG) does.  A key in
 * two catalogs is refused, or shadowed by the first.  Any spec's catalog of
 * two or more kernels will do; with fewer the suite skips (77).
 */
#include <math.h>

#include "internal.h"
#include "unit.h"

#define SKIP 77
#define MAX_ROWS 4096

static convcat_catalog *whole, *half_a, *half_b;

static int setup(void)
{
    const char *p = unit_env_path("CONVCAT_TEST_CATALOG"), *a = getenv("CONVCAT_TEST_CATALOG_A"),
               *b = getenv("CONVCAT_TEST_CATALOG_B");
    if (!p || !a || !b)
        return -1;
    if (convcat_open(p, &whole) != CONVCAT_OK || convcat_open(a, &half_a) != CONVCAT_OK ||
        convcat_open(b, &half_b) != CONVCAT_OK) {
        fprintf(stderr, "cannot open the test catalogs: %s\n", convcat_last_error());
        return -1;
    }
    return 0;
}

static int teardown(void)
{
    convcat_close(whole);
    convcat_close(half_a);
    convcat_close(half_b);
    return 0;
}

static convcat_catalog_set *set_of(convcat_catalog *first, convcat_catalog *second, unsigned flags)
{
    convcat_catalog_set *set = NULL;
    UNIT_ASSERT_STATUS(convcat_catalog_set_create(&set), CONVCAT_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(set);
    UNIT_ASSERT_STATUS(convcat_catalog_set_add(set, first, CONVCAT_SET_UNIQUE), CONVCAT_OK);
    if (second)
        UNIT_ASSERT_STATUS(convcat_catalog_set_add(set, second, flags), CONVCAT_OK);
    return set;
}

/* One small problem per (op, dims, types) the whole catalog has. */
static size_t problems(convcat_problem *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < whole->count && n < cap; ++i) {
        const cvc_key *k = &whole->entries[i].k;
        const convcat_problem p = unit_problem(k->op, k->dims, k->a, k->out);
        bool seen = false;
        for (size_t j = 0; j < n; ++j)
            seen |= memcmp(&out[j], &p, sizeof p) == 0;
        if (!seen)
            out[n++] = p;
    }
    return n;
}

static const char *key_of(const convcat_catalog *cat, size_t index) { return cat->entries[index].key; }

static void test_halves_answer_as_the_whole(void)
{
    convcat_catalog_set *set = set_of(half_a, half_b, CONVCAT_SET_UNIQUE);
    CU_ASSERT_EQUAL(convcat_catalog_set_size(set), 2);
    CU_ASSERT_EQUAL(convcat_catalog_set_count(set), whole->count);
    CU_ASSERT_EQUAL(half_a->count + half_b->count, whole->count);
    static convcat_problem ps[64];
    static convcat_candidate rows[MAX_ROWS];
    static convcat_set_candidate srows[MAX_ROWS];
    const size_t np = problems(ps, 64);
    CU_ASSERT_TRUE(np > 0);
    for (size_t pi = 0; pi < np; ++pi) {
        for (int arch = CONVCAT_ARCH_ANY; arch <= CONVCAT_ARCH_SM100A; ++arch) {
            size_t n = 0, ok = 0, sn = 0, sok = 0;
            UNIT_ASSERT_STATUS(convcat_query(whole, &ps[pi], (convcat_arch)arch, 0, rows, MAX_ROWS, &n, &ok),
                               CONVCAT_OK);
            UNIT_ASSERT_STATUS(convcat_query_set(set, &ps[pi], (convcat_arch)arch, 0, srows, MAX_ROWS, &sn, &sok),
                               CONVCAT_OK);
            CU_ASSERT_EQUAL(sn, n);
            CU_ASSERT_EQUAL(sok, ok);
            for (size_t i = 0; i < sn; ++i) {
                const convcat_set_candidate *s = &srows[i];
                CU_ASSERT_TRUE(s->catalog == convcat_catalog_set_at(set, s->position));
                CU_ASSERT_EQUAL(s->candidate.ok, i < sok);
                if (i > 0 && i < sok)   /* fastest first */
                    CU_ASSERT_TRUE(srows[i - 1].candidate.predicted_us <= s->candidate.predicted_us);
                /* The whole catalog's row of the same key says the same. */
                size_t w;
                UNIT_ASSERT_STATUS(convcat_find(whole, key_of(s->catalog, s->candidate.index), &w), CONVCAT_OK);
                for (size_t j = 0; j < n; ++j)
                    if (rows[j].index == w) {
                        CU_ASSERT_EQUAL(rows[j].ok, s->candidate.ok);
                        CU_ASSERT_DOUBLE_EQUAL(rows[j].predicted_us, s->candidate.predicted_us, 1e-9);
                        CU_ASSERT_STRING_EQUAL(rows[j].reason, s->candidate.reason);
                    }
            }
            /* A short buffer takes the best rows; the counts stay whole. */
            size_t sn1 = 0, sok1 = 0;
            UNIT_ASSERT_STATUS(convcat_query_set(set, &ps[pi], (convcat_arch)arch, 0, srows, 1, &sn1, &sok1),
                               CONVCAT_OK);
            CU_ASSERT_EQUAL(sn1, n ? 1 : 0);
            CU_ASSERT_EQUAL(sok1, ok);
        }
    }
    convcat_catalog_set_destroy(set);
}

static void test_a_duplicate_key_is_refused(void)
{
    convcat_catalog_set *set = set_of(half_a, NULL, 0);
    UNIT_ASSERT_STATUS(convcat_catalog_set_add(set, whole, CONVCAT_SET_UNIQUE), CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_MENTIONS(convcat_last_error(), half_a->entries[0].key);
    UNIT_ASSERT_MENTIONS(convcat_last_error(), "CONVCAT_SET_SHADOW");
    CU_ASSERT_EQUAL(convcat_catalog_set_size(set), 1);   /* unchanged */
    CU_ASSERT_EQUAL(convcat_catalog_set_count(set), half_a->count);
    /* The same catalog twice, whatever the flags. */
    UNIT_ASSERT_STATUS(convcat_catalog_set_add(set, half_a, CONVCAT_SET_SHADOW), CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_MENTIONS(convcat_last_error(), "already in the set");
    UNIT_ASSERT_STATUS(convcat_catalog_set_add(set, half_b, 2u), CONVCAT_ERR_INVALID_ARGUMENT);
    convcat_catalog_set_destroy(set);
}

static void test_shadowed_keys_belong_to_the_first_catalog(void)
{
    convcat_catalog_set *set = set_of(half_a, whole, CONVCAT_SET_SHADOW);
    CU_ASSERT_EQUAL(convcat_catalog_set_size(set), 2);
    CU_ASSERT_EQUAL(convcat_catalog_set_count(set), whole->count);
    const convcat_catalog *cat = NULL;
    size_t index;
    UNIT_ASSERT_STATUS(convcat_catalog_set_find(set, half_a->entries[0].key, &cat, &index), CONVCAT_OK);
    CU_ASSERT_PTR_EQUAL(cat, half_a);
    CU_ASSERT_STRING_EQUAL(key_of(cat, index), half_a->entries[0].key);
    UNIT_ASSERT_STATUS(convcat_catalog_set_find(set, half_b->entries[0].key, &cat, &index), CONVCAT_OK);
    CU_ASSERT_PTR_EQUAL(cat, whole);
    UNIT_ASSERT_STATUS(convcat_catalog_set_find(set, "sm90a_no_such_key", &cat, &index), CONVCAT_ERR_NOT_FOUND);
    UNIT_ASSERT_MENTIONS(convcat_last_error(), "sm90a_no_such_key");
    /* Every shadowed row of a query says so and names its owner; the runnable ones are the whole's. */
    static convcat_problem ps[64];
    static convcat_candidate rows[MAX_ROWS];
    static convcat_set_candidate srows[MAX_ROWS];
    const size_t np = problems(ps, 64);
    for (size_t pi = 0; pi < np; ++pi) {
        size_t n = 0, ok = 0, sn = 0, sok = 0, shadowed = 0;
        UNIT_ASSERT_STATUS(convcat_query(whole, &ps[pi], CONVCAT_ARCH_ANY, 0, rows, MAX_ROWS, &n, &ok), CONVCAT_OK);
        UNIT_ASSERT_STATUS(convcat_query_set(set, &ps[pi], CONVCAT_ARCH_ANY, 0, srows, MAX_ROWS, &sn, &sok),
                           CONVCAT_OK);
        CU_ASSERT_EQUAL(sn, n + half_a->count);
        CU_ASSERT_EQUAL(sok, ok);
        for (size_t i = 0; i < sn; ++i)
            if (strstr(srows[i].candidate.reason, "shadowed")) {
                ++shadowed;
                CU_ASSERT_PTR_EQUAL(srows[i].catalog, whole);
                CU_ASSERT_FALSE(srows[i].candidate.ok);
                UNIT_ASSERT_MENTIONS(srows[i].candidate.reason, "catalog 0");
            }
        CU_ASSERT_EQUAL(shadowed, half_a->count);
    }
    convcat_catalog_set_destroy(set);
}

static void test_errors_of_the_set_calls(void)
{
    UNIT_ASSERT_STATUS(convcat_catalog_set_create(NULL), CONVCAT_ERR_INVALID_ARGUMENT);
    convcat_catalog_set *set = set_of(half_a, NULL, 0);
    UNIT_ASSERT_STATUS(convcat_catalog_set_add(set, NULL, 0), CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_STATUS(convcat_catalog_set_add(NULL, half_b, 0), CONVCAT_ERR_INVALID_ARGUMENT);
    CU_ASSERT_PTR_NULL(convcat_catalog_set_at(set, 1));
    CU_ASSERT_PTR_NULL(convcat_catalog_set_at(NULL, 0));
    CU_ASSERT_EQUAL(convcat_catalog_set_size(NULL), 0);
    CU_ASSERT_EQUAL(convcat_catalog_set_count(NULL), 0);
    size_t index, n;
    UNIT_ASSERT_STATUS(convcat_catalog_set_find(set, NULL, NULL, &index), CONVCAT_ERR_INVALID_ARGUMENT);
    convcat_problem p;
    convcat_problem_init(&p);
    UNIT_ASSERT_STATUS(convcat_query_set(set, &p, CONVCAT_ARCH_ANY, 0, NULL, 1, &n, NULL),
                       CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_STATUS(convcat_query_set(set, &p, (convcat_arch)7, 0, NULL, 0, &n, NULL),
                       CONVCAT_ERR_INVALID_ARGUMENT);
    /* Without a GPU a set's plan says why, as convcat_plan_create does. */
    convcat_plan *plan = (convcat_plan *)&p;
    const convcat_status st = convcat_plan_create_set(set, &p, &plan, NULL, NULL);
    CU_ASSERT_TRUE(st == CONVCAT_ERR_NO_DRIVER || st == CONVCAT_ERR_NO_DEVICE);
    CU_ASSERT_PTR_NULL(plan);
    CU_ASSERT_TRUE(strlen(convcat_last_error()) > 0);
    UNIT_ASSERT_STATUS(convcat_plan_create_set(NULL, &p, &plan, NULL, NULL), CONVCAT_ERR_INVALID_ARGUMENT);
    convcat_catalog_set_destroy(set);
    convcat_catalog_set_destroy(NULL);
}

int main(void)
{
    if (!getenv("CONVCAT_TEST_CATALOG_A") || !getenv("CONVCAT_TEST_CATALOG_B")) {
        printf("catalog_set: SKIP: the catalog has fewer than two kernels, so no halves were packed\n");
        return SKIP;
    }
    CU_TestInfo tests[] = {
        {"halves answer as the whole", test_halves_answer_as_the_whole},
        {"a duplicate key is refused", test_a_duplicate_key_is_refused},
        {"shadowed keys belong to the first catalog", test_shadowed_keys_belong_to_the_first_catalog},
        {"errors of the set calls", test_errors_of_the_set_calls},
        CU_TEST_INFO_NULL,
    };
    return unit_main("catalog_set", tests, setup, teardown);
}
