/* test_gpu_fprop.c: every fprop kernel of a catalog against the GPU reference.
 *
 *   test_gpu_fprop [CATALOG] [--match TEXT]     (CATALOG defaults to $CONVCAT_TEST_CATALOG)
 *
 * One CUnit test per kernel, named by its key.  Each runs the kernel on ~20
 * problems of its dimensionality (1D/2D/3D; padding, asymmetric padding,
 * stride 2..8, dilation 2..3, M and N not multiples of the tile, C not a
 * multiple of the K tile, tiny and large, a residual with alpha/beta, fused
 * bias and ReLU/GELU/SiLU) on fresh
 * random data with the output poisoned with NaN, and checks
 * ||y - ref|| / ||ref|| against the output type's bound and that no output
 * was left unwritten.  Without a GPU it exits 77 (skip) and says why.
 */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "convcat.h"
#include "verify.h"

typedef struct shape {
    int n, d, h, w, c, k, t, r, s;
    int lo[3], hi[3], stride[3], dil[3];   /* D, H, W */
    float alpha, beta;
    int bias;                              /* a random per-channel bias */
    convcat_activation act;
} shape;

#define P2(n, h, w, c, k, r, s, lh, lw, hh, hw, sh, sw, dh, dw) \
    {n, 1, h, w, c, k, 1, r, s, {0, lh, lw}, {0, hh, hw}, {1, sh, sw}, {1, dh, dw}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE}
#define P1(n, w, c, k, s, l, h, st, dl) \
    {n, 1, 1, w, c, k, 1, 1, s, {0, 0, l}, {0, 0, h}, {1, 1, st}, {1, 1, dl}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE}
#define P3(n, d, h, w, c, k, t, r, s, pad, st, dl) \
    {n, d, h, w, c, k, t, r, s, {pad, pad, pad}, {pad, pad, pad}, {st, st, st}, {dl, dl, dl}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE}

static const shape shapes_2d[] = {
    P2(1, 3, 3, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),          /* tiny */
    P2(2, 7, 9, 16, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),
    P2(2, 15, 17, 32, 40, 3, 3, 1, 1, 1, 1, 2, 2, 1, 1),      /* stride 2 */
    P2(1, 16, 16, 64, 64, 3, 3, 2, 2, 2, 2, 1, 1, 2, 2),      /* dilation 2 */
    P2(2, 10, 12, 24, 32, 3, 3, 0, 2, 2, 0, 1, 1, 1, 1),      /* asymmetric padding */
    P2(4, 14, 14, 256, 128, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),    /* 1x1 */
    P2(3, 11, 13, 72, 136, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),     /* M, N tails */
    P2(2, 9, 9, 200, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),       /* C not a multiple of 64 */
    P2(8, 56, 56, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),      /* large M */
    P2(2, 14, 14, 512, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),    /* large K */
    P2(2, 23, 23, 8, 64, 7, 7, 3, 3, 3, 3, 2, 2, 1, 1),       /* 7x7 stride 2, C = 8 */
    P2(1, 20, 20, 40, 56, 5, 5, 2, 2, 2, 2, 1, 1, 1, 1),      /* 5x5 */
    P2(3, 6, 6, 16, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),         /* K = 8 */
    P2(64, 7, 7, 128, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),     /* many small images */
    P2(2, 28, 28, 64, 128, 1, 1, 0, 0, 0, 0, 2, 2, 1, 1),     /* 1x1 stride 2 */
    P2(2, 12, 17, 32, 32, 3, 5, 1, 2, 1, 2, 1, 2, 2, 1),      /* mixed strides and dilations */
    P2(1, 1, 300, 16, 32, 1, 3, 0, 1, 0, 1, 1, 1, 1, 1),      /* one row */
    P2(1, 2, 2, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1),        /* filter larger than the image */
    P2(2, 9, 9, 48, 48, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1),        /* no padding */
    P2(1, 33, 33, 64, 192, 3, 3, 1, 1, 1, 1, 3, 3, 1, 1),     /* stride 3 */
    P2(2, 31, 31, 32, 64, 3, 3, 1, 1, 1, 1, 8, 8, 1, 1),      /* stride 8 */
    P2(1, 1, 1, 8, 8, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1),          /* M = 1 */
    {2, 1, 16, 16, 64, 64, 1, 3, 3, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 0, CONVCAT_ACT_NONE}, /* residual */
    /* fused epilogues: bias, activations, with and without a residual; N and M tails */
    {2, 1, 9, 11, 64, 72, 1, 3, 3, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1.0f, 0.0f, 1, CONVCAT_ACT_RELU},
    {2, 1, 9, 11, 64, 136, 1, 3, 3, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 1.0f, 1, CONVCAT_ACT_GELU},
    {1, 1, 13, 7, 32, 200, 1, 1, 1, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 1.0f, 0.0f, 0, CONVCAT_ACT_SILU},
};

static const shape shapes_1d[] = {
    P1(1, 5, 8, 8, 3, 1, 1, 1, 1),
    P1(2, 37, 16, 24, 3, 1, 1, 1, 1),
    P1(2, 101, 32, 40, 3, 1, 1, 2, 1),       /* stride 2 */
    P1(1, 64, 64, 64, 3, 2, 2, 1, 2),        /* dilation 2 */
    P1(2, 50, 24, 32, 3, 0, 2, 1, 1),        /* asymmetric padding */
    P1(4, 196, 256, 128, 1, 0, 0, 1, 1),     /* 1x1 */
    P1(3, 143, 72, 136, 3, 1, 1, 1, 1),      /* M, N tails */
    P1(2, 81, 200, 48, 3, 1, 1, 1, 1),       /* C = 200 */
    P1(16, 4096, 64, 64, 3, 1, 1, 1, 1),     /* large M */
    P1(2, 196, 512, 512, 3, 1, 1, 1, 1),     /* large K */
    P1(2, 529, 8, 64, 7, 3, 3, 2, 1),        /* 7 taps, stride 2 */
    P1(1, 400, 40, 56, 5, 2, 2, 1, 1),
    P1(3, 36, 16, 8, 3, 1, 1, 1, 1),         /* K = 8 */
    P1(64, 49, 128, 256, 3, 1, 1, 1, 1),
    P1(2, 784, 64, 128, 1, 0, 0, 2, 1),      /* 1x1 stride 2 */
    P1(1, 300, 16, 32, 9, 4, 4, 1, 3),       /* dilation 3 */
    P1(1, 2, 16, 16, 3, 1, 1, 1, 1),         /* filter wider than the signal */
    P1(2, 81, 48, 48, 3, 0, 0, 1, 1),        /* no padding */
    P1(1, 1089, 64, 192, 3, 1, 1, 3, 1),     /* stride 3 */
    P1(2, 961, 32, 64, 3, 1, 1, 8, 1),       /* stride 8 */
    P1(1, 1, 8, 8, 1, 0, 0, 1, 1),           /* M = 1 */
    {2, 1, 1, 256, 64, 64, 1, 1, 3, {0, 0, 1}, {0, 0, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 0, CONVCAT_ACT_NONE}, /* residual */
    {2, 1, 1, 99, 64, 72, 1, 1, 3, {0, 0, 1}, {0, 0, 1}, {1, 1, 1}, {1, 1, 1}, 1.0f, 0.0f, 1, CONVCAT_ACT_RELU},
    {2, 1, 1, 99, 64, 136, 1, 1, 3, {0, 0, 1}, {0, 0, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 1.0f, 1, CONVCAT_ACT_GELU},
    {1, 1, 1, 91, 32, 200, 1, 1, 1, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 1.0f, 0.0f, 0, CONVCAT_ACT_SILU},
};

static const shape shapes_3d[] = {
    P3(1, 3, 3, 3, 8, 8, 3, 3, 3, 1, 1, 1),
    P3(2, 5, 7, 9, 16, 24, 3, 3, 3, 1, 1, 1),
    P3(2, 9, 11, 13, 32, 40, 3, 3, 3, 1, 2, 1),      /* stride 2 */
    P3(1, 8, 10, 10, 64, 64, 3, 3, 3, 2, 1, 2),      /* dilation 2 */
    P3(2, 6, 14, 14, 256, 128, 1, 1, 1, 0, 1, 1),    /* 1x1x1 */
    P3(3, 5, 11, 13, 72, 136, 3, 3, 3, 1, 1, 1),     /* M, N tails */
    P3(2, 4, 9, 9, 200, 48, 3, 3, 3, 1, 1, 1),       /* C = 200 */
    P3(4, 16, 28, 28, 64, 64, 3, 3, 3, 1, 1, 1),     /* large M */
    P3(1, 4, 7, 7, 512, 256, 3, 3, 3, 1, 1, 1),      /* large K */
    P3(2, 9, 15, 15, 8, 64, 5, 5, 5, 2, 2, 1),       /* 5x5x5 stride 2, C = 8 */
    P3(3, 4, 6, 6, 16, 8, 3, 3, 3, 1, 1, 1),         /* K = 8 */
    P3(2, 8, 16, 16, 64, 128, 1, 1, 1, 0, 2, 1),     /* 1x1x1 stride 2 */
    P3(1, 2, 2, 2, 16, 16, 3, 3, 3, 1, 1, 1),        /* filter larger than the volume */
    P3(2, 5, 9, 9, 48, 48, 3, 3, 3, 0, 1, 1),        /* no padding */
    P3(1, 10, 17, 17, 64, 192, 3, 3, 3, 1, 3, 1),    /* stride 3 */
    P3(1, 1, 1, 1, 8, 8, 1, 1, 1, 0, 1, 1),          /* M = 1 */
    P3(1, 12, 12, 12, 32, 32, 3, 3, 3, 3, 1, 3),     /* dilation 3 */
    {2, 4, 9, 11, 24, 32, 3, 3, 3, {0, 1, 2}, {2, 1, 0}, {1, 2, 1}, {2, 1, 1}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE}, /* mixed */
    {1, 6, 10, 10, 32, 48, 2, 3, 4, {1, 1, 2}, {0, 1, 1}, {2, 1, 3}, {1, 2, 1}, 1.0f, 0.0f, 0, CONVCAT_ACT_NONE}, /* even taps */
    {2, 4, 8, 8, 64, 64, 3, 3, 3, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 0.75f, 0, CONVCAT_ACT_NONE}, /* residual */
    {1, 3, 5, 7, 64, 72, 3, 3, 3, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1.0f, 0.0f, 1, CONVCAT_ACT_RELU},
    {1, 3, 5, 7, 64, 136, 3, 3, 3, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 0.5f, 1.0f, 1, CONVCAT_ACT_GELU},
    {1, 2, 6, 7, 32, 200, 1, 1, 1, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 1.0f, 0.0f, 0, CONVCAT_ACT_SILU},
};

static const convcat_catalog *catalog;
static unsigned base_seed;
static long long runs, failures;
static size_t first_kernel = (size_t)-1;

static convcat_problem problem_for(const convcat_entry_info *e, const shape *sh)
{
    convcat_problem p;
    convcat_problem_init(&p);
    p.op = e->op;
    p.dims = e->dims;
    p.a_type = e->a_type, p.b_type = e->b_type, p.out_type = e->out_type;
    p.n = sh->n, p.d = sh->d, p.h = sh->h, p.w = sh->w, p.c = sh->c, p.k = sh->k;
    p.t = sh->t, p.r = sh->r, p.s = sh->s;
    for (int a = 0; a < 3; ++a) {
        p.pad_lo[a] = sh->lo[a], p.pad_hi[a] = sh->hi[a];
        p.stride[a] = sh->stride[a], p.dilation[a] = sh->dil[a];
    }
    return p;
}

static void check_one(size_t index, const convcat_entry_info *e, const shape *sh, int no)
{
    convcat_problem p = problem_for(e, sh);
    char why[192];
    const unsigned seed = base_seed + (unsigned)(index * 131 + (size_t)no);
    ++runs;
    if (convcat_check(catalog, index, &p, why, sizeof why) != CONVCAT_OK) {
        ++failures;
        printf("\n  %s problem %d refused: %s", e->key, no, why);
        CU_FAIL("a test problem was refused");
        return;
    }
    cvc_verify v;
    const cvc_epilogue epi = {.alpha = sh->alpha, .beta = sh->beta, .bias = sh->bias, .activation = sh->act};
    const convcat_status st = cvc_verify_run(catalog, &p, index, seed, &epi, CVC_SABOTAGE_NONE, &v);
    if (st != CONVCAT_OK || !v.passed) {
        ++failures;
        if (st != CONVCAT_OK)
            printf("\n  %s problem %d (seed %u): %s: %s", e->key, no, seed, convcat_status_string(st),
                   convcat_last_error());
        else
            printf("\n  %s problem %d (seed %u): rel. error %.3e (bound %.0e), %lld non-finite, %lld outliers",
                   e->key, no, seed, v.rel_err, v.tolerance, v.nonfinite, v.outliers);
    }
    CU_ASSERT_EQUAL(st, CONVCAT_OK);
    CU_ASSERT_TRUE(st == CONVCAT_OK && v.passed);
}

/* The check itself must be able to fail: one damaged output element, NaN or
 * wrong, among ~100k correct ones must be caught, on the first kernel of the
 * catalog and a problem it passes. */
static void test_checker_catches_one_bad_element(void)
{
    convcat_entry_info e;
    convcat_entry_info_get(catalog, first_kernel, &e);
    const shape *sh = e.dims == 1 ? &shapes_1d[8] : e.dims == 2 ? &shapes_2d[8] : &shapes_3d[7];
    convcat_problem p = problem_for(&e, sh);
    cvc_verify v;
    const cvc_epilogue plain = {.alpha = 1.0f};
    CU_ASSERT_EQUAL_FATAL(cvc_verify_run(catalog, &p, first_kernel, base_seed, &plain, CVC_SABOTAGE_NONE, &v),
                          CONVCAT_OK);
    CU_ASSERT_TRUE(v.passed);
    CU_ASSERT_EQUAL(cvc_verify_run(catalog, &p, first_kernel, base_seed, &plain, CVC_SABOTAGE_UNWRITTEN, &v),
                    CONVCAT_OK);
    CU_ASSERT_FALSE(v.passed);
    CU_ASSERT_EQUAL(v.nonfinite, 1);
    CU_ASSERT_EQUAL(cvc_verify_run(catalog, &p, first_kernel, base_seed, &plain, CVC_SABOTAGE_WRONG, &v),
                    CONVCAT_OK);
    CU_ASSERT_FALSE(v.passed);
    CU_ASSERT_EQUAL(v.outliers, 1);
    printf("(%s: wrong element gives rel. error %.2e, %lld outlier) ", e.key, v.rel_err, v.outliers);
}

/* convcat_autotune: the winner is a kernel that can run the problem and
 * passes the reference check; a cache remembers it (no timing the second
 * time: the same index and time come back) and survives a save and load. */
static void test_autotune_picks_a_verified_kernel_and_remembers_it(void)
{
    convcat_entry_info e;
    convcat_entry_info_get(catalog, first_kernel, &e);
    const shape *sh = e.dims == 1 ? &shapes_1d[9] : e.dims == 2 ? &shapes_2d[9] : &shapes_3d[8];
    convcat_problem p = problem_for(&e, sh);
    char path[] = "/tmp/convcat-gpu-tune-XXXXXX";
    const int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    unlink(path);
    convcat_tune_cache *cache;
    CU_ASSERT_EQUAL_FATAL(convcat_tune_cache_load(path, &cache, NULL, 0), CONVCAT_OK);
    size_t index = (size_t)-1, again = (size_t)-2;
    double ms = 0, ms_again = 0;
    CU_ASSERT_EQUAL_FATAL(cvc_verify_autotune(catalog, &p, cache, 10, &index, &ms), CONVCAT_OK);
    CU_ASSERT_EQUAL(convcat_tune_cache_count(cache), 1);
    CU_ASSERT_TRUE(ms > 0);
    CU_ASSERT_EQUAL(convcat_check(catalog, index, &p, NULL, 0), CONVCAT_OK);
    CU_ASSERT_EQUAL(convcat_tune_cache_save(cache, path), CONVCAT_OK);
    convcat_tune_cache_free(cache);
    CU_ASSERT_EQUAL_FATAL(convcat_tune_cache_load(path, &cache, NULL, 0), CONVCAT_OK);
    CU_ASSERT_EQUAL(cvc_verify_autotune(catalog, &p, cache, 10, &again, &ms_again), CONVCAT_OK);
    CU_ASSERT_EQUAL(again, index);
    CU_ASSERT_DOUBLE_EQUAL(ms_again, ms, 1e-5);   /* from the cache, not timed again */
    convcat_tune_cache_free(cache);
    unlink(path);
    const cvc_epilogue plain = {.alpha = 1.0f};
    cvc_verify v;
    CU_ASSERT_EQUAL(cvc_verify_run(catalog, &p, index, base_seed, &plain, CVC_SABOTAGE_NONE, &v), CONVCAT_OK);
    CU_ASSERT_TRUE(v.passed);
    convcat_entry_info w;
    convcat_entry_info_get(catalog, index, &w);
    printf("(winner %s, %.4f ms) ", w.key, ms);
}

/* The current test's name is the kernel key. */
static void test_kernel(void)
{
    const char *key = CU_get_current_test()->pName;
    size_t index;
    convcat_entry_info e;
    CU_ASSERT_EQUAL_FATAL(convcat_find(catalog, key, &index), CONVCAT_OK);
    convcat_entry_info_get(catalog, index, &e);
    const shape *set = e.dims == 1 ? shapes_1d : e.dims == 2 ? shapes_2d : shapes_3d;
    const size_t n = e.dims == 1 ? sizeof shapes_1d / sizeof *set
                   : e.dims == 2 ? sizeof shapes_2d / sizeof *set : sizeof shapes_3d / sizeof *set;
    for (size_t i = 0; i < n; ++i)
        check_one(index, &e, &set[i], (int)i);
}

int main(int argc, char **argv)
{
    const char *path = getenv("CONVCAT_TEST_CATALOG"), *match = NULL;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--match") == 0 && i + 1 < argc)
            match = argv[++i];
        else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "test_gpu_fprop: no catalog (argument or CONVCAT_TEST_CATALOG)\n");
        return 99;
    }
    char name[128];
    convcat_status st = cvc_verify_device(0, name, sizeof name);
    if (st == CONVCAT_ERR_NO_DRIVER || st == CONVCAT_ERR_NO_DEVICE) {
        printf("SKIP: no GPU to run the kernels on: %s\n", convcat_last_error());
        return 77;
    }
    if (st != CONVCAT_OK) {
        fprintf(stderr, "test_gpu_fprop: %s\n", convcat_last_error());
        return 99;
    }
    convcat_catalog *cat;
    if ((st = convcat_open(path, &cat)) != CONVCAT_OK) {
        fprintf(stderr, "test_gpu_fprop: %s\n", convcat_last_error());
        return 99;
    }
    catalog = cat;
    convcat_arch arch;
    convcat_device_arch(&arch, NULL);
    base_seed = (unsigned)time(NULL);
    printf("device %s, catalog %s, base seed %u\n", name, path, base_seed);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 99;
    CU_pSuite suite = CU_add_suite("gpu_fprop", NULL, NULL);
    size_t registered = 0;
    for (size_t i = 0; i < convcat_count(cat); ++i) {
        convcat_entry_info e;
        convcat_entry_info_get(cat, i, &e);
        if (e.op != CONVCAT_FPROP || e.arch != arch || (match && !strstr(e.key, match)))
            continue;
        CU_add_test(suite, e.key, test_kernel);
        if (registered++ == 0)
            first_kernel = i;
    }
    if (registered) {
        CU_pSuite checks = CU_add_suite("checker and autotune", NULL, NULL);
        CU_add_test(checks, "checker_catches_one_bad_element", test_checker_catches_one_bad_element);
        CU_add_test(checks, "autotune_picks_a_verified_kernel_and_remembers_it",
                    test_autotune_picks_a_verified_kernel_and_remembers_it);
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    const unsigned failed = CU_get_number_of_tests_failed();
    printf("\n%zu kernels, %lld problem runs, %lld failed runs, %u failed kernels\n", registered, runs, failures,
           failed);
    CU_cleanup_registry();
    convcat_close(cat);
    return failed || registered == 0 ? 1 : 0;
}
