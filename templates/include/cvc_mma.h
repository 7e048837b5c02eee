/* cvc_mma.h: cp.async, ldmatrix and mma.sync (sm_80+, so sm_90a and sm_100a).
 *
 * Hand-written PTX, one small wrapper per instruction; sections are those of
 * the PTX ISA 9.0.  Shared-memory addresses are 32-bit shared::cta addresses.
 */
#ifndef CVC_MMA_H
#define CVC_MMA_H

#include <stdint.h>

#ifndef CVC_DEV
#define CVC_DEV static __device__ __forceinline__
#endif

CVC_DEV uint32_t cvc_smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* ---- cp.async (§9.7.9.25) ------------------------------------------------- */

/* Copy `bytes` (4, 8 or 16) from global to shared memory asynchronously; `src_bytes` of them
 * are read and the rest zero-filled (0: nothing is read, all zero). */
CVC_DEV void cvc_cp_async16(uint32_t dst, const void *src, uint32_t src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}

CVC_DEV void cvc_cp_async8(uint32_t dst, const void *src, uint32_t src_bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}

CVC_DEV void cvc_cp_async4(uint32_t dst, const void *src, uint32_t src_bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}

/* Close this thread's group of cp.async copies (§9.7.9.26). */
CVC_DEV void cvc_cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;" ::: "memory");
}

/* Wait until at most N of this thread's committed groups are pending (§9.7.9.27). */
#define CVC_CP_ASYNC_WAIT(N) asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory")

/* ---- ldmatrix (§9.7.14.5.15) ---------------------------------------------- */

/* Four 8x8 matrices of 16-bit elements; lane l gives the address of row l % 8 of matrix l / 8. */
CVC_DEV void cvc_ldmatrix_x4(uint32_t addr, uint32_t r[4])
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

CVC_DEV void cvc_ldmatrix_x4_trans(uint32_t addr, uint32_t r[4])
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

/* Two matrices: lanes 0-15 give the addresses (the others' are ignored but must be valid). */
CVC_DEV void cvc_ldmatrix_x2(uint32_t addr, uint32_t r[2])
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
}

CVC_DEV void cvc_ldmatrix_x2_trans(uint32_t addr, uint32_t r[2])
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
}

/* ---- plain shared-memory access ------------------------------------------- */

CVC_DEV uint32_t cvc_lds32(uint32_t addr)
{
    uint32_t v;
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(addr));
    return v;
}

CVC_DEV uint2 cvc_lds64(uint32_t addr)
{
    uint2 v;
    asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "r"(addr));
    return v;
}

CVC_DEV uint4 cvc_lds128(uint32_t addr)
{
    uint4 v;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
    return v;
}

CVC_DEV float4 cvc_lds128f(uint32_t addr)
{
    float4 v;
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(addr));
    return v;
}

CVC_DEV float cvc_lds32f(uint32_t addr)
{
    float v;
    asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(addr) : "memory");
    return v;
}

CVC_DEV void cvc_sts32f(uint32_t addr, float v)
{
    asm volatile("st.shared.f32 [%0], %1;" ::"r"(addr), "f"(v) : "memory");
}

CVC_DEV void cvc_sts16(uint32_t addr, uint16_t v)
{
    asm volatile("st.shared.b16 [%0], %1;" ::"r"(addr), "h"(v) : "memory");
}

#endif
