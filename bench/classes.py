#!/usr/bin/env python3
"""Per-class tables from bench.py --json results: convcat's heuristic pick against cuDNN.

Usage:
    python3 bench/classes.py RESULTS.json [...] [--classes depthwise,grouped,stem] [--rows] [--markdown]
    python3 bench/classes.py RESULTS.json [...] --plot OUT.png      # needs matplotlib

Rows are grouped by bench.py's CLASSES (depthwise, grouped, stem, odd, dense, 1x1: by shape alone; 1x1
overlaps dense and odd) and by op and dtype; per group the geomean of cuDNN time / convcat time (the heuristic's pick, kernel
times of the same run) and the lowest row.  Depthwise rows also give the fraction of the run's
device copy rate (bench.py's copy_tbs) that the bytes x + y + w, each once, reach in convcat's
time.  --plot draws every row's ratio, by class and op, one panel per dtype.  No GPU needed.
"""
import argparse
import json
import math
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import bench  # noqa: E402

ELEM = {"bf16": 2, "fp16": 2, "fp32": 4}


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def problem_rows(d):
    """name -> problem row, from the files the run read (comma list, or their copies in bench/)."""
    out = {}
    for path in d["problems"].split(","):
        p = pathlib.Path(path)
        if not p.exists():
            p = pathlib.Path(__file__).resolve().parent / p.name
        out.update({r["name"]: r for r in bench.load(str(p))})
    return out


def tensor_bytes(r, elem):
    g = bench.geometry(r)
    x = r["N"] * r["C"] * math.prod(g["sp_in"])
    w = r["K"] * (r["C"] // r["groups"]) * math.prod(g["flt"])
    y = r["N"] * r["K"] * math.prod(g["sp_out"])
    return elem * (x + w + y)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results", nargs="+")
    ap.add_argument("--classes", default=",".join(bench.CLASSES))
    ap.add_argument("--rows", action="store_true", help="print every row")
    ap.add_argument("--markdown", action="store_true", help="Markdown tables, a layer a row, its ops side by side")
    ap.add_argument("--plot", metavar="OUT.png", help="a strip chart of every row's ratio by class and op")
    a = ap.parse_args()
    groups, summaries = {}, []
    for path in a.results:
        d = json.load(open(path))
        probs = problem_rows(d)
        copy = d.get("copy_tbs") or 0.0
        for row in d["rows"]:
            r = probs.get(row["name"])
            if r is None or not row.get("heuristic_ms") or not row.get("cudnn_ms"):
                continue
            for cls in a.classes.split(","):
                if bench.CLASSES[cls](r):
                    groups.setdefault((cls, row["op"], row["dtype"]), []).append((row, r, copy))
    for (cls, op, dt), rows in sorted(groups.items()):
        ratios = [row["cudnn_ms"] / row["heuristic_ms"] for row, _, _ in rows]
        low = min(zip(ratios, rows), key=lambda t: t[0])
        line = f"{cls:9s} {op:5s} {dt:4s} {len(rows):3d} rows: convcat / cuDNN geomean {geomean(ratios):.3f}, lowest " \
               f"{low[0]:.3f} ({low[1][0]['name']})"
        if cls == "depthwise":
            fr = [tensor_bytes(r, ELEM[dt]) / (row["heuristic_ms"] * 1e-3) / 1e12 / c
                  for row, r, c in rows if c]
            if fr:
                line += f"; copy-rate fraction geomean {geomean(fr):.2f}, highest {max(fr):.2f}"
        if a.markdown:
            summaries.append(line)
            continue
        print(line)
        if a.rows:
            print(f"  {'row':44s} {'cuDNN us':>9s} {'convcat us':>10s} {'ratio':>6s}  kernel")
            for (row, r, c), q in sorted(zip(rows, ratios), key=lambda t: t[1]):
                extra = ""
                if cls == "depthwise" and c:
                    extra = f"  {tensor_bytes(r, ELEM[dt]) / (row['heuristic_ms'] * 1e-3) / 1e12 / c:.2f} of copy"
                print(f"  {row['name']:44s} {row['cudnn_ms'] * 1e3:9.1f} {row['heuristic_ms'] * 1e3:10.1f} {q:6.3f}  "
                      f"{row.get('heuristic_key', '-')}{extra}")

    if a.markdown:
        markdown(groups, summaries)
    if a.plot:
        plot(groups, a.plot)


def plot(groups, out):
    """Per dtype a panel: for each class and op, every row's cuDNN time / convcat time (log scale, above
    1 convcat is faster) and the geomean as a bar across them."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import random
    dtypes = list(dict.fromkeys(dt for _, _, dt in sorted(groups)))
    classes = [c for c in bench.CLASSES if any(k[0] == c for k in groups)]
    colors = {"fprop": "#1f77b4", "dgrad": "#ff7f0e", "wgrad": "#2ca02c"}
    fig, axes = plt.subplots(len(dtypes), 1, figsize=(2.2 * len(classes) + 2, 4.5 * len(dtypes)), squeeze=False)
    rnd = random.Random(0)   # the same jitter every time
    for ax, dt in zip(axes[:, 0], dtypes):
        ticks, labels = [], []
        for ci, cls in enumerate(classes):
            for oi, op in enumerate(("fprop", "dgrad", "wgrad")):
                rows = groups.get((cls, op, dt))
                if not rows:
                    continue
                x = ci * 4 + oi
                ratios = [row["cudnn_ms"] / row["heuristic_ms"] for row, _, _ in rows]
                ax.scatter([x + rnd.uniform(-0.3, 0.3) for _ in ratios], ratios, s=6, alpha=0.5,
                           color=colors[op], label=op if ci == 0 else None)
                ax.hlines(geomean(ratios), x - 0.4, x + 0.4, color="black", linewidth=2,
                          label="geomean" if ci == 0 and oi == 0 else None)
            ticks.append(ci * 4 + 1)
            labels.append(f"{cls}\n({len(groups.get((cls, 'fprop', dt), []))} rows an op)")
        ax.axhline(1.0, color="#d62728", linestyle="--", linewidth=1)
        ax.set_yscale("log")
        ax.set_yticks([0.125, 0.25, 0.5, 1, 2, 4, 8, 16])
        ax.set_yticklabels(["1/8", "1/4", "1/2", "1", "2", "4", "8", "16"])
        ax.minorticks_off()
        ax.set_ylabel("cuDNN time / convcat time")
        ax.set_title(f"{dt}: above 1 convcat is faster (heuristic pick, kernel times)")
        ax.set_xticks(ticks)
        ax.set_xticklabels(labels)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    print(f"wrote {out}")


def markdown(groups, summaries):
    """Per class and type, one Markdown table row per layer (a row name less its op), its three ops
    side by side: cuDNN and convcat microseconds and their ratio (depthwise: fprop's copy-rate fraction)."""
    for line in summaries:
        print(f"- {line}")
    layers = {}
    for (cls, op, dt), rows in groups.items():
        for row, r, c in rows:
            base = row["name"].rsplit("_", 1)[0] if row["name"].endswith("_" + op) else row["name"]
            layers.setdefault((cls, dt), {}).setdefault(base, {})[op] = (row, r, c)
    for (cls, dt), by_layer in sorted(layers.items()):
        copy_col = cls == "depthwise"
        print(f"\n**{cls}, {dt}** (cuDNN µs / convcat µs, and their ratio: above 1 convcat is faster)\n")
        print("| layer | fprop | dgrad | wgrad |" + (" fprop of copy rate |" if copy_col else ""))
        print("|---|---|---|---|" + ("---|" if copy_col else ""))
        for base, ops in sorted(by_layer.items()):
            cells = []
            for op in ("fprop", "dgrad", "wgrad"):
                if op in ops:
                    row = ops[op][0]
                    cells.append(f"{row['cudnn_ms'] * 1e3:.1f} / {row['heuristic_ms'] * 1e3:.1f}, "
                                 f"{row['cudnn_ms'] / row['heuristic_ms']:.2f}")
                else:
                    cells.append("-")
            extra = ""
            if copy_col:
                f = ops.get("fprop")
                extra = (f" {tensor_bytes(f[1], ELEM[dt]) / (f[0]['heuristic_ms'] * 1e-3) / 1e12 / f[2]:.2f} |"
                         if f and f[2] else " - |")
            print(f"| {base} | " + " | ".join(cells) + " |" + extra)


if __name__ == "__main__":
    main()
