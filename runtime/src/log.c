/* log.c: the opt-in log of the library's decisions.
 *
 * The library prints nothing by itself; this is the exception a user turns
 * on: a callback (convcat_set_log_callback) receives each line, or, with no
 * callback, CONVCAT_LOG=1 (any value but "" and "0") writes them to stderr.
 * Lines are built only when one of the two is on.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "log.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static convcat_log_callback callback;
static void *callback_data;

void convcat_set_log_callback(convcat_log_callback cb, void *user_data)
{
    pthread_mutex_lock(&lock);
    callback = cb;
    callback_data = cb ? user_data : NULL;
    pthread_mutex_unlock(&lock);
}

static bool env_on(void)
{
    const char *v = getenv("CONVCAT_LOG");
    return v && *v && strcmp(v, "0") != 0;
}

bool cvc_log_enabled(void)
{
    pthread_mutex_lock(&lock);
    const bool cb = callback != NULL;
    pthread_mutex_unlock(&lock);
    return cb || env_on();
}

void cvc_log(const char *fmt, ...)
{
    pthread_mutex_lock(&lock);
    const convcat_log_callback cb = callback;
    void *data = callback_data;
    pthread_mutex_unlock(&lock);
    if (!cb && !env_on())
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (cb)
        cb(data, line);
    else
        fprintf(stderr, "convcat: %s\n", line);
}

void cvc_problem_phrase(const convcat_problem *p, char *buf, size_t n)
{
    const char *op = convcat_op_name(p->op), *a = convcat_dtype_name(p->a_type), *b = convcat_dtype_name(p->b_type),
               *o = convcat_dtype_name(p->out_type);
    int len = snprintf(buf, n, "%s %dD %s x %s -> %s, N %d", op ? op : "?", p->dims, a ? a : "?", b ? b : "?",
                       o ? o : "?", p->n);
    const int first = 3 - (p->dims >= 1 && p->dims <= 3 ? p->dims : 3);   /* D, H, W: the axes the problem has */
    static const char *const in_name[3] = {"D", "H", "W"};
    const int in[3] = {p->d, p->h, p->w}, filt[3] = {p->t, p->r, p->s};
    for (int a = first; a < 3 && len >= 0 && (size_t)len < n; ++a)
        len += snprintf(buf + len, n - (size_t)len, " %s %d", in_name[a], in[a]);
    if (len >= 0 && (size_t)len < n)
        len += snprintf(buf + len, n - (size_t)len, " C %d -> K %d, filter ", p->c, p->k);
    for (int a = first; a < 3 && len >= 0 && (size_t)len < n; ++a)
        len += snprintf(buf + len, n - (size_t)len, "%s%d", a > first ? "x" : "", filt[a]);
    if (len >= 0 && (size_t)len < n)
        len += snprintf(buf + len, n - (size_t)len, ", pad");
    for (int a = first; a < 3 && len >= 0 && (size_t)len < n; ++a)
        len += snprintf(buf + len, n - (size_t)len, " %d/%d", p->pad_lo[a], p->pad_hi[a]);
    if (len >= 0 && (size_t)len < n)
        len += snprintf(buf + len, n - (size_t)len, ", stride");
    for (int a = first; a < 3 && len >= 0 && (size_t)len < n; ++a)
        len += snprintf(buf + len, n - (size_t)len, " %d", p->stride[a]);
    if (len >= 0 && (size_t)len < n)
        len += snprintf(buf + len, n - (size_t)len, ", dilation");
    for (int a = first; a < 3 && len >= 0 && (size_t)len < n; ++a)
        len += snprintf(buf + len, n - (size_t)len, " %d", p->dilation[a]);
    if (p->groups != 1 && len >= 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len, ", groups %d", p->groups);
}
