/* fuzz_tune.c: libFuzzer harness for the autotune cache file's reader (runtime/src/tune.c).
 *
 * The input is a cache file's text.  The reader either takes every line or refuses the whole
 * file (no rows, a reason); what it takes must survive the writer: the written text reads back
 * into as many rows and writes out byte for byte the same (times at full precision, devices and
 * problems as they were read).  Must never crash or trip ASan/UBSan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_internal.h"

/* The cache as text, malloc'd (NULL on failure). */
static char *text_of(const convcat_tune_cache *c, size_t *size)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, size);
    if (!f)
        return NULL;
    const bool ok = cvc_tune_cache_write(c, f);
    if (fclose(f) != 0 || !ok) {
        free(buf);
        return NULL;
    }
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;   /* fmemopen takes no empty buffer; the unit test covers the empty file */
    FILE *f = fmemopen((void *)data, size, "r");
    convcat_tune_cache *c = cvc_tune_cache_new();
    if (!f || !c) {
        if (f)
            fclose(f);
        convcat_tune_cache_free(c);
        return 0;
    }
    char why[192];
    const bool ok = cvc_tune_cache_read(c, f, why, sizeof why);
    fclose(f);
    const size_t rows = convcat_tune_cache_count(c);
    if (ok ? why[0] != '\0' : rows != 0 || why[0] == '\0')
        abort();   /* a refusal empties the cache and says why; a success says nothing */
    if (ok) {
        size_t n1 = 0, n2 = 0;
        char *t1 = text_of(c, &n1);
        convcat_tune_cache *back = cvc_tune_cache_new();
        FILE *g = t1 && back ? fmemopen(t1, n1, "r") : NULL;
        if (g) {
            if (!cvc_tune_cache_read(back, g, why, sizeof why) || convcat_tune_cache_count(back) != rows)
                abort();   /* what was read must read back from what is written */
            fclose(g);
            char *t2 = text_of(back, &n2);
            if (t2 && (n1 != n2 || memcmp(t1, t2, n1) != 0))
                abort();
            free(t2);
        }
        convcat_tune_cache_free(back);
        free(t1);
    }
    convcat_tune_cache_free(c);
    return 0;
}
