/* unit.h: what the CPU unit suites share.
 *
 * One CUnit executable per runtime module; each main() is
 *
 *     return unit_main("name", tests, setup, teardown);
 *
 * unit_main runs the tests and turns CUnit's failure counters into the exit
 * status (CU_basic_run_tests returns CUE_SUCCESS even when tests fail, and
 * the counters are gone after CU_cleanup_registry): 0 all passed, 1 a test
 * failed, 99 the setup failed (meson reports 99 as an error, not a failure).
 */
#ifndef CONVCAT_TESTS_UNIT_H
#define CONVCAT_TESTS_UNIT_H

#include <CUnit/Basic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convcat.h"

#define UNIT_SETUP_FAILED 99

/* CU_ASSERT on a status, printing both names when they differ. */
#define UNIT_ASSERT_STATUS(got, want)                                                            \
    do {                                                                                         \
        const int unit_got_ = (int)(got), unit_want_ = (int)(want);                              \
        if (unit_got_ != unit_want_)                                                             \
            printf("\n    %s:%d: status %d (%s), wanted %d (%s): %s", __FILE__, __LINE__,        \
                   unit_got_, convcat_status_string((convcat_status)unit_got_), unit_want_,     \
                   convcat_status_string((convcat_status)unit_want_), convcat_last_error());     \
        CU_ASSERT_EQUAL(unit_got_, unit_want_);                                                  \
    } while (0)

/* CU_ASSERT that `text` contains `part`, printing `text` when it does not. */
#define UNIT_ASSERT_MENTIONS(text, part)                                                         \
    do {                                                                                         \
        const char *unit_text_ = (text);                                                         \
        const bool unit_ok_ = unit_text_ && strstr(unit_text_, (part)) != NULL;                  \
        if (!unit_ok_)                                                                           \
            printf("\n    %s:%d: \"%s\" does not mention \"%s\"", __FILE__, __LINE__,             \
                   unit_text_ ? unit_text_ : "(null)", (part));                                  \
        CU_ASSERT_TRUE(unit_ok_);                                                                \
    } while (0)

/* A path from the environment (set by tests/meson.build), or NULL with a message. */
static inline const char *unit_env_path(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v) {
        fprintf(stderr, "%s is not set: run the unit tests with `meson test`\n", name);
        return NULL;
    }
    return v;
}

/* A whole file in malloc'd memory (NUL-terminated, `*size` excludes the NUL), or NULL. */
static inline uint8_t *unit_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return NULL;
    }
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = (n + 4096 + 1) * 2;
            uint8_t *grown = realloc(buf, cap);
            if (!grown) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = grown;
        }
        const size_t got = fread(buf + n, 1, 4096, f);
        n += got;
        if (got < 4096)
            break;
    }
    const bool failed = ferror(f);
    fclose(f);
    if (failed) {
        fprintf(stderr, "cannot read %s\n", path);
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *size = n;
    return buf;
}

/* Run `tests` as one suite; the exit status of the executable. */
static inline int unit_main(const char *suite, CU_TestInfo *tests, CU_InitializeFunc setup,
                            CU_CleanupFunc teardown)
{
    CU_SuiteInfo suites[] = {{suite, setup, teardown, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
    if (CU_initialize_registry() != CUE_SUCCESS) {
        fprintf(stderr, "%s: cannot initialise CUnit: %s\n", suite, CU_get_error_msg());
        return UNIT_SETUP_FAILED;
    }
    if (CU_register_suites(suites) != CUE_SUCCESS) {
        fprintf(stderr, "%s: cannot register the tests: %s\n", suite, CU_get_error_msg());
        CU_cleanup_registry();
        return UNIT_SETUP_FAILED;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    const CU_ErrorCode run = CU_basic_run_tests();
    /* Read the counters now: CU_cleanup_registry resets them. */
    const unsigned suites_failed = CU_get_number_of_suites_failed();
    const unsigned tests_run = CU_get_number_of_tests_run();
    const unsigned tests_failed = CU_get_number_of_tests_failed();
    const unsigned failures = CU_get_number_of_failures();
    const unsigned asserts = CU_get_number_of_asserts();
    CU_cleanup_registry();
    printf("\n%s: %u tests, %u asserts, %u tests failed, %u assert failures\n", suite, tests_run, asserts,
           tests_failed, failures);
    if (run != CUE_SUCCESS || suites_failed) {
        fprintf(stderr, "%s: the suite could not run (setup failed)\n", suite);
        return UNIT_SETUP_FAILED;
    }
    return tests_failed || failures || tests_run == 0 ? 1 : 0;
}

#ifdef CONVCAT_INTERNAL_H
/* The index entry of `key` from the test index ($CONVCAT_UNIT_INDEX: a catalog that
 * catalog/pack.py --keys-from made of every valid key literal in tests/test_*.c, fields as the
 * generator derives them, no code), so any kernel of the space can be tested, not only those
 * of the built catalog.  A key the generator rejects is not in it: the test fails. */
static inline cvc_entry unit_entry(const char *key)
{
    static convcat_catalog *index;
    cvc_entry e;
    memset(&e, 0, sizeof e);
    if (!index) {
        const char *path = unit_env_path("CONVCAT_UNIT_INDEX");
        if (!path || convcat_open(path, &index) != CONVCAT_OK) {
            printf("\n    cannot open the test index: %s", convcat_last_error());
            CU_FAIL_FATAL("no test index");
        }
    }
    size_t i;
    if (convcat_find(index, key, &i) != CONVCAT_OK) {
        printf("\n    %s is not in the test index (not a valid kernel?)", key);
        CU_FAIL_FATAL("key not in the test index");
    }
    e = index->entries[i];
    e.code = NULL, e.code_size = 0;
    return e;
}

/* The view of a problem (a ring of views, so that a few can be alive at once); the problem
 * must be valid. */
static inline const cvc_view *unit_view(const convcat_problem *p)
{
    static cvc_view ring[16];
    static unsigned next;
    cvc_view *v = &ring[next++ % 16];
    char why[192];
    if (cvc_view_make(p, v, why, sizeof why) != CONVCAT_OK) {
        printf("\n    invalid test problem: %s", why);
        CU_FAIL("invalid test problem");
    }
    return v;
}

/* cvc_check_entry on a problem, refused with the view's reason where the problem itself is invalid. */
static inline convcat_status unit_check(const cvc_entry *e, const convcat_problem *p, char *why, size_t n)
{
    cvc_view v;
    const convcat_status st = cvc_view_make(p, &v, why, n);
    return st != CONVCAT_OK ? st : cvc_check_entry(e, &v, why, n, NULL);
}

/* A small padded 3x3(x3) problem of `dims` dimensions: N 2, C = K = 64, 16 (x 16 (x 8)) pixels. */
static inline convcat_problem unit_problem(convcat_op op, int dims, convcat_dtype ab, convcat_dtype out)
{
    convcat_problem p;
    convcat_problem_init(&p);
    p.op = op;
    p.dims = dims;
    p.a_type = p.b_type = ab;
    p.out_type = out;
    p.n = 2, p.c = 64, p.k = 64;
    p.w = 16, p.s = 3, p.pad_lo[2] = p.pad_hi[2] = 1;
    if (dims >= 2)
        p.h = 16, p.r = 3, p.pad_lo[1] = p.pad_hi[1] = 1;
    if (dims >= 3)
        p.d = 8, p.t = 3, p.pad_lo[0] = p.pad_hi[0] = 1;
    return p;
}

/* An fprop entry's operands (cvc_tma_operands): A im2col, B tiled. */
static inline void unit_fprop_descs(const cvc_entry *e, const convcat_problem *p, cvc_im2col_desc *a,
                                    cvc_tiled_desc *b)
{
    cvc_operand_desc da, db;
    cvc_tma_operands(e, unit_view(p), &da, &db);
    CU_ASSERT_TRUE(da.im2col);
    CU_ASSERT_FALSE(db.im2col);
    *a = da.i;
    *b = db.t;
}
#endif

#endif
