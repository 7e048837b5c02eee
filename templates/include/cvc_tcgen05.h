/* cvc_tcgen05.h: tensor memory and the UMMA plumbing of sm_100a (tcgen05).
 *
 * Hand-written PTX, one small wrapper per instruction; sections are those of
 * the PTX ISA 9.0 (§9.7.16).  NOT EXECUTED ON ANY GPU: every form here was
 * compiled by ptxas for sm_100a, nothing more.
 *
 * Every tcgen05 op of one kernel must use the same .cta_group (ptxas
 * enforces it), so the including kernel defines CVC_CTA_GROUP to 1 or 2
 * before including this header.  The tcgen05.mma instruction itself is
 * emitted by the generator into each kernel (its kind depends on the key).
 *
 * TMEM addresses are u32: lane in bits 31-16, column in bits 15-0.  Warp w
 * of a warpgroup reaches lanes 32*(w%4) .. +31 only (§9.7.16.8.1).
 */
#ifndef CVC_TCGEN05_H
#define CVC_TCGEN05_H

#include "cvc_sync.h"

#ifndef CVC_CTA_GROUP
#error "define CVC_CTA_GROUP (1 or 2) before including cvc_tcgen05.h"
#endif
#define CVC_STR2(x) #x
#define CVC_STR(x) CVC_STR2(x)
#define CVC_CG "cta_group::" CVC_STR(CVC_CTA_GROUP)

/* ---- elect.sync (§9.7.13.14): true in exactly one lane of the warp -------- */

CVC_DEV bool cvc_elect_one(void)
{
    uint32_t p;
    asm volatile("{\n\t.reg .pred p;\n\t.reg .b32 l;\n\t"
                 "elect.sync l|p, 0xffffffff;\n\t"
                 "selp.b32 %0, 1, 0, p;\n\t}"
                 : "=r"(p)::"memory");
    return p != 0;
}

/* One 16-byte shared-memory store (§9.7.9.9 st), for the epilogue's swizzled rows. */
CVC_DEV void cvc_st_shared_v4(uint32_t addr, uint32_t x, uint32_t y, uint32_t z, uint32_t w)
{
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(x), "r"(y), "r"(z), "r"(w)
                 : "memory");
}

/* ---- allocation (§9.7.16.7.1), by one whole warp (with ::2, one in each CTA of the pair) ----
 * nCols is a power of two in 32..512; alloc blocks while the columns are taken
 * and writes the TMEM base address into the shared-memory slot. */

CVC_DEV void cvc_tmem_alloc(uint32_t slot, uint32_t cols)
{
    asm volatile("tcgen05.alloc." CVC_CG ".sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(slot), "r"(cols)
                 : "memory");
}

/* No more allocations by this CTA: co-resident CTAs may allocate. */
CVC_DEV void cvc_tmem_relinquish(void)
{
    asm volatile("tcgen05.relinquish_alloc_permit." CVC_CG ".sync.aligned;" ::: "memory");
}

CVC_DEV void cvc_tmem_dealloc(uint32_t taddr, uint32_t cols)
{
    asm volatile("tcgen05.dealloc." CVC_CG ".sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(cols) : "memory");
}

/* ---- ordering around thread synchronization (§9.7.16.6) ------------------- */

/* This thread's earlier async tcgen05 ops are ordered before a following sync. */
CVC_DEV void cvc_tc_fence_before(void)
{
    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
}

/* Later tcgen05 ops are ordered after a preceding sync (a barrier wait). */
CVC_DEV void cvc_tc_fence_after(void)
{
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
}

/* ---- commit (§9.7.16.12.1), by the MMA-issuing thread ----------------------
 * One arrival on `bar` once every earlier async tcgen05 op of this thread is
 * complete: frees a stage (empty) or publishes an accumulator (full).  The
 * multicast form arrives at the same offset in every CTA whose bit is set. */

CVC_DEV void cvc_umma_commit(uint32_t bar)
{
    asm volatile("tcgen05.commit." CVC_CG ".mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(bar)
                 : "memory");
}

CVC_DEV void cvc_umma_commit_mc(uint32_t bar, uint16_t mask)
{
    asm volatile("tcgen05.commit." CVC_CG ".mbarrier::arrive::one.shared::cluster.multicast::cluster.b64"
                 " [%0], %1;" ::"r"(bar), "h"(mask) : "memory");
}

/* ---- TMEM -> registers (§9.7.16.8.3), by a whole warp ----------------------
 * 32x32b.x32: lane l of the warp reads TMEM lane (taddr.lane + l), columns
 * taddr.col .. +31, one 32-bit value per register.  The registers are
 * undefined until cvc_tmem_wait_ld. */

CVC_DEV void cvc_tmem_ld32(uint32_t taddr, uint32_t *r)
{
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x32.b32 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]),
                   "=r"(r[7]), "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]),
                   "=r"(r[14]), "=r"(r[15]), "=r"(r[16]), "=r"(r[17]), "=r"(r[18]), "=r"(r[19]), "=r"(r[20]),
                   "=r"(r[21]), "=r"(r[22]), "=r"(r[23]), "=r"(r[24]), "=r"(r[25]), "=r"(r[26]), "=r"(r[27]),
                   "=r"(r[28]), "=r"(r[29]), "=r"(r[30]), "=r"(r[31])
                 : "r"(taddr)
                 : "memory");
}

CVC_DEV void cvc_tmem_wait_ld(void)
{
    asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
}

/* ---- shared-memory matrix descriptor, sm_100 (§9.7.16.4.1) ----------------
 * K-major, 128-byte swizzle: start address, LBO unused (encoded 1), SBO =
 * 1024 B between 8-row groups, the fixed 0b001 at bits 46-48, base offset 0
 * (stage buffers are 1024-B aligned), swizzle code 2 (128B) at bits 61-63.
 * Stepping K by 32 bytes inside the 128-byte row adds 32 to the address. */
CVC_DEV uint64_t cvc_umma_desc_kmajor_sw128(uint32_t smem_addr)
{
    return (uint64_t)((smem_addr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) |
           ((uint64_t)1 << 46) | ((uint64_t)2 << 61);
}

/* MN-major (transposed: dgrad B, wgrad A and B; kind::f16 here), 128-byte
 * swizzle: the operand is stored as columns 64 elements wide (one TMA box
 * each, `col_bytes` apart: LBO), each a stack of 128-byte K rows; SBO = 1024 B
 * between 8-row groups along K.  Same LBO/SBO meaning as sm_90's
 * (cvc_desc_mnmajor_sw128), plus the sm_100 fixed bit 46 and swizzle code 2.
 * One K step of 16 elements is 16 K rows: add 2048 B to the start address. */
CVC_DEV uint64_t cvc_umma_desc_mnmajor_sw128(uint32_t smem_addr, uint32_t col_bytes)
{
    return (uint64_t)((smem_addr & 0x3FFFF) >> 4) | ((uint64_t)((col_bytes & 0x3FFFF) >> 4) << 16) |
           ((uint64_t)(1024 >> 4) << 32) | ((uint64_t)1 << 46) | ((uint64_t)2 << 61);
}

#endif
