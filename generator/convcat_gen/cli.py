"""convcat-gen: list, generate and explain kernels of the convcat space.

    convcat-gen list [--spec SPEC] [axis filters] [--rejected] [--keys]
    convcat-gen generate --spec SPEC --out DIR [--arch sm90a,...]
    convcat-gen explain KEY
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import sys

from . import render, sm100, space, spec

SPEC_DIR = pathlib.Path(__file__).resolve().parents[2] / "catalog" / "specs"

# Filters use the spec syntax; without --spec they restrict the whole space.
FILTERS = {"arch": "arch", "op": "op", "dims": "dims", "dtypes": "dtypes", "tile": "tile",
           "stages": "stages", "cluster": "cluster", "schedule": "schedule"}


def _axis_values(args) -> dict:
    out = {}
    for axis in FILTERS:
        raw = getattr(args, axis)
        if raw:
            out[axis] = spec._parse_values(axis, raw.replace(",", " ").split(), f"--{axis}")
    return out


def _matches(key: space.Key, flt: dict) -> bool:
    vals = {"arch": key.arch, "op": key.op, "dims": key.dims,
            "dtypes": (key.a, key.b, key.acc, key.out),
            "tile": (key.tile_m, key.tile_n, key.tile_k), "stages": key.stages,
            "cluster": key.cluster, "schedule": key.schedule}
    return all(vals[a] in v for a, v in flt.items())


def _select(args):
    """(valid, rejected) keys for the command line's spec and filters."""
    flt = _axis_values(args)
    if args.spec:
        valid, rejected = spec.load(*spec.find_all(args.spec, SPEC_DIR))
    else:
        dtypes = flt.get("dtypes") or [(a, a, "f32", o) for a in space.DTYPES
                                       for o in dict.fromkeys((a, "f32"))]
        keys = space.product(
            arch=flt.get("arch", space.ARCHES), op=flt.get("op", space.OPS),
            dims=flt.get("dims", space.DIMS), dtypes=dtypes,
            tiles=flt.get("tile") or [(m, n, k) for m in space.TILE_MN for n in space.TILE_MN
                                      for k in space.TILE_K],
            stages=flt.get("stages", space.STAGES), clusters=flt.get("cluster", space.CLUSTERS),
            schedules=flt.get("schedule", space.SCHEDULES))
        valid, rejected = [], []
        for k in keys:
            ok, why = space.is_valid(k)
            (valid.append(k) if ok else rejected.append((k, why)))
    valid = [k for k in valid if _matches(k, flt)]
    rejected = [(k, w) for k, w in rejected if _matches(k, flt)]
    return valid, rejected


def cmd_list(args) -> int:
    valid, rejected = _select(args)
    if args.rejected:
        for k, why in rejected:
            print(f"{k.name()}  rejected: {why}")
        return 0
    if args.keys:
        for k in valid:
            print(k.name())
        return 0
    for k in valid:
        c = space.derive(k)
        print(f"{k.name():64s} threads {c.threads} smem {c.smem_bytes:6d} B")
    print(f"{len(valid)} valid, {len(rejected)} rejected (--rejected shows why)")
    return 0


def _write_if_changed(path: pathlib.Path, text: str) -> None:
    """Keep the mtime of unchanged outputs, so ninja rebuilds only what changed."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def cmd_generate(args) -> int:
    valid, rejected = _select(args)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for k in valid:
        _write_if_changed(out / f"{k.name()}.cu", render.render(k))
    print(f"generated {len(valid)} kernels into {out} ({len(rejected)} combinations of the spec rejected)")
    return 0


def cmd_explain(args) -> int:
    try:
        key = space.parse(args.key)
    except ValueError as e:
        print(f"not a key: {e}", file=sys.stderr)
        return 2
    ok, why = space.is_valid(key)
    if not ok:
        print(f"{key.name()}: invalid: {why}")
        return 1
    print(f"{key.name()}: valid ({space.family(key)} family)")
    cfg = space.derive(key)
    for f in dataclasses.fields(cfg):
        if f.name not in ("key", "smem_regions"):
            print(f"  {f.name:16s} {getattr(cfg, f.name)}")
    if getattr(cfg, "smem_regions", ()):   # the shared-memory map the template prints (SMEM_*)
        regions, end = space.smem_offsets(cfg)
        print(f"  {'smem map':16s} " + ", ".join(f"{n} {off}+{size}" for n, off, size, _ in regions if size)
              + f"; end {end}")
    if key.arch == "sm100a":   # the tcgen05 side: MMA shape, TMEM columns, barrier counts
        u = sm100.umma(key)
        for f in dataclasses.fields(u):
            v = getattr(u, f.name)
            print(f"  {f.name:16s} {f'0x{v:08x}' if f.name == 'idesc' else v}")
    return 0


def cmd_index(args) -> int:
    """The catalog index fields of a spec's kernels, as JSON (for the packer and tests)."""
    valid, _ = _select(args)
    rows = [space.index_values(k) for k in valid]
    json.dump(rows, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="convcat-gen", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    def selection(p):
        p.add_argument("--spec", help="catalog spec name (catalog/specs/NAME.spec) or path; several, "
                                      "comma-separated, make one catalog of their union")
        for axis in FILTERS:
            p.add_argument(f"--{axis}", help=f"only these {axis} values (comma-separated, spec syntax)")

    p = sub.add_parser("list", help="list valid kernels (of a spec, or of the whole space)")
    selection(p)
    p.add_argument("--rejected", action="store_true", help="list rejected combinations with reasons")
    p.add_argument("--keys", action="store_true", help="print keys only")
    p.set_defaults(fn=cmd_list)

    p = sub.add_parser("generate", help="render one .cu per valid kernel of a spec")
    selection(p)
    p.add_argument("--out", required=True)
    p.set_defaults(fn=cmd_generate)

    p = sub.add_parser("explain", help="is KEY valid, and why (not)")
    p.add_argument("key")
    p.set_defaults(fn=cmd_explain)

    p = sub.add_parser("index", help="catalog index fields of the selection, as JSON")
    selection(p)
    p.set_defaults(fn=cmd_index)

    args = ap.parse_args(argv)
    try:
        return args.fn(args)
    except (ValueError, OSError) as e:
        print(f"convcat-gen: {e}", file=sys.stderr)
        return 2
