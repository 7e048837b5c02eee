/* driver.c: dlopen the CUDA driver once and resolve every function convcat uses. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "driver.h"
#include "internal.h"

#define CVC_STR2(x) #x
#define CVC_STR(x) CVC_STR2(x)   /* expands cuda.h's version macros first */

static cvc_driver table;
static convcat_status load_status;
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(load_error, sizeof load_error, "cannot load the CUDA driver (libcuda.so.1): %s",
                 e ? e : "unknown error");
        load_status = CONVCAT_ERR_NO_DRIVER;
        return;
    }
#define CVC_RESOLVE(name)                                                                  \
    if (!(table.name = (__typeof__(name) *)dlsym(lib, CVC_STR(name)))) {                   \
        snprintf(load_error, sizeof load_error,                                            \
                 "the CUDA driver lacks %s: a driver for CUDA 12.8 or newer is needed",     \
                 CVC_STR(name));                                                            \
        load_status = CONVCAT_ERR_NO_DRIVER;                                               \
        return;                                                                             \
    }
    CVC_DRIVER_FUNCTIONS(CVC_RESOLVE)
#undef CVC_RESOLVE
    CUresult r = table.cuInit(0);
    if (r != CUDA_SUCCESS) {
        const char *name = NULL;
        table.cuGetErrorName(r, &name);
        snprintf(load_error, sizeof load_error, "cuInit failed: %s (%d): no usable GPU or driver",
                 name ? name : "unknown", (int)r);
        load_status = CONVCAT_ERR_NO_DRIVER;
        return;
    }
    load_status = CONVCAT_OK;
}

convcat_status cvc_driver_get(const cvc_driver **out)
{
    pthread_once(&once, load);
    if (load_status != CONVCAT_OK)
        return cvc_fail(load_status, "%s", load_error);
    *out = &table;
    return CONVCAT_OK;
}

convcat_status cvc_cuda_check(CUresult result, const char *what)
{
    if (result == CUDA_SUCCESS)
        return CONVCAT_OK;
    cvc_set_cuda_error((int)result);
    const char *name = NULL;
    if (table.cuGetErrorName)
        table.cuGetErrorName(result, &name);
    return cvc_fail(CONVCAT_ERR_CUDA, "%s failed: %s (%d)", what, name ? name : "unknown error",
                    (int)result);
}
