/* test_multigpu.c: one catalog, every GPU of the machine at once.
 *
 *   test_multigpu [CATALOG] [--rounds N] [--seed N]
 *
 * CATALOG defaults to $CONVCAT_TEST_CATALOG; --rounds (default 20) is how many times each
 * plan runs; --seed sets the base seed of the random data (default: the time; printed).
 *
 * The catalog is opened once, by the main thread.  Then one thread per device (two on a
 * machine of one GPU) makes that device's primary context current and, after a barrier, so
 * that every thread asks for the same kernels' code at the same moment, makes a plan
 * (CONVCAT_AUTO) for each problem of `problems` (the three ops; the TMA, gather and direct
 * families; split-K with its workspace; 1D, 2D, 3D; f16, bf16, tf32) and that problem's
 * tensors on its device.  Each round then gives every problem fresh random inputs and an
 * output poisoned with NaN, launches every plan on one of the thread's two non-blocking
 * streams (alternating) before waiting on any, and checks every output against the reference
 * (verify.h).  Each thread also keeps two plans of one direct kernel whose launches need
 * different shared memory, the larger made first (a 7x7 filter of groups of 8 channels, then
 * a 3x3 one): the larger must still run once the smaller exists.
 *
 * Then, with two devices or more, the main thread runs device 0's plans with device 1
 * current: every run must be refused (CONVCAT_ERR_NO_DEVICE, with a reason) and leave its
 * output poisoned.
 *
 * Exit status: 0 passed; 1 a wrong answer or a failed call; 99 no catalog; 77 (skip) without a
 * GPU, and with one GPU after its two threads passed: the cross-device part needs two, and the
 * test says so. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "convcat.h"
#include "driver.h"
#include "verify.h"

typedef struct mg_problem {
    const char *name;
    convcat_op op;
    int dims;
    convcat_dtype type;   /* both operands; tf32 writes f32 */
    int n, d, h, w, c, k, t, r, s, pad, stride, groups;
} mg_problem;

static const mg_problem problems[] = {
    {"fprop 3x3 64 -> 64", CONVCAT_FPROP, 2, CONVCAT_BF16, 4, 1, 28, 28, 64, 64, 1, 3, 3, 1, 1, 1},
    {"fprop stem C = 3, 7x7 stride 2", CONVCAT_FPROP, 2, CONVCAT_BF16, 2, 1, 64, 64, 3, 32, 1, 7, 7, 3, 2, 1},
    {"fprop depthwise 3x3", CONVCAT_FPROP, 2, CONVCAT_F16, 4, 1, 28, 28, 96, 96, 1, 3, 3, 1, 1, 96},
    {"fprop 3D 3x3x3 32 -> 64", CONVCAT_FPROP, 3, CONVCAT_F16, 2, 8, 16, 16, 32, 64, 3, 3, 3, 1, 1, 1},
    {"dgrad 3x3 stride 2", CONVCAT_DGRAD, 2, CONVCAT_BF16, 4, 1, 28, 28, 64, 128, 1, 3, 3, 1, 2, 1},
    {"dgrad 1D filter 5, tf32", CONVCAT_DGRAD, 1, CONVCAT_TF32, 4, 1, 1, 256, 64, 64, 1, 1, 5, 2, 1, 1},
    {"wgrad 1x1 64 -> 128 (split-K)", CONVCAT_WGRAD, 2, CONVCAT_BF16, 8, 1, 28, 28, 64, 128, 1, 1, 1, 0, 1, 1},
    {"wgrad depthwise 5x5", CONVCAT_WGRAD, 2, CONVCAT_BF16, 4, 1, 28, 28, 96, 96, 1, 5, 5, 2, 1, 96},
    {"wgrad groups of 8, 3x3", CONVCAT_WGRAD, 2, CONVCAT_BF16, 4, 1, 14, 14, 64, 64, 1, 3, 3, 1, 1, 8},
};
#define PROBLEMS (sizeof problems / sizeof problems[0])

/* One direct kernel, two launches of different shared memory (the filter table of c = 8 channels:
 * 49 taps, then 9). */
static const mg_problem shared_pair[2] = {
    {"direct fprop groups of 8, 7x7 (made first)", CONVCAT_FPROP, 2, CONVCAT_BF16, 2, 1, 28, 28, 64, 64, 1, 7, 7, 3, 1, 8},
    {"direct fprop groups of 8, 3x3 (same kernel)", CONVCAT_FPROP, 2, CONVCAT_BF16, 2, 1, 28, 28, 64, 64, 1, 3, 3, 1, 1, 8},
};
#define RUNS (PROBLEMS + 2)

typedef struct worker {
    int ordinal, thread;
    convcat_plan *plans[RUNS];
    cvc_verify_case *cases[RUNS];
    const char *names[RUNS];
    size_t index[RUNS];
    int count;
    long long runs, failures;
    char error[512];
} worker;

static convcat_catalog *catalog;
static unsigned base_seed;
static int rounds = 20;
static pthread_barrier_t barrier;
static size_t shared_kernel = CONVCAT_AUTO;   /* the direct kernel of shared_pair, found by the main thread */

static convcat_problem to_problem(const mg_problem *m)
{
    convcat_problem p;
    convcat_problem_init(&p);
    p.op = m->op, p.dims = m->dims;
    p.a_type = p.b_type = m->type;
    p.out_type = m->type == CONVCAT_TF32 ? CONVCAT_F32 : m->type;
    p.n = m->n, p.d = m->d, p.h = m->h, p.w = m->w, p.c = m->c, p.k = m->k, p.t = m->t, p.r = m->r, p.s = m->s;
    for (int a = 3 - m->dims; a < 3; ++a)
        p.pad_lo[a] = p.pad_hi[a] = m->pad, p.stride[a] = m->stride;
    p.groups = m->groups;
    return p;
}

static int fail(worker *w, const char *what)
{
    snprintf(w->error, sizeof w->error, "device %d, thread %d: %s: %s", w->ordinal, w->thread, what,
             convcat_last_error());
    return 1;
}

/* A plan of `m` on the current device (entry `index` or CONVCAT_AUTO) and its tensors. */
static int add(worker *w, const mg_problem *m, size_t index)
{
    const convcat_problem p = to_problem(m);
    convcat_plan_info info;
    const int i = w->count;
    w->names[i] = m->name;
    if (convcat_plan_create(catalog, &p, index, &w->plans[i]) != CONVCAT_OK)
        return fail(w, m->name);
    w->count++;
    if (convcat_plan_info_get(w->plans[i], &info) != CONVCAT_OK ||
        cvc_verify_case_make(&p, info.workspace_bytes, &w->cases[i]) != CONVCAT_OK)
        return fail(w, m->name);
    w->index[i] = info.index;
    return 0;
}

static int run_rounds(worker *w)
{
    const cvc_driver *drv;
    CUstream streams[2] = {NULL, NULL};
    int bad = 0;
    if (cvc_driver_get(&drv) != CONVCAT_OK ||
        cvc_cuda_check(drv->cuStreamCreate(&streams[0], CU_STREAM_NON_BLOCKING), "cuStreamCreate") != CONVCAT_OK ||
        cvc_cuda_check(drv->cuStreamCreate(&streams[1], CU_STREAM_NON_BLOCKING), "cuStreamCreate") != CONVCAT_OK)
        return fail(w, "streams");
    for (int round = 0; round < rounds && !bad; ++round) {
        for (int i = 0; i < w->count && !bad; ++i) {
            const unsigned seed = base_seed + 1000003u * (unsigned)w->ordinal + 7919u * (unsigned)w->thread +
                                  131u * (unsigned)round + 17u * (unsigned)i;
            if (cvc_verify_case_fill(w->cases[i], seed) != CONVCAT_OK)
                bad = fail(w, w->names[i]);
        }
        for (int i = 0; i < w->count && !bad; ++i) {
            const convcat_tensors t = cvc_verify_case_tensors(w->cases[i]);
            if (convcat_plan_run(w->plans[i], &t, streams[(i + round) % 2]) != CONVCAT_OK)
                bad = fail(w, w->names[i]);
        }
        for (int s = 0; s < 2 && !bad; ++s)
            if (cvc_cuda_check(drv->cuStreamSynchronize(streams[s]), "the convcat kernels") != CONVCAT_OK)
                bad = fail(w, "synchronizing the streams");
        for (int i = 0; i < w->count && !bad; ++i) {
            cvc_verify v;
            if (cvc_verify_case_check(w->cases[i], &v) != CONVCAT_OK) {
                bad = fail(w, w->names[i]);
                break;
            }
            ++w->runs;
            if (!v.passed) {
                ++w->failures;
                fprintf(stderr, "FAIL device %d thread %d round %d: %s (kernel %zu): rel_err %.3g > %.3g or %lld "
                        "non-finite, %lld outliers\n", w->ordinal, w->thread, round, w->names[i], w->index[i],
                        v.rel_err, v.tolerance, v.nonfinite, v.outliers);
            }
        }
    }
    for (int s = 0; s < 2; ++s)
        if (streams[s])
            drv->cuStreamDestroy(streams[s]);
    return bad;
}

static void *work(void *arg)
{
    worker *w = arg;
    char name[128];
    int bad = cvc_verify_device(w->ordinal, name, sizeof name) != CONVCAT_OK ? fail(w, "making the device current") : 0;
    pthread_barrier_wait(&barrier);   /* every thread loads the same kernels' code at once */
    for (size_t i = 0; i < PROBLEMS && !bad; ++i)
        bad = add(w, &problems[i], CONVCAT_AUTO);
    for (int i = 0; i < 2 && !bad && shared_kernel != CONVCAT_AUTO; ++i)
        bad = add(w, &shared_pair[i], shared_kernel);
    if (!bad)
        run_rounds(w);
    return NULL;
}

/* A direct kernel of the device's arch that takes both problems of shared_pair (CONVCAT_AUTO if none). */
static size_t find_shared_kernel(convcat_arch arch)
{
    const convcat_problem big = to_problem(&shared_pair[0]), small = to_problem(&shared_pair[1]);
    for (size_t i = 0; i < convcat_count(catalog); ++i) {
        convcat_entry_info e;
        convcat_plan *a, *b;
        if (convcat_entry_info_get(catalog, i, &e) != CONVCAT_OK || e.arch != arch ||
            e.family != CONVCAT_FAMILY_DIRECT || e.op != CONVCAT_FPROP || e.dims != 2 || e.a_type != CONVCAT_BF16)
            continue;
        if (convcat_plan_create(catalog, &big, i, &a) != CONVCAT_OK)
            continue;
        const int both = convcat_plan_create(catalog, &small, i, &b) == CONVCAT_OK;
        convcat_plan_destroy(a);
        if (both) {
            convcat_plan_destroy(b);
            return i;
        }
    }
    return CONVCAT_AUTO;
}

/* Device 0's plans run with device 1 current: refused, and their outputs untouched. */
static int cross_device(worker *w0)
{
    int bad = 0;
    for (int i = 0; i < w0->count && !bad; ++i) {
        int poisoned = 0;
        if (cvc_verify_device(0, NULL, 0) != CONVCAT_OK || cvc_verify_case_fill(w0->cases[i], base_seed) != CONVCAT_OK ||
            cvc_verify_device(1, NULL, 0) != CONVCAT_OK) {
            fprintf(stderr, "FAIL cross-device: %s\n", convcat_last_error());
            return 1;
        }
        const convcat_tensors t = cvc_verify_case_tensors(w0->cases[i]);
        const convcat_status st = convcat_plan_run(w0->plans[i], &t, NULL);
        const char *why = convcat_last_error();
        if (st != CONVCAT_ERR_NO_DEVICE || !strstr(why, "device")) {
            fprintf(stderr, "FAIL cross-device: %s on device 1 answered %s (%s), not a refusal\n", w0->names[i],
                    convcat_status_string(st), why);
            bad = 1;
        } else if (i == 0) {
            printf("device 0's plan run on device 1: refused: %s\n", why);
        }
        if (cvc_verify_device(0, NULL, 0) != CONVCAT_OK ||
            cvc_verify_case_output_poisoned(w0->cases[i], &poisoned) != CONVCAT_OK || !poisoned) {
            fprintf(stderr, "FAIL cross-device: %s: the refused run's output was written\n", w0->names[i]);
            bad = 1;
        }
    }
    return bad;
}

int main(int argc, char **argv)
{
    const char *path = getenv("CONVCAT_TEST_CATALOG");
    long seed = -1;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtol(argv[++i], NULL, 10);
        else
            path = argv[i];
    }
    if (!path || rounds < 1) {
        fprintf(stderr, "test_multigpu: no catalog (argument or CONVCAT_TEST_CATALOG), or --rounds below 1\n");
        return 99;
    }
    int devices = 0;
    char name[128];
    convcat_status st = cvc_verify_device_count(&devices);
    if (st == CONVCAT_OK && devices > 0)
        st = cvc_verify_device(0, name, sizeof name);
    if (st == CONVCAT_ERR_NO_DRIVER || st == CONVCAT_ERR_NO_DEVICE || (st == CONVCAT_OK && devices == 0)) {
        printf("SKIP: no GPU to run the kernels on: %s\n", devices == 0 && st == CONVCAT_OK ? "no CUDA device" :
               convcat_last_error());
        return 77;
    }
    if (st != CONVCAT_OK || convcat_open(path, &catalog) != CONVCAT_OK) {
        fprintf(stderr, "test_multigpu: %s\n", convcat_last_error());
        return 99;
    }
    convcat_arch arch;
    convcat_device_arch(&arch, NULL);
    base_seed = seed >= 0 ? (unsigned)seed : (unsigned)time(NULL);
    shared_kernel = find_shared_kernel(arch);
    const int threads = devices > 1 ? devices : 2;
    printf("%d device(s), the first %s; catalog %s; base seed %u; %d threads; %d rounds\n", devices, name, path,
           base_seed, threads, rounds);
    if (shared_kernel == CONVCAT_AUTO)
        printf("no direct kernel of this catalog takes both shared-memory problems: that pair is not run\n");
    worker *w = calloc((size_t)threads, sizeof *w);
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    if (!w || !tid)
        return 99;
    pthread_barrier_init(&barrier, NULL, (unsigned)threads);
    for (int i = 0; i < threads; ++i) {
        w[i].ordinal = devices > 1 ? i : 0, w[i].thread = devices > 1 ? 0 : i;
        pthread_create(&tid[i], NULL, work, &w[i]);
    }
    int bad = 0;
    long long runs = 0, failures = 0;
    for (int i = 0; i < threads; ++i) {
        pthread_join(tid[i], NULL);
        printf("device %d, thread %d: %d plans, %lld runs checked, %lld wrong%s%s\n", w[i].ordinal, w[i].thread,
               w[i].count, w[i].runs, w[i].failures, w[i].error[0] ? "; error: " : "", w[i].error);
        bad |= w[i].error[0] != 0 || w[i].failures > 0 || w[i].runs != (long long)rounds * w[i].count;
        runs += w[i].runs, failures += w[i].failures;
    }
    for (int i = 0; i < w[0].count; ++i) {
        convcat_entry_info e;
        if (convcat_entry_info_get(catalog, w[0].index[i], &e) == CONVCAT_OK)
            printf("  %-46s %s\n", w[0].names[i], e.key);
    }
    if (devices > 1 && !bad)
        bad = cross_device(&w[0]);
    for (int i = 0; i < threads; ++i)
        for (int j = 0; j < w[i].count; ++j) {
            cvc_verify_device(w[i].ordinal, NULL, 0);
            cvc_verify_case_free(w[i].cases[j]);
            convcat_plan_destroy(w[i].plans[j]);
        }
    printf("%lld runs on %d device(s), %lld wrong: %s\n", runs, devices > 1 ? devices : 1, failures,
           bad ? "FAILED" : "passed");
    convcat_close(catalog);
    if (!bad && devices < 2) {
        printf("SKIP: one GPU: its two threads passed; plans on two devices and a plan refused on another "
               "device need two GPUs\n");
        return 77;
    }
    return bad;
}
