"""python3 -m convcat: which library and catalog the binding finds, and what the catalog holds."""
import collections
import sys

import convcat


def main():
    try:
        lib = convcat.load_library()
    except convcat.ConvcatError as e:
        print(f"library: {e}")
        return 1
    print(f"library: {lib.path} (convcat_open_default {'exported' if lib.has('convcat_open_default') else 'not exported'})")
    try:
        cat = convcat.open_catalog(None, lib)
    except convcat.ConvcatError as e:
        print(f"catalog: {e}")
        return 1
    print(f"catalog: {cat.path or '(convcat_open_default)'}, found by {cat.found_by}: {len(cat)} kernels")
    counts = collections.Counter((e.arch, e.op, f"{e.dims}d", e.a_type) for e in cat.entries)
    for (arch, op, dims, dt), n in sorted(counts.items()):
        print(f"  {arch:7s} {op:6s} {dims} {dt:5s} {n:4d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
