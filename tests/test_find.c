/* test_find.c: autotuning with every candidate's result (runtime/src/tune.c), on the CPU.
 *
 * The tuning loop runs through a table of plan/time/destroy functions; here
 * a fake one stands for the GPU, so the rules can be checked without one:
 * a workspace larger than the caller's skips a candidate with that reason
 * and never stops the others; so does a device that cannot run it; a failed
 * timing is recorded; the timed come first, fastest first; top_k times only
 * the model's best.  Then the device-keyed cache, and the public calls'
 * answers without a driver.  The problems come from whatever the catalog
 * ($CONVCAT_TEST_CATALOG) holds; a catalog with no problem that two of its
 * kernels can run skips the loop's tests.
 */
#include <math.h>
#include <unistd.h>

#include "internal.h"
#include "tune_internal.h"
#include "unit.h"

#define MAX_ROWS 1024

static convcat_catalog *cat;
static convcat_problem prob;   /* a problem at least two kernels can run */
static size_t runnable;        /* how many (any arch, 132 SMs) */
static convcat_candidate ranked[MAX_ROWS];

static char dir[] = "/tmp/convcat-test-find-XXXXXX";
static char path[256];

static int setup(void)
{
    const char *p = unit_env_path("CONVCAT_TEST_CATALOG");
    if (!p || !mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/tune.cache", dir);
    if (convcat_open(p, &cat) != CONVCAT_OK) {
        fprintf(stderr, "cannot open %s: %s\n", p, convcat_last_error());
        return -1;
    }
    for (size_t i = 0; i < cat->count && runnable < 2; ++i) {
        const cvc_key *k = &cat->entries[i].k;
        const convcat_problem q = unit_problem(k->op, k->dims, k->a, k->out);
        size_t n = 0, ok = 0;
        if (convcat_query(cat, &q, k->arch, 0, ranked, MAX_ROWS, &n, &ok) == CONVCAT_OK && ok >= 2) {
            prob = q;
            runnable = ok;
            convcat_query(cat, &q, k->arch, 0, ranked, MAX_ROWS, &n, &ok);
        }
    }
    if (runnable < 2)
        printf("\n    (no problem of this catalog runs on two kernels: the loop's tests check nothing)");
    return 0;
}

static int teardown(void)
{
    unlink(path);
    rmdir(dir);
    convcat_close(cat);
    return 0;
}

/* ---- a fake device --------------------------------------------------------- */

typedef struct fake {
    size_t workspace[MAX_ROWS];     /* per entry: the plan's workspace */
    convcat_status plan_st[MAX_ROWS], time_st[MAX_ROWS];
    double ms[MAX_ROWS];
    int planned, timed, destroyed;
} fake;

static int token;

static convcat_status fake_plan(void *ctx, size_t index, void **plan, size_t *workspace)
{
    fake *f = ctx;
    ++f->planned;
    *workspace = f->workspace[index];
    if (f->plan_st[index] != CONVCAT_OK) {
        *plan = NULL;
        return cvc_fail(f->plan_st[index], "%s: the fake device refuses it", cat->entries[index].key);
    }
    *plan = &token;
    return CONVCAT_OK;
}

static convcat_status fake_time(void *ctx, void *plan, double *ms)
{
    fake *f = ctx;
    CU_ASSERT_PTR_EQUAL(plan, &token);
    ++f->timed;
    /* The plan does not say its entry: the fake takes them in the order planned (the model's). */
    const size_t index = ranked[f->planned - 1].index;
    if (f->time_st[index] != CONVCAT_OK)
        return cvc_fail(f->time_st[index], "launch failed on the fake device");
    *ms = f->ms[index];
    return CONVCAT_OK;
}

static void fake_destroy(void *ctx, void *plan)
{
    CU_ASSERT_PTR_EQUAL(plan, &token);
    ++((fake *)ctx)->destroyed;
}

static fake *new_fake(void)
{
    fake *f = calloc(1, sizeof *f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (size_t i = 0; i < cat->count; ++i)
        f->ms[i] = 1.0 + (double)i;   /* every kernel its own time */
    return f;
}

static convcat_status tune(fake *f, size_t limit, size_t top_k, convcat_tune_result *out, size_t cap, size_t *n)
{
    const cvc_tune_ops ops = {.plan = fake_plan, .time = fake_time, .destroy = fake_destroy, .ctx = f};
    return cvc_tune_candidates(cat, &prob, cat->entries[ranked[0].index].k.arch, 0, limit, top_k, &ops, out, cap, n);
}

static void test_every_candidate_gets_a_result(void)
{
    if (runnable < 2)
        return;
    fake *f = new_fake();
    const size_t slow = ranked[0].index, fast = ranked[1].index;
    f->ms[slow] = 5.0, f->ms[fast] = 0.5;
    static convcat_tune_result r[MAX_ROWS];
    size_t n = 0;
    UNIT_ASSERT_STATUS(tune(f, 0, 0, r, MAX_ROWS, &n), CONVCAT_OK);
    CU_ASSERT_EQUAL(n, runnable);
    CU_ASSERT_EQUAL(f->planned, (int)runnable);
    CU_ASSERT_EQUAL(f->timed, (int)runnable);
    CU_ASSERT_EQUAL(f->destroyed, (int)runnable);
    CU_ASSERT_EQUAL(r[0].index, fast);   /* the measured winner, not the model's pick */
    CU_ASSERT_DOUBLE_EQUAL(r[0].ms, 0.5, 1e-12);
    for (size_t i = 0; i < n; ++i) {
        UNIT_ASSERT_STATUS(r[i].status, CONVCAT_OK);
        CU_ASSERT_STRING_EQUAL(r[i].reason, "");
        CU_ASSERT_TRUE(r[i].predicted_us > 0);
        if (i)
            CU_ASSERT_TRUE(r[i - 1].ms <= r[i].ms);
    }
    /* A short buffer holds the fastest; the call still tunes them all. */
    free(f);
    f = new_fake();
    f->ms[fast] = 0.5;
    UNIT_ASSERT_STATUS(tune(f, 0, 0, r, 1, &n), CONVCAT_OK);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(r[0].index, fast);
    CU_ASSERT_EQUAL(f->timed, (int)runnable);
    free(f);
}

static void test_a_workspace_too_large_is_skipped_not_fatal(void)
{
    if (runnable < 2)
        return;
    fake *f = new_fake();
    const size_t big = ranked[0].index, fits = ranked[1].index;
    f->workspace[big] = 1 << 20;
    f->workspace[fits] = 4096;
    static convcat_tune_result r[MAX_ROWS];
    size_t n = 0;
    UNIT_ASSERT_STATUS(tune(f, 8192, 0, r, MAX_ROWS, &n), CONVCAT_OK);
    CU_ASSERT_EQUAL(n, runnable);
    CU_ASSERT_EQUAL(f->timed, (int)runnable - 1);
    CU_ASSERT_EQUAL(f->destroyed, (int)runnable);   /* the skipped plan is freed too */
    const convcat_tune_result *last = &r[n - 1];   /* skipped rows come after the timed ones */
    CU_ASSERT_EQUAL(last->index, big);
    UNIT_ASSERT_STATUS(last->status, CONVCAT_ERR_UNSUPPORTED);
    CU_ASSERT_EQUAL(last->workspace_bytes, (size_t)1 << 20);
    UNIT_ASSERT_MENTIONS(last->reason, "skipped: needs 1048576 bytes of workspace; the caller's holds 8192");
    for (size_t i = 0; i + 1 < n; ++i)
        UNIT_ASSERT_STATUS(r[i].status, CONVCAT_OK);
    /* Every candidate too large: nothing timed, NOT_FOUND, the rows say why. */
    free(f);
    f = new_fake();
    for (size_t i = 0; i < cat->count; ++i)
        f->workspace[i] = 100;
    UNIT_ASSERT_STATUS(tune(f, 0, 0, r, MAX_ROWS, &n), CONVCAT_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(n, runnable);
    CU_ASSERT_EQUAL(f->timed, 0);
    UNIT_ASSERT_MENTIONS(convcat_last_error(), "workspace");
    free(f);
}

static void test_skips_and_failures_do_not_stop_the_others(void)
{
    if (runnable < 2)
        return;
    fake *f = new_fake();
    const size_t refused = ranked[0].index, broken = ranked[1].index;
    f->plan_st[refused] = CONVCAT_ERR_NO_DEVICE;
    f->time_st[broken] = CONVCAT_ERR_CUDA;
    static convcat_tune_result r[MAX_ROWS];
    size_t n = 0;
    const convcat_status st = tune(f, 0, 0, r, MAX_ROWS, &n);
    CU_ASSERT_EQUAL(n, runnable);
    CU_ASSERT_EQUAL(f->planned, (int)runnable);
    size_t timed = 0;
    for (size_t i = 0; i < n; ++i) {
        if (r[i].index == refused) {
            UNIT_ASSERT_STATUS(r[i].status, CONVCAT_ERR_NO_DEVICE);
            UNIT_ASSERT_MENTIONS(r[i].reason, "skipped: ");
            UNIT_ASSERT_MENTIONS(r[i].reason, "the fake device refuses it");
        } else if (r[i].index == broken) {
            UNIT_ASSERT_STATUS(r[i].status, CONVCAT_ERR_CUDA);
            UNIT_ASSERT_MENTIONS(r[i].reason, "launch failed");
        } else {
            ++timed;
            UNIT_ASSERT_STATUS(r[i].status, CONVCAT_OK);
        }
    }
    CU_ASSERT_EQUAL(timed, runnable - 2);
    if (runnable > 2) {
        UNIT_ASSERT_STATUS(st, CONVCAT_OK);
    } else {   /* nothing timed: the failure's status, not NOT_FOUND */
        UNIT_ASSERT_STATUS(st, CONVCAT_ERR_CUDA);
        UNIT_ASSERT_MENTIONS(convcat_last_error(), cat->entries[broken].key);
    }
    free(f);
}

static void test_top_k_times_the_models_best(void)
{
    if (runnable < 2)
        return;
    fake *f = new_fake();
    static convcat_tune_result r[MAX_ROWS];
    size_t n = 0;
    UNIT_ASSERT_STATUS(tune(f, 0, 1, r, MAX_ROWS, &n), CONVCAT_OK);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(f->timed, 1);
    CU_ASSERT_EQUAL(r[0].index, ranked[0].index);
    free(f);
    f = new_fake();
    UNIT_ASSERT_STATUS(tune(f, 0, 1000000, r, MAX_ROWS, &n), CONVCAT_OK);   /* more than there are: all */
    CU_ASSERT_EQUAL(n, runnable);
    free(f);
}

static void test_nothing_can_run(void)
{
    fake *f = new_fake();
    convcat_problem p = prob;
    p.n = 0;   /* no kernel runs an invalid problem */
    const cvc_tune_ops ops = {.plan = fake_plan, .time = fake_time, .destroy = fake_destroy, .ctx = f};
    convcat_tune_result r[4];
    size_t n = 7;
    UNIT_ASSERT_STATUS(cvc_tune_candidates(cat, &p, CONVCAT_ARCH_ANY, 0, 0, 0, &ops, r, 4, &n), CONVCAT_ERR_NOT_FOUND);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_EQUAL(f->planned, 0);
    UNIT_ASSERT_MENTIONS(convcat_last_error(), "no kernel can run the problem");
    free(f);
}

/* ---- the cache, by device ------------------------------------------------- */

static void test_the_cache_tells_devices_apart(void)
{
    convcat_tune_cache *c;
    unlink(path);
    UNIT_ASSERT_STATUS(convcat_tune_cache_load(path, &c, NULL, 0), CONVCAT_OK);
    const char *key = cat->entries[0].key, *other = cat->entries[cat->count - 1].key;
    UNIT_ASSERT_STATUS(cvc_tune_cache_put_device(c, 0xabcd0123, CONVCAT_ARCH_SM90A, "NVIDIA H200", 132, &prob, key,
                                                 0.25),
                       CONVCAT_OK);
    UNIT_ASSERT_STATUS(cvc_tune_cache_put_device(c, 0xabcd0123, CONVCAT_ARCH_SM90A, "NVIDIA H100 PCIe", 114, &prob,
                                                 other, 0.5),
                       CONVCAT_OK);
    CU_ASSERT_EQUAL(convcat_tune_cache_count(c), 2);
    UNIT_ASSERT_STATUS(convcat_tune_cache_save(c, path), CONVCAT_OK);
    convcat_tune_cache_free(c);

    char warning[256] = "unset";
    UNIT_ASSERT_STATUS(convcat_tune_cache_load(path, &c, warning, sizeof warning), CONVCAT_OK);
    CU_ASSERT_STRING_EQUAL(warning, "");
    CU_ASSERT_EQUAL(convcat_tune_cache_count(c), 2);
    char got[CVC_KEY_BYTES];
    double ms;
    CU_ASSERT_TRUE(cvc_tune_cache_get_device(c, 0xabcd0123, CONVCAT_ARCH_SM90A, "NVIDIA H200", 132, &prob, got,
                                             sizeof got, &ms));
    CU_ASSERT_STRING_EQUAL(got, key);
    CU_ASSERT_DOUBLE_EQUAL(ms, 0.25, 1e-9);
    CU_ASSERT_TRUE(cvc_tune_cache_get_device(c, 0xabcd0123, CONVCAT_ARCH_SM90A, "NVIDIA H100 PCIe", 114, &prob, got,
                                             sizeof got, &ms));
    CU_ASSERT_STRING_EQUAL(got, other);
    /* The same model with another SM count (a partitioned device), another model, no device: none. */
    CU_ASSERT_FALSE(cvc_tune_cache_get_device(c, 0xabcd0123, CONVCAT_ARCH_SM90A, "NVIDIA H200", 66, &prob, got,
                                              sizeof got, &ms));
    CU_ASSERT_FALSE(cvc_tune_cache_get_device(c, 0xabcd0123, CONVCAT_ARCH_SM90A, "NVIDIA H100", 132, &prob, got,
                                              sizeof got, &ms));
    CU_ASSERT_FALSE(cvc_tune_cache_get(c, 0xabcd0123, CONVCAT_ARCH_SM90A, &prob, got, sizeof got, &ms));
    convcat_tune_cache_free(c);

    /* The file: version 2, the name encoded as one word. */
    size_t size;
    char *text = (char *)unit_read_file(path, &size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    UNIT_ASSERT_MENTIONS(text, "# convcat autotune cache 2\n");
    UNIT_ASSERT_MENTIONS(text, " sm90a 132 NVIDIA%20H200 ");
    UNIT_ASSERT_MENTIONS(text, " sm90a 114 NVIDIA%20H100%20PCIe ");
    free(text);
}

static void test_version_1_rows_are_not_taken_for_a_device(void)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "# convcat autotune cache 1\n1234abcd sm90a %s 0.1 fprop/2d\n", cat->entries[0].key);
    fclose(f);
    convcat_tune_cache *c;
    char warning[256];
    UNIT_ASSERT_STATUS(convcat_tune_cache_load(path, &c, warning, sizeof warning), CONVCAT_OK);
    CU_ASSERT_STRING_EQUAL(warning, "");
    CU_ASSERT_EQUAL(convcat_tune_cache_count(c), 1);
    convcat_tune_cache_free(c);
    /* Damaged version 2 lines: the whole file is ignored, with the reason. */
    static const struct { const char *text, *says; } cases[] = {
        {"# convcat autotune cache 2\n1234abcd sm90a 132 NVIDIA%20H200 KEY 0.1\n", "line 2"},
        {"# convcat autotune cache 2\n1234abcd sm90a -4 NVIDIA KEY 0.1 fprop/2d\n", "negative"},
        {"# convcat autotune cache 2\n1234abcd sm90a 132 NVIDIA(H200) KEY 0.1 fprop/2d\n", "not an encoded device"},
        {"# convcat autotune cache 3\n", "line 1"},
    };
    for (size_t i = 0; i < CVC_ARRAY_LEN(cases); ++i) {
        char text[512];
        const char *at = strstr(cases[i].text, "KEY");
        if (at)
            snprintf(text, sizeof text, "%.*s%s%s", (int)(at - cases[i].text), cases[i].text, cat->entries[0].key,
                     at + 3);
        else
            snprintf(text, sizeof text, "%s", cases[i].text);
        f = fopen(path, "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs(text, f);
        fclose(f);
        UNIT_ASSERT_STATUS(convcat_tune_cache_load(path, &c, warning, sizeof warning), CONVCAT_OK);
        CU_ASSERT_EQUAL(convcat_tune_cache_count(c), 0);
        UNIT_ASSERT_MENTIONS(warning, cases[i].says);
        convcat_tune_cache_free(c);
    }
}

/* ---- the public calls, without a driver ---------------------------------- */

static void test_results_without_a_driver_say_so(void)
{
    convcat_tensors t = {.alpha = 1.0f};
    convcat_tune_options o;
    convcat_tune_options_init(&o);
    CU_ASSERT_EQUAL(o.iterations, 20);
    CU_ASSERT_EQUAL(o.top_k, 0);
    CU_ASSERT_PTR_NULL(o.cache);
    convcat_tune_result r[4];
    size_t n = 9;
    const convcat_status st = convcat_autotune_results(cat, &prob, &t, NULL, &o, r, 4, &n);
    CU_ASSERT_TRUE(st == CONVCAT_ERR_NO_DRIVER || st == CONVCAT_ERR_NO_DEVICE);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_TRUE(strlen(convcat_last_error()) > 0);
    UNIT_ASSERT_STATUS(convcat_autotune_results(NULL, &prob, &t, NULL, &o, r, 4, &n), CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_STATUS(convcat_autotune_results(cat, &prob, &t, NULL, &o, NULL, 4, &n), CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_STATUS(convcat_autotune_results(cat, &prob, &t, NULL, &o, r, 4, NULL), CONVCAT_ERR_INVALID_ARGUMENT);
    o.iterations = -1;
    UNIT_ASSERT_STATUS(convcat_autotune_results(cat, &prob, &t, NULL, &o, r, 4, &n), CONVCAT_ERR_INVALID_ARGUMENT);
    /* NULL options are the defaults. */
    const convcat_status st2 = convcat_autotune_results(cat, &prob, &t, NULL, NULL, r, 4, &n);
    CU_ASSERT_TRUE(st2 == CONVCAT_ERR_NO_DRIVER || st2 == CONVCAT_ERR_NO_DEVICE);
    convcat_tune_options_init(NULL);
}

int main(void)
{
    CU_TestInfo tests[] = {
        {"every candidate gets a result", test_every_candidate_gets_a_result},
        {"a workspace too large is skipped, not fatal", test_a_workspace_too_large_is_skipped_not_fatal},
        {"skips and failures do not stop the others", test_skips_and_failures_do_not_stop_the_others},
        {"top_k times the model's best", test_top_k_times_the_models_best},
        {"nothing can run", test_nothing_can_run},
        {"the cache tells devices apart", test_the_cache_tells_devices_apart},
        {"version 1 rows are not taken for a device", test_version_1_rows_are_not_taken_for_a_device},
        {"results without a driver say so", test_results_without_a_driver_say_so},
        CU_TEST_INFO_NULL,
    };
    return unit_main("find", tests, setup, teardown);
}
