#!/usr/bin/env python3
"""Bar chart of bench.py --json results: convcat vs cuDNN TFLOP/s per layer, one panel per op and dtype.

Usage:
    python3 bench/plot.py RESULTS.json [-o OUT.png]     # default OUT: RESULTS.png
    python3 bench/plot.py --fake OUT.png                 # made-up results, to check the plotting

Bars: cuDNN and the best convcat kernel; a tick marks the heuristic's pick where it differs from the
best (a run with --max-candidates 1 times the heuristic's pick alone, and its bars say so); the
dashed line is the bf16 GEMM peak measured in the same run.  A problem file may list one layer once
per op (resnet50.txt: NAME_fprop, NAME_dgrad, NAME_wgrad, the same shape); run with --all-ops, each
panel shows such a layer once, under its name without the op.  Rows without a convcat result
(skipped, FAIL) are left out.  Reads from the JSON: gemm_peak_tflops, device, and per row name, op,
dtype, status, cudnn_tflops, best_tflops, heuristic_tflops, best_key, heuristic_key.
"""
import argparse
import json
import random

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)


OPS = ("fprop", "dgrad", "wgrad")


def layer(r):
    """A row's name without a trailing _fprop / _dgrad / _wgrad."""
    base, _, last = r["name"].rpartition("_")
    return base if base and last in OPS else r["name"]


def plotted_rows(results, op, dtype):
    """The rows of one panel, one per layer (the first of the rows of the same layer)."""
    rows, seen = [], set()
    for r in results["rows"]:
        if r["op"] == op and r["dtype"] == dtype and r.get("best_tflops") and r.get("cudnn_tflops") \
                and layer(r) not in seen:
            seen.add(layer(r))
            rows.append(r)
    return rows


def panel(ax, rows, title, peak):
    xs = range(len(rows))
    width = 0.4
    alone = all(r.get("best_key") and r.get("best_key") == r.get("heuristic_key") for r in rows)
    ax.bar([x - width / 2 for x in xs], [r["cudnn_tflops"] for r in rows], width, label="cuDNN", color="#8c8c8c")
    ax.bar([x + width / 2 for x in xs], [r["best_tflops"] for r in rows], width,
           label="convcat, heuristic pick" if alone else "convcat best", color="#1f77b4")
    heur = [(x + width / 2, r["heuristic_tflops"]) for x, r in zip(xs, rows) if r.get("heuristic_tflops")]
    if heur and not alone:
        ax.scatter(*zip(*heur), marker="_", s=200, color="black", zorder=3, label="convcat heuristic pick")
    if peak:
        ax.axhline(peak, color="#d62728", linestyle="--", linewidth=1, label=f"bf16 GEMM peak {peak:.0f}")
    ax.set_title(title)
    ax.set_ylabel("TFLOP/s")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([layer(r) for r in rows], rotation=45, ha="right", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    top = max([peak or 0] + [max(r["cudnn_tflops"], r["best_tflops"]) for r in rows])
    ax.set_ylim(0, top * 1.2)   # room for the legend above the bars
    ax.legend(fontsize=8, loc="upper center", ncol=4)


def plot(results, out):
    peak = results.get("gemm_peak_tflops")
    dtypes = list(dict.fromkeys(r["dtype"] for r in results["rows"]))
    panels = [(op, d) for d in dtypes for op in OPS if plotted_rows(results, op, d)]
    if not panels:
        raise SystemExit("plot.py: no row has both a cuDNN and a convcat result")
    width = max(8, 0.45 * max(len(plotted_rows(results, op, d)) for op, d in panels))
    fig, axes = plt.subplots(len(panels), 1, figsize=(width, 4.5 * len(panels)), squeeze=False)
    for ax, (op, d) in zip(axes[:, 0], panels):
        panel(ax, plotted_rows(results, op, d), f"{op}, {d}", peak)
    fig.suptitle(f"convcat vs cuDNN, {results.get('device', '?')}")
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / fig.get_figheight()))   # room for the suptitle
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return len(panels)


def fake_results():
    """Results shaped like bench.py's, with made-up numbers (a skipped and a failed row included)."""
    rnd = random.Random(1)
    rows = []
    for dtype in ("bf16", "fp16"):
        for name in ("r50_res2_3x3", "r50_res3_s2", "sd_64x64_320", "big_3x3_256", "vid3d_3x3x3_128",
                     "conv1d_k3_512"):
            c, b = rnd.uniform(250, 700), rnd.uniform(250, 700)
            rows.append(dict(name=name, op="fprop", dtype=dtype, status="ok", cudnn_tflops=c, best_tflops=b,
                             heuristic_tflops=b * rnd.uniform(0.8, 1.0)))
        rows.append(dict(name="conv1_c3", op="fprop", dtype=dtype, status="skipped: no kernel can run it"))
        rows.append(dict(name="r50_res4_3x3", op="dgrad", dtype=dtype, status="FAIL", cudnn_tflops=400.0))
        for name in ("rn50_02_1x1_fprop", "rn50_02_1x1_dgrad"):   # one layer listed twice: one bar pair
            rows.append(dict(name=name, op="dgrad", dtype=dtype, status="ok", cudnn_tflops=300.0,
                             best_tflops=320.0, heuristic_tflops=310.0))
    return dict(device="fake H200", gemm_peak_tflops=787.0, rows=rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="?", help="bench.py --json output")
    ap.add_argument("-o", "--out", help="PNG to write (default: RESULTS with .png)")
    ap.add_argument("--fake", metavar="OUT.png", help="plot made-up results into OUT.png")
    a = ap.parse_args()
    if a.fake:
        results, out = fake_results(), a.fake
    elif a.results:
        with open(a.results) as fh:
            results = json.load(fh)
        out = a.out or a.results.rsplit(".", 1)[0] + ".png"
    else:
        ap.error("give RESULTS.json or --fake OUT.png")
    n = plot(results, out)
    print(f"wrote {out} ({n} panel{'s' if n > 1 else ''}: op and dtype)")


if __name__ == "__main__":
    main()
