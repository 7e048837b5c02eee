"""The catalog file's layout, described once.

catalog/pack.py writes catalogs with `header()` and `record()`; the C runtime
reads them through `cvc_index_layout.h`, which `c_header()` generates at
build time (catalog/meson.build), so the byte offsets exist in one place.
Every integer is little-endian.

A record is one kernel: the fields its key fixes, what its launch needs, its
code blob, and its capabilities -- every fact of the kernel space the
runtime's rules read (what the generator computed from the key: helper
kernels, halo geometry, channel alignment, group support, direct-kernel
blocks), so that no C function restates a rule of space.py.
"""
from __future__ import annotations

import struct

FORMAT_VERSION = 5
MAGIC = b"CONVCAT\0"
HEADER_BYTES, ENTRY_BYTES, KEY_BYTES, BLOB_ALIGN = 64, 256, 112, 256

# Enum values shared with runtime/include/convcat.h (the generated header
# static_asserts each against the public enum).
ARCH = {"sm90a": 1, "sm100a": 2}
OP = {"fprop": 0, "dgrad": 1, "wgrad": 2}
DTYPE = {"f16": 1, "bf16": 2, "tf32": 3, "f32": 4, "e4m3": 5, "e5m2": 6}
SCHEDULE = {"coop": 1, "pingpong": 2, "1sm": 3, "2sm": 4, "swap": 5, "halo": 6, "gather": 7, "direct": 8,
            "grouped": 9}
PUBLIC = {"ARCH": ("CONVCAT_ARCH_", ARCH), "OP": ("CONVCAT_", OP), "DTYPE": ("CONVCAT_", DTYPE),
          "SCHEDULE": ("CONVCAT_", SCHEDULE)}

# Kernel families: how a kernel reads its operands and what its launch takes.
FAMILY = {
    "tma": 1,      # implicit GEMM, operands by TMA (tensor maps), wgmma / tcgen05.mma (cvc_params)
    "gather": 2,   # implicit GEMM, operands gathered by the threads, mma.sync (cvc_gather_params)
    "direct": 3,   # depthwise direct convolution on CUDA cores (cvc_direct_params)
}

# Capability flags (record field `flags`).
FLAGS = {
    "SPLITS_K": "can split its K loop into f32 slices that KEY_reduce (exported) adds in a fixed order",
    "SCATTERS": "TMA dgrad: runs strided problems, a launch per stride phase; exports KEY_fill for a phase no tap reaches",
    "STRIDED_KERNEL": "TMA dgrad: the stride phases run KEY_strided (exported), not KEY",
    "SWAPS": "wgmma's operands swapped: M = the tile's filters, N = its pixels (schedules swap and halo)",
    "HALO": "tiles are output blocks whose input pixels load once per channel block (halo_* fields)",
    "TRANSPOSES_FILTER": "tf32 dgrad: KEY_transpose (exported) first copies the filter K-major into the workspace",
    "GROUPED_SPLITS": "grouped problems may split their K loop too",
    "CHAINED": "waits for the stream's previous kernel (griddepcontrol): launched with programmatic serialization",
    "VERIFIED": "the GPU suite has executed kernels of this arch, family and schedule",
    "PACKS_GROUPS": "gather fprop and dgrad: a CTA may take a pack of adjacent groups as one block-diagonal GEMM",
    "REUSES_B": "TMA fprop and dgrad: where every tile runs the same K stages of one tile column and they divide "
                "the ring, a ring slot's B (filters) loads on its first fill only",
    "DGRAD_AS_FPROP": "TMA fprop (schedule grouped): runs unit-stride dgrad as the fprop of dy, its filters turned "
                      "around into the workspace by KEY_regroup (exported)",
    "CLUSTER_SPLITS": "TMA wgrad (sm90a): split-K slices of one tile may run as one cluster of up to "
                      "CLUSTER_SPLITS_MAX CTAs that add their sums through distributed shared memory "
                      "(cvc_params.cluster_splits): no workspace, no KEY_reduce",
    "TMA_TILE": "direct, staged fprop and dgrad: each block's input tile loads by one TMA copy; the kernel's first "
                "parameter is a tensor map of the input (C x W x H x N, boxes of the tile: tile_ext)",
    "INPUT_TILE": "gather kernels of at most CVC_TILE_MAX_CHANNELS channels (one stage): per block a CTA stages the "
                  "block's input tile (fprop, wgrad; tile_cp channels a pixel) or dy region (dgrad) and reads an operand "
                  "from it (tile_* parameters); fprop and dgrad stage their filters once, wgrad each block's dy",
    "WIDENS_GROUPS": "TMA fprop (schedule grouped): runs groups narrower than its packs as block-diagonal groups of F "
                     "adjacent ones (F a power of two), the filter widened into the workspace by KEY_regroup (exported)",
}
FLAG_BITS = {name: 1 << i for i, name in enumerate(FLAGS)}
# Slices of a CLUSTER_SPLITS kernel's cluster, at most: the portable cluster size (the
# templates unroll the sums over it; the runtime's model and plans keep to it).
CLUSTER_SPLITS_MAX = 8
# Channels of an INPUT_TILE kernel's tile pixel, at most (fprop: C padded to 2 or to this; gather.py).
TILE_MAX_CHANNELS = 4
# Output pixels of an INPUT_TILE wgrad kernel's block: the GEMM's K a block, staged as dy rows.
TILE_WGRAD_BLOCK_PIXELS = 128

# How a kernel takes groups > 1 (record field `groups_mode`).
GROUPS_MODE = {
    "none": 0,       # groups = 1 only
    "diagonal": 1,   # wgrad, K == C, c = C / groups in group_c_mask, dividing tile N: a tile holds whole
                     # c x c diagonal blocks and stores only those
    "any": 2,        # any groups dividing C and K
    "depthwise": 3,  # C / groups = 1 channel per group, any K / groups filters per group; or c = K / groups
                     # = C / groups channels and filters per group where group_c_mask has c's bit
    "packed": 4,     # fprop, groups > 1, a tile column within whole groups: k = K / groups a multiple of tile N,
                     # or packs of tile N / k groups with k and c = C / groups in group_c_mask and the pack's
                     # channels within tile K (space.groups_fprop)
}

# (name, struct code, what it holds).  Order is the byte order of the record.
RECORD = (
    ("key", f"{KEY_BYTES}s", "the canonical key, NUL-padded; it fixes every field up to fallback_n"),
    ("arch", "B", "convcat_arch"),
    ("op", "B", "convcat_op"),
    ("dims", "B", "spatial dimensions"),
    ("a", "B", "A type (convcat_dtype)"),
    ("b", "B", "B type"),
    ("acc", "B", "accumulator type"),
    ("out", "B", "output type"),
    ("schedule", "B", "convcat_schedule"),
    ("tile_m", "H", "tile M (direct: output block rows)"),
    ("tile_n", "H", "tile N (direct: output block columns)"),
    ("tile_k", "H", "tile K (direct: channels of a block)"),
    ("stages", "B", "pipeline stages"),
    ("cluster_m", "B", "cluster M"),
    ("cluster_n", "B", "cluster N"),
    ("fallback_m", "B", "a dynamic cluster's fallback M (0: static)"),
    ("fallback_n", "B", "a dynamic cluster's fallback N"),
    ("family", "B", "kernel family (FAMILY)"),
    ("threads", "H", "threads per CTA"),
    ("registers", "H", "registers per thread (ptxas)"),
    ("smem_bytes", "I", "dynamic shared memory per CTA (direct: the most a problem may use)"),
    ("blob_crc", "I", "CRC-32 of the code blob"),
    ("blob_offset", "Q", "code blob offset from the file start, BLOB_ALIGN-aligned"),
    ("blob_size", "Q", "code blob bytes (a fatbin made by fatbinary)"),
    ("a_box_rows", "H", "TMA: rows of one A load (im2col pixelsPerColumn)"),
    ("a_box_cols", "H", "TMA: columns of one A load (channelsPerPixel)"),
    ("b_box_rows", "H", "TMA: rows of one B load"),
    ("b_box_cols", "H", "TMA: columns of one B load"),
    ("swizzle_bytes", "H", "TMA: swizzle span of the operand maps (one whose box rows are narrower swizzles its row)"),
    ("y_box_rows", "H", "TMA: rows of one epilogue store box"),
    ("y_box_cols", "H", "TMA: columns of one epilogue store box"),
    ("fb_a_box_rows", "H", "TMA: the fallback cluster's A box rows (0: static)"),
    ("fb_b_box_rows", "H", "TMA: the fallback cluster's B box rows"),
    ("flags", "I", "capability flags (FLAGS)"),
    ("acc_regs", "H", "f32 accumulator registers per consumer thread"),
    ("wg_n", "H", "sm90a: columns of one consumer warpgroup's slice"),
    ("mma_n", "H", "N of one MMA instruction"),
    ("c_align", "H", "C must be a multiple of this"),
    ("k_align", "H", "K must be a multiple of this"),
    ("max_stride", "B", "largest traversal stride (0: any)"),
    ("groups_mode", "B", "GROUPS_MODE"),
    ("group_c_mask", "I", "groups_mode diagonal and depthwise: bit i set where c = 2^i channels per group are "
     "taken; packed: where packs take groups of 2^i filters and of 2^i channels"),
    ("halo_cols", "B", "halo: output columns of a block"),
    ("halo_reach", "B", "halo: input pixels a block's tile reaches past it (the filter's reach)"),
    ("halo_tile_rows", "H", "halo: rows of a block's input tile"),
    ("vec_mask", "B", "gather/direct: bit v set where loads of 2^v elements are generated"),
    ("block_vec", "B", "direct: channels of one thread"),
    ("block_strip", "B", "direct: outputs of one thread along W"),
    ("max_taps", "H", "gather/direct: largest filter extent along an axis (0: any)"),
    ("a_stage_bytes", "I", "shared memory of one stage of A"),
    ("b_stage_bytes", "I", "shared memory of one stage of B"),
    ("epi_bytes", "I", "shared memory of the epilogue"),
    ("block_run", "B", "direct fprop/dgrad: a CTA's run of blocks is a multiple of this many (0: any)"),
    ("row_mask", "H", "direct: filter rows with compiled-in taps, one channel a group (shape_bits)"),
    ("group_row_mask", "H", "direct: the same for groups of c > 1 channels (shape_bits)"),
    ("unit_taps", "B", "direct wgrad: taps of a unit (a filter row, or this many of a longer one)"),
    ("ring_taps", "B", "direct wgrad: a compiled-in row's taps a pass of its x ring"),
    ("stage_pixel_bytes", "H", "direct, stages > 1: shared-memory bytes of one pixel of a staged input tile (0: not staged)"),
)


def shape_bits(shapes) -> int:
    """Filter rows (taps s along W at W stride st, dilation 1; 0 < s < 8, st 1 or 2) as a record mask:
    bit s + 8 (st - 1)."""
    shapes = set(shapes)
    assert all(0 < s < 8 and st in (1, 2) for s, st in shapes), shapes
    return sum(1 << (s + 8 * (st - 1)) for s, st in shapes)


# Field values the key fixes (checked by the runtime against the parsed key).
KEY_FIELDS = ("arch", "op", "dims", "a", "b", "acc", "out", "schedule", "tile_m", "tile_n", "tile_k",
              "stages", "cluster_m", "cluster_n", "fallback_m", "fallback_n")

HEADER = (
    ("magic", "8s", 'the bytes "CONVCAT\\0"'),
    ("format_version", "I", "FORMAT_VERSION"),
    ("kernel_abi", "I", "CONVCAT_KERNEL_ABI of templates/include/convcat_kernel_abi.h"),
    ("count", "I", "entries"),
    ("entry_bytes", "I", "ENTRY_BYTES"),
    ("index_offset", "Q", "HEADER_BYTES"),
    ("blobs_offset", "Q", "index offset + count * entry bytes"),
    ("file_size", "Q", "bytes of the whole file"),
    ("index_crc", "I", "CRC-32 of the index bytes"),
    ("reserved", "8s", "zero"),
    ("header_crc", "I", "CRC-32 of the header bytes before this field"),
)


def _layout(fields, total):
    """[(name, code, offset, size, doc)] and the first reserved byte; asserts it fits `total`."""
    out, off = [], 0
    for name, code, doc in fields:
        size = struct.calcsize("<" + code)
        out.append((name, code, off, size, doc))
        off += size
    assert off <= total, (off, total)
    return out, off


RECORD_LAYOUT, RECORD_USED = _layout(RECORD, ENTRY_BYTES)
HEADER_LAYOUT, HEADER_USED = _layout(HEADER, HEADER_BYTES)
assert HEADER_USED == HEADER_BYTES
_RECORD = struct.Struct("<" + "".join(code for _, code, _ in RECORD))
_HEADER = struct.Struct("<" + "".join(code for _, code, _ in HEADER))


def record(values: dict) -> bytes:
    """One ENTRY_BYTES record from {field: value} (every field of RECORD)."""
    missing = [n for n, _, _ in RECORD if n not in values]
    extra = [n for n in values if n not in {f[0] for f in RECORD}]
    if missing or extra:
        raise ValueError(f"index record: missing {missing}, unknown {extra}")
    key = values["key"].encode() if isinstance(values["key"], str) else values["key"]
    if len(key) >= KEY_BYTES:
        raise ValueError(f"{key.decode()}: key longer than {KEY_BYTES - 1} bytes")
    raw = _RECORD.pack(*(key if n == "key" else values[n] for n, _, _ in RECORD))
    return raw.ljust(ENTRY_BYTES, b"\0")


def unpack_record(raw: bytes) -> dict:
    vals = dict(zip((n for n, _, _ in RECORD), _RECORD.unpack_from(raw)))
    vals["key"] = vals["key"].rstrip(b"\0").decode()
    return vals


def header(values: dict) -> bytes:
    """The HEADER_BYTES header; header_crc is computed here."""
    import zlib
    vals = dict(values, magic=MAGIC, reserved=b"\0" * 8, header_crc=0)
    raw = _HEADER.pack(*(vals[n] for n, _, _ in HEADER))
    crc_off = HEADER_LAYOUT[-1][2]
    return raw[:crc_off] + struct.pack("<I", zlib.crc32(raw[:crc_off]))


def unpack_header(raw: bytes) -> dict:
    return dict(zip((n for n, _, _ in HEADER), _HEADER.unpack_from(raw)))


def c_header() -> str:
    """runtime/src's view of this layout: offsets and sizes, enum and flag values."""
    def macro(prefix, name):
        return f"{prefix}_{name.upper()}"
    lines = ["/* cvc_index_layout.h: the catalog file's layout, generated by the convcat generator",
             " * (generator/convcat_gen/index.py) at build time: do not edit. */",
             "#ifndef CVC_INDEX_LAYOUT_H", "#define CVC_INDEX_LAYOUT_H", "",
             f"#define CVC_FORMAT_VERSION {FORMAT_VERSION}u",
             f"#define CVC_HEADER_BYTES {HEADER_BYTES}u", f"#define CVC_ENTRY_BYTES {ENTRY_BYTES}u",
             f"#define CVC_KEY_BYTES {KEY_BYTES}u", f"#define CVC_BLOB_ALIGN {BLOB_ALIGN}u", "",
             "/* Header fields: byte offset (_OFF) and size (_SIZE). */"]
    for name, _, off, size, doc in HEADER_LAYOUT:
        lines.append(f"#define {macro('CVC_HD', name)}_OFF {off}u   /* {doc} */")
        lines.append(f"#define {macro('CVC_HD', name)}_SIZE {size}u")
    lines += ["", "/* Index record fields: byte offset (_OFF) and size (_SIZE); bytes from",
              " * CVC_IX_RESERVED_OFF to the end of a record are zero. */"]
    for name, _, off, size, doc in RECORD_LAYOUT:
        lines.append(f"#define {macro('CVC_IX', name)}_OFF {off}u   /* {doc} */")
        lines.append(f"#define {macro('CVC_IX', name)}_SIZE {size}u")
    lines.append(f"#define CVC_IX_RESERVED_OFF {RECORD_USED}u")
    key_end = next(off + size for name, _, off, size, _ in RECORD_LAYOUT if name == KEY_FIELDS[-1])
    lines += [f"#define CVC_IX_KEY_FIELDS_END {key_end}u   /* the fields the key fixes end here */", "",
              "/* Kernel families. */"]
    lines += [f"#define CVC_FAMILY_{n.upper()} {v}" for n, v in FAMILY.items()]
    lines += ["", "/* Capability flags. */"]
    lines += [f"#define CVC_F_{n} 0x{v:x}u   /* {FLAGS[n]} */" for n, v in FLAG_BITS.items()]
    lines.append(f"#define CVC_F_ALL 0x{sum(FLAG_BITS.values()):x}u")
    lines.append(f"#define CVC_CLUSTER_SPLITS_MAX {CLUSTER_SPLITS_MAX}   /* slices of a CLUSTER_SPLITS cluster, at most */")
    lines.append(f"#define CVC_TILE_MAX_CHANNELS {TILE_MAX_CHANNELS}   /* channels of an INPUT_TILE kernel's tile pixel, at most */")
    lines.append(f"#define CVC_TILE_WGRAD_BLOCK_PIXELS {TILE_WGRAD_BLOCK_PIXELS}   /* output pixels of an INPUT_TILE wgrad block */")
    lines += ["", "/* groups_mode values. */"]
    lines += [f"#define CVC_GROUPS_{n.upper()} {v}" for n, v in GROUPS_MODE.items()]
    lines += ["", "/* The public enums agree with the values the packer writes. */",
              "#define CVC_INDEX_LAYOUT_CHECK_ENUMS() \\"]
    checks = []
    for _, (prefix, table) in PUBLIC.items():
        for n, v in table.items():
            checks.append(f"_Static_assert({prefix}{n.upper()} == {v}, \"{prefix}{n.upper()}\")")
    lines.append("    " + "; \\\n    ".join(checks))
    lines += ["", "#endif", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    import argparse
    import pathlib
    ap = argparse.ArgumentParser(description="write cvc_index_layout.h")
    ap.add_argument("out")
    a = ap.parse_args(argv)
    path = pathlib.Path(a.out)
    text = c_header()
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
