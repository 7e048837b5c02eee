/* tune_internal.h: what tune.c shares with its tests beyond internal.h. */
#ifndef CONVCAT_TUNE_INTERNAL_H
#define CONVCAT_TUNE_INTERNAL_H

#include <stdio.h>

#include "internal.h"

/* The device a tune cache row belongs to: its model name, as the driver
 * spells it ("NVIDIA H200"), and its SM count.  "" and 0: a row of a
 * version-1 file, or put without a device (cvc_tune_cache_put), which only
 * lookups without a device find. */
#define CVC_DEVICE_NAME_BYTES 96

convcat_status cvc_tune_cache_put_device(convcat_tune_cache *c, uint32_t catalog_id, convcat_arch arch,
                                         const char *device, int sms, const convcat_problem *p, const char *key,
                                         double ms);
bool cvc_tune_cache_get_device(convcat_tune_cache *c, uint32_t catalog_id, convcat_arch arch, const char *device,
                               int sms, const convcat_problem *p, char *key, size_t key_size, double *ms);

/* An empty cache, or NULL when out of memory. */
convcat_tune_cache *cvc_tune_cache_new(void);
/* A cache file's rows from `f` into `c` (convcat_tune_cache_load's parser, also the fuzz harness's):
 * false, `c` emptied and `why` saying which line, if the text breaks the grammar anywhere. */
bool cvc_tune_cache_read(convcat_tune_cache *c, FILE *f, char *why, size_t why_size);
/* The whole cache as a file's text, under the lock; false on a write error. */
bool cvc_tune_cache_write(const convcat_tune_cache *c, FILE *f);

/* The current context's device: arch, SM count and model name (CONVCAT_ERR_NO_DRIVER, NO_DEVICE). */
convcat_status cvc_device_identity(convcat_arch *arch, int *sms, char *name, size_t name_size);

/* How the tuner makes, times and frees a plan of entry `index`: the driver in the library, a fake in
 * the tests.  plan() gives the plan's workspace need; CONVCAT_ERR_NO_DEVICE there means this device
 * cannot run the kernel (a skip, not an error). */
typedef struct cvc_tune_ops {
    convcat_status (*plan)(void *ctx, size_t index, void **plan_out, size_t *workspace_out);
    convcat_status (*time)(void *ctx, void *plan, double *ms_out);
    void (*destroy)(void *ctx, void *plan);
    void *ctx;
} cvc_tune_ops;

/* convcat_autotune_results' work for a given arch and SM count (the query's machine), workspace limit
 * and top_k, through `ops`. */
convcat_status cvc_tune_candidates(const convcat_catalog *cat, const convcat_problem *p, convcat_arch arch, int sms,
                                   size_t workspace_limit, size_t top_k, const cvc_tune_ops *ops,
                                   convcat_tune_result *out, size_t capacity, size_t *count_out);

#endif
