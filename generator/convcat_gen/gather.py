"""The gather family: implicit-GEMM convolution whose operands the threads
gather, for what TMA cannot load: any groups, any channel count.

space.py owns the key and the one `is_valid`; for schedule "gather" it hands
the key to `why_invalid` and `derive` here.  One template
(templates/gather_conv.cu.j2) serves fprop, dgrad and wgrad on sm_90a and
sm_100a (mma.sync, which both run).

Per group g (a grid dimension; groups = 1 is one group) the GEMM is
  fprop  M = N*Z*P*Q pixels,      N = k filters,  K = T*R*S*c
  dgrad  M = the stride phase's dx pixels, N = c channels, K = (the phase's taps)*k
  wgrad  M = k filters,           N = T*R*S*c,    K = N*Z*P*Q pixels
with c = C / groups, k = K / groups.  Every op may split its K loop into slices
(flag SPLITS_K: wgrad's pixels; fprop and one-launch dgrad where the tiles do not
fill the GPU) whose f32 sums KEY_reduce adds in a fixed order.  dgrad (16-bit, tiles of
64 columns or more) may take a pack of adjacent groups per CTA column (flag PACKS_GROUPS):
one GEMM over the pack's channels and filters with B block diagonal, for the short K loops
of a strided dgrad's phases on groups of few channels.  Each operand's tile is stored in shared memory the way it lies in global memory: K-major (rows of M or N, K
contiguous: fprop A and B, dgrad A) or MN-major (rows of K: dgrad B, wgrad A
and B), and ldmatrix (.trans for MN-major) feeds mma.sync.  Threads copy
chunks of `vec` elements along the contiguous dimension: cp.async for chunks
of 4 bytes or more (zero-filled past the tensor), loads through registers for
single 16-bit elements (odd channel counts).  The runtime picks the widest
`vec` the problem's alignment allows.

Input-tile kernels (one stage, flag INPUT_TILE): fprop, dgrad and wgrad of inputs of at most 4
channels (the stems' C = 3, a waveform's C = 1), whose (tap, channel) columns a gathering kernel
walks one 16-bit element a tap.  fprop and wgrad: per block of output pixels (rows x columns of
one image) a CTA copies the block's input tile with the filter's reach into shared memory and
reads the im2col operand straight from it, at a per-(tap, channel) offset from the pixel's window,
so that each input pixel is read from memory once a block, not once a tap.
  fprop (templates/gather_tile.cu.j2): tiles of 128 pixels x N filters; a CTA copies its
filters (all of K, channels padded to a power of two) once; a pair of channels of one tap is
one 32-bit load from the tile.
  dgrad (templates/gather_tile_dgrad.cu.j2): the stride phases side by side.  Along each axis dx
coordinate x is position (x + pad) / stride and phase (x + pad) % stride, and a phase's taps reach it
from dy coordinates position - j, j < J = (R - 1) dil / stride + 1: dx is a stride-1 convolution of
dy over J_h x J_w offsets whose output channels are every phase's C channels, scattered to the
phases' pixels.  Per block of tile-M positions a CTA copies the dy region they read and runs that
GEMM (N = stride_h stride_w C columns, padded to 8, at most tile N; K = the offsets x K filters)
straight from it, the filters rearranged once per CTA: one launch, no per-phase passes, each dy
pixel copied once a block.
  wgrad (templates/gather_tile_wgrad.cu.j2): tiles of 32 or 64 filters x N (tap, channel)
columns, the channels unpadded; a CTA takes a slice of the blocks of TILE_WGRAD_BLOCK_PIXELS pixels,
copies each block's dy rows beside its input tile, and keeps its f32 sums in registers over
the slice; KEY_reduce adds the slices (flag SPLITS_K).
"""
from __future__ import annotations

import dataclasses

from . import index, space

SCHEDULE = "gather"
THREADS = 128                 # four warps
TILE_M = (32, 64, 128)
TILE_N = (8, 16, 32, 64, 128)
STAGES = (2, 3, 4)
MAX_ACC = 64                  # f32 accumulators per thread
ROW_INFO_BYTES = 32           # one row of an operand's row table: i64 base, i32 coordinates x 3
DTYPES = (("f16", "f16", "f32", "f16"), ("f16", "f16", "f32", "f32"), ("bf16", "bf16", "f32", "bf16"),
          ("bf16", "bf16", "f32", "f32"), ("tf32", "tf32", "f32", "f32"))
SMEM_BUDGET = 100 * 1024       # two CTAs per SM at least
TILE_DTYPES = DTYPES[:4]      # input-tile kernels: f16/bf16 (mma m16n8k16)
TILE_MAX_CHANNELS = index.TILE_MAX_CHANNELS   # input-tile kernels: channels of a tile pixel (C padded to 2 or 4)
# Input-tile wgrad tiles: M filters (m16 atoms a warp), N (tap, channel) columns (four warps of whole
# n8 atoms, so that a stem's columns fill one tile: 27 for a 3x3 filter of 3 channels, 147 for a 7x7).
TILE_WGRAD_M = (32, 64)
TILE_COLUMNS = (32, 64, 96, 128, 160, 192)
# Input-tile dgrad tiles: M positions (four warps of whole m16 atoms), N the phases' columns (every n8
# atom a warp: stride_h stride_w C of them, 12 for a stride-2 stem of 3 channels, 48 for stride 4).
TILE_DGRAD_M = (64, 128)
TILE_DGRAD_N = (8, 16, 24, 32, 48, 64)


@dataclasses.dataclass(frozen=True)
class Operand:
    """One GEMM operand's shared-memory tile: ROWS x COLS elements, COLS contiguous."""
    kmajor: bool              # rows are M (or N) indices and K runs along the row
    rows: int
    cols: int
    row_bytes: int
    tile_bytes: int
    xor_shift: int            # 16-byte chunk c of row r sits at c ^ ((r >> xor_shift) & xor_mask)
    xor_mask: int
    table_rows: int           # entries of its row table (K-major: per tile; MN-major: a ring per stage)


@dataclasses.dataclass(frozen=True)
class Config:
    key: space.Key
    threads: int
    warps_m: int
    warps_n: int
    wm: int                   # warp tile
    wn: int
    mi: int                   # m16 atoms per warp
    ni: int                   # n8 atoms per warp
    kstep: int                # K of one mma.sync: 16 (f16/bf16) or 8 (tf32)
    a: Operand
    b: Operand
    vecs: tuple               # load widths in elements the loaders are generated for, widest first
    acc_regs: int
    smem_bytes: int


def _swizzle(row_bytes: int) -> tuple[int, int]:
    """(shift, mask) of the XOR that keeps 8 consecutive rows' 16-byte chunks in distinct
    banks (ldmatrix reads 8 rows at one chunk): rows of 128 bytes or more xor with row % 8,
    64-byte rows (two a 128-byte line) with (row / 2) % 4, 32-byte rows with (row / 4) % 2."""
    chunks = row_bytes // 16
    if chunks >= 8:
        return 0, 7
    if chunks == 4:
        return 1, 3
    if chunks == 2:
        return 2, 1
    return 0, 0


def _warps(bm: int, bn: int):
    """(warps_m, warps_n) of the four warps over the tile: 2x2 where both halves hold whole
    mma atoms (16 rows, 8 columns), else 4x1, else 1x4."""
    for wm_, wn_ in ((2, 2), (4, 1), (1, 4)):
        if bm % (16 * wm_) == 0 and bn % (8 * wn_) == 0:
            return wm_, wn_
    return None


def _operand(kmajor: bool, mn: int, bk: int, eb: int, stages: int) -> Operand:
    rows, cols = (mn, bk) if kmajor else (bk, mn)
    rb = cols * eb
    shift, mask = _swizzle(rb)
    return Operand(kmajor=kmajor, rows=rows, cols=cols, row_bytes=rb, tile_bytes=rows * rb,
                   xor_shift=shift, xor_mask=mask, table_rows=rows if kmajor else (stages + 1) * bk)


def kmajor(key: space.Key) -> tuple[bool, bool]:
    """Which operand tiles are K-major in shared memory, as their tensors lie in global memory:
    fprop A (x, channels) and B (w, taps x channels); dgrad A (dy, filters); the others
    (dgrad B: w along channels; wgrad A: dy along filters, B: x along channels) MN-major."""
    return {"fprop": (True, True), "dgrad": (True, False), "wgrad": (False, False)}[key.op]


def vecs(key: space.Key) -> tuple:
    """Load widths in elements, widest first: 16 bytes down to one 16-bit element (cp.async
    takes 4, 8 or 16 bytes; single 16-bit elements go through registers)."""
    eb = space.ELEM_BYTES[key.a]
    return tuple(v for v in (8, 4, 2, 1) if v * eb <= 16 and (v * eb >= 4 or eb == 2))


def input_tile(key: space.Key) -> bool:
    """The one-stage kernels that stage a block's input tile or dy region (flag INPUT_TILE)."""
    return key.stages == 1


def _tile_warps(key: space.Key) -> tuple[int, int]:
    """An input-tile kernel's four warps: fprop 4 x 1 (a warp, 32 pixels); dgrad 4 x 1 (a warp, a quarter
    of the positions and every column); wgrad 1 x 4 (a warp, every filter of the tile and a quarter of
    its columns: the gathered operand is loaded once a column)."""
    return (1, 4) if key.op == "wgrad" else (4, 1)


def derive(key: space.Key) -> Config:
    eb = space.ELEM_BYTES[key.a]
    wm_, wn_ = _tile_warps(key) if input_tile(key) else _warps(key.tile_m, key.tile_n)
    wm, wn = key.tile_m // wm_, key.tile_n // wn_
    ka, kb = kmajor(key)
    a = _operand(ka, key.tile_m, key.tile_k, eb, key.stages)
    b = _operand(kb, key.tile_n, key.tile_k, eb, key.stages)
    tables = (a.table_rows + b.table_rows) * ROW_INFO_BYTES
    smem = key.stages * (a.tile_bytes + b.tile_bytes) + tables
    return Config(key=key, threads=THREADS, warps_m=wm_, warps_n=wn_, wm=wm, wn=wn, mi=wm // 16, ni=wn // 8,
                  kstep=32 // eb, a=a, b=b, vecs=vecs(key), acc_regs=(wm // 16) * (wn // 8) * 4,
                  smem_bytes=smem)


def why_invalid(key: space.Key) -> str | None:
    if (key.cluster_m, key.cluster_n) != (1, 1) or key.dynamic:
        return f"schedule gather: cluster {key.cluster_m}x{key.cluster_n}: 1x1 only (no multicast)"
    if (key.a, key.b, key.acc, key.out) not in DTYPES:
        return (f"schedule gather: types {key.a} x {key.b} -> {key.acc} -> {key.out}: f16/bf16 to themselves "
                "or f32, tf32 to f32")
    eb = space.ELEM_BYTES[key.a]
    if key.tile_k * eb not in (32, 64, 128):
        return (f"schedule gather: tile K {key.tile_k}: a stage holds 32, 64 or 128 bytes of K "
                f"({32 // eb}, {64 // eb} or {128 // eb} {key.a} elements)")
    if not input_tile(key) and (key.tile_m not in TILE_M or key.tile_n not in TILE_N):
        return (f"schedule gather: tile {key.tile_m}x{key.tile_n}: M of {TILE_M}, N of {TILE_N} "
                "(whole m16n8 mma atoms over four warps)")
    if input_tile(key):
        if key.dims == 3 or (key.a, key.b, key.acc, key.out) not in TILE_DTYPES:
            return ("schedule gather, 1 stage (an input tile): 1D and 2D, f16/bf16; 3D and tf32 take the "
                    "pipelined kernels")
        if key.op == "dgrad" and (key.tile_m not in TILE_DGRAD_M or key.tile_n not in TILE_DGRAD_N or key.tile_k != 16):
            return (f"schedule gather, 1 stage: dgrad tile {key.tile_m}x{key.tile_n}x{key.tile_k}: {TILE_DGRAD_M} "
                    f"positions by {TILE_DGRAD_N} phase columns, K steps of 16 filters")
        if key.op == "fprop" and (key.tile_m != 128 or key.tile_n not in (32, 64) or key.tile_k != 16):
            return (f"schedule gather, 1 stage: fprop tile {key.tile_m}x{key.tile_n}x{key.tile_k}: 128 pixels (four "
                    "warps of 32 rows) by 32 or 64 filters, K steps of 16")
        if key.op == "wgrad" and (key.tile_m not in TILE_WGRAD_M or key.tile_n not in TILE_COLUMNS or key.tile_k != 16):
            return (f"schedule gather, 1 stage: wgrad tile {key.tile_m}x{key.tile_n}x{key.tile_k}: {TILE_WGRAD_M} filters "
                    f"by {TILE_COLUMNS} (tap, channel) columns (four warps of a quarter each), K steps of 16 pixels")
        return None
    if key.stages not in STAGES:
        return f"schedule gather: stages {key.stages}: 1 (an input tile), 2, 3 or 4"
    if _warps(key.tile_m, key.tile_n) is None:
        return f"schedule gather: tile {key.tile_m}x{key.tile_n} does not split over four warps in mma atoms"
    cfg = derive(key)
    if cfg.acc_regs > MAX_ACC:
        return (f"register budget: a {cfg.wm}x{cfg.wn} warp tile holds {cfg.acc_regs} f32 accumulators per "
                f"thread; at most {MAX_ACC}")
    for name, op in (("A", cfg.a), ("B", cfg.b)):
        if op.kmajor and op.rows > THREADS:
            return f"schedule gather: {name} tile of {op.rows} rows: its row table takes one thread a row"
        if not op.kmajor and key.tile_k > THREADS:
            return f"schedule gather: tile K {key.tile_k}: an MN-major row table takes one thread a row"
        if op.rows * op.cols < THREADS:
            return f"schedule gather: {name} tile of {op.rows * op.cols} elements: fewer than the {THREADS} threads"
    if cfg.smem_bytes > SMEM_BUDGET:
        return (f"shared memory: {key.stages} stages x {(cfg.a.tile_bytes + cfg.b.tile_bytes) // 1024} KiB + "
                f"row tables = {cfg.smem_bytes} B > {SMEM_BUDGET} B (two CTAs per SM)")
    return None


PACK_TILE_N = 64              # dgrad tiles this wide or wider pack groups
# What KEY_reduce computes from the slices (templates/gather/reduce.j2).
REDUCE_RESULT = {"fprop": "y = act(alpha * (the slices' sum) + bias + beta * C)",
                 "dgrad": "dx = alpha * (the slices' sum) + beta * C",
                 "wgrad": "dw = alpha * (the slices' sum) + beta * C"}


def packs_groups(key: space.Key) -> bool:
    """dgrad of 16-bit types on tiles of PACK_TILE_N columns or more may take packs of groups a CTA:
    measured (H200), packing won where one group leaves a stride phase's K loop and the tile's N
    mostly empty, and lost 1.1-1.4x where the groups fill their tiles; its second K loop costs the
    kernel registers (occupancy), so kernels that would not use it leave it out (tf32's spilled)."""
    return key.op == "dgrad" and space.ELEM_BYTES[key.a] == 2 and key.tile_n >= PACK_TILE_N


def capabilities(key: space.Key) -> dict:
    """The index fields the runtime's rules and planner read."""
    cfg = derive(key)
    if input_tile(key):   # smem_bytes: the most a problem's tiles may take (the rules refuse more)
        flags = ("INPUT_TILE",) + (("SPLITS_K",) if key.op == "wgrad" else ()) + \
            (("CHAINED",) if space.chained(key) else ())
        return dict(family="gather", flags=flags, acc_regs=cfg.acc_regs, wg_n=cfg.wn, mma_n=8,
                    c_align=1, k_align=1, max_stride=0, groups_mode="none", vec_mask=1, a_stage_bytes=0,
                    b_stage_bytes=0, smem_bytes=SMEM_BUDGET, threads=cfg.threads)
    flags = (("SPLITS_K", "GROUPED_SPLITS") + (("PACKS_GROUPS",) if packs_groups(key) else ()) +
             (("CHAINED",) if space.chained(key) else ()))
    return dict(family="gather", flags=flags,
                acc_regs=cfg.acc_regs, wg_n=cfg.wn, mma_n=8, c_align=1, k_align=1, max_stride=0,
                groups_mode="any", vec_mask=sum(1 << (v.bit_length() - 1) for v in cfg.vecs),
                a_stage_bytes=cfg.a.tile_bytes, b_stage_bytes=cfg.b.tile_bytes, smem_bytes=cfg.smem_bytes,
                threads=cfg.threads)


def mma_instruction(ab: str) -> str:
    """mma.sync with f32 accumulation: m16n8k16 for f16/bf16, m16n8k8 for tf32 (PTX ISA §9.7.14.5)."""
    if ab == "tf32":
        return "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
    return f"mma.sync.aligned.m16n8k16.row.col.f32.{ab}.{ab}.f32"


def tile_context(key: space.Key) -> dict:
    """The input-tile templates' context (gather_tile.cu.j2, gather_tile_dgrad.cu.j2, gather_tile_wgrad.cu.j2)."""
    cfg = derive(key)
    return dict(key=key.name(), op=key.op, dims=key.dims, ab=key.a, out=key.out, eb=space.ELEM_BYTES[key.a],
                bm=key.tile_m, bn=key.tile_n, bk=key.tile_k, bp=index.TILE_WGRAD_BLOCK_PIXELS, threads=cfg.threads,
                mi=cfg.mi, ni=cfg.ni, wn=cfg.wn, max_cp=TILE_MAX_CHANNELS, chained=space.chained(key),
                reduce_result=REDUCE_RESULT[key.op],
                mma_asm=mma_instruction(key.a) + " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};",
                elem_t="uint16_t")


def context(key: space.Key) -> dict:
    if input_tile(key):
        return tile_context(key)
    cfg = derive(key)
    eb = space.ELEM_BYTES[key.a]

    def operand(name, op, mn):
        chunks = {}
        for v in cfg.vecs:
            cpr = op.cols // v                      # chunks per row
            total = op.rows * cpr
            assert THREADS % cpr == 0 or cpr % THREADS == 0
            chunks[v] = dict(v=v, cpr=cpr, passes=max(total // THREADS, 1), rows_per_pass=max(THREADS // cpr, 1),
                             bytes=v * eb, async_copy=v * eb >= 4, active=min(total, THREADS))
        return dict(name=name, kmajor=op.kmajor, rows=op.rows, cols=op.cols, row_bytes=op.row_bytes,
                    tile_bytes=op.tile_bytes, xor_shift=op.xor_shift, xor_mask=op.xor_mask,
                    table_rows=op.table_rows, loads=[chunks[v] for v in cfg.vecs], mn=mn)

    return dict(key=key.name(), op=key.op, dims=key.dims, ab=key.a, out=key.out, eb=eb,
                out_bytes=space.ELEM_BYTES[key.out], bm=key.tile_m, bn=key.tile_n, bk=key.tile_k,
                stages=key.stages, threads=cfg.threads, warps_m=cfg.warps_m, warps_n=cfg.warps_n, packs=packs_groups(key),
                wm=cfg.wm, wn=cfg.wn, mi=cfg.mi, ni=cfg.ni, kstep=cfg.kstep, tf32=key.a == "tf32",
                a=operand("a", cfg.a, key.tile_m), b=operand("b", cfg.b, key.tile_n),
                smem_bytes=cfg.smem_bytes, table_bytes=ROW_INFO_BYTES,
                mma_asm=mma_instruction(key.a) + " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};",
                elem_t="uint32_t" if eb == 4 else "uint16_t",
                out_t={"f16": "__half", "bf16": "__nv_bfloat16", "f32": "float"}[key.out],
                in_t={"f16": "__half", "bf16": "__nv_bfloat16", "tf32": "float"}[key.a],
                axes=list(range(3 - key.dims, 3)), chained=space.chained(key), reduce_result=REDUCE_RESULT[key.op])
