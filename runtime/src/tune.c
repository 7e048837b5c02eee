/* tune.c: autotuning (every candidate timed, in the manner of cudnnFind) and its cache file.
 *
 * convcat_autotune_results times each kernel that can run a problem (or the
 * model's top_k best), on the caller's tensors and stream, and reports each
 * candidate's time or why it was skipped or failed: a device that cannot run
 * the kernel, a workspace larger than the caller's, a failed launch.  None
 * of those stops the others.  convcat_autotune is the same with a cache and
 * only the winner returned.
 *
 * A cache remembers winners by (catalog, device, problem): the catalog is
 * named by its index CRC, so a regenerated catalog never reuses another's
 * verdicts; the device by its arch, model name and SM count, so an H100 PCIe
 * (114 SMs) and an H200 (132), both sm_90a, keep their own.
 *
 * The cache file is text, one winner a line after a fixed first line:
 *
 *     # convcat autotune cache 2
 *     <catalog id, 8 hex> <arch> <SMs> <device> <kernel key> <median ms> <problem>
 *
 * where <device> is the model name with every byte but [A-Za-z0-9._-]
 * written %XX ("NVIDIA%20H200"; "-" for none) and <problem> spells every
 * field of convcat_problem.  Version 1 files (no <SMs> <device>) still load;
 * their rows have no device, so convcat_autotune, which always asks for one,
 * never takes them: the next tune on each device measures again.  A file
 * that breaks the grammar anywhere is ignored whole, with a warning: a cache
 * is only an optimisation, and half-trusting a damaged one would be worse
 * than none.  Times are written with six decimals where those give back the
 * same double and with 17 significant digits otherwise: a save and a load give
 * back the time bit for bit.
 *
 * A save writes a temporary file of a name no other save of this or any
 * process uses at that moment (PATH.tmp.PID.SEQ, created with O_EXCL and
 * O_NOFOLLOW: never through a link someone planted) and renames it over
 * PATH, so readers see the old file or the new one, never a mix.  Rows are
 * found through a hash of their identity: loading n rows takes O(n).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"
#include "internal.h"
#include "log.h"
#include "tune_internal.h"

#define CACHE_HEADER_V1 "# convcat autotune cache 1"
#define CACHE_HEADER "# convcat autotune cache 2"
#define PROBLEM_TEXT 192
#define DEFAULT_ITERATIONS 20

typedef struct tune_row {
    uint32_t catalog_id;
    convcat_arch arch;
    int sms;                               /* 0: no device */
    char device[CVC_DEVICE_NAME_BYTES];    /* encoded (device_text); "" : no device */
    char problem[PROBLEM_TEXT];
    char key[CVC_KEY_BYTES];
    double ms;
} tune_row;

struct convcat_tune_cache {
    tune_row *rows;
    size_t count, cap;
    size_t *slots;        /* open addressing over rows: row index + 1, 0 empty; nslots = 2 * cap */
    size_t nslots;
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

/* A device name as one word of the file: bytes outside [A-Za-z0-9._-] as %XX ("" stays ""). */
static void device_text(const char *name, char *buf, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *s = (const unsigned char *)(name ? name : ""); *s && o + 4 <= n; ++s) {
        if ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '.' ||
            *s == '_' || *s == '-') {
            buf[o++] = (char)*s;
        } else {
            buf[o++] = '%';
            buf[o++] = hex[*s >> 4];
            buf[o++] = hex[*s & 15];
        }
    }
    buf[o] = '\0';
}

/* FNV-1a over a row's identity: catalog, arch, device, SM count, problem. */
static size_t row_hash(uint32_t id, convcat_arch arch, const char *device, int sms, const char *problem)
{
    uint64_t h = UINT64_C(14695981039346656037);
    const uint32_t nums[3] = {id, (uint32_t)arch, (uint32_t)sms};
    const unsigned char *b = (const unsigned char *)nums;
    for (size_t i = 0; i < sizeof nums; ++i)
        h = (h ^ b[i]) * UINT64_C(1099511628211);
    for (const unsigned char *s = (const unsigned char *)device; *s; ++s)
        h = (h ^ *s) * UINT64_C(1099511628211);
    h = (h ^ 0xff) * UINT64_C(1099511628211);
    for (const unsigned char *s = (const unsigned char *)problem; *s; ++s)
        h = (h ^ *s) * UINT64_C(1099511628211);
    return (size_t)(h ^ h >> 29);
}

/* The slot that holds the row of this identity, or the empty slot where it would go. */
static size_t *find_slot(convcat_tune_cache *c, uint32_t id, convcat_arch arch, const char *device, int sms,
                         const char *problem)
{
    const size_t mask = c->nslots - 1;
    for (size_t i = row_hash(id, arch, device, sms, problem) & mask;; i = (i + 1) & mask) {
        size_t *slot = &c->slots[i];
        if (!*slot)
            return slot;
        const tune_row *r = &c->rows[*slot - 1];
        if (r->catalog_id == id && r->arch == arch && r->sms == sms && strcmp(r->device, device) == 0 &&
            strcmp(r->problem, problem) == 0)
            return slot;
    }
}

static tune_row *find_row(convcat_tune_cache *c, uint32_t id, convcat_arch arch, const char *device, int sms,
                          const char *problem)
{
    if (!c->nslots)
        return NULL;
    const size_t *slot = find_slot(c, id, arch, device, sms, problem);
    return *slot ? &c->rows[*slot - 1] : NULL;
}

static convcat_status add_row(convcat_tune_cache *c, const tune_row *r)
{
    tune_row *same = find_row(c, r->catalog_id, r->arch, r->device, r->sms, r->problem);
    if (same) {
        *same = *r;
        return CONVCAT_OK;
    }
    if (c->count == c->cap) {   /* grow the rows and rebuild the slots, at most half full */
        const size_t cap = c->cap ? 2 * c->cap : 16;
        tune_row *rows = realloc(c->rows, cap * sizeof *rows);
        size_t *slots = calloc(2 * cap, sizeof *slots);
        if (!rows || !slots) {
            free(slots);
            if (rows)
                c->rows = rows;
            return cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory growing the tune cache");
        }
        free(c->slots);
        c->rows = rows;
        c->cap = cap;
        c->slots = slots;
        c->nslots = 2 * cap;
        for (size_t i = 0; i < c->count; ++i) {
            const tune_row *o = &c->rows[i];
            *find_slot(c, o->catalog_id, o->arch, o->device, o->sms, o->problem) = i + 1;
        }
    }
    c->rows[c->count] = *r;
    *find_slot(c, r->catalog_id, r->arch, r->device, r->sms, r->problem) = ++c->count;
    return CONVCAT_OK;
}

/* Every row gone (a damaged file's). */
static void clear_rows(convcat_tune_cache *c)
{
    c->count = 0;
    if (c->slots)
        memset(c->slots, 0, c->nslots * sizeof *c->slots);
}

convcat_status cvc_tune_cache_put_device(convcat_tune_cache *c, uint32_t id, convcat_arch arch, const char *device,
                                         int sms, const convcat_problem *p, const char *key, double ms)
{
    tune_row r = {.catalog_id = id, .arch = arch, .sms = sms, .ms = ms};
    device_text(device, r.device, sizeof r.device);
    problem_text(p, r.problem, sizeof r.problem);
    snprintf(r.key, sizeof r.key, "%s", key);
    pthread_mutex_lock(&c->lock);
    const convcat_status st = add_row(c, &r);
    pthread_mutex_unlock(&c->lock);
    return st;
}

bool cvc_tune_cache_get_device(convcat_tune_cache *c, uint32_t id, convcat_arch arch, const char *device, int sms,
                               const convcat_problem *p, char *key, size_t key_size, double *ms)
{
    char problem[PROBLEM_TEXT], dev[CVC_DEVICE_NAME_BYTES];
    problem_text(p, problem, sizeof problem);
    device_text(device, dev, sizeof dev);
    pthread_mutex_lock(&c->lock);
    const tune_row *r = find_row(c, id, arch, dev, sms, problem);
    if (r) {
        snprintf(key, key_size, "%s", r->key);
        *ms = r->ms;
    }
    pthread_mutex_unlock(&c->lock);
    return r != NULL;
}

convcat_status cvc_tune_cache_put(convcat_tune_cache *c, uint32_t id, convcat_arch arch, const convcat_problem *p,
                                  const char *key, double ms)
{
    return cvc_tune_cache_put_device(c, id, arch, "", 0, p, key, ms);
}

bool cvc_tune_cache_get(convcat_tune_cache *c, uint32_t id, convcat_arch arch, const convcat_problem *p, char *key,
                        size_t key_size, double *ms)
{
    return cvc_tune_cache_get_device(c, id, arch, "", 0, p, key, key_size, ms);
}

/* One line of a file of `version` 1 or 2; false with a reason. */
static bool parse_line(char *line, int version, tune_row *r, char *why, size_t n)
{
    char arch[16], key[CVC_KEY_BYTES], problem[PROBLEM_TEXT], device[CVC_DEVICE_NAME_BYTES], extra;
    unsigned id;
    cvc_key k;
    int sms = 0;
    if (version == 1) {
        if (sscanf(line, "%8x %15s %111s %lf %191s %c", &id, arch, key, &r->ms, problem, &extra) != 5) {
            cvc_say(why, n, "not '<catalog id> <arch> <key> <ms> <problem>'");
            return false;
        }
        device[0] = '\0';
    } else if (sscanf(line, "%8x %15s %d %95s %111s %lf %191s %c", &id, arch, &sms, device, key, &r->ms, problem,
                      &extra) != 7) {
        cvc_say(why, n, "not '<catalog id> <arch> <SMs> <device> <key> <ms> <problem>'");
        return false;
    }
    r->catalog_id = id;
    r->arch = strcmp(arch, "sm90a") == 0 ? CONVCAT_ARCH_SM90A
            : strcmp(arch, "sm100a") == 0 ? CONVCAT_ARCH_SM100A : CONVCAT_ARCH_ANY;
    if (r->arch == CONVCAT_ARCH_ANY) {
        cvc_say(why, n, "unknown arch '%s'", arch);
        return false;
    }
    if (sms < 0) {
        cvc_say(why, n, "SM count %d is negative", sms);
        return false;
    }
    if (strcmp(device, "-") == 0)
        device[0] = '\0';
    for (const char *d = device; *d; ++d)
        if (!((*d >= 'A' && *d <= 'Z') || (*d >= 'a' && *d <= 'z') || (*d >= '0' && *d <= '9') || *d == '.' ||
              *d == '_' || *d == '-' || *d == '%')) {
            cvc_say(why, n, "device '%s' is not an encoded device name", device);
            return false;
        }
    if (!cvc_key_parse(key, &k, why, n))
        return false;
    if (!(r->ms > 0 && isfinite(r->ms))) {
        cvc_say(why, n, "time %g ms is not a positive number", r->ms);
        return false;
    }
    r->sms = sms;
    snprintf(r->device, sizeof r->device, "%s", device);
    snprintf(r->key, sizeof r->key, "%s", key);
    snprintf(r->problem, sizeof r->problem, "%s", problem);
    return true;
}

convcat_tune_cache *cvc_tune_cache_new(void)
{
    convcat_tune_cache *c = calloc(1, sizeof *c);
    if (c)
        pthread_mutex_init(&c->lock, NULL);
    return c;
}

bool cvc_tune_cache_read(convcat_tune_cache *c, FILE *f, char *why, size_t why_size)
{
    char line[512];
    size_t no = 0;
    int version = 0;
    bool ok = true;
    cvc_say(why, why_size, "%s", "");
    while (ok && fgets(line, sizeof line, f)) {
        ++no;
        const size_t len = strlen(line);
        if (len == 0 || line[len - 1] != '\n') {
            cvc_say(why, why_size, "line %zu is too long or unterminated", no);
            ok = false;
        } else if (no == 1) {
            line[len - 1] = '\0';
            version = strcmp(line, CACHE_HEADER) == 0 ? 2 : strcmp(line, CACHE_HEADER_V1) == 0 ? 1 : 0;
            if (!version) {
                cvc_say(why, why_size, "line 1 is not '%s'", CACHE_HEADER);
                ok = false;
            }
        } else {
            tune_row r;
            char reason[160];
            if (!parse_line(line, version, &r, reason, sizeof reason)) {
                cvc_say(why, why_size, "line %zu: %s", no, reason);
                ok = false;
            } else if (add_row(c, &r) != CONVCAT_OK) {
                cvc_say(why, why_size, "line %zu: out of memory", no);
                ok = false;
            }
        }
    }
    if (ok && ferror(f)) {
        cvc_say(why, why_size, "read error");
        ok = false;
    }
    if (ok && no == 0) {
        cvc_say(why, why_size, "the file is empty");
        ok = false;
    }
    if (!ok)
        clear_rows(c);
    return ok;
}

/* A time as the file spells it: six decimals where they give back the same double (the form files
 * have always had), else 17 significant digits (1e-7 ms is not 0.000000). */
static void time_text(double ms, char *buf, size_t n)
{
    snprintf(buf, n, "%.6f", ms);
    if (strtod(buf, NULL) != ms)
        snprintf(buf, n, "%.17g", ms);
}

bool cvc_tune_cache_write(const convcat_tune_cache *cache, FILE *f)
{
    convcat_tune_cache *c = (convcat_tune_cache *)cache;   /* the lock only */
    pthread_mutex_lock(&c->lock);
    bool bad = fprintf(f, "%s\n", CACHE_HEADER) < 0;
    for (size_t i = 0; i < c->count && !bad; ++i) {
        const tune_row *r = &c->rows[i];
        char ms[32];
        time_text(r->ms, ms, sizeof ms);
        bad = fprintf(f, "%08x %s %d %s %s %s %s\n", r->catalog_id, convcat_arch_name(r->arch), r->sms,
                      r->device[0] ? r->device : "-", r->key, ms, r->problem) < 0;
    }
    pthread_mutex_unlock(&c->lock);
    return !bad;
}

convcat_status convcat_tune_cache_load(const char *path, convcat_tune_cache **out, char *warning, size_t warning_size)
{
    cvc_say(warning, warning_size, "%s", "");
    if (!path || !out)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_tune_cache_load: NULL argument");
    convcat_tune_cache *c = *out = cvc_tune_cache_new();
    if (!c)
        return cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory making a tune cache");
    /* O_NONBLOCK: a FIFO opens at once instead of waiting for a writer, and is then ignored. */
    const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        if (errno != ENOENT)
            cvc_say(warning, warning_size, "tune cache %s ignored: %s", path, strerror(errno));
        return CONVCAT_OK;
    }
    struct stat sb;
    const bool regular = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
    FILE *f = regular ? fdopen(fd, "r") : NULL;
    if (!f) {
        cvc_say(warning, warning_size, "tune cache %s ignored: %s", path,
                regular ? strerror(errno) : "not a regular file");
        close(fd);
        return CONVCAT_OK;
    }
    char why[192];
    if (!cvc_tune_cache_read(c, f, why, sizeof why))
        cvc_say(warning, warning_size, "tune cache %s ignored: %s", path, why);
    fclose(f);
    return CONVCAT_OK;
}

/* A new file beside `path` that no other save uses, never through a link: PATH.tmp.PID.SEQ. */
static int open_temporary(const char *path, char *tmp, size_t size)
{
    static atomic_uint seq;
    for (int tries = 0; tries < 1000; ++tries) {
        if (snprintf(tmp, size, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&seq, 1)) >= (int)size) {
            errno = ENAMETOOLONG;
            return -1;
        }
        const int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

convcat_status convcat_tune_cache_save(const convcat_tune_cache *cache, const char *path)
{
    if (!cache || !path)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_tune_cache_save: NULL argument");
    char tmp[4096];
    const int fd = open_temporary(path, tmp, sizeof tmp);
    if (fd < 0)
        return cvc_fail(CONVCAT_ERR_IO, "cannot write a temporary file beside %s: %s", path, strerror(errno));
    FILE *f = fdopen(fd, "w");
    if (!f) {
        const int e = errno;
        close(fd);
        unlink(tmp);
        return cvc_fail(CONVCAT_ERR_IO, "cannot write %s: %s", tmp, strerror(e));
    }
    bool bad = !cvc_tune_cache_write(cache, f);
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
    if (!cache)
        return 0;
    convcat_tune_cache *c = (convcat_tune_cache *)cache;   /* the lock only */
    pthread_mutex_lock(&c->lock);
    const size_t n = c->count;
    pthread_mutex_unlock(&c->lock);
    return n;
}

void convcat_tune_cache_free(convcat_tune_cache *cache)
{
    if (!cache)
        return;
    pthread_mutex_destroy(&cache->lock);
    free(cache->slots);
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

convcat_status cvc_device_identity(convcat_arch *arch, int *sms, char *name, size_t name_size)
{
    convcat_status st = convcat_device_arch(arch, sms);
    if (st != CONVCAT_OK)
        return st;
    const cvc_driver *drv;
    CUdevice dev;
    if ((st = cvc_driver_get(&drv)) != CONVCAT_OK ||
        (st = cvc_cuda_check(drv->cuCtxGetDevice(&dev), "cuCtxGetDevice")) != CONVCAT_OK)
        return st;
    char buf[256] = "";
    if ((st = cvc_cuda_check(drv->cuDeviceGetName(buf, (int)sizeof buf - 1, dev), "cuDeviceGetName")) != CONVCAT_OK)
        return st;
    snprintf(name, name_size, "%s", buf);
    return CONVCAT_OK;
}

/* ---- the candidates ------------------------------------------------------- */

typedef struct tried {
    convcat_tune_result r;
    size_t rank;   /* the model's order */
} tried;

/* Timed first, fastest first; then the rest in the model's order. */
static int by_result(const void *x, const void *y)
{
    const tried *a = x, *b = y;
    const bool ta = a->r.status == CONVCAT_OK, tb = b->r.status == CONVCAT_OK;
    if (ta != tb)
        return ta ? -1 : 1;
    if (ta && a->r.ms != b->r.ms)
        return a->r.ms < b->r.ms ? -1 : 1;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* A skip is the device's or the caller's limit, not a failure of the tune. */
static bool is_skip(convcat_status st)
{
    return st == CONVCAT_ERR_NO_DEVICE || st == CONVCAT_ERR_UNSUPPORTED;
}

convcat_status cvc_tune_candidates(const convcat_catalog *cat, const convcat_problem *p, convcat_arch arch, int sms,
                                   size_t limit, size_t top_k, const cvc_tune_ops *ops, convcat_tune_result *out,
                                   size_t capacity, size_t *count_out)
{
    *count_out = 0;
    convcat_candidate *c;
    size_t ok;
    convcat_status st = cvc_rank(cat, p, arch, sms, &c, &ok);
    const size_t n = top_k && top_k < ok ? top_k : ok;
    tried *t = st == CONVCAT_OK ? calloc(n ? n : 1, sizeof *t) : NULL;
    if (st == CONVCAT_OK && !t)
        st = cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory autotuning");
    const bool log = st == CONVCAT_OK && cvc_log_enabled();
    size_t done = 0, timed = 0;
    convcat_status first_error = CONVCAT_OK;
    char first_why[256] = "";
    for (; st == CONVCAT_OK && done < n; ++done) {
        convcat_tune_result *r = &t[done].r;
        const cvc_entry *e = &cat->entries[c[done].index];
        t[done].rank = done;
        r->index = c[done].index;
        r->predicted_us = c[done].predicted_us;
        void *plan = NULL;
        r->status = ops->plan(ops->ctx, r->index, &plan, &r->workspace_bytes);
        if (r->status == CONVCAT_OK && r->workspace_bytes > limit) {
            r->status = CONVCAT_ERR_UNSUPPORTED;
            cvc_say(r->reason, sizeof r->reason, "skipped: needs %zu bytes of workspace; the caller's holds %zu",
                    r->workspace_bytes, limit);
        } else if (r->status == CONVCAT_OK) {
            r->status = ops->time(ops->ctx, plan, &r->ms);
        }
        if (plan)
            ops->destroy(ops->ctx, plan);
        if (r->status != CONVCAT_OK && !r->reason[0])
            cvc_say(r->reason, sizeof r->reason, "%s%s", is_skip(r->status) ? "skipped: " : "",
                    convcat_last_error());
        if (r->status == CONVCAT_OK)
            ++timed;
        else if (!is_skip(r->status) && first_error == CONVCAT_OK) {
            first_error = r->status;
            snprintf(first_why, sizeof first_why, "%s: %s", e->key, r->reason);
        }
        if (r->status == CONVCAT_ERR_NO_MEMORY)   /* the host is out of memory: stop */
            st = r->status;
        if (log) {
            if (r->status == CONVCAT_OK)
                cvc_log("autotune: %s: %.4f ms (predicted %.1f us, workspace %zu bytes)", e->key, r->ms,
                        r->predicted_us, r->workspace_bytes);
            else
                cvc_log("autotune: %s: %s", e->key, r->reason);
        }
    }
    if (st == CONVCAT_OK || st == CONVCAT_ERR_NO_MEMORY) {
        if (t) {
            qsort(t, done, sizeof *t, by_result);
            const size_t k = done < capacity ? done : capacity;
            for (size_t i = 0; i < k; ++i)
                out[i] = t[i].r;
            *count_out = k;
        }
    }
    if (st == CONVCAT_OK && timed == 0)
        st = first_error != CONVCAT_OK
                 ? cvc_fail(first_error, "no candidate could be timed; the first failure: %s", first_why)
                 : cvc_fail(CONVCAT_ERR_NOT_FOUND, "none of the %zu candidates could run here; e.g. %s: %s", done,
                            cat->entries[t[0].r.index].key, t[0].r.reason);
    if (st == CONVCAT_OK && log)
        cvc_log("autotune: winner %s, %.4f ms; %zu of %zu candidates timed%s", cat->entries[t[0].r.index].key,
                t[0].r.ms, timed, done, n < ok ? " (top_k of the model's ranking)" : "");
    free(t);
    free(c);
    return st;
}

/* The library's ops: a real plan on the current device, timed with CUDA events. */
typedef struct real_ctx {
    const convcat_catalog *cat;
    const convcat_problem *p;
    const convcat_tensors *t;
    void *stream;
    int iterations;
} real_ctx;

static convcat_status real_plan(void *ctx, size_t index, void **plan_out, size_t *workspace)
{
    const real_ctx *x = ctx;
    convcat_plan *plan = NULL;
    convcat_status st = convcat_plan_create(x->cat, x->p, index, &plan);
    convcat_plan_info info = {0};
    if (st == CONVCAT_OK)
        st = convcat_plan_info_get(plan, &info);
    *plan_out = plan;
    *workspace = info.workspace_bytes;
    return st;
}

static convcat_status real_time(void *ctx, void *plan, double *ms)
{
    const real_ctx *x = ctx;
    return cvc_time_plan(plan, x->t, x->stream, x->iterations, ms);
}

static void real_destroy(void *ctx, void *plan)
{
    (void)ctx;
    convcat_plan_destroy(plan);
}

void convcat_tune_options_init(convcat_tune_options *o)
{
    if (o)
        *o = (convcat_tune_options){.iterations = DEFAULT_ITERATIONS, .top_k = 0, .cache = NULL};
}

/* Results into `out` for the current device, whose identity comes back too. */
static convcat_status tune_here(const convcat_catalog *cat, const convcat_problem *p, const convcat_tensors *t,
                                void *stream, int iterations, size_t top_k, convcat_tune_result *out,
                                size_t capacity, size_t *count_out, convcat_arch *arch, int *sms, char *device,
                                size_t device_size)
{
    convcat_status st = cvc_device_identity(arch, sms, device, device_size);
    if (st != CONVCAT_OK)
        return st;
    real_ctx ctx = {.cat = cat, .p = p, .t = t, .stream = stream, .iterations = iterations};
    const cvc_tune_ops ops = {.plan = real_plan, .time = real_time, .destroy = real_destroy, .ctx = &ctx};
    return cvc_tune_candidates(cat, p, *arch, *sms, t->workspace ? t->workspace_bytes : 0, top_k, &ops, out,
                               capacity, count_out);
}

convcat_status convcat_autotune_results(const convcat_catalog *cat, const convcat_problem *p,
                                        const convcat_tensors *t, void *stream, const convcat_tune_options *options,
                                        convcat_tune_result *out, size_t capacity, size_t *count_out)
{
    if (count_out)
        *count_out = 0;
    convcat_tune_options o;
    convcat_tune_options_init(&o);
    if (options)
        o = *options;
    if (!cat || !p || !t || !count_out || (!out && capacity) || o.iterations < 0)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT,
                        "convcat_autotune_results: NULL argument or options.iterations < 0");
    if (o.iterations == 0)
        o.iterations = DEFAULT_ITERATIONS;
    convcat_arch arch;
    int sms;
    char device[CVC_DEVICE_NAME_BYTES];
    convcat_tune_result best;
    convcat_tune_result *rows = out ? out : &best;
    size_t cap = out ? capacity : 1;
    convcat_status st = tune_here(cat, p, t, stream, o.iterations, o.top_k, rows, cap, count_out, &arch, &sms,
                                  device, sizeof device);
    if (st == CONVCAT_OK && o.cache && *count_out)
        st = cvc_tune_cache_put_device(o.cache, cat->id, arch, device, sms, p, cat->entries[rows[0].index].key,
                                       rows[0].ms);
    if (!out)
        *count_out = 0;
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
    char device[CVC_DEVICE_NAME_BYTES];
    convcat_status st = cvc_device_identity(&arch, &sms, device, sizeof device);
    if (st != CONVCAT_OK)
        return st;
    char key[CVC_KEY_BYTES];
    double ms = 0.0;
    size_t index;
    if (cache && cvc_tune_cache_get_device(cache, cat->id, arch, device, sms, p, key, sizeof key, &ms) &&
        convcat_find(cat, key, &index) == CONVCAT_OK &&
        convcat_check(cat, index, p, NULL, 0) == CONVCAT_OK) {
        if (cvc_log_enabled())
            cvc_log("autotune: cache hit: %s, %.4f ms, remembered for %s (%d SMs) and catalog %08x", key, ms, device,
                    sms, cat->id);
        *index_out = index;
        if (ms_out)
            *ms_out = ms;
        return CONVCAT_OK;
    }
    convcat_tune_result best;
    size_t n = 0;
    st = tune_here(cat, p, t, stream, iterations, 0, &best, 1, &n, &arch, &sms, device, sizeof device);
    if (st == CONVCAT_OK && cache)
        st = cvc_tune_cache_put_device(cache, cat->id, arch, device, sms, p, cat->entries[best.index].key, best.ms);
    if (st == CONVCAT_OK) {
        *index_out = best.index;
        if (ms_out)
            *ms_out = best.ms;
    }
    return st;
}
