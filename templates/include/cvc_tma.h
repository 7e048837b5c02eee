/* cvc_tma.h: TMA loads, global -> shared, completing on an mbarrier (sm_90+).
 *
 * cp.async.bulk.tensor (PTX ISA 9.0 §9.7.9.25.5.2), tensor maps §5.5.
 * Coordinates are signed 32-bit elements, innermost dimension first; loads
 * past the tensor's bounds are zero-filled and still count towards the
 * barrier's transaction bytes.  im2col offsets are the filter tap times the
 * dilation (u16; rank 3: 16 bits, rank 4: 8 bits, rank 5: 5 bits used).
 *
 * `mask` != 0 multicasts to the CTAs of the cluster whose %cluster_ctarank
 * bits are set: the data and the complete-tx land at the same smem offsets in
 * every destination.  `mask` is a compile-time constant at every call site of
 * a static-cluster kernel, so the untaken branch folds away (a dynamic-cluster
 * kernel keeps both: its fallback shape may multicast where the preferred one
 * does, or not).
 */
#ifndef CVC_TMA_H
#define CVC_TMA_H

#include "convcat_kernel_abi.h"   /* cvc_tmap */
#include "cvc_sync.h"

CVC_DEV uint64_t cvc_tmap_addr(const cvc_tmap *m)
{
    return (uint64_t)m;   /* generic address of the __grid_constant__ parameter */
}

CVC_DEV void cvc_tma_prefetch(const cvc_tmap *m)
{
    asm volatile("prefetch.tensormap [%0];" ::"l"(cvc_tmap_addr(m)) : "memory");
}

/* ---- im2col: NWC (3d), NHWC (4d), NDHWC (5d) ------------------------------ */

CVC_DEV void cvc_tma_im2col_3d(uint32_t dst, const cvc_tmap *m, uint32_t bar, int c, int w, int n,
                               uint16_t ow, uint16_t mask)
{
    if (mask == 0)
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3, %4}], [%5], {%6};"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c), "r"(w), "r"(n), "r"(bar), "h"(ow)
                     : "memory");
    else
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                     ".multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], {%6}, %7;"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c), "r"(w), "r"(n), "r"(bar), "h"(ow),
                     "h"(mask) : "memory");
}

CVC_DEV void cvc_tma_im2col_4d(uint32_t dst, const cvc_tmap *m, uint32_t bar, int c, int w, int h,
                               int n, uint16_t ow, uint16_t oh, uint16_t mask)
{
    if (mask == 0)
        asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c), "r"(w), "r"(h), "r"(n), "r"(bar),
                     "h"(ow), "h"(oh) : "memory");
    else
        asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                     ".multicast::cluster [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8}, %9;"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c), "r"(w), "r"(h), "r"(n), "r"(bar),
                     "h"(ow), "h"(oh), "h"(mask) : "memory");
}

CVC_DEV void cvc_tma_im2col_5d(uint32_t dst, const cvc_tmap *m, uint32_t bar, int c, int w, int h,
                               int d, int n, uint16_t ow, uint16_t oh, uint16_t od, uint16_t mask)
{
    if (mask == 0)
        asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3, %4, %5, %6}], [%7], {%8, %9, %10};"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c), "r"(w), "r"(h), "r"(d), "r"(n),
                     "r"(bar), "h"(ow), "h"(oh), "h"(od) : "memory");
    else
        asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                     ".multicast::cluster [%0], [%1, {%2, %3, %4, %5, %6}], [%7], {%8, %9, %10}, %11;"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c), "r"(w), "r"(h), "r"(d), "r"(n),
                     "r"(bar), "h"(ow), "h"(oh), "h"(od), "h"(mask) : "memory");
}

/* ---- tiled: filters KSC (3d), KRSC (4d), KTRSC (5d); wgrad's dy as (K, pixels) (2d) */

CVC_DEV void cvc_tma_tile_2d(uint32_t dst, const cvc_tmap *m, uint32_t bar, int c0, int c1, uint16_t mask)
{
    if (mask == 0)
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3}], [%4];"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c0), "r"(c1), "r"(bar) : "memory");
    else
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c0), "r"(c1), "r"(bar), "h"(mask) : "memory");
}

CVC_DEV void cvc_tma_tile_3d(uint32_t dst, const cvc_tmap *m, uint32_t bar, int c0, int c1, int c2,
                             uint16_t mask)
{
    if (mask == 0)
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3, %4}], [%5];"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c0), "r"(c1), "r"(c2), "r"(bar) : "memory");
    else
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     ".multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c0), "r"(c1), "r"(c2), "r"(bar),
                     "h"(mask) : "memory");
}

CVC_DEV void cvc_tma_tile_4d(uint32_t dst, const cvc_tmap *m, uint32_t bar, int c0, int c1, int c2,
                             int c3, uint16_t mask)
{
    if (mask == 0)
        asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3, %4, %5}], [%6];"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
                     : "memory");
    else
        asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     ".multicast::cluster [%0], [%1, {%2, %3, %4, %5}], [%6], %7;"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar),
                     "h"(mask) : "memory");
}

CVC_DEV void cvc_tma_tile_5d(uint32_t dst, const cvc_tmap *m, uint32_t bar, int c0, int c1, int c2,
                             int c3, int c4, uint16_t mask)
{
    if (mask == 0)
        asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4),
                     "r"(bar) : "memory");
    else
        asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     ".multicast::cluster [%0], [%1, {%2, %3, %4, %5, %6}], [%7], %8;"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4),
                     "r"(bar), "h"(mask) : "memory");
}

/* ---- tiled store, shared -> global, bulk-group completion (§9.7.9.25.5.2) ---
 * Before it, every thread that wrote the source runs cvc_fence_proxy_async()
 * and the writers meet at a barrier; then one thread stores and commits.
 * Bulk groups belong to the issuing thread: it alone waits on them.  Elements
 * past the tensor's upper bounds are not written (checked by the GPU suite's
 * M/N tails). */

CVC_DEV void cvc_fence_proxy_async(void)
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

CVC_DEV void cvc_tma_store_2d(const cvc_tmap *m, uint32_t src, int c0, int c1)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];"
                 ::"l"(cvc_tmap_addr(m)), "r"(src), "r"(c0), "r"(c1) : "memory");
}

/* wgrad's dw as (C, T*R*S, K) */
CVC_DEV void cvc_tma_store_3d(const cvc_tmap *m, uint32_t src, int c0, int c1, int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];"
                 ::"l"(cvc_tmap_addr(m)), "r"(src), "r"(c0), "r"(c1), "r"(c2) : "memory");
}

/* wgrad's split-K partial sums as (C, T*R*S, K, splits) */
CVC_DEV void cvc_tma_store_4d(const cvc_tmap *m, uint32_t src, int c0, int c1, int c2, int c3)
{
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];"
                 ::"l"(cvc_tmap_addr(m)), "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3) : "memory");
}

CVC_DEV void cvc_tma_store_commit(void)
{
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/* At most one committed group may still be reading its shared-memory source. */
CVC_DEV void cvc_tma_store_wait_read1(void)
{
    asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
}

/* No committed group is still reading its shared-memory source. */
CVC_DEV void cvc_tma_store_wait_read0(void)
{
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

/* Every committed group has completed, writes included. */
CVC_DEV void cvc_tma_store_wait_all(void)
{
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

#endif
