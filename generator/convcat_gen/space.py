"""The kernel space as one table.

A kernel is named by a frozen `Key`; the catalog is a product of short axis
lists filtered by `is_valid`, which gives the reason for every rejection.
Nothing else in convcat enumerates kernels.  `derive` computes every number a
template or the catalog index needs (sizes, barrier counts, register budgets,
TMA boxes), so templates only substitute and loop.
"""
from __future__ import annotations

import dataclasses
import itertools
import re

# ----------------------------------------------------------------------------
# Axes

ARCHES = ("sm90a", "sm100a")
OPS = ("fprop", "dgrad", "wgrad")
DIMS = (1, 2, 3)
DTYPES = ("f16", "bf16", "tf32", "f32", "e4m3", "e5m2")
SCHEDULES = ("coop", "pingpong", "1sm", "2sm", "swap", "halo", "gather", "direct", "grouped")
# sm90a: coop, pingpong, swap, halo, grouped; sm100a: 1sm, 2sm (sm100.py); both arches: gather
# (gather.py, any groups and channel counts) and direct (direct.py, depthwise).
TILE_MN = (32, 64, 128, 160, 192, 256)   # tile N 32: fprop and dgrad (few output channels)
TILE_K = (32, 64, 128)
STAGES = tuple(range(2, 9))
HALO_STAGES = tuple(range(2, 17))   # halo: a stage is one tap's filters (8-16 KiB), so deeper rings fit
CLUSTERS = ((1, 1), (2, 1), (1, 2), (2, 2))

ELEM_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "f32": 4, "e4m3": 1, "e5m2": 1}

# Limits of the targets (CUDA programming guide, PTX ISA).
SMEM_OPTIN_BYTES = {"sm90a": 232448, "sm100a": 232448}   # 227 KB per block
REGS_PER_SM = 65536
MAX_PORTABLE_CLUSTER = 8
TMA_BOX_MAX = 256            # tiled boxDim, and our cap on pixelsPerColumn (ISA: 1024)
SWIZZLE_BYTES = 128

# sm_90a warp-specialized layout: warpgroup 0 produces (one thread issues TMA),
# warpgroups 1 and 2 consume (wgmma).  setmaxnreg moves registers from the
# producer to the consumers: 56*128 + 224*256 = 64512 <= 65536.
SM90_THREADS = 384
SM90_CONSUMERS = 2
SM90_PRODUCER_REGS = 56
SM90_CONSUMER_REGS = 224
SM90_ACC_REG_BUDGET = 128
EPI_ROWS = 64                # rows of one epilogue store box (one m64 atom)
# Schedule halo (halo_tiles): a tile is a block of output rows x HALO_COLS
# columns, and the kernel loads the block's input pixels once per channel block
# with HALO_REACH more rows and columns (the filter taps' reach: 3x3 at
# dilation 1), HALO_BUFS such tiles in flight; its epilogue chunks are whole
# output rows of the block, at most HALO_CHUNK_ROWS (halo_chunk_rows).
HALO_COLS = 8
HALO_REACH = 2
HALO_BUFS = 2
HALO_CHUNK_ROWS = 14
# A scattering dgrad kernel's KEY_strided: row tables per consumer warpgroup (tiles in flight).
ROW_TABLES = 4
# The shared-memory map (Config.smem_regions) starts on a 1024-byte boundary, where SW128
# atoms must start; the launch requests this much more than the map for the alignment.
SMEM_ALIGN = 1024


@dataclasses.dataclass(frozen=True, order=True)
class Key:
    """One kernel.  Field order is the order of the key string, but for the
    fallback cluster: last here (0 x 0: a static cluster), it follows the
    cluster in the key, c2x1f1x1 (prefer 2x1, fall back to 1x1)."""
    arch: str
    op: str
    dims: int
    a: str
    b: str
    acc: str
    out: str
    tile_m: int
    tile_n: int
    tile_k: int
    stages: int
    cluster_m: int
    cluster_n: int
    schedule: str
    fallback_m: int = 0
    fallback_n: int = 0

    @property
    def dynamic(self) -> bool:
        """A dynamic cluster: launched preferring cluster_m x cluster_n, any
        cluster may come out as fallback_m x fallback_n instead."""
        return self.fallback_m > 0 or self.fallback_n > 0

    @property
    def cluster(self) -> tuple:
        """(M, N), or (M, N, fallback M, fallback N) for a dynamic cluster: the spec's value."""
        return ((self.cluster_m, self.cluster_n, self.fallback_m, self.fallback_n) if self.dynamic
                else (self.cluster_m, self.cluster_n))

    def name(self) -> str:
        """The canonical key: file stem, extern "C" symbol, index key, test name."""
        fb = f"f{self.fallback_m}x{self.fallback_n}" if self.dynamic else ""
        return (f"{self.arch}_{self.op}_{self.dims}d_{self.a}_{self.b}_{self.acc}_{self.out}_"
                f"{self.tile_m}x{self.tile_n}x{self.tile_k}_s{self.stages}_"
                f"c{self.cluster_m}x{self.cluster_n}{fb}_{self.schedule}")

    def __str__(self) -> str:
        return self.name()


_KEY_RE = re.compile(
    r"(sm90a|sm100a)_(fprop|dgrad|wgrad)_([123])d_([a-z0-9]+)_([a-z0-9]+)_([a-z0-9]+)_([a-z0-9]+)_"
    r"([1-9][0-9]{0,3})x([1-9][0-9]{0,3})x([1-9][0-9]{0,3})_s([1-9][0-9]?)_c([1-9])x([1-9])(?:f([1-9])x([1-9]))?_([a-z0-9]+)")


def parse(text: str) -> Key:
    """Parse a key string; raises ValueError saying what is wrong.

    The C runtime (runtime/src/key.c) implements the same grammar; both are
    tested against tests/key_vectors.txt.
    """
    m = _KEY_RE.fullmatch(text)
    if not m:
        raise ValueError(f"'{text}' is not a key of the form "
                         "ARCH_OP_Nd_A_B_ACC_OUT_MxNxK_sS_cMxN[fMxN]_SCHEDULE")
    g = m.groups()
    for dt in g[3:7]:
        if dt not in DTYPES:
            raise ValueError(f"'{text}': unknown data type '{dt}'")
    if g[15] not in SCHEDULES:
        raise ValueError(f"'{text}': unknown schedule '{g[15]}'")
    key = Key(g[0], g[1], int(g[2]), g[3], g[4], g[5], g[6], int(g[7]), int(g[8]), int(g[9]),
              int(g[10]), int(g[11]), int(g[12]), g[15], int(g[13] or 0), int(g[14] or 0))
    if key.name() != text:   # leading zeros and the like: one spelling per kernel
        raise ValueError(f"'{text}' is not canonical (expected '{key.name()}')")
    return key


# ----------------------------------------------------------------------------
# Derived configuration

@dataclasses.dataclass(frozen=True)
class Config:
    """Everything computed from a key that templates and the index need."""
    key: Key
    threads: int
    consumers: int            # consumer warpgroups
    wg_m: int                 # rows of C per consumer warpgroup
    wg_n: int                 # columns of C per consumer warpgroup
    split: str                # coop: "m" consumers split the tile's rows, "n" its columns;
                              # pingpong: "none", each consumer computes whole tiles in turn
    atoms: int                # m64 wgmma row atoms per consumer (swap: of the tile's filters)
    acc_regs: int             # f32 accumulator registers per consumer thread
    k_steps: int              # k16 wgmma steps per stage
    a_stage_bytes: int
    b_stage_bytes: int
    smem_bytes: int           # dynamic shared memory requested at launch
    a_box_rows: int           # im2col pixelsPerColumn of one A load (a multicast slice)
    a_box_cols: int           # channelsPerPixel
    b_box_rows: int           # filter rows (output channels) of one B load
    b_box_cols: int           # channels of one B load
    y_box_rows: int           # output rows of one epilogue TMA store
    y_box_cols: int           # output columns of one epilogue TMA store (a 128- or 64-byte swizzle row)
    epi_bytes: int            # shared memory of the epilogue's store buffers
    empty_arrivals: int       # arrivals that free one stage in one CTA
    producer_regs: int
    consumer_regs: int
    fb_a_box_rows: int = 0    # a dynamic cluster's fallback shape: its A and B box rows (0: static)
    fb_b_box_rows: int = 0
    scratch_bytes: int = 0    # tf32 wgrad: two K-major copies of a stage's A and B (transposes_stages)
    smem_regions: tuple = ()  # the shared-memory map, in address order (Region); smem_bytes is its
                              # size plus SMEM_ALIGN


@dataclasses.dataclass(frozen=True)
class Region:
    """One region of a TMA kernel's shared-memory map.  The templates print its offset
    from the map's base as SMEM_<name> (smem_offsets) and address it only so."""
    name: str
    size: int
    align: int                # its offset is a multiple of this (1024: SW128 atoms; 8: mbarriers)
    what: str


def smem_offsets(cfg) -> tuple[list[tuple[str, int, int, str]], int]:
    """([(name, offset, size, what)], end) of a Config's shared-memory map: the regions
    one after the other, each at a multiple of its alignment (else ValueError)."""
    at, out = 0, []
    for r in cfg.smem_regions:
        if at % r.align:
            raise ValueError(f"{cfg.key.name()}: shared-memory region {r.name} at {at} is not "
                             f"{r.align}-byte aligned")
        out.append((r.name, at, r.size, r.what))
        at += r.size
    return out, at


def _sm90_layout(key: Key):
    """Split the CTA tile between the two consumer warpgroups (coop), or not (pingpong).
    Swap: 64 filters are one warpgroup's whole tile (in turn, like pingpong); 128 split
    into one m64 atom of filters each (like coop), both over all the tile's pixels."""
    if key.schedule == "pingpong" or (swaps_operands(key) and key.tile_n == 64):
        return "none", key.tile_m, key.tile_n
    if swaps_operands(key):
        return "n", key.tile_m, key.tile_n // 2
    if key.tile_m >= 128:
        return "m", key.tile_m // 2, key.tile_n
    return "n", key.tile_m, key.tile_n // 2


def family(key: Key) -> str:
    """The kernel family of a key (index.FAMILY): how its kernel loads operands and launches."""
    return key.schedule if key.schedule in ("gather", "direct") else "tma"


def derive(key: Key):
    """The key's derived configuration: a Config for the TMA families, gather.Config or
    direct.Config for theirs."""
    if family(key) == "gather":
        from . import gather
        return gather.derive(key)
    if family(key) == "direct":
        from . import direct
        return direct.derive(key)
    if key.arch == "sm100a":
        from . import sm100
        return sm100.derive(key)
    eb = ELEM_BYTES[key.a]
    split, wg_m, wg_n = _sm90_layout(key)
    halo = halo_tiles(key)
    # Halo: the A ring is HALO_BUFS input tiles of one channel block each (halo_bytes), not stages.
    a_stage = 0 if halo else key.tile_m * key.tile_k * eb
    b_stage = key.tile_n * key.tile_k * eb
    acc_regs = (wg_m // 64) * (wg_n // 2) if wg_m >= 64 else 0
    if swaps_operands(key):   # one m64 atom of filters over all the tile's pixels (wgmma N)
        acc_regs = key.tile_m // 2
    # Epilogue: each consumer warpgroup stages its output through two
    # 64-row x 128-byte buffers (one filling while TMA stores the other; a
    # chunk of 64-byte rows, y_row_bytes, fills half of one).  Swap kernels
    # take one: their epilogue runs under the other warpgroup's mainloop
    # (pingpong), and the 16 KiB go to a fifth stage of 256x64 (a sixth..eighth of 128x64).
    epi = SM90_CONSUMERS * (1 if key.schedule == "swap" else 2) * EPI_ROWS * SWIZZLE_BYTES
    if halo:   # two chunk buffers per warpgroup, of halo_chunk_rows output rows
        epi = SM90_CONSUMERS * 2 * halo_chunk_rows(key) * HALO_COLS * SWIZZLE_BYTES
    # tf32 wgrad: the consumers transpose each stage into one of two K-major
    # scratch buffers (tile M + tile N rows of 128 bytes each) that wgmma reads.
    scratch = 2 * (key.tile_m + key.tile_n) * SWIZZLE_BYTES if transposes_stages(key) else 0
    # The map, in address order: stage buffers (halo: the input tiles first), the
    # scratch and the epilogue's buffers (whole 1024-B atoms), then the mbarriers:
    # full/empty per stage; halo: full/empty per input tile; a scattering dgrad
    # kernel's KEY_strided: full/free per epilogue buffer (two per consumer) and
    # ROW_TABLES row tables per consumer, 8 bytes a row of its slice (dgrad_scatters,
    # store_scattered).
    regions = [
        Region("A", HALO_BUFS * halo_buffer_bytes(key) if halo else key.stages * a_stage, 1024,
               "halo: HALO_BUFS input tiles of HALO_BUF; else STAGES stages of A_STAGE" if halo
               else "STAGES stages of A_STAGE"),
        Region("B", key.stages * b_stage, 1024, "STAGES stages of B_STAGE"),
        Region("SCRATCH", scratch, 1024, "tf32 wgrad: two K-major copies of a stage, SCRATCH_BUF each"),
        Region("EPI", epi, 1024, "the epilogue's chunk buffers, EPI_WG per consumer warpgroup"),
        Region("FULL_BAR", 8 * key.stages, 8, "an mbarrier per stage: its loads have landed"),
        Region("EMPTY_BAR", 8 * key.stages, 8, "an mbarrier per stage: its consumers are done with it"),
    ]
    if halo:
        regions += [Region("HALO_FULL", 8 * HALO_BUFS, 8, "an mbarrier per input tile: loaded"),
                    Region("HALO_EMPTY", 8 * HALO_BUFS, 8, "an mbarrier per input tile: read")]
    if _sm90_scatters(key, acc_regs):
        bars = 8 * SM90_CONSUMERS * 2
        regions += [Region("EPI_FULL", bars, 8, "KEY_strided: an mbarrier per epilogue buffer, 2 per consumer: "
                           "a chunk to store"),
                    Region("EPI_FREE", bars, 8, "KEY_strided: an mbarrier per epilogue buffer: stored, free"),
                    Region("ROW_TABLES", SM90_CONSUMERS * ROW_TABLES * max(wg_m, 64) * 8, 8,
                           "KEY_strided: ROW_TABLES row tables of ROW_TABLE per consumer")]
    smem = sum(r.size for r in regions) + SMEM_ALIGN
    # TMA boxes, one CTA's multicast slice (A is shared along cluster N, B along cluster M).
    # K-major operands (fprop A and B, dgrad A) load a slice of the tile's rows, a
    # 128-byte row of K each (tile K 128 of f16/bf16: two such loads per stage, one
    # per span, k_spans); MN-major operands (dgrad B, wgrad A and B) load, per
    # 64-wide column of the tile, a slice of the stage's K rows.
    swz = SWIZZLE_BYTES // eb
    a_rows, a_cols = key.tile_m // key.cluster_n, min(key.tile_k, swz)
    b_rows, b_cols = key.tile_n // key.cluster_m, min(key.tile_k, swz)
    if key.op == "wgrad" or (key.op == "dgrad" and key.a != "tf32"):
        b_rows, b_cols = key.tile_k // key.cluster_m, mn_b_row(key) // eb
    if key.op == "wgrad":
        a_rows, a_cols = key.tile_k // key.cluster_n, swz
    if halo:   # rows of the input tile (its columns: HALO_COLS + HALO_REACH)
        a_rows = halo_tile_rows(key)
    # The wgrad producer splits a pixel index into (n, z, p, q) every stage and
    # keeps per-column channels and im2col offsets: with 56 registers it spills
    # (ptxas), so it gets 64 and the consumers 216 (64*128 + 216*256 = 63488).
    prod, cons = (64, 216) if key.op == "wgrad" else (SM90_PRODUCER_REGS, SM90_CONSUMER_REGS)
    return Config(
        key=key, threads=SM90_THREADS, consumers=SM90_CONSUMERS,
        wg_m=wg_m, wg_n=wg_n, split=split,
        atoms=wg_n // 64 if swaps_operands(key) else max(wg_m // 64, 1),
        acc_regs=acc_regs,
        k_steps=key.tile_k * eb // 32,   # one wgmma takes 32 bytes of K: k16 of f16/bf16, k8 of tf32
        a_stage_bytes=a_stage, b_stage_bytes=b_stage, smem_bytes=smem,
        a_box_rows=a_rows, a_box_cols=a_cols, b_box_rows=b_rows, b_box_cols=b_cols,
        y_box_rows=halo_chunk_rows(key) * HALO_COLS if halo else EPI_ROWS, y_box_cols=y_row_bytes(key, wg_n) // ELEM_BYTES[key.out], epi_bytes=epi,
        scratch_bytes=scratch, smem_regions=tuple(regions),
        # coop: both consumers release each stage (and halo tile); pingpong: the one whose tile it is.
        empty_arrivals=(1 if split == "none" else SM90_CONSUMERS) * (key.cluster_m + key.cluster_n - 1),
        producer_regs=prod, consumer_regs=cons)


def y_row_bytes(key: Key, wg_n: int) -> int:
    """Bytes of one row of an sm90a epilogue chunk: a 128-byte swizzle span, or
    64 bytes (64-byte swizzle) where a warpgroup's row is not whole 128-byte
    spans (tile N 160 of f16/bf16: five chunks of 32 columns).  The runtime
    sets the output map's swizzle to this row (y_box_cols x output bytes)."""
    row = wg_n * ELEM_BYTES[key.out]
    return SWIZZLE_BYTES if row % SWIZZLE_BYTES == 0 else SWIZZLE_BYTES // 2


def _sm90_scatters(key: Key, acc_regs: int) -> bool:
    """dgrad_scatters for an sm90a key whose warpgroups hold `acc_regs` accumulators (and whose
    epilogue rows are 128-byte spans: the scatter copy reads those)."""
    wg_n = _sm90_layout(key)[2]
    return (key.op == "dgrad" and acc_regs < SM90_ACC_REG_BUDGET
            and y_row_bytes(key, wg_n) == SWIZZLE_BYTES)


def dgrad_scatters(key: Key) -> bool:
    """Does this dgrad kernel carry the strided (row-scattering) epilogue?

    Not when its warpgroups hold 128 accumulators: ptxas spills with the
    scatter copy beside them; nor when its epilogue rows are 64 bytes (tile N
    32 and 160, y_row_bytes), which that copy does not read.  Those kernels
    run unit-stride problems only;
    runtime/src/problem.c refuses strided ones with this reason (the same
    rule, cvc_dgrad_scatters).
    """
    if key.arch != "sm90a":
        return key.op == "dgrad"   # every sm100a dgrad kernel scatters (accumulators in TMEM)
    return _sm90_scatters(key, derive(key).acc_regs)


def groups_fprop(key: Key) -> bool:
    """sm90a schedule "grouped": coop's warpgroups and pipeline on grouped fprop (groups > 1),
    each tile column within whole groups.  A column holds either part of one group (filters per
    group k a multiple of tile N: the plain MMAs) or a pack of P = tile N / k whole groups of
    k in PACK_FILTERS filters, whose P x c channels fit one stage (P x c <= tile K, c a multiple
    of PACK_CHANNELS): per k16 step one wgmma m64nk per group, A at the group's channels of the
    stage, B at its k filters.  The producer loads A at the column's first group's channels
    (x's channels (n0 / k) * c on) and B from the filters as (c, taps, K), whose channels past c
    TMA zero-fills, so that a stage's channels of the next group meet zeros.  The accumulators
    of the P groups' m64nk MMAs are those of one m64n(tile N) MMA, so the epilogue is coop's.
    The index records it (groups_mode "packed", group_c_mask: the pack widths).  Groups narrower
    than a pack's (c = 2, 4, 8: ResNeXt's first stages) run as block-diagonal groups of F adjacent
    ones that a pack takes, their filter widened by KEY_regroup (flag WIDENS_GROUPS)."""
    return key.arch == "sm90a" and key.schedule == "grouped"


PACK_FILTERS = (16, 32)   # filters k per group of a pack: the wgmma widths (m64n16, m64n32) compiled
PACK_CHANNELS = 16        # a pack's groups start at whole k16 wgmma steps of the stage's 16-bit channels


@dataclasses.dataclass(frozen=True)
class PackVariant:
    """Packs of tile N / k groups of k filters and c channels (schedule grouped)."""
    k: int
    c: int


def pack_variants(key: Key) -> list:
    """The packs a grouped kernel's consumers compile, one MMA loop each: k in PACK_FILTERS
    with two groups or more a tile column, c whole k16 steps with the pack's channels in one
    stage (P x c <= tile K)."""
    out = []
    for k in PACK_FILTERS:
        groups = key.tile_n // k
        if groups >= 2 and key.tile_n % k == 0:
            out += [PackVariant(k, c) for c in range(PACK_CHANNELS, key.tile_k // groups + 1, PACK_CHANNELS)]
    return out


def pack_widths(key: Key) -> tuple:
    """The group widths of a grouped kernel's packs, as filters k or channels c (the index's
    group_c_mask, so powers of two; the runtime also checks that a pack's P x c channels fit
    tile K, which with these widths picks exactly pack_variants)."""
    widths = tuple(sorted({v.k for v in pack_variants(key)} | {v.c for v in pack_variants(key)}))
    assert all(w & (w - 1) == 0 for w in widths), widths
    return widths


def chained(key: Key) -> bool:
    """Does the kernel wait for the stream's previous kernel (griddepcontrol) and launch with
    programmatic dependent launch (flag CHAINED)?  sm_90a kernels of the TMA, gather and direct
    families; sm_100a ones have no wait yet."""
    return key.arch == "sm90a"


def splits_k(key: Key) -> bool:
    """Can this kernel split its K loop into slices (f32 partial sums + KEY_reduce)?

    wgrad always (its K is every output pixel).  fprop when its warpgroups hold
    fewer than 128 accumulators: a second (partial) epilogue beside 128 spills
    (ptxas).  The index records it (flag SPLITS_K).
    """
    if key.arch != "sm90a":
        return key.op == "wgrad"
    if swaps_operands(key) or groups_fprop(key):
        return False   # swap: its transposing epilogue stores 16-bit outputs only; grouped: not built
    return key.op == "wgrad" or (key.op == "fprop" and derive(key).acc_regs < SM90_ACC_REG_BUDGET)


CLUSTER_ROW_PAD = 32        # bytes after each f32 row of a tile's sums in shared memory: a half warp's
                            # 8-byte writes (4 rows x 4 column pairs) fall in distinct banks


def cluster_row_bytes(key: Key) -> int:
    """The row pitch of a tile's f32 sums in shared memory (cluster split-K)."""
    return key.tile_n * 4 + CLUSTER_ROW_PAD


def cluster_splits(key: Key) -> bool:
    """sm90a wgrad, coop and pingpong tiles without clusters of their own: split-K slices of one
    tile may run as one cluster (the slices its CTAs, at most index.CLUSTER_SPLITS_MAX), which add their
    f32 sums through distributed shared memory instead of a workspace and KEY_reduce: each CTA
    writes its sums into its ring (idle once the tile's last stage is consumed; one tile a CTA),
    and after a cluster barrier CTA q adds slab q of the tile's rows from every CTA's ring in rank
    order.  Needs the ring to hold the tile's sums.  The index records it (flag CLUSTER_SPLITS)."""
    if (key.arch != "sm90a" or key.op != "wgrad" or family(key) != "tma" or key.dynamic or
            key.schedule not in ("coop", "pingpong") or (key.cluster_m, key.cluster_n) != (1, 1)):
        return False
    cfg = derive(key)
    return key.stages * (cfg.a_stage_bytes + cfg.b_stage_bytes) >= key.tile_m * cluster_row_bytes(key)


def reuses_b(key: Key) -> bool:
    """sm90a fprop and dgrad (not halo, whose producer loads input tiles): where the grid has
    one tile column, no split-K and a tile's K stages divide the ring, ring slot s holds the
    same stage of B for every tile, and the producer loads it on the slot's first fill only.
    1x1 layers of few channels run one K stage a tile: their filters loaded once a CTA, not
    once a tile.  The index records it (flag REUSES_B)."""
    return key.arch == "sm90a" and key.op != "wgrad" and not halo_tiles(key) and not groups_fprop(key)


def swaps_operands(key: Key) -> bool:
    """sm90a schedule "swap": pingpong with wgmma's operands swapped.

    The tile is laid out as any fprop tile (tile M output pixels, tile N
    filters; the same loads and output boxes), but computed transposed: wgmma
    M = 64 of the tile's filters (one m64 atom, from the B stage), wgmma N =
    all its pixels (from the A stage), so one m64n256k16 reads 40 KiB of
    shared memory per 256x64x64 stage where four m64n64k16 read 64 KiB.  Tile
    N 64: each warpgroup takes whole tiles in turn (as pingpong); tile N 128:
    the two split the filters, an atom each, over the same pixels (as coop),
    which also allows tile M 192 (wgmma N 192; tiles of 192 pixels fill whole
    waves where 128 and 256 leave a part-wave).  The accumulators hold
    (filter, pixel): the epilogue transposes them with stmatrix .trans into
    the usual (pixel, channel) chunk.
    """
    return key.arch == "sm90a" and key.schedule in ("swap", "halo")


def halo_tiles(key: Key) -> bool:
    """sm90a schedule "halo": swap's warpgroups and epilogue, on tiles of
    output rows instead of runs of pixels.

    A tile is a block of tile_m / HALO_COLS output rows by HALO_COLS columns of
    one image (w fastest).  Per channel block the producer loads the block's
    input pixels once, with HALO_REACH more rows and columns, by one tiled TMA
    box (padding and the image's edges are zero-filled), and per filter tap
    one stage of filters; each tap's wgmma reads the same input tile at the
    tap's offset: its N operand is HALO_COLS-pixel core groups one input row
    (HALO_COLS + HALO_REACH pixels of 128 bytes) apart, the descriptor's SBO.
    An im2col kernel reads every input pixel once per tap (nine times for a
    3x3 filter) through L2; this one once per block, plus the halo.  Unit
    stride, filters reaching at most HALO_REACH pixels past a block (3x3 at
    dilation 1, or smaller): runtime/src/problem.c refuses the others.  Output
    chunks are halo_chunk_rows output rows stored by a 4D box (channels,
    HALO_COLS columns, rows, one image), so the block's rows past the output
    are dropped.
    """
    return key.arch == "sm90a" and key.schedule == "halo"


def halo_chunk_rows(key: Key) -> int:
    """Output rows of one halo epilogue chunk: the most, up to HALO_CHUNK_ROWS,
    that divide the block's rows and make whole 16-pixel stmatrix steps (an
    even count: 14 of a 28-row block, 8 of 32).  0 where none does."""
    rows = key.tile_m // HALO_COLS
    return next((r for r in range(min(rows, HALO_CHUNK_ROWS), 0, -1)
                 if rows % r == 0 and r * HALO_COLS % 16 == 0 and key.tile_m % HALO_COLS == 0), 0)


def halo_tile_rows(key: Key) -> int:
    """Rows of a halo input tile: the block's output rows and HALO_REACH more (its TMA box rows)."""
    return key.tile_m // HALO_COLS + HALO_REACH


def halo_buffer_bytes(key: Key) -> int:
    """Shared memory of one halo input tile: halo_tile_rows x (HALO_COLS + reach)
    pixels of one 128-byte channel block, rounded up to the 1024-byte swizzle atom."""
    return -(-halo_tile_rows(key) * (HALO_COLS + HALO_REACH) * SWIZZLE_BYTES // 1024) * 1024


GROUP_CHANNELS = (8, 16, 32, 64)   # channels per group c = C / groups a grouped wgrad takes
# sm90a's also takes c = 4 (ResNeXt's 32x4d stages): its epilogue stores half 16-byte units of a 16-bit dw.
GROUP_CHANNELS_SM90 = (4,) + GROUP_CHANNELS


def groups_wgrad(key: Key) -> bool:
    """Can this wgrad kernel run grouped problems (groups > 1, K == C)?

    Its tile is Tile_M filters k by the SAME Tile_N channels of x (tile M ==
    tile N), so it holds whole c x c diagonal blocks and stores only those;
    and no other CTA may share its B (x at the M tile's channels) along
    cluster M (cluster M 1, which also rules out sm100a 2sm pairs, whose
    CTAs share B).  The index records it (groups_mode "diagonal"), and the
    runtime's rules read that.
    """
    return key.op == "wgrad" and key.tile_m == key.tile_n and key.cluster_m == 1


def k_spans(key: Key) -> int:
    """128-byte swizzle spans of K in one sm90a stage: 1 (tile K 64 of f16/bf16,
    32 of tf32) or 2 (tile K 128 of f16/bf16).

    A K-major operand (fprop A and B, dgrad A) keeps each span in its own region
    of tile-rows x 128 bytes, filled by its own TMA load (channels c.. and
    c + 64..), and wgmma steps 0-3 read the first region, 4-7 the second.  An
    MN-major operand (dgrad B, wgrad A and B) just has 128 K rows per 64-wide
    column box; its descriptor keeps stepping 16 rows (2048 B) per k16.
    """
    return max(1, key.tile_k * ELEM_BYTES[key.a] // SWIZZLE_BYTES)


def stage_rows(key: Key) -> tuple[int, int]:
    """Bytes of one row of an sm90a A / B stage, which is its swizzle span: an MN-major
    operand's K rows are 128 bytes (64-wide column boxes); a K-major one's are the stage's
    K, 128 bytes (a span; tile K 128 of f16/bf16: two spans, k_spans), or 64 (tile K 32 of
    f16/bf16, a 64-byte swizzle: half the MMAs of a 64-channel stage where a tap's channels
    are 32 or fewer, half of them zero-fill).  The runtime swizzles each operand map by its
    box rows (tma.c)."""
    k_row = min(key.tile_k * ELEM_BYTES[key.a], SWIZZLE_BYTES)
    ta, tb = mn_major(key)
    return (SWIZZLE_BYTES if ta else k_row), (mn_b_row(key) if tb else k_row)


def mn_b_row(key: Key) -> int:
    """Bytes of one K row of an MN-major B column box, its swizzle span: 128 (columns of 64
    16-bit channels), or 64 (32 channels, a 64-byte swizzle) for a dgrad whose warpgroups are
    not whole 64-column boxes (tile N 32 and 160: outputs of 32 channels or fewer, and of
    144-160), whose B would otherwise be padded to the next 64 columns.  The descriptor then
    steps 16 K rows (1024 B) per k16 and LBO is a 32-column box (cvc_desc_mnmajor_sw64); the
    runtime swizzles the B map by its box columns (tma.c)."""
    wg_n = _sm90_layout(key)[2]
    if key.op == "dgrad" and (wg_n * ELEM_BYTES[key.b]) % SWIZZLE_BYTES:
        return SWIZZLE_BYTES // 2
    return SWIZZLE_BYTES


def transposes_stages(key: Key) -> bool:
    """tf32 wgrad: TMA writes both operands MN-major, as for f16/bf16, and the
    consumer warpgroups copy each stage into a K-major scratch buffer in shared
    memory (tf32 wgmma reads K-major operands only) before the MMAs."""
    return key.arch == "sm90a" and key.op == "wgrad" and key.a == "tf32"


def mn_major(key: Key) -> tuple[bool, bool]:
    """Which operands reach wgmma MN-major (transposed): (A, B).

    fprop: both K-major.  dgrad: the filter as (C, K) is C-contiguous, so B is
    MN-major.  wgrad: dy as (K, pixels) and x as (C, pixels) are both
    channel-contiguous, so both are (tf32: the consumers copy them K-major
    before wgmma, transposes_stages).  Only f16/bf16 wgmma can transpose.
    """
    if key.op == "dgrad" and key.a == "tf32":
        return False, False   # tf32 wgmma cannot transpose: dgrad reads a K-major copy of the filter
    return key.op == "wgrad", key.op in ("dgrad", "wgrad")


def transposes_filter(key: Key) -> bool:
    """tf32 dgrad: KEY_transpose first copies the filter into the workspace as
    (T, R, S, C, K), K innermost, so that B is K-major."""
    return key.op == "dgrad" and key.a == "tf32"


# ----------------------------------------------------------------------------
# Validity: every rejection has a reason.

def is_valid(key: Key) -> tuple[bool, str]:
    """(True, "") or (False, why).  The only filter over the kernel space."""
    why = _why_invalid(key)
    return (why is None, why or "")


def _why_invalid(key: Key) -> str | None:
    k = key
    if k.arch not in ARCHES:
        return f"unknown arch {k.arch}"
    if k.op not in OPS:
        return f"unknown op {k.op}"
    if k.dims not in DIMS:
        return f"dims {k.dims}: 1, 2 or 3 spatial dimensions"
    if family(k) == "gather":
        from . import gather
        return gather.why_invalid(k)
    if family(k) == "direct":
        from . import direct
        return direct.why_invalid(k)
    if k.arch == "sm100a":
        from . import sm100
        return sm100.why_invalid(k)
    if k.dynamic:
        return (f"cluster {k.cluster_m}x{k.cluster_n} with fallback {k.fallback_m}x{k.fallback_n}: "
                "sm90a has no preferred-cluster launch; dynamic clusters are sm100a only")
    if k.op not in OPS:
        return f"unknown op {k.op}"
    if k.dims not in DIMS:
        return f"dims {k.dims}: 1, 2 or 3 spatial dimensions"
    # data types
    if k.a != k.b:
        return f"A {k.a} and B {k.b} differ: mixed-input wgmma is not generated"
    if k.a not in ("f16", "bf16", "tf32"):
        return (f"input type {k.a}: the sm90a template takes f16, bf16 or tf32 (fp8 wgmma is not generated)")
    if k.acc != "f32":
        return f"accumulator {k.acc}: only f32 accumulation is generated"
    if k.a == "tf32" and k.out != "f32":
        return f"output {k.out}: a tf32 kernel writes f32"
    if k.a != "tf32" and k.out not in (k.a, "f32"):
        return f"output {k.out}: an {k.a} kernel writes {k.a} or f32"
    # schedule
    if k.schedule not in ("coop", "pingpong", "swap", "halo", "grouped"):
        return f"schedule {k.schedule}: coop, pingpong, swap, halo, grouped, gather or direct"
    if k.schedule == "swap":
        if k.op != "fprop" or k.a == "tf32" or k.out != k.a:
            return (f"schedule swap: fprop of f16/bf16 to the same type only (its epilogue transposes "
                    f"16-bit pairs with stmatrix; this is {k.op} {k.a} -> {k.out})")
        if k.tile_n not in (64, 128) or k.tile_m not in (128, 192, 256):
            return (f"schedule swap: tile N 64 or 128 (an m64 atom of filters per warpgroup) and tile M "
                    f"128, 192 or 256 (the pixels, wgmma N); this is {k.tile_m}x{k.tile_n}")
    if k.schedule == "halo":
        if k.op != "fprop" or k.dims != 2 or k.a == "tf32" or k.out != k.a:
            return (f"schedule halo: 2D fprop of f16/bf16 to the same type only (swap's transposing "
                    f"epilogue, 2D output blocks; this is {k.dims}D {k.op} {k.a} -> {k.out})")
        if k.tile_n not in (64, 128) or k.tile_m % (2 * HALO_COLS) or not 64 <= k.tile_m <= 256:
            return (f"schedule halo: tile N 64 or 128 (an m64 atom of filters per warpgroup) and tile M "
                    f"64..256 pixels, an even number of {HALO_COLS}-pixel rows (whole 16-pixel epilogue "
                    f"steps); this is {k.tile_m}x{k.tile_n}")
        if k.tile_k * ELEM_BYTES[k.a] != SWIZZLE_BYTES:
            return f"schedule halo: tile K {k.tile_k}: one 128-byte channel block per input tile"
        if (k.cluster_m, k.cluster_n) != (1, 1):
            return f"schedule halo: cluster {k.cluster_m}x{k.cluster_n}: 1x1 only (no multicast of input tiles)"
    if k.schedule == "grouped":
        if k.op != "fprop" or k.a == "tf32":
            return (f"schedule grouped: fprop of f16/bf16 only (a pack's groups start at whole k16 wgmma "
                    f"steps; this is {k.op} {k.a})")
        if k.tile_m not in (128, 256) or k.tile_n not in (64, 128):
            return (f"schedule grouped: tile M 128 or 256 (the warpgroups split the rows, each over the whole "
                    f"column's groups) and tile N 64 or 128; this is {k.tile_m}x{k.tile_n}")
        if k.tile_k * ELEM_BYTES[k.a] != SWIZZLE_BYTES:
            return (f"schedule grouped: tile K {k.tile_k}: a stage is one 128-byte swizzle row of channels "
                    f"(a pack's groups at 32-byte steps of it)")
        if (k.cluster_m, k.cluster_n) != (1, 1):
            return (f"schedule grouped: cluster {k.cluster_m}x{k.cluster_n}: 1x1 only (a tile column's A is "
                    "its own groups' channels, which no other column shares)")
    if transposes_stages(k) and k.schedule != "coop":
        return ("schedule pingpong for tf32 wgrad: both consumer warpgroups share each stage's copy into the "
                "K-major scratch (tf32 wgmma reads K-major operands only), which needs the coop schedule")
    # tile
    eb = ELEM_BYTES[k.a]
    if k.a == "tf32" and k.tile_k * eb != SWIZZLE_BYTES:
        # tf32 wgrad's stage copy (copy_stage: a lane per pixel row of one 128-byte span) and
        # tf32 dgrad's K-major filter boxes take one span a stage; fprop is kept alike.
        return (f"tile K {k.tile_k}: a tf32 stage holds one 128-byte swizzle row of K "
                f"({SWIZZLE_BYTES // eb} tf32 elements); two-span stages are f16/bf16 only")
    if k.tile_k * eb == SWIZZLE_BYTES // 2:   # one 64-byte row of K (stage_rows)
        if k.op == "wgrad" or k.schedule not in ("coop", "pingpong"):
            return (f"tile K {k.tile_k}: stages of one 64-byte row of K are fprop and dgrad ones of the coop "
                    f"and pingpong schedules (wgrad's K is pixels; swap and halo read 128-byte rows)")
    elif k.tile_k * eb not in (SWIZZLE_BYTES, 2 * SWIZZLE_BYTES):
        return (f"tile K {k.tile_k}: one stage holds one or two 128-byte swizzle rows of K "
                f"({SWIZZLE_BYTES // eb} or {2 * SWIZZLE_BYTES // eb} {k.a} elements), or (fprop, dgrad) one "
                f"64-byte row ({SWIZZLE_BYTES // 2 // eb})")
    if k.tile_m not in (64, 128, 256) and not swaps_operands(k):
        return f"tile M {k.tile_m}: 64, 128 or 256 (m64 wgmma atoms, split over two warpgroups)"
    if k.tile_n not in (32, 64, 128, 160, 192, 256):
        return f"tile N {k.tile_n}: 32, 64, 128, 160, 192 or 256"
    cfg = derive(k)
    split = cfg.split
    if cfg.wg_n % 8 or cfg.wg_n > 256 or cfg.wg_n < 8:
        return f"warpgroup N {cfg.wg_n}: wgmma N must be a multiple of 8 in 8..256"
    if cfg.wg_m % (8 if swaps_operands(k) else 64):   # swap: the pixels are wgmma N
        return f"warpgroup M {cfg.wg_m}: wgmma M atoms are 64 rows"
    ta, tb = mn_major(k)
    if tb and cfg.wg_n % (mn_b_row(k) // eb):
        return (f"warpgroup N {cfg.wg_n}: an MN-major B ({k.op}) is read in whole "
                f"{mn_b_row(k) // eb}-column swizzle atoms")
    if cfg.wg_n * ELEM_BYTES[k.out] % 64:
        return (f"warpgroup N {cfg.wg_n}: the epilogue stores chunks of 64 or 128 bytes a row, so a "
                f"warpgroup's {cfg.wg_n * ELEM_BYTES[k.out]}-byte rows of {k.out} must be whole 64-byte chunks")
    if cfg.acc_regs > SM90_ACC_REG_BUDGET:
        return (f"register budget: {cfg.acc_regs} f32 accumulators per consumer thread "
                f"exceed {SM90_ACC_REG_BUDGET} of the {SM90_CONSUMER_REGS} registers setmaxnreg gives")
    if k.op == "dgrad" and k.a == "tf32" and cfg.acc_regs >= SM90_ACC_REG_BUDGET:
        return ("register budget: a tf32 dgrad warpgroup holding 128 accumulators spills beside the "
                "f32 scattering epilogue (ptxas); take a tile of 64 accumulators per thread")
    # Measured with ptxas: wgrad's consumers carry two epilogues (dw and the f32
    # split-K slices), and these holding 128 accumulators spill.
    if k.op == "wgrad" and cfg.acc_regs == SM90_ACC_REG_BUDGET:
        if split == "none":
            return ("register budget: a wgrad pingpong warpgroup holding 128 accumulators spills (ptxas); "
                    "take a smaller tile")
        if k.cluster_m * k.cluster_n > 1:
            return ("register budget: a wgrad warpgroup holding 128 accumulators with cluster multicast "
                    "spills (ptxas); take 1x1 or a smaller tile")
    # Measured with ptxas (every tile and cluster at its most stages): tf32 wgrad's
    # column boxes are 32 channels, so its producer keeps im2col state for
    # tile_n / 32 of them and issues tile_m / 32 loads of dy; beside dy's
    # multicast it spills from tile N 128 or tile M 256.  Its consumers hold
    # the stage copy's registers too: two m64 atoms of 64 accumulators spill.
    if transposes_stages(k) and k.cluster_n > 1 and (k.tile_n >= 128 or k.tile_m >= 256):
        return (f"register budget: the tf32 wgrad producer ({k.tile_n // 32} im2col column boxes of x, "
                f"{k.tile_m // 32} of dy multicast along cluster N) spills (ptxas); take cluster N 1, or "
                "tile N 64 and tile M at most 128")
    if transposes_stages(k) and cfg.acc_regs == SM90_ACC_REG_BUDGET and cfg.atoms > 1:
        return ("register budget: a tf32 wgrad warpgroup holding 128 accumulators in two m64 atoms spills "
                "beside the stage copy (ptxas); take a smaller tile M")
    # pipeline
    if halo_tiles(k) and k.stages not in HALO_STAGES:
        return f"stages {k.stages}: 2..16 (halo tiles)"
    if not halo_tiles(k) and k.stages not in STAGES:
        return f"stages {k.stages}: 2..8"
    limit = SMEM_OPTIN_BYTES[k.arch]
    if cfg.smem_bytes > limit:
        scratch = f"+ {cfg.scratch_bytes // 1024} KiB transpose scratch " if cfg.scratch_bytes else ""
        if halo_tiles(k):
            scratch += f"+ {HALO_BUFS} x {halo_buffer_bytes(k) // 1024} KiB input tiles "
        return (f"shared memory: {k.stages} stages x {(cfg.a_stage_bytes + cfg.b_stage_bytes) // 1024} KiB "
                f"{scratch}+ {cfg.epi_bytes // 1024} KiB epilogue + barriers = {cfg.smem_bytes} B > {limit} B")
    # cluster and TMA boxes
    if (k.cluster_m, k.cluster_n) not in CLUSTERS:
        return f"cluster {k.cluster_m}x{k.cluster_n}: 1x1, 2x1, 1x2 or 2x2"
    a_rows = k.tile_k if ta else k.tile_m
    b_rows = k.tile_k if tb else k.tile_n
    if not halo_tiles(k) and (a_rows % k.cluster_n or cfg.a_box_rows % 8):
        return (f"cluster {k.cluster_m}x{k.cluster_n}: A multicast slices of {a_rows}/{k.cluster_n} "
                "rows must be whole 8-row swizzle atoms")
    if b_rows % k.cluster_m or cfg.b_box_rows % 8:
        return (f"cluster {k.cluster_m}x{k.cluster_n}: B multicast slices of {b_rows}/{k.cluster_m} "
                "rows must be whole 8-row swizzle atoms")
    if cfg.a_box_rows > TMA_BOX_MAX or cfg.b_box_rows > TMA_BOX_MAX:
        return f"TMA box: {max(cfg.a_box_rows, cfg.b_box_rows)} rows > {TMA_BOX_MAX}"
    if cfg.a_box_cols * eb > SWIZZLE_BYTES:
        return "TMA box: channelsPerPixel times element size exceeds the 128-byte swizzle span"
    return None


# ----------------------------------------------------------------------------
# Enumeration

def product(arch=ARCHES, op=OPS, dims=DIMS, dtypes=None, tiles=None, stages=STAGES,
            clusters=CLUSTERS, schedules=SCHEDULES):
    """Every key of the given axis values, valid or not, sorted by name."""
    if dtypes is None:
        dtypes = [(a, a, "f32", o) for a in DTYPES for o in DTYPES]
    if tiles is None:
        tiles = [(m, n, kk) for m in TILE_MN for n in TILE_MN for kk in TILE_K]
    keys = {Key(ar, o, d, *dt, *t, s, c[0], c[1], sc, *c[2:])
            for ar, o, d, dt, t, s, c, sc in itertools.product(
                arch, op, dims, dtypes, tiles, stages, clusters, schedules)}
    return sorted(keys, key=Key.name)



# ----------------------------------------------------------------------------
# The catalog index: every field of a kernel's record but its code blob.

# (arch, family) pairs whose kernels the GPU suite (tests/test_gpu.c) has executed.
VERIFIED = {("sm90a", "tma"), ("sm90a", "gather"), ("sm90a", "direct")}


def _lcm(a: int, b: int) -> int:
    import math
    return a * b // math.gcd(a, b)


def _tma_capabilities(key: Key) -> dict:
    """What the runtime's rules and planner read about a TMA-family kernel."""
    cfg = derive(key)
    sm90 = key.arch == "sm90a"
    flags = []
    if splits_k(key):
        flags.append("SPLITS_K")
    if dgrad_scatters(key):
        flags += ["SCATTERS"] + (["STRIDED_KERNEL"] if sm90 else [])
    if swaps_operands(key):
        flags.append("SWAPS")
    if halo_tiles(key):
        flags.append("HALO")
    if transposes_filter(key):
        flags.append("TRANSPOSES_FILTER")
    if reuses_b(key):
        flags.append("REUSES_B")
    if groups_fprop(key):
        flags += ["DGRAD_AS_FPROP", "WIDENS_GROUPS"]
    if groups_wgrad(key) and sm90:
        flags.append("GROUPED_SPLITS")
    if cluster_splits(key):
        flags.append("CLUSTER_SPLITS")
    if chained(key):
        flags.append("CHAINED")
    out_align = 16 // ELEM_BYTES[key.out]
    mma_n = key.tile_m if swaps_operands(key) else cfg.wg_n
    groups_mode = "diagonal" if groups_wgrad(key) else "packed" if groups_fprop(key) else "none"
    group_widths = ((GROUP_CHANNELS_SM90 if sm90 else GROUP_CHANNELS) if groups_mode == "diagonal"
                    else pack_widths(key) if groups_mode == "packed" else ())
    return dict(family="tma", flags=tuple(flags), acc_regs=cfg.acc_regs, wg_n=cfg.wg_n if sm90 else 0,
                mma_n=mma_n, c_align=_lcm(16 // ELEM_BYTES[key.a], out_align), k_align=_lcm(8, out_align),
                max_stride=8, groups_mode=groups_mode,
                group_c_mask=sum(1 << (c.bit_length() - 1) for c in group_widths),
                halo_cols=HALO_COLS if halo_tiles(key) else 0, halo_reach=HALO_REACH if halo_tiles(key) else 0,
                halo_tile_rows=halo_tile_rows(key) if halo_tiles(key) else 0,
                a_stage_bytes=cfg.a_stage_bytes, b_stage_bytes=cfg.b_stage_bytes, epi_bytes=cfg.epi_bytes,
                a_box_rows=cfg.a_box_rows, a_box_cols=cfg.a_box_cols, b_box_rows=cfg.b_box_rows,
                b_box_cols=cfg.b_box_cols, swizzle_bytes=SWIZZLE_BYTES, y_box_rows=cfg.y_box_rows,
                y_box_cols=cfg.y_box_cols, fb_a_box_rows=cfg.fb_a_box_rows, fb_b_box_rows=cfg.fb_b_box_rows,
                smem_bytes=cfg.smem_bytes, threads=cfg.threads)


def index_values(key: Key) -> dict:
    """The index record's fields of `key` (index.RECORD) but for registers and the code blob."""
    from . import index
    fam = family(key)
    if fam == "gather":
        from . import gather
        caps = gather.capabilities(key)
    elif fam == "direct":
        from . import direct
        caps = direct.capabilities(key)
    else:
        caps = _tma_capabilities(key)
    verified = (key.arch, fam) in VERIFIED
    flags = caps.pop("flags") + (("VERIFIED",) if verified else ())
    vals = {name: 0 for name, _, _ in index.RECORD}
    vals.update(caps)
    vals.update(key=key.name(), arch=index.ARCH[key.arch], op=index.OP[key.op], dims=key.dims,
                a=index.DTYPE[key.a], b=index.DTYPE[key.b], acc=index.DTYPE[key.acc], out=index.DTYPE[key.out],
                schedule=index.SCHEDULE[key.schedule], tile_m=key.tile_m, tile_n=key.tile_n, tile_k=key.tile_k,
                stages=key.stages, cluster_m=key.cluster_m, cluster_n=key.cluster_n, fallback_m=key.fallback_m,
                fallback_n=key.fallback_n, family=index.FAMILY[fam],
                flags=sum(index.FLAG_BITS[f] for f in flags), groups_mode=index.GROUPS_MODE[caps["groups_mode"]])
    return vals


def _self_check():
    """Validate the table at import: a broken table fails loudly, early."""
    for tile_m, tile_n in itertools.product(TILE_MN, TILE_MN):
        k = Key("sm90a", "fprop", 2, "bf16", "bf16", "f32", "bf16", tile_m, tile_n, 64, 4, 1, 1, "coop")
        assert parse(k.name()) == k
        dyn = dataclasses.replace(k, cluster_m=2, fallback_m=1, fallback_n=1)
        assert parse(dyn.name()) == dyn and dyn.name().endswith("_c2x1f1x1_coop")
    assert SM90_PRODUCER_REGS * 128 + SM90_CONSUMER_REGS * 128 * SM90_CONSUMERS <= REGS_PER_SM
    assert SM90_PRODUCER_REGS % 8 == 0 and SM90_CONSUMER_REGS % 8 == 0


_self_check()
