#!/usr/bin/env python3
"""The rows whose heuristic pick differs between two builds, with no GPU: what a GPU run of a
change needs to time.

    python3 bench/changed_rows.py --base-lib BASE/libconvcat.so --base-catalog BASE/convcat.catalog \\
        --lib build/runtime/libconvcat.so --catalog build/catalog/convcat.catalog \\
        bench/networks.txt,bench/resnet50.txt --ops fprop,dgrad --dtypes bf16 > changed.txt

Each build is queried in a process of its own (two builds of one soname cannot share a process),
for sm90a on 132 SMs, through bench.py's problems.  Prints the changed rows in the problem-file
format (the first file's header; each row once, whichever op or type changed), and on stderr each
change: row, op, type, base pick -> new pick with their predictions.  bench.py FILE then times
them (--ops, --dtypes as here).
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402


def picks(args):
    """One JSON line per (row, op, dtype): the heuristic's pick on this build (--emit)."""
    cat = bench.open_convcat(args.lib, args.catalog)
    for path in args.problems.split(","):
        for r, op in bench.jobs(bench.load(path), args):
            for dtype in args.dtypes.split(","):
                if not bench.has_kernels(cat, op, dtype):
                    continue
                ok = cat.query(bench.problem(cat, r, op, dtype), "sm90a", 132).runnable
                print(json.dumps(dict(name=r["name"], op=op, dtype=dtype, key=ok[0].key if ok else None,
                                      us=round(ok[0].predicted_us, 1) if ok else None)))
    cat.close()
    return 0


def build_picks(args, lib, catalog):
    cmd = [sys.executable, os.path.abspath(__file__), "--emit", "--lib", lib, "--catalog", catalog,
           "--ops", args.ops, "--dtypes", args.dtypes, args.problems] + (["--all-ops"] if args.all_ops else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return {(p["name"], p["op"], p["dtype"]): p for p in map(json.loads, out.splitlines())}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("problems", help="problem file(s), comma list")
    ap.add_argument("--ops", default="fprop")
    ap.add_argument("--all-ops", action="store_true", help="every --ops op for every row, not the row's own")
    ap.add_argument("--dtypes", default="bf16")
    ap.add_argument("--lib", default="build/runtime/libconvcat.so")
    ap.add_argument("--catalog", default="build/catalog/convcat.catalog")
    ap.add_argument("--base-lib")
    ap.add_argument("--base-catalog")
    ap.add_argument("--by-prediction", action="store_true",
                    help="a row also changes where its pick stays but the prediction moves (its split, say)")
    ap.add_argument("--emit", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--selftest", action="store_true",
                    help="the build against itself: every row picked, none changed (no GPU)")
    args = ap.parse_args()
    args.classes = None
    if args.emit:
        return picks(args)
    if args.selftest:
        a, b = build_picks(args, args.lib, args.catalog), build_picks(args, args.lib, args.catalog)
        bad = [k for k in a if a[k]["key"] is None or a[k] != b.get(k)]
        print(f"changed_rows selftest: {len(a)} picks, {len(bad)} unpicked or different", *bad[:5], sep="\n  ")
        return 1 if bad or not a else 0
    if not (args.base_lib and args.base_catalog):
        ap.error("--base-lib and --base-catalog name the build to compare with")
    base, new = build_picks(args, args.base_lib, args.base_catalog), build_picks(args, args.lib, args.catalog)
    changed = set()
    for k, p in new.items():
        b = base.get(k, {})
        if b.get("key") != p["key"] or (args.by_prediction and b.get("us") != p["us"]):
            print(f"{k[0]} {k[1]} {k[2]}: {b.get('key')} ({b.get('us')} us) -> {p['key']} ({p['us']} us)",
                  file=sys.stderr)
            changed.add(k)
    names = {name for name, _, _ in changed}
    files = args.problems.split(",")
    with open(files[0]) as fh:
        print(fh.readline().rstrip())
    seen = set()
    for path in files:
        with open(path) as fh:
            fh.readline()
            for line in fh:
                name = line.split()[0] if line.strip() and not line.startswith("#") else None
                if name in names and name not in seen:
                    seen.add(name)
                    print(line.rstrip())
    print(f"{len(seen)} of the rows changed pick ({len(changed)} row x op x type pairs)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
