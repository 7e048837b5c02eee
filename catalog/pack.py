#!/usr/bin/env python3
"""Pack fatbins into one catalog file (layout: generator/convcat_gen/index.py).

    pack.py --out CATALOG KEY.fatbin...

Each KEY.fatbin has its ptxas report KEY.json beside it.  Every index field
is derived from the key by the generator's table (space.index_values), so
the index and the code cannot disagree.  Output is byte-identical for
identical inputs; the file is written beside CATALOG and renamed over it, so
a process that has the old catalog mapped keeps reading the old file.
"""
import argparse
import json
import pathlib
import re
import sys
import zlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "generator"))
from convcat_gen import index, space  # noqa: E402



def kernel_abi() -> int:
    text = (ROOT / "templates" / "include" / "convcat_kernel_abi.h").read_text()
    return int(re.search(r"#define CONVCAT_KERNEL_ABI (\d+)", text).group(1))


# Test indexes (--keys-from): every valid key written in the given sources, each with this
# blob in place of code.  The unit tests read their entries' fields from such a catalog, as
# the runtime reads a real one, and never load the code.
NO_CODE = b"convcat test index: this entry has no code"
KEY_LITERAL = re.compile(r'"((?:sm90a|sm100a)_[a-z0-9_x]+)"')


def test_keys(sources: list[pathlib.Path]) -> list[space.Key]:
    keys = set()
    for src in sources:
        for text in KEY_LITERAL.findall(src.read_text()):
            try:
                k = space.parse(text)
            except ValueError:
                continue
            if space.is_valid(k)[0]:
                keys.add(k)
    return sorted(keys, key=space.Key.name)


def pack(fatbins: list[pathlib.Path], index_only: list[space.Key] = ()) -> bytes:
    items = [(k, NO_CODE, 0) for k in index_only]
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
    blobs_offset = index.HEADER_BYTES + count * index.ENTRY_BYTES
    records, blobs, offset = b"", b"", blobs_offset
    for key, blob, regs in items:
        pad = -offset % index.BLOB_ALIGN
        blobs += b"\0" * pad
        offset += pad
        records += index.record(dict(space.index_values(key), registers=regs, blob_crc=zlib.crc32(blob),
                                     blob_offset=offset, blob_size=len(blob)))
        blobs += blob
        offset += len(blob)
    head = index.header(dict(format_version=index.FORMAT_VERSION, kernel_abi=kernel_abi(), count=count,
                             entry_bytes=index.ENTRY_BYTES, index_offset=index.HEADER_BYTES,
                             blobs_offset=blobs_offset, file_size=blobs_offset + len(blobs),
                             index_crc=zlib.crc32(records)))
    return head + records + blobs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--keys-from", nargs="*", type=pathlib.Path, default=[],
                    help="a test index: the valid key literals of these sources, without code")
    ap.add_argument("fatbins", nargs="*", type=pathlib.Path)
    a = ap.parse_args()
    try:
        data = pack(a.fatbins, test_keys(a.keys_from))
    except (ValueError, OSError, KeyError) as e:
        sys.exit(f"pack.py: {e}")
    out = pathlib.Path(a.out)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(out)   # a new inode: mappings of the old catalog stay valid


if __name__ == "__main__":
    main()
