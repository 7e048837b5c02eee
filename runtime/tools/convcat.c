/* convcat: the command line of the convcat catalog.
 *
 *   convcat [--catalog PATH]... list [--arch A] [--op O] [--dims D] [--dtype T] [--match TEXT] [--json]
 *   convcat [--catalog PATH]... info KEY [--json]
 *   convcat [--catalog PATH]... query PROBLEM [--arch A] [--all] [--json]
 *   convcat [--catalog PATH]... run KEY|auto|tune PROBLEM [--verify] [--time N] [--device N] [--cache FILE]
 *                                          [--alpha A] [--beta B] [--bias] [--act ACT] [--seed S]
 *   convcat --version | --help | COMMAND --help
 *
 * PROBLEM flags follow cutlass_profiler's names (usage below).  Every
 * command takes -h/--help; options may come before or after the command.
 *
 * The catalog: every --catalog PATH (several are queried together, a key in
 * more than one taken from the first), else $CONVCAT_CATALOG, else the build
 * tree's when this program runs from the build tree, else the installed one
 * (convcat_open_default's search).
 *
 * Exit status: 0 success; 1 the work failed (no kernel can run the problem,
 * no kernel of that key, a refused plan, a wrong answer, a driver error); 2 an
 * invalid command line (an unknown command or option, a bad value, an invalid
 * problem) or no usable catalog.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "convcat.h"
#include "coverage.h"
#include "verify.h"

#ifndef CONVCAT_BUILD_CATALOG
#define CONVCAT_BUILD_CATALOG ""
#endif
#ifndef CONVCAT_BUILD_DIR
#define CONVCAT_BUILD_DIR ""
#endif
#ifndef CONVCAT_SOVERSION
#define CONVCAT_SOVERSION "?"
#endif

#define MAX_CATALOGS 16

static const char usage_problem[] =
    "PROBLEM: --n --d --h --w --c --k --t --r --s   extents (x: N x D x H x W x C, w: K x T x R x S x C/groups),\n"
    "                                              default 1\n"
    "         --pad_d --pad_h --pad_w              padding of both sides (default 0);\n"
    "         --pad_d_hi --pad_h_hi --pad_w_hi     the high side alone\n"
    "         --stride_d --stride_h --stride_w --dilation_d --dilation_h --dilation_w   (default 1)\n"
    "         --groups G                           (default 1; G divides C and K)\n"
    "         --op fprop|dgrad|wgrad               (default fprop)\n"
    "         --dims 1|2|3                         (default 3 if a D or T flag is given, else 2)\n"
    "         --dtype T                            the tensors' type: f16 (fp16, half), bf16 (bfloat16),\n"
    "                                              tf32 (f32 tensors, TF32 tensor-core math, f32 output),\n"
    "                                              e4m3, e5m2 (fp8); f32 (fp32, float) would be full-f32\n"
    "                                              math, which no kernel does: use tf32\n"
    "         --a_type --b_type --out_type T       one operand's type, over --dtype\n"
    "         --mode xcorr|conv                    (default xcorr, what frameworks call convolution)\n";

static const char usage_main[] =
    "usage: convcat [--catalog PATH]... COMMAND [OPTIONS]\n"
    "       convcat --version | --help | COMMAND --help\n"
    "\n"
    "commands:\n"
    "  list   the catalog's kernels\n"
    "  info   one kernel's index entry\n"
    "  query  the kernels that can run a problem, ranked by a time model, and why not the others\n"
    "  run    run a kernel on the GPU, verify it against a reference, time it, or autotune\n"
    "  coverage  which rows of problem files (bench/*.txt) the catalog can run, per data type\n"
    "  help   this text, or a command's (convcat help query)\n"
    "\n"
    "--catalog PATH: the catalog file; several are queried together (a key in more than one is\n"
    "taken from the first given).  Without one: $CONVCAT_CATALOG, else the build tree's catalog\n"
    "when convcat runs from its build tree, else the installed one (share/convcat/convcat.catalog\n"
    "of convcat's prefix).\n"
    "\n"
    "Exit status: 0 success; 1 the work failed (no kernel can run the problem, no kernel of that\n"
    "key, a refused plan, a wrong answer, a driver error); 2 an invalid command line (unknown\n"
    "command or option, a bad value, an invalid problem such as --n -5, --groups 0 or\n"
    "--stride_h 0) or no usable catalog (none found, unreadable, corrupt, another version).\n"
    "\n"
    "CONVCAT_LOG=1 makes the library say which kernel each plan takes and why (on stderr).\n";

static const char usage_list[] =
    "usage: convcat list [--arch sm90a|sm100a] [--op fprop|dgrad|wgrad] [--dims 1|2|3] [--dtype T]\n"
    "                    [--match TEXT] [--json]\n"
    "\n"
    "The catalog's kernels: key, threads, shared memory, registers, code size.  --dtype filters by\n"
    "the input type (tf32: the kernels that take f32 tensors with TF32 math); --match by a part of\n"
    "the key.  --json: one JSON document, {\"catalogs\": [...], \"kernels\": [one object per kernel]}.\n";

static const char usage_info[] =
    "usage: convcat info KEY [--json]\n"
    "\n"
    "One kernel's index entry: arch, op, types, tile, stages, cluster, schedule, threads, shared\n"
    "memory, registers, code size.  --json: one JSON object.\n";

static const char usage_query[] =
    "usage: convcat query PROBLEM [--arch sm90a|sm100a] [--all] [--json]\n"
    "\n"
    "The kernels that can run PROBLEM, fastest predicted first, and for every other kernel the rule\n"
    "it breaks (the first 20; --all: every one).  Needs no GPU: without one every arch is ranked,\n"
    "--arch names one.  --json: one JSON document, {\"problem\": ..., \"candidates\": [one object per\n"
    "kernel, with its rank and prediction or its reason]}.  Exit status 1 when no kernel can run it.\n"
    "\n";

static const char usage_run[] =
    "usage: convcat run KEY|auto|tune PROBLEM [--verify] [--time N] [--device N] [--alpha A] [--beta B]\n"
    "                  [--bias] [--act none|relu|gelu|silu] [--seed S] [--cache FILE]\n"
    "\n"
    "Run on GPU --device N (default 0): KEY, or `auto` (the time model's pick), or `tune` (time every\n"
    "kernel that can run PROBLEM, or take the winner remembered in --cache FILE, and run the fastest;\n"
    "one catalog only).  --verify draws fresh random inputs (a random bias and residual where asked),\n"
    "poisons the output with NaN and compares with a direct convolution of\n"
    "act(alpha * conv + bias + beta * C) (dgrad, wgrad: alpha * conv + beta * C; no bias or act).\n"
    "--time N prints the median of N launches.\n"
    "\n";

static const char usage_coverage[] =
    "usage: convcat coverage FILE... [--dtypes T,T,...] [--arch sm90a|sm100a] [--json]\n"
    "\n"
    "For every row of every problem file (the columns of bench/layers.txt) and every type (default\n"
    "f16,bf16,tf32): the number of kernels that can run it and the time model's pick, or the reason\n"
    "the kernel closest to it gives.  Needs no GPU.  Exit status 1 when a row and type has no kernel.\n"
    "\n";

static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("convcat: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

/* A library failure: 2 for an unusable catalog, 1 for work that failed. */
static int fail_status(const char *what, convcat_status st)
{
    fprintf(stderr, "convcat: %s: %s: %s\n", what, convcat_status_string(st), convcat_last_error());
    return st == CONVCAT_ERR_CORRUPT || st == CONVCAT_ERR_VERSION || st == CONVCAT_ERR_IO ? 2 : 1;
}

/* An int in [lo, hi]; 0 after printing why not. */
static int parse_int(const char *flag, const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (!*s || *end) {
        fail(2, "--%s: '%s' is not an integer", flag, s);
        return 0;
    }
    if (errno == ERANGE || v < lo || v > hi) {
        fail(2, "--%s: %s is out of range (%ld to %ld)", flag, s, lo, hi);
        return 0;
    }
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

static const char *op_name(int v) { return convcat_op_name((convcat_op)v); }
static const char *arch_name(int v) { return convcat_arch_name((convcat_arch)v); }

/* A data type as users spell it; 0 if unknown. */
static convcat_dtype parse_dtype(const char *s)
{
    static const struct { const char *name; convcat_dtype t; } names[] = {
        {"f16", CONVCAT_F16},      {"fp16", CONVCAT_F16},       {"float16", CONVCAT_F16},
        {"half", CONVCAT_F16},     {"bf16", CONVCAT_BF16},      {"bfloat16", CONVCAT_BF16},
        {"tf32", CONVCAT_TF32},    {"f32", CONVCAT_F32},        {"fp32", CONVCAT_F32},
        {"float32", CONVCAT_F32},  {"float", CONVCAT_F32},      {"e4m3", CONVCAT_E4M3},
        {"fp8_e4m3", CONVCAT_E4M3}, {"float8_e4m3fn", CONVCAT_E4M3}, {"e4m3fn", CONVCAT_E4M3},
        {"e5m2", CONVCAT_E5M2},    {"fp8_e5m2", CONVCAT_E5M2},  {"float8_e5m2", CONVCAT_E5M2}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (strcasecmp(s, names[i].name) == 0)
            return names[i].t;
    return (convcat_dtype)0;
}

/* ---- options ------------------------------------------------------------- */

enum { CMD_LIST, CMD_INFO, CMD_QUERY, CMD_RUN, CMD_COVERAGE, CMD_COUNT };
static const char *const cmd_names[CMD_COUNT] = {"list", "info", "query", "run", "coverage"};
static const char *const cmd_usage[CMD_COUNT] = {usage_list, usage_info, usage_query, usage_run, usage_coverage};

typedef struct opts {
    convcat_problem p;
    int dims_given, any_3d, pad_hi_given[3];
    convcat_dtype dtype, a_type, b_type, out_type;   /* as given (0: not) */
    int arch, all, verify, bias, json, time_iters, device, seed;
    convcat_activation act;
    float alpha, beta;
    int op_filter;
    const char *match, *cache;
    convcat_dtype dtypes[8];
    int ndtypes;
    const char *catalogs[MAX_CATALOGS];
    int ncatalogs;
} opts;

static void print_usage(FILE *f, int cmd)
{
    fputs(cmd_usage[cmd], f);
    if (cmd == CMD_QUERY || cmd == CMD_RUN)
        fputs(usage_problem, f);
}

/* Options each command takes. */
#define F_PROBLEM 1
#define F_LIST 2
#define F_QUERY 4
#define F_RUN 8
#define F_JSON 16
#define F_COVER 32

static int allowed(int cmd)
{
    switch (cmd) {
    case CMD_LIST: return F_LIST | F_JSON;
    case CMD_INFO: return F_JSON;
    case CMD_QUERY: return F_PROBLEM | F_QUERY | F_JSON;
    case CMD_COVERAGE: return F_COVER | F_JSON;
    default: return F_PROBLEM | F_RUN;
    }
}

typedef struct int_flag {
    const char *name;
    size_t offset;   /* into opts */
    int is_3d, group;
    long lo, hi;
} int_flag;

#define OPT(field) offsetof(opts, field)
static const int_flag int_flags[] = {
    {"n", OPT(p.n), 0, F_PROBLEM, INT_MIN, INT_MAX},
    {"d", OPT(p.d), 1, F_PROBLEM, INT_MIN, INT_MAX},
    {"h", OPT(p.h), 0, F_PROBLEM, INT_MIN, INT_MAX},
    {"w", OPT(p.w), 0, F_PROBLEM, INT_MIN, INT_MAX},
    {"c", OPT(p.c), 0, F_PROBLEM, INT_MIN, INT_MAX},
    {"k", OPT(p.k), 0, F_PROBLEM, INT_MIN, INT_MAX},
    {"t", OPT(p.t), 1, F_PROBLEM, INT_MIN, INT_MAX},
    {"r", OPT(p.r), 0, F_PROBLEM, INT_MIN, INT_MAX},
    {"s", OPT(p.s), 0, F_PROBLEM, INT_MIN, INT_MAX},
    {"groups", OPT(p.groups), 0, F_PROBLEM, INT_MIN, INT_MAX},
    {"stride_d", OPT(p.stride[0]), 1, F_PROBLEM, INT_MIN, INT_MAX},
    {"stride_h", OPT(p.stride[1]), 0, F_PROBLEM, INT_MIN, INT_MAX},
    {"stride_w", OPT(p.stride[2]), 0, F_PROBLEM, INT_MIN, INT_MAX},
    {"dilation_d", OPT(p.dilation[0]), 1, F_PROBLEM, INT_MIN, INT_MAX},
    {"dilation_h", OPT(p.dilation[1]), 0, F_PROBLEM, INT_MIN, INT_MAX},
    {"dilation_w", OPT(p.dilation[2]), 0, F_PROBLEM, INT_MIN, INT_MAX},
    {"pad_d", OPT(p.pad_lo[0]), 1, F_PROBLEM, INT_MIN, INT_MAX},
    {"pad_h", OPT(p.pad_lo[1]), 0, F_PROBLEM, INT_MIN, INT_MAX},
    {"pad_w", OPT(p.pad_lo[2]), 0, F_PROBLEM, INT_MIN, INT_MAX},
    {"pad_d_hi", OPT(p.pad_hi[0]), 1, F_PROBLEM, INT_MIN, INT_MAX},
    {"pad_h_hi", OPT(p.pad_hi[1]), 0, F_PROBLEM, INT_MIN, INT_MAX},
    {"pad_w_hi", OPT(p.pad_hi[2]), 0, F_PROBLEM, INT_MIN, INT_MAX},
    {"device", OPT(device), 0, F_RUN, 0, INT_MAX},
    {"seed", OPT(seed), 0, F_RUN, INT_MIN, INT_MAX},
    {"time", OPT(time_iters), 0, F_RUN, 0, 1000000},
};

static int unknown_here(int cmd, const char *flag)
{
    return fail(2, "%s: --%s is not an option of %s (convcat %s --help)", cmd_names[cmd], flag, cmd_names[cmd],
                cmd_names[cmd]);
}

/* One "--flag value"; 0 on success, else the exit status. */
static int set_flag(opts *o, int cmd, const char *flag, const char *val)
{
    const int ok = allowed(cmd);
    for (size_t i = 0; i < sizeof int_flags / sizeof int_flags[0]; ++i) {
        const int_flag *f = &int_flags[i];
        if (strcmp(flag, f->name) != 0)
            continue;
        if (!(ok & f->group))
            return unknown_here(cmd, flag);
        if (!parse_int(flag, val, f->lo, f->hi, (int *)((char *)o + f->offset)))
            return 2;
        o->any_3d |= f->is_3d;
        if (strncmp(flag, "pad_", 4) == 0) {
            const int axis = flag[4] == 'd' ? 0 : flag[4] == 'h' ? 1 : 2;
            if (strlen(flag) > 5)   /* pad_X_hi */
                o->pad_hi_given[axis] = 1;
            else if (!o->pad_hi_given[axis])
                o->p.pad_hi[axis] = o->p.pad_lo[axis];
        }
        return 0;
    }
    int v;
    if (strcmp(flag, "catalog") == 0) {
        if (!*val)
            return fail(2, "--catalog needs a path, not an empty string");
        if (o->ncatalogs == MAX_CATALOGS)
            return fail(2, "--catalog: at most %d catalogs", MAX_CATALOGS);
        o->catalogs[o->ncatalogs++] = val;
    } else if (strcmp(flag, "dims") == 0 && (ok & (F_PROBLEM | F_LIST))) {
        if (!parse_int(flag, val, 1, 3, &o->p.dims))
            return 2;
        o->dims_given = 1;
    } else if (strcmp(flag, "op") == 0 && (ok & (F_PROBLEM | F_LIST))) {
        if ((v = parse_enum(val, op_name, 0, 2)) < 0)
            return fail(2, "--op: unknown op '%s' (fprop, dgrad, wgrad)", val);
        o->p.op = o->op_filter = v;
    } else if ((strcmp(flag, "dtype") == 0 && (ok & (F_PROBLEM | F_LIST))) ||
               ((strcmp(flag, "a_type") == 0 || strcmp(flag, "b_type") == 0 || strcmp(flag, "out_type") == 0) &&
                (ok & F_PROBLEM))) {
        const convcat_dtype t = parse_dtype(val);
        if (!t)
            return fail(2, "--%s: unknown data type '%s' (f16, bf16, tf32, e4m3, e5m2; f32)", flag, val);
        *(flag[0] == 'd' ? &o->dtype : flag[0] == 'a' ? &o->a_type : flag[0] == 'b' ? &o->b_type : &o->out_type) = t;
    } else if (strcmp(flag, "mode") == 0 && (ok & F_PROBLEM)) {
        if (strcmp(val, "xcorr") != 0 && strcmp(val, "conv") != 0)
            return fail(2, "--mode is xcorr or conv, not '%s'", val);
        o->p.mode = val[0] == 'c' ? CONVCAT_CONVOLUTION : CONVCAT_CROSS_CORRELATION;
    } else if (strcmp(flag, "dtypes") == 0 && (ok & F_COVER)) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", val);
        o->ndtypes = 0;
        for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            const convcat_dtype d = parse_dtype(t);
            if (!d || o->ndtypes == 8)
                return fail(2, "--dtypes: '%s' is not a data type (f16, bf16, tf32, f32)", t);
            o->dtypes[o->ndtypes++] = d;
        }
    } else if (strcmp(flag, "arch") == 0 && (ok & (F_LIST | F_QUERY | F_COVER))) {
        if ((o->arch = parse_enum(val, arch_name, 1, 2)) < 0)
            return fail(2, "--arch: unknown arch '%s' (sm90a, sm100a)", val);
    } else if ((strcmp(flag, "alpha") == 0 || strcmp(flag, "beta") == 0) && (ok & F_RUN)) {
        char *end;
        errno = 0;
        const float f = strtof(val, &end);
        if (!*val || *end || errno == ERANGE || !isfinite(f))   /* strtof takes "inf" and "nan" */
            return fail(2, "--%s needs a finite number, not '%s'", flag, val);
        *(flag[0] == 'a' ? &o->alpha : &o->beta) = f;
    } else if (strcmp(flag, "act") == 0 && (ok & F_RUN)) {
        static const char *const acts[] = {"none", "relu", "gelu", "silu"};
        int a = 0;
        while (a < 4 && strcmp(val, acts[a]) != 0)
            ++a;
        if (a == 4)
            return fail(2, "--act is none, relu, gelu or silu, not '%s'", val);
        o->act = (convcat_activation)a;
    } else if (strcmp(flag, "match") == 0 && (ok & F_LIST)) {
        o->match = val;
    } else if (strcmp(flag, "cache") == 0 && (ok & F_RUN)) {
        o->cache = val;
    } else {
        static const char *const known[] = {"dims", "op", "dtype", "a_type", "b_type", "out_type", "mode", "arch",
                                            "alpha", "beta", "act", "match", "cache"};
        for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i)
            if (strcmp(flag, known[i]) == 0)
                return unknown_here(cmd, flag);
        return fail(2, "%s: unknown option --%s (convcat %s --help)", cmd_names[cmd], flag, cmd_names[cmd]);
    }
    return 0;
}

static const char *const switches[] = {"all", "verify", "bias", "json"};

/* The command's arguments: options in any order, at most `max_pos` positional ones.  Returns -1 when
 * help was printed (exit 0), else 0 or the exit status. */
static int parse_args(int argc, char **argv, int cmd, opts *o, char **pos, int max_pos, int *npos)
{
    *npos = 0;
    const int ok = allowed(cmd);
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            print_usage(stdout, cmd);
            return -1;
        }
        if (a[0] != '-' || a[1] == '\0') {
            if (*npos == max_pos)
                return max_pos ? fail(2, "%s: unexpected argument '%s' (one key only)", cmd_names[cmd], a)
                               : fail(2, "%s: unexpected argument '%s' (convcat %s --help)", cmd_names[cmd], a,
                                      cmd_names[cmd]);
            pos[(*npos)++] = argv[i];
            continue;
        }
        if (a[1] != '-')
            return fail(2, "%s: unknown option %s (convcat %s --help)", cmd_names[cmd], a, cmd_names[cmd]);
        a += 2;
        int sw = -1;
        for (int s = 0; s < 4; ++s)
            if (strcmp(a, switches[s]) == 0)
                sw = s;
        if (sw >= 0) {
            const int group[4] = {F_QUERY, F_RUN, F_RUN, F_JSON};
            if (!(ok & group[sw]))
                return unknown_here(cmd, a);
            *(sw == 0 ? &o->all : sw == 1 ? &o->verify : sw == 2 ? &o->bias : &o->json) = 1;
            continue;
        }
        char flag[64];
        const char *eq = strchr(a, '='), *val;
        if (eq) {
            snprintf(flag, sizeof flag, "%.*s", (int)(eq - a), a);
            val = eq + 1;
        } else {
            snprintf(flag, sizeof flag, "%s", a);
            if (i + 1 >= argc)
                return fail(2, "%s: --%s needs a value (convcat %s --help)", cmd_names[cmd], flag, cmd_names[cmd]);
            val = argv[++i];
        }
        const int r = set_flag(o, cmd, flag, val);
        if (r)
            return r;
    }
    if (!o->dims_given)
        o->p.dims = o->any_3d ? 3 : 2;
    /* Types: --dtype for all three (tf32: f32 tensors, so an f32 output), then each one given. */
    if (o->dtype) {
        o->p.a_type = o->p.b_type = o->dtype;
        o->p.out_type = o->dtype == CONVCAT_TF32 ? CONVCAT_F32 : o->dtype;
    }
    if (o->a_type)
        o->p.a_type = o->a_type;
    if (o->b_type)
        o->p.b_type = o->b_type;
    if (o->out_type)
        o->p.out_type = o->out_type;
    return 0;
}

/* A problem the command line describes must be a convolution at all: 2 if not. */
static int check_problem(int cmd, const convcat_problem *p)
{
    if (p->groups >= 1 && p->c >= 1 && p->k >= 1 && (p->c % p->groups || p->k % p->groups))
        return fail(2, "%s: invalid problem: --groups %d must divide C = %d and K = %d", cmd_names[cmd], p->groups,
                    p->c, p->k);
    if (convcat_problem_output(p, NULL, NULL, NULL) != CONVCAT_OK)
        return fail(2, "%s: invalid problem: %s", cmd_names[cmd], convcat_last_error());
    if (p->out_type == CONVCAT_TF32)
        return fail(2, "%s: invalid problem: tf32 is a math mode, not a tensor type: the output of a tf32 "
                    "convolution is f32 (--dtype tf32 sets that; --out_type f32)", cmd_names[cmd]);
    return 0;
}

/* ---- catalogs ------------------------------------------------------------ */

typedef struct catalogs {
    convcat_catalog *cat[MAX_CATALOGS];
    char path[MAX_CATALOGS][4096];
    int n;
    convcat_catalog_set *set;
} catalogs;

/* Does this program run from its build tree (its directory is the one it was built in)? */
static int from_build_tree(void)
{
    char self[PATH_MAX], build[PATH_MAX];
    const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0 || !*CONVCAT_BUILD_DIR || !realpath(CONVCAT_BUILD_DIR, build))
        return 0;
    self[len] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    return strcmp(self, build) == 0;
}

/* The catalog to use when none is named, into path; 0 or the exit status. */
static int default_catalog(char *path, size_t size)
{
    const char *env = getenv("CONVCAT_CATALOG");
    if ((!env || !*env) && from_build_tree()) {
        if (access(CONVCAT_BUILD_CATALOG, R_OK) == 0) {
            snprintf(path, size, "%s", CONVCAT_BUILD_CATALOG);
            return 0;
        }
        fprintf(stderr, "convcat: note: this build tree has no catalog yet (%s); looking for an installed one\n",
                CONVCAT_BUILD_CATALOG);
    }
    const convcat_status st = convcat_default_catalog_path(path, size);
    return st == CONVCAT_OK ? 0 : fail(2, "%s", convcat_last_error());
}

static void close_catalogs(catalogs *c)
{
    convcat_catalog_set_destroy(c->set);
    for (int i = 0; i < c->n; ++i)
        convcat_close(c->cat[i]);
    c->n = 0;
    c->set = NULL;
}

static int open_catalogs(const opts *o, catalogs *c)
{
    memset(c, 0, sizeof *c);
    if (o->ncatalogs == 0) {
        const int r = default_catalog(c->path[0], sizeof c->path[0]);
        if (r)
            return r;
    }
    const int n = o->ncatalogs ? o->ncatalogs : 1;
    convcat_status st = convcat_catalog_set_create(&c->set);
    if (st != CONVCAT_OK)
        return fail_status("catalog set", st);
    for (int i = 0; i < n; ++i) {
        if (o->ncatalogs)
            snprintf(c->path[i], sizeof c->path[i], "%s", o->catalogs[i]);
        if ((st = convcat_open(c->path[i], &c->cat[i])) != CONVCAT_OK) {
            const int r = fail_status(c->path[i], st);
            close_catalogs(c);
            return r;
        }
        c->n = i + 1;
        if ((st = convcat_catalog_set_add(c->set, c->cat[i], CONVCAT_SET_SHADOW)) != CONVCAT_OK) {
            const int r = fail_status(c->path[i], st);
            close_catalogs(c);
            return r;
        }
    }
    return 0;
}

static const char *path_of(const catalogs *c, const convcat_catalog *cat)
{
    for (int i = 0; i < c->n; ++i)
        if (c->cat[i] == cat)
            return c->path[i];
    return "?";
}

/* Does any catalog hold a kernel of input type t? */
static int has_input_type(const catalogs *c, convcat_dtype t)
{
    for (int i = 0; i < c->n; ++i)
        for (size_t j = 0; j < convcat_count(c->cat[i]); ++j) {
            convcat_entry_info e;
            if (convcat_entry_info_get(c->cat[i], j, &e) == CONVCAT_OK && (e.a_type == t || e.b_type == t))
                return 1;
        }
    return 0;
}

/* Full-f32 math asked for where no kernel does it: say what tf32 is instead (exit 1). */
static int f32_unavailable(const catalogs *c, convcat_dtype a, convcat_dtype b)
{
    if ((a != CONVCAT_F32 && b != CONVCAT_F32) || has_input_type(c, CONVCAT_F32))
        return 0;
    return fail(1, "no kernel of the catalog multiplies f32 inputs in full f32 precision (f32 is an accumulator "
                "and output type here). --dtype tf32 runs f32 tensors (x, w and y all f32) with TF32 tensor-core "
                "math (inputs rounded to a 10-bit mantissa, f32 accumulation), as cuDNN and PyTorch do for f32 "
                "convolutions when TF32 is allowed");
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_str(const char *s)
{
    putchar('"');
    for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; ++c) {
        if (*c == '"' || *c == '\\')
            printf("\\%c", *c);
        else if (*c == '\n')
            fputs("\\n", stdout);
        else if (*c == '\t')
            fputs("\\t", stdout);
        else if (*c < 0x20)
            printf("\\u%04x", *c);
        else
            putchar(*c);
    }
    putchar('"');
}

static const char *family_name(convcat_family f)
{
    return f == CONVCAT_FAMILY_GATHER ? "gather" : f == CONVCAT_FAMILY_DIRECT ? "direct" : "tma";
}

static const char *groups_name(int mode)
{
    static const char *const names[] = {"1", "wgrad K == C", "any", "depthwise", "fprop, whole groups a tile column"};
    return mode >= 0 && mode < 5 ? names[mode] : "?";
}

static void json_entry(const convcat_entry_info *e, const char *path)
{
    printf("{\"key\": ");
    json_str(e->key);
    printf(", \"catalog\": ");
    json_str(path);
    printf(", \"arch\": \"%s\", \"op\": \"%s\", \"dims\": %d, \"a_type\": \"%s\", \"b_type\": \"%s\", "
           "\"acc_type\": \"%s\", \"out_type\": \"%s\", \"tile_m\": %d, \"tile_n\": %d, \"tile_k\": %d, "
           "\"stages\": %d, \"cluster_m\": %d, \"cluster_n\": %d, \"fallback_m\": %d, \"fallback_n\": %d, "
           "\"schedule\": \"%s\", \"threads\": %d, \"smem_bytes\": %d, \"registers\": %d, \"code_bytes\": %zu, "
           "\"family\": \"%s\", \"verified\": %s, \"groups\": \"%s\"}",
           convcat_arch_name(e->arch), convcat_op_name(e->op), e->dims, convcat_dtype_name(e->a_type),
           convcat_dtype_name(e->b_type), convcat_dtype_name(e->acc_type), convcat_dtype_name(e->out_type), e->tile_m,
           e->tile_n, e->tile_k, e->stages, e->cluster_m, e->cluster_n, e->fallback_m, e->fallback_n,
           convcat_schedule_name(e->schedule), e->threads, e->smem_bytes, e->registers, e->code_bytes,
           family_name(e->family), e->verified ? "true" : "false", groups_name(e->groups_mode));
}

static void json_problem(const convcat_problem *p)
{
    int z = 0, pp = 0, q = 0;
    convcat_problem_output(p, &z, &pp, &q);
    printf("{\"op\": \"%s\", \"dims\": %d, \"n\": %d, \"d\": %d, \"h\": %d, \"w\": %d, \"c\": %d, \"k\": %d, "
           "\"t\": %d, \"r\": %d, \"s\": %d, \"pad_lo\": [%d, %d, %d], \"pad_hi\": [%d, %d, %d], "
           "\"stride\": [%d, %d, %d], \"dilation\": [%d, %d, %d], \"groups\": %d, \"mode\": \"%s\", "
           "\"a_type\": \"%s\", \"b_type\": \"%s\", \"out_type\": \"%s\", \"z\": %d, \"p\": %d, \"q\": %d, "
           "\"gflop\": %.6f}",
           convcat_op_name(p->op), p->dims, p->n, p->d, p->h, p->w, p->c, p->k, p->t, p->r, p->s, p->pad_lo[0],
           p->pad_lo[1], p->pad_lo[2], p->pad_hi[0], p->pad_hi[1], p->pad_hi[2], p->stride[0], p->stride[1],
           p->stride[2], p->dilation[0], p->dilation[1], p->dilation[2], p->groups,
           p->mode == CONVCAT_CONVOLUTION ? "conv" : "xcorr", convcat_dtype_name(p->a_type),
           convcat_dtype_name(p->b_type), convcat_dtype_name(p->out_type), z, pp, q, convcat_problem_flops(p) / 1e9);
}

static void json_catalogs(const catalogs *c)
{
    printf("\"catalogs\": [");
    for (int i = 0; i < c->n; ++i) {
        printf("%s{\"path\": ", i ? ", " : "");
        json_str(c->path[i]);
        printf(", \"id\": \"%08x\", \"kernels\": %zu}", convcat_catalog_id(c->cat[i]), convcat_count(c->cat[i]));
    }
    printf("]");
}

/* ---- commands ------------------------------------------------------------ */

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
    convcat_problem f;
    if (p->dims == 3 && convcat_problem_folded(p, &f) == CONVCAT_OK)
        printf("         2D kernels take it as the same memory in 2D: N %d H %d W %d, filter %dx%d, pad %d/%d %d/%d, "
               "stride %d %d, dilation %d %d\n", f.n, f.h, f.w, f.r, f.s, f.pad_lo[1], f.pad_hi[1], f.pad_lo[2],
               f.pad_hi[2], f.stride[1], f.stride[2], f.dilation[1], f.dilation[2]);
    if (p->a_type == CONVCAT_TF32)
        printf("         tf32: f32 tensors, TF32 tensor-core math (10-bit mantissa), f32 accumulation\n");
    if (p->op == CONVCAT_DGRAD)
        printf("         dgrad: reads dy (N x Z x P x Q x K) and w, writes dx (N x D x H x W x C)\n");
    if (p->op == CONVCAT_WGRAD)
        printf("         wgrad: reads dy (N x Z x P x Q x K) and x, writes dw (K x T x R x S x C%s)\n",
               p->groups > 1 ? " / groups" : "");
}

static int cmd_list(const catalogs *c, const opts *o)
{
    if (o->dtype) {
        const int r = f32_unavailable(c, o->dtype, o->dtype);
        if (r)
            return r;
    }
    size_t shown = 0, total = 0;
    if (o->json) {
        printf("{");
        json_catalogs(c);
        printf(", \"kernels\": [");
    } else {
        printf("%-64s %7s %8s %5s %8s %8s%s\n", "key", "threads", "smem KB", "regs", "code KB", "verified",
               c->n > 1 ? "  catalog" : "");
    }
    for (int ci = 0; ci < c->n; ++ci)
        for (size_t i = 0; i < convcat_count(c->cat[ci]); ++i) {
            convcat_entry_info e;
            convcat_entry_info_get(c->cat[ci], i, &e);
            const convcat_catalog *owner = NULL;
            size_t at;
            convcat_catalog_set_find(c->set, e.key, &owner, &at);
            if (owner != c->cat[ci])
                continue;   /* shadowed by an earlier catalog */
            ++total;
            if ((o->arch && (int)e.arch != o->arch) || (o->op_filter >= 0 && (int)e.op != o->op_filter) ||
                (o->dims_given && e.dims != o->p.dims) || (o->dtype && e.a_type != o->dtype) ||
                (o->match && !strstr(e.key, o->match)))
                continue;
            if (o->json) {
                printf("%s\n  ", shown ? "," : "");
                json_entry(&e, c->path[ci]);
            } else {
                printf("%-64s %7d %8.1f %5d %8.1f %8s%s%s\n", e.key, e.threads, e.smem_bytes / 1024.0, e.registers,
                       e.code_bytes / 1024.0, e.verified ? "yes" : "no", c->n > 1 ? "  " : "", c->n > 1 ? c->path[ci] : "");
            }
            ++shown;
        }
    if (o->json)
        printf("\n], \"shown\": %zu, \"total\": %zu}\n", shown, total);
    else
        printf("%zu of %zu kernels\n", shown, total);
    return 0;
}

static int cmd_info(const catalogs *c, const opts *o, const char *key)
{
    const convcat_catalog *cat;
    size_t i;
    convcat_status st = convcat_catalog_set_find(c->set, key, &cat, &i);
    if (st != CONVCAT_OK)
        return fail_status("info", st);
    convcat_entry_info e;
    convcat_entry_info_get(cat, i, &e);
    if (o->json) {
        json_entry(&e, path_of(c, cat));
        printf("\n");
        return 0;
    }
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
    printf("family       %s; groups: %s\nverified     %s\n", family_name(e.family), groups_name(e.groups_mode),
           e.verified ? "yes: the GPU suite has run this arch's kernels of this family"
                      : "no: compiled and statically checked only, never executed");
    if (c->n > 1)
        printf("catalog      %s\n", path_of(c, cat));
    return 0;
}

static int cmd_query(const catalogs *c, const opts *o)
{
    int r = f32_unavailable(c, o->p.a_type, o->p.b_type);
    if (r)
        return r;
    size_t n = 0, rows = 0, ok = 0;
    for (int i = 0; i < c->n; ++i)
        n += convcat_count(c->cat[i]);
    convcat_set_candidate *cand = calloc(n ? n : 1, sizeof *cand);
    if (!cand)
        return fail(1, "out of memory");
    int sms = 0;
    convcat_arch arch = (convcat_arch)o->arch;
    if (!o->arch && convcat_device_arch(&arch, &sms) != CONVCAT_OK)
        arch = CONVCAT_ARCH_ANY;   /* no GPU here: rank every arch */
    const convcat_status st = convcat_query_set(c->set, &o->p, arch, sms, cand, n, &rows, &ok);
    if (st != CONVCAT_OK) {
        free(cand);
        return fail_status("query", st);
    }
    if (o->json) {
        printf("{\"problem\": ");
        json_problem(&o->p);
        printf(", ");
        json_catalogs(c);
        printf(", \"arch\": \"%s\", \"sm_count\": %d, \"runnable\": %zu, \"total\": %zu, \"candidates\": [",
               convcat_arch_name(arch), sms, ok, rows);
        for (size_t i = 0; i < rows; ++i) {
            convcat_entry_info e;
            convcat_entry_info_get(cand[i].catalog, cand[i].candidate.index, &e);
            printf("%s\n  {\"key\": ", i ? "," : "");
            json_str(e.key);
            printf(", \"catalog\": ");
            json_str(path_of(c, cand[i].catalog));
            if (cand[i].candidate.ok)
                printf(", \"ok\": true, \"rank\": %zu, \"predicted_us\": %.3f, \"reason\": null}", i + 1,
                       cand[i].candidate.predicted_us);
            else {
                printf(", \"ok\": false, \"rank\": null, \"predicted_us\": null, \"reason\": ");
                json_str(cand[i].candidate.reason);
                printf("}");
            }
        }
        printf("\n]}\n");
        free(cand);
        return ok ? 0 : 1;
    }
    print_problem(&o->p);
    if (ok)
        printf("\n%4s %12s  %s\n", "rank", "predicted", "kernel");
    for (size_t i = 0; i < ok; ++i) {
        convcat_entry_info e;
        convcat_entry_info_get(cand[i].catalog, cand[i].candidate.index, &e);
        printf("%4zu %9.1f us  %s%s%s\n", i + 1, cand[i].candidate.predicted_us, e.key, c->n > 1 ? "  " : "",
               c->n > 1 ? path_of(c, cand[i].catalog) : "");
    }
    printf("\n%zu of %zu %s kernels can run it", ok, rows, arch ? convcat_arch_name(arch) : "catalog");
    if (rows > ok) {
        printf("; the others cannot:\n");
        const size_t limit = o->all ? rows : ok + 20;
        for (size_t i = ok; i < rows && i < limit; ++i) {
            convcat_entry_info e;
            convcat_entry_info_get(cand[i].catalog, cand[i].candidate.index, &e);
            printf("  %s: %s\n", e.key, cand[i].candidate.reason);
        }
        if (rows > limit)
            printf("  ... %zu more (--all lists every one)\n", rows - limit);
    } else {
        printf("\n");
    }
    free(cand);
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

static int cmd_run(const catalogs *c, const char *which, const opts *o)
{
    int r = f32_unavailable(c, o->p.a_type, o->p.b_type);
    if (r)
        return r;
    size_t index = CONVCAT_AUTO;
    const convcat_catalog *cat = c->cat[0];
    convcat_status st;
    const int tuning = strcmp(which, "tune") == 0, automatic = strcmp(which, "auto") == 0;
    if (tuning && c->n > 1)
        return fail(2, "run tune: takes one catalog (%d given)", c->n);
    if (!tuning && !automatic && (st = convcat_catalog_set_find(c->set, which, &cat, &index)) != CONVCAT_OK)
        return fail_status("run", st);
    print_problem(&o->p);
    char name[128] = "";
    if ((st = cvc_verify_device(o->device, name, sizeof name)) != CONVCAT_OK)
        return fail_status("run", st);
    printf("device:  %d, %s\n", o->device, name);
    if (automatic && c->n > 1) {   /* the set's pick; one catalog plans with CONVCAT_AUTO itself */
        convcat_arch arch;
        int sms;
        convcat_set_candidate best;
        size_t rows = 0, ok = 0;
        if ((st = convcat_device_arch(&arch, &sms)) != CONVCAT_OK ||
            (st = convcat_query_set(c->set, &o->p, arch, sms, &best, 1, &rows, &ok)) != CONVCAT_OK)
            return fail_status("run", st);
        if (!ok)
            return fail(1, "run: no kernel of the %d catalogs can run the problem", c->n);
        cat = best.catalog;
        index = best.candidate.index;
    }
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
        static const char *const sums[] = {"", "added by a second launch", "added within each cluster"};
        if (v.splits > 1 && v.split_sums >= 0 && v.split_sums <= CONVCAT_SPLIT_CLUSTER)
            printf("split-K: %d slices, %s\n", v.splits, sums[v.split_sums]);
        if (o->verify) {
            printf("verify:  %s  rel. error %.3e (bound %.3e), %lld non-finite and %lld outlying outputs "
                   "(worst at %.2g of its bound)\n",
                   v.passed ? "PASS" : "FAIL", v.rel_err, v.tolerance, v.nonfinite, v.outliers, v.worst);
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

/* --version: this program's and the library's versions, the formats they read, and the catalog's identity. */
static int print_version(const opts *o)
{
    printf("convcat %s\n", CONVCAT_VERSION);
    printf("library         libconvcat %s (soname libconvcat.so.%s)\n", convcat_version(), CONVCAT_SOVERSION);
    printf("catalog format  %u\n", convcat_catalog_format_version());
    printf("kernel ABI      %u\n", convcat_kernel_abi_version());
    catalogs c;
    const int r = open_catalogs(o, &c);
    if (r) {
        printf("catalog         none usable (above)\n");
        return o->ncatalogs ? r : 0;   /* a named catalog must open; finding none is no error of --version */
    }
    for (int i = 0; i < c.n; ++i) {
        size_t arch_count[3] = {0, 0, 0};
        for (size_t j = 0; j < convcat_count(c.cat[i]); ++j) {
            convcat_entry_info e;
            if (convcat_entry_info_get(c.cat[i], j, &e) == CONVCAT_OK && (unsigned)e.arch < 3)
                ++arch_count[e.arch];
        }
        printf("catalog         %s\n                id %08x, %zu kernels (sm90a %zu, sm100a %zu)\n", c.path[i],
               convcat_catalog_id(c.cat[i]), convcat_count(c.cat[i]), arch_count[CONVCAT_ARCH_SM90A],
               arch_count[CONVCAT_ARCH_SM100A]);
    }
    close_catalogs(&c);
    return 0;
}

int main(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    o.op_filter = -1;
    o.alpha = 1.0f;
    o.seed = 2026;
    convcat_problem_init(&o.p);
    int i = 1, version = 0;
    for (; i < argc && argv[i][0] == '-'; ++i) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_main, stdout);
            return 0;
        }
        if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-V") == 0) {
            version = 1;
        } else if (strcmp(argv[i], "--catalog") == 0 || strncmp(argv[i], "--catalog=", 10) == 0) {
            const char *val = argv[i][9] == '=' ? argv[i] + 10 : i + 1 < argc ? argv[++i] : NULL;
            if (!val)
                return fail(2, "--catalog needs a path");
            if (!*val)
                return fail(2, "--catalog needs a path, not an empty string");
            if (o.ncatalogs == MAX_CATALOGS)
                return fail(2, "--catalog: at most %d catalogs", MAX_CATALOGS);
            o.catalogs[o.ncatalogs++] = val;
        } else {
            return fail(2, "unknown option %s (convcat --help)", argv[i]);
        }
    }
    if (version)
        return i < argc ? fail(2, "--version takes no command") : print_version(&o);
    if (i >= argc) {
        fputs(usage_main, stderr);
        return 2;
    }
    const char *name = argv[i++];
    int cmd = 0;
    while (cmd < CMD_COUNT && strcmp(name, cmd_names[cmd]) != 0)
        ++cmd;
    if (strcmp(name, "help") == 0) {
        if (i >= argc) {
            fputs(usage_main, stdout);
            return 0;
        }
        for (cmd = 0; cmd < CMD_COUNT && strcmp(argv[i], cmd_names[cmd]) != 0;)
            ++cmd;
        if (cmd == CMD_COUNT)
            return fail(2, "help: unknown command %s (list, info, query, run, coverage)", argv[i]);
        print_usage(stdout, cmd);
        return 0;
    }
    if (cmd == CMD_COUNT)
        return fail(2, "unknown command %s (convcat --help)", name);
    char *pos[16];
    int npos;
    const int max_pos = cmd == CMD_RUN || cmd == CMD_INFO ? 1 : cmd == CMD_COVERAGE ? 16 : 0;
    int r = parse_args(argc - i, argv + i, cmd, &o, pos, max_pos, &npos);
    if (r)
        return r < 0 ? 0 : r;
    if (cmd == CMD_COVERAGE && npos == 0)
        return fail(2, "coverage needs a problem file (convcat coverage --help)");
    if (cmd != CMD_COVERAGE && npos != max_pos)
        return fail(2, "%s needs a kernel key%s (convcat %s --help)", cmd_names[cmd],
                    cmd == CMD_RUN ? ", auto or tune" : "", cmd_names[cmd]);
    if ((cmd == CMD_QUERY || cmd == CMD_RUN) && (r = check_problem(cmd, &o.p)) != 0)
        return r;
    catalogs c;
    if ((r = open_catalogs(&o, &c)) != 0)
        return r;
    switch (cmd) {
    case CMD_LIST: r = cmd_list(&c, &o); break;
    case CMD_INFO: r = cmd_info(&c, &o, pos[0]); break;
    case CMD_QUERY: r = cmd_query(&c, &o); break;
    case CMD_COVERAGE: {
        static const convcat_dtype defaults[3] = {CONVCAT_F16, CONVCAT_BF16, CONVCAT_TF32};
        r = cvc_coverage(c.cat, c.n, (const char *const *)pos, npos, o.ndtypes ? o.dtypes : defaults,
                         o.ndtypes ? o.ndtypes : 3, (convcat_arch)o.arch, o.json, stdout);
        break;
    }
    default: r = cmd_run(&c, pos[0], &o);
    }
    close_catalogs(&c);
    return r;
}
