#!/usr/bin/env python3
"""Judge the query model offline: what the current libconvcat's heuristic would pick for each row of
bench.py --json results, timed by the measurements in those results.  No GPU needed.

Usage:
    python3 bench/model_check.py RESULTS.json [...] [--lib build-default/runtime/libconvcat.so]
                                 [--catalog build-default/catalog/convcat.catalog]

Per (op, dtype): geomean and lowest of (measured time of the best candidate) / (measured time of the
candidate the model now ranks first).  A pick that the run did not time (a kernel absent from that
run's catalog) is counted as missing.  Valid while the model leaves the plans' split-K counts as they
were in the run (those change what was measured).
"""
import argparse
import json
import math
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import bench  # noqa: E402
from classes import problem_rows  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results", nargs="+")
    ap.add_argument("--lib", default="build-default/runtime/libconvcat.so")
    ap.add_argument("--catalog", default="build-default/catalog/convcat.catalog")
    a = ap.parse_args()
    cat = bench.open_convcat(a.lib, a.catalog)
    for path in a.results:
        d = json.load(open(path))
        rows = problem_rows(d)
        groups = {}
        for res in d["rows"]:
            if res.get("status") != "ok":
                continue
            timed = {c["key"]: c["ms"] for c in res["candidates"] if "ms" in c}
            p = bench.problem(cat, rows[res["name"]], res["op"], res["dtype"])
            ok = cat.query(p, "sm90a", d.get("sm_count") or 132).runnable
            pick = next((c.key for c in ok if c.key in timed), None)
            first = ok[0].key if ok else None
            g = groups.setdefault((res["op"], res["dtype"]), [])
            g.append((res["name"], min(timed.values()) / timed[pick] if pick else float("nan"), first == pick))
        print(path)
        for (op, dt), vals in sorted(groups.items()):
            xs = [v for _, v, _ in vals if v == v]
            low = min(vals, key=lambda t: t[1] if t[1] == t[1] else 9)
            print(f"  {op:5s} {dt:5s} rows {len(vals):2d}  heuristic/best geomean "
                  f"{math.exp(sum(map(math.log, xs)) / len(xs)):.3f}  lowest {low[1]:.2f} ({low[0]})"
                  f"  picks timed {sum(1 for *_, f in vals if f)}/{len(vals)}")


if __name__ == "__main__":
    main()
