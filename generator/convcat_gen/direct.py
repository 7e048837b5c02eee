"""The direct family: depthwise convolution (one channel per group) and groups
of a few channels (c = k = 2, 4 or 8) on CUDA cores.

Depthwise layers move bytes, not multiply-adds: a direct convolution with f32
FMAs, one pass over each tensor.  Groups of c = k channels cost c times the
multiply-adds on the same bytes, which the tensor cores of the gather family
waste most of at c <= 8 (a 16-column MMA tile holds c of them): a thread's
16-byte input vector holds whole groups, each output channel the dot product
of its group's c inputs with its filter.
space.py owns the key and the one `is_valid`; for schedule "direct" it hands
the key to `why_invalid` and `derive` here.  One template,
templates/direct_conv.cu.j2, serves fprop, dgrad and wgrad on sm_90a and
sm_100a.

The key's tile is the output block: tile M = its rows (1 in 1D), tile N its
columns, tile K its channels; stages 1.  fprop and dgrad give each thread
`vec` channels (16 bytes) of `strip` consecutive output pixels of one row; a
CTA holds its channels' filters in shared memory and computes a run of
blocks, reading the input through L1.
wgrad walks rows of dy: each thread sums, over segments of WGRAD_SEG columns
of a slice of them, the products of WGRAD_VEC channels for a unit of taps
(one filter row of up to UNIT_TAPS taps), with the row's x window in
registers for the rows of WGRAD_FAST; the CTA adds its threads' sums in order
into its slice of the workspace, and KEY_reduce adds the slices.  Groups of c
channels make a tap's outputs K x c: a thread's WGRAD_VEC outputs are two
channels of one filter, one dy channel times two x channels.

Staged kernels (stages 2 or 3; fprop and unit-stride dgrad, 2D, one channel
and one filter a group, whole 16-byte channel vectors) copy each block's
input tile (its rows and columns with the filter's reach, zeros outside the
image) into shared memory, by one TMA copy a tile on sm_90a (TMA_TILE_ARCHES:
flag TMA_TILE, the kernel's first parameter a tensor map of the input) and
with cp.async elsewhere, `stages` blocks in flight, so that a
CTA's loads of later blocks overlap its arithmetic on this one; each thread
then sums a strip of STAGED_STRIP outputs from the tile, one filter row's
taps in registers (templates/direct_staged.cu.j2).  Staged wgrad (depthwise, 2D) copies each
block's dy pixels and the x tile under them; thread (channel lane, filter row, pixel group) sums
STAGED_WGRAD_VEC channels of one filter row's taps over segments of STAGED_SEG dy columns, its
taps' sums in registers for the whole run, the segment's x window streamed once
(templates/direct_staged_wgrad.cu.j2); the CTA's pixel groups are added in order into its slice of
the workspace as for the unstaged wgrad.
"""
from __future__ import annotations

import dataclasses

from . import space

SCHEDULE = "direct"
DTYPES = (("f16", "f16", "f32", "f16"), ("bf16", "bf16", "f32", "bf16"), ("tf32", "tf32", "f32", "f32"),
          ("f32", "f32", "f32", "f32"))
STRIP = 2                     # fprop/dgrad: outputs of one thread along W
WGRAD_THREADS = 256
UNIT_TAPS = 8                 # wgrad: taps of one unit (a filter row, or 8 taps of a longer one)
WGRAD_VEC = 2                 # wgrad: channels of one thread (its unit's sums and x window in registers)
WGRAD_SEG = 16                # wgrad: dy columns of one item (a thread's x window rides along them)
WGRAD_MIN_CTAS = 3            # wgrad: __launch_bounds__'s CTAs per SM
# wgrad filter rows (width, W stride; dilation 1) whose x window the template keeps in registers,
# in passes over a segment of at most WGRAD_RING taps each (7 taps in one spilled under the
# register cap of WGRAD_MIN_CTAS).
WGRAD_FAST = ((3, 1), (3, 2), (5, 1), (5, 2), (7, 1), (7, 2))
WGRAD_RING = 5
SMEM_BUDGET = 113 * 1024      # the most a launch may use: two CTAs per SM
MIN_THREADS_PER_SM = 512      # fprop/dgrad __launch_bounds__: registers for this many threads an SM
# Filter widths (and W strides) whose taps the fprop/dgrad inner loop has compiled in: the
# input window of a thread's strip is loaded once per filter row, not once per tap.
FAST = ((3, 1), (3, 2), (5, 1), (5, 2), (7, 1), (7, 2))
# A fast filter row computes the strip in runs of `sub` outputs (a power of two dividing STRIP) and
# its taps in chunks, each chunk's input window loaded first: a run's window plus its chunk's taps
# may hold at most ROW_VECTORS 16-byte vectors in registers beside the strip's accumulators (more
# spilled under MIN_THREADS_PER_SM's register cap).  Of the shapes that fit, the one with the most
# multiply-adds per load.
ROW_VECTORS = 13
# 3x3 filters at unit strides (fprop and dgrad): a thread runs down its strip's column through
# segments of at most this many output rows (a divisor of the block's rows), each input row read once
# a segment.
COL_ROWS = 4
# Strided dgrad: a dx column's phase takes at most this many filter columns on its fast path (7
# taps at stride 2; more go tap by tap).  sm100a builds go tap by tap: with this path two of them
# spilled 4 bytes under the same register cap (they are compiled, never run).
PHASE_TAPS = 4
PHASED_ARCHES = ("sm90a",)
# Of those, the square filters whose rows fprop unrolls too (every load of the filter issued early;
# dgrad's strided path leaves no registers for it).
WHOLE = ((3, 1), (3, 2))
# Groups of c = k channels (besides depthwise, c = 1) the kernels take: fprop and dgrad where c
# divides a thread's vector, wgrad where c is even (a thread's two outputs of a tap are two
# channels of one filter).  Their compiled paths: 3-tap fast rows (3x3 fprop whole; wgrad's ring);
# other filters go tap by tap.  (fprop's 3x3 column segments spilled under the register cap with c
# channels a group.)
GROUP_C = (2, 4, 8)
GROUP_ROWS = (3,)
GROUP_ARCHES = ("sm90a",)     # sm100a builds spilled with them; the gather family takes those groups there
# Staged kernels (stages > 1): input tiles copied into shared memory, this many blocks in flight.
STAGED_STAGES = (2, 3)
# ... and their __launch_bounds__: registers for this many threads an SM (cp.async copies of 3
# stages keep more state live: 512 spilled 4 bytes in bf16 fprop; a TMA copy keeps none, but 640
# spilled too)
STAGED_THREADS_PER_SM = {2: 512, 3: 384}
TMA_TILE_THREADS_PER_SM = 512
# Where staged fprop and dgrad load a block's tile by one TMA copy (zeros outside the image by the
# copy engine): no address arithmetic or copy instructions in the threads, which bounded the 3x3
# rows (each cp.async copy cost an SM about 1.4 cycles: runtime/src/direct.c).  Its tile is dense
# (pixels of the block's channels, unpadded).
TMA_TILE_ARCHES = ("sm90a",)
STAGED_STRIP = 4              # outputs of one thread along W (a filter row's window streamed once)
STAGED_ROWS = FAST            # filter rows (taps, W stride; dilation 1) they have compiled in, and take only
STAGED_TAP_VECTORS = 3        # a filter row's taps in chunks of at most this many channel vectors of f32 registers
                              # (5 spilled under the 128-register cap of 128-thread CTAs)
# Staged wgrad: a thread's channels (8 bytes of 16-bit: a whole 7-tap row's sums and x window fit
# in registers), the dy columns of one item (a segment; a block row is a whole number of them),
# threads a CTA and CTAs an SM for __launch_bounds__.
STAGED_WGRAD_VEC = 4
STAGED_SEG = 8
STAGED_WGRAD_THREADS = 256
STAGED_WGRAD_MIN_CTAS = 2
STAGED_WGRAD_STAGES = (2, 3, 4)  # blocks in flight (the registers do not depend on it)


@dataclasses.dataclass(frozen=True)
class Config:
    key: space.Key
    threads: int
    vec: int                  # channels of one thread (16 bytes of the input type)
    strip: int
    lanes: int                # channel vectors of a block
    smem_bytes: int           # the most a problem may use (fprop/dgrad: its filter table; wgrad: its threads' sums)
    min_ctas: int             # __launch_bounds__'s CTAs per SM
    pixel_bytes: int          # staged: shared-memory bytes of one pixel of an input tile (0: not staged)


def row_plan(v: int, s: int, st: int) -> dict:
    """How a fast row of `s` taps at W stride `st` runs, for `v` channels a thread: run length `sub`
    and tap chunks [(first tap, taps, window)]."""
    budget = ROW_VECTORS * 8 // v
    best = None
    sub = STRIP
    while sub >= 1:
        taps = min(s, (budget - (sub - 1) * st) // 2)   # window + taps <= budget
        if taps >= 1:
            chunks = [(s0, min(taps, s - s0), (sub - 1) * st + min(taps, s - s0)) for s0 in range(0, s, taps)]
            rate = sub * s / sum(win for _, _, win in chunks)
            if best is None or rate > best[0]:
                best = (rate, sub, chunks)
        sub //= 2
    _, sub, chunks = best
    return dict(s=s, st=st, sub=sub, chunks=[dict(s0=a, taps=b, win=c) for a, b, c in chunks])


def fast_rows(v: int, rows) -> list:
    """The template's fast rows (row_plan of each)."""
    return [row_plan(v, s, st) for s, st in rows]


def col_rows(key: space.Key) -> int:
    """fprop/dgrad blocks of two or more rows: the output rows of a 3x3 column segment (a divisor of
    the block's rows, at most COL_ROWS); else 0.  The block's row groups take the segments of a
    CTA's run in turn, so a run of this many blocks keeps every group busy (block_run)."""
    if key.op == "wgrad" or key.tile_m < 2:
        return 0
    return max(d for d in range(1, COL_ROWS + 1) if key.tile_m % d == 0)


def wgrad_rows() -> list:
    """The wgrad fast rows: width s, stride st and their passes [(taps n, first tap o)], each at
    least `st` taps so that a step's new inputs replace the oldest."""
    rows = []
    for s, st in WGRAD_FAST:
        passes = [dict(n=min(WGRAD_RING, s - o), o=o) for o in range(0, s, WGRAD_RING)]
        assert all(g["n"] >= st for g in passes)
        rows.append(dict(s=s, st=st, passes=passes))
    return rows


def wgrad_group_rows(key: space.Key) -> list | None:
    """wgrad of groups of c channels: its fast rows (those of GROUP_ROWS), or None where the kernel
    takes no such groups."""
    if key.op != "wgrad" or group_widths(key) == [1]:
        return None
    return [f for f in wgrad_rows() if f["s"] in GROUP_ROWS]


def wgrad_rings(key: space.Key) -> list:
    """The ring passes the wgrad template compiles: (taps n, first tap o, stride st), each for
    depthwise (two dy channels) and, for the rows of wgrad_group_rows, groups (one dy channel)."""
    if key.op != "wgrad":
        return []
    return [dict(n=n, o=o, st=st, grouped=grouped, sfx="_g" if grouped else "", ld_dy="ld_dy1" if grouped else "ld_at")
            for grouped, rows in ((False, wgrad_rows()), (True, wgrad_group_rows(key) or []))
            for n, o, st in sorted({(g["n"], g["o"], f["st"]) for f in rows for g in f["passes"]})]


def vec(key: space.Key) -> int:
    """Channels of one thread: 16 bytes (fprop, dgrad), WGRAD_VEC (wgrad), STAGED_WGRAD_VEC (staged
    wgrad)."""
    if key.op == "wgrad":
        return STAGED_WGRAD_VEC if staged(key) else WGRAD_VEC
    return 16 // space.ELEM_BYTES[key.a]


def copy_vec(key: space.Key) -> int:
    """Staged kernels: channels of one 16-byte copy (the channels a pixel are whole such vectors)."""
    return 16 // space.ELEM_BYTES[key.a]


def staged(key: space.Key) -> bool:
    """Input tiles staged in shared memory (stages > 1)."""
    return key.stages > 1


def tma_tile(key: space.Key) -> bool:
    """Staged fprop and dgrad that load each block's input tile by TMA (flag TMA_TILE)."""
    return staged(key) and key.op != "wgrad" and key.arch in TMA_TILE_ARCHES


def strip_of(key: space.Key) -> int:
    """Outputs of one thread along W: STAGED_STRIP (staged), STRIP (fprop/dgrad)."""
    return STAGED_STRIP if staged(key) else STRIP


def pixel_bytes(key: space.Key, lanes: int, strip: int) -> int:
    """A staged tile's pixel stride in shared memory: the block's channels padded by 0-48 bytes so
    that the 16-byte reads of a quarter warp (consecutive threads: the channel vectors of a pixel,
    then strips `strip` pixels apart) fall in distinct bank groups where they can (W stride 1); a
    TMA copy writes its box unpadded."""
    base = key.tile_k * space.ELEM_BYTES[key.a]
    if tma_tile(key):
        return base

    def conflicts(pix):
        worst = 0
        for phase in range(0, 32, 8):
            groups = {}
            for t in range(phase, phase + 8):
                lane, sq = t % lanes, t // lanes % max(1, key.tile_n // strip)
                addr = sq * strip * pix + lane * 16
                groups.setdefault(addr // 16 % 8, set()).add(addr)
            worst = max(worst, max(len(a) for a in groups.values()))
        return worst
    return min((base + pad for pad in (0, 16, 32, 48)), key=lambda pix: (conflicts(pix), pix))


def staged_rows(cfg: Config) -> list:
    """The staged template's filter rows: taps s at W stride st, in chunks of taps (first s0, n of
    them) whose registers hold at most STAGED_TAP_VECTORS vectors; a chunk reads the strip's window
    columns [c0, c1) of the tile."""
    rows = []
    for s, st in STAGED_ROWS:
        per_chunk = STAGED_TAP_VECTORS * 8 // cfg.vec        # taps whose f32 weights fit
        n = -(-s // -(-s // per_chunk))                       # the fewest chunks, as even as they go
        chunks = [dict(s0=s0, n=min(n, s - s0), c0=s0, c1=(cfg.strip - 1) * st + s0 + min(n, s - s0))
                  for s0 in range(0, s, n)]
        rows.append(dict(s=s, st=st, chunks=chunks))
    return rows


def derive(key: space.Key) -> Config:
    v = vec(key)
    lanes = key.tile_k // v
    strip = strip_of(key)
    if key.op == "wgrad" and staged(key):
        # pixels unpadded: the runtime makes the x tile's row pitch odd, so that a warp's filter rows
        # (threads of consecutive rows) read alternate bank halves
        return Config(key=key, threads=STAGED_WGRAD_THREADS, vec=v, strip=STAGED_SEG, lanes=lanes,
                      smem_bytes=SMEM_BUDGET, min_ctas=STAGED_WGRAD_MIN_CTAS,
                      pixel_bytes=key.tile_k * space.ELEM_BYTES[key.a])
    threads = WGRAD_THREADS if key.op == "wgrad" else lanes * key.tile_m * (key.tile_n // strip)
    return Config(key=key, threads=threads, vec=v, strip=strip, lanes=lanes, smem_bytes=SMEM_BUDGET,
                  min_ctas=WGRAD_MIN_CTAS if key.op == "wgrad" else
                  max(1, (TMA_TILE_THREADS_PER_SM if tma_tile(key) else STAGED_THREADS_PER_SM[key.stages]
                          if staged(key) else MIN_THREADS_PER_SM) // threads),
                  pixel_bytes=pixel_bytes(key, lanes, strip) if staged(key) else 0)


def why_invalid(key: space.Key) -> str | None:
    if (key.cluster_m, key.cluster_n) != (1, 1) or key.dynamic:
        return f"schedule direct: cluster {key.cluster_m}x{key.cluster_n}: 1x1 only"
    if (key.a, key.b, key.acc, key.out) not in DTYPES:
        return (f"schedule direct: types {key.a} x {key.b} -> {key.acc} -> {key.out}: f16, bf16, tf32 or f32 "
                "to the same type (tf32 and f32 compute in f32)")
    if key.stages != 1 and key.stages not in STAGED_STAGES + STAGED_WGRAD_STAGES:
        return (f"schedule direct: stages {key.stages}: 1 (inputs read through L1) or "
                f"{', '.join(map(str, sorted(set(STAGED_STAGES + STAGED_WGRAD_STAGES))))} (input tiles staged in "
                "shared memory)")
    if staged(key) and key.dims != 2:
        return f"schedule direct: stages {key.stages}: staged input tiles are for 2D problems (stages 1 otherwise)"
    if staged(key) and space.ELEM_BYTES[key.a] != 2:
        return f"schedule direct: stages {key.stages}: staged input tiles are for 16-bit types (stages 1 otherwise)"
    if staged(key) and key.op == "wgrad":
        if key.stages not in STAGED_WGRAD_STAGES:
            return (f"schedule direct: stages {key.stages}: staged wgrad keeps "
                    f"{', '.join(map(str, STAGED_WGRAD_STAGES))} blocks in flight")
        if key.tile_k not in (16, 32, 64):
            return f"schedule direct: tile K {key.tile_k}: staged wgrad blocks hold 16, 32 or 64 channels"
        if key.tile_n % STAGED_SEG or key.tile_n > 64 or not 1 <= key.tile_m <= 16:
            return (f"schedule direct: block {key.tile_m}x{key.tile_n}: staged wgrad blocks are 1..16 dy rows of "
                    f"{STAGED_SEG}..64 columns, a multiple of {STAGED_SEG}")
        return None
    if staged(key) and key.stages not in STAGED_STAGES:
        return (f"schedule direct: stages {key.stages}: staged fprop and dgrad keep "
                f"{', '.join(map(str, STAGED_STAGES))} blocks in flight")
    v = vec(key)
    if key.tile_k % v or key.tile_k > 256:
        return f"schedule direct: tile K {key.tile_k} channels: a multiple of {v} (a thread's vector), at most 256"
    strip = strip_of(key)
    if key.tile_n % strip:
        return f"schedule direct: tile N {key.tile_n} columns: a multiple of the {strip}-pixel strip"
    if key.dims == 1 and key.tile_m != 1:
        return f"schedule direct: tile M {key.tile_m}: a 1D block is one row"
    if key.tile_m > 16 or key.tile_n > 64 or (key.dims > 1 and key.tile_m < 2):
        return (f"schedule direct: block {key.tile_m}x{key.tile_n}: 2..16 rows (1 in 1D) of at most 64 columns, "
                "so that a wgrad input tile fits shared memory")
    cfg = derive(key)
    if key.op != "wgrad" and (cfg.threads % 32 or not 64 <= cfg.threads <= 512):
        return (f"schedule direct: {cfg.lanes} channel vectors x {key.tile_m} rows x {key.tile_n // cfg.strip} strips = "
                f"{cfg.threads} threads: a multiple of 32 in 64..512")
    if key.op == "wgrad" and cfg.lanes > WGRAD_THREADS // 8:
        return f"schedule direct: tile K {key.tile_k}: a wgrad block's {cfg.lanes} channel vectors leave too few threads"
    return None


def group_widths(key: space.Key) -> list:
    """Channels a group (c = k) the kernel takes: 1 (depthwise, any filters a group) and, on
    GROUP_ARCHES, those of GROUP_C that fprop and dgrad hold whole in a thread's vector, and that
    wgrad reads in whole pairs (a thread's WGRAD_VEC outputs: two channels of one filter).  Staged
    kernels: 1."""
    if key.arch not in GROUP_ARCHES or staged(key):
        return [1]
    return [1] + [c for c in GROUP_C if (vec(key) % c == 0 if key.op != "wgrad" else c % WGRAD_VEC == 0)]


def row_shapes(key: space.Key, grouped: bool) -> list:
    """(taps, W stride) of the filter rows whose taps the kernel has compiled in, for one channel a group
    or (grouped) groups of c > 1: fprop/dgrad's fast rows, wgrad's rings."""
    if grouped and group_widths(key) == [1]:
        return []
    if staged(key):
        return list(STAGED_ROWS)
    if key.op == "wgrad":
        return [(f["s"], f["st"]) for f in (wgrad_group_rows(key) if grouped else wgrad_rows())]
    return [(s, st) for s, st in FAST if not grouped or s in GROUP_ROWS]


def capabilities(key: space.Key) -> dict:
    from . import index
    cfg = derive(key)
    unstaged_wgrad = key.op == "wgrad" and not staged(key)
    flags = (("SPLITS_K",) if key.op == "wgrad" else ("TMA_TILE",) if tma_tile(key) else ()) + \
        (("CHAINED",) if space.chained(key) else ())
    return dict(family="direct", flags=flags,
                acc_regs=0, wg_n=0, mma_n=0,
                c_align=1, k_align=1, max_stride=0, groups_mode="depthwise",
                group_c_mask=sum(1 << (c.bit_length() - 1) for c in group_widths(key)),
                vec_mask=(1 << (copy_vec(key).bit_length() - 1) if staged(key) else
                          sum(1 << (v.bit_length() - 1) for v in (8, 4, 2, 1) if v <= cfg.vec)),
                block_vec=cfg.vec, block_strip=cfg.strip, block_run=0 if staged(key) else col_rows(key),
                smem_bytes=cfg.smem_bytes, threads=cfg.threads, stage_pixel_bytes=cfg.pixel_bytes,
                max_taps=UNIT_TAPS * 64 if unstaged_wgrad else 0,
                row_mask=index.shape_bits(row_shapes(key, False)), group_row_mask=index.shape_bits(row_shapes(key, True)),
                unit_taps=UNIT_TAPS if unstaged_wgrad else 0, ring_taps=WGRAD_RING if unstaged_wgrad else 0)


def context(key: space.Key) -> dict:
    cfg = derive(key)
    eb = space.ELEM_BYTES[key.a]
    t = "f32" if key.a in ("tf32", "f32") else key.a
    if staged(key) and key.op == "wgrad":
        return dict(key=key.name(), op=key.op, ab=key.a, t=t, eb=eb, bp=key.tile_m, bq=key.tile_n, bc=key.tile_k,
                    vec=cfg.vec, lanes=cfg.lanes, threads=cfg.threads, min_ctas=cfg.min_ctas, pix=cfg.pixel_bytes,
                    stages=key.stages, seg=STAGED_SEG, rows=[dict(s=s, st=st) for s, st in STAGED_ROWS],
                    chained=space.chained(key))
    if staged(key):
        return dict(key=key.name(), op=key.op, ab=key.a, t=t, eb=eb, bp=key.tile_m, bq=key.tile_n, bc=key.tile_k,
                    vec=cfg.vec, strip=cfg.strip, lanes=cfg.lanes, threads=cfg.threads, min_ctas=cfg.min_ctas,
                    pix=cfg.pixel_bytes, stages=key.stages, tma=tma_tile(key),
                    rows=staged_rows(cfg), chained=space.chained(key))
    fast = fast_rows(cfg.vec, FAST) if key.op != "wgrad" else []
    col = dict(rows=col_rows(key)) if col_rows(key) else None
    phased = key.op == "dgrad" and key.arch in PHASED_ARCHES
    return dict(key=key.name(), op=key.op, dims=key.dims, ab=key.a, t=t, eb=eb, bp=key.tile_m, bq=key.tile_n,
                bc=key.tile_k, vec=cfg.vec, strip=cfg.strip, lanes=cfg.lanes, threads=cfg.threads, min_ctas=cfg.min_ctas,
                fast=fast, whole=fast_rows(cfg.vec, WHOLE) if key.op == "fprop" else [], col=col,
                windows=sorted({c["win"] for f in fast for c in f["chunks"]} | ({cfg.strip + 2} if col else set()) |
                               ({cfg.strip + PHASE_TAPS - 1} if phased else set())),
                phase_taps=PHASE_TAPS if phased else 0, unit_taps=UNIT_TAPS,
                wfast=wgrad_rows() if key.op == "wgrad" else [], seg=WGRAD_SEG, wring=WGRAD_RING,
                wrings=wgrad_rings(key), wgfast=wgrad_group_rows(key),
                groups=[dict(cg=c, sfx="" if c == 1 else f"_g{c}", x="e" if c == 1 else f"e / {c} * {c} + gi",
                             rows=[f for f, _ in FAST] if c == 1 else list(GROUP_ROWS)) for c in group_widths(key)],
                elem_t="float" if eb == 4 else "uint16_t", words=cfg.vec * eb // 4,
                axes=list(range(3 - key.dims, 3)), chained=space.chained(key))
