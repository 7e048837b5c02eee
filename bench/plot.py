#!/usr/bin/env python3
"""Bar chart of bench.py --json results: convcat vs cuDNN TFLOP/s per layer, one panel per dtype.

Usage:
    python3 bench/plot.py RESULTS.json [-o OUT.png]     # default OUT: RESULTS.png
    python3 bench/plot.py --fake OUT.png                 # made-up results, to check the plotting

Bars: cuDNN and the best convcat kernel; a tick marks the heuristic's pick; the dashed line is the
bf16 GEMM peak measured in the same run.  Rows without a convcat result (skipped, FAIL) are left out.
Reads from the JSON: gemm_peak_tflops, device, and per row name, op, dtype, status, cudnn_tflops,
best_tflops, heuristic_tflops.
"""
import argparse
import json
import random

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)


def plotted_rows(results, dtype):
    return [r for r in results["rows"] if r["dtype"] == dtype and r.get("best_tflops") and r.get("cudnn_tflops")]


def label(r):
    return r["name"] if r["op"] == "fprop" else f"{r['name']} ({r['op']})"


def panel(ax, rows, dtype, peak):
    xs = range(len(rows))
    width = 0.4
    ax.bar([x - width / 2 for x in xs], [r["cudnn_tflops"] for r in rows], width, label="cuDNN", color="#8c8c8c")
    ax.bar([x + width / 2 for x in xs], [r["best_tflops"] for r in rows], width, label="convcat best",
           color="#1f77b4")
    heur = [(x + width / 2, r["heuristic_tflops"]) for x, r in zip(xs, rows) if r.get("heuristic_tflops")]
    if heur:
        ax.scatter(*zip(*heur), marker="_", s=200, color="black", zorder=3, label="convcat heuristic pick")
    if peak:
        ax.axhline(peak, color="#d62728", linestyle="--", linewidth=1, label=f"bf16 GEMM peak {peak:.0f}")
    ax.set_title(dtype)
    ax.set_ylabel("TFLOP/s")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([label(r) for r in rows], rotation=45, ha="right", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    top = max([peak or 0] + [max(r["cudnn_tflops"], r["best_tflops"]) for r in rows])
    ax.set_ylim(0, top * 1.2)   # room for the legend above the bars
    ax.legend(fontsize=8, loc="upper center", ncol=4)


def plot(results, out):
    peak = results.get("gemm_peak_tflops")
    dtypes = list(dict.fromkeys(r["dtype"] for r in results["rows"]))
    dtypes = [d for d in dtypes if plotted_rows(results, d)]
    if not dtypes:
        raise SystemExit("plot.py: no row has both a cuDNN and a convcat result")
    width = max(8, 0.6 * max(len(plotted_rows(results, d)) for d in dtypes))
    fig, axes = plt.subplots(len(dtypes), 1, figsize=(width, 4.5 * len(dtypes)), squeeze=False)
    for ax, d in zip(axes[:, 0], dtypes):
        panel(ax, plotted_rows(results, d), d, peak)
    fig.suptitle(f"convcat vs cuDNN, {results.get('device', '?')}")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return len(dtypes)


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
    print(f"wrote {out} ({n} dtype panel{'s' if n > 1 else ''})")


if __name__ == "__main__":
    main()
