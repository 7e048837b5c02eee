/* tune.c: the autotune mode and its cache file.
 *
 * convcat_autotune times every kernel that can run a problem, on the caller's
 * tensors and stream, and keeps the fastest.  A cache remembers winners by
 * (catalog, device arch, problem): the catalog is named by its index CRC, so
 * a regenerated catalog never reuses another's verdicts.
 *
 * The cache file is text, one winner a line after a fixed first line:
 *
 *     # convcat autotune cache 1
 *     <catalog id, 8 hex> <arch> <kernel key> <median ms> <problem>
 *
 * where <problem> spells every field of convcat_problem.  A file that breaks
 * this grammar anywhere is ignored whole, with a warning: a cache is only an
 * optimisation, and half-trusting a damaged one would be worse than none.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "internal.h"

#define CACHE_HEADER "# convcat autotune cache 1"
#define PROBLEM_TEXT 192

typedef struct tune_row {
    uint32_t catalog_id;
    convcat_arch arch;
    char problem[PROBLEM_TEXT];
    char key[CVC_KEY_BYTES];
    double ms;
} tune_row;

struct convcat_tune_cache {
    tune_row *rows;
    size_t count, cap;
    pthread_mutex_t lock;
};

/* Every field, in a fixed order, no spaces: fprop/2d/bf16.bf16.bf16/n128.d1.h56.w56.c64/... */
static void problem_text(const convcat_problem *p, char *buf, size_t n)
{
    const char *op = convcat_op_name(p->op), *a = convcat_dtype_name(p->a_type);
    const char *b = convcat_dtype_name(p->b_type), *o = convcat_dtype_name(p->out_type);
    snprintf(buf, n, "%s/%dd/%s.%s.%s/n%d.d%d.h%d.w%d.c%d/k%d.t%d.r%d.s%d/pad%d.%d.%d-%d.%d.%d/"
             "str%d.%d.%d/dil%d.%d.%d/g%d/%s",
             op ? op : "?", p->dims, a ? a : "?", b ? b : "?", o ? o : "?", p->n, p->d, p->h, p->w, p->c,
             p->k, p->t, p->r, p->s, p->pad_lo[0], p->pad_lo[1], p->pad_lo[2], p->pad_hi[0], p->pad_hi[1],
             p->pad_hi[2], p->stride[0], p->stride[1], p->stride[2], p->dilation[0], p->dilation[1],
             p->dilation[2], p->groups, p->mode == CONVCAT_CROSS_CORRELATION ? "xcorr" : "conv");
}

static tune_row *find_row(convcat_tune_cache *c, uint32_t id, convcat_arch arch, const char *problem)
{
    for (size_t i = 0; i < c->count; ++i)
        if (c->rows[i].catalog_id == id && c->rows[i].arch == arch && strcmp(c->rows[i].problem, problem) == 0)
            return &c->rows[i];
    return NULL;
}

static convcat_status add_row(convcat_tune_cache *c, const tune_row *r)
{
    tune_row *same = find_row(c, r->catalog_id, r->arch, r->problem);
    if (same) {
        *same = *r;
        return CONVCAT_OK;
    }
    if (c->count == c->cap) {
        const size_t cap = c->cap ? 2 * c->cap : 16;
        tune_row *rows = realloc(c->rows, cap * sizeof *rows);
        if (!rows)
            return cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory growing the tune cache");
        c->rows = rows;
        c->cap = cap;
    }
    c->rows[c->count++] = *r;
    return CONVCAT_OK;
}

convcat_status cvc_tune_cache_put(convcat_tune_cache *c, uint32_t id, convcat_arch arch, const convcat_problem *p,
                                  const char *key, double ms)
{
    tune_row r = {.catalog_id = id, .arch = arch, .ms = ms};
    problem_text(p, r.problem, sizeof r.problem);
    snprintf(r.key, sizeof r.key, "%s", key);
    pthread_mutex_lock(&c->lock);
    const convcat_status st = add_row(c, &r);
    pthread_mutex_unlock(&c->lock);
    return st;
}

bool cvc_tune_cache_get(convcat_tune_cache *c, uint32_t id, convcat_arch arch, const convcat_problem *p, char *key,
                        size_t key_size, double *ms)
{
    char problem[PROBLEM_TEXT];
    problem_text(p, problem, sizeof problem);
    pthread_mutex_lock(&c->lock);
    const tune_row *r = find_row(c, id, arch, problem);
    if (r) {
        snprintf(key, key_size, "%s", r->key);
        *ms = r->ms;
    }
    pthread_mutex_unlock(&c->lock);
    return r != NULL;
}

/* One line of the file; false with a reason. */
static bool parse_line(char *line, tune_row *r, char *why, size_t n)
{
    char arch[16], key[CVC_KEY_BYTES], problem[PROBLEM_TEXT], extra;
    unsigned id;
    cvc_key k;
    if (sscanf(line, "%8x %15s %111s %lf %191s %c", &id, arch, key, &r->ms, problem, &extra) != 5) {
        cvc_say(why, n, "not '<catalog id> <arch> <key> <ms> <problem>'");
        return false;
    }
    r->catalog_id = id;
    r->arch = strcmp(arch, "sm90a") == 0 ? CONVCAT_ARCH_SM90A
            : strcmp(arch, "sm100a") == 0 ? CONVCAT_ARCH_SM100A : CONVCAT_ARCH_ANY;
    if (r->arch == CONVCAT_ARCH_ANY) {
        cvc_say(why, n, "unknown arch '%s'", arch);
        return false;
    }
    if (!cvc_key_parse(key, &k, why, n))
        return false;
    if (!(r->ms > 0 && isfinite(r->ms))) {
        cvc_say(why, n, "time %g ms is not a positive number", r->ms);
        return false;
    }
    snprintf(r->key, sizeof r->key, "%s", key);
    snprintf(r->problem, sizeof r->problem, "%s", problem);
    return true;
}

static convcat_tune_cache *new_cache(void)
{
    convcat_tune_cache *c = calloc(1, sizeof *c);
    if (c)
        pthread_mutex_init(&c->lock, NULL);
    return c;
}

convcat_status convcat_tune_cache_load(const char *path, convcat_tune_cache **out, char *warning, size_t warning_size)
{
    cvc_say(warning, warning_size, "%s", "");
    if (!path || !out)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_tune_cache_load: NULL argument");
    convcat_tune_cache *c = *out = new_cache();
    if (!c)
        return cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory making a tune cache");
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno != ENOENT)
            cvc_say(warning, warning_size, "tune cache %s ignored: %s", path, strerror(errno));
        return CONVCAT_OK;
    }
    char line[512], why[192] = "";
    size_t no = 0;
    bool ok = true;
    while (ok && fgets(line, sizeof line, f)) {
        ++no;
        const size_t len = strlen(line);
        if (len == 0 || line[len - 1] != '\n') {
            cvc_say(why, sizeof why, "line %zu is too long or unterminated", no);
            ok = false;
        } else if (no == 1) {
            line[len - 1] = '\0';
            if (strcmp(line, CACHE_HEADER) != 0) {
                cvc_say(why, sizeof why, "line 1 is not '%s'", CACHE_HEADER);
                ok = false;
            }
        } else {
            tune_row r;
            char reason[160];
            if (!parse_line(line, &r, reason, sizeof reason)) {
                cvc_say(why, sizeof why, "line %zu: %s", no, reason);
                ok = false;
            } else if (add_row(c, &r) != CONVCAT_OK) {
                ok = false;
            }
        }
    }
    if (ok && ferror(f)) {
        cvc_say(why, sizeof why, "read error");
        ok = false;
    }
    if (ok && no == 0) {
        cvc_say(why, sizeof why, "the file is empty");
        ok = false;
    }
    fclose(f);
    if (!ok) {
        c->count = 0;
        cvc_say(warning, warning_size, "tune cache %s ignored: %s", path, why);
    }
    return CONVCAT_OK;
}

convcat_status convcat_tune_cache_save(const convcat_tune_cache *cache, const char *path)
{
    if (!cache || !path)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_tune_cache_save: NULL argument");
    convcat_tune_cache *c = (convcat_tune_cache *)cache;   /* the lock only */
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "tune cache path too long");
    FILE *f = fopen(tmp, "w");
    if (!f)
        return cvc_fail(CONVCAT_ERR_IO, "cannot write %s: %s", tmp, strerror(errno));
    pthread_mutex_lock(&c->lock);
    int bad = fprintf(f, "%s\n", CACHE_HEADER) < 0;
    for (size_t i = 0; i < c->count && !bad; ++i) {
        const tune_row *r = &c->rows[i];
        bad = fprintf(f, "%08x %s %s %.6f %s\n", r->catalog_id, convcat_arch_name(r->arch), r->key, r->ms,
                      r->problem) < 0;
    }
    pthread_mutex_unlock(&c->lock);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        const int e = errno;
        unlink(tmp);
        return cvc_fail(CONVCAT_ERR_IO, "cannot write tune cache %s: %s", path, strerror(e));
    }
    return CONVCAT_OK;
}

size_t convcat_tune_cache_count(const convcat_tune_cache *cache)
{
    return cache ? cache->count : 0;
}

void convcat_tune_cache_free(convcat_tune_cache *cache)
{
    if (!cache)
        return;
    pthread_mutex_destroy(&cache->lock);
    free(cache->rows);
    free(cache);
}

/* ---- timing --------------------------------------------------------------- */

static int by_ms(const void *x, const void *y)
{
    const float a = *(const float *)x, b = *(const float *)y;
    return (a > b) - (a < b);
}

convcat_status cvc_time_plan(const convcat_plan *plan, const convcat_tensors *t, void *stream, int iters,
                             double *ms)
{
    const cvc_driver *drv;
    CUevent ev[2] = {NULL, NULL};
    float *scratch = malloc((size_t)(iters > 0 ? iters : 1) * sizeof *scratch);
    convcat_status st = scratch ? cvc_driver_get(&drv) : cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory timing");
    for (int i = 0; st == CONVCAT_OK && i < 2; ++i)
        st = cvc_cuda_check(drv->cuEventCreate(&ev[i], CU_EVENT_DEFAULT), "cuEventCreate");
    for (int i = 0; st == CONVCAT_OK && i < 2; ++i)   /* warm-up */
        st = convcat_plan_run(plan, t, stream);
    for (int i = 0; st == CONVCAT_OK && i < iters; ++i) {
        st = cvc_cuda_check(drv->cuEventRecord(ev[0], (CUstream)stream), "cuEventRecord");
        if (st == CONVCAT_OK)
            st = convcat_plan_run(plan, t, stream);
        if (st == CONVCAT_OK)
            st = cvc_cuda_check(drv->cuEventRecord(ev[1], (CUstream)stream), "cuEventRecord");
        if (st == CONVCAT_OK)
            st = cvc_cuda_check(drv->cuEventSynchronize(ev[1]), "timed run");
        if (st == CONVCAT_OK)
            st = cvc_cuda_check(drv->cuEventElapsedTime(&scratch[i], ev[0], ev[1]), "cuEventElapsedTime");
    }
    if (st == CONVCAT_OK) {
        qsort(scratch, (size_t)iters, sizeof *scratch, by_ms);
        *ms = scratch[iters / 2];
    }
    for (int i = 0; i < 2; ++i)
        if (ev[i])
            drv->cuEventDestroy(ev[i]);
    free(scratch);
    return st;
}

convcat_status convcat_autotune(const convcat_catalog *cat, const convcat_problem *p, const convcat_tensors *t,
                                void *stream, int iterations, convcat_tune_cache *cache, size_t *index_out,
                                double *ms_out)
{
    if (!cat || !p || !t || !index_out || iterations < 1)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_autotune: NULL argument or iterations < 1");
    convcat_arch arch;
    int sms;
    convcat_status st = convcat_device_arch(&arch, &sms);
    if (st != CONVCAT_OK)
        return st;
    char key[CVC_KEY_BYTES];
    double ms = 0.0;
    size_t index;
    if (cache && cvc_tune_cache_get(cache, cat->id, arch, p, key, sizeof key, &ms) &&
        convcat_find(cat, key, &index) == CONVCAT_OK &&
        cvc_check_entry(&cat->entries[index], p, NULL, 0) == CONVCAT_OK) {
        *index_out = index;
        if (ms_out)
            *ms_out = ms;
        return CONVCAT_OK;
    }
    convcat_candidate *c = malloc((cat->count ? cat->count : 1) * sizeof *c);
    size_t rows = 0, ok = 0, best = (size_t)-1;
    double best_ms = INFINITY;
    st = c ? convcat_query(cat, p, arch, sms, c, cat->count, &rows, &ok)
           : cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory autotuning");
    for (size_t i = 0; st == CONVCAT_OK && i < ok; ++i) {
        convcat_plan *plan;
        const convcat_status pst = convcat_plan_create(cat, p, c[i].index, &plan);
        if (pst == CONVCAT_ERR_NO_DEVICE)
            continue;   /* this device cannot run that kernel (smem, clusters): not a candidate */
        if ((st = pst) != CONVCAT_OK)
            break;
        st = cvc_time_plan(plan, t, stream, iterations, &ms);
        convcat_plan_destroy(plan);
        if (st == CONVCAT_OK && ms < best_ms)
            best_ms = ms, best = c[i].index;
    }
    if (st == CONVCAT_OK && best == (size_t)-1)
        st = ok == 0 && rows ? cvc_fail(CONVCAT_ERR_NOT_FOUND, "no kernel can run the problem; e.g. %s: %s",
                                        cat->entries[c[0].index].key, c[0].reason)
                             : cvc_fail(CONVCAT_ERR_NOT_FOUND, "no %s kernel of the catalog can run the problem",
                                        convcat_arch_name(arch));
    if (st == CONVCAT_OK && cache)
        st = cvc_tune_cache_put(cache, cat->id, arch, p, cat->entries[best].key, best_ms);
    if (st == CONVCAT_OK) {
        *index_out = best;
        if (ms_out)
            *ms_out = best_ms;
    }
    free(c);
    return st;
}
