"""python3 -m convcat: which library (and its versions) and catalog the binding finds, and what the
catalog holds per arch, op, dims, data type and kernel family."""
import collections
import sys

import convcat


def main():
    try:
        lib = convcat.load_library()
    except convcat.ConvcatError as e:
        print(f"library: {e}")
        return 1
    v = lib.versions()
    print(f"library: {lib.path} (convcat {v['library']}, catalog format {v['catalog_format']}, kernel ABI "
          f"{v['kernel_abi']}; this binding mirrors convcat.h {v['header']})")
    try:
        cat = convcat.open_catalog(None, lib)
    except convcat.ConvcatError as e:
        print(f"catalog: {e}")
        return 1
    print(f"catalog: {cat.path or '(convcat_open_default)'}, found by {cat.found_by}: {len(cat)} kernels, "
          f"id {cat.id_hex}")
    counts = collections.Counter((e.arch, e.op, f"{e.dims}d", e.a_type, e.family) for e in cat.entries)
    verified = {(e.arch, e.family): e.verified for e in cat.entries}
    for (arch, op, dims, dt, fam), n in sorted(counts.items()):
        print(f"  {arch:7s} {op:6s} {dims} {dt:5s} {fam:7s} {n:4d}"
              + ("" if verified[(arch, fam)] else "  (never executed on a GPU)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
