// reference.cu: simple, obviously-right GPU kernels to check convcat against.
//
// cvc_ref_fill     fresh pseudo-random data (a counter hash, seeded per call)
// cvc_ref_fprop    direct convolution: one thread per output, every tap
//                  bounds-checked against the unpadded input
// cvc_ref_dgrad    dx from dy and w: one thread per dx element, summing every
//                  (k, tap) whose forward window covers it (divisibility by the
//                  stride, output in range)
// cvc_ref_wgrad    dw from dy and x: one thread per dw element, summing every
//                  (n, output pixel) whose tap lands inside x; grouped: filter k
//                  reads x's channels of its group only
// cvc_ref_compare  the output against e = act(alpha * ref + bias[i % k] + beta * c)
//                  (k the output's innermost extent: K for fprop, C for dgrad and
//                  wgrad) within the bounds of reference.h: the sums of a check
//
// Each convolution kernel writes three f32 values per output, summed in double
// over its terms t = a * b: ref = sum t, mag = sum |t| (the convolution of |A|
// and |B|) and sq = sum t^2, the scales of the bounds.
//
// Loaded by the tools through the driver API (cuModuleLoadData), never by
// the library.  Types are convcat_dtype values: 1 f16, 2 bf16, 4 f32 (3, tf32,
// is stored as f32 and read in full precision here).
//
// Every kernel reads and writes in forward terms (reference.h): x NDHWC,
// w KTRSC, y NZPQK; each f32 result has the shape of the op's output.

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

// One term of an output's sums.
__device__ void add_term(double t, double &acc, double &mag, double &sq)
{
    acc += t;
    mag += fabs(t);
    sq += t * t;
}

__device__ void put_sums(long long i, double acc, double mag, double sq, float *out, float *out_mag, float *out_sq)
{
    out[i] = (float)acc;
    out_mag[i] = (float)mag;
    out_sq[i] = (float)sq;
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

// y[n,z,p,q,k] = sum over t, r, s, j of x[n, window, g*cg + j] * w[k,t,r,s,j], filter k of group
// g = k / (K / groups) reading that group's cg = C / groups channels.
extern "C" __global__ void cvc_ref_fprop(const void *x, const void *w, float *out, float *out_mag, float *out_sq,
                                         cvc_ref_conv cv)
{
    const int cg = cv.c / cv.groups, kg = cv.k / cv.groups;
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
        double acc = 0.0, mag = 0.0, sq = 0.0;
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
                    const long long xo = ((((long long)n * cv.d + di) * cv.h + hi) * cv.w + wi) * cv.c + k / kg * cg;
                    const long long wo = ((((long long)k * cv.t + t) * cv.r + r) * cv.s + s) * cg;
                    for (int c = 0; c < cg; ++c)
                        add_term((double)load(x, xo + c, cv.x_type) * load(w, wo + c, cv.w_type), acc, mag, sq);
                }
            }
        }
        put_sums(i, acc, mag, sq, out, out_mag, out_sq);
    }
}

// dx[n,d,h,w,c] = sum over k, t, r, s of dy[n,z,p,q,k] * w[k,t,r,s,c - g*cg] for the
// output pixels (z, p, q) with z*str_d - pad_d + t*dil_d == d (and so for h, w), over the
// filters k of channel c's group g = c / cg.
extern "C" __global__ void cvc_ref_dgrad(const void *dy, const void *w, float *out, float *out_mag, float *out_sq,
                                         cvc_ref_conv cv)
{
    const int cg = cv.c / cv.groups, kg = cv.k / cv.groups;
    const long long total = (long long)cv.n * cv.d * cv.h * cv.w * cv.c;
    const long long k_stride = (long long)cv.t * cv.r * cv.s * cg;   // w from one k to the next
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int c = (int)(i % cv.c);
        long long pix = i / cv.c;
        const int wi = (int)(pix % cv.w);
        pix /= cv.w;
        const int hi = (int)(pix % cv.h);
        pix /= cv.h;
        const int di = (int)(pix % cv.d);
        const int n = (int)(pix / cv.d);
        double acc = 0.0, mag = 0.0, sq = 0.0;
        for (int t = 0; t < cv.t; ++t) {
            const int zs = di + cv.pad_d - t * cv.dil_d;   // z * str_d
            if (zs < 0 || zs % cv.str_d != 0 || zs / cv.str_d >= cv.z)
                continue;
            const int z = zs / cv.str_d;
            for (int r = 0; r < cv.r; ++r) {
                const int ps = hi + cv.pad_h - r * cv.dil_h;
                if (ps < 0 || ps % cv.str_h != 0 || ps / cv.str_h >= cv.p)
                    continue;
                const int p = ps / cv.str_h;
                for (int s = 0; s < cv.s; ++s) {
                    const int qs = wi + cv.pad_w - s * cv.dil_w;
                    if (qs < 0 || qs % cv.str_w != 0 || qs / cv.str_w >= cv.q)
                        continue;
                    const int q = qs / cv.str_w;
                    const int g = c / cg;
                    const long long yo = ((((long long)n * cv.z + z) * cv.p + p) * cv.q + q) * cv.k + g * kg;
                    const long long wo = (((long long)g * kg * cv.t * cv.r + (long long)t * cv.r + r) * cv.s + s) * cg + c % cg;
                    for (int k = 0; k < kg; ++k)
                        add_term((double)load(dy, yo + k, cv.y_type) * load(w, wo + k * k_stride, cv.w_type), acc, mag,
                                 sq);
                }
            }
        }
        put_sums(i, acc, mag, sq, out, out_mag, out_sq);
    }
}

// dw[k,t,r,s,j] = sum over n, z, p, q of dy[n,z,p,q,k] * x[n, z*str_d - pad_d + t*dil_d,
// p*str_h - pad_h + r*dil_h, q*str_w - pad_w + s*dil_w, g*cg + j], taps outside x contributing 0,
// with cg = C / groups channels per group and g = k / (K / groups) the group of filter k.
extern "C" __global__ void cvc_ref_wgrad(const void *dy, const void *x, float *out, float *out_mag, float *out_sq,
                                         cvc_ref_conv cv)
{
    const int cg = cv.c / cv.groups;
    const long long total = (long long)cv.k * cv.t * cv.r * cv.s * cg;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        long long tap = i / cg;
        const int s = (int)(tap % cv.s);
        tap /= cv.s;
        const int r = (int)(tap % cv.r);
        tap /= cv.r;
        const int t = (int)(tap % cv.t);
        const int k = (int)(tap / cv.t);
        const int c = k / (cv.k / cv.groups) * cg + (int)(i % cg);   // x's channel
        double acc = 0.0, mag = 0.0, sq = 0.0;
        for (int n = 0; n < cv.n; ++n)
            for (int z = 0; z < cv.z; ++z) {
                const int di = z * cv.str_d - cv.pad_d + t * cv.dil_d;
                if (di < 0 || di >= cv.d)
                    continue;
                for (int p = 0; p < cv.p; ++p) {
                    const int hi = p * cv.str_h - cv.pad_h + r * cv.dil_h;
                    if (hi < 0 || hi >= cv.h)
                        continue;
                    for (int q = 0; q < cv.q; ++q) {
                        const int wi = q * cv.str_w - cv.pad_w + s * cv.dil_w;
                        if (wi < 0 || wi >= cv.w)
                            continue;
                        const long long yo = ((((long long)n * cv.z + z) * cv.p + p) * cv.q + q) * cv.k + k;
                        const long long xo = ((((long long)n * cv.d + di) * cv.h + hi) * cv.w + wi) * cv.c + c;
                        add_term((double)load(dy, yo, cv.y_type) * load(x, xo, cv.x_type), acc, mag, sq);
                    }
                }
            }
        put_sums(i, acc, mag, sq, out, out_mag, out_sq);
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

// One thread per output (grid-stride), the block's sums reduced in shared memory, then added
// into `sums` (a cvc_ref_sums cleared by the caller); `worst` is a maximum, kept with an
// integer atomicMax on its bits (for non-negative doubles the bits order as the values).
extern "C" __global__ void cvc_ref_compare(const void *y, int y_type, const float *ref, const float *mag,
                                           const float *sq, const void *c, const void *bias, int k, int act,
                                           float alpha, float beta, long long n, cvc_ref_bounds bounds,
                                           cvc_ref_sums *sums)
{
    __shared__ double part[CVC_REF_SUMS][256];
    cvc_ref_sums s = {};
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const float b = bias ? load(bias, i % k, y_type) : 0.0f;
        const float bc = beta != 0.0f ? beta * load(c, i, y_type) : 0.0f;
        const float v = alpha * ref[i] + b + bc;
        const double p = fabs((double)alpha * ref[i]) + fabs((double)b) + fabs((double)bc);
        cvc_ref_check_one(&bounds, load(y, i, y_type), activate(v, act), v, alpha, ref[i], mag[i], sq[i], p, &s);
    }
    const double *mine = (const double *)&s;
    for (int j = 0; j < CVC_REF_SUMS; ++j)
        part[j][threadIdx.x] = mine[j];
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) {
            for (int j = 0; j < CVC_REF_SUMS - 1; ++j)
                part[j][threadIdx.x] += part[j][threadIdx.x + h];
            part[CVC_REF_SUMS - 1][threadIdx.x] = fmax(part[CVC_REF_SUMS - 1][threadIdx.x],
                                                     part[CVC_REF_SUMS - 1][threadIdx.x + h]);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        double *out = (double *)sums;
        for (int j = 0; j < CVC_REF_SUMS - 1; ++j)
            atomicAdd(&out[j], part[j][0]);
        atomicMax((unsigned long long *)&out[CVC_REF_SUMS - 1],
                  (unsigned long long)__double_as_longlong(part[CVC_REF_SUMS - 1][0]));
    }
}
