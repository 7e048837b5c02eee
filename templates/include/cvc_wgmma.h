/* cvc_wgmma.h: warpgroup MMA plumbing, register reallocation, conversions (sm_90a).
 *
 * The wgmma.mma_async instruction itself is emitted by the generator into each
 * kernel (its operand list depends on the tile's N); this header holds what is
 * shape-independent.  PTX ISA 9.0 §9.7.15 (wgmma), §9.7.19.5 (setmaxnreg).
 */
#ifndef CVC_WGMMA_H
#define CVC_WGMMA_H

#include "cvc_sync.h"

/* ---- group control (§9.7.15.7), issued by all 128 threads of a warpgroup --- */

CVC_DEV void cvc_wgmma_fence(void)
{
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

CVC_DEV void cvc_wgmma_commit(void)
{
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

/* Wait until at most 0 / 1 committed groups are pending (N is an immediate). */
CVC_DEV void cvc_wgmma_wait0(void)
{
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
}

CVC_DEV void cvc_wgmma_wait1(void)
{
    asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
}

/* Keep the compiler from moving accumulator reads/writes across wgmma
 * boundaries: an empty asm that "uses and redefines" the register. */
CVC_DEV void cvc_fence_reg(float *r)
{
    asm volatile("" : "+f"(*r)::"memory");
}

/* ---- shared-memory matrix descriptor (§9.7.15.5.1.2) -----------------------
 * K-major, 128-byte swizzle: LBO unused (encoded 1), SBO = `sbo` bytes between
 * 8-row groups, swizzle mode 1 in bits 62-63.  Schedule halo reads 8-pixel
 * groups one input row apart (SBO = HALO_W x 128 B); the swizzle is a function
 * of the absolute shared-memory address (PTX ISA, swizzling modes), so a start address at
 * any 128-byte row of a 1024-B aligned tile reads the rows TMA swizzled there. */
CVC_DEV uint64_t cvc_desc_kmajor_sw128_sbo(uint32_t smem_addr, uint32_t sbo)
{
    return (uint64_t)((smem_addr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) |
           ((uint64_t)((sbo & 0x3FFFF) >> 4) << 32) | ((uint64_t)1 << 62);
}

/* The dense case: SBO = 1024 B (8 rows of 128 B).  Stage buffers are 1024-B
 * aligned so the base offset is 0; stepping K by 16 elements adds 32 B to the
 * start address. */
CVC_DEV uint64_t cvc_desc_kmajor_sw128(uint32_t smem_addr)
{
    return cvc_desc_kmajor_sw128_sbo(smem_addr, 1024);
}

/* K-major, 64-byte swizzle (tile K 32 of f16/bf16): rows of 64 B, SBO = 512 B between 8-row
 * groups, swizzle mode 2.  The pattern repeats every 512 B and stage buffers are 1024-B
 * aligned (base offset 0); stepping K by 16 elements adds 32 B to the start address. */
CVC_DEV uint64_t cvc_desc_kmajor_sw64(uint32_t smem_addr)
{
    return (uint64_t)((smem_addr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) |
           ((uint64_t)(512 >> 4) << 32) | ((uint64_t)2 << 62);
}

/* MN-major (transposed; f16/bf16 only), 128-byte swizzle: the tile is stored
 * as columns 64 elements wide (one TMA box each, `col_bytes` apart: LBO), each
 * a stack of 128-byte K rows; SBO = 1024 B between 8-row groups along K.  One
 * k16 step is 16 K rows: add 2048 B to the start address. */
CVC_DEV uint64_t cvc_desc_mnmajor_sw128(uint32_t smem_addr, uint32_t col_bytes)
{
    return (uint64_t)((smem_addr & 0x3FFFF) >> 4) | ((uint64_t)((col_bytes & 0x3FFFF) >> 4) << 16) |
           ((uint64_t)(1024 >> 4) << 32) | ((uint64_t)1 << 62);
}

/* MN-major, 64-byte swizzle (dgrad tile N 32 and 160: B column boxes 32 elements wide, each a
 * stack of 64-byte K rows, `col_bytes` apart: LBO); SBO = 512 B between 8-row groups along K,
 * swizzle mode 2.  One k16 step is 16 K rows: add 1024 B to the start address. */
CVC_DEV uint64_t cvc_desc_mnmajor_sw64(uint32_t smem_addr, uint32_t col_bytes)
{
    return (uint64_t)((smem_addr & 0x3FFFF) >> 4) | ((uint64_t)((col_bytes & 0x3FFFF) >> 4) << 16) |
           ((uint64_t)(512 >> 4) << 32) | ((uint64_t)2 << 62);
}

/* ---- register reallocation (§9.7.19.5) ----------------------------------- */

#define CVC_SETMAXNREG_DEC(n) asm volatile("setmaxnreg.dec.sync.aligned.u32 " #n ";" ::: "memory")
#define CVC_SETMAXNREG_INC(n) asm volatile("setmaxnreg.inc.sync.aligned.u32 " #n ";" ::: "memory")

/* ---- conversions (§9.7.9.21 cvt) -------------------------------------------
 * Pack two floats: `lo` goes to the lower 16 bits (the lower address). */
CVC_DEV uint32_t cvc_pack_bf16x2(float lo, float hi)
{
    uint32_t r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

CVC_DEV uint32_t cvc_pack_f16x2(float lo, float hi)
{
    uint32_t r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

CVC_DEV void cvc_unpack_bf16x2(uint32_t v, float *lo, float *hi)
{
    *lo = __uint_as_float(v << 16);
    *hi = __uint_as_float(v & 0xFFFF0000u);
}

CVC_DEV void cvc_unpack_f16x2(uint32_t v, float *lo, float *hi)
{
    asm("{\n\t.reg .b16 l, h;\n\tmov.b32 {l, h}, %2;\n\t"
        "cvt.f32.f16 %0, l;\n\tcvt.f32.f16 %1, h;\n\t}"
        : "=f"(*lo), "=f"(*hi) : "r"(v));
}

#endif
