/* cvc_tma_2sm.h: TMA loads for CTA pairs (cta_group::2, sm_100a).
 *
 * cp.async.bulk.tensor ... .cta_group::2 (PTX ISA 9.0 §9.7.9.25.5.2; PTX 8.6,
 * sm_100a).  The same loads as cvc_tma.h, except that the completion
 * mbarrier `bar` may live in the peer CTA of the pair: both CTAs of a pair
 * pass the leader's (even rank's) barrier, as a shared::cluster address
 * (cvc_mapa), so one barrier sees the bytes of both halves.  With multicast,
 * each destination's complete-tx goes to the barrier at `bar`'s offset in the
 * destination or its peer, whichever has the parity of `bar`'s CTA.
 * NOT EXECUTED ON ANY GPU: compiled for sm_100a only.
 *
 * Coordinates, im2col offsets and masks are as in cvc_tma.h.
 */
#ifndef CVC_TMA_2SM_H
#define CVC_TMA_2SM_H

#include "cvc_tma.h"

CVC_DEV void cvc_tma2_im2col_3d(uint32_t dst, const cvc_tmap *m, uint32_t bar, int c, int w, int n, uint16_t ow,
                                uint16_t mask)
{
    if (mask == 0)
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.cta_group::2"
                     " [%0], [%1, {%2, %3, %4}], [%5], {%6};"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c), "r"(w), "r"(n), "r"(bar), "h"(ow)
                     : "memory");
    else
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.multicast::cluster.cta_group::2"
                     " [%0], [%1, {%2, %3, %4}], [%5], {%6}, %7;"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c), "r"(w), "r"(n), "r"(bar), "h"(ow), "h"(mask)
                     : "memory");
}

CVC_DEV void cvc_tma2_im2col_4d(uint32_t dst, const cvc_tmap *m, uint32_t bar, int c, int w, int h, int n, uint16_t ow, uint16_t oh,
                                uint16_t mask)
{
    if (mask == 0)
        asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.cta_group::2"
                     " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c), "r"(w), "r"(h), "r"(n), "r"(bar), "h"(ow), "h"(oh)
                     : "memory");
    else
        asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.multicast::cluster.cta_group::2"
                     " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8}, %9;"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c), "r"(w), "r"(h), "r"(n), "r"(bar), "h"(ow), "h"(oh), "h"(mask)
                     : "memory");
}

CVC_DEV void cvc_tma2_im2col_5d(uint32_t dst, const cvc_tmap *m, uint32_t bar, int c, int w, int h, int d, int n, uint16_t ow, uint16_t oh, uint16_t od,
                                uint16_t mask)
{
    if (mask == 0)
        asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.cta_group::2"
                     " [%0], [%1, {%2, %3, %4, %5, %6}], [%7], {%8, %9, %10};"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c), "r"(w), "r"(h), "r"(d), "r"(n), "r"(bar), "h"(ow), "h"(oh), "h"(od)
                     : "memory");
    else
        asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.multicast::cluster.cta_group::2"
                     " [%0], [%1, {%2, %3, %4, %5, %6}], [%7], {%8, %9, %10}, %11;"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c), "r"(w), "r"(h), "r"(d), "r"(n), "r"(bar), "h"(ow), "h"(oh), "h"(od), "h"(mask)
                     : "memory");
}

CVC_DEV void cvc_tma2_tile_2d(uint32_t dst, const cvc_tmap *m, uint32_t bar, int c0, int c1, uint16_t mask)
{
    if (mask == 0)
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2"
                     " [%0], [%1, {%2, %3}], [%4];"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c0), "r"(c1), "r"(bar)
                     : "memory");
    else
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster.cta_group::2"
                     " [%0], [%1, {%2, %3}], [%4], %5;"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
                     : "memory");
}

CVC_DEV void cvc_tma2_tile_3d(uint32_t dst, const cvc_tmap *m, uint32_t bar, int c0, int c1, int c2,
                              uint16_t mask)
{
    if (mask == 0)
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2"
                     " [%0], [%1, {%2, %3, %4}], [%5];"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
                     : "memory");
    else
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster.cta_group::2"
                     " [%0], [%1, {%2, %3, %4}], [%5], %6;"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(mask)
                     : "memory");
}

CVC_DEV void cvc_tma2_tile_4d(uint32_t dst, const cvc_tmap *m, uint32_t bar, int c0, int c1, int c2, int c3,
                              uint16_t mask)
{
    if (mask == 0)
        asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2"
                     " [%0], [%1, {%2, %3, %4, %5}], [%6];"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
                     : "memory");
    else
        asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster.cta_group::2"
                     " [%0], [%1, {%2, %3, %4, %5}], [%6], %7;"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar), "h"(mask)
                     : "memory");
}

CVC_DEV void cvc_tma2_tile_5d(uint32_t dst, const cvc_tmap *m, uint32_t bar, int c0, int c1, int c2, int c3, int c4,
                              uint16_t mask)
{
    if (mask == 0)
        asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2"
                     " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(bar)
                     : "memory");
    else
        asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster.cta_group::2"
                     " [%0], [%1, {%2, %3, %4, %5, %6}], [%7], %8;"
                     ::"r"(dst), "l"(cvc_tmap_addr(m)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(bar), "h"(mask)
                     : "memory");
}

#endif
