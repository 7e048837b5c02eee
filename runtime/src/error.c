/* error.c: status strings, names, and the thread-local last error. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static _Thread_local char last_error[512];
static _Thread_local int last_cuda_error;

convcat_status cvc_fail(convcat_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

void cvc_set_cuda_error(int result)
{
    last_cuda_error = result;
}

void cvc_error_save(cvc_error_state *s)
{
    _Static_assert(sizeof s->text == sizeof last_error, "cvc_error_state holds the whole message");
    memcpy(s->text, last_error, sizeof last_error);
    s->cuda = last_cuda_error;
}

void cvc_error_restore(const cvc_error_state *s)
{
    memcpy(last_error, s->text, sizeof last_error);
    last_cuda_error = s->cuda;
}

void cvc_say(char *buf, size_t size, const char *fmt, ...)
{
    if (!buf || size == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

const char *convcat_last_error(void)
{
    return last_error;
}

int convcat_last_cuda_error(void)
{
    return last_cuda_error;
}

const char *convcat_status_string(convcat_status status)
{
    switch (status) {
    case CONVCAT_OK: return "success";
    case CONVCAT_ERR_INVALID_ARGUMENT: return "invalid argument";
    case CONVCAT_ERR_IO: return "cannot read the catalog file";
    case CONVCAT_ERR_CORRUPT: return "corrupt catalog";
    case CONVCAT_ERR_VERSION: return "catalog version not supported";
    case CONVCAT_ERR_NOT_FOUND: return "not found";
    case CONVCAT_ERR_UNSUPPORTED: return "problem not supported by the kernel";
    case CONVCAT_ERR_NO_DRIVER: return "CUDA driver not available";
    case CONVCAT_ERR_NO_DEVICE: return "no usable CUDA device";
    case CONVCAT_ERR_CUDA: return "CUDA driver call failed";
    case CONVCAT_ERR_NO_MEMORY: return "out of host memory";
    case CONVCAT_ERR_MISALIGNED: return "misaligned tensor";
    }
    return "unknown status";
}

static const char *const dtype_names[] = {NULL, "f16", "bf16", "tf32", "f32", "e4m3", "e5m2"};
static const char *const op_names[] = {"fprop", "dgrad", "wgrad"};
static const char *const arch_names[] = {"any", "sm90a", "sm100a"};
static const char *const schedule_names[] = {NULL, "coop", "pingpong", "1sm", "2sm", "swap", "halo", "gather",
                                             "direct", "grouped"};

const char *convcat_dtype_name(convcat_dtype t)
{
    return (unsigned)t < CVC_ARRAY_LEN(dtype_names) ? dtype_names[t] : NULL;
}

const char *convcat_op_name(convcat_op op)
{
    return (unsigned)op < CVC_ARRAY_LEN(op_names) ? op_names[op] : NULL;
}

const char *convcat_arch_name(convcat_arch arch)
{
    return (unsigned)arch < CVC_ARRAY_LEN(arch_names) ? arch_names[arch] : NULL;
}

const char *convcat_schedule_name(convcat_schedule s)
{
    return (unsigned)s < CVC_ARRAY_LEN(schedule_names) ? schedule_names[s] : NULL;
}

int cvc_dtype_bytes(convcat_dtype t)
{
    switch (t) {
    case CONVCAT_F16:
    case CONVCAT_BF16: return 2;
    case CONVCAT_TF32:
    case CONVCAT_F32: return 4;
    case CONVCAT_E4M3:
    case CONVCAT_E5M2: return 1;
    }
    return 0;
}
