// reference.cu: simple, obviously-right GPU kernels to check convcat against.
//
// cvc_ref_fill     fresh pseudo-random data (a counter hash, seeded per call)
// cvc_ref_fprop    direct convolution: one thread per output, f32 accumulation,
//                  every tap bounds-checked against the unpadded input
// cvc_ref_compare  sum (y - e)^2, sum e^2, the count of non-finite y and the
//                  count of outliers |y - e| > rel * (|e| + rms), where
//                  e = act(alpha * ref + bias[k] + beta * c) (rel = 0: no outlier count)
//
// Loaded by the tools through the driver API (cuModuleLoadData), never by
// the library.  Types are convcat_dtype values: 1 f16, 2 bf16, 4 f32.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "reference.h"

enum { F16 = 1, BF16 = 2, F32 = 4 };

__device__ float load(const void *p, long long i, int t)
{
    switch (t) {
    case F16: return __half2float(((const __half *)p)[i]);
    case BF16: return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

__device__ void store(void *p, long long i, int t, float v)
{
    switch (t) {
    case F16: ((__half *)p)[i] = __float2half_rn(v); break;
    case BF16: ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v); break;
    default: ((float *)p)[i] = v;
    }
}

__device__ unsigned hash(unsigned long long i, unsigned seed)
{
    unsigned long long z = i * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (unsigned)((z ^ (z >> 31)) >> 32);
}

extern "C" __global__ void cvc_ref_fill(void *p, long long n, int t, unsigned seed, float lo, float hi)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        store(p, i, t, lo + (hi - lo) * (hash(i, seed) * (1.0f / 4294967296.0f)));
}

extern "C" __global__ void cvc_ref_fprop(const void *x, const void *w, float *out, cvc_ref_conv cv)
{
    const long long total = (long long)cv.n * cv.z * cv.p * cv.q * cv.k;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int k = (int)(i % cv.k);
        long long pix = i / cv.k;
        const int q = (int)(pix % cv.q);
        pix /= cv.q;
        const int p = (int)(pix % cv.p);
        pix /= cv.p;
        const int z = (int)(pix % cv.z);
        const int n = (int)(pix / cv.z);
        float acc = 0.0f;
        for (int t = 0; t < cv.t; ++t) {
            const int di = z * cv.str_d - cv.pad_d + t * cv.dil_d;
            if (di < 0 || di >= cv.d)
                continue;
            for (int r = 0; r < cv.r; ++r) {
                const int hi = p * cv.str_h - cv.pad_h + r * cv.dil_h;
                if (hi < 0 || hi >= cv.h)
                    continue;
                for (int s = 0; s < cv.s; ++s) {
                    const int wi = q * cv.str_w - cv.pad_w + s * cv.dil_w;
                    if (wi < 0 || wi >= cv.w)
                        continue;
                    const long long xo = ((((long long)n * cv.d + di) * cv.h + hi) * cv.w + wi) * cv.c;
                    const long long wo = ((((long long)k * cv.t + t) * cv.r + r) * cv.s + s) * cv.c;
                    for (int c = 0; c < cv.c; ++c)
                        acc += load(x, xo + c, cv.a_type) * load(w, wo + c, cv.b_type);
                }
            }
        }
        out[i] = acc;
    }
}

__device__ float activate(float v, int act)
{
    switch (act) {
    case 1: return v > 0.0f ? v : 0.0f;                               // ReLU
    case 2: return 0.5f * v * (1.0f + erff(v * 0.70710678118f));      // GELU (erf)
    case 3: return v / (1.0f + expf(-v));                             // SiLU
    default: return v;
    }
}

extern "C" __global__ void cvc_ref_compare(const void *y, int y_type, const float *ref, const void *c,
                                           const void *bias, int k, int act, float alpha, float beta,
                                           long long n, float rms, float rel, double *sums)
{
    __shared__ double part[4][256];
    double err = 0.0, norm = 0.0, bad = 0.0, outliers = 0.0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const float e = activate(alpha * ref[i] + (bias ? load(bias, i % k, y_type) : 0.0f) +
                                 (beta != 0.0f ? beta * load(c, i, y_type) : 0.0f), act);
        const float v = load(y, i, y_type);
        if (!isfinite(v)) {
            bad += 1.0;
            continue;
        }
        err += (double)(v - e) * (v - e);
        norm += (double)e * e;
        if (rel > 0.0f && fabsf(v - e) > rel * (fabsf(e) + rms))
            outliers += 1.0;
    }
    part[0][threadIdx.x] = err;
    part[1][threadIdx.x] = norm;
    part[2][threadIdx.x] = bad;
    part[3][threadIdx.x] = outliers;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            for (int j = 0; j < 4; ++j)
                part[j][threadIdx.x] += part[j][threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        for (int j = 0; j < 4; ++j)
            atomicAdd(&sums[j], part[j][0]);
}
