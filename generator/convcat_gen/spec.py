"""Catalog specs: which subsets of the kernel space a catalog holds.

A spec file (catalog/specs/*.spec) is a list of blocks; each block names one
value list per axis and stands for their product.  The catalog is the union
of the blocks, filtered by space.is_valid.

    [fprop_16bit]
    arch      sm90a
    op        fprop
    dims      1d 2d 3d
    dtypes    f16_f16_f32_f16 bf16_bf16_f32_bf16
    tile      128x128x64 128x256x64
    stages    3 4
    cluster   1x1 2x1
    schedule  coop

A cluster value MxNfMxN is a dynamic cluster (sm100a): prefer MxN, fall back
to the second shape (space.Key.fallback_m, fallback_n).
"""
from __future__ import annotations

import pathlib

from . import space

AXES = ("arch", "op", "dims", "dtypes", "tile", "stages", "cluster", "schedule")


def _parse_values(axis: str, words: list[str], where: str):
    def bad(w, what):
        raise ValueError(f"{where}: {axis} value '{w}' is not {what}")
    out = []
    for w in words:
        try:
            if axis == "dims":
                if not (w.endswith("d") and w[:-1] in ("1", "2", "3")):
                    bad(w, "1d, 2d or 3d")
                out.append(int(w[:-1]))
            elif axis == "dtypes":
                parts = w.split("_")
                if len(parts) != 4 or any(p not in space.DTYPES for p in parts):
                    bad(w, "A_B_ACC_OUT with types from " + ", ".join(space.DTYPES))
                out.append(tuple(parts))
            elif axis == "tile":
                out.append(tuple(int(x) for x in w.split("x", 2)))
                if len(out[-1]) != 3:
                    bad(w, "MxNxK")
            elif axis == "cluster":   # MxN, or MxNfMxN: a dynamic cluster and its fallback
                pref, _, fb = w.partition("f")
                out.append(tuple(int(x) for x in pref.split("x", 1)) +
                           (tuple(int(x) for x in fb.split("x", 1)) if fb else ()))
                if len(out[-1]) != (4 if fb else 2):
                    bad(w, "MxN or MxNfMxN")
            elif axis == "stages":
                out.append(int(w))
            else:
                allowed = {"arch": space.ARCHES, "op": space.OPS, "schedule": space.SCHEDULES}[axis]
                if w not in allowed:
                    bad(w, "one of " + ", ".join(allowed))
                out.append(w)
        except ValueError as e:
            if str(e).startswith(where):
                raise
            bad(w, "a number")
    return out


def parse(text: str, name: str = "<spec>") -> list[dict]:
    """Blocks of a spec text, each a dict axis -> list of values."""
    blocks, starts, cur = [], [], None
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        where = f"{name}:{no}"
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            cur = {"name": line[1:-1]}
            blocks.append(cur)
            starts.append(where)
            continue
        if cur is None:
            raise ValueError(f"{where}: axis line before the first [block]")
        axis, *words = line.split()
        if axis not in AXES:
            raise ValueError(f"{where}: unknown axis '{axis}' (axes: {', '.join(AXES)})")
        if axis in cur:
            raise ValueError(f"{where}: axis '{axis}' given twice in [{cur['name']}]")
        if not words:
            raise ValueError(f"{where}: axis '{axis}' has no values")
        cur[axis] = _parse_values(axis, words, where)
    for b, where in zip(blocks, starts):
        missing = [a for a in AXES if a not in b]
        if missing:
            raise ValueError(f"{where}: block [{b['name']}] lacks {', '.join(missing)}")
    if not blocks:
        raise ValueError(f"{name}: no blocks")
    return blocks


def expand(blocks: list[dict]) -> tuple[list[space.Key], list[tuple[space.Key, str]]]:
    """(valid keys, [(rejected key, reason)]), each sorted by name, no duplicates."""
    keys = set()
    for b in blocks:
        keys.update(space.product(arch=b["arch"], op=b["op"], dims=b["dims"], dtypes=b["dtypes"],
                                  tiles=b["tile"], stages=b["stages"], clusters=b["cluster"],
                                  schedules=b["schedule"]))
    valid, rejected = [], []
    for k in sorted(keys, key=space.Key.name):
        ok, why = space.is_valid(k)
        (valid.append(k) if ok else rejected.append((k, why)))
    return valid, rejected


def load(*paths: str | pathlib.Path):
    """(valid, rejected) of the union of the specs' blocks (one spec, or several: the default
    catalog and a development one beside it)."""
    blocks = []
    for path in paths:
        p = pathlib.Path(path)
        blocks += parse(p.read_text(), p.name)
    return expand(blocks)


def find(name_or_path: str, spec_dir: pathlib.Path) -> pathlib.Path:
    """A spec by name (catalog/specs/NAME.spec) or by path."""
    p = pathlib.Path(name_or_path)
    if p.suffix == ".spec" or p.exists():
        return p
    return spec_dir / f"{name_or_path}.spec"


def find_all(names_or_paths: str, spec_dir: pathlib.Path) -> list[pathlib.Path]:
    """The specs of a comma-separated list of names or paths ("default,k128")."""
    return [find(s, spec_dir) for s in names_or_paths.split(",") if s]
