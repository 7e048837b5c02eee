/* test_tune.c: the autotune cache file (runtime/src/tune.c) on the CPU.
 *
 * Winners put into a cache come back after a save and a load; a missing file
 * is an empty cache; a damaged file is ignored whole, with a warning naming
 * the line, and never fails the call; autotuning without a driver says so.
 * Saves are safe from many threads at once and never write through a
 * planted link; times keep full precision; a large file loads in linear time.
 * (Timing itself needs a GPU: the GPU suite covers it.)
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "tune_internal.h"
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

/* ---- saves from many threads, precision, planted links, large files ------ */

#define SAVERS 8
#define SAVES 80

typedef struct saver {
    convcat_tune_cache *cache;
    int failed_saves, torn_loads;
} saver;

/* Save the shared cache SAVES times, loading the file between saves: every save must succeed
 * and every load must read a whole file (at least the 2 first rows, no warning), never a torn one. */
static void *save_often(void *arg)
{
    saver *s = arg;
    for (int i = 0; i < SAVES; ++i) {
        if (convcat_tune_cache_save(s->cache, path) != CONVCAT_OK)
            ++s->failed_saves;
        convcat_tune_cache *c = NULL;
        char warning[256];
        if (convcat_tune_cache_load(path, &c, warning, sizeof warning) != CONVCAT_OK ||
            convcat_tune_cache_count(c) < 2 || warning[0])
            ++s->torn_loads;
        convcat_tune_cache_free(c);
    }
    return NULL;
}

/* A thread that reads the count while others put rows (a data race for TSan and helgrind if the
 * count is read without the lock). */
static atomic_int puts_done;

static void *count_often(void *arg)
{
    size_t seen = 0;
    do   /* at least once, however late this thread starts */
        seen += convcat_tune_cache_count(arg);
    while (!atomic_load(&puts_done));
    return seen ? NULL : arg;
}

static void test_saves_from_many_threads_to_one_path(void)
{
    convcat_tune_cache *c;
    UNIT_ASSERT_STATUS(convcat_tune_cache_load(path, &c, NULL, 0), CONVCAT_OK);
    convcat_tune_cache_free(c);
    unlink(path);
    UNIT_ASSERT_STATUS(convcat_tune_cache_load(path, &c, NULL, 0), CONVCAT_OK);
    const convcat_problem p1 = problem(1), p2 = problem(2);
    UNIT_ASSERT_STATUS(cvc_tune_cache_put(c, 1, CONVCAT_ARCH_SM90A, &p1, KEY_A, 0.125), CONVCAT_OK);
    UNIT_ASSERT_STATUS(cvc_tune_cache_put(c, 1, CONVCAT_ARCH_SM90A, &p2, KEY_B, 0.5), CONVCAT_OK);
    pthread_t t[SAVERS + 1];
    saver s[SAVERS];
    for (int i = 0; i < SAVERS; ++i) {
        s[i] = (saver){.cache = c};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, save_often, &s[i]), 0);
    }
    atomic_store(&puts_done, 0);
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t[SAVERS], NULL, count_often, c), 0);
    for (int i = 0; i < 200; ++i) {   /* new rows while the savers and the counter run */
        const convcat_problem p = problem(i + 3);
        UNIT_ASSERT_STATUS(cvc_tune_cache_put(c, 1, CONVCAT_ARCH_SM90A, &p, i % 2 ? KEY_B : KEY_A, 0.5),
                           CONVCAT_OK);
    }
    atomic_store(&puts_done, 1);
    CU_ASSERT_EQUAL(convcat_tune_cache_count(c), 202);
    int failed = 0, torn = 0;
    for (int i = 0; i < SAVERS; ++i) {
        pthread_join(t[i], NULL);
        failed += s[i].failed_saves;
        torn += s[i].torn_loads;
    }
    void *counter = NULL;
    pthread_join(t[SAVERS], &counter);
    CU_ASSERT_PTR_NULL(counter);
    if (failed || torn)
        printf("\n    %d of %d saves failed, %d loads read a torn file", failed, SAVERS * SAVES, torn);
    CU_ASSERT_EQUAL(failed, 0);
    CU_ASSERT_EQUAL(torn, 0);
    /* No temporary file is left beside the cache. */
    DIR *d = opendir(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    int others = 0;
    for (struct dirent *de; (de = readdir(d));)
        others += strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, "tune.cache");
    closedir(d);
    CU_ASSERT_EQUAL(others, 0);
    convcat_tune_cache_free(c);
}

static void test_times_keep_full_precision(void)
{
    static const double times[] = {1e-7, 0.1, 1.0 / 3.0, 123456.789012345, 5e-300};
    convcat_tune_cache *c;
    unlink(path);
    UNIT_ASSERT_STATUS(convcat_tune_cache_load(path, &c, NULL, 0), CONVCAT_OK);
    for (size_t i = 0; i < CVC_ARRAY_LEN(times); ++i) {
        const convcat_problem p = problem((int)i + 1);
        UNIT_ASSERT_STATUS(cvc_tune_cache_put(c, 7, CONVCAT_ARCH_SM90A, &p, KEY_A, times[i]), CONVCAT_OK);
    }
    UNIT_ASSERT_STATUS(convcat_tune_cache_save(c, path), CONVCAT_OK);
    convcat_tune_cache_free(c);
    char warning[256];
    UNIT_ASSERT_STATUS(convcat_tune_cache_load(path, &c, warning, sizeof warning), CONVCAT_OK);
    CU_ASSERT_STRING_EQUAL(warning, "");
    CU_ASSERT_EQUAL(convcat_tune_cache_count(c), CVC_ARRAY_LEN(times));
    for (size_t i = 0; i < CVC_ARRAY_LEN(times); ++i) {
        const convcat_problem p = problem((int)i + 1);
        char key[CVC_KEY_BYTES];
        double ms = 0;
        CU_ASSERT_TRUE(cvc_tune_cache_get(c, 7, CONVCAT_ARCH_SM90A, &p, key, sizeof key, &ms));
        CU_ASSERT_EQUAL(ms, times[i]);   /* bit for bit */
    }
    convcat_tune_cache_free(c);
}

/* Links planted where a save could put its temporary file (the name of this process, with and
 * without a sequence number) must not be followed: the file they point at stays as it was. */
static void test_saves_never_follow_a_planted_link(void)
{
    char victim[300], link_path[400];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *f = fopen(victim, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("precious\n", f);
    fclose(f);
    enum { PLANTED = 64 };
    snprintf(link_path, sizeof link_path, "%s.tmp.%ld", path, (long)getpid());
    CU_ASSERT_EQUAL(symlink(victim, link_path), 0);
    for (int i = 0; i < PLANTED; ++i) {
        snprintf(link_path, sizeof link_path, "%s.tmp.%ld.%d", path, (long)getpid(), i);
        CU_ASSERT_EQUAL(symlink(victim, link_path), 0);
    }
    convcat_tune_cache *c;
    unlink(path);
    UNIT_ASSERT_STATUS(convcat_tune_cache_load(path, &c, NULL, 0), CONVCAT_OK);
    const convcat_problem p = problem(1);
    UNIT_ASSERT_STATUS(cvc_tune_cache_put(c, 1, CONVCAT_ARCH_SM90A, &p, KEY_A, 0.5), CONVCAT_OK);
    for (int i = 0; i < 3; ++i) {
        const convcat_status st = convcat_tune_cache_save(c, path);
        CU_ASSERT_TRUE(st == CONVCAT_OK || st == CONVCAT_ERR_IO);
    }
    convcat_tune_cache_free(c);
    size_t size = 0;
    uint8_t *text = unit_read_file(victim, &size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_STRING_EQUAL((char *)text, "precious\n");
    free(text);
    struct stat sb;
    if (lstat(path, &sb) == 0)
        CU_ASSERT_TRUE(S_ISREG(sb.st_mode));
    snprintf(link_path, sizeof link_path, "%s.tmp.%ld", path, (long)getpid());
    unlink(link_path);
    for (int i = 0; i < PLANTED; ++i) {
        snprintf(link_path, sizeof link_path, "%s.tmp.%ld.%d", path, (long)getpid(), i);
        unlink(link_path);
    }
    unlink(victim);
}

/* 40,000 rows load in linear time (a row lookup per line over every earlier row took seconds). */
static void test_a_large_file_loads_in_linear_time(void)
{
    enum { ROWS = 40000 };
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("# convcat autotune cache 2\n", f);
    for (int i = 0; i < ROWS; ++i)
        fprintf(f, "1234abcd sm90a 132 NVIDIA%%20H200 " KEY_A " 0.5 fprop/2d/bf16.bf16.bf16/n%d.d1.h28.w28.c64/"
                "k64.t1.r3.s3/pad0.1.1-0.1.1/str1.1.1/dil1.1.1/g1/xcorr\n", i + 1);
    fclose(f);
    struct timespec t0, t1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    convcat_tune_cache *c;
    char warning[256];
    UNIT_ASSERT_STATUS(convcat_tune_cache_load(path, &c, warning, sizeof warning), CONVCAT_OK);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    CU_ASSERT_STRING_EQUAL(warning, "");
    CU_ASSERT_EQUAL(convcat_tune_cache_count(c), ROWS);
    const double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (s >= 1.0)
        printf("\n    loading %d rows took %.2f s of CPU", ROWS, s);
    CU_ASSERT_TRUE(s < 1.0);   /* linear: ~0.05 s; the quadratic loader took ~4 s */
    /* Each row is found, the last as the first. */
    const convcat_problem last = problem(ROWS);
    char key[CVC_KEY_BYTES];
    double ms;
    CU_ASSERT_TRUE(cvc_tune_cache_get_device(c, 0x1234abcd, CONVCAT_ARCH_SM90A, "NVIDIA H200", 132, &last, key,
                                             sizeof key, &ms));
    convcat_tune_cache_free(c);
    unlink(path);
}

/* A FIFO as the cache file: ignored with a warning at once, never waiting for a writer. */
static void test_a_fifo_is_ignored_without_waiting(void)
{
    char fifo[300];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    convcat_tune_cache *c = NULL;
    char warning[256] = "";
    alarm(20);   /* a hang fails the test instead of the suite's timeout */
    UNIT_ASSERT_STATUS(convcat_tune_cache_load(fifo, &c, warning, sizeof warning), CONVCAT_OK);
    alarm(0);
    UNIT_ASSERT_MENTIONS(warning, "not a regular file");
    CU_ASSERT_EQUAL(convcat_tune_cache_count(c), 0);
    convcat_tune_cache_free(c);
    unlink(fifo);
}

int main(void)
{
    CU_TestInfo tests[] = {
        {"missing file is an empty cache", test_missing_file_is_an_empty_cache},
        {"winners survive save and load", test_winners_survive_save_and_load},
        {"damaged files are ignored with a warning", test_damaged_files_are_ignored_with_a_warning},
        {"errors of the cache calls", test_errors_of_the_cache_calls},
        {"autotune without a driver says so", test_autotune_without_a_driver_says_so},
        {"saves from many threads to one path", test_saves_from_many_threads_to_one_path},
        {"times keep full precision", test_times_keep_full_precision},
        {"saves never follow a planted link", test_saves_never_follow_a_planted_link},
        {"a large file loads in linear time", test_a_large_file_loads_in_linear_time},
        {"a FIFO is ignored without waiting", test_a_fifo_is_ignored_without_waiting},
        CU_TEST_INFO_NULL,
    };
    return unit_main("tune", tests, setup, teardown);
}
