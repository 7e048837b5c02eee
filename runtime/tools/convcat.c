/* convcat: the command line of the convcat catalog.
 *
 *   convcat [--catalog PATH] list [--arch A] [--op O] [--dims D] [--dtype T] [--match TEXT]
 *   convcat [--catalog PATH] info KEY
 *   convcat [--catalog PATH] query PROBLEM [--arch A] [--all]
 *   convcat [--catalog PATH] run KEY|auto|tune PROBLEM [--verify] [--time N] [--device N] [--cache FILE]
 *                                          [--alpha A] [--beta B] [--bias] [--act ACT] [--seed S]
 *
 * PROBLEM flags follow cutlass_profiler's names: --n --d --h --w --c --k --t --r --s
 * --pad_d --pad_h --pad_w (both sides; --pad_X_hi overrides the high side)
 * --stride_d/h/w --dilation_d/h/w --groups, plus --op fprop|dgrad|wgrad,
 * --dims 1|2|3 (default: 3 if any D/T flag is given, else 2), --dtype T (all
 * three tensors), --a_type --b_type --out_type, --mode xcorr|conv.
 *
 * Exit status: 0 success, 1 the work failed (refused, wrong answer, driver
 * error), 2 bad command line or catalog.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convcat.h"
#include "verify.h"

#ifndef CONVCAT_BUILD_CATALOG
#define CONVCAT_BUILD_CATALOG ""
#endif
#ifndef CONVCAT_INSTALL_CATALOG
#define CONVCAT_INSTALL_CATALOG ""
#endif

static const char usage[] =
    "usage: convcat [--catalog PATH] COMMAND ...\n"
    "\n"
    "commands:\n"
    "  list [--arch A] [--op O] [--dims D] [--dtype T] [--match TEXT]   the catalog's kernels\n"
    "  info KEY                                                      one kernel's index entry\n"
    "  query PROBLEM [--arch A] [--all]        kernels that can run PROBLEM, ranked; why not the rest\n"
    "  run KEY|auto|tune PROBLEM [--verify] [--time N] [--device N] [--alpha A] [--beta B] [--bias]\n"
    "                            [--act relu|gelu|silu] [--seed S] [--cache FILE]\n"
    "                                          run on the GPU; --verify checks against a reference\n"
    "                                          of act(alpha * conv + bias + beta * C), random bias and C\n"
    "                                          (dgrad, wgrad: alpha * conv + beta * C; no bias or act);\n"
    "                                          `tune` times every kernel that can run PROBLEM (or takes\n"
    "                                          the winner remembered in --cache FILE) and runs the fastest\n"
    "\n"
    "PROBLEM: --n --d --h --w --c --k --t --r --s  extents (x: NDHWC, w: KTRSC), default 1\n"
    "         --pad_d --pad_h --pad_w [--pad_d_hi --pad_h_hi --pad_w_hi]  padding (default 0)\n"
    "         --stride_d --stride_h --stride_w --dilation_d --dilation_h --dilation_w --groups\n"
    "         --op fprop|dgrad|wgrad  --dims 1|2|3  --dtype f16|bf16|...  --a_type --b_type --out_type\n"
    "         --mode xcorr|conv\n"
    "\n"
    "The catalog is --catalog, else $CONVCAT_CATALOG, else the build tree's, else the installed one.\n";

static int fail(int code, const char *fmt, const char *arg)
{
    fprintf(stderr, "convcat: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return code;
}

static int fail_status(const char *what, convcat_status st)
{
    fprintf(stderr, "convcat: %s: %s: %s\n", what, convcat_status_string(st), convcat_last_error());
    return st == CONVCAT_ERR_CORRUPT || st == CONVCAT_ERR_VERSION || st == CONVCAT_ERR_IO ? 2 : 1;
}

static int parse_int(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < -1000000000L || v > 1000000000L)
        return 0;
    *out = (int)v;
    return 1;
}

static int parse_enum(const char *s, const char *(*name)(int), int lo, int hi)
{
    for (int v = lo; v <= hi; ++v)
        if (name(v) && strcmp(name(v), s) == 0)
            return v;
    return -1;
}

static const char *dtype_name(int v) { return convcat_dtype_name((convcat_dtype)v); }
static const char *op_name(int v) { return convcat_op_name((convcat_op)v); }
static const char *arch_name(int v) { return convcat_arch_name((convcat_arch)v); }

/* ---- problem flags ------------------------------------------------------- */

typedef struct opts {
    convcat_problem p;
    int dims_given, any_3d, pad_hi_given[3];
    /* command options */
    int arch, all, verify, bias, time_iters, device, seed;
    convcat_activation act;
    float alpha, beta;
    int op_filter, dims_filter, dtype_filter;
    const char *match, *cache;
} opts;

static int set_int_flag(opts *o, const char *flag, const char *val)
{
    struct { const char *name; int *field; int is_3d; } ints[] = {
        {"n", &o->p.n, 0}, {"d", &o->p.d, 1}, {"h", &o->p.h, 0}, {"w", &o->p.w, 0},
        {"c", &o->p.c, 0}, {"k", &o->p.k, 0}, {"t", &o->p.t, 1}, {"r", &o->p.r, 0},
        {"s", &o->p.s, 0}, {"groups", &o->p.groups, 0},
        {"stride_d", &o->p.stride[0], 1}, {"stride_h", &o->p.stride[1], 0}, {"stride_w", &o->p.stride[2], 0},
        {"dilation_d", &o->p.dilation[0], 1}, {"dilation_h", &o->p.dilation[1], 0},
        {"dilation_w", &o->p.dilation[2], 0},
        {"pad_d_hi", &o->p.pad_hi[0], 1}, {"pad_h_hi", &o->p.pad_hi[1], 0}, {"pad_w_hi", &o->p.pad_hi[2], 0},
        {"device", &o->device, 0}, {"seed", &o->seed, 0}, {"time", &o->time_iters, 0}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; ++i) {
        if (strcmp(flag, ints[i].name) == 0) {
            if (!parse_int(val, ints[i].field))
                return fail(2, "--%s needs an integer", flag);
            o->any_3d |= ints[i].is_3d;
            if (strncmp(flag, "pad_", 4) == 0)
                o->pad_hi_given[flag[4] == 'd' ? 0 : flag[4] == 'h' ? 1 : 2] = 1;
            return 0;
        }
    }
    static const char *const pads[3] = {"pad_d", "pad_h", "pad_w"};
    for (int a = 0; a < 3; ++a) {
        if (strcmp(flag, pads[a]) == 0) {
            if (!parse_int(val, &o->p.pad_lo[a]))
                return fail(2, "--%s needs an integer", flag);
            if (!o->pad_hi_given[a])
                o->p.pad_hi[a] = o->p.pad_lo[a];
            o->any_3d |= a == 0;
            return 0;
        }
    }
    return -1;
}

static int set_flag(opts *o, const char *flag, const char *val)
{
    int r = set_int_flag(o, flag, val), v;
    if (r >= 0)
        return r;
    if (strcmp(flag, "dims") == 0) {
        if (!parse_int(val, &o->p.dims) || o->p.dims < 1 || o->p.dims > 3)
            return fail(2, "--dims is 1, 2 or 3, not %s", val);
        o->dims_given = 1;
    } else if (strcmp(flag, "op") == 0) {
        if ((v = parse_enum(val, op_name, 0, 2)) < 0)
            return fail(2, "unknown --op %s (fprop, dgrad, wgrad)", val);
        o->p.op = o->op_filter = v;
    } else if (strcmp(flag, "dtype") == 0 || strcmp(flag, "a_type") == 0 || strcmp(flag, "b_type") == 0 ||
               strcmp(flag, "out_type") == 0) {
        if ((v = parse_enum(val, dtype_name, 1, 6)) < 0)
            return fail(2, "unknown data type %s (f16, bf16, tf32, f32, e4m3, e5m2)", val);
        if (flag[0] == 'd' || flag[0] == 'a')
            o->p.a_type = v;
        if (flag[0] == 'd' || flag[0] == 'b')
            o->p.b_type = v;
        if (flag[0] == 'd' || flag[0] == 'o')
            o->p.out_type = v;
        if (flag[0] == 'd')
            o->dtype_filter = v;
    } else if (strcmp(flag, "mode") == 0) {
        if (strcmp(val, "xcorr") != 0 && strcmp(val, "conv") != 0)
            return fail(2, "--mode is xcorr or conv, not %s", val);
        o->p.mode = val[0] == 'c' ? CONVCAT_CONVOLUTION : CONVCAT_CROSS_CORRELATION;
    } else if (strcmp(flag, "arch") == 0) {
        if ((o->arch = parse_enum(val, arch_name, 1, 2)) < 0)
            return fail(2, "unknown --arch %s (sm90a, sm100a)", val);
    } else if (strcmp(flag, "alpha") == 0 || strcmp(flag, "beta") == 0) {
        char *end;
        float f = strtof(val, &end);
        if (!*val || *end)
            return fail(2, "--alpha/--beta needs a number, not %s", val);
        *(flag[0] == 'a' ? &o->alpha : &o->beta) = f;
    } else if (strcmp(flag, "act") == 0) {
        static const char *const acts[] = {"none", "relu", "gelu", "silu"};
        o->act = (convcat_activation)-1;
        for (int a = 0; a < 4; ++a)
            if (strcmp(val, acts[a]) == 0)
                o->act = (convcat_activation)a;
        if ((int)o->act < 0)
            return fail(2, "--act is none, relu, gelu or silu, not %s", val);
    } else if (strcmp(flag, "match") == 0) {
        o->match = val;
    } else if (strcmp(flag, "cache") == 0) {
        o->cache = val;
    } else {
        return fail(2, "unknown option --%s (convcat --help)", flag);
    }
    return 0;
}

/* Parse "--flag value" / "--flag=value" pairs and switches; positional args out. */
static int parse_args(int argc, char **argv, opts *o, char **pos, int max_pos, int *npos)
{
    *npos = 0;
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) {
            if (*npos == max_pos)
                return fail(2, "unexpected argument %s", a);
            pos[(*npos)++] = argv[i];
            continue;
        }
        a += 2;
        if (strcmp(a, "all") == 0 || strcmp(a, "verify") == 0 || strcmp(a, "bias") == 0) {
            *(a[0] == 'a' ? &o->all : a[0] == 'v' ? &o->verify : &o->bias) = 1;
            continue;
        }
        char flag[64];
        const char *eq = strchr(a, '='), *val;
        if (eq) {
            snprintf(flag, sizeof flag, "%.*s", (int)(eq - a), a);
            val = eq + 1;
        } else {
            if (i + 1 >= argc)
                return fail(2, "--%s needs a value", a);
            snprintf(flag, sizeof flag, "%s", a);
            val = argv[++i];
        }
        int r = set_flag(o, flag, val);
        if (r)
            return r;
    }
    if (!o->dims_given)
        o->p.dims = o->any_3d ? 3 : 2;
    return 0;
}

static void print_problem(const convcat_problem *p)
{
    int z = 0, pp = 0, q = 0;
    const convcat_status st = convcat_problem_output(p, &z, &pp, &q);
    printf("problem: %s %dD %s x %s -> %s  N %d", convcat_op_name(p->op) ? convcat_op_name(p->op) : "?", p->dims,
           convcat_dtype_name(p->a_type) ? convcat_dtype_name(p->a_type) : "?",
           convcat_dtype_name(p->b_type) ? convcat_dtype_name(p->b_type) : "?",
           convcat_dtype_name(p->out_type) ? convcat_dtype_name(p->out_type) : "?", p->n);
    if (p->dims == 3)
        printf(" D %d", p->d);
    if (p->dims >= 2)
        printf(" H %d", p->h);
    printf(" W %d C %d -> K %d, filter", p->w, p->c, p->k);
    if (p->dims == 3)
        printf(" %dx", p->t);
    if (p->dims >= 2)
        printf(" %dx", p->r);
    printf("%d, pad %d/%d %d/%d %d/%d, stride %d %d %d, dilation %d %d %d", p->s, p->pad_lo[0], p->pad_hi[0],
           p->pad_lo[1], p->pad_hi[1], p->pad_lo[2], p->pad_hi[2], p->stride[0], p->stride[1], p->stride[2],
           p->dilation[0], p->dilation[1], p->dilation[2]);
    if (p->groups != 1)
        printf(", groups %d", p->groups);
    if (st != CONVCAT_OK) {
        printf("\n         invalid: %s\n", convcat_last_error());
        return;
    }
    printf("\n         output Z %d P %d Q %d, %.3f GFLOP\n", z, pp, q, convcat_problem_flops(p) / 1e9);
    if (p->op == CONVCAT_DGRAD)
        printf("         dgrad: reads dy (N x Z x P x Q x K) and w, writes dx (N x D x H x W x C)\n");
    if (p->op == CONVCAT_WGRAD)
        printf("         wgrad: reads dy (N x Z x P x Q x K) and x, writes dw (K x T x R x S x C%s)\n",
               p->groups > 1 ? " / groups" : "");
}

/* ---- commands ------------------------------------------------------------ */

static int cmd_list(const convcat_catalog *cat, const opts *o)
{
    size_t shown = 0;
    printf("%-64s %7s %8s %5s %8s\n", "key", "threads", "smem KB", "regs", "code KB");
    for (size_t i = 0; i < convcat_count(cat); ++i) {
        convcat_entry_info e;
        convcat_entry_info_get(cat, i, &e);
        if ((o->arch && (int)e.arch != o->arch) || (o->op_filter >= 0 && (int)e.op != o->op_filter) ||
            (o->dims_given && e.dims != o->p.dims) || (o->dtype_filter && (int)e.a_type != o->dtype_filter) ||
            (o->match && !strstr(e.key, o->match)))
            continue;
        printf("%-64s %7d %8.1f %5d %8.1f\n", e.key, e.threads, e.smem_bytes / 1024.0, e.registers,
               e.code_bytes / 1024.0);
        ++shown;
    }
    printf("%zu of %zu kernels\n", shown, convcat_count(cat));
    return 0;
}

static int cmd_info(const convcat_catalog *cat, const char *key)
{
    size_t i;
    convcat_status st = convcat_find(cat, key, &i);
    if (st != CONVCAT_OK)
        return fail_status("info", st);
    convcat_entry_info e;
    convcat_entry_info_get(cat, i, &e);
    printf("key          %s\narch         %s\nop           %s\ndims         %d\n", e.key, convcat_arch_name(e.arch),
           convcat_op_name(e.op), e.dims);
    printf("types        %s x %s -> %s (accumulate %s)\n", convcat_dtype_name(e.a_type), convcat_dtype_name(e.b_type),
           convcat_dtype_name(e.out_type), convcat_dtype_name(e.acc_type));
    printf("tile         %d x %d x %d, %d stages, cluster %d x %d, schedule %s\n", e.tile_m, e.tile_n, e.tile_k,
           e.stages, e.cluster_m, e.cluster_n, convcat_schedule_name(e.schedule));
    if (e.fallback_m)
        printf("cluster      dynamic: prefers %d x %d, falls back to %d x %d (two descriptor sets)\n", e.cluster_m,
               e.cluster_n, e.fallback_m, e.fallback_n);
    printf("launch       %d threads, %d bytes dynamic shared memory, %d registers\ncode         %zu bytes\n",
           e.threads, e.smem_bytes, e.registers, e.code_bytes);
    return 0;
}

static int cmd_query(const convcat_catalog *cat, const opts *o)
{
    print_problem(&o->p);
    size_t n = convcat_count(cat), rows = 0, ok = 0;
    convcat_candidate *c = calloc(n ? n : 1, sizeof *c);
    if (!c)
        return fail(1, "%s", "out of memory");
    int sms = 0;
    convcat_arch arch = (convcat_arch)o->arch;
    if (!o->arch && convcat_device_arch(&arch, &sms) != CONVCAT_OK)
        arch = CONVCAT_ARCH_ANY;   /* no GPU here: rank every arch */
    convcat_status st = convcat_query(cat, &o->p, arch, sms, c, n, &rows, &ok);
    if (st != CONVCAT_OK) {
        free(c);
        return fail_status("query", st);
    }
    if (ok)
        printf("\n%4s %12s  %s\n", "rank", "predicted", "kernel");
    for (size_t i = 0; i < ok; ++i) {
        convcat_entry_info e;
        convcat_entry_info_get(cat, c[i].index, &e);
        printf("%4zu %9.1f us  %s\n", i + 1, c[i].predicted_us, e.key);
    }
    printf("\n%zu of %zu %s kernels can run it", ok, rows, arch ? convcat_arch_name(arch) : "catalog");
    if (rows > ok) {
        printf("; the others cannot:\n");
        const size_t limit = o->all ? rows : ok + 20;
        for (size_t i = ok; i < rows && i < limit; ++i) {
            convcat_entry_info e;
            convcat_entry_info_get(cat, c[i].index, &e);
            printf("  %s: %s\n", e.key, c[i].reason);
        }
        if (rows > limit)
            printf("  ... %zu more (--all lists every one)\n", rows - limit);
    } else {
        printf("\n");
    }
    free(c);
    return ok ? 0 : 1;
}

/* Autotune p (through the cache file, if any) and return the winner's index. */
static int tune(const convcat_catalog *cat, const opts *o, size_t *index)
{
    convcat_tune_cache *cache = NULL;
    char warning[512] = "";
    convcat_status st;
    if (o->cache && (st = convcat_tune_cache_load(o->cache, &cache, warning, sizeof warning)) != CONVCAT_OK)
        return fail_status("tune cache", st);
    if (*warning)
        fprintf(stderr, "convcat: warning: %s\n", warning);
    double ms = 0;
    st = cvc_verify_autotune(cat, &o->p, cache, 20, index, &ms);
    if (st == CONVCAT_OK) {
        convcat_entry_info e;
        convcat_entry_info_get(cat, *index, &e);
        printf("tuned:   %s, median %.4f ms\n", e.key, ms);
        if (o->cache)
            st = convcat_tune_cache_save(cache, o->cache);
    }
    convcat_tune_cache_free(cache);
    return st == CONVCAT_OK ? 0 : fail_status("tune", st);
}

static int cmd_run(const convcat_catalog *cat, const char *which, const opts *o)
{
    size_t index = CONVCAT_AUTO;
    convcat_status st;
    const int tuning = strcmp(which, "tune") == 0;
    if (!tuning && strcmp(which, "auto") != 0 && (st = convcat_find(cat, which, &index)) != CONVCAT_OK)
        return fail_status("run", st);
    print_problem(&o->p);
    char name[128] = "";
    if ((st = cvc_verify_device(o->device, name, sizeof name)) != CONVCAT_OK)
        return fail_status("run", st);
    printf("device:  %d, %s\n", o->device, name);
    int r;
    if (tuning && (r = tune(cat, o, &index)) != 0)
        return r;
    int code = 0;
    if (o->verify || !o->time_iters) {
        cvc_verify v;
        const cvc_epilogue epi = {.alpha = o->alpha, .beta = o->beta, .bias = o->bias, .activation = o->act};
        st = cvc_verify_run(cat, &o->p, index, (unsigned)o->seed, &epi, CVC_SABOTAGE_NONE, &v);
        if (st != CONVCAT_OK)
            return fail_status("run", st);
        convcat_entry_info e;
        convcat_entry_info_get(cat, v.index, &e);
        printf("kernel:  %s\n", e.key);
        if (v.workspace_bytes)
            printf("workspace: %zu bytes\n", v.workspace_bytes);
        if (o->verify) {
            printf("verify:  %s  rel. error %.3e (bound %.0e), %lld non-finite and %lld outlying outputs\n",
                   v.passed ? "PASS" : "FAIL", v.rel_err, v.tolerance, v.nonfinite, v.outliers);
            code = v.passed ? 0 : 1;
        } else {
            printf("ran:     ok (add --verify to check the result)\n");
        }
    }
    if (o->time_iters) {
        double ms;
        size_t used;
        if ((st = cvc_time_run(cat, &o->p, index, o->time_iters, &ms, &used)) != CONVCAT_OK)
            return fail_status("run --time", st);
        convcat_entry_info e;
        convcat_entry_info_get(cat, used, &e);
        printf("time:    %s  median %.4f ms of %d, %.1f TFLOP/s\n", e.key, ms, o->time_iters,
               convcat_problem_flops(&o->p) / (ms * 1e-3) / 1e12);
    }
    return code;
}

int main(int argc, char **argv)
{
    const char *path = getenv("CONVCAT_CATALOG");
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; ++i) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        }
        if (strcmp(argv[i], "--catalog") == 0 && i + 1 < argc)
            path = argv[++i];
        else if (strncmp(argv[i], "--catalog=", 10) == 0)
            path = argv[i] + 10;
        else
            return fail(2, "unknown option %s (convcat --help)", argv[i]);
    }
    if (i >= argc) {
        fputs(usage, stderr);
        return 2;
    }
    const char *cmd = argv[i++];
    if (!path || !*path)
        path = access(CONVCAT_BUILD_CATALOG, R_OK) == 0 ? CONVCAT_BUILD_CATALOG : CONVCAT_INSTALL_CATALOG;
    opts o = {.arch = 0, .op_filter = -1, .alpha = 1.0f, .seed = 2026};
    convcat_problem_init(&o.p);
    char *pos[2];
    int npos;
    const int max_pos = strcmp(cmd, "run") == 0 || strcmp(cmd, "info") == 0 ? 1 : 0;
    if (strcmp(cmd, "list") && strcmp(cmd, "info") && strcmp(cmd, "query") && strcmp(cmd, "run"))
        return fail(2, "unknown command %s (convcat --help)", cmd);
    int r = parse_args(argc - i, argv + i, &o, pos, max_pos, &npos);
    if (r)
        return r;
    if (npos != max_pos)
        return fail(2, "%s needs a kernel key (convcat --help)", cmd);
    convcat_catalog *cat;
    convcat_status st = convcat_open(path, &cat);
    if (st != CONVCAT_OK)
        return fail_status(path, st);
    if (strcmp(cmd, "list") == 0)
        r = cmd_list(cat, &o);
    else if (strcmp(cmd, "info") == 0)
        r = cmd_info(cat, pos[0]);
    else if (strcmp(cmd, "query") == 0)
        r = cmd_query(cat, &o);
    else
        r = cmd_run(cat, pos[0], &o);
    convcat_close(cat);
    return r;
}
