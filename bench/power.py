#!/usr/bin/env python3
"""SM clock and board power while kernels run back to back, on the GPU machine.

Usage (repository root):
    python3 bench/power.py PROBLEMS.txt ROW [ROW ...] [--dtypes bf16,fp16] [--seconds 1.5]
                           [--lib .gpu/lib/libconvcat.so] [--catalog .gpu/convcat.catalog] [--json OUT.json]

Per data type: torch.matmul 8192^3 (bench.py's "peak"), then per row cuDNN (cudnn.benchmark, as bench.py
runs it) and convcat's heuristic pick, each launched back to back for --seconds while nvidia-smi samples
the SM clock, the board power and the active clock-event reasons every 50 ms.  Prints the time per call
over the whole window and the medians of the samples.

bench.py times bursts of 10 launches between idle gaps; under load that long the H200 runs into its
700 W cap and lowers the SM clock, by more for f16 data than for bf16 (docs/design.md, "The epilogue").
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import bench  # noqa: E402  (puts the repository's python/, the convcat package, on sys.path)


def sustained(fn, seconds):
    """(microseconds per call, median SM MHz, median W, clock-event reasons seen) over `seconds`."""
    import torch
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,clocks_event_reasons.active",
                            "--format=csv,noheader,nounits", "-lms", "50"], stdout=subprocess.PIPE, text=True)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    calls, t0 = 0, time.time()
    while time.time() - t0 < seconds:
        for _ in range(20):
            fn()
        calls += 20
        torch.cuda.synchronize()
    end.record()
    torch.cuda.synchronize()
    smi.terminate()
    samples = [line.split(", ") for line in smi.communicate()[0].splitlines()[3:] if line.count(",") == 2]
    if not samples:
        raise RuntimeError("nvidia-smi gave no samples")
    return (start.elapsed_time(end) * 1e3 / calls, statistics.median(float(s[0]) for s in samples),
            statistics.median(float(s[1]) for s in samples), sorted({s[2] for s in samples}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("problems")
    ap.add_argument("rows", nargs="+")
    ap.add_argument("--dtypes", default="bf16,fp16")
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--lib", default=".gpu/lib/libconvcat.so")
    ap.add_argument("--catalog", default=".gpu/convcat.catalog")
    ap.add_argument("--json")
    a = ap.parse_args()
    import torch
    torch.backends.cudnn.benchmark = True
    torch.zeros(1, device="cuda")
    cat = bench.open_convcat(a.lib, a.catalog)
    rows = {r["name"]: r for r in bench.load(a.problems)}
    stream = torch.cuda.current_stream().cuda_stream
    results = []

    def report(what, fn):
        us, mhz, watts, reasons = sustained(fn, a.seconds)
        results.append(dict(case=what, us_per_call=us, sm_mhz=mhz, watts=watts, reasons=reasons))
        print(f"{what:60s} {us:9.1f} us/call  SM {mhz:5.0f} MHz  {watts:4.0f} W  events {','.join(reasons)}",
              flush=True)

    for dtype in a.dtypes.split(","):
        tdt = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
        a_mat, b_mat = (torch.randn(8192, 8192, device="cuda", dtype=tdt) for _ in range(2))
        report(f"torch.matmul 8192^3 {dtype}", lambda: torch.mm(a_mat, b_mat))
        for name in a.rows:
            r = rows[name]
            case = bench.Case(r, "fprop", tdt, bench.geometry(r))
            report(f"{name} {dtype} cuDNN", case.fn)
            plan = cat.plan(bench.problem(cat, r, "fprop", dtype))   # CONVCAT_AUTO: the heuristic's pick
            try:
                t = case.with_workspace(plan.workspace_bytes)
                report(f"{name} {dtype} convcat {plan.key}", lambda: plan.run(t, stream))
            finally:
                plan.destroy()
    cat.close()
    if a.json:
        json.dump(dict(device=torch.cuda.get_device_name(), rows=results), open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
