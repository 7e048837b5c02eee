#!/usr/bin/env python3
"""Markdown tables from bench.py --json results, one per (op, dtype), with geomeans.

Usage:
    python3 bench/tables.py RESULTS.json [RESULTS.json ...]

Per row: cuDNN, convcat heuristic and best TFLOP/s, best / cuDNN, heuristic / best, and the best
kernel's key without its arch, op, dims and types.  Rows convcat cannot run say why.
"""
import json
import math
import sys


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def short(key):
    parts = key.split("_")
    return "_".join(parts[7:]) if len(parts) > 7 else key


def tables(path):
    d = json.load(open(path))
    out = [f"From `{path}` (GEMM peak {d.get('gemm_peak_tflops', 0):.0f} TFLOP/s in the same run).", ""]
    groups = {}
    for r in d["rows"]:
        groups.setdefault((r["op"], r["dtype"]), []).append(r)
    for (op, dt), rows in sorted(groups.items()):
        ok = [r for r in rows if r.get("status") == "ok"]
        out += [f"**{dt} {op}**: best / cuDNN {geomean([r['best_tflops'] / r['cudnn_tflops'] for r in ok]):.3f}, "
                f"heuristic / best {geomean([hb(r) for r in ok]):.3f} "
                f"(geomean over {len(ok)} of {len(rows)} rows)", "",
                "| layer | cuDNN | heuristic | best | best/cuDNN | heur/best | best kernel |",
                "|---|---|---|---|---|---|---|"]
        for r in rows:
            if r.get("status") != "ok":
                why = r.get("reason") or r.get("status") or "not run"
                out.append(f"| {r['name']} | {r.get('cudnn_tflops') or 0:.0f} | – | – | – | – | {why[:90]} |")
                continue
            out.append(f"| {r['name']} | {r['cudnn_tflops']:.0f} | {r['heuristic_tflops']:.0f} | "
                       f"{r['best_tflops']:.0f} | {r['best_tflops'] / r['cudnn_tflops']:.2f} | "
                       f"{hb(r):.2f} | {short(r['best_key'])} |")
        out.append("")
    return "\n".join(out)


def hb(r):
    """Heuristic / best: the paired re-timing where the run has it (bench.py, pair_heuristic_best)."""
    return r.get("heuristic_over_best") or r["heuristic_tflops"] / r["best_tflops"]


if __name__ == "__main__":
    print("\n\n".join(tables(p) for p in sys.argv[1:]))
