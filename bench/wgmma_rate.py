#!/usr/bin/env python3
"""The tensor-core rate of one wgmma m64nNk16 (bf16, both operands K-major in shared memory, zero
data) for several N, with one and two warpgroups per SM: is a wgmma as wide as a halo tile's 224
pixels charged like 256?  Not part of the build; needs nvcc and an sm_90 GPU.

    python3 bench/wgmma_rate.py [N ...]        (default: 128 192 224 256)

The instruction is the generator's own (render.wgmma_instruction), the descriptors and waits the
kernels' headers (templates/include/cvc_wgmma.h); one kernel per N is written to a temporary
directory, compiled for sm_90a and run there.

On the H200 (docs/experiments.md), one warpgroup per SM: 35.5, 53.2, 62.1 and 71.0 ns a
wgmma per SM for N = 128, 192, 224, 256 (974-975 TFLOP/s each; an earlier hand-written copy of the
same kernels: 35.6, 53.4, 62.3, 72.4): the cost is linear in N.  Zero data runs faster than the
random data of the benchmarks (~780 TFLOP/s at best there).
"""
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "generator"))
from convcat_gen import render  # noqa: E402

KERNEL = """
__global__ void __launch_bounds__(256, 1) k{n}(float *out, int iters)
{{
    extern __shared__ __align__(1024) unsigned char smem[];
    const uint32_t base = (cvc_smem(smem) + 1023u) & ~1023u;
    for (int i = threadIdx.x; i < 64 * 1024 / 4; i += blockDim.x)
        ((float *)smem)[i] = 0.0f;
    __syncthreads();
    float d[{nreg}];
    for (int i = 0; i < {nreg}; ++i)
        d[i] = 0.0f;
    for (int it = 0; it < iters; ++it) {{
        cvc_wgmma_fence();
#pragma unroll
        for (int k = 0; k < 4; ++k)   // A: 64 rows, B: n rows, 32 bytes of K a step
            asm volatile("{{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %{scale}, 0;\\n\\t{asm}\\n\\t}}"
                         : {outs}
                         : "l"(cvc_desc_kmajor_sw128(base + 32 * k)), "l"(cvc_desc_kmajor_sw128(base + 8192 + 32 * k)),
                           "r"(1)
                         : "memory");
        cvc_wgmma_commit();
        cvc_wgmma_wait1();
    }}
    cvc_wgmma_wait0();
    float s = 0.0f;
    for (int i = 0; i < {nreg}; ++i)
        s += d[i];
    if (s == 12345.0f)   // never: keeps the accumulators live
        out[blockIdx.x] = s;
}}
"""

MAIN = """
typedef void (*kernel_fn)(float *, int);

static void timeit(kernel_fn kern, int n, int wgs, int iters, float *out)
{{
    cudaFuncSetAttribute((const void *)kern, cudaFuncAttributeMaxDynamicSharedMemorySize, 80 * 1024);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    kern<<<132, 128 * wgs, 80 * 1024>>>(out, iters);   // warm-up
    cudaEventRecord(a);
    kern<<<132, 128 * wgs, 80 * 1024>>>(out, iters);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    const double flop = 2.0 * 64 * n * 16 * 4 * (double)iters * 132 * wgs;
    printf("m64n%dk16  %d warpgroup(s)/SM: %.3f ms, %.0f TFLOP/s, %.1f ns per wgmma per SM\\n", n, wgs, ms,
           flop / ms / 1e9, ms * 1e6 / (iters * 4.0 * wgs));
}}

int main()
{{
    float *out;
    const cudaError_t err = cudaMalloc(&out, 4096);
    if (err != cudaSuccess) {{
        printf("wgmma_rate: no usable GPU: %s\\n", cudaGetErrorString(err));
        return 1;
    }}
    for (int wgs = 1; wgs <= 2; ++wgs) {{
{calls}
    }}
    const cudaError_t e = cudaDeviceSynchronize();
    printf("%s\\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}}
"""


def source(widths):
    kernels = []
    for n in widths:
        asm, outs = render.wgmma_instruction(n, "bf16")
        kernels.append(KERNEL.format(n=n, nreg=n // 2, scale=n // 2 + 2, asm=asm, outs=outs))
    calls = "\n".join(f"        timeit(k{n}, {n}, wgs, 20000, out);" for n in widths)
    return ('#include <cstdio>\n#include <cuda_runtime.h>\n#include "cvc_wgmma.h"\n' + "".join(kernels) +
            MAIN.format(calls=calls))


def main():
    widths = [int(a) for a in sys.argv[1:]] or [128, 192, 224, 256]
    with tempfile.TemporaryDirectory() as tmp:
        cu, exe = pathlib.Path(tmp) / "wgmma_rate.cu", pathlib.Path(tmp) / "wgmma_rate"
        cu.write_text(source(widths))
        subprocess.run(["nvcc", "-O3", "-gencode=arch=compute_90a,code=sm_90a", "-I",
                        str(ROOT / "templates" / "include"), "-o", str(exe), str(cu)], check=True)
        return subprocess.run([str(exe)]).returncode


if __name__ == "__main__":
    sys.exit(main())
