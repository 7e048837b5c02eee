/* cvc_epilogue.h: what the fused epilogues of the gather and direct families share:
 * the activations and element loads and stores by type.
 *
 * out = act(alpha * acc + bias[channel] + beta * C); activations are the
 * CVC_ACT_* of convcat_kernel_abi.h.  Functions are named by type (f16,
 * bf16, f32); the generator prints the names of a kernel's types.
 */
#ifndef CVC_EPILOGUE_H
#define CVC_EPILOGUE_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "convcat_kernel_abi.h"

#ifndef CVC_DEV
#define CVC_DEV static __device__ __forceinline__
#endif

/* Out of line: an activation switch inlined into every unrolled accumulator makes kernels
 * several times larger (instruction fetch); kernels run without one skip the call. */
static __device__ __noinline__ float cvc_activate(float v, int act)
{
    switch (act) {
    case CVC_ACT_RELU: return fmaxf(v, 0.0f);
    case CVC_ACT_GELU: return 0.5f * v * (1.0f + erff(v * 0.70710678f));
    case CVC_ACT_SILU: return v / (1.0f + __expf(-v));
    default: return v;
    }
}

/* One element i of a tensor, as float. */
CVC_DEV float cvc_ld_f16(const void *p, int64_t i) { return __half2float(((const __half *)p)[i]); }
CVC_DEV float cvc_ld_bf16(const void *p, int64_t i) { return __bfloat162float(((const __nv_bfloat16 *)p)[i]); }
CVC_DEV float cvc_ld_f32(const void *p, int64_t i) { return ((const float *)p)[i]; }

/* Store element i. */
CVC_DEV void cvc_st_f16(void *p, int64_t i, float v) { ((__half *)p)[i] = __float2half_rn(v); }
CVC_DEV void cvc_st_bf16(void *p, int64_t i, float v) { ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v); }
CVC_DEV void cvc_st_f32(void *p, int64_t i, float v) { ((float *)p)[i] = v; }

/* Elements i and i + 1 (i even, the pair aligned): one store. */
CVC_DEV void cvc_st2_f16(void *p, int64_t i, float a, float b)
{
    *(__half2 *)((__half *)p + i) = __floats2half2_rn(a, b);
}
CVC_DEV void cvc_st2_bf16(void *p, int64_t i, float a, float b)
{
    *(__nv_bfloat162 *)((__nv_bfloat16 *)p + i) = __floats2bfloat162_rn(a, b);
}
CVC_DEV void cvc_st2_f32(void *p, int64_t i, float a, float b) { *(float2 *)((float *)p + i) = make_float2(a, b); }

/* Raw 16-bit storage bits to float. */
CVC_DEV float cvc_bits_f16(uint32_t b) { return __half2float(__ushort_as_half((unsigned short)b)); }
CVC_DEV float cvc_bits_bf16(uint32_t b) { return __uint_as_float(b << 16); }

/* Multiply-and-shift division for 0 <= x < 2^31 (the runtime's cvc_divider makes d). */
CVC_DEV uint32_t cvc_div(uint32_t x, const uint32_t d[2]) { return (__umulhi(x, d[0]) + x) >> d[1]; }

#endif
