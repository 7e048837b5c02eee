/* test_tune.c: the autotune cache file (runtime/src/tune.c) on the CPU.
 *
 * Winners put into a cache come back after a save and a load; a missing file
 * is an empty cache; a damaged file is ignored whole, with a warning naming
 * the line, and never fails the call; autotuning without a driver says so.
 * (Timing itself needs a GPU: the GPU suite covers it.)
 */
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "unit.h"

#define KEY_A "sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop"
#define KEY_B "sm90a_fprop_3d_f16_f16_f32_f16_256x128x64_s3_c2x1_pingpong"

static char dir[] = "/tmp/convcat-test-tune-XXXXXX";
static char path[256];

static int setup(void)
{
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/tune.cache", dir);
    return 0;
}

static int teardown(void)
{
    unlink(path);
    rmdir(dir);
    return 0;
}

static convcat_problem problem(int n)
{
    convcat_problem p;
    convcat_problem_init(&p);
    p.n = n, p.h = 28, p.w = 28, p.c = 64, p.k = 64, p.r = p.s = 3;
    p.pad_lo[1] = p.pad_lo[2] = p.pad_hi[1] = p.pad_hi[2] = 1;
    return p;
}

static void write_text(const char *text)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

/* Load `path`, expecting an empty cache and a warning mentioning `says` ("" for none). */
static void expect_load(size_t count, const char *says)
{
    convcat_tune_cache *c = NULL;
    char warning[256] = "unset";
    UNIT_ASSERT_STATUS(convcat_tune_cache_load(path, &c, warning, sizeof warning), CONVCAT_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(convcat_tune_cache_count(c), count);
    if (*says)
        UNIT_ASSERT_MENTIONS(warning, says);
    else
        CU_ASSERT_STRING_EQUAL(warning, "");
    convcat_tune_cache_free(c);
}

static void test_missing_file_is_an_empty_cache(void)
{
    unlink(path);
    expect_load(0, "");
}

static void test_winners_survive_save_and_load(void)
{
    convcat_tune_cache *c;
    UNIT_ASSERT_STATUS(convcat_tune_cache_load(path, &c, NULL, 0), CONVCAT_OK);
    const convcat_problem p1 = problem(1), p2 = problem(2);
    UNIT_ASSERT_STATUS(cvc_tune_cache_put(c, 0x1234abcd, CONVCAT_ARCH_SM90A, &p1, KEY_A, 0.125), CONVCAT_OK);
    UNIT_ASSERT_STATUS(cvc_tune_cache_put(c, 0x1234abcd, CONVCAT_ARCH_SM90A, &p2, KEY_B, 0.5), CONVCAT_OK);
    /* The same problem again replaces its row. */
    UNIT_ASSERT_STATUS(cvc_tune_cache_put(c, 0x1234abcd, CONVCAT_ARCH_SM90A, &p2, KEY_A, 0.25), CONVCAT_OK);
    CU_ASSERT_EQUAL(convcat_tune_cache_count(c), 2);
    UNIT_ASSERT_STATUS(convcat_tune_cache_save(c, path), CONVCAT_OK);
    convcat_tune_cache_free(c);

    char warning[256];
    UNIT_ASSERT_STATUS(convcat_tune_cache_load(path, &c, warning, sizeof warning), CONVCAT_OK);
    CU_ASSERT_STRING_EQUAL(warning, "");
    CU_ASSERT_EQUAL(convcat_tune_cache_count(c), 2);
    char key[CVC_KEY_BYTES];
    double ms = 0;
    CU_ASSERT_TRUE(cvc_tune_cache_get(c, 0x1234abcd, CONVCAT_ARCH_SM90A, &p1, key, sizeof key, &ms));
    CU_ASSERT_STRING_EQUAL(key, KEY_A);
    CU_ASSERT_DOUBLE_EQUAL(ms, 0.125, 1e-9);
    CU_ASSERT_TRUE(cvc_tune_cache_get(c, 0x1234abcd, CONVCAT_ARCH_SM90A, &p2, key, sizeof key, &ms));
    CU_ASSERT_STRING_EQUAL(key, KEY_A);
    CU_ASSERT_DOUBLE_EQUAL(ms, 0.25, 1e-9);
    /* Another catalog, another arch, another problem: no answer. */
    CU_ASSERT_FALSE(cvc_tune_cache_get(c, 0x1234abce, CONVCAT_ARCH_SM90A, &p1, key, sizeof key, &ms));
    CU_ASSERT_FALSE(cvc_tune_cache_get(c, 0x1234abcd, CONVCAT_ARCH_SM100A, &p1, key, sizeof key, &ms));
    const convcat_problem p3 = problem(3);
    CU_ASSERT_FALSE(cvc_tune_cache_get(c, 0x1234abcd, CONVCAT_ARCH_SM90A, &p3, key, sizeof key, &ms));
    convcat_problem p1s = p1;
    p1s.stride[2] = 2;   /* every field is part of the problem */
    CU_ASSERT_FALSE(cvc_tune_cache_get(c, 0x1234abcd, CONVCAT_ARCH_SM90A, &p1s, key, sizeof key, &ms));
    convcat_tune_cache_free(c);
}

static void test_damaged_files_are_ignored_with_a_warning(void)
{
    static const struct { const char *text, *says; } cases[] = {
        {"", "empty"},
        {"# some other file\n", "line 1"},
        {"# convcat autotune cache 1", "unterminated"},
        {"# convcat autotune cache 1\n1234abcd sm90a " KEY_A " 0.1\n", "line 2"},
        {"# convcat autotune cache 1\n1234abcd sm80 " KEY_A " 0.1 fprop/2d\n", "unknown arch 'sm80'"},
        {"# convcat autotune cache 1\n1234abcd sm90a not_a_key 0.1 fprop/2d\n", "line 2"},
        {"# convcat autotune cache 1\n1234abcd sm90a " KEY_A " -1 fprop/2d\n", "not a positive number"},
        {"# convcat autotune cache 1\n1234abcd sm90a " KEY_A " nan fprop/2d\n", "not a positive number"},
        {"# convcat autotune cache 1\n1234abcd sm90a " KEY_A " 0.1 fprop/2d extra\n", "line 2"},
        {"# convcat autotune cache 1\n1234abcd sm90a " KEY_A " 0.1 fprop/2d\ngarbage\n", "line 3"},
    };
    for (size_t i = 0; i < CVC_ARRAY_LEN(cases); ++i) {
        write_text(cases[i].text);
        expect_load(0, cases[i].says);
    }
    /* A line longer than the reader's buffer. */
    char big[2048];
    memset(big, 'x', sizeof big - 2);
    memcpy(big, "# convcat autotune cache 1\n", 27);
    big[sizeof big - 2] = '\n';
    big[sizeof big - 1] = '\0';
    write_text(big);
    expect_load(0, "too long");
    /* Neighbour: a well-formed one-line cache loads. */
    write_text("# convcat autotune cache 1\n1234abcd sm90a " KEY_A " 0.1 fprop/2d\n");
    expect_load(1, "");
}

static void test_errors_of_the_cache_calls(void)
{
    convcat_tune_cache *c = NULL;
    UNIT_ASSERT_STATUS(convcat_tune_cache_load(NULL, &c, NULL, 0), CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_STATUS(convcat_tune_cache_load(path, NULL, NULL, 0), CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_STATUS(convcat_tune_cache_save(NULL, path), CONVCAT_ERR_INVALID_ARGUMENT);
    unlink(path);
    UNIT_ASSERT_STATUS(convcat_tune_cache_load(path, &c, NULL, 0), CONVCAT_OK);
    UNIT_ASSERT_STATUS(convcat_tune_cache_save(c, "/nonexistent-dir/tune.cache"), CONVCAT_ERR_IO);
    CU_ASSERT_TRUE(strlen(convcat_last_error()) > 0);
    CU_ASSERT_EQUAL(convcat_tune_cache_count(NULL), 0);
    convcat_tune_cache_free(c);
    convcat_tune_cache_free(NULL);
}

static void test_autotune_without_a_driver_says_so(void)
{
    const char *cat_path = unit_env_path("CONVCAT_TEST_CATALOG");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cat_path);
    convcat_catalog *cat;
    UNIT_ASSERT_STATUS(convcat_open(cat_path, &cat), CONVCAT_OK);
    const convcat_problem p = problem(1);
    convcat_tensors t = {.alpha = 1.0f};
    size_t index;
    UNIT_ASSERT_STATUS(convcat_autotune(cat, &p, &t, NULL, 0, NULL, &index, NULL), CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_STATUS(convcat_autotune(cat, &p, NULL, NULL, 5, NULL, &index, NULL), CONVCAT_ERR_INVALID_ARGUMENT);
    const convcat_status st = convcat_autotune(cat, &p, &t, NULL, 5, NULL, &index, NULL);
    /* On a machine with a driver but no context, NO_DEVICE; without one, NO_DRIVER. */
    CU_ASSERT_TRUE(st == CONVCAT_ERR_NO_DRIVER || st == CONVCAT_ERR_NO_DEVICE);
    CU_ASSERT_TRUE(strlen(convcat_last_error()) > 0);
    convcat_close(cat);
}

int main(void)
{
    CU_TestInfo tests[] = {
        {"missing file is an empty cache", test_missing_file_is_an_empty_cache},
        {"winners survive save and load", test_winners_survive_save_and_load},
        {"damaged files are ignored with a warning", test_damaged_files_are_ignored_with_a_warning},
        {"errors of the cache calls", test_errors_of_the_cache_calls},
        {"autotune without a driver says so", test_autotune_without_a_driver_says_so},
        CU_TEST_INFO_NULL,
    };
    return unit_main("tune", tests, setup, teardown);
}
