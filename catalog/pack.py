#!/usr/bin/env python3
"""Pack fatbins into one catalog file (format: runtime/src/catalog_format.h).

    pack.py --out CATALOG KEY.fatbin...

Each KEY.fatbin has its ptxas report KEY.json beside it.  Every index field
is derived from the key by the generator's table (generator/convcat_gen/
space.py), so the index and the code cannot disagree.  Output is
byte-identical for identical inputs.
"""
import argparse
import json
import pathlib
import re
import struct
import sys
import zlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "generator"))
from convcat_gen import space  # noqa: E402

FORMAT_VERSION = 2
HEADER_BYTES, ENTRY_BYTES, KEY_BYTES, BLOB_ALIGN = 64, 256, 112, 256
ARCH = {"sm90a": 1, "sm100a": 2}
OP = {"fprop": 0, "dgrad": 1, "wgrad": 2}
DTYPE = {"f16": 1, "bf16": 2, "tf32": 3, "f32": 4, "e4m3": 5, "e5m2": 6}
SCHEDULE = {"coop": 1, "pingpong": 2, "1sm": 3, "2sm": 4, "swap": 5, "halo": 6}


def kernel_abi() -> int:
    text = (ROOT / "templates" / "include" / "convcat_kernel_abi.h").read_text()
    return int(re.search(r"#define CONVCAT_KERNEL_ABI (\d+)", text).group(1))


def entry(key: space.Key, registers: int, blob_crc: int, offset: int, size: int) -> bytes:
    cfg = space.derive(key)
    name = key.name().encode()
    if len(name) >= KEY_BYTES:
        raise ValueError(f"{key.name()}: key longer than {KEY_BYTES - 1} bytes")
    rec = name.ljust(KEY_BYTES, b"\0")
    rec += struct.pack("<8B", ARCH[key.arch], OP[key.op], key.dims, DTYPE[key.a], DTYPE[key.b],
                       DTYPE[key.acc], DTYPE[key.out], SCHEDULE[key.schedule])
    rec += struct.pack("<3H4B", key.tile_m, key.tile_n, key.tile_k, key.stages, key.cluster_m,
                       key.cluster_n, 0)
    rec += struct.pack("<HIH5HIQQ", cfg.threads, cfg.smem_bytes, registers, cfg.a_box_rows,
                       cfg.a_box_cols, cfg.b_box_rows, cfg.b_box_cols, space.SWIZZLE_BYTES, blob_crc,
                       offset, size)
    rec += struct.pack("<2H", cfg.y_box_rows, cfg.y_box_cols)
    rec += struct.pack("<2B2H", key.fallback_m, key.fallback_n, cfg.fb_a_box_rows, cfg.fb_b_box_rows)
    assert len(rec) == 178, len(rec)
    return rec.ljust(ENTRY_BYTES, b"\0")


def pack(fatbins: list[pathlib.Path]) -> bytes:
    items = []
    for f in fatbins:
        key = space.parse(f.stem)
        ok, why = space.is_valid(key)
        if not ok:
            raise ValueError(f"{f}: {key.name()} is not a valid kernel: {why}")
        report = json.loads(f.with_suffix(".json").read_text())
        blob = f.read_bytes()
        if not blob:   # the runtime refuses a catalog with an empty code blob
            raise ValueError(f"{f}: empty fatbin")
        items.append((key, blob, report["registers"]))
    items.sort(key=lambda it: it[0].name())
    names = [k.name() for k, _, _ in items]
    if len(set(names)) != len(names):
        raise ValueError("duplicate keys")
    count = len(items)
    blobs_offset = HEADER_BYTES + count * ENTRY_BYTES
    index, blobs, offset = b"", b"", blobs_offset
    for key, blob, regs in items:
        pad = -offset % BLOB_ALIGN
        blobs += b"\0" * pad
        offset += pad
        index += entry(key, regs, zlib.crc32(blob), offset, len(blob))
        blobs += blob
        offset += len(blob)
    file_size = blobs_offset + len(blobs)
    head = struct.pack("<8sIIIIQQQI8x", b"CONVCAT\0", FORMAT_VERSION, kernel_abi(), count, ENTRY_BYTES,
                       HEADER_BYTES, blobs_offset, file_size, zlib.crc32(index))
    head += struct.pack("<I", zlib.crc32(head))
    assert len(head) == HEADER_BYTES
    return head + index + blobs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("fatbins", nargs="*", type=pathlib.Path)
    a = ap.parse_args()
    try:
        data = pack(a.fatbins)
    except (ValueError, OSError, KeyError) as e:
        sys.exit(f"pack.py: {e}")
    pathlib.Path(a.out).write_bytes(data)


if __name__ == "__main__":
    main()
