/* driver.h: the CUDA driver API, reached through dlopen("libcuda.so.1").
 *
 * Nothing in convcat links against libcuda: listing, checking and querying a
 * catalog work on machines with no GPU and no driver.  The table is filled
 * once, on first need, thread-safely.  Signatures come from cuda.h itself
 * (__typeof__), and so do the versioned symbol names (cuMemAlloc ->
 * cuMemAlloc_v2), so the two cannot disagree.
 */
#ifndef CONVCAT_DRIVER_H
#define CONVCAT_DRIVER_H

#include <cuda.h>

#include "convcat.h"

#define CVC_DRIVER_FUNCTIONS(X)                                                   \
    X(cuInit) X(cuGetErrorName) X(cuDriverGetVersion) X(cuCtxGetCurrent)           \
    X(cuCtxGetDevice) X(cuDeviceGetAttribute) X(cuLibraryLoadData) X(cuLibraryUnload) \
    X(cuLibraryGetKernel) X(cuKernelSetAttribute) X(cuKernelGetFunction)           \
    X(cuLaunchKernelEx) X(cuTensorMapEncodeIm2col) X(cuTensorMapEncodeTiled)       \
    X(cuOccupancyMaxActiveClusters)                                               \
    /* used by the tools and tests */                                             \
    X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetName) X(cuDevicePrimaryCtxRetain) \
    X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuMemAlloc) \
    X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD32) X(cuLaunchKernel)   \
    X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime)     \
    X(cuEventDestroy) X(cuStreamSynchronize) X(cuStreamCreate) X(cuStreamDestroy)     \
    X(cuMemsetD32Async)

#define CVC_DRIVER_MEMBER(name) __typeof__(name) *name;
typedef struct cvc_driver {
    CVC_DRIVER_FUNCTIONS(CVC_DRIVER_MEMBER)
} cvc_driver;
#undef CVC_DRIVER_MEMBER

/* The loaded and initialised driver, or CONVCAT_ERR_NO_DRIVER with the reason
 * in convcat_last_error().  The answer is computed once per process. */
convcat_status cvc_driver_get(const cvc_driver **out);

/* CONVCAT_OK for CUDA_SUCCESS; otherwise record `result` (convcat_last_cuda_error)
 * and a message naming `what`, and return CONVCAT_ERR_CUDA. */
convcat_status cvc_cuda_check(CUresult result, const char *what);

#endif
