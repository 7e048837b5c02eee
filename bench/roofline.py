#!/usr/bin/env python3
"""Per-row rooflines for bench.py --json results: how far cuDNN and convcat's best kernel are from
the time the H200 needs at its measured rates, and what a target ratio to cuDNN would require.
No GPU needed.

Usage:
    python3 bench/roofline.py RESULTS.json [...] [--tbps 4.25] [--tflops PEAK] [--target 1.1] [--rows]
    python3 bench/roofline.py --selftest

A row's roofline is max(bytes / DRAM rate, flops / MMA rate): each tensor crosses DRAM once
(x: only the input pixels some tap reads; w; y) and the tensor pipe never waits.  Defaults: the
DRAM rate PyTorch's copy kernel reached on the H200 (bench/ceilings.py: 4.25 TB/s;
its plain read was 3.60 and write 3.35), and as MMA rate the fastest of the run's GEMM peak and
every timed kernel of the given files (a convcat kernel can beat torch.matmul's 8192^3 burst).
Both are measured maxima, not data-sheet figures: the H200 runs these kernels at its 700 W cap.

Per (file, dtype, op) it prints cuDNN's and the best kernel's fraction of the roofline (geomeans), the
bound that the roofline puts on best / cuDNN, the fraction of the roofline a kernel would need, row by
row on average, to reach --target x cuDNN, and how many rows whose pick (the heuristic's kernel) runs
below 1.0x cuDNN reach --floor of their roofline all the same.  The roofline is the same for the three
ops of a layer: the same tensors cross DRAM and the same multiply-adds are done.
"""
import argparse
import json
import math
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import bench  # noqa: E402

ELEM = {"bf16": 2, "fp16": 2, "fp32": 4}


def touched(n_in, n_out, k, pad, stride, dil):
    """Input coordinates along one axis that some output and tap read."""
    return len({o * stride + t * dil - pad for o in range(n_out) for t in range(k)} & set(range(n_in)))


def row_bytes(r, g, elem):
    x = r["N"] * r["C"] * math.prod(touched(*v) for v in zip(g["sp_in"], g["sp_out"], g["flt"], g["pad_lo"],
                                                             g["stride"], g["dil"]))
    w = r["K"] * (r["C"] // r["groups"]) * math.prod(g["flt"])
    y = r["N"] * r["K"] * math.prod(g["sp_out"])
    return elem * (x + w + y)


def problems(d):
    path = pathlib.Path(d["problems"])
    if not path.exists():
        path = pathlib.Path(__file__).resolve().parent / path.name
    return {r["name"]: r for r in bench.load(str(path))}


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def selftest():
    """The byte counts against hand-worked rows (no GPU, no results file)."""
    assert touched(56, 56, 3, 1, 1, 1) == 56          # 3x3, pad 1: every pixel
    assert touched(56, 28, 1, 0, 2, 1) == 28          # 1x1 stride 2: every other pixel
    assert touched(56, 28, 3, 1, 2, 1) == 56          # 3x3 stride 2, pad 1: all of them again
    assert touched(10, 4, 3, 0, 3, 1) == 10           # 3 taps at stride 3 tile the axis
    assert touched(10, 3, 2, 0, 4, 1) == 6            # 2 taps at stride 4: 0 1, 4 5, 8 9
    r = dict(N=256, C=256, K=512, groups=1)            # rn50_09: 1x1 stride 2, 56 -> 28, bf16
    g = dict(sp_in=[56, 56], sp_out=[28, 28], flt=[1, 1], pad_lo=[0, 0], stride=[2, 2], dil=[1, 1])
    assert row_bytes(r, g, 2) == 2 * (256 * 28 * 28 * 256 + 512 * 256 + 256 * 28 * 28 * 512)
    print("roofline selftest: OK")


def main():
    if sys.argv[1:] == ["--selftest"]:
        return selftest()
    ap = argparse.ArgumentParser()
    ap.add_argument("results", nargs="+")
    ap.add_argument("--tbps", type=float, default=4.25, help="DRAM rate, TB/s (default: PyTorch's copy)")
    ap.add_argument("--tflops", type=float, default=0, help="MMA rate, TFLOP/s (default: fastest measured)")
    ap.add_argument("--target", type=float, default=1.1, help="ratio to cuDNN to judge (default 1.1)")
    ap.add_argument("--floor", type=float, default=0.85,
                    help="fraction of the roofline that excuses a pick below 1.0x cuDNN (default 0.85)")
    ap.add_argument("--rows", action="store_true", help="print every row")
    a = ap.parse_args()
    files = [(p, json.load(open(p))) for p in a.results]
    peak = a.tflops or max([d["gemm_peak_tflops"] for _, d in files] +
                           [r["best_tflops"] for _, d in files for r in d["rows"] if r.get("status") == "ok"])
    print(f"roofline: DRAM {a.tbps:.2f} TB/s, MMA {peak:.0f} TFLOP/s; target {a.target:.2f} x cuDNN")
    for path, d in files:
        probs = problems(d)
        by_dtype = {}
        for res in d["rows"]:
            if res.get("status") != "ok":
                continue
            r = probs[res["name"]]
            g = bench.geometry(r)
            t_mem = row_bytes(r, g, ELEM[res["dtype"]]) / (a.tbps * 1e12) * 1e3   # ms
            t_mma = g["flops"] / (peak * 1e12) * 1e3
            roof = max(t_mem, t_mma)
            by_dtype.setdefault((res["dtype"], res["op"]), []).append((res, t_mem, t_mma, roof))
        for (dt, op), rows in by_dtype.items():
            if a.rows:
                print(f"\n{'row':34s} {'DRAM us':>8s} {'MMA us':>8s} {'cuDNN us':>9s} {'best us':>8s} "
                      f"{'cuDNN/roof':>10s} {'best/roof':>9s}  target over MMA rate")
                for res, t_mem, t_mma, roof in rows:
                    over = " yes" if res["cudnn_ms"] / a.target < t_mma else ""
                    print(f"{res['name'][:34]:34s} {t_mem * 1e3:8.1f} {t_mma * 1e3:8.1f} {res['cudnn_ms'] * 1e3:9.1f} "
                          f"{res['best_ms'] * 1e3:8.1f} {roof / res['cudnn_ms']:10.3f} {roof / res['best_ms']:9.3f} {over}")
            cudnn = geomean([roof / res["cudnn_ms"] for res, _, _, roof in rows])
            best = geomean([roof / res["best_ms"] for res, _, _, roof in rows])
            over = sum(res["cudnn_ms"] / a.target < t_mma for res, _, t_mma, _ in rows)
            pick = [(res.get("heuristic_ms") or res["best_ms"], roof) for res, _, _, roof in rows]
            slow = [(ms, roof) for (ms, roof), (res, _, _, _) in zip(pick, rows) if ms > res["cudnn_ms"]]
            near = sum(roof / ms >= a.floor for ms, roof in slow)
            print(f"{pathlib.Path(path).name} {dt} {op}: {len(rows)} rows; fraction of the roofline, geomean: "
                  f"cuDNN {cudnn:.3f}, best {best:.3f}; the roofline bounds best / cuDNN at {1 / cudnn:.3f}; "
                  f"{a.target:.2f} x cuDNN needs {a.target * cudnn:.3f} of it on average; rows where "
                  f"{a.target:.2f} x cuDNN is faster than the MMA rate alone allows: {over}; picks below 1.0x "
                  f"cuDNN: {len(slow)}, {near} of them at {a.floor:.2f} of the roofline or more")


if __name__ == "__main__":
    main()
