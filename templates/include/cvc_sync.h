/* cvc_sync.h: mbarriers, fences, cluster barriers and special registers (sm_90+).
 *
 * Hand-written PTX, one small wrapper per instruction; sections are those of
 * the PTX ISA 9.0.  Shared-memory addresses are 32-bit shared::cta addresses
 * (cvc_smem). Every wrapper that orders memory has a "memory" clobber.
 */
#ifndef CVC_SYNC_H
#define CVC_SYNC_H

#include <stdint.h>

#define CVC_DEV static __device__ __forceinline__

CVC_DEV uint32_t cvc_smem(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* ---- mbarrier (§9.7.13.15) ------------------------------------------------ */

CVC_DEV void cvc_mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

/* Make barrier inits visible to the async proxy and to the cluster (§9.7.13.4). */
CVC_DEV void cvc_fence_mbar_init(void)
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/* Expect `bytes` of TMA traffic, then arrive once (the producer's arrival). */
CVC_DEV void cvc_mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;"
                 ::"r"(bar), "r"(bytes) : "memory");
}

CVC_DEV void cvc_mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

/* Arrive on the barrier at the same offset in CTA `rank` of the cluster (§9.7.9.23 mapa).
 * Default semantics (.release.cta), as CUTLASS's ClusterBarrier does: the
 * consumers use it to free a stage, and the reads it orders have completed
 * (wgmma.wait_group) before the arrive.  A .release.cluster arrive orders the
 * same thing and was measured to cost ~0.35 us per stage on the H200
 * (2x1 cluster, 128x128 tile: 287 -> 426 TFLOP/s without it). */
CVC_DEV void cvc_mbar_arrive_cluster(uint32_t bar, uint32_t rank)
{
    asm volatile("{\n\t.reg .b32 ra;\n\t"
                 "mapa.shared::cluster.u32 ra, %0, %1;\n\t"
                 "mbarrier.arrive.shared::cluster.b64 _, [ra];\n\t}"
                 ::"r"(bar), "r"(rank) : "memory");
}

/* Block until the phase with parity `parity` has completed.  The acquire is
 * cluster-scoped: the releasing arrivals may come from other CTAs. */
CVC_DEV void cvc_mbar_wait(uint32_t bar, uint32_t parity)
{
    asm volatile("{\n\t.reg .pred p;\n"
                 "CVC_WAIT:\n\t"
                 "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n\t"
                 "@p bra.uni CVC_DONE;\n\t"
                 "bra.uni CVC_WAIT;\n"
                 "CVC_DONE:\n\t}"
                 ::"r"(bar), "r"(parity) : "memory");
}

/* ---- named barriers (§9.7.13.1) ------------------------------------------- */

/* `threads` threads (a multiple of 32) meet at barrier `id` (0 is __syncthreads'). */
CVC_DEV void cvc_bar_sync(uint32_t id, uint32_t threads)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

CVC_DEV void cvc_st_shared_u32(uint32_t addr, uint32_t v)
{
    asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}

/* Arrive at barrier `id` without waiting (the other side bar.syncs on it). */
CVC_DEV void cvc_bar_arrive(uint32_t id, uint32_t threads)
{
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

CVC_DEV uint4 cvc_ld_shared_v4(uint32_t addr)
{
    uint4 v;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr)
                 : "memory");
    return v;
}

CVC_DEV uint32_t cvc_ld_shared_u32(uint32_t addr)
{
    uint32_t v;
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
    return v;
}

CVC_DEV void cvc_st_shared_s64(uint32_t addr, int64_t v)
{
    asm volatile("st.shared.b64 [%0], %1;" ::"r"(addr), "l"(v) : "memory");
}

CVC_DEV int64_t cvc_ld_shared_s64(uint32_t addr)
{
    int64_t v;
    asm volatile("ld.shared.b64 %0, [%1];" : "=l"(v) : "r"(addr) : "memory");
    return v;
}

CVC_DEV void cvc_st_shared_f32x2(uint32_t addr, float x, float y)
{
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(x), "f"(y) : "memory");
}

CVC_DEV void cvc_st_shared_v4(uint32_t addr, uint4 v)
{
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
}

/* Four 8x8 matrices of 16-bit values, stored transposed (§9.7.14.5.16, sm_90): the warp's
 * lanes hold them in the mma fragment (lane l: row l/4, columns 2(l%4) and +1, register q
 * for matrix q), and lane l gives the address of the 16-byte row l%8 of matrix l/8, which
 * receives that matrix's column l%8. */
CVC_DEV void cvc_stmatrix_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0),
                 "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

/* ---- clusters (§9.7.13.3, special registers §10) -------------------------- */

CVC_DEV uint32_t cvc_cluster_ctarank(void)
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

CVC_DEV uint32_t cvc_clusterid_x(void)
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
    return r;
}

CVC_DEV uint32_t cvc_nclusterid_x(void)
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(r));
    return r;
}

/* Programmatic dependent launch (sm_90): let the next kernel of the stream, launched with
 * programmatic stream serialization, start on SMs this grid frees; and wait until the
 * kernel before this one in the stream has finished and its writes are visible.  Both are
 * no-ops for a launch without the attribute. */
CVC_DEV void cvc_launch_dependents(void)
{
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

CVC_DEV void cvc_wait_prerequisite(void)
{
    asm volatile("griddepcontrol.wait;" ::: "memory");
}

/* CTAs along x of the cluster this CTA was launched in.  convcat launches
 * clusters linear in x, so this is the cluster's size; with a preferred
 * cluster dimension (dynamic clusters) it differs between clusters of one grid. */
CVC_DEV uint32_t cvc_cluster_nctaid_x(void)
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(r));
    return r;
}

/* shared::cluster address of the variable at shared::cta address `addr` in CTA `rank` (§9.7.9.23). */
CVC_DEV uint32_t cvc_mapa(uint32_t addr, uint32_t rank)
{
    uint32_t r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}

/* Four floats from the shared memory of a CTA of the cluster (a shared::cluster address from
 * cvc_mapa, 16-byte aligned): distributed shared memory. */
CVC_DEV float4 cvc_ld_cluster_f4(uint32_t addr)
{
    float4 v;
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(addr) : "memory");
    return v;
}

/* Whole-cluster barrier.  Not .aligned: threads of one warp may reach it at
 * different times (the producer lane arrives after its siblings). */
CVC_DEV void cvc_cluster_sync(void)
{
    asm volatile("barrier.cluster.arrive.release;\n\t"
                 "barrier.cluster.wait.acquire;" ::: "memory");
}

#endif
