"""The sm_100a family: UMMA (tcgen05.mma) kernels, their rules and numbers.

space.py owns the key and the one `is_valid`; for arch sm100a it hands the
key to `why_invalid` and `derive` here.  Nothing here enumerates kernels.

fprop, dgrad and wgrad (one template, templates/sm100a_conv.cu.j2, with the
sm90a family's parameter contract and helper kernels: KEY_fill for strided
dgrad, KEY_reduce for wgrad split-K).  These kernels are compiled and
statically checked only: no Blackwell GPU has run them (see README.md,
"sm_100a").

Layout of one CTA (192 threads, six warps):
  warp 0      TMA producer (one elected lane)
  warp 1      TMEM allocator and UMMA issuer (one elected lane; in a 2sm
              pair only the even CTA issues MMAs)
  warps 2..5  epilogue: warp w reads TMEM lanes 32*(w%4)..+31, i.e. output
              rows 32*(w%4)..+31 of the CTA tile

Schedules name the MMA's CTA group:
  1sm  tcgen05.mma.cta_group::1, MMA M = tile M = 128.
  2sm  tcgen05.mma.cta_group::2 on a pair of CTAs (cluster ranks 2i, 2i+1,
       i.e. cluster x 0 and 1), MMA M = 256 = 2 x tile M.  **tile M in the key
       is per CTA** (128): each CTA loads its own 128 A rows and half of the
       tile's N rows of B, and holds its 128 output rows x tile N in its TMEM.
       So a pair computes tiles (m, n) and (m + 1, n), exactly the tiles a
       2xN cluster of 1sm CTAs computes, and the runtime's tile counts,
       grids and TMA boxes need no sm100a case.
"""
from __future__ import annotations

import dataclasses

from . import space

SCHEDULES = ("1sm", "2sm")
THREADS = 192
EPI_WARPS = 4
EPI_ROWS = 32                # rows of one epilogue store box: one warp's TMEM lane quarter
EPI_BUFS = 2                 # store buffers per epilogue warp (one fills while TMA stores the other)
TMEM_COLS = 512              # 32-bit columns of tensor memory per SM (128 lanes each)
LD_COLS = 32                 # columns of one tcgen05.ld.32x32b.x32
MMA_K_BYTES = 32             # every kind consumes 32 bytes of K per instruction

KIND = {"f16": "f16", "bf16": "f16", "tf32": "tf32", "e4m3": "f8f6f4", "e5m2": "f8f6f4"}
# Instruction-descriptor type codes (PTX ISA 9.0 §9.7.16.4.2, Table 42).
ITYPE = {"f16": 0, "bf16": 1, "tf32": 2, "e4m3": 0, "e5m2": 1}


@dataclasses.dataclass(frozen=True)
class Umma:
    """The tcgen05 side of a key: MMA shape, TMEM use, barrier arithmetic."""
    cta_group: int
    kind: str
    mma_m: int                # M of one tcgen05.mma (the pair's M for 2sm)
    mma_n: int
    idesc: int                # 32-bit instruction descriptor
    acc_bufs: int             # accumulators in TMEM (2: the epilogue of one tile overlaps the next mainloop)
    tmem_cols: int            # columns allocated: a power of two in 32..512
    tx_bytes: int             # bytes the leader's full barrier expects per stage
    tmem_empty_arrivals: int  # epilogue warps that free one accumulator (both CTAs of a pair)


def kind_of(key: space.Key) -> str | None:
    ka, kb = KIND.get(key.a), KIND.get(key.b)
    if ka is None or ka != kb:
        return None
    if ka != "f8f6f4" and key.a != key.b:
        return None
    return ka


def idesc(key: space.Key, m: int, n: int) -> int:
    """Dense, f32 D (§9.7.16.4.2); bits 15/16 transpose A/B: set for the
    operands the op reads MN-major (space.mn_major: dgrad B, wgrad A and B)."""
    ta, tb = space.mn_major(key)
    return ((1 << 4) | (ITYPE[key.a] << 7) | (ITYPE[key.b] << 10) | (int(ta) << 15) | (int(tb) << 16) |
            ((n >> 3) << 17) | ((m >> 4) << 24))


def _pow2_at_least(x: int) -> int:
    p = 32
    while p < x:
        p *= 2
    return p


def umma(key: space.Key) -> Umma:
    pair = key.schedule == "2sm"
    m = key.tile_m * (2 if pair else 1)
    n = key.tile_n
    bufs = 2 if 2 * n <= TMEM_COLS else 1
    eb = space.ELEM_BYTES[key.a]
    a_stage = key.tile_m * key.tile_k * eb
    b_stage = (key.tile_n // (2 if pair else 1)) * key.tile_k * eb
    return Umma(cta_group=2 if pair else 1, kind=KIND.get(key.a, "?"), mma_m=m, mma_n=n,
                idesc=idesc(key, m, n) if key.a in ITYPE and key.b in ITYPE else 0,
                acc_bufs=bufs, tmem_cols=_pow2_at_least(bufs * n),
                tx_bytes=(2 if pair else 1) * (a_stage + b_stage),
                tmem_empty_arrivals=EPI_WARPS * (2 if pair else 1))


def boxes(key: space.Key) -> tuple[int, int, int, int]:
    """TMA boxes of one CTA's loads: (A rows, A columns, B rows, B columns).

    As space.derive for sm90a: a K-major operand (fprop A and B, dgrad A)
    loads a slice of the tile's rows, one 128-byte row of K each; an MN-major
    one (dgrad B, wgrad A and B) loads, per 64-wide column of the tile, a
    slice of the stage's K rows.  A is shared (multicast) along cluster N, B
    along cluster M.  2sm: B is not multicast; each CTA of the pair holds
    half of the tile's N, so a K-major B loads half the rows (tile N / 2, the
    same number as a 2x1 sm90a cluster's slice) and an MN-major B loads every
    K row of its half's columns (tile K rows; a 2x1 sm90a slice is tile K / 2).
    """
    swz = space.SWIZZLE_BYTES // space.ELEM_BYTES[key.a]
    ta, tb = space.mn_major(key)
    pair = key.schedule == "2sm"
    a = (key.tile_k // key.cluster_n, swz) if ta else (key.tile_m // key.cluster_n, key.tile_k)
    if tb:
        b = (key.tile_k if pair else key.tile_k // key.cluster_m, swz)
    else:
        b = (key.tile_n // key.cluster_m, key.tile_k)
    return a + b


def static_twins(key: space.Key) -> tuple[space.Key, space.Key]:
    """A dynamic cluster's two shapes as static keys: (preferred, fallback).

    Each CTA runs in one of them, chosen per cluster at launch, and loads,
    multicasts and frees stages exactly as that static kernel would; only the
    tiles it computes follow the preferred shape (see the template)."""
    pref = dataclasses.replace(key, fallback_m=0, fallback_n=0)
    return pref, dataclasses.replace(pref, cluster_m=key.fallback_m, cluster_n=key.fallback_n)


def derive(key: space.Key) -> space.Config:
    if key.dynamic:
        pref, fb = static_twins(key)
        fcfg = derive(fb)
        return dataclasses.replace(derive(pref), key=key, fb_a_box_rows=fcfg.a_box_rows,
                                   fb_b_box_rows=fcfg.b_box_rows)
    u = umma(key)
    eb = space.ELEM_BYTES[key.a]
    a_stage = key.tile_m * key.tile_k * eb
    b_stage = u.tx_bytes // (2 if u.cta_group == 2 else 1) - a_stage
    y_cols = space.SWIZZLE_BYTES // space.ELEM_BYTES[key.out]
    epi = EPI_WARPS * EPI_BUFS * EPI_ROWS * space.SWIZZLE_BYTES
    # The shared-memory map, in address order: stages, epilogue buffers, mbarriers, and
    # the slot tcgen05.alloc writes the TMEM address to.
    R = space.Region
    regions = (
        R("A", key.stages * a_stage, 1024, "STAGES stages of A_STAGE"),
        R("B", key.stages * b_stage, 1024, "STAGES stages of B_STAGE"),
        R("EPI", epi, 1024, "the epilogue's chunk buffers, EPI_WARP_BYTES per epilogue warp"),
        R("FULL_BAR", 8 * key.stages, 8, "an mbarrier per stage: its loads have landed"),
        R("EMPTY_BAR", 8 * key.stages, 8, "an mbarrier per stage: its MMAs are done"),
        R("TMEM_FULL", 8 * u.acc_bufs, 8, "an mbarrier per accumulator: its MMAs are done"),
        R("TMEM_EMPTY", 8 * u.acc_bufs, 8, "an mbarrier per accumulator: the epilogue has read it"),
        R("TMEM_SLOT", 8, 8, "the TMEM address tcgen05.alloc writes"),
    )
    smem = sum(r.size for r in regions) + space.SMEM_ALIGN
    if u.cta_group == 2:
        # Every pair leader's commit frees the stage in every CTA of the
        # cluster (A is multicast across the pairs, B split inside a pair).
        empty = key.cluster_n
    else:
        empty = key.cluster_m + key.cluster_n - 1
    a_rows, a_cols, b_rows, b_cols = boxes(key)
    return space.Config(
        key=key, threads=THREADS, consumers=1, wg_m=u.mma_m, wg_n=u.mma_n,
        split="pair" if u.cta_group == 2 else "none", atoms=1, acc_regs=0,
        k_steps=key.tile_k * eb // MMA_K_BYTES, a_stage_bytes=a_stage, b_stage_bytes=b_stage,
        smem_bytes=smem, a_box_rows=a_rows, a_box_cols=a_cols, b_box_rows=b_rows, b_box_cols=b_cols,
        y_box_rows=EPI_ROWS, y_box_cols=y_cols, epi_bytes=epi, empty_arrivals=empty,
        producer_regs=0, consumer_regs=0, smem_regions=regions)


def why_invalid(key: space.Key) -> str | None:
    if not key.dynamic:
        return _why_invalid_static(key)
    # Dynamic: both shapes must be valid static kernels, and a fallback cluster
    # must be a block of a preferred one.  Clusters launch linear in x (rank =
    # x + M*y), and the device forms a fallback cluster from consecutive CTAs of
    # a preferred cluster's place, so the fallback is whole rows of it.
    pref, fb = static_twins(key)
    why = _why_invalid_static(pref)
    if why:
        return why
    fm, fn, cm, cn = key.fallback_m, key.fallback_n, key.cluster_m, key.cluster_n
    shape = f"cluster {cm}x{cn} with fallback {fm}x{fn}"
    if fm < 1 or fn < 1 or fm * fn >= cm * cn:
        return f"{shape}: the fallback cluster must be smaller than the preferred one"
    if cm % fm or cn % fn:
        return f"{shape}: the fallback must tile the preferred cluster (divide M and N)"
    if fn > 1 and fm != cm:
        return (f"{shape}: a fallback cluster is consecutive ranks (x fastest) of a preferred one, "
                f"so it is 1..{cm} x 1 or {cm} x N")
    why = _why_invalid_static(fb)
    if why:
        return f"fallback {why}" if why.startswith("cluster ") else f"fallback cluster {fm}x{fn}: {why}"
    return None


def _why_invalid_static(key: space.Key) -> str | None:
    k = key
    if k.op not in space.OPS:
        return f"unknown op {k.op}"
    if k.dims not in space.DIMS:
        return f"dims {k.dims}: 1, 2 or 3 spatial dimensions"
    kind = kind_of(k)
    if kind is None:
        return (f"A {k.a} x B {k.b}: tcgen05.mma takes f16 x f16 or bf16 x bf16 (kind::f16), "
                "tf32 x tf32 (kind::tf32) or e4m3/e5m2 in any mix (kind::f8f6f4)")
    if k.op != "fprop" and kind != "f16":
        return (f"A {k.a} x B {k.b}: {k.op} reads MN-major (transposed) operands, generated for "
                "kind::f16 (f16 x f16, bf16 x bf16) only")
    if k.acc != "f32":
        return f"accumulator {k.acc}: only f32 accumulation is generated"
    if k.out not in ("f16", "bf16", "f32"):
        return f"output {k.out}: sm100a kernels write f16, bf16 or f32"
    if k.op != "fprop" and k.out not in (k.a, "f32"):
        return f"output {k.out}: an {k.a} {k.op} kernel writes {k.a} or f32 (as the sm90a family)"
    if k.schedule not in SCHEDULES:
        return f"schedule {k.schedule}: sm100a kernels are 1sm or 2sm"
    eb = space.ELEM_BYTES[k.a]
    if k.tile_k * eb != space.SWIZZLE_BYTES:
        return (f"tile K {k.tile_k}: one stage holds one 128-byte swizzle row of K "
                f"({space.SWIZZLE_BYTES // eb} {k.a} elements)")
    if k.tile_m != 128:
        return (f"tile M {k.tile_m}: 128 rows per CTA (1sm MMA M 64 is TMEM layout F and 2sm M 128 is "
                "layout B, whose lane mappings convcat has not established)")
    u = umma(k)
    step, lo = (16, 16) if u.cta_group == 2 else (8, 8)
    if k.tile_n % step or not lo <= k.tile_n <= 256:
        return f"tile N {k.tile_n}: a cta_group::{u.cta_group} MMA takes N = {lo}..256 in steps of {step}"
    ta, tb = space.mn_major(k)
    if tb and (k.tile_n // u.cta_group) % (space.SWIZZLE_BYTES // eb):
        return (f"tile N {k.tile_n}: an MN-major B ({k.op}) is loaded in whole 64-column swizzle atoms"
                + (", per CTA of the pair" if u.cta_group == 2 else ""))
    cfg = derive(k)
    if k.tile_n % cfg.y_box_cols or k.tile_n % LD_COLS:
        return (f"tile N {k.tile_n}: the epilogue stores whole {cfg.y_box_cols}-column chunks "
                f"(128 bytes of {k.out})")
    if u.tmem_cols > TMEM_COLS:
        return f"TMEM: {u.acc_bufs} accumulators x {k.tile_n} columns > {TMEM_COLS}"
    if k.stages not in space.STAGES:
        return f"stages {k.stages}: 2..8"
    limit = space.SMEM_OPTIN_BYTES[k.arch]
    if cfg.smem_bytes > limit:
        return (f"shared memory: {k.stages} stages x {(cfg.a_stage_bytes + cfg.b_stage_bytes) // 1024} KiB "
                f"+ {cfg.epi_bytes // 1024} KiB epilogue + barriers = {cfg.smem_bytes} B > {limit} B")
    if (k.cluster_m, k.cluster_n) not in space.CLUSTERS:
        return f"cluster {k.cluster_m}x{k.cluster_n}: 1x1, 2x1, 1x2 or 2x2"
    if u.cta_group == 2 and k.cluster_m != 2:
        return f"cluster {k.cluster_m}x{k.cluster_n}: a 2sm MMA pairs the two CTAs along cluster M (2x1 or 2x2)"
    a_rows = k.tile_k if ta else k.tile_m
    if a_rows % k.cluster_n or cfg.a_box_rows % 8:
        return (f"cluster {k.cluster_m}x{k.cluster_n}: A multicast slices of {a_rows}/{k.cluster_n} "
                "rows must be whole 8-row swizzle atoms")
    b_rows, b_parts = (k.tile_k, 1 if u.cta_group == 2 else k.cluster_m) if tb else (k.tile_n, k.cluster_m)
    if b_rows % b_parts or cfg.b_box_rows % 8:
        return (f"cluster {k.cluster_m}x{k.cluster_n}: B slices of {b_rows}/{b_parts} "
                "rows must be whole 8-row swizzle atoms")
    if cfg.a_box_rows > space.TMA_BOX_MAX or cfg.b_box_rows > space.TMA_BOX_MAX:
        return f"TMA box: {max(cfg.a_box_rows, cfg.b_box_rows)} rows > {space.TMA_BOX_MAX}"
    return None


def _shape(key: space.Key) -> dict:
    """The numbers that depend on a (static) cluster shape: slices, masks, arrivals."""
    cfg, u = derive(key), umma(key)
    cm, cn = key.cluster_m, key.cluster_n
    return dict(
        # TMA multicast: A goes to the CTAs with our x (ranks x + CM*y), B to those with our y.
        a_mask_base=sum(1 << (cm * y) for y in range(cn)) if cn > 1 else 0,
        b_mask_base=(1 << cm) - 1 if cm > 1 and u.cta_group == 1 else 0,
        # The MMA commit that frees a stage reaches every CTA that wrote into it.
        # 1sm: the CTAs that share our A rows (x = cx) and our B rows (y = cy):
        # COL_BASE << cx | ROW_BASE << CM*cy.  2sm: every CTA of the cluster.
        col_base=sum(1 << (cm * y) for y in range(cn)), row_base=(1 << cm) - 1,
        all_mask=(1 << (cm * cn)) - 1, a_slice=cfg.a_box_rows, b_slice=cfg.b_box_rows,
        empty_arrivals=cfg.empty_arrivals)


def context(key: space.Key) -> dict:
    """Template variables of templates/sm100a_conv.cu.j2 and the parts it includes
    (templates/sm100a/, templates/common/)."""
    from . import parts
    dynamic = key.dynamic
    pref, fb = static_twins(key)
    cfg, u = derive(pref), umma(key)
    op = key.op
    mn_a, mn_b = space.mn_major(key)
    swz = space.SWIZZLE_BYTES // space.ELEM_BYTES[key.a]
    cm, cn = key.cluster_m, key.cluster_n
    cluster = cm * cn > 1
    pair = u.cta_group == 2
    grouped, scatter, splits = space.groups_wgrad(key), space.dgrad_scatters(key), space.splits_k(key)
    # The cluster-shape numbers by name: constants, or a dynamic cluster's launched shape (shape_t sh).
    shape = {n: f"sh.{n.lower()}" if dynamic else n
             for n in ("CLUSTER_M", "A_SLICE", "B_SLICE", "A_MASK_BASE", "B_MASK_BASE", "COL_BASE", "ROW_BASE",
                       "ALL_MASK", "EMPTY_ARRIVALS")}
    cx_b_slice = "" if pair else f" + (int)cx * {shape['B_SLICE']}"
    out_bytes = space.ELEM_BYTES[key.out]
    desc = {True: "cvc_umma_desc_mnmajor_sw128({}_base + 2048 * k, COL_BYTES)",
            False: "cvc_umma_desc_kmajor_sw128({}_base + 32 * k)"}
    produce_maps = "map_a, map_b" if dynamic else "&tmap_a, &tmap_b"
    eps = parts.epilogue_helpers(activate_chunk=True, scattered=scatter, beta_units=scatter or grouped,
                                 finish=space.splits_k(key))
    if scatter:
        eps.append(dict(part="sm100a/epilogue_scattered.j2"))
    if grouped:
        eps.append(dict(part="sm100a/epilogue_grouped.j2"))
    ycols = space.SWIZZLE_BYTES // out_bytes
    eps.append(dict(
        part="sm100a/epilogue_store_tile.j2", name="store_tile", ycols=ycols, loads=ycols // LD_COLS,
        units=space.SWIZZLE_BYTES // 16 // (ycols // LD_COLS), value_bytes=out_bytes,
        beta=("p->group_channels ? 0.0f : " if grouped else "") + "p->beta",
        plain="!p->bias && (beta == 0.0f" + (" || scatter" if scatter else "") + ")",
        col_base="(int64_t)tap * p->gemm_n" if op == "wgrad" else "0",
        beta_c="beta != 0.0f && grow < p->gemm_m && gcol < p->gemm_n" + (" && !scatter" if scatter else ""),
        store=(f"cvc_tma_store_3d(tmap_y, dst, col_tile + cc * {ycols}, tap, row0)" if op == "wgrad" else
               f"cvc_tma_store_2d(tmap_y, dst, col_tile + cc * {ycols}, row0)")))
    if splits:   # f32 sums: 32 columns a 128-byte row, one TMEM load
        eps.append(dict(part="sm100a/epilogue_store_partial.j2", name="store_partial", ycols=LD_COLS, loads=1, units=8,
                        store=f"cvc_tma_store_4d(tmap_y, dst, col_tile + cc * {LD_COLS}, tap, row0, split)"))
    return dict(
        dynamic=dynamic, fm=key.fallback_m, fn=key.fallback_n, pref_ctas=cm * cn,
        fb_ctas=key.fallback_m * key.fallback_n,
        fb=dict((k.upper(), v) for k, v in _shape(fb).items()) if dynamic else {},
        key=key.name(), op=op, dims=key.dims, mn_b=mn_b,
        scatter=scatter, grouped=grouped, splits=splits, cluster_splits=False,
        a=key.a, b=key.b, kind=u.kind, pair=pair, cta_group=u.cta_group, cluster=cluster, cm=cm, cn=cn,
        # constants (sm100a/constants.j2)
        bm=key.tile_m, bn=key.tile_n, bk=key.tile_k, stages=key.stages, n_cta=key.tile_n // u.cta_group,
        threads=cfg.threads, mma_m=u.mma_m, mma_n=u.mma_n,
        idesc=f"0x{u.idesc:08x}", acc_bufs=u.acc_bufs, tmem_cols=u.tmem_cols, k_steps=cfg.k_steps,
        row_bytes=space.SWIZZLE_BYTES, a_stage=cfg.a_stage_bytes, b_stage=cfg.b_stage_bytes,
        col_bytes=key.tile_k * space.SWIZZLE_BYTES,
        # 64-wide column boxes of an MN-major operand this CTA holds (2sm: B is half the tile's N)
        a_cols=key.tile_m // swz if mn_a else 0, b_cols=key.tile_n // u.cta_group // swz if mn_b else 0,
        tx_bytes=u.tx_bytes, tmem_empty_arrivals=u.tmem_empty_arrivals, **_shape(pref),
        y_rows=cfg.y_box_rows, y_cols=cfg.y_box_cols, y_chunk=cfg.y_box_rows * space.SWIZZLE_BYTES,
        epi_bytes=cfg.epi_bytes, epi_warp_bytes=cfg.epi_bytes // EPI_WARPS,
        # the MMA (sm100a/umma.j2, sm100a/mma.j2)
        umma_asm=f"tcgen05.mma.cta_group::{u.cta_group}.kind::{u.kind} [%0], %1, %2, %3, p;",
        a_major="MN" if mn_a else "K", b_major="MN" if mn_b else "K",
        a_desc=desc[mn_a].format("a"), b_desc=desc[mn_b].format("b"),
        commit_stage=("cvc_umma_commit_mc(empty_bar + 8 * stage, empty_mask)" if cluster else
                      "cvc_umma_commit(empty_bar + 8 * stage)"),
        commit_tile="cvc_umma_commit_mc(tmem_full + 8 * acc, full_mask)" if pair else "cvc_umma_commit(tmem_full + 8 * acc)",
        # the parts, in source order
        about=f"sm100a/about_{op}.j2",
        headers=["cvc_tma.h"] + (["cvc_tma_2sm.h"] if pair else []) +
                ["cvc_tcgen05.h", "cvc_wgmma.h", "convcat_kernel_abi.h"],   # cvc_wgmma.h: the f16/bf16 packs
        shape_parts=["sm100a/launched_shape.j2"] if dynamic else [],
        tile_raster=False, tile_reverse=False,
        epilogues=eps,
        helpers=(["common/kernel_reduce.j2"] if splits else []) + (["common/kernel_fill.j2"] if scatter else []),
        # the producer (sm100a/producer.j2, common/im2col_tile.j2, common/loads_*.j2, common/wgrad_columns.j2)
        shape=shape, tile_place="tx, ty" if dynamic else "cx, cy",
        dynamic_params=", uint32_t tx, uint32_t ty, shape_t sh" if dynamic else "",
        tile_setup="common/wgrad_columns.j2" if op == "wgrad" else "common/im2col_tile.j2",
        loads=f"common/loads_{op}.j2", b_reuse=False, b_guard="", tma=parts.tma_coords(key.dims, "cvc_tma2_" if pair else "cvc_tma_"),
        n0=(f"tile.n * BN + cx * {shape['B_SLICE']}" if op == "fprop" else
            "tile.n * BN + cx * N_CTA" if pair else "tile.n * BN"),
        n0_what=("first filter of this CTA's B slice" if op == "fprop" else
                 "first input channel of this CTA's half of the tile" if pair else "first input channel of the tile"),
        spans=[dict(a="dst_a", b="dst_b", c="c", ca="c")], group_chan0=False,
        b_krow="c" + cx_b_slice, b_pixel="kb * BK" + cx_b_slice,
        b_column="COL_CH * j" + (" + (int)cx * N_CTA" if pair else ""), grouped_c0=" + c0" if grouped else "",
        # the epilogue (sm100a/store_*.j2, sm100a/epilogue.j2) and the kernel
        acc_release="cvc_mbar_arrive_cluster(empty_bar, leader)" if pair else "cvc_mbar_arrive(empty_bar)",
        tap_columns=["common/wgrad_tap.j2"] if op == "wgrad" else [],
        col_tile_terms=" + (p->group_channels ? tile.m * BM : 0)" if grouped else "",
        store_args=dict(col="col_tile" if op == "wgrad" else "tile.n * BN", tap="tap" if op == "wgrad" else "0"),
        fallback_maps=(",\n        const __grid_constant__ cvc_tmap tmap_a_fb, const __grid_constant__ cvc_tmap tmap_b_fb"
                       if dynamic else ""),
        produce_args=(f"{produce_maps}, &p, sa, sb, full_bar, empty_bar, rank, cx, cy, first, step" +
                      (", tx, ty, sh" if dynamic else "")),
        mma_issuer="(rank & 1) == 0 && cvc_elect_one()" if pair else "cvc_elect_one()",
        dynamic_shape_param=", shape_t sh" if dynamic else "", dynamic_shape_arg=", sh" if dynamic else "",
        fast_div=False, chained=False, reduce_bias_act=False, fill_warp_rows=False,
        **parts.output(key), **parts.smem_map(cfg))


def _self_check():
    bf16 = space.Key("sm100a", "fprop", 2, "bf16", "bf16", "f32", "bf16", 128, 256, 64, 4, 1, 1, "1sm")
    assert idesc(bf16, 128, 256) == 0x08400490          # the PTX ISA's instruction-descriptor table, by hand
    assert idesc(bf16, 256, 256) == 0x10400490
    tf32 = dataclasses.replace(bf16, a="tf32", b="tf32")
    assert idesc(tf32, 128, 128) == 0x08200910
    e4m3 = dataclasses.replace(bf16, a="e4m3", b="e4m3")
    assert idesc(e4m3, 128, 256) == 0x08400010
    # MN-major operands: dgrad transposes B (bit 16), wgrad A and B (bits 15, 16).
    assert idesc(dataclasses.replace(bf16, op="dgrad"), 128, 256) == 0x08410490
    assert idesc(dataclasses.replace(bf16, op="wgrad"), 128, 256) == 0x08418490
    assert EPI_WARPS * 32 == 128                        # one thread per TMEM lane
    assert THREADS == 32 * (2 + EPI_WARPS)


_self_check()
